/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nfct: connection tracking events (new, update, destroy) read from
 * ctnetlink with libmnl; plugins/common/ct_parse.c parses the CTA_* attributes.
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

#include "ct_parse.h"
#include "nlsock.h"

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
/* Rate limit of the "losing events" warning. */
#define ENOBUFS_WARN_NS (10 * 1000000000LL)
/* Least time between two dumps started because of ENOBUFS. */
#define RESYNC_MIN_GAP_MS 1000
#define NIL UINT32_MAX

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
};

static const struct sl_option nfct_options[] = {
	SL_OPT_LIST("events", struct nfct_cfg, events, "[destroy]",
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
	SL_OPT_END
};

static const struct sl_field_decl nfct_provides[] = {
	SL_FIELD_DECL(SL_F_CT_ID),
	SL_FIELD_DECL(SL_F_FAMILY),
	SL_FIELD_DECL(SL_F_IP_PROTO),
	SL_FIELD_DECL(SL_F_ORIG_SRC),
	SL_FIELD_DECL(SL_F_ORIG_DST),
	SL_FIELD_DECL(SL_F_ORIG_SPORT),
	SL_FIELD_DECL(SL_F_ORIG_DPORT),
	SL_FIELD_DECL(SL_F_REPLY_SRC),
	SL_FIELD_DECL(SL_F_REPLY_DST),
	SL_FIELD_DECL(SL_F_REPLY_SPORT),
	SL_FIELD_DECL(SL_F_REPLY_DPORT),
	SL_FIELD_DECL(SL_F_ORIG_PACKETS),
	SL_FIELD_DECL(SL_F_ORIG_BYTES),
	SL_FIELD_DECL(SL_F_REPLY_PACKETS),
	SL_FIELD_DECL(SL_F_REPLY_BYTES),
	SL_FIELD_DECL(SL_F_FLOW_START),
	SL_FIELD_DECL(SL_F_FLOW_END),
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
	SL_FIELD_END
};

/* ---- the table of live connections ---- */

enum { E_FREE, E_LIVE, E_DEAD, E_MISSING };

struct ct_entry {
	struct sl_ct_info ci;
	uint32_t next;	/* hash chain, or free list */
	uint32_t gen;	/* dump generation that last saw or touched it */
	uint8_t state;
};

struct ct_table {
	struct ct_entry *e;
	uint32_t cap, used;	/* entries allocated, handed out (high-water) */
	uint32_t live;		/* entries not free */
	uint32_t free_head;
	uint32_t *bucket;
	uint32_t nbuckets;	/* power of two */
};

struct nfct {
	const struct sl_host *host;
	struct sl_instance *inst;
	const struct nfct_cfg *cfg;

	uint32_t emit_mask;	/* SL_CT_EVENT_* reported */
	uint32_t sub_mask;	/* SL_CT_EVENT_* subscribed */
	bool tracking;
	uint8_t protos[32];	/* bitmap of protocols reported */
	bool proto_filter;
	int recovered_field;
	int timeout_field;	/* CTA_TIMEOUT, for conntrack -E's text */
	int portid_field;	/* nlmsg_pid of the event: who caused it */

	struct mnl_socket *ev_nl;
	int ev_fd;
	bool ev_watching;
	uint8_t *ev_buf;

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

	struct ct_table t;
	uint32_t gen;
	bool warned_full, warned_trunc;

	int c_enobufs, c_malformed, c_resyncs, c_recovered, c_track_full;
	uint64_t enobufs_total;
	int64_t enobufs_warned_ns;
};

static int64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static struct sl_time real_now(void)
{
	struct timespec t;
	struct sl_time s;

	clock_gettime(CLOCK_REALTIME, &t);
	s.sec = t.tv_sec;
	s.nsec = (uint32_t)t.tv_nsec;
	return s;
}

static void malformed(struct nfct *st)
{
	st->host->counter_add(st->inst, st->c_malformed, 1);
	st->host->error_add(st->inst, 1);
}

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
	if ((r = sl_batch_add(*bp)))
		return r;
	st->host->emit(st->inst, *bp);
	if (!(*bp = st->host->batch_get(st->inst)))
		return NULL;
	return sl_batch_add(*bp);
}

