/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfct: connection tracking events (new, update, destroy) read from
 * ctnetlink with libmnl; plugins/common/ct_attrs.c parses the CTA_* attributes,
 * plugins/common/ct_table.c holds the connections, plugins/common/nlsock.h
 * reads the event socket.
 *
 * Overruns.  Events are broadcast: when the socket buffer is full the
 * kernel drops them and the next recv() fails with ENOBUFS.  A lost
 * DESTROY is a lost flow, so, unless `track: false`, nfct keeps a compact
 * table of the connections it knows to be alive (key: conntrack id plus
 * the original tuple and zone; value: the last counters, times and state
 * seen), fed by NEW/UPDATE events, by dumps of the conntrack table, and
 * emptied by DESTROY events.  After an ENOBUFS (and every
 * `resync_interval`) it dumps the whole table in one request
 * (IPCTNL_MSG_CT_GET + NLM_F_DUMP on a second socket, read as the event
 * loop allows, never one query per flow), then sweeps its own table: a
 * connection it knew that is neither in the dump nor touched by an event
 * since the dump began is gone, and is reported as destroyed with the last
 * counters seen, `ct_recovered` set, and flow_end the time the sweep ran
 * (it ended at some point before).  Events that arrive during a dump are
 * applied as usual; a DESTROY during a dump leaves a tombstone so the dump
 * cannot resurrect the connection.  Before the sweep the event socket is
 * drained, because the kernel queues a DESTROY before it unlinks the
 * connection: whatever the dump missed was either delivered by then or
 * lost (and then another ENOBUFS starts another resync).
 *
 * With `reliable: true` the socket sets NETLINK_BROADCAST_ERROR and
 * NETLINK_NO_ENOBUFS, as conntrackd does: the kernel learns that delivery
 * failed and keeps a connection whose DESTROY was not delivered on a dying
 * list, redelivering the event later (ENOBUFS is not reported then).  Such
 * a late DESTROY may come after a dump that no longer shows the
 * connection, so in reliable mode a connection missing from a dump is only
 * reported when it is still missing at the next sweep (or at shutdown).
 * The price of reliable mode: connections that wait for delivery still
 * occupy the conntrack table, which can fill if sluice stalls.
 *
 * Filters (`family`, `protocols`) run in user space, before tracking.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <netinet/in.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "ct_attrs.h"
#include "ct_table.h"
#include "flow_fields.h"
#include "names.h"
#include "netns_open.h"
#include "netns_set.h"
#include "nlsock.h"
#include "plugin_state.h"

/* Receive buffer: one datagram at a time (records copy every value). */
#define RX_BUFSIZE (64 * 1024)
/* Datagrams per wake-up before we let the event loop run again. */
#define MAX_DGRAMS_PER_WAKEUP 256
/*
 * Draining the event socket before a sweep reads until it is empty: a
 * destroy left queued would be reported again after the sweep had already
 * reported its connection as recovered.  The bound only guards against a
 * socket that never empties.
 */
#define MAX_DGRAMS_DRAIN (1u << 20)
/* Least time between two dumps started because of ENOBUFS. */
#define RESYNC_MIN_GAP_MS 1000

/* ---- configuration ---- */

enum { FAM_ANY, FAM_IPV4, FAM_IPV6 };
static const char *const family_names[] = {"any", "ipv4", "ipv6", NULL};

struct nfct_cfg {
	struct sl_strlist events;
	uint64_t netlink_buffer;
	bool reliable;
	uint64_t resync_interval;
	bool dump_at_start;
	bool track;
	int64_t track_max;
	int family;
	struct sl_strlist protocols;
	const char *netns;
};

