/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Netlink attributes (TLVs) in a buffer, for the parsers of NFLOG events
 * (nflog_attrs.c) and nftables traces (nftrace_attrs.c).  Not libmnl's
 * mnl_attr_parse_payload(): that stops silently at a malformed or cut
 * attribute, and we count such messages as bad input; NFLOG pcaps also
 * carry an NFULA_PAYLOAD cut by the snap length, which nflog_attrs.c takes.
 */
#ifndef SLUICE_NL_TLV_H
#define SLUICE_NL_TLV_H

#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SL_TLV_HDRLEN 4
#define SL_TLV_ALIGN(n) (((n) + 3u) & ~(size_t)3)
/* Netlink's NLA_F_NESTED / NLA_F_NET_BYTEORDER live in the top type bits. */
#define SL_TLV_TYPE_MASK 0x3fffu

static inline uint16_t sl_rd_h16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

static inline uint32_t sl_rd_be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static inline uint32_t sl_rd_be32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return be32toh(v);
}

static inline uint64_t sl_rd_be64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return be64toh(v);
}

/*
 * Step *p / *len past the attribute of length alen (header included);
 * false when it was the last one: its padding may be missing.
 */
static inline int sl_tlv_next(const uint8_t **p, size_t *len, size_t alen)
{
	size_t step = SL_TLV_ALIGN(alen);

	if (step >= *len) {
		*len = 0;
		return 0;
	}
	*p += step;
	*len -= step;
	return 1;
}

/*
 * Walk the attributes of p[0..len), calling one(ctx, type, value, vlen)
 * on each; -1 when an attribute does not fit, bytes too few for a header
 * are left, or one() refuses it.  Inline, so one() is inlined at each use.
 */
static inline int sl_tlv_walk(const uint8_t *p, size_t len, void *ctx,
			      int (*one)(void *ctx, unsigned type, const uint8_t *v, size_t n))
{
	while (len >= SL_TLV_HDRLEN) {
		size_t alen = sl_rd_h16(p);

		if (alen < SL_TLV_HDRLEN || alen > len)
			return -1;
		if (one(ctx, sl_rd_h16(p + 2) & SL_TLV_TYPE_MASK, p + SL_TLV_HDRLEN,
			alen - SL_TLV_HDRLEN) < 0)
			return -1;
		if (!sl_tlv_next(&p, &len, alen))
			return 0;
	}
	return len ? -1 : 0;
}

#endif
