/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NFLOG event -> record (see nflog_attrs.h).  One parser for the netlink
 * socket and for NFLOG pcaps: libnetfilter_log's parser only takes a
 * struct nlmsghdr, and two parsers would sooner or later disagree.
 */
#include "nflog_attrs.h"

#include <stdbool.h>
#include <string.h>

#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_log.h>

#include "nl_tlv.h"

/* CTA_ID of the nested conntrack attributes. */
static int ct_attr(void *ctx, unsigned type, const uint8_t *v, size_t n)
{
	if (type == CTA_ID && n >= 4)
		sl_set_u64(ctx, SL_F_CT_ID, sl_rd_be32(v));
	return 0;
}

/*
 * NFULA_VLAN (netdev and bridge families): the tag the receive path took
 * out of the frame into skb metadata, so it is in neither NFULA_L2HDR nor
 * the payload.  The outer VLAN id goes to vlan_id.
 */
static int vlan_attr(void *ctx, unsigned type, const uint8_t *v, size_t n)
{
	if (type == NFULA_VLAN_TCI && n >= 2)
		sl_set_u64(ctx, SL_F_VLAN_ID, sl_rd_be16(v) & 0x0fff);
	return 0;
}

/*
 * Presence bits are collected in two words and stored once at the end:
 * a store of a value into r->v[] may alias r->present[] for the compiler,
 * so sl_set_*() reloaded and stored the bitmap for every field.  Every
 * field set here has an id below 128.
 */
#define SET(f) ((f) < 64 ? (void)(p0 |= (uint64_t)1 << (f)) : (void)(p1 |= (uint64_t)1 << ((f) - 64)))
#define SET_U64(f, val) (r->v[f].u64 = (val), SET(f))
#define SET_BYTES(f, p, n) (r->v[f].bytes.ptr = (p), r->v[f].bytes.len = (uint32_t)(n), SET(f))
_Static_assert(SL_F_NFLOG_GROUP < 128 && SL_F_VLAN_ID < 64, "nflog_attrs: fields in two presence words");
_Static_assert(SL_F_MARK < 64 && SL_F_IFINDEX_IN < 64 && SL_F_IFINDEX_OUT < 64 && SL_F_PHYSINDEX_IN < 64 &&
		       SL_F_PHYSINDEX_OUT < 64 && SL_F_UID < 64 && SL_F_GID < 64 && SL_F_SEQ_LOCAL < 64 &&
		       SL_F_SEQ_GLOBAL < 64 && SL_F_CT_STATE < 64,
	       "nflog_attrs: the 32-bit attributes' fields are in the first presence word");

#define A(t) ((uint32_t)1 << (t))
_Static_assert(NFULA_MAX < 32, "nflog_attrs: attribute types in one word");

uint32_t sl_nflog_attrs_for(const uint64_t *fields)
{
	static const struct {
		uint8_t field;
		uint32_t attrs;
	} made_by[] = {
		{ SL_F_PACKET, A(NFULA_PAYLOAD) | A(NFULA_PACKET_HDR) | A(NFULA_L2HDR) },
		{ SL_F_CAPLEN, A(NFULA_PAYLOAD) | A(NFULA_PACKET_HDR) | A(NFULA_L2HDR) },
		{ SL_F_ORIG_LEN, A(NFULA_PAYLOAD) | A(NFULA_PACKET_HDR) | A(NFULA_L2HDR) },
		{ SL_F_HW_PROTOCOL, A(NFULA_PACKET_HDR) },
		{ SL_F_HOOK, A(NFULA_PACKET_HDR) },
		{ SL_F_MARK, A(NFULA_MARK) },
		{ SL_F_TIMESTAMP, A(NFULA_TIMESTAMP) },
		{ SL_F_IFINDEX_IN, A(NFULA_IFINDEX_INDEV) },
		{ SL_F_IFINDEX_OUT, A(NFULA_IFINDEX_OUTDEV) },
		{ SL_F_PHYSINDEX_IN, A(NFULA_IFINDEX_PHYSINDEV) },
		{ SL_F_PHYSINDEX_OUT, A(NFULA_IFINDEX_PHYSOUTDEV) },
		{ SL_F_HWADDR, A(NFULA_HWADDR) },
		{ SL_F_PREFIX, A(NFULA_PREFIX) },
		{ SL_F_UID, A(NFULA_UID) },
		{ SL_F_GID, A(NFULA_GID) },
		{ SL_F_SEQ_LOCAL, A(NFULA_SEQ) },
		{ SL_F_SEQ_GLOBAL, A(NFULA_SEQ_GLOBAL) },
		{ SL_F_HWTYPE, A(NFULA_HWTYPE) },
		{ SL_F_HWHDR, A(NFULA_HWHEADER) | A(NFULA_L2HDR) },
		{ SL_F_CT_ID, A(NFULA_CT) },
		{ SL_F_CT_STATE, A(NFULA_CT_INFO) },
		{ SL_F_VLAN_ID, A(NFULA_VLAN) },
	};
	uint32_t attrs = 0;
	bool every = true;

	if (!fields)
		return SL_NFLOG_ATTRS_ALL;
	for (size_t i = 0; i < sizeof(made_by) / sizeof(made_by[0]); i++)
		if (fields[made_by[i].field >> 6] >> (made_by[i].field & 63) & 1)
			attrs |= made_by[i].attrs;
		else
			every = false;
	/* every field: the full parse, which has no test per attribute */
	return every ? SL_NFLOG_ATTRS_ALL : attrs;
}

