/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * skbdrop: every packet the kernel drops, with the reason, without a `log`
 * rule.  The BPF program of skbdrop.bpf.c (embedded as a bpftool skeleton)
 * runs on the skb:kfree_skb tracepoint, keeps the drops whose reason is in
 * `reasons`, rate-limits them per CPU and writes each into a ring buffer;
 * this side reads the ring from the event loop (libbpf's ring buffer
 * epoll fd) and makes records like nflog's packet records (packet, family,
 * hw_protocol, ifindex_in, timestamp, orig_len), so decode and every
 * converter and output take them unchanged, plus drop_reason,
 * drop_location, netns_inode and netns.
 *
 * Reason names come from the running kernel's BTF (drop_reasons.c), kernel
 * locations from /proc/kallsyms read at start (kallsyms.c).  Loading the
 * program needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), which the
 * daemon keeps only when it runs as root without daemon.user.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/if_ether.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "drop_reasons.h"
#include "kallsyms.h"
#include "plugin_state.h"
#include "skbdrop.skel.h"
#include "skbdrop_event.h"

#define NFPROTO_IPV4_ 2
#define NFPROTO_IPV6_ 10
#define NFPROTO_ARP_ 3
#define NETNS_DIR "/run/netns"
#define NETNS_CACHE 16
/* A miss rescans /run/netns at most this often (ms). */
#define NETNS_RESCAN_MS 1000
#define LOCATION_MAX 128

struct skbdrop_cfg {
	struct sl_strlist reasons;
	int64_t snaplen;
	int64_t rate;
};

struct netns_name {
	uint32_t inum;
	char name[64];
};

struct skbdrop {
	SL_STATE_HEAD(struct skbdrop_cfg);

	struct sl_drop_reasons names;
	uint64_t bitmap[SKBDROP_REASON_WORDS];
	struct skbdrop_bpf *skel;
	struct ring_buffer *ring;
	int ring_fd;
	bool watching;
	struct sl_kallsyms ksyms;
	bool have_ksyms;
	struct sl_timer *timer;		/* reads the per-CPU counters */
	struct sl_timer *poll;		/* reads the ring: the program wakes us per batch only */
	int64_t mono_to_real;		/* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */

	uint32_t own_netns;		/* the daemon's namespace: its ifindexes are decode's */
	struct netns_name netns[NETNS_CACHE];
	unsigned nnetns;
	uint64_t netns_scanned_ms;

	char start_error[256];		/* the kernel lacks what skbdrop needs: start() fails */
	struct sl_batch *b;
	int f_reason, f_location, f_netns, f_netns_inode, f_netns_ifindex;
	int c_records, c_suppressed, c_lost, c_malformed;
	uint64_t seen_records, seen_suppressed, seen_lost;	/* the kernel's sums already counted */
};

static const struct sl_option skbdrop_options[] = {
	SL_OPT_LIST("reasons", struct skbdrop_cfg, reasons, "[NETFILTER_DROP]",
		    "drop reasons to report: names of the kernel's enum skb_drop_reason without SKB_DROP_REASON_ (NETFILTER_DROP, NO_SOCKET...)"),
	SL_OPT_INT("snaplen", struct skbdrop_cfg, snaplen, "128", 0, SKBDROP_SNAPLEN_MAX,
		   "bytes copied from the network header on"),
	SL_OPT_INT("rate", struct skbdrop_cfg, rate, "10000", 0, 100000000,
		   "records per second per CPU the BPF program writes at most (burst: one second's worth); the rest are counted in suppressed; 0: no limit"),
	SL_OPT_END
};

static const struct sl_field_decl skbdrop_provides[] = {
	SL_FIELD_DECL(SL_F_PACKET), SL_FIELD_DECL(SL_F_FAMILY), SL_FIELD_DECL(SL_F_HW_PROTOCOL),
	SL_FIELD_DECL(SL_F_IFINDEX_IN), SL_FIELD_DECL(SL_F_TIMESTAMP), SL_FIELD_DECL(SL_F_ORIG_LEN),
	SL_FIELD_DECL(SL_F_CAPLEN),
	{"drop_reason", SL_T_STRING},
	{"drop_location", SL_T_STRING},
	{"netns", SL_T_STRING},
	{"netns_inode", SL_T_U64},
	{"netns_ifindex", SL_T_U64},
	SL_FIELD_END
};

