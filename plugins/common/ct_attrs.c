/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ctnetlink conntrack messages -> connection -> record (see ct_attrs.h). */
#include <endian.h>
#include <string.h>

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include <sluice/plugin.h>

#include "ct_attrs.h"

struct tb {
	const struct nlattr **a;
	unsigned max;
};

static int tb_cb(const struct nlattr *attr, void *data)
{
	struct tb *t = data;
	unsigned type = mnl_attr_get_type(attr);

	/* attributes newer than our headers are skipped, not errors */
	if (type <= t->max)
		t->a[type] = attr;
	return MNL_CB_OK;
}

static bool parse_nested(const struct nlattr *nest, const struct nlattr **a, unsigned max)
{
	struct tb t = {a, max};

	memset(a, 0, (max + 1) * sizeof(*a));
	if (mnl_attr_get_payload_len(nest) < 4)
		return false;
	return mnl_attr_parse_nested(nest, tb_cb, &t) >= 0;
}

static bool get_u8(const struct nlattr *a, uint8_t *v)
{
	if (!a || mnl_attr_get_payload_len(a) < 1)
		return false;
	*v = mnl_attr_get_u8(a);
	return true;
}

static bool get_be16(const struct nlattr *a, uint16_t *v)
{
	if (!a || mnl_attr_get_payload_len(a) < 2)
		return false;
	*v = ntohs(mnl_attr_get_u16(a));
	return true;
}

static bool get_be32(const struct nlattr *a, uint32_t *v)
{
	if (!a || mnl_attr_get_payload_len(a) < 4)
		return false;
	*v = ntohl(mnl_attr_get_u32(a));
	return true;
}

static bool get_be64(const struct nlattr *a, uint64_t *v)
{
	uint64_t x;

	if (!a || mnl_attr_get_payload_len(a) < 8)
		return false;
	memcpy(&x, mnl_attr_get_payload(a), 8);	/* 4-byte aligned only */
	*v = be64toh(x);
	return true;
}

static void map4(uint8_t out[16], const void *a4)
{
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, a4, 4);
}

/*
 * A tuple: addresses, protocol, ports (or ICMP id and type<<8|code), zone.
 * Returns false when it is malformed; *ports tells whether it had ports.
 */
static bool parse_tuple(const struct nlattr *nest, uint8_t src[16], uint8_t dst[16], uint8_t *proto,
			uint16_t *sport, uint16_t *dport, bool *ports, uint16_t *zone, bool *has_zone)
{
	const struct nlattr *t[CTA_TUPLE_MAX + 1], *ip[CTA_IP_MAX + 1], *pr[CTA_PROTO_MAX + 1];
	uint8_t type, code;
	uint16_t id;

	if (!parse_nested(nest, t, CTA_TUPLE_MAX) || !t[CTA_TUPLE_IP] || !t[CTA_TUPLE_PROTO])
		return false;
	if (!parse_nested(t[CTA_TUPLE_IP], ip, CTA_IP_MAX))
		return false;
	if (ip[CTA_IP_V4_SRC] && ip[CTA_IP_V4_DST]) {
		if (mnl_attr_get_payload_len(ip[CTA_IP_V4_SRC]) < 4 ||
		    mnl_attr_get_payload_len(ip[CTA_IP_V4_DST]) < 4)
			return false;
		map4(src, mnl_attr_get_payload(ip[CTA_IP_V4_SRC]));
		map4(dst, mnl_attr_get_payload(ip[CTA_IP_V4_DST]));
	} else if (ip[CTA_IP_V6_SRC] && ip[CTA_IP_V6_DST]) {
		if (mnl_attr_get_payload_len(ip[CTA_IP_V6_SRC]) < 16 ||
		    mnl_attr_get_payload_len(ip[CTA_IP_V6_DST]) < 16)
			return false;
		memcpy(src, mnl_attr_get_payload(ip[CTA_IP_V6_SRC]), 16);
		memcpy(dst, mnl_attr_get_payload(ip[CTA_IP_V6_DST]), 16);
	} else {
		return false;
	}
	if (!parse_nested(t[CTA_TUPLE_PROTO], pr, CTA_PROTO_MAX) || !get_u8(pr[CTA_PROTO_NUM], proto))
		return false;
	*ports = false;
	if (get_be16(pr[CTA_PROTO_SRC_PORT], sport) && get_be16(pr[CTA_PROTO_DST_PORT], dport)) {
		*ports = true;
	} else if (get_be16(pr[CTA_PROTO_ICMP_ID], &id) && get_u8(pr[CTA_PROTO_ICMP_TYPE], &type) &&
		   get_u8(pr[CTA_PROTO_ICMP_CODE], &code)) {
		*sport = id;
		*dport = (uint16_t)(type << 8 | code);
		*ports = true;
	} else if (get_be16(pr[CTA_PROTO_ICMPV6_ID], &id) && get_u8(pr[CTA_PROTO_ICMPV6_TYPE], &type) &&
		   get_u8(pr[CTA_PROTO_ICMPV6_CODE], &code)) {
		*sport = id;
		*dport = (uint16_t)(type << 8 | code);
		*ports = true;
	}
	if (zone && get_be16(t[CTA_TUPLE_ZONE], zone))
		*has_zone = true;
	return true;
}