static const struct sl_option nfct_options[] = {
	SL_OPT_LIST("events", struct nfct_cfg, events, SL_EXCLUSIVE("[destroy]"),
		    "events to report: new, update, destroy"),
	SL_OPT_SIZE("netlink_buffer", struct nfct_cfg, netlink_buffer, "8MiB", 4096,
		    1024LL * 1024 * 1024, "event socket receive buffer (SO_RCVBUFFORCE, else SO_RCVBUF)"),
	SL_OPT_BOOL("reliable", struct nfct_cfg, reliable, "false",
		    "NETLINK_BROADCAST_ERROR + NO_ENOBUFS: the kernel redelivers lost destroys"),
	SL_OPT_DURATION("resync_interval", struct nfct_cfg, resync_interval, "0", 0,
			7 * 86400 * 1000LL, "dump the conntrack table this often (0: only after ENOBUFS)"),
	SL_OPT_BOOL("dump_at_start", struct nfct_cfg, dump_at_start, "true",
		    "dump the table at start so connections older than sluice are tracked"),
	SL_OPT_BOOL("track", struct nfct_cfg, track, "true",
		    "track live connections so destroys lost to an overrun are recovered by a dump"),
	SL_OPT_INT("track_max", struct nfct_cfg, track_max, "1048576", 1024, 1LL << 28,
		   "most connections tracked (about 170 bytes each)"),
	SL_OPT_ENUM("family", struct nfct_cfg, family, "any", family_names,
		    "report only this address family"),
	SL_OPT_LIST("protocols", struct nfct_cfg, protocols, NULL,
		    "report only these protocols (tcp, udp, icmp, icmpv6, sctp, dccp, udplite, gre, or numbers)"),
	SL_OPT_STR("netns", struct nfct_cfg, netns, SL_EXCLUSIVE(NULL),
		   "the network namespace to read instead of sluice's own: a name under /run/netns "
		   "or an absolute path (/proc/PID/ns/net); records carry `netns`"),
	SL_OPT_END
};

static const struct sl_field_decl nfct_provides[] = {
	SL_FIELD_DECL(SL_F_CT_ID),
	SL_FIELD_DECL(SL_F_FAMILY),
	SL_FIELD_DECL(SL_F_IP_PROTO),
	SL_CT_TUPLE_FIELDS,
	SL_FLOW_COUNT_FIELDS,
	SL_FIELD_DECL(SL_F_FLOW_END_REASON),
	SL_FIELD_DECL(SL_F_MARK),
	SL_FIELD_DECL(SL_F_CT_ZONE),
	SL_FIELD_DECL(SL_F_CT_STATUS),
	SL_FIELD_DECL(SL_F_TCP_STATE),
	SL_FIELD_DECL(SL_F_CT_EVENT),
	SL_FIELD_DECL(SL_F_TIMESTAMP),
	{"ct_recovered", SL_T_U64},
	{"ct_timeout", SL_T_U64},
	{"ct_portid", SL_T_U64},
	{"netns", SL_T_STRING},	/* netns: the namespace's label */
	SL_FIELD_END
};

struct nfct {
	SL_STATE_HEAD(struct nfct_cfg);

	uint32_t emit_mask;	/* SL_CT_EVENT_* reported */
	uint32_t sub_mask;	/* SL_CT_EVENT_* subscribed */
	bool tracking;
	uint8_t protos[32];	/* bitmap of protocols reported */
	bool proto_filter;
	int recovered_field;
	int timeout_field;	/* CTA_TIMEOUT, for conntrack -E's text */
	int portid_field;	/* nlmsg_pid of the event: who caused it */

	struct sl_nl_reader ev;	/* the event socket, its buffer, enobufs and malformed */

	/* netns: the namespace both sockets are made in (open for a dump socket made later) */
	struct sl_netns_one ns;

	struct mnl_socket *dump_nl;
	int dump_fd;
	bool dump_watching;
	uint8_t *dump_buf;
	uint32_t dump_seq, dump_portid;
	bool dumping, resync_again;
	int64_t dump_started_ms;	/* monotonic */
	uint32_t dump_seen;

	struct sl_timer *periodic, *soon;
	bool soon_armed;

