/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * nftrace's trace event parser, checked against libnftnl's
 * nftnl_trace_nlmsg_parse() on the same messages (built here the way the
 * kernel's nf_tables_trace.c builds them), its malformed cases, no read
 * outside an event cut anywhere (under ASan), and the nft monitor trace
 * lines logline prints for the records nftrace makes.
 */
#include "../../plugins/common/nftrace_attrs.c"
#include "../../plugins/common/traceline_fmt.c"

#include <stdbool.h>
#include <stdlib.h>

#include <endian.h>

#include <libmnl/libmnl.h>
#include <libnftnl/trace.h>
#include <linux/netfilter/nfnetlink.h>

#include "check.h"

/* <arpa/inet.h> clashes with <linux/in.h> (from linux/netfilter.h) */
#define htonl(x) htobe32(x)
#define htons(x) htobe16(x)

struct msg {
	union {
		uint8_t b[2048];
		struct nlmsghdr align;
	};
	struct nlmsghdr *nlh;
};

static void msg_start(struct msg *m, uint8_t family)
{
	struct nfgenmsg *g;

	memset(m->b, 0, sizeof(m->b));
	m->nlh = mnl_nlmsg_put_header(m->b);
	m->nlh->nlmsg_type = NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_TRACE;
	g = mnl_nlmsg_put_extra_header(m->nlh, sizeof(*g));
	g->nfgen_family = family;
}

static const uint8_t *payload(const struct msg *m)
{
	return mnl_nlmsg_get_payload(m->nlh);
}

static size_t plen(const struct msg *m)
{
	return m->nlh->nlmsg_len - NLMSG_HDRLEN;
}

static const uint8_t ip4_tcp[40] = {
	0x45, 0, 0, 60, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 10, 41, 0, 1, 10, 41, 0, 2,
	/* tcp: 40000 -> 22, SYN, window 64240 */
	0x9c, 0x40, 0, 22, 0, 0, 0, 1, 0, 0, 0, 0, 0xa0, 0x02, 0xfa, 0xf0, 0, 0, 0, 0,
};
static const uint8_t ll[14] = {2, 0, 0, 41, 0, 2, 2, 0, 0, 41, 0, 1, 8, 0};

/* A rule event with the packet, as the first event of a base chain. */
static void build_rule_event(struct msg *m)
{
	struct nlattr *v;

	msg_start(m, NFPROTO_INET);
	mnl_attr_put_u32(m->nlh, NFTA_TRACE_TYPE, htonl(NFT_TRACETYPE_RULE));
	mnl_attr_put_u32(m->nlh, NFTA_TRACE_ID, htonl(0x3a9c0f12));
	mnl_attr_put_strz(m->nlh, NFTA_TRACE_CHAIN, "input");
	mnl_attr_put_strz(m->nlh, NFTA_TRACE_TABLE, "filter");
	mnl_attr_put_u64(m->nlh, NFTA_TRACE_RULE_HANDLE, htobe64(7));
	v = mnl_attr_nest_start(m->nlh, NFTA_TRACE_VERDICT);
	mnl_attr_put_u32(m->nlh, NFTA_VERDICT_CODE, htonl((uint32_t)NFT_JUMP));
	mnl_attr_put_strz(m->nlh, NFTA_VERDICT_CHAIN, "uc");
	mnl_attr_nest_end(m->nlh, v);
	mnl_attr_put_u32(m->nlh, NFTA_TRACE_NFPROTO, htonl(NFPROTO_IPV4));
	mnl_attr_put(m->nlh, NFTA_TRACE_LL_HEADER, sizeof(ll), ll);
	mnl_attr_put(m->nlh, NFTA_TRACE_NETWORK_HEADER, 20, ip4_tcp);
	mnl_attr_put(m->nlh, NFTA_TRACE_TRANSPORT_HEADER, 20, ip4_tcp + 20);
	mnl_attr_put_u32(m->nlh, NFTA_TRACE_IIF, htonl(5));
	mnl_attr_put_u16(m->nlh, NFTA_TRACE_IIFTYPE, htons(1));
	mnl_attr_put_u32(m->nlh, NFTA_TRACE_MARK, htonl(0x2a));
}

static bool same_data(const struct nftnl_trace *nt, uint16_t attr, const struct sl_nftrace_hdr *h)
{
	uint32_t len;
	const void *d = nftnl_trace_get_data(nt, attr, &len);

	return d && len == h->len && !memcmp(d, h->ptr, len);
}

static bool same_str(const struct nftnl_trace *nt, uint16_t attr, const struct sl_nftrace_str *s)
{
	const char *d = nftnl_trace_get_str(nt, attr);

	return d && strlen(d) == s->len && !memcmp(d, s->ptr, s->len);
}

/* Our parse and libnftnl's of one message agree on every attribute. */
static void check_against_libnftnl(const struct msg *m)
{
	struct nftnl_trace *nt = nftnl_trace_alloc();
	struct sl_nftrace t;

	CHECK(sl_nftrace_parse(&t, payload(m), plen(m)) == 0);
	CHECK(nftnl_trace_nlmsg_parse(m->nlh, nt) == 0);
	CHECK_EQ_U(t.family, nftnl_trace_get_u32(nt, NFTNL_TRACE_FAMILY));
	CHECK_EQ_U(t.id, nftnl_trace_get_u32(nt, NFTNL_TRACE_ID));
	CHECK_EQ_U(t.type, nftnl_trace_get_u32(nt, NFTNL_TRACE_TYPE));
	CHECK_EQ_U(!!(t.has & SL_NFTRACE_HANDLE), nftnl_trace_is_set(nt, NFTNL_TRACE_RULE_HANDLE));
	if (t.has & SL_NFTRACE_HANDLE)
		CHECK_EQ_U(t.handle, nftnl_trace_get_u64(nt, NFTNL_TRACE_RULE_HANDLE));
	CHECK(same_str(nt, NFTNL_TRACE_TABLE, &t.table));
	CHECK(same_str(nt, NFTNL_TRACE_CHAIN, &t.chain));
	CHECK_EQ_U(!!(t.has & SL_NFTRACE_VERDICT), nftnl_trace_is_set(nt, NFTNL_TRACE_VERDICT));
	if (t.has & SL_NFTRACE_VERDICT)
		CHECK_EQ_U((uint32_t)t.verdict, nftnl_trace_get_u32(nt, NFTNL_TRACE_VERDICT));
	CHECK_EQ_U(!!(t.has & SL_NFTRACE_JUMP), nftnl_trace_is_set(nt, NFTNL_TRACE_JUMP_TARGET));
	if (t.has & SL_NFTRACE_JUMP)
		CHECK(same_str(nt, NFTNL_TRACE_JUMP_TARGET, &t.jump));
	CHECK_EQ_U(!!(t.has & SL_NFTRACE_POLICY), nftnl_trace_is_set(nt, NFTNL_TRACE_POLICY));
	if (t.has & SL_NFTRACE_POLICY)
		CHECK_EQ_U(t.policy, nftnl_trace_get_u32(nt, NFTNL_TRACE_POLICY));
	if (t.has & SL_NFTRACE_IIF)
		CHECK_EQ_U(t.iif, nftnl_trace_get_u32(nt, NFTNL_TRACE_IIF));
	if (t.has & SL_NFTRACE_IIFTYPE)
		CHECK_EQ_U(t.iiftype, nftnl_trace_get_u16(nt, NFTNL_TRACE_IIFTYPE));
	if (t.has & SL_NFTRACE_MARK)
		CHECK_EQ_U(t.mark, nftnl_trace_get_u32(nt, NFTNL_TRACE_MARK));
	if (t.has & SL_NFTRACE_NFPROTO)
		CHECK_EQ_U(t.nfproto, nftnl_trace_get_u32(nt, NFTNL_TRACE_NFPROTO));
	CHECK_EQ_U(!!(t.has & SL_NFTRACE_NH), nftnl_trace_is_set(nt, NFTNL_TRACE_NETWORK_HEADER));
	if (t.has & SL_NFTRACE_LL)
		CHECK(same_data(nt, NFTNL_TRACE_LL_HEADER, &t.ll));
	if (t.has & SL_NFTRACE_NH)
		CHECK(same_data(nt, NFTNL_TRACE_NETWORK_HEADER, &t.nh));
	if (t.has & SL_NFTRACE_TH)
		CHECK(same_data(nt, NFTNL_TRACE_TRANSPORT_HEADER, &t.th));
	nftnl_trace_free(nt);
}

static void test_events(void)
{
	struct msg m;

	build_rule_event(&m);
	check_against_libnftnl(&m);

	/* a policy event: no rule, the chain's policy */
	msg_start(&m, NFPROTO_IPV4);
	mnl_attr_put_u32(m.nlh, NFTA_TRACE_TYPE, htonl(NFT_TRACETYPE_POLICY));
	mnl_attr_put_u32(m.nlh, NFTA_TRACE_ID, htonl(1));
	mnl_attr_put_strz(m.nlh, NFTA_TRACE_CHAIN, "input");
	mnl_attr_put_strz(m.nlh, NFTA_TRACE_TABLE, "t");
	mnl_attr_put_u32(m.nlh, NFTA_TRACE_POLICY, htonl(NF_DROP));
	check_against_libnftnl(&m);
}

static void test_names(void)
{
	CHECK_STREQ(sl_nftrace_verdict_name(NF_ACCEPT), "accept");
	CHECK_STREQ(sl_nftrace_verdict_name(NF_DROP), "drop");
	CHECK_STREQ(sl_nftrace_verdict_name(NFT_CONTINUE), "continue");
	CHECK_STREQ(sl_nftrace_verdict_name(NFT_JUMP), "jump");
	CHECK_STREQ(sl_nftrace_verdict_name(NFT_GOTO), "goto");
	CHECK_STREQ(sl_nftrace_verdict_name(NFT_RETURN), "return");
	CHECK_STREQ(sl_nftrace_verdict_name(NF_QUEUE | 3 << 16), "queue");
	CHECK(sl_nftrace_verdict_name(-100) == NULL);
	CHECK_STREQ(sl_nftrace_type_name(NFT_TRACETYPE_RETURN), "return");
	CHECK(sl_nftrace_type_name(99) == NULL);
}

static void test_malformed(void)
{
	struct sl_nftrace t;
	struct msg m;

	/* no id */
	msg_start(&m, NFPROTO_INET);
	mnl_attr_put_u32(m.nlh, NFTA_TRACE_TYPE, htonl(NFT_TRACETYPE_RULE));
	CHECK(sl_nftrace_parse(&t, payload(&m), plen(&m)) < 0);
	/* a handle of 4 bytes */
	mnl_attr_put_u32(m.nlh, NFTA_TRACE_ID, htonl(1));
	CHECK(sl_nftrace_parse(&t, payload(&m), plen(&m)) == 0);
	mnl_attr_put_u32(m.nlh, NFTA_TRACE_RULE_HANDLE, htonl(1));
	CHECK(sl_nftrace_parse(&t, payload(&m), plen(&m)) < 0);
	/* an attribute longer than the message */
	build_rule_event(&m);
	CHECK(sl_nftrace_parse(&t, payload(&m), plen(&m)) == 0);
	((struct nlattr *)(m.b + m.nlh->nlmsg_len - 8))->nla_len = 200;
	CHECK(sl_nftrace_parse(&t, payload(&m), plen(&m)) < 0);
	CHECK(sl_nftrace_parse(&t, payload(&m), 3) < 0);
}

/* Every cut of a valid event, in a buffer of exactly that size (ASan sees overreads). */
static void test_no_overrun(void)
{
	struct sl_nftrace t;
	struct msg m;
	unsigned ok = 0;

	build_rule_event(&m);
	for (size_t n = 0; n <= plen(&m); n++) {
		uint8_t *cut = malloc(n ? n : 1);

		memcpy(cut, payload(&m), n);
		ok += sl_nftrace_parse(&t, cut, n) == 0;
		if (t.has & SL_NFTRACE_NH)
			CHECK(t.nh.ptr >= cut && t.nh.ptr + t.nh.len <= cut + n);
		free(cut);
	}
	CHECK(ok >= 1);
	/* corrupt each byte of the attributes: parse or refuse, never overread */
	for (size_t i = 4; i < plen(&m); i++) {
		uint8_t *bad = malloc(plen(&m));

		memcpy(bad, payload(&m), plen(&m));
		bad[i] ^= 0xff;
		(void)sl_nftrace_parse(&t, bad, plen(&m));
		free(bad);
	}
}

/* ---- the text ---- */

enum { F_ID = SL_F_WELL_KNOWN_COUNT, F_TABLE, F_CHAIN, F_HANDLE, F_TYPE, F_VERDICT, F_JUMP, F_RULE, F_N };

static union {
	struct sl_record r;
	uint8_t mem[sizeof(struct sl_record) + F_N * sizeof(union sl_value)];
} rec_mem;

static const struct sl_traceline_fields tf = {F_ID,   F_TABLE,   F_CHAIN, F_HANDLE,
					      F_TYPE, F_VERDICT, F_JUMP,  F_RULE};

static struct sl_record *trace_rec(const char *type)
{
	struct sl_record *r = &rec_mem.r;

	memset(&rec_mem, 0, sizeof(rec_mem));
	sl_set_u64(r, SL_F_FAMILY, NFPROTO_INET);
	sl_set_u64(r, F_ID, 0x3a9c0f12);
	sl_set_bytes(r, F_TABLE, "filter", 6);
	sl_set_bytes(r, F_CHAIN, "input", 5);
	sl_set_bytes(r, F_TYPE, type, (uint32_t)strlen(type));
	return r;
}

static void check_line(const struct sl_record *r, const char *want)
{
	char buf[512];
	struct sl_fmt_buf b;

	CHECK(sl_traceline_applies(r, &tf));
	sl_fmt_init(&b, buf, sizeof(buf) - 1);
	sl_traceline_format(&b, r, &tf);
	CHECK(!b.overflow);
	buf[b.len] = '\0';
	CHECK_STREQ(buf, want);
}

static void test_lines(void)
{
	struct sl_record *r = trace_rec("packet");
	static const uint8_t src[4] = {10, 41, 0, 1}, dst[4] = {10, 41, 0, 2};

	sl_set_u64(r, SL_F_IFINDEX_IN, 5);
	sl_set_bytes(r, SL_F_IFNAME_IN, "veth0", 5);
	sl_set_u64(r, SL_F_IP_VERSION, 4);
	sl_set_ip4(r, SL_F_SRC_ADDR, src);
	sl_set_ip4(r, SL_F_DST_ADDR, dst);
	sl_set_u64(r, SL_F_IP_TTL, 64);
	sl_set_u64(r, SL_F_IP_ID, 4660);
	sl_set_u64(r, SL_F_IP_PROTO, 6);
	sl_set_u64(r, SL_F_IP_LEN, 60);
	sl_set_u64(r, SL_F_SPORT, 40000);
	sl_set_u64(r, SL_F_DPORT, 22);
	sl_set_u64(r, SL_F_TCP_FLAGS, 0x12);
	sl_set_u64(r, SL_F_TCP_WINDOW, 64240);
	check_line(r, "trace id 3a9c0f12 inet filter input packet: iif \"veth0\" ip saddr 10.41.0.1 "
		      "ip daddr 10.41.0.2 ip ttl 64 ip id 4660 ip protocol tcp ip length 60 tcp sport 40000 "
		      "tcp dport 22 tcp flags == syn | ack tcp window 64240");

	r = trace_rec("rule");
	sl_set_u64(r, F_HANDLE, 7);
	sl_set_bytes(r, F_VERDICT, "jump", 4);
	sl_set_bytes(r, F_JUMP, "uc", 2);
	check_line(r, "trace id 3a9c0f12 inet filter input rule unknown rule handle 7 (verdict jump uc)");
	sl_set_bytes(r, F_RULE, "[ immediate reg 0 jump -> uc ]", 30);
	check_line(r, "trace id 3a9c0f12 inet filter input rule [ immediate reg 0 jump -> uc ] # handle 7 "
		      "(verdict jump uc)");

	r = trace_rec("policy");
	sl_set_bytes(r, F_VERDICT, "drop", 4);
	sl_set_u64(r, SL_F_MARK, 0x2a);
	check_line(r, "trace id 3a9c0f12 inet filter input policy drop meta mark 0x0000002a");

	r = trace_rec("return");
	sl_set_bytes(r, F_VERDICT, "continue", 8);
	check_line(r, "trace id 3a9c0f12 inet filter input verdict continue");

	/* a record without trace_id is not a trace record */
	memset(&rec_mem, 0, sizeof(rec_mem));
	CHECK(!sl_traceline_applies(&rec_mem.r, &tf));
}

int main(void)
{
	test_events();
	test_names();
	test_malformed();
	test_no_overrun();
	test_lines();
	return check_summary("test_nftrace");
}
