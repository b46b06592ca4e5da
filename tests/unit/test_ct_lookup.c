/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nflog's conntrack lookups without the kernel's glue (plugins/common/
 * ct_lookup.c): the tuple of real packets (IPv4/IPv6 UDP, TCP SYN, ICMP
 * echo and reply, ICMPv6 behind an extension header, ICMP errors quoting
 * a packet), what has none (fragments, cuts, ARP, untracked ICMP); the
 * inverse tuple; the IPCTNL_MSG_CT_GET request read back by nfct's parser;
 * the replies (a connection, ENOENT, another error, a stale reply, a
 * malformed one); the tuples of a destroy event; the cache's hits, expiry
 * and collisions.  Every cut of every packet is tried (under ASan: no
 * read outside it).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <netinet/in.h>

#include "ct_lookup.h"
#include "check.h"

/* IPv4 10.0.0.1 -> 10.0.0.2, protocol p, then the L4 bytes */
static size_t ip4(uint8_t *b, uint8_t p, const uint8_t *l4, size_t n, uint16_t frag)
{
	static const uint8_t h[20] = {0x45, 0, 0, 0, 0, 1, 0, 0, 64, 0, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2};

	memcpy(b, h, 20);
	b[2] = (uint8_t)((20 + n) >> 8);
	b[3] = (uint8_t)(20 + n);
	b[6] = (uint8_t)(frag >> 8);
	b[7] = (uint8_t)frag;
	b[9] = p;
	memcpy(b + 20, l4, n);
	return 20 + n;
}

/* IPv6 fd00::1 -> fd00::2, next header nh, then the bytes after */
static size_t ip6(uint8_t *b, uint8_t nh, const uint8_t *rest, size_t n)
{
	memset(b, 0, 40);
	b[0] = 0x60;
	b[4] = (uint8_t)(n >> 8);
	b[5] = (uint8_t)n;
	b[6] = nh;
	b[7] = 64;
	b[8] = b[24] = 0xfd;
	b[23] = 1;
	b[39] = 2;
	memcpy(b + 40, rest, n);
	return 40 + n;
}

static const uint8_t a1[4] = {10, 0, 0, 1}, a2[4] = {10, 0, 0, 2};

/* every cut of the packet: a tuple only when the full one is; never a read outside */
static void cuts(const uint8_t *pkt, size_t len)
{
	for (size_t n = 0; n < len; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		struct sl_ct_tuple t;
		unsigned fl;

		memcpy(copy, pkt, n);
		(void)sl_ct_tuple_from_packet(&t, copy, n, &fl);
		free(copy);
	}
}

