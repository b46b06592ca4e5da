/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nflog: packets logged by netfilter rules (`log group N` in nftables,
 * `-j NFLOG --nflog-group N` in iptables), read from a netlink socket.
 * Works for every family that logs to a group: ip, ip6, inet, arp, bridge,
 * netdev.
 *
 * Unlike ulogd2 it binds only its group: it never sends PF_UNBIND (which
 * would take the per-family default logger away from whoever has it) nor
 * PF_BIND (not needed by `log group`, whose rule names the logger).
 *
 * Reading: one large receive buffer; each wake-up receives datagrams until
 * EAGAIN (or a bound, for fairness: epoll is level-triggered, so the rest is
 * read on the next turn) and the records of a batch point into the buffer,
 * so packets are never copied.  The buffer is only reused after the batches
 * pointing into it were emitted.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnetfilter_log/libnetfilter_log.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "lost_count.h"
#include "netns_set.h"
#include "netns_spec.h"
#include "nflog_attrs.h"
#include "nflog_ct.h"
#include "nlsock.h"
#include "plugin_state.h"
#ifdef SLUICE_NFLOG_RULES
#include "nflog_rules.h"
#endif

/* Datagrams per wake-up before we let the event loop run again. */
#define MAX_DGRAMS_PER_WAKEUP 256
/* At exit, at most this many rounds of reading (a full 512 MiB socket buffer
 * of the smallest datagrams: 256 rounds of 256 datagrams of 8 KiB). */
#define FLUSH_MAX_WAKEUPS 256
/* Datagrams that fit in the receive buffer at once. */
#define BUFFER_DGRAMS 4

struct nflog_cfg {
	int64_t group;
	int64_t copy_range;
	uint64_t netlink_buffer;
	uint64_t nlbufsiz;
	int64_t qthreshold;	/* 0: not set, the kernel's default applies */
	uint64_t qtimeout;	/* ms; 0: not set, the kernel's default applies */
	bool seq;
	bool conntrack;
	bool rules;
	const char *netns;
};

struct nflog;

/*
 * One socket bound to the group: in sluice's own namespace, or one member
 * of `netns:` (each namespace has its own NFLOG groups, so one socket per
 * namespace).  The counters are the instance's, summed over its members.
 */
struct nflog_member {
	struct nflog *st;
	struct sl_nl_reader rd;	/* socket, buffer, enobufs and malformed */
	uint32_t portid;
	uint32_t cfg_seq;
	bool empty;		/* the last read ended on an empty socket */
	uint32_t seq_next;	/* next expected NFULA_SEQ (the kernel starts at 0) */
	struct sl_lost_count lc;	/* what c_lost says, and how */
	const char *label;	/* netns: the records' `netns` (the set's member); NULL: none */
	uint32_t label_len;
	uint64_t records;	/* netns: made from this member (relaxed atomics: /metrics reads) */
};

struct nflog {
	SL_STATE_HEAD(struct nflog_cfg);

	struct nflog_member own;	/* no netns: the one socket, in our namespace */
	struct sl_netns_set ns;		/* netns: the members (data: struct nflog_member) */
	bool has_ns;
	int rules_nsfd;		/* rules: true with netns: the namespace whose ruleset is read; -1 */
	bool stopping;		/* members left at stop: already flushed */
	int f_netns;		/* the `netns` field */
	int c_seq_lost, c_lost, c_enobufs, c_malformed;

	/* what the stacks below read (host subtree_reads()), as attributes to parse */
	uint64_t reads[SL_PRESENCE_WORDS];
	uint32_t attrs;
	bool ct_wanted;		/* the stacks below read ct_id */
	struct nflog_ct *ct;	/* conntrack: true; looks ids up without the kernel's glue */
#ifdef SLUICE_NFLOG_RULES
	struct nflog_rules *rules;	/* rules: true */
#endif
};