/* ---- /run/netns names ---- */

static void netns_scan(struct skbdrop *st)
{
	DIR *d = opendir(NETNS_DIR);
	struct dirent *de;

	st->nnetns = 0;
	st->netns_scanned_ms = sl_clock_ms(CLOCK_MONOTONIC);
	if (!d)
		return;
	while ((de = readdir(d)) && st->nnetns < NETNS_CACHE) {
		struct stat sb;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(st->netns[0].name) ||
		    fstatat(dirfd(d), de->d_name, &sb, 0) < 0)
			continue;
		st->netns[st->nnetns].inum = (uint32_t)sb.st_ino;
		strcpy(st->netns[st->nnetns++].name, de->d_name);
	}
	closedir(d);
}

/* The name under /run/netns of namespace inode inum, or NULL. */
static const char *netns_name(struct skbdrop *st, uint32_t inum)
{
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < st->nnetns; i++)
			if (st->netns[i].inum == inum)
				return st->netns[i].name;
		if (pass || (uint64_t)sl_clock_ms(CLOCK_MONOTONIC) - st->netns_scanned_ms < NETNS_RESCAN_MS)
			break;
		netns_scan(st);
	}
	return NULL;
}

/* ---- events -> records ---- */

static void emit_batch(struct skbdrop *st)
{
	if (st->b)
		st->host->emit(st->inst, st->b);
	st->b = NULL;
}

static uint64_t family_of(uint16_t proto)
{
	return proto == ETH_P_IP ? NFPROTO_IPV4_ : proto == ETH_P_IPV6 ? NFPROTO_IPV6_ :
	       proto == ETH_P_ARP ? NFPROTO_ARP_ : 0;
}

static void set_record(struct skbdrop *st, struct sl_record *r, const struct skbdrop_event *e,
		       uint8_t *pkt, char *loc)
{
	int64_t t = (int64_t)e->ktime + st->mono_to_real;
	const char *reason = sl_drop_reasons_name(&st->names, e->reason);
	const char *ns;

	memcpy(pkt, e->data, e->caplen);
	sl_set_bytes(r, SL_F_PACKET, pkt, e->caplen);
	if (family_of(e->protocol))
		sl_set_u64(r, SL_F_FAMILY, family_of(e->protocol));
	sl_set_u64(r, SL_F_HW_PROTOCOL, e->protocol);
	/* another namespace's index would be named after one of ours by decode */
	if (e->ifindex && (e->netns == st->own_netns || !e->netns))
		sl_set_u64(r, SL_F_IFINDEX_IN, e->ifindex);
	else if (e->ifindex)
		sl_set_u64(r, (sl_field)st->f_netns_ifindex, e->ifindex);
	sl_set_time(r, SL_F_TIMESTAMP, t / 1000000000, (uint32_t)(t % 1000000000));
	sl_set_u64(r, SL_F_ORIG_LEN, e->len);
	if (e->caplen < e->len)
		sl_set_u64(r, SL_F_CAPLEN, e->caplen);
	if (reason)
		sl_set_bytes(r, (sl_field)st->f_reason, reason, (uint32_t)strlen(reason));
	if (loc) {
		int n = sl_kallsyms_format(&st->ksyms, e->location, loc, LOCATION_MAX);

		sl_set_bytes(r, (sl_field)st->f_location, loc,
			     (uint32_t)(n < LOCATION_MAX ? n : LOCATION_MAX - 1));
	}
	if (e->netns) {
		sl_set_u64(r, (sl_field)st->f_netns_inode, e->netns);
		if ((ns = netns_name(st, e->netns)))
			sl_set_bytes(r, (sl_field)st->f_netns, ns, (uint32_t)strlen(ns));
	}
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct skbdrop *st = ctx;
	const struct skbdrop_event *e = data;
	size_t need = SKBDROP_SNAPLEN_MAX + LOCATION_MAX + 16;
	struct sl_record *r;
	uint8_t *pkt;
	char *loc = NULL;
	size_t mark;

	if (size < sizeof(*e) || e->caplen > SKBDROP_SNAPLEN_MAX) {
		st->host->counter_add(st->inst, st->c_malformed, 1);
		st->host->error_add(st->inst, 1);
		return 0;
	}
	if (st->b && (st->b->filled == st->b->capacity || sl_batch_room(st->b) < need))
		emit_batch(st);
	if (!st->b && !(st->b = st->host->batch_get(st->inst))) {
		st->host->error_add(st->inst, 1);
		return 0;
	}
	mark = sl_batch_mark(st->b);
	if (!(r = sl_batch_add(st->b)) || !(pkt = sl_batch_alloc(st->b, e->caplen ? e->caplen : 1)) ||
	    (st->have_ksyms && !(loc = sl_batch_alloc(st->b, LOCATION_MAX)))) {
		if (r)
			sl_batch_unadd(st->b);
		sl_batch_rewind(st->b, mark);
		st->host->error_add(st->inst, 1);
		return 0;
	}
	set_record(st, r, e, pkt, loc);
	if (loc)
		sl_batch_trim(st->b, loc, strlen(loc) + 1);
	return 0;
}