static void test_tuples(void)
{
	uint8_t b[256], l4[64];
	struct sl_ct_tuple t, u;
	unsigned fl;
	size_t n;

	/* UDP 1234 -> 53 */
	memcpy(l4, "\x04\xd2\x00\x35\x00\x08\x00\x00", 8);
	n = ip4(b, IPPROTO_UDP, l4, 8, 0);
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), 0);
	CHECK(t.family == AF_INET && t.proto == IPPROTO_UDP && t.kind == SL_CT_K_PORTS);
	CHECK(!memcmp(t.src, a1, 4) && !memcmp(t.dst, a2, 4));
	CHECK_EQ_U(t.sport, 1234);
	CHECK_EQ_U(t.dport, 53);
	CHECK_EQ_U(fl, 0);
	cuts(b, n);
	/* cut before the ports: none */
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, 23, &fl), -1);
	/* a later fragment: none; the first (MF, offset 0): the tuple */
	n = ip4(b, IPPROTO_UDP, l4, 8, 0x00b9);
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), -1);
	n = ip4(b, IPPROTO_UDP, l4, 8, 0x2000);
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), 0);

	/* TCP SYN, then SYN+ACK: only the first is flagged */
	memset(l4, 0, 20);
	memcpy(l4, "\x9c\x40\x00\x50", 4);
	l4[12] = 0x50;
	l4[13] = 0x02;
	n = ip4(b, IPPROTO_TCP, l4, 20, 0x4000);
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), 0);
	CHECK_EQ_U(fl, SL_CT_PKT_SYN);
	CHECK_EQ_U(t.sport, 40000);
	CHECK_EQ_U(t.dport, 80);
	l4[13] = 0x12;
	n = ip4(b, IPPROTO_TCP, l4, 20, 0x4000);
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), 0);
	CHECK_EQ_U(fl, 0);
	cuts(b, n);

	/* ICMP echo id 0x5199, and its inverse is the echo reply */
	memcpy(l4, "\x08\x00\x00\x00\x51\x99\x00\x01", 8);
	n = ip4(b, IPPROTO_ICMP, l4, 8, 0);
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), 0);
	CHECK(t.kind == SL_CT_K_ICMP);
	CHECK_EQ_U(t.sport, 0x5199);
	CHECK_EQ_U(t.dport, 8 << 8);
	u = t;
	sl_ct_tuple_invert(&u);
	CHECK(!memcmp(u.src, a2, 4) && !memcmp(u.dst, a1, 4));
	CHECK_EQ_U(u.sport, 0x5199);
	CHECK_EQ_U(u.dport, 0);
	sl_ct_tuple_invert(&u);
	CHECK(!memcmp(&u, &t, sizeof(t)));
	/* a router advertisement-like type conntrack does not track: none */
	l4[0] = 9;
	n = ip4(b, IPPROTO_ICMP, l4, 8, 0);
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), -1);

	/* port unreachable quoting the UDP datagram 10.0.0.1:1234 -> 10.0.0.2:53 */
	{
		uint8_t q[64], e[96];
		size_t qn;

		memcpy(l4, "\x04\xd2\x00\x35\x00\x08\x00\x00", 8);
		qn = ip4(q, IPPROTO_UDP, l4, 8, 0);
		memcpy(e, "\x03\x03\x00\x00\x00\x00\x00\x00", 8);
		memcpy(e + 8, q, qn);
		n = ip4(b, IPPROTO_ICMP, e, 8 + qn, 0);
		CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), 0);
		CHECK_EQ_U(fl, SL_CT_PKT_RELATED);
		CHECK(t.proto == IPPROTO_UDP && t.sport == 1234 && t.dport == 53);
		CHECK(!memcmp(t.src, a1, 4) && !memcmp(t.dst, a2, 4));
		cuts(b, n);
		/* an error quoting an error: none */
		memcpy(e + 8, b, n);
		n = ip4(b, IPPROTO_ICMP, e, 8 + n, 0);
		CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), -1);
	}

	/* IPv6: destination options (8 bytes), then an ICMPv6 echo request */
	memcpy(l4, "\x3a\x00\x01\x04\x00\x00\x00\x00", 8);
	memcpy(l4 + 8, "\x80\x00\x00\x00\x51\x99\x00\x02", 8);
	n = ip6(b, 60, l4, 16);
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), 0);
	CHECK(t.family == AF_INET6 && t.proto == IPPROTO_ICMPV6 && t.kind == SL_CT_K_ICMP);
	CHECK(t.src[0] == 0xfd && t.src[15] == 1 && t.dst[15] == 2);
	CHECK_EQ_U(t.dport, 128 << 8);
	sl_ct_tuple_invert(&t);
	CHECK_EQ_U(t.dport, 129 << 8);
	cuts(b, n);
	/* neighbour solicitation: not tracked */
	l4[8] = 135;
	n = ip6(b, 60, l4, 16);
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), -1);
	/* a fragment header with an offset: none */
	memcpy(l4, "\x11\x00\x00\x08\x00\x00\x00\x01", 8);
	n = ip6(b, 44, l4, 16);
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), -1);
	/* ESP: the protocol only */
	n = ip6(b, 50, l4, 16);
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), 0);
	CHECK(t.proto == 50 && t.kind == SL_CT_K_NONE && t.sport == 0);
	/* not IP */
	b[0] = 0x00;
	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, b, n, &fl), -1);
}

