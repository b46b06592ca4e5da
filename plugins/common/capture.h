/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Capture framing for `replay`: classic pcap records read in place from a
 * mapped file, and one captured packet of a link type replay reads turned
 * into a record.  Kept apart from the plugin so unit tests and a fuzz
 * target can drive it on bytes without a daemon.
 *
 * The per-packet functions (sl_cap_map_next, sl_cap_fill) are static
 * inline: replay calls them once per packet on its fastest path, and they
 * must stay as cheap as when they were the plugin's own static functions.
 * Nothing here reads outside the bytes it is given.
 */
#ifndef SLUICE_CAPTURE_H
#define SLUICE_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>

#include <sluice/record.h>

#include "nflog_attrs.h"

/* Link types by their pcap LINKTYPE_ number where libpcap has no DLT_ macro. */
#define SL_LT_RAW 101
#ifndef DLT_IPV4
#define DLT_IPV4 228
#endif
#ifndef DLT_IPV6
#define DLT_IPV6 229
#endif
#ifndef DLT_NFLOG
#define DLT_NFLOG 239
#endif
#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

/* Size of a classic pcap file header. */
#define SL_CAP_FILE_HDR 24
/* How far ahead of the record being read a mapped file is prefetched. */
#define SL_CAP_PREFETCH_AHEAD 2048

/* Link types replay reads (pcap LINKTYPE_ values are DLT_ values for these). */
bool sl_cap_dlt_supported(int dlt);

/* A classic pcap file in this machine's byte order, read in place. */
struct sl_cap_map {
	const uint8_t *p;
	size_t len, off;
	uint32_t snaplen;
	int dlt;
	bool nsec;
	struct pcap_pkthdr hdr;	/* of the packet last read, as libpcap's */
	char err[160];		/* why sl_cap_map_next() returned PCAP_ERROR */
};

/*
 * Is hdr (the first SL_CAP_FILE_HDR bytes of a file) a classic pcap that
 * can be read in place: this machine's byte order, version 2, a link type
 * we read whose LINKTYPE_ number is its DLT_ one, no FCS bits?  Anything
 * else goes through libpcap, which also reports what is wrong with it.
 */
bool sl_cap_map_ok(const uint8_t hdr[SL_CAP_FILE_HDR]);

/* Start reading p[0..len) in place.  -1 unless sl_cap_map_ok(). */
int sl_cap_map_open(struct sl_cap_map *m, const void *p, size_t len);

/*
 * The next packet, as pcap_next_ex() returns it: 1 and *h, *data set (data
 * points into the mapping; h->ts.tv_usec holds nanoseconds), or
 * PCAP_ERROR_BREAK at the end, or PCAP_ERROR with m->err saying why
 * (after which every call returns PCAP_ERROR_BREAK).
 */
static inline int sl_cap_map_next(struct sl_cap_map *m, struct pcap_pkthdr **h,
				  const u_char **data)
{
	size_t left = m->len - m->off;
	uint32_t rh[4];

	if (left == 0)
		return PCAP_ERROR_BREAK;
	if (left < sizeof(rh)) {
		snprintf(m->err, sizeof(m->err),
			 "truncated dump file; tried to read %zu header bytes, only got %zu",
			 sizeof(rh), left);
		m->off = m->len;
		return PCAP_ERROR;
	}
	memcpy(rh, m->p + m->off, sizeof(rh));
	left -= sizeof(rh);
	/* libpcap refuses what no capture could hold, so do we */
	if (rh[2] > 262144 && rh[2] > m->snaplen) {
		snprintf(m->err, sizeof(m->err),
			 "invalid packet capture length %u, bigger than snaplen of %u", rh[2],
			 m->snaplen);
		m->off = m->len;
		return PCAP_ERROR;
	}
	if (rh[2] > left) {
		snprintf(m->err, sizeof(m->err),
			 "truncated dump file; tried to read %u captured bytes, only got %zu", rh[2],
			 left);
		m->off = m->len;
		return PCAP_ERROR;
	}
	m->hdr.ts.tv_sec = rh[0];
	m->hdr.ts.tv_usec = m->nsec ? rh[1] : (suseconds_t)rh[1] * 1000;
	m->hdr.caplen = rh[2];
	m->hdr.len = rh[3];
	*h = &m->hdr;
	*data = m->p + m->off + sizeof(rh);
	m->off += sizeof(rh) + rh[2];
	/* records are read in order: ask for the ones a few away now */
	if (m->len - m->off > SL_CAP_PREFETCH_AHEAD + 64) {
		__builtin_prefetch(m->p + m->off + SL_CAP_PREFETCH_AHEAD);
		__builtin_prefetch(m->p + m->off + SL_CAP_PREFETCH_AHEAD + 64);
	}
	return 1;
}

/* ---- one packet -> record ---- */

/* Values of the family field (NFPROTO_*) and of hwtype (ARPHRD_ETHER). */
#define SL_CAP_FAM_IPV4 2
#define SL_CAP_FAM_NETDEV 5
#define SL_CAP_FAM_IPV6 10
#define SL_CAP_ARPHRD_ETHER 1
#define SL_CAP_PACKET_OUTGOING 4

static inline uint32_t sl_cap_be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static inline uint32_t sl_cap_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline bool sl_cap_is_vlan(uint32_t t)
{
	return t == 0x8100 || t == 0x88a8 || t == 0x9100;
}

/*
 * Skip the VLAN tags that start at p[off] while *type says one follows.
 * Returns the offset of the network header, or -1 if cut short.
 */
