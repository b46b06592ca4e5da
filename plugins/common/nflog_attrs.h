/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NFLOG event -> record, shared by the live `nflog` input and by `replay` of
 * NFLOG-linktype (DLT_NFLOG, 239) captures, so both yield identical records.
 *
 * Both deliver the same bytes: a 4-byte header (struct nfgenmsg: family,
 * version, resource id = group in network order) followed by NFULA_* TLVs
 * whose length and type are in host byte order, each padded to 4 bytes, with
 * values as the kernel sent them.  On the wire these are netlink attributes;
 * libpcap writes them unchanged (and byte-swaps the TLV headers of a capture
 * made on a machine of the other endianness when reading it).
 */
#ifndef SLUICE_NFLOG_ATTRS_H
#define SLUICE_NFLOG_ATTRS_H

#include <stddef.h>
#include <stdint.h>

#include <sluice/plugin.h>

/* Fields sl_nflog_parse() may set, for a plugin's `provides` list. */
#define SL_NFLOG_PROVIDES \
	SL_FIELD_DECL(SL_F_PACKET), SL_FIELD_DECL(SL_F_PREFIX), SL_FIELD_DECL(SL_F_HOOK), \
	SL_FIELD_DECL(SL_F_HW_PROTOCOL), SL_FIELD_DECL(SL_F_FAMILY), SL_FIELD_DECL(SL_F_MARK), \
	SL_FIELD_DECL(SL_F_IFINDEX_IN), SL_FIELD_DECL(SL_F_IFINDEX_OUT), \
	SL_FIELD_DECL(SL_F_PHYSINDEX_IN), SL_FIELD_DECL(SL_F_PHYSINDEX_OUT), \
	SL_FIELD_DECL(SL_F_UID), SL_FIELD_DECL(SL_F_GID), SL_FIELD_DECL(SL_F_HWTYPE), \
	SL_FIELD_DECL(SL_F_HWHDR), SL_FIELD_DECL(SL_F_HWADDR), SL_FIELD_DECL(SL_F_TIMESTAMP), \
	SL_FIELD_DECL(SL_F_SEQ_LOCAL), SL_FIELD_DECL(SL_F_SEQ_GLOBAL), \
	SL_FIELD_DECL(SL_F_CT_ID), SL_FIELD_DECL(SL_F_CT_STATE), SL_FIELD_DECL(SL_F_CAPLEN), \
	SL_FIELD_DECL(SL_F_ORIG_LEN), SL_FIELD_DECL(SL_F_NFLOG_GROUP), \
	SL_FIELD_DECL(SL_F_VLAN_ID)

/* The NFLOG header size (struct nfgenmsg / pcap's nflog_hdr_t). */
#define SL_NFLOG_HDRLEN 4

enum {
	/*
	 * The event may have been cut short (a capture with caplen < len): a
	 * last NFULA_PAYLOAD longer than the bytes left is accepted, with
	 * SL_F_CAPLEN and SL_F_ORIG_LEN set, instead of being malformed.
	 */
	SL_NFLOG_TRUNCATED_OK = 1u << 0,
};

/*
 * Parse one NFLOG event of `len` bytes at `msg` (the nfgenmsg header and its
 * TLVs) into the fresh record `r`.  Byte and string fields point into msg.
 * `rx_time` is the time to use when the kernel sent no NFULA_TIMESTAMP (the
 * same value for every record of a receive or batch); NULL leaves the
 * timestamp unset then.  Never reads outside msg[0..len).
 * Returns 0, or -1 when the event is malformed (the record is then partly
 * filled; the caller drops it and counts it).
 */
int sl_nflog_parse(struct sl_record *r, const uint8_t *msg, size_t len,
		   const struct sl_time *rx_time, unsigned flags);

/* Every attribute: what sl_nflog_parse() looks at. */
#define SL_NFLOG_ATTRS_ALL UINT32_MAX

/*
 * The NFULA attribute types (bit t for type t) that make the fields whose
 * bits are set in `fields` (SL_PRESENCE_WORDS words, as host
 * subtree_reads() gives them); NULL: all.  An attribute is in it when one
 * of the fields it sets is; the payload also brings the packet header and
 * the L2 header (the netdev egress hook's payload is cut by them).
 */
uint32_t sl_nflog_attrs_for(const uint64_t *fields);

/*
 * sl_nflog_parse() looking only at the attributes in `attrs`: the others
 * are stepped over by their length, their fields left unset, and their
 * contents not checked (one malformed inside does not make the event
 * malformed).  The family and group of the header are always set.
 */
int sl_nflog_parse_some(struct sl_record *r, const uint8_t *msg, size_t len,
			const struct sl_time *rx_time, unsigned flags, uint32_t attrs);

#endif /* SLUICE_NFLOG_ATTRS_H */