/* The GET request, read back by nfct's parser (as a CT_NEW message). */
static void test_request(void)
{
	union {
		uint8_t b[SL_CT_GET_MAX];
		struct nlmsghdr h;
	} m;
	uint8_t pkt[128], l4[8] = {0x04, 0xd2, 0x00, 0x35, 0, 8, 0, 0};
	struct sl_ct_tuple t;
	struct sl_ct_info ci;
	struct nlmsghdr *nlh;
	unsigned fl;
	size_t n = ip4(pkt, IPPROTO_UDP, l4, 8, 0);

	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, pkt, n, &fl), 0);
	nlh = sl_ct_get_put(m.b, &t, 42);
	CHECK_EQ_U(nlh->nlmsg_type, NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_GET);
	CHECK_EQ_U(nlh->nlmsg_seq, 42);
	CHECK(nlh->nlmsg_len <= SL_CT_GET_MAX);
	nlh->nlmsg_type = NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_NEW;
	CHECK_EQ_I(sl_ct_parse(nlh, &ci), 0);
	CHECK_EQ_U(ci.family, AF_INET);
	CHECK_EQ_U(ci.proto, IPPROTO_UDP);
	CHECK(!memcmp(ci.osrc + 12, a1, 4) && !memcmp(ci.odst + 12, a2, 4));
	CHECK(ci.osport == 1234 && ci.odport == 53 && (ci.have & SL_CI_PORTS));

	/* ICMPv6 echo: id, type, code */
	{
		uint8_t e[8] = {0x80, 0, 0, 0, 0x51, 0x99, 0, 1};

		n = ip6(pkt, IPPROTO_ICMPV6, e, 8);
		CHECK_EQ_I(sl_ct_tuple_from_packet(&t, pkt, n, &fl), 0);
		nlh = sl_ct_get_put(m.b, &t, 43);
		nlh->nlmsg_type = NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_NEW;
		CHECK_EQ_I(sl_ct_parse(nlh, &ci), 0);
		CHECK(ci.family == AF_INET6 && ci.proto == IPPROTO_ICMPV6);
		CHECK(ci.osport == 0x5199 && ci.odport == 128 << 8);
		CHECK(!memcmp(ci.osrc, t.src, 16) && !memcmp(ci.odst, t.dst, 16));
	}
}

/* A reply datagram: the connection of t (both tuples, id) with sequence seq, type type. */
static size_t conn_msg(uint8_t *buf, const struct sl_ct_tuple *t, uint32_t seq, uint16_t type,
		       uint32_t id)
{
	struct sl_ct_tuple r = *t;
	union {
		uint8_t b[SL_CT_GET_MAX];
		struct nlmsghdr h;
	} m;
	struct nlmsghdr *nlh = sl_ct_get_put(buf, t, seq), *rn;
	struct nlattr *a;

	/* the reply tuple: the request's orig tuple, inverted, renamed */
	sl_ct_tuple_invert(&r);
	rn = sl_ct_get_put(m.b, &r, seq);
	a = (struct nlattr *)((uint8_t *)mnl_nlmsg_get_payload(rn) + sizeof(struct nfgenmsg));
	a->nla_type = (a->nla_type & ~NLA_TYPE_MASK) | CTA_TUPLE_REPLY;
	memcpy(mnl_nlmsg_get_payload_tail(nlh), a, a->nla_len);
	nlh->nlmsg_len += MNL_ALIGN(a->nla_len);
	mnl_attr_put_u32(nlh, CTA_ID, htonl(id));
	nlh->nlmsg_type = type;
	return nlh->nlmsg_len;
}

static size_t err_msg(uint8_t *buf, uint32_t seq, int error)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

	nlh->nlmsg_type = NLMSG_ERROR;
	nlh->nlmsg_seq = seq;
	e->error = error;
	return nlh->nlmsg_len;
}

