/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nflog's rule attribution through the ruleset's generations (see nflog_rules.h). */
#include "nflog_rules.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>

#include "clock.h"
#include "netns_open.h"
#include "rule_dump.h"
#include "rule_index.h"

/* Generations kept while their records may still come; more: nothing attributed meanwhile. */
#define OLD_MAX 8
/* Beyond the kernel's flush timeout: the time a flushed batch may take to reach the socket. */
#define SETTLE_MARGIN_NS 1000000000LL
/* A failed listing is tried again at most this often. */
#define RETRY_NS 1000000000LL
/* Keys rules share named in the log per listing. */
#define SHARED_LOG_MAX 10
#define NOTIFY_BUF (64 * 1024)
#define NOTIFY_RCVBUF (4 * 1024 * 1024)

struct nflog_rules {
	const struct sl_host *host;
	struct sl_instance *inst;
	uint16_t group;
	int64_t settle_ns;	/* flush timeout + margin */

	struct sl_rule_dump *dump;	/* the ruleset's dumps, the generation */
	struct mnl_socket *nl;		/* the notifications */
	int fd;
	char *buf;
	int nflog_fd;		/* the packets' socket, peeked at when settling */
	struct sl_timer *settle_timer;

	struct sl_rule_index *cur;	/* NULL: none usable (a listing failed) */
	uint32_t gen;
	struct sl_rule_index *old[OLD_MAX];
	unsigned nold;
	bool unsure;		/* generations were not kept, or a listing failed */
	int64_t settle_at;	/* old generations' records may come until then */
	bool settling;
	int64_t retry_at;	/* a failed listing: next try */
	uint64_t shared_hash;	/* of the shared keys last named in the log */

	int f_family, f_table, f_chain, f_handle, f_comment, f_verdict;
	int c_ambiguous, c_unattributed, c_listings;

	/* the per-rule series: /metrics reads cur on the main thread */
	pthread_mutex_t lock;	/* taken to change cur or free an index, and to read them */
	bool stopped;
	uint64_t unattributed;	/* relaxed atomics, as the rules' counts */
	char netns[64];		/* the netns label: its name in /run/netns, or net:[inode] */
};

struct nflog_rules *nflog_rules_new(const struct sl_host *host, struct sl_instance *inst,
				    uint16_t group, uint64_t flush_timeout_ms)
{
	struct nflog_rules *nr = calloc(1, sizeof(*nr));

	if (!nr) {
		host->log(inst, SL_LOG_ERR, "out of memory");
		return NULL;
	}
	nr->host = host;
	nr->inst = inst;
	nr->group = group;
	nr->fd = -1;
	nr->nflog_fd = -1;
	nr->shared_hash = 14695981039346656037ull;	/* none named: the hash of none */
	nr->settle_ns = (int64_t)flush_timeout_ms * 1000000 + SETTLE_MARGIN_NS;
	nr->f_family = host->field_id(inst, "rule_family");
	nr->f_table = host->field_id(inst, "rule_table");
	nr->f_chain = host->field_id(inst, "rule_chain");
	nr->f_handle = host->field_id(inst, "rule_handle");
	nr->f_comment = host->field_id(inst, "rule_comment");
	nr->f_verdict = host->field_id(inst, "rule_verdict");
	nr->c_ambiguous = host->counter_new(inst, "rule_ambiguous");
	nr->c_unattributed = host->counter_new(inst, "rule_unattributed");
	nr->c_listings = host->counter_new(inst, "ruleset_listings");
	pthread_mutex_init(&nr->lock, NULL);
	return nr;
}

struct shared_log {
	struct nflog_rules *nr;
	size_t left;
};

static void log_shared(void *arg, const char *line)
{
	struct shared_log *sl = arg;

	if (!sl->left)
		return;
	sl->left--;
	sl->nr->host->log(sl->nr->inst, SL_LOG_WARNING,
			  "rules: these rules log the same group and prefix at the same hook, their "
			  "records are counted in rule_ambiguous: %s", line);
}

static void hash_line(void *arg, const char *line)
{
	uint64_t *h = arg;

	for (; *line; line++)
		*h = (*h ^ (uint8_t)*line) * 1099511628211ull;
	*h = (*h ^ '\n') * 1099511628211ull;
}

/*
 * The keys of our group that rules share, named (the first few): at start,
 * then when a new generation shares other keys than the last one named.
 */