static const struct sl_option nflog_options[] = {
	SL_OPT_INT("group", struct nflog_cfg, group, SL_REQUIRED_EXCLUSIVE, 0, 65535,
		   "NFLOG group to bind (the N of `log group N`)"),
	SL_OPT_STR("netns", struct nflog_cfg, netns, SL_EXCLUSIVE(NULL),
		   "network namespaces to read instead of sluice's own: a name under /run/netns, "
		   "an absolute path (/proc/PID/ns/net), or a glob (/run/netns/tenant-*) watched "
		   "for namespaces that come and go; records carry `netns`"),
	SL_OPT_INT("copy_range", struct nflog_cfg, copy_range, "65535", 0, 65535,
		   "bytes of each packet to copy; 0: metadata only, no packet"),
	SL_OPT_SIZE("netlink_buffer", struct nflog_cfg, netlink_buffer, "8MiB", 64 * 1024,
		    512 * 1024 * 1024, "socket receive buffer (SO_RCVBUFFORCE, else SO_RCVBUF)"),
	SL_OPT_SIZE("nlbufsiz", struct nflog_cfg, nlbufsiz, "128KiB", 4096, 131072,
		    "kernel batch size (NFULA_CFG_NLBUFSIZ; the kernel caps it at 128KiB)"),
	SL_OPT_INT("qthreshold", struct nflog_cfg, qthreshold, NULL, 1, 4294967295LL,
		   "packets the kernel queues before sending them (unset: kernel default)"),
	SL_OPT_DURATION("qtimeout", struct nflog_cfg, qtimeout, NULL, 10, 3600 * 1000,
			"longest a packet waits in the kernel queue, 10ms steps (unset: kernel default, 1s)"),
	SL_OPT_BOOL("seq", struct nflog_cfg, seq, "true",
		    "ask for sequence numbers and count the events lost (seq_lost)"),
	SL_OPT_BOOL("conntrack", struct nflog_cfg, conntrack, "false",
		    "the conntrack id (ct_id) and state of each packet: from the kernel "
		    "(NFULNL_CFG_F_CONNTRACK), or, on a kernel without its glue, the id "
		    "looked up through ctnetlink"),
	SL_OPT_BOOL("rules", struct nflog_cfg, rules, "false",
		    "attribute each record to the nftables rule that logged it (rule_* fields), "
		    "from the ruleset, followed as it changes"),
	SL_OPT_END
};

static const struct sl_field_decl nflog_provides[] = {
	SL_NFLOG_PROVIDES,
	/* rules: true */
	{"rule_family", SL_T_STRING},
	{"rule_table", SL_T_STRING},
	{"rule_chain", SL_T_STRING},
	{"rule_handle", SL_T_U64},
	{"rule_comment", SL_T_STRING},
	{"rule_verdict", SL_T_STRING},
	{"netns", SL_T_STRING},	/* netns: the member's label */
	SL_FIELD_END
};

/* A batch handed on: conntrack ids looked up, then attributed with rules: true. */
static void emit(struct nflog *st, struct sl_batch *b)
{
	if (st->ct_wanted && nflog_ct_active(st->ct))
		nflog_ct_fill(st->ct, b);
#ifdef SLUICE_NFLOG_RULES
	if (st->rules)
		nflog_rules_attribute(st->rules, b);
#endif
	st->host->emit(st->inst, b);
}

/* ---- configuration of the kernel instance (start() only) ---- */