static void ring_readable(void *state, int fd, uint32_t events)
{
	struct skbdrop *st = state;

	(void)fd;
	(void)events;
	if (ring_buffer__consume(st->ring) < 0)
		st->host->error_add(st->inst, 1);
	emit_batch(st);
}

/* What waits in the ring below the program's wakeup threshold. */
static void poll_ring(void *state)
{
	ring_readable(state, -1, 0);
}

/* The per-CPU counters of the program, summed, added to the instance's; every second. */
static void read_counters(void *state)
{
	struct skbdrop *st = state;
	int ncpu = libbpf_num_possible_cpus();
	struct skbdrop_cpu *c;
	uint64_t rec = 0, sup = 0, lost = 0;
	uint32_t zero = 0;

	/* the program's clock is CLOCK_MONOTONIC: follow steps of the wall clock */
	st->mono_to_real = sl_clock_ns(CLOCK_REALTIME) - sl_clock_ns(CLOCK_MONOTONIC);
	if (ncpu <= 0 || !(c = calloc((size_t)ncpu, sizeof(*c))))
		return;
	if (bpf_map__lookup_elem(st->skel->maps.stats, &zero, sizeof(zero), c,
				 sizeof(*c) * (size_t)ncpu, 0) == 0) {
		for (int i = 0; i < ncpu; i++) {
			rec += c[i].records;
			sup += c[i].suppressed;
			lost += c[i].lost;
		}
		st->host->counter_add(st->inst, st->c_records, rec - st->seen_records);
		st->host->counter_add(st->inst, st->c_suppressed, sup - st->seen_suppressed);
		st->host->counter_add(st->inst, st->c_lost, lost - st->seen_lost);
		st->seen_records = rec;
		st->seen_suppressed = sup;
		st->seen_lost = lost;
	}
	free(c);
}

static struct skbdrop *loading;	/* libbpf's messages during start() go to its log */

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char text[4096], *line, *save = NULL;
	unsigned n = 0;

	if (!loading || level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(text, sizeof(text), fmt, ap);
	/* a verifier log comes as one message of many lines: its last ones say why */
	for (line = strtok_r(text, "\n", &save); line && n < 40; line = strtok_r(NULL, "\n", &save), n++)
		loading->host->log(loading->inst, level == LIBBPF_WARN ? SL_LOG_WARNING : SL_LOG_INFO,
				   "%s", line);
	return 0;
}

/* ---- configuration ---- */