static bool parse_counters(const struct nlattr *nest, uint64_t *pkts, uint64_t *bytes)
{
	const struct nlattr *c[CTA_COUNTERS_MAX + 1];
	uint32_t p32, b32;

	if (!parse_nested(nest, c, CTA_COUNTERS_MAX))
		return false;
	if (get_be64(c[CTA_COUNTERS_PACKETS], pkts) && get_be64(c[CTA_COUNTERS_BYTES], bytes))
		return true;
	if (get_be32(c[CTA_COUNTERS32_PACKETS], &p32) && get_be32(c[CTA_COUNTERS32_BYTES], &b32)) {
		*pkts = p32;
		*bytes = b32;
		return true;
	}
	return false;
}

int sl_ct_parse(const struct nlmsghdr *nlh, struct sl_ct_info *ci)
{
	const struct nlattr *a[CTA_MAX + 1];
	const struct nfgenmsg *nfg;
	struct tb t = {a, CTA_MAX};
	bool ports, zone = false;
	uint8_t rproto;

	/*
	 * The kernel pads every message to 4 bytes.  libmnl walks attributes up
	 * to the padded end, which for an unpadded length lies past the message
	 * (a fuzzed cut read 3 bytes beyond it: fuzz/corpus/ct/crash-unaligned-len).
	 */
	if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*nfg)) || nlh->nlmsg_len % 4)
		return -1;
	nfg = mnl_nlmsg_get_payload(nlh);
	memset(a, 0, sizeof(a));
	if (mnl_attr_parse(nlh, sizeof(*nfg), tb_cb, &t) < 0)
		return -1;
	memset(ci, 0, sizeof(*ci));
	ci->family = nfg->nfgen_family;
	if (!a[CTA_TUPLE_ORIG] ||
	    !parse_tuple(a[CTA_TUPLE_ORIG], ci->osrc, ci->odst, &ci->proto, &ci->osport, &ci->odport,
			 &ports, &ci->zone, &zone))
		return -1;
	if (ports)
		ci->have |= SL_CI_PORTS;
	if (a[CTA_TUPLE_REPLY]) {
		if (!parse_tuple(a[CTA_TUPLE_REPLY], ci->rsrc, ci->rdst, &rproto, &ci->rsport,
				 &ci->rdport, &ports, NULL, NULL))
			return -1;
		ci->have |= SL_CI_REPLY | (ports ? SL_CI_RPORTS : 0);
	}
	if (get_be16(a[CTA_ZONE], &ci->zone))
		zone = true;
	if (zone)
		ci->have |= SL_CI_ZONE;
	if (get_be32(a[CTA_ID], &ci->id))
		ci->have |= SL_CI_ID;
	if (get_be32(a[CTA_MARK], &ci->mark))
		ci->have |= SL_CI_MARK;
	if (get_be32(a[CTA_STATUS], &ci->status))
		ci->have |= SL_CI_STATUS;
	if (get_be32(a[CTA_TIMEOUT], &ci->timeout))
		ci->have |= SL_CI_TIMEOUT;
	if (a[CTA_COUNTERS_ORIG] && parse_counters(a[CTA_COUNTERS_ORIG], &ci->opkts, &ci->obytes))
		ci->have |= SL_CI_OCOUNT;
	if (a[CTA_COUNTERS_REPLY] && parse_counters(a[CTA_COUNTERS_REPLY], &ci->rpkts, &ci->rbytes))
		ci->have |= SL_CI_RCOUNT;
	if (a[CTA_TIMESTAMP]) {
		const struct nlattr *ts[CTA_TIMESTAMP_MAX + 1];

		if (!parse_nested(a[CTA_TIMESTAMP], ts, CTA_TIMESTAMP_MAX))
			return -1;
		if (get_be64(ts[CTA_TIMESTAMP_START], &ci->start_ns) && ci->start_ns)
			ci->have |= SL_CI_START;
		if (get_be64(ts[CTA_TIMESTAMP_STOP], &ci->stop_ns) && ci->stop_ns)
			ci->have |= SL_CI_STOP;
	}
	if (a[CTA_PROTOINFO]) {
		const struct nlattr *pi[CTA_PROTOINFO_MAX + 1], *tcp[CTA_PROTOINFO_TCP_MAX + 1];

		if (parse_nested(a[CTA_PROTOINFO], pi, CTA_PROTOINFO_MAX) && pi[CTA_PROTOINFO_TCP] &&
		    parse_nested(pi[CTA_PROTOINFO_TCP], tcp, CTA_PROTOINFO_TCP_MAX) &&
		    get_u8(tcp[CTA_PROTOINFO_TCP_STATE], &ci->tcp_state))
			ci->have |= SL_CI_TCPSTATE;
	}
	return 0;
}

