/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Rule texts and chain hooks of the ruleset (see nft_rules.h). */
#include "nft_rules.h"
#include "netns_open.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/gen.h>
#include <nftables/libnftables.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "names.h"

/* One rule or one base chain (handle UINT64_MAX, hook in `hook`). */
struct ent {
	uint64_t handle;
	uint8_t family;
	int hook;
	char *table, *chain, *text;
	uint32_t text_len;
};

struct ents {
	struct ent *v;
	size_t n, cap;
};

struct sl_nft_rules {
	struct ents e;	/* sorted by handle */
	size_t rules;
	uint32_t gen;	/* ruleset generation the contents are of */
	bool loaded;
	struct mnl_socket *nl;	/* for requests only: joins no group */
	char *buf;
	char error[256];	/* libnftables' message of the last failed listing */
	int nsfd;		/* the namespace read; -1: ours */
};

#define BUF_SIZE (MNL_SOCKET_BUFFER_SIZE * 4)

#define CHAIN_HANDLE UINT64_MAX
/* The longest rule text kept (a rule with a big anonymous set is long). */
#define TEXT_MAX 4096
#define DUMP_RETRIES 5

/*
 * libnftables does not say it is thread-safe; a reload may list while an
 * old instance does, and nftrace and nflog list on threads of their own.
 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct sl_nft_rules *sl_nft_rules_new(void)
{
	struct sl_nft_rules *rs = calloc(1, sizeof(struct sl_nft_rules));

	if (rs)
		rs->nsfd = -1;
	return rs;
}

void sl_nft_rules_set_netns(struct sl_nft_rules *rs, int nsfd)
{
	rs->nsfd = nsfd;
}

static void ents_clear(struct ents *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->v[i].table);
		free(e->v[i].chain);
		free(e->v[i].text);
	}
	free(e->v);
	memset(e, 0, sizeof(*e));
}

void sl_nft_rules_free(struct sl_nft_rules *rs)
{
	if (!rs)
		return;
	ents_clear(&rs->e);
	if (rs->nl)
		mnl_socket_close(rs->nl);
	free(rs->buf);
	free(rs);
}

size_t sl_nft_rules_count(const struct sl_nft_rules *rs)
{
	return rs->rules;
}

static struct ent *ents_add(struct ents *e)
{
	if (e->n == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 64;
		struct ent *v = realloc(e->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		e->v = v;
		e->cap = cap;
	}
	memset(&e->v[e->n], 0, sizeof(e->v[0]));
	return &e->v[e->n++];
}

/* A dump's state: where entries go, and whether one could not be stored. */
struct dump {
	struct ents *e;
	int err;
};

/* The next word of *p (a name nft may have put in quotes), moving *p past it. */
static const char *word(const char **p, size_t *len)
{
	const char *s = *p, *w;

	while (*s == ' ')
		s++;
	if (*s == '"') {
		w = ++s;
		while (*s && *s != '"')
			s++;
		*len = (size_t)(s - w);
		*p = *s ? s + 1 : s;
		return w;
	}
	w = s;
	while (*s && *s != ' ')
		s++;
	*len = (size_t)(s - w);
	*p = s;
	return w;
}

/* "... # handle N" at the end of [line, end): N, and the text before it ends at *text_end. */
static bool handle_of(const char *line, const char *end, uint64_t *h, const char **text_end)
{
	static const char tag[] = " # handle ";
	const char *d = end;

	while (d > line && d[-1] >= '0' && d[-1] <= '9')
		d--;
	if (d == end || (size_t)(d - line) < sizeof(tag) - 1 ||
	    memcmp(d - (sizeof(tag) - 1), tag, sizeof(tag) - 1))
		return false;
	*h = strtoull(d, NULL, 10);
	*text_end = d - (sizeof(tag) - 1);
	return true;
}

/* Where a listing is in its nesting: the table and the chain a line is in. */
struct where {
	int family;
	char *table, *chain;
};

static int add_rule(struct ents *ents, const struct where *w, const char *text, size_t len,
		    uint64_t h)
{
	struct ent *e = ents_add(ents);

	if (!e)
		return -ENOMEM;
	if (len >= TEXT_MAX)
		len = TEXT_MAX - 1;	/* a huge anonymous set: its start is enough */
	e->handle = h;
	e->family = (uint8_t)w->family;
	e->hook = -1;
	e->table = strdup(w->table);
	e->chain = strdup(w->chain);
	e->text = strndup(text, len);
	e->text_len = (uint32_t)len;
	return e->table && e->chain && e->text ? 0 : -ENOMEM;
}