/* Each name of `reasons` as a bit of the bitmap; a config error at the first unknown one. */
static int set_reasons(const struct sl_host *host, struct sl_instance *inst, struct skbdrop *st)
{
	const struct sl_strlist *l = &st->cfg->reasons;

	if (!l->n) {
		host->config_error(inst, "reasons", "no reason listed: the input would report nothing");
		return -1;
	}
	for (unsigned i = 0; i < l->n; i++) {
		int64_t v = sl_drop_reasons_find(&st->names, l->v[i]);
		char close[256];

		if (v < 0 || v >= SKBDROP_REASONS_MAX) {
			if (v >= SKBDROP_REASONS_MAX)
				host->config_error(inst, "reasons", "%s: value %lld is beyond the %d this build handles",
						   l->v[i], (long long)v, SKBDROP_REASONS_MAX);
			else if (sl_drop_reasons_close(&st->names, l->v[i], 5, close, sizeof(close)))
				host->config_error(inst, "reasons", "unknown drop reason '%s' (did you mean %s?)",
						   l->v[i], close);
			else
				host->config_error(inst, "reasons", "unknown drop reason '%s' (the running kernel's are "
						   "enum skb_drop_reason, e.g. NETFILTER_DROP, NO_SOCKET)", l->v[i]);
			return -1;
		}
		st->bitmap[v / 64] |= 1ull << (v % 64);
	}
	return 0;
}

/* The kernel's BTF and its drop reasons; -1 with a message in msg. */
static int load_reasons(struct sl_drop_reasons *names, char *msg, size_t len)
{
	struct btf *btf = btf__load_vmlinux_btf();
	int ret = -1;

	if (!btf) {
		/* libbpf says ESRCH when it found no BTF anywhere */
		snprintf(msg, len, "the kernel has no BTF (/sys/kernel/btf/vmlinux: %s): "
			 "skbdrop needs a kernel built with CONFIG_DEBUG_INFO_BTF",
			 errno == ESRCH ? "missing" : strerror(errno));
		return -1;
	}
	if (sl_drop_reasons_tracepoint_ok(btf) < 0)
		snprintf(msg, len, errno == ENOENT ? "the kernel has no skb:kfree_skb tracepoint" :
			 "the kernel's skb:kfree_skb tracepoint has no reason argument (Linux >= 5.17 needed)");
	else if (sl_drop_reasons_load(names, btf) < 0)
		snprintf(msg, len, "the kernel's BTF has no enum skb_drop_reason (Linux >= 5.17 needed)");
	else
		ret = 0;
	btf__free(btf);
	return ret;
}

static int skbdrop_configure(const struct sl_host *host, struct sl_instance *inst,
			     const void *config, void **state)
{
	struct skbdrop *st;
	char msg[256];

	if (!(st = sl_state_new(struct skbdrop, host, inst, config)))
		return -1;
	libbpf_set_print(libbpf_log);	/* nothing outside start(): the error below says it */
	/*
	 * Without the kernel's BTF the names cannot be checked here: `sluice -t`
	 * on a machine other than the firewall passes, the start fails.
	 */
	if (load_reasons(&st->names, msg, sizeof(msg)) < 0)
		snprintf(st->start_error, sizeof(st->start_error), "%s", msg);
	else if (set_reasons(host, inst, st) < 0) {
		sl_drop_reasons_free(&st->names);
		free(st);
		return -1;
	}
	st->ring_fd = -1;
	st->f_reason = host->field_id(inst, "drop_reason");
	st->f_location = host->field_id(inst, "drop_location");
	st->f_netns = host->field_id(inst, "netns");
	st->f_netns_inode = host->field_id(inst, "netns_inode");
	st->f_netns_ifindex = host->field_id(inst, "netns_ifindex");
	st->c_records = host->counter_new(inst, "records");
	st->c_suppressed = host->counter_new(inst, "suppressed");
	st->c_lost = host->counter_new(inst, "ring_lost");
	st->c_malformed = host->counter_new(inst, "malformed");
	*state = st;
	return 0;
}

/* ---- start and stop ---- */

static int load_program(struct skbdrop *st)
{
	int err;

	if (!(st->skel = skbdrop_bpf__open())) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot open the BPF object: %s", strerror(errno));
		return -1;
	}
	st->skel->rodata->snaplen = (uint32_t)st->cfg->snaplen;
	st->skel->rodata->rate = (uint64_t)st->cfg->rate;
	if ((err = skbdrop_bpf__load(st->skel))) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot load the BPF program: %s%s", strerror(-err),
			      err == -EPERM ? " (needs CAP_BPF and CAP_PERFMON: run as root without daemon.user)" : "");
		return -1;
	}
	memcpy(st->skel->bss->reasons, st->bitmap, sizeof(st->bitmap));
	if ((err = skbdrop_bpf__attach(st->skel))) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot attach to skb:kfree_skb: %s", strerror(-err));
		return -1;
	}
	return 0;
}

