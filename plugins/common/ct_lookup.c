/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A logged packet's connection through ctnetlink: tuples, request, reply, cache (ct_lookup.h). */
#include "ct_lookup.h"

#include <errno.h>
#include <string.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "nlsock.h"

_Static_assert(sizeof(struct sl_ct_tuple) == 40, "ct_lookup: a tuple has no hidden padding");

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * The ICMP / ICMPv6 query types conntrack tracks (the kernel's invmap in
 * nf_conntrack_proto_icmp{,v6}.c) -> the type of the other direction + 1;
 * 0: not tracked as a connection of its own.
 */
static unsigned icmp_inverse(uint8_t proto, uint8_t type)
{
	if (proto == IPPROTO_ICMP) {
		switch (type) {
		case 8: return 0 + 1;	/* echo -> echo reply */
		case 0: return 8 + 1;
		case 13: return 14 + 1;	/* timestamp */
		case 14: return 13 + 1;
		case 15: return 16 + 1;	/* information */
		case 16: return 15 + 1;
		case 17: return 18 + 1;	/* address mask */
		case 18: return 17 + 1;
		}
		return 0;
	}
	switch (type) {
	case 128: return 129 + 1;	/* echo request -> echo reply */
	case 129: return 128 + 1;
	case 139: return 140 + 1;	/* node information query */
	case 140: return 139 + 1;
	}
	return 0;
}

static int packet_tuple(struct sl_ct_tuple *t, const uint8_t *pkt, size_t len, unsigned *flags,
			bool inner);

/* An ICMP / ICMPv6 error: the type numbers conntrack relates to the quoted packet's connection. */
static bool icmp_is_error(uint8_t proto, uint8_t type)
{
	if (proto == IPPROTO_ICMP)
		return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
	return type >= 1 && type <= 4;
}

/*
 * The L4 part of the tuple from the `len` bytes at l4: 0, or -1.  An
 * ICMP error's tuple is the quoted packet's (the connection conntrack
 * relates it to), unless `inner` (an error quoted in an error).
 */
static int l4_tuple(struct sl_ct_tuple *t, const uint8_t *l4, size_t len, unsigned *flags,
		    bool inner)
{
	switch (t->proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
		if (len < 4)
			return -1;
		t->kind = SL_CT_K_PORTS;
		t->sport = rd16(l4);
		t->dport = rd16(l4 + 2);
		/* flags: SYN 0x02, ACK 0x10 */
		if (t->proto == IPPROTO_TCP && len >= 14 && (l4[13] & 0x12) == 0x02)
			*flags |= SL_CT_PKT_SYN;
		return 0;
	case IPPROTO_GRE:
		/* version 0: keys 0; PPTP's (version 1) source key is the kernel's keymap: unknown */
		if (len < 4 || (l4[1] & 7) != 0)
			return -1;
		t->kind = SL_CT_K_PORTS;
		return 0;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if ((t->proto == IPPROTO_ICMP) != (t->family == AF_INET))
			return -1;	/* ICMP in IPv6 or ICMPv6 in IPv4: generic, but rare: skip */
		if (len >= 8 && !inner && icmp_is_error(t->proto, l4[0])) {
			uint8_t family = t->family;

			if (packet_tuple(t, l4 + 8, len - 8, flags, true) < 0 || t->family != family)
				return -1;
			*flags = SL_CT_PKT_RELATED;
			return 0;
		}
		if (len < 8 || !icmp_inverse(t->proto, l4[0]))
			return -1;
		t->kind = SL_CT_K_ICMP;
		t->sport = rd16(l4 + 4);
		t->dport = (uint16_t)(l4[0] << 8 | l4[1]);
		return 0;
	default:
		t->kind = SL_CT_K_NONE;
		return 0;
	}
}