/*
 * One line of `nft -a list ruleset`: "table inet t { # handle 1" opens a
 * table, "\tchain c { # handle 2" a chain ("\tset s {" and the like open a
 * block holding no rules), "\t}" closes it, and inside a chain every line
 * ending in "# handle N" is a rule (the hook line and a chain's comment
 * have no handle).
 */
static int list_line(struct ents *ents, struct where *w, const char *line, const char *end)
{
	const char *p, *name, *text_end;
	size_t len;
	uint64_t h;

	if (!strncmp(line, "table ", 6)) {
		p = line + 6;
		name = word(&p, &len);
		w->family = sl_nft_family_number(name, len);
		name = word(&p, &len);
		free(w->table);
		w->table = strndup(name, len);
		return w->table ? 0 : -ENOMEM;
	}
	if (line[0] != '\t' || !w->table || w->family < 0)
		return 0;
	if (line[1] != '\t') {
		free(w->chain);
		w->chain = NULL;
		if (strncmp(line + 1, "chain ", 6))
			return 0;
		p = line + 7;
		name = word(&p, &len);
		w->chain = strndup(name, len);
		return w->chain ? 0 : -ENOMEM;
	}
	if (!w->chain || !handle_of(line, end, &h, &text_end))
		return 0;
	for (p = line; *p == '\t'; p++)
		;
	return add_rule(ents, w, p, (size_t)(text_end - p), h);
}

/*
 * Takes the lock and runs `list ruleset` in a new libnftables context with
 * the output flags flags: 0 with the listing in *ctx's output buffer, or
 * -ENOMEM, or -errno of a failed listing (EPERM/EACCES as nft met them,
 * else EIO; nft's first error line in rs->error).  Whatever it returns, the
 * caller passes *ctx (maybe NULL) to ruleset_done() once it has read the output.
 */
static int list_here(struct sl_nft_rules *rs, unsigned int flags, struct nft_ctx **ctx)
{
	*ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	if (!*ctx)
		return -ENOMEM;
	nft_ctx_output_set_flags(*ctx, flags);
	if (nft_ctx_buffer_output(*ctx) || nft_ctx_buffer_error(*ctx))
		return -ENOMEM;
	errno = 0;
	if (nft_run_cmd_from_buffer(*ctx, "list ruleset")) {
		const char *msg = nft_ctx_get_error_buffer(*ctx);
		int err = errno == EPERM || errno == EACCES ? -errno : -EIO;

		snprintf(rs->error, sizeof(rs->error), "%.*s", (int)strcspn(msg ? msg : "", "\n"),
			 msg ? msg : "");
		return err;
	}
	return 0;
}

/* A listing in another namespace: libnftables' socket is made by the thread that lists. */
struct list_job {
	struct sl_nft_rules *rs;
	unsigned int flags;
	struct nft_ctx *ctx;
	int err;
};

static void *list_thread(void *arg)
{
	struct list_job *j = arg;

	if (setns(j->rs->nsfd, CLONE_NEWNET) < 0)
		j->err = -errno;
	else
		j->err = list_here(j->rs, j->flags, &j->ctx);
	return NULL;
}

static int ruleset_list(struct sl_nft_rules *rs, unsigned int flags, struct nft_ctx **ctx)
{
	struct list_job j = {.rs = rs, .flags = flags};
	pthread_t t;
	int err;

	pthread_mutex_lock(&lock);
	if (rs->nsfd < 0)
		return list_here(rs, flags, ctx);
	if ((err = pthread_create(&t, NULL, list_thread, &j)) != 0) {
		*ctx = NULL;
		return -err;
	}
	pthread_join(t, NULL);
	*ctx = j.ctx;
	return j.err;
}

/* Frees ruleset_list()'s context and drops the lock. */
static void ruleset_done(struct nft_ctx *ctx)
{
	if (ctx)
		nft_ctx_free(ctx);
	pthread_mutex_unlock(&lock);
}

/*
 * The rules of `nft -a list ruleset` as libnftables prints it — the text
 * `nft monitor trace` prints for a rule (nft's decompiler; rule_print() of
 * its cache), with the output flags that change rules as nft's (only the
 * handles), so counters show the values of the moment of the listing as
 * nft's show those of its start.  A context per listing keeps no cache
 * between listings.
 */