static void finish_batch(struct nfct *st, struct sl_batch *b)
{
	if (!b)
		return;
	st->host->emit(st->inst, b);	/* empty or not */
}

/* ---- the table ---- */

static uint32_t ct_hash(const struct sl_ct_info *ci)
{
	uint32_t h = ci->id ^ ((uint32_t)ci->osport << 16 | ci->odport) * 0x85ebca6bu;

	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	h ^= h >> 12;
	return h;
}

static bool ct_same(const struct sl_ct_info *a, const struct sl_ct_info *b)
{
	return a->id == b->id && a->proto == b->proto && a->zone == b->zone && a->osport == b->osport &&
	       a->odport == b->odport && memcmp(a->osrc, b->osrc, 16) == 0 &&
	       memcmp(a->odst, b->odst, 16) == 0;
}

static struct ct_entry *ct_find(struct ct_table *t, const struct sl_ct_info *ci, uint32_t **link)
{
	uint32_t *l;

	if (!t->nbuckets)
		return NULL;
	for (l = &t->bucket[ct_hash(ci) & (t->nbuckets - 1)]; *l != NIL; l = &t->e[*l].next)
		if (ct_same(&t->e[*l].ci, ci)) {
			if (link)
				*link = l;
			return &t->e[*l];
		}
	return NULL;
}

static bool ct_rehash(struct ct_table *t, uint32_t nbuckets)
{
	uint32_t *nb = malloc((size_t)nbuckets * sizeof(*nb));

	if (!nb)
		return false;
	for (uint32_t i = 0; i < nbuckets; i++)
		nb[i] = NIL;
	for (uint32_t i = 0; i < t->used; i++) {
		struct ct_entry *e = &t->e[i];
		uint32_t h;

		if (e->state == E_FREE)
			continue;
		h = ct_hash(&e->ci) & (nbuckets - 1);
		e->next = nb[h];
		nb[h] = i;
	}
	free(t->bucket);
	t->bucket = nb;
	t->nbuckets = nbuckets;
	return true;
}

/* A new entry for ci (state E_LIVE), or NULL when the table is full. */
static struct ct_entry *ct_insert(struct nfct *st, const struct sl_ct_info *ci)
{
	struct ct_table *t = &st->t;
	struct ct_entry *e;
	uint32_t i, h;

	if (t->live >= (uint64_t)st->cfg->track_max) {
		st->host->counter_add(st->inst, st->c_track_full, 1);
		if (!st->warned_full)
			st->host->log(st->inst, SL_LOG_WARNING,
				      "track_max (%lld connections) reached: connections beyond it are not "
				      "tracked, their destroys cannot be recovered after an overrun",
				      (long long)st->cfg->track_max);
		st->warned_full = true;
		return NULL;
	}
	if (t->free_head != NIL) {
		i = t->free_head;
		t->free_head = t->e[i].next;
	} else {
		if (t->used == t->cap) {
			uint32_t ncap = t->cap ? t->cap * 2 : 4096;
			struct ct_entry *ne = realloc(t->e, (size_t)ncap * sizeof(*ne));

			if (!ne)
				return NULL;
			t->e = ne;
			t->cap = ncap;
		}
		i = t->used++;
		t->e[i].state = E_FREE;	/* not yet in a chain: a rehash must skip it */
	}
	if (t->live + 1 > t->nbuckets && !ct_rehash(t, t->nbuckets ? t->nbuckets * 2 : 4096)) {
		t->e[i].state = E_FREE;
		t->e[i].next = t->free_head;
		t->free_head = i;
		return NULL;
	}
	e = &t->e[i];
	e->ci = *ci;
	e->ci.have &= ~SL_CI_TIMEOUT;
	e->state = E_LIVE;
	e->gen = st->gen;
	h = ct_hash(ci) & (t->nbuckets - 1);
	e->next = t->bucket[h];
	t->bucket[h] = i;
	t->live++;
	return e;
}