static inline long sl_cap_skip_tags(const uint8_t *p, uint32_t caplen, uint32_t off,
				    uint32_t *type)
{
	for (int n = 0; sl_cap_is_vlan(*type); n++) {
		if (n == 8 || off + 4 > caplen)
			return -1;
		*type = sl_cap_be16(p + off + 2);
		off += 4;
	}
	return off;
}

/*
 * A link header of hdrlen bytes whose protocol field is at proto_off
 * (Ethernet, SLL, SLL2): the offset of the network header past any VLAN
 * tags, *type its protocol, and the netdev family set; -1 if cut short.
 */
static inline long sl_cap_link_header(struct sl_record *r, const uint8_t *p, uint32_t caplen,
				      uint32_t hdrlen, uint32_t proto_off, uint32_t *type)
{
	long off;

	if (caplen < hdrlen)
		return -1;
	*type = sl_cap_be16(p + proto_off);
	off = sl_cap_skip_tags(p, caplen, hdrlen, type);
	if (off >= 0)
		sl_set_u64(r, SL_F_FAMILY, SL_CAP_FAM_NETDEV);
	return off;
}

/* Packet fields common to all link types but NFLOG. */
static inline void sl_cap_set_packet(struct sl_record *r, const uint8_t *p, uint32_t caplen,
				     uint32_t len, uint32_t off, const struct sl_time *ts)
{
	sl_set_bytes(r, SL_F_PACKET, p + off, caplen - off);
	if (len >= off) {
		sl_set_u64(r, SL_F_ORIG_LEN, len - off);
		if (caplen < len)
			sl_set_u64(r, SL_F_CAPLEN, caplen - off);
	}
	sl_set_time(r, SL_F_TIMESTAMP, ts->sec, ts->nsec);
}

/*
 * One captured packet p[0..caplen) of link type dlt (originally len bytes)
 * -> the fresh record r, as the live inputs would have made it.  Byte
 * fields point into p.  0, or -1 when the packet is malformed (the record
 * is then partly filled; the caller drops it and counts it).  nflog_attrs:
 * the NFLOG attributes to look at (sl_nflog_parse_some()); sl_cap_fill():
 * all of them.
 */
static inline int sl_cap_fill_some(int dlt, struct sl_record *r, const uint8_t *p,
				   uint32_t caplen, uint32_t len, const struct sl_time *ts,
				   uint32_t nflog_attrs)
{
	uint32_t type;
	long off;

	switch (dlt) {
	case DLT_NFLOG:
		return sl_nflog_parse_some(r, p, caplen, ts, caplen < len ? SL_NFLOG_TRUNCATED_OK : 0,
					   nflog_attrs);

	case DLT_RAW:
	case SL_LT_RAW:
	case DLT_IPV4:
	case DLT_IPV6: {
		unsigned v = caplen ? p[0] >> 4 : 0;

		if (dlt == DLT_IPV4 ? v != 4 : dlt == DLT_IPV6 ? v != 6 : v != 4 && v != 6)
			return -1;
		sl_set_u64(r, SL_F_FAMILY, v == 4 ? SL_CAP_FAM_IPV4 : SL_CAP_FAM_IPV6);
		sl_set_u64(r, SL_F_HW_PROTOCOL, v == 4 ? 0x0800 : 0x86dd);
		sl_cap_set_packet(r, p, caplen, len, 0, ts);
		return 0;
	}

	case DLT_EN10MB:
		off = sl_cap_link_header(r, p, caplen, 14, 12, &type);
		if (off < 0)
			return -1;
		sl_set_u64(r, SL_F_HWTYPE, SL_CAP_ARPHRD_ETHER);
		sl_set_bytes(r, SL_F_HWHDR, p, (uint32_t)off);
		sl_set_bytes(r, SL_F_HWADDR, p + 6, 6);
		break;

	case DLT_LINUX_SLL:
		/* pkttype, hatype, halen, addr[8], protocol: all big-endian */
		off = sl_cap_link_header(r, p, caplen, 16, 14, &type);
		if (off < 0)
			return -1;
		sl_set_u64(r, SL_F_HWTYPE, sl_cap_be16(p + 2));
		sl_set_bytes(r, SL_F_HWADDR, p + 6, sl_cap_be16(p + 4) < 8 ? sl_cap_be16(p + 4) : 8);
		break;

	case DLT_LINUX_SLL2:
		/* protocol, reserved, ifindex, hatype, pkttype, halen, addr[8] */
		off = sl_cap_link_header(r, p, caplen, 20, 0, &type);
		if (off < 0)
			return -1;
		sl_set_u64(r, SL_F_HWTYPE, sl_cap_be16(p + 8));
		sl_set_u64(r, p[10] == SL_CAP_PACKET_OUTGOING ? SL_F_IFINDEX_OUT : SL_F_IFINDEX_IN,
			   sl_cap_be32(p + 4));
		sl_set_bytes(r, SL_F_HWADDR, p + 12, p[11] < 8 ? p[11] : 8);
		break;

	default:
		return -1;
	}
	/* an EtherType; below 0x600 an 802.3 length, or SLL's pseudo protocols (LLC, CAN...) */
	if (type >= 0x600)
		sl_set_u64(r, SL_F_HW_PROTOCOL, type);
	sl_cap_set_packet(r, p, caplen, len, (uint32_t)off, ts);
	return 0;
}

static inline int sl_cap_fill(int dlt, struct sl_record *r, const uint8_t *p, uint32_t caplen,
			      uint32_t len, const struct sl_time *ts)
{
	return sl_cap_fill_some(dlt, r, p, caplen, len, ts, SL_NFLOG_ATTRS_ALL);
}

#endif /* SLUICE_CAPTURE_H */