static int skbdrop_start(void *state)
{
	struct skbdrop *st = state;
	struct stat sb;
	int ret;

	if (st->start_error[0]) {
		st->host->log(st->inst, SL_LOG_ERR, "%s", st->start_error);
		return -1;
	}
	if (sl_kallsyms_load(&st->ksyms, "/proc/kallsyms") == 0)
		st->have_ksyms = true;
	else
		st->host->log(st->inst, SL_LOG_WARNING, "no drop_location: /proc/kallsyms: %s",
			      errno == EPERM ? "addresses hidden (needs CAP_SYSLOG)" : strerror(errno));
	netns_scan(st);
	if (stat("/proc/self/ns/net", &sb) == 0)
		st->own_netns = (uint32_t)sb.st_ino;
	st->mono_to_real = sl_clock_ns(CLOCK_REALTIME) - sl_clock_ns(CLOCK_MONOTONIC);
	loading = st;
	ret = load_program(st);
	loading = NULL;
	if (ret < 0)
		return -1;
	if (!(st->ring = ring_buffer__new(bpf_map__fd(st->skel->maps.events), on_event, st, NULL))) {
		st->host->log(st->inst, SL_LOG_ERR, "ring buffer: %s", strerror(errno));
		return -1;
	}
	st->ring_fd = ring_buffer__epoll_fd(st->ring);
	if (st->host->watch_fd(st->inst, st->ring_fd, EPOLLIN, ring_readable, st) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot watch the ring buffer: %s", strerror(errno));
		return -1;
	}
	st->watching = true;
	if (!(st->timer = st->host->timer_new(st->inst, read_counters, st)) ||
	    !(st->poll = st->host->timer_new(st->inst, poll_ring, st)))
		return -1;
	st->host->timer_arm(st->timer, 1000, 1000);
	st->host->timer_arm(st->poll, SKBDROP_POLL_MS, SKBDROP_POLL_MS);
	st->host->log(st->inst, SL_LOG_INFO, "reporting drops of %u reason%s on skb:kfree_skb (snaplen %lld, rate %lld/s per CPU)",
		      st->cfg->reasons.n, st->cfg->reasons.n == 1 ? "" : "s",
		      (long long)st->cfg->snaplen, (long long)st->cfg->rate);
	return 0;
}

static void skbdrop_stop(void *state)
{
	struct skbdrop *st = state;

	if (st->watching)
		st->host->unwatch_fd(st->inst, st->ring_fd);
	st->watching = false;
	if (st->skel)
		read_counters(st);
	if (st->timer)
		st->host->timer_free(st->timer);
	st->timer = NULL;
	if (st->poll)
		st->host->timer_free(st->poll);
	st->poll = NULL;
	ring_buffer__free(st->ring);
	st->ring = NULL;
	st->ring_fd = -1;
	skbdrop_bpf__destroy(st->skel);
	st->skel = NULL;
	if (st->b)
		st->host->batch_put(st->inst, st->b);
	st->b = NULL;
	sl_kallsyms_free(&st->ksyms);
	st->have_ksyms = false;
}

static void skbdrop_destroy(void *state)
{
	struct skbdrop *st = state;

	sl_drop_reasons_free(&st->names);
	free(st);
}

static const struct sl_plugin skbdrop_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_INPUT,
	.name = "skbdrop",
	.description = "packets the kernel drops (skb:kfree_skb, eBPF) with the drop reason, no log rule needed",
	.config_size = sizeof(struct skbdrop_cfg),
	.options = skbdrop_options,
	.provides = skbdrop_provides,
	.configure = skbdrop_configure,
	.start = skbdrop_start,
	.stop = skbdrop_stop,
	.destroy = skbdrop_destroy,
};

SLUICE_PLUGIN(skbdrop_plugin)