/* Wait for the ack of message `seq`: 0, or -errno. */
static int wait_ack(struct nflog_member *m, uint32_t seq)
{
	struct nflog *st = m->st;
	int64_t deadline = sl_clock_ns(CLOCK_MONOTONIC) + 5 * 1000000000LL;
	unsigned discarded = 0;

	for (;;) {
		struct pollfd pfd = {.fd = m->rd.fd, .events = POLLIN};
		struct nlmsghdr *nlh;
		int64_t left = deadline - sl_clock_ns(CLOCK_MONOTONIC);
		ssize_t got;
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(left / 1000000) + 1) < 0 && errno != EINTR)
			return -errno;
		got = recv(m->rd.fd, m->rd.buf, m->rd.bufsize, MSG_DONTWAIT);
		if (got < 0) {
			if (errno == ENOBUFS)
				m->rd.drops_pending = true;	/* lost: counted later */
			if (errno == EAGAIN || errno == EINTR || errno == ENOBUFS)
				continue;
			return -errno;
		}
		n = (int)got;
		for (nlh = (struct nlmsghdr *)m->rd.buf; sl_nlmsg_ok(nlh, n); nlh = mnl_nlmsg_next(nlh, &n)) {
			if (nlh->nlmsg_type == NLMSG_ERROR && nlh->nlmsg_seq == seq) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

				if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
					return -EPROTO;
				if (discarded)
					st->host->log(st->inst, SL_LOG_DEBUG,
						      "%u events arrived during setup and were not kept",
						      discarded);
				return e->error;
			}
			/* events logged while we configure: too early, not kept */
			if (nlh->nlmsg_type == (NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET))
				discarded++;
		}
	}
}

/* Send a config message built in the receive buffer and wait for its ack: 0 or -errno. */
static int send_cfg(struct nflog_member *m, struct nlmsghdr *nlh)
{
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++m->cfg_seq;
	if (mnl_socket_sendto(m->rd.nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	return wait_ack(m, nlh->nlmsg_seq);
}

static struct nlmsghdr *cfg_header(struct nflog_member *m)
{
	/* attribute padding is not written by libmnl: no stale bytes sent (valgrind) */
	memset(m->rd.buf, 0, 256);
	return nflog_nlmsg_put_header((char *)m->rd.buf, NFULNL_MSG_CONFIG, AF_UNSPEC,
				      (uint16_t)m->st->cfg->group);
}

/* One u32 setting of the kernel instance; `what` names its option in the error. */
static int set_u32(struct nflog_member *m, uint16_t attr, uint32_t value, const char *what)
{
	struct nflog *st = m->st;
	struct nlmsghdr *nlh = cfg_header(m);
	int err;

	mnl_attr_put_u32(nlh, attr, htonl(value));
	if ((err = send_cfg(m, nlh)) != 0) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: %s", what, strerror(-err));
		return -1;
	}
	return 0;
}

/*
 * NFULA_CFG_FLAGS: seq, conntrack.  A kernel without
 * CONFIG_NETFILTER_NETLINK_GLUE_CT refuses the conntrack flag
 * (EOPNOTSUPP): the ids are then looked up through ctnetlink (nflog_ct.h),
 * in sluice's own namespace only: a member in another namespace
 * (`netns:`) needs the kernel's glue.
 */
static int set_flags(struct nflog_member *m)
{
	struct nflog *st = m->st;
	const struct nflog_cfg *cfg = st->cfg;
	struct nlmsghdr *nlh;
	uint16_t flags = 0;
	int err;

	if (cfg->seq)
		flags |= NFULNL_CFG_F_SEQ | NFULNL_CFG_F_SEQ_GLOBAL;
	if (cfg->conntrack)
		flags |= NFULNL_CFG_F_CONNTRACK;
	if (!flags)
		return 0;
	nlh = cfg_header(m);
	mnl_attr_put_u16(nlh, NFULA_CFG_FLAGS, htons(flags));
	err = send_cfg(m, nlh);
	if (cfg->conntrack && err == -EOPNOTSUPP) {
		if (st->has_ns) {
			st->host->log(st->inst, SL_LOG_ERR,
				      "conntrack: with netns: needs the kernel's "
				      "CONFIG_NETFILTER_NETLINK_GLUE_CT (the ctnetlink lookup reads "
				      "sluice's own namespace only)");
			return -1;
		}
		if (nflog_ct_start(st->ct) < 0)
			return -1;
		flags &= (uint16_t)~NFULNL_CFG_F_CONNTRACK;
		err = 0;
		if (flags) {
			nlh = cfg_header(m);
			mnl_attr_put_u16(nlh, NFULA_CFG_FLAGS, htons(flags));
			err = send_cfg(m, nlh);
		}
	}
	if (err) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: %s", cfg->conntrack ? "seq/conntrack" : "seq",
			      strerror(-err));
		return -1;
	}
	return 0;
}