static void warn_shared(struct nflog_rules *nr)
{
	struct shared_log sl = {nr, SHARED_LOG_MAX};
	uint64_t h = 14695981039346656037ull;
	size_t n;

	/* the keys come in the index's order, which a listing keeps: a hash tells them apart */
	sl_rule_index_shared(nr->cur, nr->group, hash_line, &h);
	if (h == nr->shared_hash)
		return;
	nr->shared_hash = h;
	n = sl_rule_index_shared(nr->cur, nr->group, log_shared, &sl);
	if (n > SHARED_LOG_MAX)
		nr->host->log(nr->inst, SL_LOG_WARNING, "rules: and %zu more keys shared",
			      n - SHARED_LOG_MAX);
}

/* Carry each rule's counts to the same rule of the next index. */
static void carry_counts(struct sl_rule_index *from, struct sl_rule_index *to)
{
	size_t nf = sl_rule_index_count(from), nt = sl_rule_index_count(to);

	for (size_t i = 0, j = 0; i < nt && nf; i++) {
		struct sl_rule *r = sl_rule_index_rule(to, i);

		/* a listing keeps its order: look on from the last match */
		for (size_t k = 0; k < nf; k++, j = (j + 1) % nf) {
			struct sl_rule *o = sl_rule_index_rule(from, j);

			if (sl_rule_same(o, r)) {
				r->records = __atomic_load_n(&o->records, __ATOMIC_RELAXED);
				r->bytes = __atomic_load_n(&o->bytes, __ATOMIC_RELAXED);
				break;
			}
		}
	}
}

/* The current index is of an older generation than the records to come. */
static void retire_current(struct nflog_rules *nr)
{
	if (nr->cur) {
		if (nr->nold < OLD_MAX)
			nr->old[nr->nold++] = nr->cur;
		else {
			sl_rule_index_free(nr->cur);
			nr->unsure = true;
		}
		nr->cur = NULL;
	}
	nr->settling = true;
	nr->settle_at = sl_clock_ns(CLOCK_MONOTONIC) + nr->settle_ns;
	if (nr->settle_timer)
		nr->host->timer_arm(nr->settle_timer, (uint64_t)(nr->settle_ns / 1000000) + 1, 0);
}

/* List the ruleset again (at start: first); 0 or -1 (logged). */
static int relist(struct nflog_rules *nr, bool first)
{
	struct sl_rule_index *ix;
	char msg[256];
	uint32_t gen;
	int err;

	/* a change of ours already listed (notifications come in bursts) */
	if (!first && nr->cur && sl_rule_dump_gen(nr->dump, &gen) == 0 && gen == nr->gen)
		return 0;
	nr->host->counter_add(nr->inst, nr->c_listings, 1);
	err = sl_rule_dump_index(nr->dump, &ix, &gen, msg, sizeof(msg));
	if (err) {
		nr->host->log(nr->inst, first ? SL_LOG_ERR : SL_LOG_WARNING,
			      "rules: cannot read the ruleset: %s%s%s%s",
			      err == -EPROTO ? "the kernel's netlink dump" : strerror(-err),
			      err == -EPROTO ? ": " : "", err == -EPROTO ? msg : "",
			      err == -EPERM || err == -EACCES ? " (needs CAP_NET_ADMIN in the network namespace)" : "");
		if (!first) {
			nr->host->error_add(nr->inst, 1);
			pthread_mutex_lock(&nr->lock);
			retire_current(nr);	/* nothing is attributed until a listing works */
			pthread_mutex_unlock(&nr->lock);
			nr->retry_at = sl_clock_ns(CLOCK_MONOTONIC) + RETRY_NS;
		}
		return -1;
	}
	if (first) {
		nr->cur = ix;
		nr->gen = gen;
		nr->host->log(nr->inst, SL_LOG_INFO,
			      "rules: %zu rules with log group statements in ruleset generation %u",
			      sl_rule_index_count(ix), gen);
		warn_shared(nr);
		return 0;
	}
	if (nr->cur && gen == nr->gen) {
		sl_rule_index_free(ix);
		return 0;
	}
	if (nr->cur)
		carry_counts(nr->cur, ix);
	pthread_mutex_lock(&nr->lock);
	retire_current(nr);
	nr->cur = ix;
	pthread_mutex_unlock(&nr->lock);
	nr->gen = gen;
	nr->retry_at = 0;
	nr->host->log(nr->inst, SL_LOG_DEBUG, "rules: ruleset generation %u, %zu rules", gen,
		      sl_rule_index_count(ix));
	warn_shared(nr);
	return 0;
}

