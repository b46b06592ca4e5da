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
#define SL_NFLOG_PROVIDES                                                        \
	{ "packet", SL_T_BYTES }, { "prefix", SL_T_STRING }, { "hook", SL_T_U64 }, \
	{ "hw_protocol", SL_T_U64 }, { "family", SL_T_U64 }, { "mark", SL_T_U64 },  \
	{ "ifindex_in", SL_T_U64 }, { "ifindex_out", SL_T_U64 },                  \
	{ "physindex_in", SL_T_U64 }, { "physindex_out", SL_T_U64 },              \
	{ "uid", SL_T_U64 }, { "gid", SL_T_U64 }, { "hwtype", SL_T_U64 },          \
	{ "hwhdr", SL_T_BYTES }, { "hwaddr", SL_T_BYTES },                        \
	{ "timestamp", SL_T_TIME }, { "seq_local", SL_T_U64 },                    \
	{ "seq_global", SL_T_U64 }, { "ct_id", SL_T_U64 }, { "ct_state", SL_T_U64 }, \
	{ "caplen", SL_T_U64 }, { "orig_len", SL_T_U64 }, { "nflog_group", SL_T_U64 }, \
	{ "vlan_id", SL_T_U64 }

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

#endif /* SLUICE_NFLOG_ATTRS_H */