/* ---- records ---- */

static void ns_time(struct sl_record *r, sl_field f, uint64_t ns)
{
	sl_set_time(r, f, (int64_t)(ns / 1000000000u), (uint32_t)(ns % 1000000000u));
}

void sl_ct_fill(struct sl_record *r, const struct sl_ct_info *ci, uint32_t event,
		const struct sl_time *now, int timeout_field)
{
	sl_set_u64(r, SL_F_CT_EVENT, event);
	sl_set_time(r, SL_F_TIMESTAMP, now->sec, now->nsec);
	sl_set_u64(r, SL_F_FAMILY, ci->family);
	sl_set_u64(r, SL_F_IP_PROTO, ci->proto);
	sl_set_ip6(r, SL_F_ORIG_SRC, ci->osrc);
	sl_set_ip6(r, SL_F_ORIG_DST, ci->odst);
	if (ci->have & SL_CI_PORTS) {
		sl_set_u64(r, SL_F_ORIG_SPORT, ci->osport);
		sl_set_u64(r, SL_F_ORIG_DPORT, ci->odport);
	}
	if (ci->have & SL_CI_REPLY) {
		sl_set_ip6(r, SL_F_REPLY_SRC, ci->rsrc);
		sl_set_ip6(r, SL_F_REPLY_DST, ci->rdst);
	}
	if (ci->have & SL_CI_RPORTS) {
		sl_set_u64(r, SL_F_REPLY_SPORT, ci->rsport);
		sl_set_u64(r, SL_F_REPLY_DPORT, ci->rdport);
	}
	if (ci->have & SL_CI_ID)
		sl_set_u64(r, SL_F_CT_ID, ci->id);
	if (ci->have & SL_CI_OCOUNT) {
		sl_set_u64(r, SL_F_ORIG_PACKETS, ci->opkts);
		sl_set_u64(r, SL_F_ORIG_BYTES, ci->obytes);
	}
	if (ci->have & SL_CI_RCOUNT) {
		sl_set_u64(r, SL_F_REPLY_PACKETS, ci->rpkts);
		sl_set_u64(r, SL_F_REPLY_BYTES, ci->rbytes);
	}
	if (ci->have & SL_CI_START)
		ns_time(r, SL_F_FLOW_START, ci->start_ns);
	if (ci->have & SL_CI_STOP)
		ns_time(r, SL_F_FLOW_END, ci->stop_ns);
	if (ci->have & SL_CI_MARK)
		sl_set_u64(r, SL_F_MARK, ci->mark);
	if (ci->have & SL_CI_ZONE)
		sl_set_u64(r, SL_F_CT_ZONE, ci->zone);
	if (ci->have & SL_CI_STATUS)
		sl_set_u64(r, SL_F_CT_STATUS, ci->status);
	if (ci->have & SL_CI_TCPSTATE)
		sl_set_u64(r, SL_F_TCP_STATE, ci->tcp_state);
	if (event == SL_CT_EVENT_DESTROY)
		sl_set_u64(r, SL_F_FLOW_END_REASON, SL_FLOW_END_DESTROY);
	if ((ci->have & SL_CI_TIMEOUT) && timeout_field >= 0)
		sl_set_u64(r, (sl_field)timeout_field, ci->timeout);
}
