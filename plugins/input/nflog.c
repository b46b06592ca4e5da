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
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnetfilter_log/libnetfilter_log.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>

#include <sluice/plugin.h>

#include "clock.h"
#include "lost_count.h"
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
};

struct nflog {
	SL_STATE_HEAD(struct nflog_cfg);

	struct sl_nl_reader rd;	/* socket, buffer, enobufs and malformed */
	uint32_t portid;
	uint32_t cfg_seq;

	int c_seq_lost, c_lost;
	bool empty;		/* the last read ended on an empty socket */
	uint32_t seq_next;	/* next expected NFULA_SEQ (the kernel starts at 0) */
	struct sl_lost_count lc;	/* what c_lost says, and how */

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
static int wait_ack(struct nflog *st, uint32_t seq)
{
	int64_t deadline = sl_clock_ns(CLOCK_MONOTONIC) + 5 * 1000000000LL;
	unsigned discarded = 0;

	for (;;) {
		struct pollfd pfd = {.fd = st->rd.fd, .events = POLLIN};
		struct nlmsghdr *nlh;
		int64_t left = deadline - sl_clock_ns(CLOCK_MONOTONIC);
		ssize_t got;
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)(left / 1000000) + 1) < 0 && errno != EINTR)
			return -errno;
		got = recv(st->rd.fd, st->rd.buf, st->rd.bufsize, MSG_DONTWAIT);
		if (got < 0) {
			if (errno == ENOBUFS)
				st->rd.drops_pending = true;	/* lost: counted later */
			if (errno == EAGAIN || errno == EINTR || errno == ENOBUFS)
				continue;
			return -errno;
		}
		n = (int)got;
		for (nlh = (struct nlmsghdr *)st->rd.buf; sl_nlmsg_ok(nlh, n); nlh = mnl_nlmsg_next(nlh, &n)) {
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
static int send_cfg(struct nflog *st, struct nlmsghdr *nlh)
{
	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = ++st->cfg_seq;
	if (mnl_socket_sendto(st->rd.nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	return wait_ack(st, nlh->nlmsg_seq);
}

static struct nlmsghdr *cfg_header(struct nflog *st)
{
	return nflog_nlmsg_put_header((char *)st->rd.buf, NFULNL_MSG_CONFIG, AF_UNSPEC,
				      (uint16_t)st->cfg->group);
}

/* One u32 setting of the kernel instance; `what` names its option in the error. */
static int set_u32(struct nflog *st, uint16_t attr, uint32_t value, const char *what)
{
	struct nlmsghdr *nlh = cfg_header(st);
	int err;

	mnl_attr_put_u32(nlh, attr, htonl(value));
	if ((err = send_cfg(st, nlh)) != 0) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: %s", what, strerror(-err));
		return -1;
	}
	return 0;
}

/*
 * NFULA_CFG_FLAGS: seq, conntrack.  A kernel without
 * CONFIG_NETFILTER_NETLINK_GLUE_CT refuses the conntrack flag
 * (EOPNOTSUPP): the ids are then looked up through ctnetlink (nflog_ct.h).
 */
static int set_flags(struct nflog *st)
{
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
	nlh = cfg_header(st);
	mnl_attr_put_u16(nlh, NFULA_CFG_FLAGS, htons(flags));
	err = send_cfg(st, nlh);
	if (cfg->conntrack && err == -EOPNOTSUPP) {
		if (nflog_ct_start(st->ct) < 0)
			return -1;
		flags &= (uint16_t)~NFULNL_CFG_F_CONNTRACK;
		err = 0;
		if (flags) {
			nlh = cfg_header(st);
			mnl_attr_put_u16(nlh, NFULA_CFG_FLAGS, htons(flags));
			err = send_cfg(st, nlh);
		}
	}
	if (err) {
		st->host->log(st->inst, SL_LOG_ERR, "%s: %s", cfg->conntrack ? "seq/conntrack" : "seq",
			      strerror(-err));
		return -1;
	}
	return 0;
}

static int configure_kernel(struct nflog *st)
{
	const struct nflog_cfg *cfg = st->cfg;
	struct nlmsghdr *nlh;
	int err;

	nlh = cfg_header(st);
	nflog_attr_put_cfg_cmd(nlh, NFULNL_CFG_CMD_BIND);
	err = send_cfg(st, nlh);
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

	nlh = cfg_header(st);
	nflog_attr_put_cfg_mode(nlh, cfg->copy_range ? NFULNL_COPY_PACKET : NFULNL_COPY_META,
				(uint32_t)cfg->copy_range);
	if ((err = send_cfg(st, nlh)) != 0)
		goto fail_copy_range;

	if (set_u32(st, NFULA_CFG_NLBUFSIZ, (uint32_t)cfg->nlbufsiz, "nlbufsiz") < 0)
		return -1;
	if (cfg->qthreshold &&
	    set_u32(st, NFULA_CFG_QTHRESH, (uint32_t)cfg->qthreshold, "qthreshold") < 0)
		return -1;
	/* the kernel counts in 1/100 s */
	if (cfg->qtimeout &&
	    set_u32(st, NFULA_CFG_TIMEOUT, (uint32_t)((cfg->qtimeout + 9) / 10), "qtimeout") < 0)
		return -1;

	if (set_flags(st) < 0)
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

static void check_seq(struct nflog *st, const struct sl_record *r)
{
	uint32_t seq, gap;

	if (!sl_has(r, SL_F_SEQ_LOCAL))
		return;
	seq = (uint32_t)r->v[SL_F_SEQ_LOCAL].u64;
	gap = seq - st->seq_next;
	/* a huge gap is a sequence going backwards: not a loss */
	if (gap && gap < 0x80000000u) {
		st->host->counter_add(st->inst, st->c_seq_lost, gap);
		count_lost(st, sl_lost_gap(&st->lc, gap));
		/* a cut at the next empty read: a later overrun then counts on top */
		st->rd.drops_pending = true;
	}
	st->seq_next = seq + 1;
}

/* One wake-up's reading: the instance and the batch being filled. */
struct nflog_rx {
	struct nflog *st;
	struct sl_batch *b;
	uint32_t attrs;		/* sl_nflog_parse_some() */
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
		sl_nl_malformed(&st->rd);
		return true;
	}
	if (st->cfg->seq)
		check_seq(st, r);
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
	struct nflog *st = state;
	struct nflog_rx x = {.st = st, .attrs = wanted_attrs(st)};

	(void)fd;
	(void)events;
	switch (sl_nl_receive(&st->rd, MAX_DGRAMS_PER_WAKEUP, parse_msg, hand_on, NULL, &x)) {
	case SL_NL_EMPTY:
		st->empty = true;
		if (st->rd.drops_fresh) {
			/* read just after this empty read: a cut */
			st->rd.drops_fresh = false;
			count_lost(st, sl_lost_drops(&st->lc, st->rd.drops, true));
		}
		break;
	case SL_NL_BOUND:
		st->empty = false;
		break;
	case SL_NL_STOPPED:
		st->host->log(st->inst, SL_LOG_ERR, "out of memory for a batch: events lost");
		st->host->error_add(st->inst, 1);
		st->empty = true;	/* nothing more can be read now */
		break;
	}
	if (x.b)
		emit(st, x.b);	/* empty or not */
#ifdef SLUICE_NFLOG_RULES
	if (st->rules && st->empty)
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
static int nflog_flush(void *state)
{
	struct nflog *st = state;
	union {
		char buf[256];
		struct nlmsghdr align;
	} msg;
	struct nlmsghdr *nlh;

	if (!st->rd.nl)
		return 0;
	nlh = nflog_nlmsg_put_header(msg.buf, NFULNL_MSG_CONFIG, AF_UNSPEC, (uint16_t)st->cfg->group);
	nflog_attr_put_cfg_cmd(nlh, NFULNL_CFG_CMD_UNBIND);
	nlh->nlmsg_seq = ++st->cfg_seq;	/* no ack wanted: an error still comes back, and is skipped */
	if (mnl_socket_sendto(st->rd.nl, nlh, nlh->nlmsg_len) < 0)
		st->host->log(st->inst, SL_LOG_WARNING, "cannot unbind NFLOG group %lld: %s",
			      (long long)st->cfg->group, strerror(errno));
	/* Bounded in case the unbind failed and events keep coming. */
	for (unsigned i = 0; i < FLUSH_MAX_WAKEUPS; i++) {
		nflog_readable(st, st->rd.fd, EPOLLIN);
		if (st->empty)
			break;
	}
	/* every drop, even one whose ENOBUFS was not read (nothing comes after: no cut) */
	if (sl_nl_drops_read(&st->rd) == 0) {
		st->rd.drops_fresh = false;
		count_lost(st, sl_lost_drops(&st->lc, st->rd.drops, false));
	}
	return 0;
}

/* ---- lifecycle ---- */

static int nflog_configure(const struct sl_host *host, struct sl_instance *inst,
			   const void *config, void **state)
{
	struct nflog *st = sl_state_new(struct nflog, host, inst, config);

	if (!st)
		return -1;
	sl_nl_reader_init(&st->rd, host, inst);
	st->rd.enobufs_hint = " (lost counts the events)";
	st->rd.c_enobufs = host->counter_new(inst, "enobufs");
	st->c_seq_lost = host->counter_new(inst, "seq_lost");
	st->rd.c_malformed = host->counter_new(inst, "malformed");
	st->c_lost = host->counter_new(inst, "lost");
	if (st->cfg->conntrack &&
	    !(st->ct = nflog_ct_new(host, inst, st->cfg->qtimeout ? st->cfg->qtimeout : 1000))) {
		free(st);
		return -1;
	}
	if (st->cfg->rules) {
#ifdef SLUICE_NFLOG_RULES
		/* the kernel sends a queued packet after its flush timeout at the latest */
		if (!(st->rules = nflog_rules_new(host, inst, (uint16_t)st->cfg->group,
						  st->cfg->qtimeout ? st->cfg->qtimeout : 1000))) {
			free(st);
			return -1;
		}
#else
		host->config_error(inst, "rules",
				   "this sluice was built without libnftables (SLUICE_WITH_NFTRACE=OFF)");
		free(st);
		return -1;
#endif
	}
	*state = st;
	return 0;
}

static int nflog_start(void *state)
{
	struct nflog *st = state;

	/*
	 * A kernel batch can fill its skb beyond nlbufsiz (allocations are
	 * rounded up to a power of two), and one packet of copy_range bytes
	 * may need more than nlbufsiz: keep room for either.
	 */
	st->rd.maxdg = 2 * st->cfg->nlbufsiz + 128 * 1024;
	st->rd.bufsize = BUFFER_DGRAMS * st->rd.maxdg;
	if (sl_nl_open(&st->rd, st->cfg->netlink_buffer) < 0)
		return -1;
	st->portid = mnl_socket_get_portid(st->rd.nl);
#ifdef SLUICE_NFLOG_RULES
	/*
	 * Before the bind: every packet we get is logged after the listing,
	 * by its generation or by one whose change is notified after it.
	 */
	if (st->rules && nflog_rules_start(st->rules, st->rd.fd) < 0)
		return -1;
#endif
	if (configure_kernel(st) < 0 || sl_nl_watch(&st->rd, nflog_readable, st) < 0)
		return -1;
	st->host->log(st->inst, SL_LOG_INFO,
		      "bound NFLOG group %lld (copy_range %lld, nlbufsiz %llu%s%s%s)",
		      (long long)st->cfg->group, (long long)st->cfg->copy_range,
		      (unsigned long long)st->cfg->nlbufsiz, st->cfg->seq ? ", seq" : "",
		      st->cfg->conntrack ? ", conntrack" : "", st->cfg->rules ? ", rules" : "");
	return 0;
}

static void nflog_stop(void *state)
{
	struct nflog *st = state;

	/* closing the socket destroys the kernel instance: no UNBIND needed */
	sl_nl_close(&st->rd);
	nflog_ct_stop(st->ct);
#ifdef SLUICE_NFLOG_RULES
	nflog_rules_stop(st->rules);
#endif
}

static void nflog_destroy(void *state)
{
	struct nflog *st = state;

	if (!st)
		return;
	nflog_ct_free(st->ct);
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