/* Read the notifications waiting: whether the ruleset changed (or notifications were lost). */
static bool changed(struct nflog_rules *nr)
{
	bool any = false;

	for (unsigned i = 0; i < 4096; i++) {
		ssize_t n = recv(nr->fd, nr->buf, NOTIFY_BUF, MSG_DONTWAIT);

		if (n > 0) {
			any = true;
			continue;
		}
		if (n < 0 && errno == ENOBUFS) {
			any = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	return any;
}

static void follow(struct nflog_rules *nr)
{
	if (changed(nr) || (nr->retry_at && sl_clock_ns(CLOCK_MONOTONIC) >= nr->retry_at))
		relist(nr, false);
}

static void notify_readable(void *ctx, int fd, uint32_t events)
{
	(void)fd;
	(void)events;
	follow(ctx);
}

static void release_old(struct nflog_rules *nr)
{
	pthread_mutex_lock(&nr->lock);
	for (unsigned i = 0; i < nr->nold; i++)
		sl_rule_index_free(nr->old[i]);
	nr->nold = 0;
	pthread_mutex_unlock(&nr->lock);
	nr->settling = false;
	if (nr->cur)
		nr->unsure = false;
}

/*
 * The settling time is over, and no packet came since: if the packets'
 * socket is empty, every record of the old generations was read.  Else its
 * reading ends on an empty socket, and nflog_rules_idle() lets them go.
 */
static void settled(void *ctx)
{
	struct nflog_rules *nr = ctx;
	char c;

	if (!nr->settling || nr->nflog_fd < 0)
		return;
	if (sl_clock_ns(CLOCK_MONOTONIC) < nr->settle_at) {
		nr->host->timer_arm(nr->settle_timer,
				    (uint64_t)((nr->settle_at - sl_clock_ns(CLOCK_MONOTONIC)) / 1000000) + 1, 0);
		return;
	}
	if (recv(nr->nflog_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) < 0 && errno == EAGAIN)
		release_old(nr);
}

/* The netns label: the name `ip netns` gave the namespace read, else net:[inode]. */
static void netns_name(struct nflog_rules *nr, int nsfd)
{
	struct stat self, st;
	struct dirent *de;
	DIR *d;

	snprintf(nr->netns, sizeof(nr->netns), "?");
	if (nsfd >= 0 ? fstat(nsfd, &self) < 0 : stat("/proc/self/ns/net", &self) < 0)
		return;
	snprintf(nr->netns, sizeof(nr->netns), "net:[%llu]", (unsigned long long)self.st_ino);
	if (!(d = opendir("/run/netns")))
		return;
	while ((de = readdir(d))) {
		char path[300];

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(nr->netns))
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", de->d_name);
		if (stat(path, &st) == 0 && st.st_ino == self.st_ino && st.st_dev == self.st_dev) {
			snprintf(nr->netns, sizeof(nr->netns), "%s", de->d_name);
			break;
		}
	}
	closedir(d);
}

/* /metrics: a series per rule of the current ruleset, and the records no rule explains. */
static void series(void *ctx, sl_series_put put, void *out)
{
	static const char *const names[] = {"netns", "family", "table", "chain", "handle", "comment"};
	struct nflog_rules *nr = ctx;
	const char *labels[6] = {nr->netns};
	struct sl_series s = {.names = names, .labels = labels, .nlabels = 1};
	char handle[24];

	pthread_mutex_lock(&nr->lock);
	if (nr->stopped) {
		pthread_mutex_unlock(&nr->lock);
		return;
	}
	s.family = "sluice_rule_unattributed_total";
	s.help = "Records nflog (rules: true) attributed to no rule: none, or not one for sure.";
	s.value = __atomic_load_n(&nr->unattributed, __ATOMIC_RELAXED);
	put(out, &s);
	s.nlabels = 6;
	for (size_t i = 0; nr->cur && i < sl_rule_index_count(nr->cur); i++) {
		struct sl_rule *r = sl_rule_index_rule(nr->cur, i);

		snprintf(handle, sizeof(handle), "%llu", (unsigned long long)r->handle);
		labels[1] = r->family;
		labels[2] = r->table;
		labels[3] = r->chain;
		labels[4] = handle;
		labels[5] = r->comment ? r->comment : "";
		s.family = "sluice_rule_records_total";
		s.help = "Records nflog (rules: true) attributed to each rule of the ruleset.";
		s.value = __atomic_load_n(&r->records, __ATOMIC_RELAXED);
		put(out, &s);
		s.family = "sluice_rule_bytes_total";
		s.help = "Bytes of the packets nflog (rules: true) attributed to each rule.";
		s.value = __atomic_load_n(&r->bytes, __ATOMIC_RELAXED);
		put(out, &s);
	}
	pthread_mutex_unlock(&nr->lock);
}

int nflog_rules_start(struct nflog_rules *nr, int nflog_fd, int nsfd)
{
	int group = NFNLGRP_NFTABLES, size = NOTIFY_RCVBUF;

	nr->nflog_fd = nflog_fd;
	if (!(nr->settle_timer = nr->host->timer_new(nr->inst, settled, nr))) {
		nr->host->log(nr->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}

	if (!(nr->dump = sl_rule_dump_new()) || !(nr->buf = malloc(NOTIFY_BUF))) {
		nr->host->log(nr->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	sl_rule_dump_set_netns(nr->dump, nsfd);
	/* the notifications of the namespace read: the socket made in it */
	nr->nl = sl_netns_mnl_socket(nsfd, NETLINK_NETFILTER);
	if (!nr->nl || fcntl(mnl_socket_get_fd(nr->nl), F_SETFL, O_NONBLOCK) < 0 ||
	    mnl_socket_setsockopt(nr->nl, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0) {
		nr->host->log(nr->inst, SL_LOG_ERR,
			      "rules: cannot follow the ruleset's changes (NFNLGRP_NFTABLES): %s",
			      strerror(errno));
		return -1;
	}
	nr->fd = mnl_socket_get_fd(nr->nl);
	if (setsockopt(nr->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		(void)setsockopt(nr->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	/* joined first, listed second: a change in between is read as one */
	if (relist(nr, true) < 0)
		return -1;
	if (nr->host->watch_fd(nr->inst, nr->fd, EPOLLIN, notify_readable, nr) < 0) {
		nr->host->log(nr->inst, SL_LOG_ERR, "rules: cannot watch the notifications");
		return -1;
	}
	netns_name(nr, nsfd);
	nr->host->series_source(nr->inst, series, nr);
	return 0;
}

enum verdict { ONE, SHARED, NONE, DISAGREE };

/* Who logged this key, in every generation that may have logged it. */
static enum verdict who(const struct nflog_rules *nr, uint8_t pf, uint8_t hook, const char *prefix,
			uint32_t plen, const struct sl_rule **rule)
{
	const struct sl_rule *found = NULL, *r;
	bool shared = false;

	if (nr->unsure || !nr->cur)
		return DISAGREE;
	for (unsigned i = 0; i <= nr->nold; i++) {
		const struct sl_rule_index *ix = i ? nr->old[nr->nold - i] : nr->cur;

		switch (sl_rule_index_find(ix, pf, hook, nr->group, prefix, plen, &r)) {
		case SL_RULE_NONE:
			break;	/* that generation cannot have logged it */
		case SL_RULE_SHARED:
			shared = true;
			break;
		case SL_RULE_ONE:
			if (found && !sl_rule_same(found, r))
				return DISAGREE;
			if (!found)
				found = r;
			break;
		}
	}
	if (shared)
		return found ? DISAGREE : SHARED;
	if (!found)
		return NONE;
	*rule = found;
	return ONE;
}

static void set_str(struct sl_record *r, int f, const char *s, uint32_t len)
{
	if (f >= 0 && s)
		sl_set_bytes(r, (sl_field)f, s, len);
}

/* The last key looked up in a batch and what it found: a batch is mostly one rule's records. */
struct last_key {
	bool set;
	uint8_t pf, hook;
	const char *prefix;
	uint32_t plen;
	enum verdict v;
	const struct sl_rule *rule;
};

static enum verdict who_cached(const struct nflog_rules *nr, struct last_key *l, uint8_t pf,
			       uint8_t hook, const char *prefix, uint32_t plen,
			       const struct sl_rule **rule)
{
	if (!l->set || l->pf != pf || l->hook != hook || l->plen != plen ||
	    (plen && memcmp(l->prefix, prefix, plen))) {
		l->rule = NULL;
		l->v = who(nr, pf, hook, prefix, plen, &l->rule);
		*l = (struct last_key){true, pf, hook, prefix, plen, l->v, l->rule};
	}
	*rule = l->rule;
	return l->v;
}

void nflog_rules_attribute(struct nflog_rules *nr, struct sl_batch *b)
{
	uint64_t ambiguous = 0, unattributed = 0;
	struct last_key last = {0};

	if (!b->count)
		return;
	follow(nr);	/* the generations stay as they are for the whole batch */
	for (unsigned i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];
		const struct sl_rule *rule = NULL;
		const char *prefix = "";
		uint32_t plen = 0;

		if (!sl_has(r, SL_F_HOOK) || !sl_has(r, SL_F_FAMILY)) {
			unattributed++;
			continue;
		}
		if (sl_has(r, SL_F_PREFIX)) {
			prefix = (const char *)r->v[SL_F_PREFIX].bytes.ptr;
			plen = r->v[SL_F_PREFIX].bytes.len;
		}
		switch (who_cached(nr, &last, (uint8_t)r->v[SL_F_FAMILY].u64,
				   (uint8_t)r->v[SL_F_HOOK].u64, prefix, plen, &rule)) {
		case ONE: {
			/* this thread alone writes the counts: no locked instruction */
			struct sl_rule *w = (struct sl_rule *)rule;

			__atomic_store_n(&w->records, w->records + 1, __ATOMIC_RELAXED);
			if (sl_has(r, SL_F_PACKET))
				__atomic_store_n(&w->bytes, w->bytes + r->v[SL_F_PACKET].bytes.len,
						 __ATOMIC_RELAXED);
			set_str(r, nr->f_family, rule->family, rule->family_len);
			set_str(r, nr->f_table, rule->table, rule->table_len);
			set_str(r, nr->f_chain, rule->chain, rule->chain_len);
			if (nr->f_handle >= 0)
				sl_set_u64(r, (sl_field)nr->f_handle, rule->handle);
			set_str(r, nr->f_comment, rule->comment, rule->comment_len);
			set_str(r, nr->f_verdict, rule->verdict, rule->verdict_len);
			break;
		}
		case SHARED:
			ambiguous++;
			break;
		case NONE:
		case DISAGREE:
			unattributed++;
			break;
		}
	}
	if (ambiguous)
		nr->host->counter_add(nr->inst, nr->c_ambiguous, ambiguous);
	if (unattributed) {
		nr->host->counter_add(nr->inst, nr->c_unattributed, unattributed);
		__atomic_store_n(&nr->unattributed, nr->unattributed + unattributed, __ATOMIC_RELAXED);
	}
}

void nflog_rules_idle(struct nflog_rules *nr)
{
	if (!nr->settling || sl_clock_ns(CLOCK_MONOTONIC) < nr->settle_at)
		return;
	/* every record logged before the last change has been read: its generations can go */
	release_old(nr);
}

void nflog_rules_stop(struct nflog_rules *nr)
{
	if (!nr)
		return;
	if (nr->settle_timer) {
		if (SL_HOST_HAS(nr->host, timer_free))
			nr->host->timer_free(nr->settle_timer);
		else
			nr->host->timer_disarm(nr->settle_timer);
		nr->settle_timer = NULL;
	}
	if (nr->fd >= 0)
		nr->host->unwatch_fd(nr->inst, nr->fd);
	nr->fd = -1;
	if (nr->nl)
		mnl_socket_close(nr->nl);
	nr->nl = NULL;
	sl_rule_dump_free(nr->dump);
	nr->dump = NULL;
	nr->host->series_source(nr->inst, NULL, NULL);	/* and the lock: no scrape finds it */
	pthread_mutex_lock(&nr->lock);
	nr->stopped = true;
	sl_rule_index_free(nr->cur);
	nr->cur = NULL;
	for (unsigned i = 0; i < nr->nold; i++)
		sl_rule_index_free(nr->old[i]);
	nr->nold = 0;
	pthread_mutex_unlock(&nr->lock);
	free(nr->buf);
	nr->buf = NULL;
}

void nflog_rules_free(struct nflog_rules *nr)
{
	if (!nr)
		return;
	pthread_mutex_destroy(&nr->lock);
	free(nr);
}