static void ct_remove(struct ct_table *t, struct ct_entry *e, uint32_t *link)
{
	uint32_t i = (uint32_t)(e - t->e);

	*link = e->next;
	e->state = E_FREE;
	e->next = t->free_head;
	t->free_head = i;
	t->live--;
}

/* Newer information over older: only what the message carried. */
static void ct_merge(struct sl_ct_info *dst, const struct sl_ct_info *src)
{
	uint32_t h = src->have;

	if (h & SL_CI_REPLY) {
		memcpy(dst->rsrc, src->rsrc, 16);
		memcpy(dst->rdst, src->rdst, 16);
	}
	if (h & SL_CI_RPORTS) {
		dst->rsport = src->rsport;
		dst->rdport = src->rdport;
	}
	if (h & SL_CI_OCOUNT) {
		dst->opkts = src->opkts;
		dst->obytes = src->obytes;
	}
	if (h & SL_CI_RCOUNT) {
		dst->rpkts = src->rpkts;
		dst->rbytes = src->rbytes;
	}
	if (h & SL_CI_START)
		dst->start_ns = src->start_ns;
	if (h & SL_CI_MARK)
		dst->mark = src->mark;
	if (h & SL_CI_STATUS)
		dst->status = src->status;
	if (h & SL_CI_TCPSTATE)
		dst->tcp_state = src->tcp_state;
	dst->have |= h & ~(SL_CI_STOP | SL_CI_TIMEOUT);
}

/* A connection seen alive (event or dump). */
static void track_alive(struct nfct *st, const struct sl_ct_info *ci)
{
	struct ct_entry *e = ct_find(&st->t, ci, NULL);

	if (!e) {
		ct_insert(st, ci);
		return;
	}
	if (e->state == E_DEAD)
		return;	/* destroyed during this dump: the dump saw it before */
	ct_merge(&e->ci, ci);
	e->state = E_LIVE;
	e->gen = st->gen;
}

static void track_destroy(struct nfct *st, const struct sl_ct_info *ci)
{
	uint32_t *link;
	struct ct_entry *e = ct_find(&st->t, ci, &link);

	if (!st->dumping) {
		if (e)
			ct_remove(&st->t, e, link);
		return;
	}
	/* a tombstone, so that the running dump cannot bring it back */
	if (!e)
		e = ct_insert(st, ci);
	if (e) {
		e->state = E_DEAD;
		e->gen = st->gen;
	}
}

/* ---- the event socket ---- */

static void note_enobufs(struct nfct *st);

static void handle_event(struct nfct *st, const struct nlmsghdr *nlh, struct sl_batch **bp,
			 const struct sl_time *rx)
{
	struct sl_ct_info ci;
	struct sl_record *r;
	uint32_t ev;

	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_CTNETLINK)
		return;
	switch (NFNL_MSG_TYPE(nlh->nlmsg_type)) {
	case IPCTNL_MSG_CT_NEW:
		ev = nlh->nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL) ? SL_CT_EVENT_NEW
								     : SL_CT_EVENT_UPDATE;
		break;
	case IPCTNL_MSG_CT_DELETE:
		ev = SL_CT_EVENT_DESTROY;
		break;
	default:
		return;
	}
	if (sl_ct_parse(nlh, &ci) < 0) {
		malformed(st);
		return;
	}
	if (!wanted(st, &ci))
		return;
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
		return;
	if (!(r = next_record(st, bp))) {
		st->host->error_add(st->inst, 1);
		return;
	}
	sl_ct_fill(r, &ci, ev, rx, st->timeout_field);
	/* caused by a netlink request (conntrack -D/-F): conntrack -E says by whom */
	if (nlh->nlmsg_pid && st->portid_field >= 0)
		sl_set_u64(r, (sl_field)st->portid_field, nlh->nlmsg_pid);
}

