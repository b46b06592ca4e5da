/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One nftables trace event (NFT_MSG_TRACE, `meta nftrace set 1`) split
 * into its attributes, without copying: strings and headers point into
 * the message.  The nftrace input turns it into a record; the unit test
 * checks it against libnftnl's nftnl_trace_nlmsg_parse().
 *
 * Why not libnftnl's parser on the hot path: it allocates an object and
 * copies every string and header of every event (strdup/malloc), and the
 * record would then need a second copy, since the object dies before the
 * batch is emitted.
 */
#ifndef SLUICE_NFTRACE_ATTRS_H
#define SLUICE_NFTRACE_ATTRS_H

#include <stddef.h>
#include <stdint.h>

/* Bits of struct sl_nftrace.has: which attributes the event carried. */
enum {
	SL_NFTRACE_TABLE = 1u << 0,
	SL_NFTRACE_CHAIN = 1u << 1,
	SL_NFTRACE_HANDLE = 1u << 2,
	SL_NFTRACE_TYPE = 1u << 3,
	SL_NFTRACE_VERDICT = 1u << 4,
	SL_NFTRACE_JUMP = 1u << 5,
	SL_NFTRACE_ID = 1u << 6,
	SL_NFTRACE_LL = 1u << 7,
	SL_NFTRACE_NH = 1u << 8,
	SL_NFTRACE_TH = 1u << 9,
	SL_NFTRACE_IIF = 1u << 10,
	SL_NFTRACE_IIFTYPE = 1u << 11,
	SL_NFTRACE_OIF = 1u << 12,
	SL_NFTRACE_OIFTYPE = 1u << 13,
	SL_NFTRACE_MARK = 1u << 14,
	SL_NFTRACE_NFPROTO = 1u << 15,
	SL_NFTRACE_POLICY = 1u << 16,
};

struct sl_nftrace_str {
	const char *ptr;	/* not NUL-terminated for the caller: use len */
	uint32_t len;
};

struct sl_nftrace_hdr {
	const uint8_t *ptr;
	uint32_t len;
};

struct sl_nftrace {
	uint32_t has;
	uint8_t family;		/* nfgenmsg: the table's family (NFPROTO_*) */
	struct sl_nftrace_str table, chain, jump;
	uint64_t handle;
	uint32_t type;		/* NFT_TRACETYPE_* */
	uint32_t id;
	int32_t verdict;	/* NF_ACCEPT, NFT_JUMP... */
	uint32_t policy;
	uint32_t iif, oif, mark, nfproto;
	uint16_t iiftype, oiftype;
	struct sl_nftrace_hdr ll, nh, th;
};

/*
 * Parse the payload of one NFT_MSG_TRACE message (struct nfgenmsg, then
 * attributes), `len` bytes at `msg`.  Never reads outside msg[0..len).
 * Returns 0, or -1 when it is malformed (an attribute that does not fit,
 * a number of the wrong size, no trace id or type).
 */
int sl_nftrace_parse(struct sl_nftrace *t, const uint8_t *msg, size_t len);

/* nft's words: "rule", "return", "policy"; NULL for an unknown type. */
const char *sl_nftrace_type_name(uint32_t type);

/* A verdict as nft names it ("accept", "jump", "continue"...); NULL if unknown. */
const char *sl_nftrace_verdict_name(int32_t verdict);

#endif /* SLUICE_NFTRACE_ATTRS_H */