static int ipv6_tuple(struct sl_ct_tuple *t, const uint8_t *pkt, size_t len, unsigned *flags,
		      bool inner)
{
	size_t off = 40;
	uint8_t next;

	if (len < 40)
		return -1;
	t->family = AF_INET6;
	memcpy(t->src, pkt + 8, 16);
	memcpy(t->dst, pkt + 24, 16);
	next = pkt[6];
	/* extension headers, as ipv6_skip_exthdr() steps over them */
	for (unsigned i = 0; i < 16; i++) {
		size_t hl;

		switch (next) {
		case 0:		/* hop-by-hop */
		case 43:	/* routing */
		case 60:	/* destination options */
			if (len - off < 2)
				return -1;
			hl = ((size_t)pkt[off + 1] + 1) * 8;
			break;
		case 51:	/* AH */
			if (len - off < 2)
				return -1;
			hl = ((size_t)pkt[off + 1] + 2) * 4;
			break;
		case 44:	/* fragment: only the first has the L4 header */
			if (len - off < 8 || (rd16(pkt + off + 2) & 0xfff8))
				return -1;
			hl = 8;
			break;
		default:
			t->proto = next;
			return l4_tuple(t, pkt + off, len - off, flags, inner);
		}
		next = pkt[off];
		if (hl > len - off)
			return -1;
		off += hl;
	}
	return -1;
}

int sl_ct_tuple_from_packet(struct sl_ct_tuple *t, const uint8_t *pkt, size_t len,
			    unsigned *flags)
{
	return packet_tuple(t, pkt, len, flags, false);
}

static int packet_tuple(struct sl_ct_tuple *t, const uint8_t *pkt, size_t len, unsigned *flags,
			bool inner)
{
	size_t ihl;

	memset(t, 0, sizeof(*t));
	*flags = 0;
	if (len < 1)
		return -1;
	if (pkt[0] >> 4 == 6)
		return ipv6_tuple(t, pkt, len, flags, inner);
	if (pkt[0] >> 4 != 4 || len < 20)
		return -1;
	ihl = (size_t)(pkt[0] & 15) * 4;
	if (ihl < 20 || ihl > len || (rd16(pkt + 6) & 0x1fff))
		return -1;
	t->family = AF_INET;
	t->proto = pkt[9];
	memcpy(t->src, pkt + 12, 4);
	memcpy(t->dst, pkt + 16, 4);
	return l4_tuple(t, pkt + ihl, len - ihl, flags, inner);
}

void sl_ct_tuple_invert(struct sl_ct_tuple *t)
{
	uint8_t a[16];
	uint16_t p = t->sport;

	memcpy(a, t->src, 16);
	memcpy(t->src, t->dst, 16);
	memcpy(t->dst, a, 16);
	if (t->kind == SL_CT_K_ICMP) {
		unsigned inv = icmp_inverse(t->proto, (uint8_t)(t->dport >> 8));

		if (inv)
			t->dport = (uint16_t)((inv - 1) << 8 | (t->dport & 0xff));
		return;	/* the id stays */
	}
	t->sport = t->dport;
	t->dport = p;
}

struct nlmsghdr *sl_ct_get_put(void *buf, const struct sl_ct_tuple *t, uint32_t seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	struct nlattr *tuple, *nest;
	bool v4 = t->family == AF_INET;

	nlh->nlmsg_type = NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_GET;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = t->family;
	nfg->version = NFNETLINK_V0;
	nfg->res_id = 0;

	tuple = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
	nest = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	mnl_attr_put(nlh, v4 ? CTA_IP_V4_SRC : CTA_IP_V6_SRC, v4 ? 4 : 16, t->src);
	mnl_attr_put(nlh, v4 ? CTA_IP_V4_DST : CTA_IP_V6_DST, v4 ? 4 : 16, t->dst);
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, t->proto);
	if (t->kind == SL_CT_K_PORTS) {
		mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(t->sport));
		mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(t->dport));
	} else if (t->kind == SL_CT_K_ICMP) {
		mnl_attr_put_u16(nlh, v4 ? CTA_PROTO_ICMP_ID : CTA_PROTO_ICMPV6_ID, htons(t->sport));
		mnl_attr_put_u8(nlh, v4 ? CTA_PROTO_ICMP_TYPE : CTA_PROTO_ICMPV6_TYPE,
				(uint8_t)(t->dport >> 8));
		mnl_attr_put_u8(nlh, v4 ? CTA_PROTO_ICMP_CODE : CTA_PROTO_ICMPV6_CODE,
				(uint8_t)t->dport);
	}
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_nest_end(nlh, tuple);
	return nlh;
}