	struct sl_ct_table t;
	uint32_t gen;
	bool warned_full;

	int c_resyncs, c_recovered, c_track_full;
};

static bool wanted(const struct nfct *st, const struct sl_ct_info *ci)
{
	if (st->cfg->family == FAM_IPV4 && ci->family != AF_INET)
		return false;
	if (st->cfg->family == FAM_IPV6 && ci->family != AF_INET6)
		return false;
	if (st->proto_filter && !(st->protos[ci->proto >> 3] & (1u << (ci->proto & 7))))
		return false;
	return true;
}

/* ---- records ---- */

/* A fresh record in *bp, emitting the batch first when it is full; NULL: no batch. */
static struct sl_record *next_record(struct nfct *st, struct sl_batch **bp)
{
	struct sl_record *r;

	if (!*bp && !(*bp = st->host->batch_get(st->inst)))
		return NULL;
	if (!(r = sl_batch_add(*bp))) {
		st->host->emit(st->inst, *bp);
		if (!(*bp = st->host->batch_get(st->inst)))
			return NULL;
		r = sl_batch_add(*bp);
	}
	if (r)
		sl_netns_one_tag(&st->ns, r);
	return r;
}

static void finish_batch(struct nfct *st, struct sl_batch *b)
{
	if (!b)
		return;
	st->host->emit(st->inst, b);	/* empty or not */
}

/* ---- tracking ---- */

/* A new entry for ci (state SL_CT_LIVE), or NULL when the table is full. */
static struct sl_ct_entry *track_insert(struct nfct *st, const struct sl_ct_info *ci)
{
	if (sl_ct_table_full(&st->t)) {
		st->host->counter_add(st->inst, st->c_track_full, 1);
		if (!st->warned_full)
			st->host->log(st->inst, SL_LOG_WARNING,
				      "track_max (%lld connections) reached: connections beyond it are not "
				      "tracked, their destroys cannot be recovered after an overrun",
				      (long long)st->cfg->track_max);
		st->warned_full = true;
		return NULL;
	}
	return sl_ct_insert(&st->t, ci, st->gen);
}

/* A connection seen alive (event or dump). */
static void track_alive(struct nfct *st, const struct sl_ct_info *ci)
{
	struct sl_ct_entry *e = sl_ct_find(&st->t, ci, NULL);

	if (!e) {
		track_insert(st, ci);
		return;
	}
	if (e->state == SL_CT_DEAD)
		return;	/* destroyed during this dump: the dump saw it before */
	sl_ct_merge(&e->ci, ci);
	e->state = SL_CT_LIVE;
	e->gen = st->gen;
}

static void track_destroy(struct nfct *st, const struct sl_ct_info *ci)
{
	uint32_t *link;
	struct sl_ct_entry *e = sl_ct_find(&st->t, ci, &link);

	if (!st->dumping) {
		if (e)
			sl_ct_remove(&st->t, e, link);
		return;
	}
	/* a tombstone, so that the running dump cannot bring it back */
	if (!e)
		e = track_insert(st, ci);
	if (e) {
		e->state = SL_CT_DEAD;
		e->gen = st->gen;
	}
}

/* ---- the event socket ---- */

static void request_resync(struct nfct *st);

/* One reading of the event socket: the instance and the batch being filled. */
struct nfct_rx {
	struct nfct *st;
	struct sl_batch *b;
};

