/* SPDX-License-Identifier: GPL-2.0-or-later */
/* nflog's conntrack ids through ctnetlink when the kernel has no glue (nflog_ct.h). */
#include "nflog_ct.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "clock.h"
#include "ct_lookup.h"
#include "nlsock.h"

struct nflog_ct {
	const struct sl_host *host;
	struct sl_instance *inst;
	struct mnl_socket *nl;	/* NULL: not started (the kernel's glue is used) */
	int fd;
	struct mnl_socket *ev;	/* the destroy events; NULL: none */
	int ev_fd;
	uint32_t seq;
	int c_lookups, c_missing;
	bool warned;
	int64_t gone_ns;	/* how long a destroyed connection's tuples are kept */
	struct sl_ct_cache cache;	/* live connections found */
	struct sl_ct_cache gone;	/* connections destroyed: both tuples */
	union {
		uint8_t b[8192];	/* one reply: a conntrack message is a few hundred bytes */
		struct nlmsghdr align;
	} buf;
};

struct nflog_ct *nflog_ct_new(const struct sl_host *host, struct sl_instance *inst,
			      uint64_t flush_timeout_ms)
{
	struct nflog_ct *c = calloc(1, sizeof(*c));

	if (!c) {
		host->log(inst, SL_LOG_ERR, "out of memory");
		return NULL;
	}
	c->host = host;
	c->inst = inst;
	c->fd = c->ev_fd = -1;
	c->gone_ns = (int64_t)(flush_timeout_ms + 1000) * 1000000;
	c->c_lookups = host->counter_new(inst, "ct_lookups");
	c->c_missing = host->counter_new(inst, "ct_missing");
	return c;
}

/*
 * Ask for the connection of tuple t: 1 with *id, 0 when conntrack has none,
 * -1 with errno when the request failed.
 */
static int lookup(struct nflog_ct *c, const struct sl_ct_tuple *t, uint32_t *id)
{
	union {
		uint8_t b[SL_CT_GET_MAX];
		struct nlmsghdr align;
	} req;
	struct nlmsghdr *nlh = sl_ct_get_put(req.b, t, ++c->seq);
	struct sl_ct_info ci;

	if (mnl_socket_sendto(c->nl, nlh, nlh->nlmsg_len) < 0)
		return -1;
	/* the kernel answered within sendto(): the reply waits (after stale ones, if any) */
	for (;;) {
		int n = sl_nl_recv_reply(c->fd, c->buf.b, sizeof(c->buf.b)), rc;

		if (n == 0)
			errno = ETIMEDOUT;
		if (n <= 0)
			return -1;
		rc = sl_ct_get_reply(c->buf.b, (size_t)n, c->seq, &ci);
		if (rc < 0 && errno == EAGAIN)
			continue;
		if (rc <= 0)
			return rc;
		if (!(ci.have & SL_CI_ID))
			return 0;
		*id = ci.id;
		return 1;
	}
}

/*
 * The destroy events: a connection that ends before its packets are read
 * (a SYN answered by RST is destroyed at once) is found there.  Without
 * them (no permission, events off) only the lookups remain: warned.
 */