static int configure_kernel(struct nflog_member *m)
{
	struct nflog *st = m->st;
	const struct nflog_cfg *cfg = st->cfg;
	struct nlmsghdr *nlh;
	int err;

	nlh = cfg_header(m);
	nflog_attr_put_cfg_cmd(nlh, NFULNL_CFG_CMD_BIND);
	err = send_cfg(m, nlh);
	if (err == -EPERM || err == -EBUSY) {
		st->host->log(st->inst, SL_LOG_ERR,
			      "cannot bind NFLOG group %lld: %s (another process may have bound it: "
			      "ulogd, tcpdump -i nflog:%lld, another sluice; or CAP_NET_ADMIN is missing)",
			      (long long)cfg->group, strerror(-err), (long long)cfg->group);
		return -1;
	}
	if (err) {
		st->host->log(st->inst, SL_LOG_ERR, "cannot bind NFLOG group %lld: %s",
			      (long long)cfg->group, strerror(-err));
		return -1;
	}

	nlh = cfg_header(m);
	nflog_attr_put_cfg_mode(nlh, cfg->copy_range ? NFULNL_COPY_PACKET : NFULNL_COPY_META,
				(uint32_t)cfg->copy_range);
	if ((err = send_cfg(m, nlh)) != 0)
		goto fail_copy_range;

	if (set_u32(m, NFULA_CFG_NLBUFSIZ, (uint32_t)cfg->nlbufsiz, "nlbufsiz") < 0)
		return -1;
	if (cfg->qthreshold &&
	    set_u32(m, NFULA_CFG_QTHRESH, (uint32_t)cfg->qthreshold, "qthreshold") < 0)
		return -1;
	/* the kernel counts in 1/100 s */
	if (cfg->qtimeout &&
	    set_u32(m, NFULA_CFG_TIMEOUT, (uint32_t)((cfg->qtimeout + 9) / 10), "qtimeout") < 0)
		return -1;

	if (set_flags(m) < 0)
		return -1;
	return 0;

fail_copy_range:
	st->host->log(st->inst, SL_LOG_ERR, "copy_range: %s", strerror(-err));
	return -1;
}

/* ---- receiving ---- */

/*
 * lost_count.h says how `lost` is counted from seq_lost and the drops:
 * exact with qthreshold 1 (one event per datagram; a rule's
 * queue-threshold only lowers the instance's, see nfulnl_log_packet()).
 */
static void count_lost(struct nflog *st, uint64_t grew)
{
	if (grew)
		st->host->counter_add(st->inst, st->c_lost, grew);
}

static void check_seq(struct nflog_member *m, const struct sl_record *r)
{
	struct nflog *st = m->st;
	uint32_t seq, gap;

	if (!sl_has(r, SL_F_SEQ_LOCAL))
		return;
	seq = (uint32_t)r->v[SL_F_SEQ_LOCAL].u64;
	gap = seq - m->seq_next;
	/* a huge gap is a sequence going backwards: not a loss */
	if (gap && gap < 0x80000000u) {
		st->host->counter_add(st->inst, st->c_seq_lost, gap);
		count_lost(st, sl_lost_gap(&m->lc, gap));
		/* a cut at the next empty read: a later overrun then counts on top */
		m->rd.drops_pending = true;
	}
	m->seq_next = seq + 1;
}

/* One wake-up's reading: the instance and the batch being filled. */
struct nflog_rx {
	struct nflog *st;
	struct nflog_member *m;
	struct sl_batch *b;
	uint32_t attrs;		/* sl_nflog_parse_some() */
	uint64_t n;		/* records made */
};

/*
 * The attributes the stacks below read, with NFULA_SEQ when seq_lost is
 * counted.  The core rewrites the set at a reload (between wake-ups):
 * compared with the copy, not recomputed, on each wake-up.
 */