static bool handle_event(void *arg, const struct nlmsghdr *nlh, const struct sl_time *rx)
{
	struct nfct_rx *x = arg;
	struct nfct *st = x->st;
	struct sl_batch **bp = &x->b;
	struct sl_ct_info ci;
	struct sl_record *r;
	uint32_t ev;

	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_CTNETLINK)
		return true;
	switch (NFNL_MSG_TYPE(nlh->nlmsg_type)) {
	case IPCTNL_MSG_CT_NEW:
		ev = nlh->nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL) ? SL_CT_EVENT_NEW
								     : SL_CT_EVENT_UPDATE;
		break;
	case IPCTNL_MSG_CT_DELETE:
		ev = SL_CT_EVENT_DESTROY;
		break;
	default:
		return true;
	}
	if (sl_ct_parse(nlh, &ci) < 0) {
		sl_nl_malformed(&st->ev);
		return true;
	}
	if (!wanted(st, &ci))
		return true;
	if (st->tracking && (ci.have & SL_CI_ID)) {
		if (ev == SL_CT_EVENT_DESTROY) {
			track_destroy(st, &ci);
		} else {
			struct sl_ct_info known = ci;

			/* the kernel puts times in destroy events only: remember when it began */
			if (ev == SL_CT_EVENT_NEW && !(known.have & SL_CI_START)) {
				known.start_ns = (uint64_t)rx->sec * 1000000000u + rx->nsec;
				known.have |= SL_CI_START;
			}
			track_alive(st, &known);
		}
	}
	if (!(ev & st->emit_mask))
		return true;
	if (!(r = next_record(st, bp))) {
		st->host->error_add(st->inst, 1);
		return true;
	}
	sl_ct_fill(r, &ci, ev, rx, st->timeout_field);
	/* caused by a netlink request (conntrack -D/-F): conntrack -E says by whom */
	if (nlh->nlmsg_pid && st->portid_field >= 0)
		sl_set_u64(r, (sl_field)st->portid_field, nlh->nlmsg_pid);
	return true;
}

/* An event lost to an overrun may be a lost destroy: a dump finds out. */
static void ev_enobufs(void *arg)
{
	struct nfct_rx *x = arg;

	request_resync(x->st);
}

/* Read events until the socket would block or `max` datagrams were read. */
static void read_events(struct nfct *st, unsigned max)
{
	struct nfct_rx x = {.st = st};

	/* records copy every value: one datagram at a time in the buffer */
	sl_nl_receive(&st->ev, max, handle_event, NULL, ev_enobufs, &x);
	finish_batch(st, x.b);
}

static void ev_readable(void *state, int fd, uint32_t events)
{
	(void)fd;
	(void)events;
	read_events(state, MAX_DGRAMS_PER_WAKEUP);
}

/* ---- dumps and the sweep ---- */

static void emit_recovered(struct nfct *st, struct sl_batch **bp, struct sl_ct_entry *e,
			   const struct sl_time *now)
{
	struct sl_record *r;

	st->host->counter_add(st->inst, st->c_recovered, 1);
	if (!(r = next_record(st, bp))) {
		st->host->error_add(st->inst, 1);
		return;
	}
	sl_ct_fill(r, &e->ci, SL_CT_EVENT_DESTROY, now, st->timeout_field);
	/* it ended before this sweep; when exactly is not known */
	sl_set_time(r, SL_F_FLOW_END, now->sec, now->nsec);
	if (st->recovered_field >= 0)
		sl_set_u64(r, (sl_field)st->recovered_field, 1);
}

/* What a sweep is doing: the entries it emits go into b. */
struct sweep {
	struct nfct *st;
	struct sl_batch *b;
	struct sl_time now;
	uint32_t vanished, missing;
};

/* After a complete dump: an entry neither dumped nor touched since has vanished. */
static bool sweep_entry(struct sl_ct_entry *e, void *arg)
{
	struct sweep *w = arg;

	if (e->state == SL_CT_DEAD)
		return true;
	if (e->gen == w->st->gen)
		return false;
	if (e->state == SL_CT_LIVE && w->st->cfg->reliable) {
		/* the kernel may still deliver its destroy */
		e->state = SL_CT_MISSING;
		w->missing++;
		return false;
	}
	emit_recovered(w->st, &w->b, e, &w->now);
	w->vanished++;
	return true;
}

