/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NFT_MSG_TRACE -> struct sl_nftrace (see nftrace_attrs.h). */
#include "nftrace_attrs.h"

#include <string.h>

#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "nl_tlv.h"

#define NFGENMSG_LEN 4

/* A netlink string: the bytes before the first NUL (the kernel sends one). */
static void set_str(struct sl_nftrace_str *s, const uint8_t *v, size_t n)
{
	s->ptr = (const char *)v;
	s->len = (uint32_t)strnlen((const char *)v, n);
}

static int verdict_attr(void *ctx, unsigned type, const uint8_t *v, size_t n)
{
	struct sl_nftrace *t = ctx;

	switch (type) {
	case NFTA_VERDICT_CODE:
		if (n != 4)
			return -1;
		t->verdict = (int32_t)sl_rd_be32(v);
		t->has |= SL_NFTRACE_VERDICT;
		break;
	case NFTA_VERDICT_CHAIN:
		set_str(&t->jump, v, n);
		t->has |= SL_NFTRACE_JUMP;
		break;
	}
	return 0;
}

static int u32_attr(const uint8_t *v, size_t n, uint32_t *out)
{
	if (n != 4)
		return -1;
	*out = sl_rd_be32(v);
	return 0;
}

static int trace_attr(void *ctx, unsigned type, const uint8_t *v, size_t n)
{
	struct sl_nftrace *t = ctx;
	/* the 32-bit attributes: where each goes and its bit */
	static const struct { uint8_t off; uint32_t bit; } u32s[NFTA_TRACE_MAX + 1] = {
		[NFTA_TRACE_TYPE] = {offsetof(struct sl_nftrace, type), SL_NFTRACE_TYPE},
		[NFTA_TRACE_ID] = {offsetof(struct sl_nftrace, id), SL_NFTRACE_ID},
		[NFTA_TRACE_IIF] = {offsetof(struct sl_nftrace, iif), SL_NFTRACE_IIF},
		[NFTA_TRACE_OIF] = {offsetof(struct sl_nftrace, oif), SL_NFTRACE_OIF},
		[NFTA_TRACE_MARK] = {offsetof(struct sl_nftrace, mark), SL_NFTRACE_MARK},
		[NFTA_TRACE_NFPROTO] = {offsetof(struct sl_nftrace, nfproto), SL_NFTRACE_NFPROTO},
		[NFTA_TRACE_POLICY] = {offsetof(struct sl_nftrace, policy), SL_NFTRACE_POLICY},
	};

	if (type <= NFTA_TRACE_MAX && u32s[type].bit) {
		if (u32_attr(v, n, (uint32_t *)((uint8_t *)t + u32s[type].off)) < 0)
			return -1;
		t->has |= u32s[type].bit;
		return 0;
	}
	switch (type) {
	case NFTA_TRACE_TABLE:
		set_str(&t->table, v, n);
		t->has |= SL_NFTRACE_TABLE;
		break;
	case NFTA_TRACE_CHAIN:
		set_str(&t->chain, v, n);
		t->has |= SL_NFTRACE_CHAIN;
		break;
	case NFTA_TRACE_RULE_HANDLE:
		if (n != 8)
			return -1;
		t->handle = sl_rd_be64(v);
		t->has |= SL_NFTRACE_HANDLE;
		break;
	case NFTA_TRACE_VERDICT:
		return sl_tlv_walk(v, n, t, verdict_attr);
	case NFTA_TRACE_IIFTYPE:
	case NFTA_TRACE_OIFTYPE:
		if (n != 2)
			return -1;
		if (type == NFTA_TRACE_IIFTYPE) {
			t->iiftype = (uint16_t)(v[0] << 8 | v[1]);
			t->has |= SL_NFTRACE_IIFTYPE;
		} else {
			t->oiftype = (uint16_t)(v[0] << 8 | v[1]);
			t->has |= SL_NFTRACE_OIFTYPE;
		}
		break;
	case NFTA_TRACE_LL_HEADER:
		t->ll = (struct sl_nftrace_hdr){v, (uint32_t)n};
		t->has |= SL_NFTRACE_LL;
		break;
	case NFTA_TRACE_NETWORK_HEADER:
		t->nh = (struct sl_nftrace_hdr){v, (uint32_t)n};
		t->has |= SL_NFTRACE_NH;
		break;
	case NFTA_TRACE_TRANSPORT_HEADER:
		t->th = (struct sl_nftrace_hdr){v, (uint32_t)n};
		t->has |= SL_NFTRACE_TH;
		break;
	}
	return 0;	/* NFTA_TRACE_PAD, newer ones (conntrack state...) */
}

int sl_nftrace_parse(struct sl_nftrace *t, const uint8_t *msg, size_t len)
{
	memset(t, 0, sizeof(*t));
	if (len < NFGENMSG_LEN)
		return -1;
	t->family = msg[0];
	if (sl_tlv_walk(msg + NFGENMSG_LEN, len - NFGENMSG_LEN, t, trace_attr) < 0)
		return -1;
	/* what every event has: without them it is not one */
	if ((t->has & (SL_NFTRACE_ID | SL_NFTRACE_TYPE)) != (SL_NFTRACE_ID | SL_NFTRACE_TYPE))
		return -1;
	return 0;
}

const char *sl_nftrace_type_name(uint32_t type)
{
	switch (type) {
	case NFT_TRACETYPE_RULE:
		return "rule";
	case NFT_TRACETYPE_RETURN:
		return "return";
	case NFT_TRACETYPE_POLICY:
		return "policy";
	}
	return NULL;
}

const char *sl_nftrace_verdict_name(int32_t verdict)
{
	switch (verdict) {
	case NFT_CONTINUE:
		return "continue";
	case NFT_BREAK:
		return "break";
	case NFT_JUMP:
		return "jump";
	case NFT_GOTO:
		return "goto";
	case NFT_RETURN:
		return "return";
	}
	/* NF_QUEUE carries the queue number in the upper bits */
	switch (verdict & NF_VERDICT_MASK) {
	case NF_DROP:
		return "drop";
	case NF_ACCEPT:
		return "accept";
	case NF_STOLEN:
		return "stolen";
	case NF_QUEUE:
		return "queue";
	case NF_REPEAT:
		return "repeat";
	case NF_STOP:
		return "stop";
	}
	return NULL;
}