static uint32_t wanted_attrs(struct nflog *st)
{
	const uint64_t *reads;

	if (!SL_HOST_HAS(st->host, subtree_reads)) {
		st->ct_wanted = true;
		return SL_NFLOG_ATTRS_ALL;
	}
	reads = st->host->subtree_reads(st->inst);
	if (memcmp(reads, st->reads, sizeof(st->reads)) != 0 || !st->attrs) {
		memcpy(st->reads, reads, sizeof(st->reads));
		st->attrs = sl_nflog_attrs_for(reads);
		if (st->attrs != SL_NFLOG_ATTRS_ALL)
			st->attrs |= (st->cfg->seq ? (uint32_t)1 << NFULA_SEQ : 0) |
				     /* the key of the rule: hook and prefix; its bytes */
				     (st->cfg->rules ? (uint32_t)1 << NFULA_PACKET_HDR |
							       (uint32_t)1 << NFULA_PREFIX |
							       (uint32_t)1 << NFULA_PAYLOAD : 0) |
				     1u;	/* NFULA_UNSPEC, nothing: marks the set as made */
		st->ct_wanted = (st->attrs >> NFULA_CT) & 1;
		/* ct_id without the kernel's glue: from the packet's tuple */
		if (st->ct_wanted && nflog_ct_active(st->ct))
			st->attrs |= (uint32_t)1 << NFULA_PACKET_HDR | (uint32_t)1 << NFULA_PAYLOAD;
	}
	return st->attrs;
}

/*
 * Turn one event into a record of the batch (emitting full batches).
 * Returns false when no batch could be had (out of memory).  Forced
 * inline into sl_nl_receive()'s loop: no call per message.
 */
static inline __attribute__((always_inline)) bool
parse_msg(void *arg, const struct nlmsghdr *nlh, const struct sl_time *rx)
{
	struct nflog_rx *x = arg;
	struct nflog *st = x->st;
	struct nflog_member *m = x->m;
	struct sl_batch **bp = &x->b;
	struct sl_record *r;

	if (nlh->nlmsg_type != (NFNL_SUBSYS_ULOG << 8 | NFULNL_MSG_PACKET))
		return true;	/* NLMSG_DONE closing a multipart batch, acks */
	if (!*bp && !(*bp = st->host->batch_get(st->inst)))
		return false;
	r = sl_batch_add(*bp);
	if (!r) {
		emit(st, *bp);
		if (!(*bp = st->host->batch_get(st->inst)))
			return false;
		r = sl_batch_add(*bp);
	}
	if (sl_nflog_parse_some(r, mnl_nlmsg_get_payload(nlh), nlh->nlmsg_len - NLMSG_HDRLEN, rx, 0,
				x->attrs) < 0) {
		sl_batch_unadd(*bp);
		sl_nl_malformed(&m->rd);
		return true;
	}
	if (st->cfg->seq)
		check_seq(m, r);
	if (m->label)
		sl_set_bytes(r, (sl_field)st->f_netns, m->label, m->label_len);
	x->n++;
	return true;
}

/* The buffer is about to be written over: records of the batch point into it. */
static void hand_on(void *arg)
{
	struct nflog_rx *x = arg;

	if (x->b && x->b->count) {
		emit(x->st, x->b);
		x->b = NULL;
	}
}

static void nflog_readable(void *state, int fd, uint32_t events)
{
	struct nflog_member *m = state;
	struct nflog *st = m->st;
	struct nflog_rx x = {.st = st, .m = m, .attrs = wanted_attrs(st)};

	(void)fd;
	(void)events;
	switch (sl_nl_receive(&m->rd, MAX_DGRAMS_PER_WAKEUP, parse_msg, hand_on, NULL, &x)) {
	case SL_NL_EMPTY:
		m->empty = true;
		if (m->rd.drops_fresh) {
			/* read just after this empty read: a cut */
			m->rd.drops_fresh = false;
			count_lost(st, sl_lost_drops(&m->lc, m->rd.drops, true));
		}
		break;
	case SL_NL_BOUND:
		m->empty = false;
		break;
	case SL_NL_STOPPED:
		st->host->log(st->inst, SL_LOG_ERR, "out of memory for a batch: events lost");
		st->host->error_add(st->inst, 1);
		m->empty = true;	/* nothing more can be read now */
		break;
	}
	if (x.b)
		emit(st, x.b);	/* empty or not */
	if (m->label && x.n)
		__atomic_fetch_add(&m->records, x.n, __ATOMIC_RELAXED);
#ifdef SLUICE_NFLOG_RULES
	if (st->rules && m->empty)
		nflog_rules_idle(st->rules);
#endif
}