/* After a complete dump: report what vanished, drop tombstones. */
static void sweep(struct nfct *st)
{
	struct sweep w = {.st = st, .now = sl_clock_time(CLOCK_REALTIME)};

	sl_ct_sweep(&st->t, sweep_entry, &w);
	finish_batch(st, w.b);
	st->host->log(st->inst, w.vanished ? SL_LOG_NOTICE : SL_LOG_DEBUG,
		      "resync: %u connections in the table, %u tracked; %u had vanished without a "
		      "destroy event and were reported as destroyed%s",
		      st->dump_seen, st->t.live, w.vanished,
		      w.missing ? " (some are missing and reported at the next resync)" : "");
}

static bool is_tombstone(struct sl_ct_entry *e, void *arg)
{
	(void)arg;
	return e->state == SL_CT_DEAD;
}

static void end_dump(struct nfct *st, bool complete)
{
	st->dumping = false;
	if (complete) {
		/* destroys queued before the dump finished must be applied first */
		read_events(st, MAX_DGRAMS_DRAIN);
		st->host->counter_add(st->inst, st->c_resyncs, 1);
		sweep(st);
	} else {
		/* an incomplete dump proves nothing: drop its tombstones, try again */
		sl_ct_sweep(&st->t, is_tombstone, NULL);
		st->resync_again = true;
	}
	if (st->resync_again) {
		st->resync_again = false;
		request_resync(st);
	}
}

static void dump_readable(void *state, int fd, uint32_t events)
{
	struct nfct *st = state;

	(void)events;
	/* read even when no dump runs: the rest of an aborted one is discarded */
	for (unsigned dgrams = 0; dgrams < MAX_DGRAMS_PER_WAKEUP; dgrams++) {
		const struct nlmsghdr *nlh;
		int n = sl_nl_recv_reply(fd, st->dump_buf, RX_BUFSIZE);

		if (n == 0)
			return;
		if (n < 0) {
			if (errno == EMSGSIZE) {
				st->host->log(st->inst, SL_LOG_ERR, "conntrack dump: a datagram was cut");
				sl_nl_malformed(&st->ev);
			} else {
				st->host->log(st->inst, SL_LOG_ERR, "conntrack dump: recv: %s",
					      strerror(errno));
			}
			if (st->dumping)
				end_dump(st, false);
			return;
		}
		for (nlh = (const struct nlmsghdr *)st->dump_buf; sl_nlmsg_ok(nlh, n);
		     nlh = mnl_nlmsg_next(nlh, &n)) {
			struct sl_ct_info ci;

			if (!st->dumping || nlh->nlmsg_seq != st->dump_seq)
				continue;	/* the rest of an aborted dump */
			if (nlh->nlmsg_type == NLMSG_DONE) {
				end_dump(st, true);
				return;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

				st->host->log(st->inst, SL_LOG_ERR, "conntrack dump failed: %s",
					      nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(*e))
						      ? strerror(-e->error) : "truncated error");
				end_dump(st, false);
				return;
			}
			if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_CTNETLINK ||
			    NFNL_MSG_TYPE(nlh->nlmsg_type) != IPCTNL_MSG_CT_NEW)
				continue;
			if (sl_ct_parse(nlh, &ci) < 0) {
				sl_nl_malformed(&st->ev);
				continue;
			}
			st->dump_seen++;
			if ((ci.have & SL_CI_ID) && wanted(st, &ci))
				track_alive(st, &ci);
		}
		if (n != 0)
			sl_nl_malformed(&st->ev);
	}
}

static int open_dump_socket(struct nfct *st)
{
	st->dump_nl = sl_netns_mnl_socket(st->ns.fd, NETLINK_NETFILTER);
	if (!st->dump_nl || fcntl(mnl_socket_get_fd(st->dump_nl), F_SETFL, O_NONBLOCK) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "netlink socket for dumps: %s", strerror(errno));
		return -1;
	}
	st->dump_fd = mnl_socket_get_fd(st->dump_nl);
	st->dump_portid = mnl_socket_get_portid(st->dump_nl);
	if (st->host->watch_fd(st->inst, st->dump_fd, EPOLLIN, dump_readable, st) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot watch the dump socket: %s", strerror(errno));
		return -1;
	}
	st->dump_watching = true;
	return 0;
}