/* Read events until the socket would block or `max` datagrams were read. */
static void read_events(struct nfct *st, unsigned max)
{
	struct sl_batch *b = NULL;

	for (unsigned dgrams = 0; dgrams < max; dgrams++) {
		const struct nlmsghdr *nlh;
		struct sl_time rx;
		ssize_t got;
		int n;

		got = recv(st->ev_fd, st->ev_buf, RX_BUFSIZE, MSG_DONTWAIT | MSG_TRUNC);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {
				note_enobufs(st);
				continue;
			}
			if (errno != EAGAIN)
				st->host->log(st->inst, SL_LOG_ERR, "recv: %s", strerror(errno));
			break;
		}
		if (got > RX_BUFSIZE) {
			if (!st->warned_trunc)
				st->host->log(st->inst, SL_LOG_ERR,
					      "a %zd-byte netlink datagram was cut: its events are lost", got);
			st->warned_trunc = true;
			malformed(st);
			continue;
		}
		rx = real_now();	/* one receive time per read */
		n = (int)got;
		for (nlh = (const struct nlmsghdr *)st->ev_buf; sl_nlmsg_ok(nlh, n);
		     nlh = mnl_nlmsg_next(nlh, &n))
			handle_event(st, nlh, &b, &rx);
		if (n != 0)
			malformed(st);
	}
	finish_batch(st, b);
}

static void ev_readable(void *state, int fd, uint32_t events)
{
	(void)fd;
	(void)events;
	read_events(state, MAX_DGRAMS_PER_WAKEUP);
}

/* ---- dumps and the sweep ---- */

static void request_resync(struct nfct *st);

static void emit_recovered(struct nfct *st, struct sl_batch **bp, struct ct_entry *e,
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

/* After a complete dump: report what vanished, drop tombstones. */
static void sweep(struct nfct *st)
{
	struct ct_table *t = &st->t;
	struct sl_time now = real_now();
	struct sl_batch *b = NULL;
	uint32_t vanished = 0, missing = 0;

	for (uint32_t h = 0; h < t->nbuckets; h++) {
		uint32_t *link = &t->bucket[h];

		while (*link != NIL) {
			struct ct_entry *e = &t->e[*link];

			if (e->state == E_DEAD) {
				ct_remove(t, e, link);
				continue;
			}
			if (e->gen != st->gen) {
				if (e->state == E_LIVE && st->cfg->reliable) {
					/* the kernel may still deliver its destroy */
					e->state = E_MISSING;
					missing++;
				} else {
					emit_recovered(st, &b, e, &now);
					vanished++;
					ct_remove(t, e, link);
					continue;
				}
			}
			link = &e->next;
		}
	}
	finish_batch(st, b);
	st->host->log(st->inst, vanished ? SL_LOG_NOTICE : SL_LOG_DEBUG,
		      "resync: %u connections in the table, %u tracked; %u had vanished without a "
		      "destroy event and were reported as destroyed%s",
		      st->dump_seen, t->live, vanished,
		      missing ? " (some are missing and reported at the next resync)" : "");
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
		for (uint32_t h = 0; h < st->t.nbuckets; h++) {
			uint32_t *link = &st->t.bucket[h];

			while (*link != NIL) {
				struct ct_entry *e = &st->t.e[*link];

				if (e->state == E_DEAD)
					ct_remove(&st->t, e, link);
				else
					link = &e->next;
			}
		}
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
		ssize_t got = recv(fd, st->dump_buf, RX_BUFSIZE, MSG_DONTWAIT | MSG_TRUNC);
		int n;

		if (got < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			st->host->log(st->inst, SL_LOG_ERR, "conntrack dump: recv: %s", strerror(errno));
			if (st->dumping)
				end_dump(st, false);
			return;
		}
		if (got > RX_BUFSIZE) {
			st->host->log(st->inst, SL_LOG_ERR, "conntrack dump: a datagram was cut");
			malformed(st);
			if (st->dumping)
				end_dump(st, false);
			return;
		}
		n = (int)got;
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
				malformed(st);
				continue;
			}
			st->dump_seen++;
			if ((ci.have & SL_CI_ID) && wanted(st, &ci))
				track_alive(st, &ci);
		}
		if (n != 0)
			malformed(st);
	}
}