/*
 * At exit: unbind the group, then read the socket empty.  Unbinding makes
 * the kernel send the batch it was still filling (up to qthreshold events,
 * or qtimeout of them) to our socket as it destroys the instance, in the
 * same system call, and log nothing more to us; so what we read then is
 * every event the group logged up to the unbind, and the outputs flushed
 * after us get it.  Without this, up to a second of events (the kernel's
 * default timeout) was lost at SIGTERM, counted nowhere.
 */
static void flush_member(struct nflog_member *m)
{
	struct nflog *st = m->st;
	union {
		char buf[256];
		struct nlmsghdr align;
	} msg = {{0}};
	struct nlmsghdr *nlh;

	if (!m->rd.nl)
		return;
	nlh = nflog_nlmsg_put_header(msg.buf, NFULNL_MSG_CONFIG, AF_UNSPEC, (uint16_t)st->cfg->group);
	nflog_attr_put_cfg_cmd(nlh, NFULNL_CFG_CMD_UNBIND);
	nlh->nlmsg_seq = ++m->cfg_seq;	/* no ack wanted: an error still comes back, and is skipped */
	if (mnl_socket_sendto(m->rd.nl, nlh, nlh->nlmsg_len) < 0)
		st->host->log(st->inst, SL_LOG_WARNING, "cannot unbind NFLOG group %lld: %s",
			      (long long)st->cfg->group, strerror(errno));
	/* Bounded in case the unbind failed and events keep coming. */
	for (unsigned i = 0; i < FLUSH_MAX_WAKEUPS; i++) {
		nflog_readable(m, m->rd.fd, EPOLLIN);
		if (m->empty)
			break;
	}
	/* every drop, even one whose ENOBUFS was not read (nothing comes after: no cut) */
	if (sl_nl_drops_read(&m->rd) == 0) {
		m->rd.drops_fresh = false;
		count_lost(st, sl_lost_drops(&m->lc, m->rd.drops, false));
	}
}

static int nflog_flush(void *state)
{
	struct nflog *st = state;

	if (!st->has_ns) {
		flush_member(&st->own);
		return 0;
	}
	for (struct sl_netns_member *nm = st->ns.members; nm; nm = nm->next)
		if (nm->data)
			flush_member(nm->data);
	return 0;
}

/* ---- lifecycle ---- */

static void member_init(struct nflog *st, struct nflog_member *m)
{
	memset(m, 0, sizeof(*m));
	m->st = st;
	sl_nl_reader_init(&m->rd, st->host, st->inst);
	m->rd.enobufs_hint = " (lost counts the events)";
	m->rd.c_enobufs = st->c_enobufs;
	m->rd.c_malformed = st->c_malformed;
}

/*
 * Open the member's socket (in the namespace of nsfd; -1: ours), bind the
 * group and watch it: 0, or -1 logged (the socket closed).
 */
static int member_open(struct nflog_member *m, int nsfd)
{
	struct nflog *st = m->st;

	/*
	 * A kernel batch can fill its skb beyond nlbufsiz (allocations are
	 * rounded up to a power of two), and one packet of copy_range bytes
	 * may need more than nlbufsiz: keep room for either.
	 */
	m->rd.maxdg = 2 * st->cfg->nlbufsiz + 128 * 1024;
	m->rd.bufsize = BUFFER_DGRAMS * m->rd.maxdg;
	if (sl_nl_open_in(&m->rd, st->cfg->netlink_buffer, nsfd) < 0)
		goto fail;
	m->portid = mnl_socket_get_portid(m->rd.nl);
#ifdef SLUICE_NFLOG_RULES
	/*
	 * Before the bind: every packet we get is logged after the listing,
	 * by its generation or by one whose change is notified after it.
	 */
	if (st->rules && nsfd >= 0 &&
	    (st->rules_nsfd = fcntl(nsfd, F_DUPFD_CLOEXEC, 0)) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "rules: %s", strerror(errno));
		goto fail;
	}
	if (st->rules && nflog_rules_start(st->rules, m->rd.fd, st->rules_nsfd) < 0)
		goto fail;