static void test_replies(void)
{
	union {
		uint8_t b[1024];
		struct nlmsghdr h;
	} d;
	uint8_t pkt[128], l4[8] = {0x04, 0xd2, 0x00, 0x35, 0, 8, 0, 0};
	struct sl_ct_tuple t, o, r;
	struct sl_ct_info ci;
	unsigned fl;
	size_t n = ip4(pkt, IPPROTO_UDP, l4, 8, 0), len;

	CHECK_EQ_I(sl_ct_tuple_from_packet(&t, pkt, n, &fl), 0);
	len = conn_msg(d.b, &t, 7, NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_NEW, 0xdeadbeef);
	CHECK_EQ_I(sl_ct_get_reply(d.b, len, 7, &ci), 1);
	CHECK(ci.have & SL_CI_ID);
	CHECK_EQ_U(ci.id, 0xdeadbeef);
	/* another request's: read on */
	errno = 0;
	CHECK_EQ_I(sl_ct_get_reply(d.b, len, 8, &ci), -1);
	CHECK_EQ_I(errno, EAGAIN);
	/* the destroy event's tuples: the packet's, and the other direction's */
	CHECK_EQ_I(sl_ct_parse(&d.h, &ci), 0);
	CHECK_EQ_I(sl_ct_tuples_of(&ci, &o, &r), 0);
	CHECK(!memcmp(&o, &t, sizeof(t)));
	sl_ct_tuple_invert(&r);
	CHECK(!memcmp(&r, &t, sizeof(t)));
	ci.have &= ~SL_CI_REPLY;
	CHECK_EQ_I(sl_ct_tuples_of(&ci, &o, &r), -1);
	/* every cut: never a read outside, never a connection from a cut */
	for (size_t k = 0; k < len; k++) {
		uint8_t *copy = malloc(k ? k : 1);

		memcpy(copy, d.b, k);
		CHECK(sl_ct_get_reply(copy, k, 7, &ci) != 1 || k >= len, "cut at %zu", k);
		free(copy);
	}

	len = err_msg(d.b, 9, -ENOENT);
	CHECK_EQ_I(sl_ct_get_reply(d.b, len, 9, &ci), 0);
	len = err_msg(d.b, 9, -EPERM);
	CHECK_EQ_I(sl_ct_get_reply(d.b, len, 9, &ci), -1);
	CHECK_EQ_I(errno, EPERM);
	len = err_msg(d.b, 9, 5);	/* a positive error: malformed */
	CHECK_EQ_I(sl_ct_get_reply(d.b, len, 9, &ci), -1);
	CHECK_EQ_I(errno, EPROTO);
	len = err_msg(d.b, 9, 0);	/* an ack, no connection before it */
	CHECK_EQ_I(sl_ct_get_reply(d.b, len, 9, &ci), -1);
	CHECK_EQ_I(errno, EPROTO);
}

static void test_cache(void)
{
	static struct sl_ct_cache c;
	struct sl_ct_tuple t, u;
	uint32_t id = 0;
	unsigned other = 0;

	memset(&t, 0, sizeof(t));
	t.family = AF_INET;
	t.proto = IPPROTO_UDP;
	t.kind = SL_CT_K_PORTS;
	t.sport = 1;
	CHECK(!sl_ct_cache_get(&c, &t, 1, &id));
	sl_ct_cache_put(&c, &t, 77, 1000);
	CHECK(sl_ct_cache_get(&c, &t, 999, &id) && id == 77);
	CHECK(!sl_ct_cache_get(&c, &t, 1000, &id));	/* expired */
	u = t;
	sl_ct_tuple_invert(&u);
	CHECK(!sl_ct_cache_get(&c, &u, 1, &id));	/* the other direction is another key */
	/* fill with many tuples: a colliding one takes the slot, never another's id */
	for (unsigned i = 0; i < 4 * SL_CT_CACHE_SLOTS; i++) {
		u = t;
		u.sport = (uint16_t)(i + 2);
		sl_ct_cache_put(&c, &u, 1000 + i, 5000);
	}
	for (unsigned i = 0; i < 4 * SL_CT_CACHE_SLOTS; i++) {
		u = t;
		u.sport = (uint16_t)(i + 2);
		if (sl_ct_cache_get(&c, &u, 1, &id)) {
			CHECK_EQ_U(id, 1000 + i);
			other++;
		}
	}
	/* the hash spreads: most slots hold one of the last tuples */
	CHECK(other > SL_CT_CACHE_SLOTS / 2, "%u of %u slots hit", other, SL_CT_CACHE_SLOTS);
}

int main(void)
{
	test_tuples();
	test_request();
	test_replies();
	test_cache();
	return check_summary("test_ct_lookup");
}