static int open_dump_socket(struct nfct *st)
{
	st->dump_nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!st->dump_nl || mnl_socket_bind(st->dump_nl, 0, MNL_SOCKET_AUTOPID) < 0) {
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
	st->dump_started_ms = mono_ns() / 1000000;
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
	now_ms = mono_ns() / 1000000;
	if (st->dump_started_ms && now_ms - st->dump_started_ms < RESYNC_MIN_GAP_MS)
		wait = RESYNC_MIN_GAP_MS - (now_ms - st->dump_started_ms);
	st->host->timer_arm(st->soon, (uint64_t)wait, 0);
	st->soon_armed = true;
}

static void note_enobufs(struct nfct *st)
{
	int64_t now;

	st->enobufs_total++;
	st->host->counter_add(st->inst, st->c_enobufs, 1);
	request_resync(st);
	now = mono_ns();
	if (st->enobufs_warned_ns && now - st->enobufs_warned_ns < ENOBUFS_WARN_NS)
		return;
	st->enobufs_warned_ns = now;
	st->host->log(st->inst, SL_LOG_WARNING,
		      "losing events: socket receive buffer overrun (ENOBUFS), %llu time%s so far; "
		      "raise netlink_buffer%s",
		      (unsigned long long)st->enobufs_total, st->enobufs_total == 1 ? "" : "s",
		      st->tracking ? "; a table dump recovers the lost destroys"
				   : " (track is off: lost destroys are not recovered)");
}

/* ---- lifecycle ---- */

static int proto_number(const char *s)
{
	static const struct {
		const char *name;
		int num;
	} names[] = {
		{"tcp", IPPROTO_TCP},	 {"udp", IPPROTO_UDP},	   {"icmp", IPPROTO_ICMP},
		{"icmpv6", IPPROTO_ICMPV6}, {"ipv6-icmp", IPPROTO_ICMPV6}, {"sctp", IPPROTO_SCTP},
		{"dccp", IPPROTO_DCCP},	 {"udplite", IPPROTO_UDPLITE}, {"gre", IPPROTO_GRE},
		{"esp", IPPROTO_ESP},	 {"ah", IPPROTO_AH},
	};
	char *end;
	long v;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(s, names[i].name) == 0)
			return names[i].num;
	v = strtol(s, &end, 10);
	if (end == s || *end || v < 0 || v > 255)
		return -1;
	return (int)v;
}