#endif
	if (configure_kernel(m) < 0 || sl_nl_watch(&m->rd, nflog_readable, m) < 0)
		goto fail;
	return 0;
fail:
	sl_nl_close(&m->rd);
	return -1;
}

/* netns: a member found: its socket, made in its namespace (netns_set.h). */
static void *member_join(void *arg, struct sl_netns_member *nm, int nsfd)
{
	struct nflog *st = arg;
	struct nflog_member *m = malloc(sizeof(*m));

	if (!m) {
		st->host->log(st->inst, SL_LOG_ERR, "netns %s: out of memory", nm->path);
		return NULL;
	}
	member_init(st, m);
	m->label = nm->label;
	m->label_len = (uint32_t)nm->label_len;
	if (member_open(m, nsfd) < 0) {
		st->host->log(st->inst, SL_LOG_ERR, "netns %s: NFLOG group %lld not bound", nm->path,
			      (long long)st->cfg->group);
		st->host->error_add(st->inst, 1);
		free(m);
		return NULL;
	}
	return m;
}

/* netns: a member gone (or the instance stopping): what is queued is read first. */
static void member_leave(void *arg, struct sl_netns_member *nm)
{
	struct nflog_member *m = nm->data;
	struct nflog *st = arg;

	if (!st->stopping)
		flush_member(m);
	sl_nl_close(&m->rd);
	free(m);
}

static int nflog_configure(const struct sl_host *host, struct sl_instance *inst,
			   const void *config, void **state)
{
	struct nflog *st = sl_state_new(struct nflog, host, inst, config);

	if (!st)
		return -1;
	st->c_enobufs = host->counter_new(inst, "enobufs");
	st->c_seq_lost = host->counter_new(inst, "seq_lost");
	st->c_malformed = host->counter_new(inst, "malformed");
	st->c_lost = host->counter_new(inst, "lost");
	if (st->cfg->conntrack &&
	    !(st->ct = nflog_ct_new(host, inst, st->cfg->qtimeout ? st->cfg->qtimeout : 1000))) {
		free(st);
		return -1;
	}
	member_init(st, &st->own);
	st->rules_nsfd = -1;
	if (st->cfg->netns) {
		const char *why;

		if (sl_netns_spec_check(st->cfg->netns, &why) < 0) {
			host->config_error(inst, "netns", "%s", why);
			nflog_ct_free(st->ct);
			free(st);
			return -1;
		}
		if (st->cfg->rules &&
		    sl_netns_spec_check(st->cfg->netns, &why) == SL_NETNS_GLOB) {
			host->config_error(inst, "rules",
					   "not with a netns glob (each namespace has its own "
					   "ruleset): name one namespace per instance");
			nflog_ct_free(st->ct);
			free(st);
			return -1;
		}
		if (sl_netns_set_init(&st->ns, host, inst, st->cfg->netns, member_join,
				      member_leave, st) < 0) {
			nflog_ct_free(st->ct);
			free(st);
			return -1;
		}
		st->has_ns = true;
		st->f_netns = host->field_id(inst, "netns");
	}
	if (st->cfg->rules) {
#ifdef SLUICE_NFLOG_RULES
		/* the kernel sends a queued packet after its flush timeout at the latest */
		if (!(st->rules = nflog_rules_new(host, inst, (uint16_t)st->cfg->group,
						  st->cfg->qtimeout ? st->cfg->qtimeout : 1000))) {
			nflog_ct_free(st->ct);
			free(st);
			return -1;
		}
#else
		host->config_error(inst, "rules",
				   "this sluice was built without libnftables (SLUICE_WITH_NFTRACE=OFF)");
		nflog_ct_free(st->ct);
		free(st);
		return -1;
#endif
	}
	*state = st;
	return 0;
}