int sl_ct_get_reply(const void *buf, size_t len, uint32_t seq, struct sl_ct_info *ci)
{
	int n = len > 65536 ? 65536 : (int)len;
	const struct nlmsghdr *nlh;

	for (nlh = buf; sl_nlmsg_ok(nlh, n); nlh = mnl_nlmsg_next(nlh, &n)) {
		if (nlh->nlmsg_seq != seq)
			continue;
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)) || e->error > 0 ||
			    e->error < -4095) {
				errno = EPROTO;
				return -1;
			}
			if (e->error == -ENOENT)
				return 0;
			/* an ack without error: no connection came before it */
			errno = e->error ? -e->error : EPROTO;
			return -1;
		}
		if (nlh->nlmsg_type == (NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_NEW)) {
			if (sl_ct_parse(nlh, ci) < 0) {
				errno = EPROTO;
				return -1;
			}
			return 1;
		}
	}
	errno = EAGAIN;
	return -1;
}

/* One direction of ci as a tuple: 0, or -1. */
static int tuple_of(struct sl_ct_tuple *t, const struct sl_ct_info *ci, const uint8_t src[16],
		    const uint8_t dst[16], uint16_t sport, uint16_t dport, bool ports)
{
	memset(t, 0, sizeof(*t));
	t->family = ci->family;
	t->proto = ci->proto;
	if (ci->family == AF_INET) {
		memcpy(t->src, src + 12, 4);	/* stored mapped */
		memcpy(t->dst, dst + 12, 4);
	} else if (ci->family == AF_INET6) {
		memcpy(t->src, src, 16);
		memcpy(t->dst, dst, 16);
	} else {
		return -1;
	}
	switch (ci->proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_UDPLITE:
	case IPPROTO_SCTP:
	case IPPROTO_DCCP:
	case IPPROTO_GRE:
		t->kind = SL_CT_K_PORTS;
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		t->kind = SL_CT_K_ICMP;
		break;
	default:
		return 0;
	}
	if (!ports)
		return -1;
	t->sport = sport;
	t->dport = dport;
	return 0;
}

int sl_ct_tuples_of(const struct sl_ct_info *ci, struct sl_ct_tuple *orig,
		    struct sl_ct_tuple *reply)
{
	if (!(ci->have & SL_CI_REPLY))
		return -1;
	if (tuple_of(orig, ci, ci->osrc, ci->odst, ci->osport, ci->odport,
		     ci->have & SL_CI_PORTS) < 0)
		return -1;
	return tuple_of(reply, ci, ci->rsrc, ci->rdst, ci->rsport, ci->rdport,
			ci->have & SL_CI_RPORTS);
}

static unsigned slot_of(const struct sl_ct_tuple *t)
{
	uint32_t w[10], h = 2166136261u;

	memcpy(w, t, sizeof(w));
	for (unsigned i = 0; i < 10; i++) {
		h ^= w[i];
		h *= 16777619u;
		h ^= h >> 15;
	}
	return h % SL_CT_CACHE_SLOTS;
}

bool sl_ct_cache_get(const struct sl_ct_cache *c, const struct sl_ct_tuple *t, int64_t now_ns,
		     uint32_t *id)
{
	const struct sl_ct_cache_slot *s = &c->slot[slot_of(t)];

	if (s->expires_ns <= now_ns || memcmp(&s->t, t, sizeof(*t)) != 0)
		return false;
	*id = s->id;
	return true;
}

void sl_ct_cache_put(struct sl_ct_cache *c, const struct sl_ct_tuple *t, uint32_t id,
		     int64_t expires_ns)
{
	struct sl_ct_cache_slot *s = &c->slot[slot_of(t)];

	s->t = *t;
	s->id = id;
	s->expires_ns = expires_ns;
}