/* The parser, inlined into both entry points (a constant `attrs` folds away). */
static inline __attribute__((always_inline)) int
parse(struct sl_record *r, const uint8_t *msg, size_t len, const struct sl_time *rx_time,
      unsigned flags, uint32_t attrs)
{
	const uint8_t *p, *hwhdr = NULL, *l2hdr = NULL, *payload = NULL;
	size_t hwhdr_len = 0, l2hdr_len = 0, payload_len = 0;
	uint64_t p0 = 0, p1 = 0;
	unsigned hook = ~0u;
	int ret = -1;
	const uint64_t want = attrs;	/* bits 32 to 63 clear */

	if (len < SL_NFLOG_HDRLEN)
		return -1;
	SET_U64(SL_F_FAMILY, msg[0]);
	/* res_id: the group, big-endian in netlink's nfgenmsg and in pcap's header */
	SET_U64(SL_F_NFLOG_GROUP, (uint64_t)msg[2] << 8 | msg[3]);
	p = msg + SL_NFLOG_HDRLEN;
	len -= SL_NFLOG_HDRLEN;

	while (len >= SL_TLV_HDRLEN) {
		size_t alen = sl_rd_h16(p), plen;
		unsigned type = sl_rd_h16(p + 2) & SL_TLV_TYPE_MASK;
		const uint8_t *v = p + SL_TLV_HDRLEN;

		/* one test for both: shorter than its header, or longer than what is left */
		if (alen - SL_TLV_HDRLEN > len - SL_TLV_HDRLEN) {
			if (alen < SL_TLV_HDRLEN)
				goto out;
			/* A capture cut inside the packet data, which comes last. */
			if (!(flags & SL_NFLOG_TRUNCATED_OK) || type != NFULA_PAYLOAD)
				goto out;
			payload = v;
			payload_len = len - SL_TLV_HDRLEN;
			SET_BYTES(SL_F_PACKET, v, payload_len);
			SET_U64(SL_F_CAPLEN, len - SL_TLV_HDRLEN);
			SET_U64(SL_F_ORIG_LEN, alen - SL_TLV_HDRLEN);
			len = 0;
			break;
		}
		plen = alen - SL_TLV_HDRLEN;
		/*
		 * Nobody below reads what it would make.  Types from 32 on are
		 * unknown (the switch ignores them): 32 to 63 test a clear bit,
		 * higher ones alias a low bit and reach the switch's default.
		 */
		if (attrs != SL_NFLOG_ATTRS_ALL && !((want >> (type & 63)) & 1))
			goto next;

		switch (type) {
		case NFULA_PACKET_HDR:
			if (plen < 4)
				goto out;
			SET_U64(SL_F_HW_PROTOCOL, sl_rd_be16(v));
			SET_U64(SL_F_HOOK, v[2]);
			hook = v[2];
			break;
		case NFULA_MARK:
		case NFULA_IFINDEX_INDEV:
		case NFULA_IFINDEX_OUTDEV:
		case NFULA_IFINDEX_PHYSINDEV:
		case NFULA_IFINDEX_PHYSOUTDEV:
		case NFULA_UID:
		case NFULA_GID:
		case NFULA_SEQ:
		case NFULA_SEQ_GLOBAL:
		case NFULA_CT_INFO: {
			static const uint8_t field_of[] = {
				[NFULA_MARK] = SL_F_MARK,
				[NFULA_IFINDEX_INDEV] = SL_F_IFINDEX_IN,
				[NFULA_IFINDEX_OUTDEV] = SL_F_IFINDEX_OUT,
				[NFULA_IFINDEX_PHYSINDEV] = SL_F_PHYSINDEX_IN,
				[NFULA_IFINDEX_PHYSOUTDEV] = SL_F_PHYSINDEX_OUT,
				[NFULA_UID] = SL_F_UID,
				[NFULA_GID] = SL_F_GID,
				[NFULA_SEQ] = SL_F_SEQ_LOCAL,
				[NFULA_SEQ_GLOBAL] = SL_F_SEQ_GLOBAL,
				[NFULA_CT_INFO] = SL_F_CT_STATE,
			};
			unsigned f = field_of[type];	/* all below 64 */

			if (plen < 4)
				goto out;
			r->v[f].u64 = sl_rd_be32(v);
			p0 |= (uint64_t)1 << f;
			break;
		}
		case NFULA_HWTYPE:
			if (plen < 2)
				goto out;
			SET_U64(SL_F_HWTYPE, sl_rd_be16(v));
			break;
		case NFULA_HWADDR: {
			/* struct nfulnl_msg_packet_hw: be16 len, pad, 8 bytes */
			uint32_t n;

			if (plen < 4)
				goto out;
			n = sl_rd_be16(v);
			if (n > 8 || n > plen - 4)
				goto out;
			SET_BYTES(SL_F_HWADDR, v + 4, n);
			break;
		}
		case NFULA_HWHEADER:
			hwhdr = v;
			hwhdr_len = plen;
			break;
		case NFULA_L2HDR:
			l2hdr = v;
			l2hdr_len = plen;
			break;
		case NFULA_TIMESTAMP: {
			uint64_t sec, usec;

			if (plen < 16)
				goto out;
			sec = sl_rd_be64(v);
			usec = sl_rd_be64(v + 8);
			if (usec >= 1000000 || sec > INT64_MAX)
				goto out;
			r->v[SL_F_TIMESTAMP].time.sec = (int64_t)sec;
			r->v[SL_F_TIMESTAMP].time.nsec = (uint32_t)usec * 1000;
			SET(SL_F_TIMESTAMP);
			break;
		}
		case NFULA_PREFIX:
			/* NUL-terminated in the kernel; the field excludes the NUL. */
			SET_BYTES(SL_F_PREFIX, v, plen && !v[0] ? 0 : strnlen((const char *)v, plen));
			break;
		case NFULA_PAYLOAD:
			payload = v;
			payload_len = plen;
			SET_BYTES(SL_F_PACKET, v, plen);
			break;
		case NFULA_VLAN:
			if (sl_tlv_walk(v, plen, r, vlan_attr) < 0)
				goto out;
			break;
		case NFULA_CT:
			if (sl_tlv_walk(v, plen, r, ct_attr) < 0)
				goto out;
			break;
		default:
			/* NFULA_HWLEN (implied by NFULA_HWHEADER), newer ones */
			break;
		}
next:
		if (!sl_tlv_next(&p, &len, alen))
			break;
	}
	if (len != 0 && len < SL_TLV_HDRLEN)
		goto out;	/* stray bytes that cannot be a TLV */

	/*
	 * NFULA_L2HDR (bridge family) runs from the MAC header to the network
	 * header, VLAN tags in the packet included: the whole link header, as
	 * a capture on the port would show it.  NFULA_HWHEADER is only the
	 * device's hard_header_len bytes.
	 */
	if (l2hdr)
		SET_BYTES(SL_F_HWHDR, l2hdr, l2hdr_len);
	else if (hwhdr)
		SET_BYTES(SL_F_HWHDR, hwhdr, hwhdr_len);
	/*
	 * At the netdev egress hook skb->data is still the MAC header, so the
	 * kernel's payload is the whole frame (and NFULA_L2HDR its link
	 * header).  `packet` always starts at the network header, as on every
	 * other hook: skip the link header when the payload begins with it.
	 */
	if (msg[0] == NFPROTO_NETDEV && hook == NF_NETDEV_EGRESS && l2hdr && payload &&
	    l2hdr_len <= payload_len && memcmp(payload, l2hdr, l2hdr_len) == 0) {
		SET_BYTES(SL_F_PACKET, payload + l2hdr_len, payload_len - l2hdr_len);
		if (p0 & (uint64_t)1 << SL_F_CAPLEN)
			SET_U64(SL_F_CAPLEN, payload_len - l2hdr_len);
		if (p0 & (uint64_t)1 << SL_F_ORIG_LEN)
			SET_U64(SL_F_ORIG_LEN, r->v[SL_F_ORIG_LEN].u64 - l2hdr_len);
	}
	if (!(p0 & (uint64_t)1 << SL_F_TIMESTAMP) && rx_time) {
		r->v[SL_F_TIMESTAMP].time.sec = rx_time->sec;
		r->v[SL_F_TIMESTAMP].time.nsec = rx_time->nsec;
		SET(SL_F_TIMESTAMP);
	}
	ret = 0;
out:
	/* also when malformed: the record is then partly filled, as before */
	r->present[0] |= p0;
	r->present[1] |= p1;
	return ret;
}

int sl_nflog_parse(struct sl_record *r, const uint8_t *msg, size_t len,
		   const struct sl_time *rx_time, unsigned flags)
{
	return parse(r, msg, len, rx_time, flags, SL_NFLOG_ATTRS_ALL);
}

int sl_nflog_parse_some(struct sl_record *r, const uint8_t *msg, size_t len,
			const struct sl_time *rx_time, unsigned flags, uint32_t attrs)
{
	/* two copies: the full parse without the test per attribute */
	if (attrs == SL_NFLOG_ATTRS_ALL)
		return parse(r, msg, len, rx_time, flags, SL_NFLOG_ATTRS_ALL);
	return parse(r, msg, len, rx_time, flags, attrs);
}