static void start_dump(struct nfct *st)
{
	uint8_t req[64];
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfg;

	if (st->dumping) {
		st->resync_again = true;
		return;
	}
	if (!st->dump_nl && open_dump_socket(st) < 0)
		return;
	nlh = mnl_nlmsg_put_header(req);
	nlh->nlmsg_type = NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_GET;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++st->dump_seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = AF_UNSPEC;	/* every family */
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;
	if (mnl_socket_sendto(st->dump_nl, nlh, nlh->nlmsg_len) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "conntrack dump request: %s", strerror(errno));
		st->host->error_add(st->inst, 1);
		return;
	}
	st->gen++;
	st->dumping = true;
	st->dump_seen = 0;
	st->dump_started_ms = sl_clock_ms(CLOCK_MONOTONIC);
}

static void soon_cb(void *state)
{
	struct nfct *st = state;

	st->soon_armed = false;
	start_dump(st);
}

static void periodic_cb(void *state)
{
	start_dump(state);
}

/* A dump as soon as allowed (at most one per RESYNC_MIN_GAP_MS). */
static void request_resync(struct nfct *st)
{
	int64_t now_ms, wait = 0;

	if (!st->tracking)
		return;
	if (st->dumping) {
		st->resync_again = true;
		return;
	}
	if (st->soon_armed)
		return;
	now_ms = sl_clock_ms(CLOCK_MONOTONIC);
	if (st->dump_started_ms && now_ms - st->dump_started_ms < RESYNC_MIN_GAP_MS)
		wait = RESYNC_MIN_GAP_MS - (now_ms - st->dump_started_ms);
	st->host->timer_arm(st->soon, (uint64_t)wait, 0);
	st->soon_armed = true;
}

/* ---- lifecycle ---- */

static int nfct_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			  void **state)
{
	const struct nfct_cfg *cfg = config;
	struct nfct *st = sl_state_new(struct nfct, host, inst, config);

	if (!st)
		return -1;
	sl_nl_reader_init(&st->ev, host, inst);
	st->dump_fd = -1;
	if (sl_netns_one_configure(&st->ns, host, inst, cfg->netns) < 0)
		goto fail;
	sl_ct_table_init(&st->t, (uint64_t)cfg->track_max);
	for (unsigned i = 0; i < cfg->events.n; i++) {
		const char *e = cfg->events.v[i];

		if (strcmp(e, "new") == 0)
			st->emit_mask |= SL_CT_EVENT_NEW;
		else if (strcmp(e, "update") == 0)
			st->emit_mask |= SL_CT_EVENT_UPDATE;
		else if (strcmp(e, "destroy") == 0)
			st->emit_mask |= SL_CT_EVENT_DESTROY;
		else {
			host->config_error(inst, "events", "unknown event '%s' (new, update, destroy)", e);
			goto fail;
		}
	}
	if (!st->emit_mask) {
		host->config_error(inst, "events", "at least one of new, update, destroy");
		goto fail;
	}
	for (unsigned i = 0; i < cfg->protocols.n; i++) {
		int p = sl_proto_number(cfg->protocols.v[i]);

		if (p < 0) {
			host->config_error(inst, "protocols",
					   "unknown protocol '%s' (tcp, udp, icmp, icmpv6, sctp, dccp, "
					   "udplite, gre, esp, ah or a number 0-255)", cfg->protocols.v[i]);
			goto fail;
		}
		st->protos[p >> 3] |= (uint8_t)(1u << (p & 7));
		st->proto_filter = true;
	}
	/*
	 * Tracking recovers lost destroys: pointless when they are not
	 * reported, or in reliable mode (no ENOBUFS) without periodic dumps.
	 */
	st->tracking = cfg->track && (st->emit_mask & SL_CT_EVENT_DESTROY) &&
		       (!cfg->reliable || cfg->resync_interval);
	st->sub_mask = st->emit_mask;
	if (st->tracking)
		st->sub_mask |= SL_CT_EVENT_NEW;	/* to know what is alive */
	if (!cfg->track && cfg->resync_interval) {
		host->config_error(inst, "resync_interval", "needs track: true (dumps feed the table)");
		goto fail;
	}
	st->recovered_field = host->field_id(inst, "ct_recovered");
	st->timeout_field = host->field_id(inst, "ct_timeout");
	st->portid_field = host->field_id(inst, "ct_portid");
	st->ev.enobufs_hint = st->tracking ? "; a table dump recovers the lost destroys"
					   : " (track is off: lost destroys are not recovered)";
	st->ev.c_enobufs = host->counter_new(inst, "enobufs");
	st->ev.c_malformed = host->counter_new(inst, "malformed");
	st->c_resyncs = host->counter_new(inst, "resyncs");
	st->c_recovered = host->counter_new(inst, "recovered");
	st->c_track_full = host->counter_new(inst, "track_full");
	/* one event per datagram: the kernel's drop count is the events lost */
	st->ev.c_lost = host->counter_new(inst, "lost");
	*state = st;
	return 0;
fail:
	sl_netns_one_free(&st->ns);
	free(st);
	return -1;
}