static int list_rules(struct sl_nft_rules *rs, struct ents *ents)
{
	struct where w = {.family = -1};
	struct nft_ctx *ctx;
	const char *out;
	int err;

	/* terse: no elements of named sets (rules show them as @name), 0.03 s instead of 2.5 s with 200000 */
	err = ruleset_list(rs, NFT_CTX_OUTPUT_HANDLE | NFT_CTX_OUTPUT_TERSE, &ctx);
	out = err ? NULL : nft_ctx_get_output_buffer(ctx);
	while (out && *out && !err) {
		const char *nl = strchr(out, '\n');
		const char *end = nl ? nl : out + strlen(out);

		err = list_line(ents, &w, out, end);
		out = nl ? nl + 1 : end;
	}
	free(w.table);
	free(w.chain);
	ruleset_done(ctx);
	return err;
}

/* `nft -j -a list ruleset` as libnftables prints it, copied to *json: 0 or -errno. */
static int list_json(struct sl_nft_rules *rs, char **json, size_t *len)
{
	struct nft_ctx *ctx;
	const char *out;
	int err;

	*json = NULL;
	/* not terse: a named verdict map's elements say which chains it jumps to */
	err = ruleset_list(rs, NFT_CTX_OUTPUT_HANDLE | NFT_CTX_OUTPUT_JSON, &ctx);
	if (!err) {
		out = nft_ctx_get_output_buffer(ctx);
		*len = out ? strlen(out) : 0;
		if (!(*json = strndup(out ? out : "", *len)))
			err = -ENOMEM;
	}
	ruleset_done(ctx);
	return err;
}

static int chain_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump *d = data;
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct ent *e;

	if (!c || nftnl_chain_nlmsg_parse(nlh, c) < 0) {
		d->err = -ENOMEM;
		goto out;
	}
	if (!nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM))
		goto out;	/* a regular chain: nothing to say about it */
	if (!(e = ents_add(d->e))) {
		d->err = -ENOMEM;
		goto out;
	}
	e->handle = CHAIN_HANDLE;
	e->family = (uint8_t)nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY);
	e->hook = (int)nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM);
	e->table = strdup(nftnl_chain_get_str(c, NFTNL_CHAIN_TABLE));
	e->chain = strdup(nftnl_chain_get_str(c, NFTNL_CHAIN_NAME));
	if (!e->table || !e->chain)
		d->err = -ENOMEM;
out:
	nftnl_chain_free(c);
	return MNL_CB_OK;
}

/* One dump of `type` (NFT_MSG_GETCHAIN) into d: 0, -EINTR (ruleset changed), -errno. */
static int dump_one(struct mnl_socket *nl, uint16_t type, mnl_cb_t cb, struct dump *d, char *buf,
		    size_t size)
{
	uint32_t portid = mnl_socket_get_portid(nl), seq = (uint32_t)time(NULL);
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(buf, type, NFPROTO_UNSPEC, NLM_F_DUMP, seq);
	bool intr = false;
	ssize_t n;
	int ret;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	while ((n = mnl_socket_recvfrom(nl, buf, size)) > 0) {
		const struct nlmsghdr *m = (const struct nlmsghdr *)buf;

		if (n >= (ssize_t)sizeof(*m) && (m->nlmsg_flags & NLM_F_DUMP_INTR))
			intr = true;
		ret = mnl_cb_run(buf, (size_t)n, seq, portid, cb, d);
		if (ret < 0)
			return errno == EINTR ? -EINTR : -errno;
		if (ret == MNL_CB_STOP)
			break;
	}
	if (n < 0)
		return -errno;
	if (d->err)
		return d->err;
	return intr ? -EINTR : 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	return x->handle < y->handle ? -1 : x->handle > y->handle;
}

static int gen_cb(const struct nlmsghdr *nlh, void *data)
{
	struct nftnl_gen *g = nftnl_gen_alloc();
	uint32_t *gen = data;

	if (g && nftnl_gen_nlmsg_parse(nlh, g) >= 0 && nftnl_gen_is_set(g, NFTNL_GEN_ID))
		*gen = nftnl_gen_get_u32(g, NFTNL_GEN_ID);
	nftnl_gen_free(g);
	return MNL_CB_OK;
}