/* /metrics with netns: each member's records, labelled with its namespace. */
struct series_out {
	sl_series_put put;
	void *out;
};

static void put_member(void *ctx, const struct sl_netns_member *nm)
{
	static const char *const names[] = {"netns"};
	const struct series_out *o = ctx;
	const struct nflog_member *m = nm->data;
	char label[256];
	const char *labels[] = {label};
	struct sl_series s = {
		.family = "sluice_netns_records_total",
		.help = "Records an input with netns made in each of its namespaces.",
		.names = names,
		.labels = labels,
		.nlabels = 1,
	};

	snprintf(label, sizeof(label), "%.*s", (int)nm->label_len, nm->label);
	s.value = __atomic_load_n(&m->records, __ATOMIC_RELAXED);
	o->put(o->out, &s);
}

static void series(void *ctx, sl_series_put put, void *out)
{
	struct nflog *st = ctx;
	struct series_out o = {put, out};

	sl_netns_set_each(&st->ns, put_member, &o);
}

static int nflog_start(void *state)
{
	struct nflog *st = state;

	if (st->has_ns) {
		if (sl_netns_set_start(&st->ns) < 0)
			return -1;
		/* with rules, the per-rule series (netns-labelled) are the instance's */
		if (!st->rules && SL_HOST_HAS(st->host, series_source))
			st->host->series_source(st->inst, series, st);
	} else if (member_open(&st->own, -1) < 0) {
		return -1;
	}
	st->host->log(st->inst, SL_LOG_INFO,
		      "bound NFLOG group %lld (copy_range %lld, nlbufsiz %llu%s%s%s%s%s)",
		      (long long)st->cfg->group, (long long)st->cfg->copy_range,
		      (unsigned long long)st->cfg->nlbufsiz, st->cfg->seq ? ", seq" : "",
		      st->cfg->conntrack ? ", conntrack" : "", st->cfg->rules ? ", rules" : "",
		      st->has_ns ? ", netns " : "", st->has_ns ? st->cfg->netns : "");
	return 0;
}

static void nflog_stop(void *state)
{
	struct nflog *st = state;

	/* closing the socket destroys the kernel instance: no UNBIND needed */
	st->stopping = true;
	if (st->has_ns && !st->rules && SL_HOST_HAS(st->host, series_source))
		st->host->series_source(st->inst, NULL, NULL);
	if (st->has_ns)
		sl_netns_set_stop(&st->ns);
	st->stopping = false;
	sl_nl_close(&st->own.rd);
	nflog_ct_stop(st->ct);
#ifdef SLUICE_NFLOG_RULES
	nflog_rules_stop(st->rules);
#endif
	if (st->rules_nsfd >= 0)
		close(st->rules_nsfd);
	st->rules_nsfd = -1;
}

static void nflog_destroy(void *state)
{
	struct nflog *st = state;

	if (!st)
		return;
	nflog_ct_free(st->ct);
	if (st->has_ns)
		sl_netns_set_free(&st->ns);
#ifdef SLUICE_NFLOG_RULES
	nflog_rules_free(st->rules);
#endif
	free(st);
}

static const struct sl_plugin nflog_plugin = {
	SL_PLUGIN_HEADER,
	.kind = SL_KIND_INPUT,
	.name = "nflog",
	.description = "packets logged by netfilter rules to an NFLOG group (log group N)",
	.config_size = sizeof(struct nflog_cfg),
	.options = nflog_options,
	.provides = nflog_provides,
	.configure = nflog_configure,
	.start = nflog_start,
	.flush = nflog_flush,
	.stop = nflog_stop,
	.destroy = nflog_destroy,
};

SLUICE_PLUGIN(nflog_plugin)