/* -1 when the sysctl cannot be read (conntrack not loaded in this namespace). */
static int read_sysctl(const char *name)
{
	char path[128], buf[16];
	FILE *f;
	int v = -1;

	snprintf(path, sizeof(path), "/proc/sys/net/netfilter/%s", name);
	if (!(f = fopen(path, "re")))
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = atoi(buf);
	fclose(f);
	return v;
}

static void check_sysctls(struct nfct *st)
{
	if (read_sysctl("nf_conntrack_events") == 0)
		st->host->log(st->inst, SL_LOG_WARNING,
			      "net.netfilter.nf_conntrack_events is 0: the kernel sends no conntrack "
			      "events at all; set it to 1");
	if (read_sysctl("nf_conntrack_acct") == 0)
		st->host->log(st->inst, SL_LOG_WARNING,
			      "net.netfilter.nf_conntrack_acct is 0: packet and byte counters will be "
			      "missing; set it to 1 (applies to connections created afterwards)");
	if (read_sysctl("nf_conntrack_timestamp") == 0)
		st->host->log(st->inst, SL_LOG_WARNING,
			      "net.netfilter.nf_conntrack_timestamp is 0: flow start and end times "
			      "will be missing; set it to 1 (applies to connections created afterwards)");
}

static int nfct_start(void *state)
{
	struct nfct *st = state;
	static const struct {
		uint32_t ev;
		int group;
	} groups[] = {
		{SL_CT_EVENT_NEW, NFNLGRP_CONNTRACK_NEW},
		{SL_CT_EVENT_UPDATE, NFNLGRP_CONNTRACK_UPDATE},
		{SL_CT_EVENT_DESTROY, NFNLGRP_CONNTRACK_DESTROY},
	};
	int on = 1;

	st->dump_buf = malloc(RX_BUFSIZE);
	if (!st->dump_buf) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	st->ev.bufsize = st->ev.maxdg = RX_BUFSIZE;
	if (sl_netns_one_open(&st->ns, st->host, st->inst) < 0 ||
	    sl_nl_open_in(&st->ev, st->cfg->netlink_buffer, st->ns.fd) < 0)
		return -1;
	if (st->cfg->reliable &&
	    (mnl_socket_setsockopt(st->ev.nl, NETLINK_BROADCAST_ERROR, &on, sizeof(on)) < 0 ||
	     mnl_socket_setsockopt(st->ev.nl, NETLINK_NO_ENOBUFS, &on, sizeof(on)) < 0)) {
		st->host->log(st->inst, SL_LOG_ERR, "reliable: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		int g = groups[i].group;

		if (!(st->sub_mask & groups[i].ev))
			continue;
		if (mnl_socket_setsockopt(st->ev.nl, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) < 0) {
			st->host->log(st->inst, SL_LOG_ERR,
				      "cannot subscribe to conntrack events: %s (CAP_NET_ADMIN? is "
				      "nf_conntrack_netlink available?)", strerror(errno));
			return -1;
		}
	}
	if (!st->ns.path)
		check_sysctls(st);	/* /proc/sys/net is our namespace's */
	if (sl_nl_watch(&st->ev, ev_readable, st) < 0)
		return -1;
	if (st->tracking) {
		st->soon = st->host->timer_new(st->inst, soon_cb, st);
		if (!st->soon)
			return -1;
		if (st->cfg->resync_interval) {
			st->periodic = st->host->timer_new(st->inst, periodic_cb, st);
			if (!st->periodic)
				return -1;
			st->host->timer_arm(st->periodic, st->cfg->resync_interval,
					    st->cfg->resync_interval);
		}
		if (open_dump_socket(st) < 0)
			return -1;
		if (st->cfg->dump_at_start)
			start_dump(st);
	}
	st->host->log(st->inst, SL_LOG_INFO, "conntrack events:%s%s%s%s%s%s%s",
		      st->emit_mask & SL_CT_EVENT_NEW ? " new" : "",
		      st->emit_mask & SL_CT_EVENT_UPDATE ? " update" : "",
		      st->emit_mask & SL_CT_EVENT_DESTROY ? " destroy" : "",
		      st->cfg->reliable ? ", reliable" : "",
		      st->tracking ? ", tracking connections" : "",
		      st->ns.path ? ", netns " : "", st->ns.path ? st->ns.path : "");
	return 0;
}

/* Shutdown: in reliable mode, connections missing at the last sweep are reported now. */
static bool flush_entry(struct sl_ct_entry *e, void *arg)
{
	struct sweep *w = arg;

	if (e->state != SL_CT_MISSING)
		return false;
	emit_recovered(w->st, &w->b, e, &w->now);
	return true;
}

static int nfct_flush(void *state)
{
	struct nfct *st = state;
	struct sweep w = {.st = st, .now = sl_clock_time(CLOCK_REALTIME)};

	sl_ct_sweep(&st->t, flush_entry, &w);
	finish_batch(st, w.b);
	return 0;
}

static void nfct_stop(void *state)
{
	struct nfct *st = state;

	sl_nl_close(&st->ev);
	if (st->dump_watching)
		st->host->unwatch_fd(st->inst, st->dump_fd);
	st->dump_watching = false;
	if (st->periodic)
		st->host->timer_disarm(st->periodic);
	if (st->soon)
		st->host->timer_disarm(st->soon);
	if (st->dump_nl)
		mnl_socket_close(st->dump_nl);
	st->dump_nl = NULL;
	st->dump_fd = -1;
	st->dumping = false;
	free(st->dump_buf);
	st->dump_buf = NULL;
	sl_netns_one_close(&st->ns);
}

static void nfct_destroy(void *state)
{
	struct nfct *st = state;

	sl_ct_table_free(&st->t);
	sl_netns_one_free(&st->ns);
	free(st);
}

static const struct sl_plugin nfct_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_INPUT,
	.name = "nfct",
	.description = "connection tracking events (new, update, destroy) with counters and times",
	.config_size = sizeof(struct nfct_cfg),
	.options = nfct_options,
	.provides = nfct_provides,
	.configure = nfct_configure,
	.start = nfct_start,
	.flush = nfct_flush,
	.stop = nfct_stop,
	.destroy = nfct_destroy,
};

SLUICE_PLUGIN(nfct_plugin)