static void open_events(struct nflog_ct *c)
{
	int group = NFNLGRP_CONNTRACK_DESTROY;

	c->ev = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!c->ev || mnl_socket_bind(c->ev, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_setsockopt(c->ev, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0) {
		c->host->log(c->inst, SL_LOG_WARNING,
			     "conntrack: no destroy events (%s): packets of connections that end "
			     "before they are read get no ct_id", strerror(errno));
		if (c->ev)
			mnl_socket_close(c->ev);
		c->ev = NULL;
		return;
	}
	c->ev_fd = mnl_socket_get_fd(c->ev);
	sl_nl_set_rcvbuf(c->host, c->inst, c->ev_fd, 4 * 1024 * 1024);
}

/* Read the destroy events that came: both tuples of each into the gone cache. */
static void read_events(struct nflog_ct *c, int64_t now)
{
	/* bounded: the rest is read before the next batch */
	for (unsigned d = 0; c->ev && d < 256; d++) {
		int n = sl_nl_recv_reply(c->ev_fd, c->buf.b, sizeof(c->buf.b));
		const struct nlmsghdr *nlh;

		if (n < 0 && errno == ENOBUFS)
			continue;	/* events lost: their packets may go without ct_id */
		if (n <= 0)
			return;
		for (nlh = (const struct nlmsghdr *)c->buf.b; sl_nlmsg_ok(nlh, n);
		     nlh = mnl_nlmsg_next(nlh, &n)) {
			struct sl_ct_tuple o, r;
			struct sl_ct_info ci;

			if (nlh->nlmsg_type != (NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_DELETE) ||
			    sl_ct_parse(nlh, &ci) < 0 || !(ci.have & SL_CI_ID) ||
			    sl_ct_tuples_of(&ci, &o, &r) < 0)
				continue;
			sl_ct_cache_put(&c->gone, &o, ci.id, now + c->gone_ns);
			sl_ct_cache_put(&c->gone, &r, ci.id, now + c->gone_ns);
		}
	}
}

int nflog_ct_start(struct nflog_ct *c)
{
	/* a tuple no connection has: protocol 255, unspecified addresses */
	struct sl_ct_tuple probe = {.family = AF_INET, .proto = 255, .kind = SL_CT_K_NONE};
	uint32_t id;

	c->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (!c->nl || mnl_socket_bind(c->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		c->host->log(c->inst, SL_LOG_ERR, "conntrack: netlink socket for lookups: %s",
			     strerror(errno));
		return -1;
	}
	c->fd = mnl_socket_get_fd(c->nl);
	if (lookup(c, &probe, &id) < 0) {
		c->host->log(c->inst, SL_LOG_ERR,
			     "conntrack: the kernel gives no conntrack id with the packets (no "
			     "CONFIG_NETFILTER_NETLINK_GLUE_CT) and ctnetlink lookups fail: %s "
			     "(needs nf_conntrack_netlink and CAP_NET_ADMIN)",
			     strerror(errno));
		return -1;
	}
	open_events(c);
	c->host->log(c->inst, SL_LOG_INFO,
		     "conntrack: the kernel gives no conntrack id with the packets (no "
		     "CONFIG_NETFILTER_NETLINK_GLUE_CT): looked up through ctnetlink instead");
	return 0;
}

bool nflog_ct_active(const struct nflog_ct *c)
{
	return c && c->nl;
}

/* The packet tuple of record r: 0, or -1 when it has none to look up. */
static int record_tuple(const struct sl_record *r, struct sl_ct_tuple *t, unsigned *flags)
{
	const union sl_value *pkt = &r->v[SL_F_PACKET];

	if (!sl_has(r, SL_F_PACKET))
		return -1;
	if (!sl_has(r, SL_F_FAMILY) ||
	    (r->v[SL_F_FAMILY].u64 != NFPROTO_IPV4 && r->v[SL_F_FAMILY].u64 != NFPROTO_IPV6)) {
		/* bridge, netdev: IP only, by the ethertype */
		if (!sl_has(r, SL_F_HW_PROTOCOL) ||
		    (r->v[SL_F_HW_PROTOCOL].u64 != 0x0800 && r->v[SL_F_HW_PROTOCOL].u64 != 0x86dd))
			return -1;
	}
	return sl_ct_tuple_from_packet(t, pkt->bytes.ptr, pkt->bytes.len, flags);
}

/* The id of tuple t's connection, either direction or after NAT: 1, 0 none, -1 failed. */
static int find(struct nflog_ct *c, const struct sl_ct_tuple *t, uint32_t *id, uint64_t *lookups)
{
	struct sl_ct_tuple inv = *t;
	int rc;

	++*lookups;
	if ((rc = lookup(c, t, id)) != 0)
		return rc;
	/* rewritten by NAT: the other direction's tuple, inverted */
	sl_ct_tuple_invert(&inv);
	++*lookups;
	return lookup(c, &inv, id);
}

/*
 * A connection that ended since: by its destroy event, read now if it came
 * after the batch began; by the packet's tuple or, after NAT, its inverse.
 */
static bool gone(struct nflog_ct *c, const struct sl_ct_tuple *t, int64_t now, uint32_t *id)
{
	struct sl_ct_tuple inv = *t;

	read_events(c, now);
	if (sl_ct_cache_get(&c->gone, t, now, id))
		return true;
	sl_ct_tuple_invert(&inv);
	return sl_ct_cache_get(&c->gone, &inv, now, id);
}

void nflog_ct_fill(struct nflog_ct *c, struct sl_batch *b)
{
	int64_t now = sl_clock_ns(CLOCK_MONOTONIC);
	uint64_t lookups = 0, missing = 0;

	read_events(c, now);

	for (unsigned i = 0; i < b->count; i++) {
		struct sl_record *r = b->rec[i];
		struct sl_ct_tuple t;
		unsigned flags;
		uint32_t id;
		int rc;

		if (sl_has(r, SL_F_CT_ID))
			continue;	/* the kernel said */
		if (record_tuple(r, &t, &flags) < 0) {
			missing++;
			continue;
		}
		if ((flags & SL_CT_PKT_SYN) || !sl_ct_cache_get(&c->cache, &t, now, &id)) {
			rc = find(c, &t, &id, &lookups);
			if (rc < 0 && !c->warned) {
				c->warned = true;
				c->host->log(c->inst, SL_LOG_WARNING,
					     "conntrack: lookup failed: %s (counted in ct_missing; "
					     "warned once)", strerror(errno));
			}
			if (rc == 0 && gone(c, &t, now, &id))
				rc = 1;
			if (rc <= 0) {
				missing++;
				continue;
			}
			sl_ct_cache_put(&c->cache, &t, id, now + SL_NFLOG_CT_LIFETIME_MS * 1000000LL);
		}
		sl_set_u64(r, SL_F_CT_ID, id);
	}
	if (lookups)
		c->host->counter_add(c->inst, c->c_lookups, lookups);
	if (missing)
		c->host->counter_add(c->inst, c->c_missing, missing);
}

void nflog_ct_stop(struct nflog_ct *c)
{
	if (c && c->nl) {
		mnl_socket_close(c->nl);
		c->nl = NULL;
		c->fd = -1;
	}
	if (c && c->ev) {
		mnl_socket_close(c->ev);
		c->ev = NULL;
		c->ev_fd = -1;
	}
}

void nflog_ct_free(struct nflog_ct *c)
{
	nflog_ct_stop(c);
	free(c);
}