/* The ruleset's generation id (NFT_MSG_GETGEN): 0, or -errno. */
static int get_gen(struct sl_nft_rules *rs, uint32_t *gen)
{
	uint32_t portid = mnl_socket_get_portid(rs->nl), seq = (uint32_t)time(NULL);
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(rs->buf, NFT_MSG_GETGEN, NFPROTO_UNSPEC, 0, seq);
	ssize_t n;

	*gen = 0;
	if (mnl_socket_sendto(rs->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(rs->nl, rs->buf, BUF_SIZE);
	if (n < 0 || mnl_cb_run(rs->buf, (size_t)n, seq, portid, gen_cb, gen) < 0)
		return -errno;
	return 0;
}

static int open_socket(struct sl_nft_rules *rs)
{
	if (rs->nl)
		return 0;
	if (!rs->buf && !(rs->buf = malloc(BUF_SIZE)))
		return -ENOMEM;
	rs->nl = sl_netns_mnl_socket(rs->nsfd, NETLINK_NETFILTER);
	return rs->nl ? 0 : -errno;
}

int sl_nft_rules_gen(struct sl_nft_rules *rs, uint32_t *gen)
{
	int err = open_socket(rs);

	return err < 0 ? err : get_gen(rs, gen);
}

int sl_nft_rules_changed(struct sl_nft_rules *rs)
{
	uint32_t gen;
	int err;

	if (!rs->loaded)
		return 1;
	if ((err = open_socket(rs)) < 0 || (err = get_gen(rs, &gen)) < 0)
		return err;
	return gen != rs->gen;
}

const char *sl_nft_rules_error(const struct sl_nft_rules *rs)
{
	return rs->error;
}

int sl_nft_rules_load(struct sl_nft_rules *rs)
{
	int err;

	rs->error[0] = '\0';
	if ((err = open_socket(rs)) < 0)
		return err;
	for (int i = 0; i < DUMP_RETRIES; i++) {
		struct ents e = {0};
		struct dump d = {.e = &e};
		uint32_t gen, gen_after;
		size_t rules;

		err = get_gen(rs, &gen);
		if (!err)
			err = list_rules(rs, &e);
		rules = e.n;
		if (!err)
			err = dump_one(rs->nl, NFT_MSG_GETCHAIN, chain_cb, &d, rs->buf, BUF_SIZE);
		if (!err)
			err = get_gen(rs, &gen_after);
		if (!err && gen_after != gen)
			err = -EINTR;
		if (err) {
			ents_clear(&e);
			if (err == -EINTR)
				continue;	/* the ruleset changed meanwhile: again */
			break;
		}
		qsort(e.v, e.n, sizeof(e.v[0]), ent_cmp);
		ents_clear(&rs->e);
		rs->e = e;
		rs->rules = rules;
		rs->gen = gen;
		rs->loaded = true;
		break;
	}
	return err;
}

static bool ent_is(const struct ent *e, uint8_t family, const char *table, uint32_t tlen,
		   const char *chain, uint32_t clen)
{
	return e->family == family && strlen(e->table) == tlen && !memcmp(e->table, table, tlen) &&
	       strlen(e->chain) == clen && !memcmp(e->chain, chain, clen);
}

/* The entry of handle h matching the rest, by binary search; NULL if none. */
static const struct ent *find(const struct sl_nft_rules *rs, uint64_t h, uint8_t family,
			      const char *table, uint32_t tlen, const char *chain, uint32_t clen)
{
	size_t lo = 0, hi = rs->e.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rs->e.v[mid].handle < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* handles are unique per table, not across tables: check each equal one */
	for (; lo < rs->e.n && rs->e.v[lo].handle == h; lo++)
		if (ent_is(&rs->e.v[lo], family, table, tlen, chain, clen))
			return &rs->e.v[lo];
	return NULL;
}

const char *sl_nft_rules_text(const struct sl_nft_rules *rs, uint8_t family, const char *table,
			      uint32_t table_len, const char *chain, uint32_t chain_len,
			      uint64_t handle, uint32_t *len)
{
	const struct ent *e;

	if (handle == CHAIN_HANDLE)
		return NULL;
	e = find(rs, handle, family, table, table_len, chain, chain_len);
	if (!e)
		return NULL;
	*len = e->text_len;
	return e->text;
}

int sl_nft_rules_hook(const struct sl_nft_rules *rs, uint8_t family, const char *table,
		      uint32_t table_len, const char *chain, uint32_t chain_len)
{
	const struct ent *e = find(rs, CHAIN_HANDLE, family, table, table_len, chain, chain_len);

	return e ? e->hook : -1;
}

int sl_nft_rules_json(struct sl_nft_rules *rs,
		      int (*cb)(void *arg, const char *json, size_t len, uint32_t gen), void *arg)
{
	int err;

	rs->error[0] = '\0';
	if ((err = open_socket(rs)) < 0)
		return err;
	for (int i = 0; i < DUMP_RETRIES; i++) {
		uint32_t gen, gen_after;
		char *json = NULL;
		size_t len = 0;

		err = get_gen(rs, &gen);
		if (!err)
			err = list_json(rs, &json, &len);
		if (!err)
			err = get_gen(rs, &gen_after);
		if (!err && gen_after != gen)
			err = -EINTR;
		if (!err)
			err = cb(arg, json, len, gen);
		free(json);
		if (err != -EINTR)
			break;
	}
	return err;
}