static int nfct_configure(const struct sl_host *host, struct sl_instance *inst, const void *config,
			  void **state)
{
	const struct nfct_cfg *cfg = config;
	struct nfct *st;

	st = calloc(1, sizeof(*st));
	if (!st) {
		host->config_error(inst, NULL, "out of memory");
		return -1;
	}
	st->host = host;
	st->inst = inst;
	st->cfg = cfg;
	st->ev_fd = st->dump_fd = -1;
	st->t.free_head = NIL;
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
		int p = proto_number(cfg->protocols.v[i]);

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
	st->c_enobufs = host->counter_new(inst, "enobufs");
	st->c_malformed = host->counter_new(inst, "malformed");
	st->c_resyncs = host->counter_new(inst, "resyncs");
	st->c_recovered = host->counter_new(inst, "recovered");
	st->c_track_full = host->counter_new(inst, "track_full");
	*state = st;
	return 0;
fail:
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

	st->ev_buf = malloc(RX_BUFSIZE);
	st->dump_buf = malloc(RX_BUFSIZE);
	if (!st->ev_buf || !st->dump_buf) {
		st->host->log(st->inst, SL_LOG_ERR, "out of memory");
		return -1;
	}
	st->ev_nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
	if (!st->ev_nl || mnl_socket_bind(st->ev_nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "netlink socket: %s", strerror(errno));
		return -1;
	}
	st->ev_fd = mnl_socket_get_fd(st->ev_nl);
	sl_nl_set_rcvbuf(st->host, st->inst, st->ev_fd, st->cfg->netlink_buffer);
	if (st->cfg->reliable &&
	    (mnl_socket_setsockopt(st->ev_nl, NETLINK_BROADCAST_ERROR, &on, sizeof(on)) < 0 ||
	     mnl_socket_setsockopt(st->ev_nl, NETLINK_NO_ENOBUFS, &on, sizeof(on)) < 0)) {
		st->host->log(st->inst, SL_LOG_ERR, "reliable: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		int g = groups[i].group;

		if (!(st->sub_mask & groups[i].ev))
			continue;
		if (mnl_socket_setsockopt(st->ev_nl, NETLINK_ADD_MEMBERSHIP, &g, sizeof(g)) < 0) {
			st->host->log(st->inst, SL_LOG_ERR,
				      "cannot subscribe to conntrack events: %s (CAP_NET_ADMIN? is "
				      "nf_conntrack_netlink available?)", strerror(errno));
			return -1;
		}
	}
	check_sysctls(st);
	if (st->host->watch_fd(st->inst, st->ev_fd, EPOLLIN, ev_readable, st) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot watch the netlink socket: %s",
			      strerror(errno));
		return -1;
	}
	st->ev_watching = true;
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
	st->host->log(st->inst, SL_LOG_INFO, "conntrack events:%s%s%s%s%s",
		      st->emit_mask & SL_CT_EVENT_NEW ? " new" : "",
		      st->emit_mask & SL_CT_EVENT_UPDATE ? " update" : "",
		      st->emit_mask & SL_CT_EVENT_DESTROY ? " destroy" : "",
		      st->cfg->reliable ? ", reliable" : "",
		      st->tracking ? ", tracking connections" : "");
	return 0;
}

/* Shutdown: in reliable mode, connections missing at the last sweep are reported now. */
static int nfct_flush(void *state)
{
	struct nfct *st = state;
	struct sl_time now = real_now();
	struct sl_batch *b = NULL;

	for (uint32_t h = 0; h < st->t.nbuckets; h++) {
		uint32_t *link = &st->t.bucket[h];

		while (*link != NIL) {
			struct ct_entry *e = &st->t.e[*link];

			if (e->state == E_MISSING) {
				emit_recovered(st, &b, e, &now);
				ct_remove(&st->t, e, link);
				continue;
			}
			link = &e->next;
		}
	}
	finish_batch(st, b);
	return 0;
}

static void nfct_stop(void *state)
{
	struct nfct *st = state;

	if (st->ev_watching)
		st->host->unwatch_fd(st->inst, st->ev_fd);
	if (st->dump_watching)
		st->host->unwatch_fd(st->inst, st->dump_fd);
	st->ev_watching = st->dump_watching = false;
	if (st->periodic)
		st->host->timer_disarm(st->periodic);
	if (st->soon)
		st->host->timer_disarm(st->soon);
	if (st->ev_nl)
		mnl_socket_close(st->ev_nl);
	if (st->dump_nl)
		mnl_socket_close(st->dump_nl);
	st->ev_nl = st->dump_nl = NULL;
	st->ev_fd = st->dump_fd = -1;
	st->dumping = false;
	free(st->ev_buf);
	free(st->dump_buf);
	st->ev_buf = st->dump_buf = NULL;
}

static void nfct_destroy(void *state)
{
	struct nfct *st = state;

	free(st->t.e);
	free(st->t.bucket);
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
