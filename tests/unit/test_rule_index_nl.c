/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rule index read from nf_tables' netlink messages
 * (plugins/common/rule_index_nl.c), the messages made by libnftnl (the
 * library nft makes its own with): the ruleset of rule_listing.h, chains,
 * a named and an anonymous verdict map with their elements, rules with
 * comments, log statements, verdicts, jumps and lookups.  The index must
 * say what the JSON listing's says (test_rule_index.c checks that one) for
 * every key of a grid, rule by rule; cut and damaged messages are refused
 * or read without reading past them; a rule of a chain not seen is left out.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>

#include "check.h"
#include "rule_index.h"
#include "rule_index_nl.h"
#include "rule_listing.h"

/* The messages, one after the other, as a dump gives them. */
static char msgs[1 << 16];
static size_t used;
static struct nftnl_rule *rule;

static struct nlmsghdr *hdr(uint16_t type, uint16_t family)
{
	return nftnl_nlmsg_build_hdr(msgs + used, type, family, 0, 1);
}

static void put(struct nlmsghdr *nlh)
{
	used += NLMSG_ALIGN(nlh->nlmsg_len);
}

static void chain(uint16_t family, const char *table, const char *name, int hook)
{
	struct nftnl_chain *c = nftnl_chain_alloc();
	struct nlmsghdr *nlh = hdr(NFT_MSG_NEWCHAIN, family);

	nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, family);
	nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, table);
	nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
	if (hook >= 0) {
		nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, (uint32_t)hook);
		nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, 0);
		nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
	}
	nftnl_chain_nlmsg_build_payload(nlh, c);
	put(nlh);
	nftnl_chain_free(c);
}

static struct nftnl_set *set_of(uint16_t family, const char *table, const char *name)
{
	struct nftnl_set *s = nftnl_set_alloc();

	nftnl_set_set_u32(s, NFTNL_SET_FAMILY, family);
	nftnl_set_set_str(s, NFTNL_SET_TABLE, table);
	nftnl_set_set_str(s, NFTNL_SET_NAME, name);
	return s;
}

/* A verdict map (or a plain set: data 0) and its one element jumping to `to`. */
static void vmap(uint16_t family, const char *table, const char *name, uint32_t flags,
		 uint32_t data, uint16_t key, const char *to)
{
	struct nftnl_set *s = set_of(family, table, name);
	struct nftnl_set_elem *e = nftnl_set_elem_alloc();
	struct nlmsghdr *nlh = hdr(NFT_MSG_NEWSET, family);

	nftnl_set_set_u32(s, NFTNL_SET_FLAGS, flags);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, 13);
	nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, 2);
	if (data) {
		nftnl_set_set_u32(s, NFTNL_SET_DATA_TYPE, data);
		nftnl_set_set_u32(s, NFTNL_SET_DATA_LEN, 0);
	}
	nftnl_set_set_u32(s, NFTNL_SET_ID, 1);
	nftnl_set_nlmsg_build_payload(nlh, s);
	put(nlh);
	nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, &key, sizeof(key));
	if (data) {
		nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_VERDICT, (uint32_t)NFT_JUMP);
		nftnl_set_elem_set_str(e, NFTNL_SET_ELEM_CHAIN, to);
	}
	nftnl_set_elem_add(s, e);
	nlh = hdr(NFT_MSG_NEWSETELEM, family);
	nftnl_set_elems_nlmsg_build_payload(nlh, s);
	put(nlh);
	nftnl_set_free(s);
}

static void rule_begin(uint16_t family, const char *table, const char *chain_name,
		       uint64_t handle, const char *comment)
{
	rule = nftnl_rule_alloc();
	nftnl_rule_set_u32(rule, NFTNL_RULE_FAMILY, family);
	nftnl_rule_set_str(rule, NFTNL_RULE_TABLE, table);
	nftnl_rule_set_str(rule, NFTNL_RULE_CHAIN, chain_name);
	nftnl_rule_set_u64(rule, NFTNL_RULE_HANDLE, handle);
	if (comment) {
		struct nftnl_udata_buf *u = nftnl_udata_buf_alloc(NFT_USERDATA_MAXLEN);

		nftnl_udata_put_strz(u, NFTNL_UDATA_RULE_COMMENT, comment);
		nftnl_rule_set_data(rule, NFTNL_RULE_USERDATA, nftnl_udata_buf_data(u),
				    nftnl_udata_buf_len(u));
		nftnl_udata_buf_free(u);
	}
}

static void rule_end(void)
{
	struct nlmsghdr *nlh = hdr(NFT_MSG_NEWRULE, (uint16_t)nftnl_rule_get_u32(rule, NFTNL_RULE_FAMILY));

	nftnl_rule_nlmsg_build_payload(nlh, rule);
	put(nlh);
	nftnl_rule_free(rule);
}

static void log_(int group, const char *prefix)
{
	struct nftnl_expr *e = nftnl_expr_alloc("log");

	if (group >= 0)
		nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, (uint16_t)group);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix);
	nftnl_rule_add_expr(rule, e);
}

static void verdict(int code, const char *to)
{
	struct nftnl_expr *e = nftnl_expr_alloc("immediate");

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, (uint32_t)code);
	if (to)
		nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, to);
	nftnl_rule_add_expr(rule, e);
}

static void expr(const char *name)
{
	nftnl_rule_add_expr(rule, nftnl_expr_alloc(name));
}

static void lookup(const char *set)
{
	struct nftnl_expr *e = nftnl_expr_alloc("lookup");

	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_DREG, NFT_REG_VERDICT);
	nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
	nftnl_rule_add_expr(rule, e);
}

/* A value into register 1 (meta mark set's first half): not a verdict. */
static void load(void)
{
	struct nftnl_expr *e = nftnl_expr_alloc("immediate");
	uint32_t v = 1;

	nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
	nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, &v, sizeof(v));
	nftnl_rule_add_expr(rule, e);
}

/* rule_listing.h's ruleset, as a dump gives it: chains, sets, elements, rules. */
static void ruleset(void)
{
	enum { INET = NFPROTO_INET, IP = NFPROTO_IPV4 };

	used = 0;
	chain(INET, "t", "sub", -1);
	chain(INET, "t", "viamap", -1);
	chain(INET, "t", "deep", -1);
	chain(INET, "t", "lonely", -1);
	chain(INET, "t", "input", NF_INET_LOCAL_IN);
	chain(INET, "t", "output", NF_INET_LOCAL_OUT);
	chain(IP, "t4", "input", NF_INET_LOCAL_IN);
	vmap(INET, "t", "vm", NFT_SET_MAP, NFT_DATA_VERDICT, 80, "viamap");
	vmap(INET, "t", "__map0", NFT_SET_MAP | NFT_SET_ANONYMOUS | NFT_SET_CONSTANT,
	     NFT_DATA_VERDICT, 6, "deep");
	/* a plain set whose elements say nothing of chains */
	vmap(INET, "t", "ports", 0, 0, 22, NULL);
	rule_begin(INET, "t", "sub", 8, NULL);
	log_(5, "sub"), verdict(NF_DROP, NULL), rule_end();
	rule_begin(INET, "t", "viamap", 9, NULL);
	log_(5, "vm"), verdict(NF_ACCEPT, NULL), rule_end();
	rule_begin(INET, "t", "deep", 10, NULL);
	log_(5, "deep"), verdict(NFT_GOTO, "sub"), rule_end();
	rule_begin(INET, "t", "lonely", 11, NULL);
	log_(5, "lonely"), rule_end();
	rule_begin(INET, "t", "input", 12, "ssh \"in\" \xc3\xa9");
	expr("payload"), expr("cmp"), expr("counter"), log_(5, "in "), verdict(NF_ACCEPT, NULL), rule_end();
	rule_begin(INET, "t", "input", 13, NULL);
	verdict(NFT_JUMP, "sub"), rule_end();
	rule_begin(INET, "t", "input", 14, NULL);
	expr("payload"), expr("cmp"), log_(5, "x"), expr("reject"), rule_end();
	rule_begin(INET, "t", "input", 16, NULL);
	expr("meta"), lookup("__map0"), rule_end();
	rule_begin(INET, "t", "input", 17, NULL);
	expr("payload"), lookup("vm"), rule_end();
	rule_begin(INET, "t", "input", 18, NULL);
	log_(6, "same"), verdict(NFT_CONTINUE, NULL), rule_end();
	rule_begin(INET, "t", "input", 19, NULL);
	log_(6, "same"), rule_end();
	rule_begin(INET, "t", "output", 20, NULL);
	log_(5, "in "), rule_end();
	rule_begin(INET, "t", "output", 21, NULL);
	log_(5, "j"), verdict(NFT_JUMP, "sub"), rule_end();
	rule_begin(IP, "t4", "input", 2, NULL);
	log_(-1, "printk"), rule_end();
	rule_begin(IP, "t4", "input", 3, NULL);
	log_(7, "p\xc3\xa9"), rule_end();
	rule_begin(IP, "t4", "input", 4, NULL);
	log_(7, "v4"), verdict(NFT_RETURN, NULL), rule_end();
	/* a value loaded after the verdict-less log: still no verdict */
	rule_begin(IP, "t4", "input", 5, NULL);
	log_(7, "load"), load(), expr("meta"), rule_end();
	/* a rule of a chain no message named: left out */
	rule_begin(IP, "t4", "nochain", 6, NULL);
	log_(7, "gone"), rule_end();
}

/* Each message of msgs[0..n) to a new reader: the index, or NULL with err. */
static struct sl_rule_index *read_msgs(size_t n, char *err, size_t errlen, int *bad)
{
	struct sl_rule_nl *rn = sl_rule_nl_new();

	*bad = 0;
	for (size_t at = 0; at + NLMSG_HDRLEN <= n;) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)(msgs + at);

		if (sl_rule_nl_msg(rn, nlh, n - at) < 0)
			*bad = 1;
		if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > n - at)
			break;
		at += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	return sl_rule_nl_done(rn, err, errlen);
}

static const char *describe(const struct sl_rule_index *x, uint8_t pf, uint8_t hook,
			    uint16_t group, const char *prefix, char *buf, size_t size)
{
	const struct sl_rule *r = NULL;

	switch (sl_rule_index_find(x, pf, hook, group, prefix, (uint32_t)strlen(prefix), &r)) {
	case SL_RULE_NONE:
		return "";
	case SL_RULE_SHARED:
		return "shared";
	case SL_RULE_ONE:
		break;
	}
	snprintf(buf, size, "%s %s %s #%llu comment=%s verdict=%s", r->family, r->table, r->chain,
		 (unsigned long long)r->handle, r->comment ? r->comment : "-",
		 r->verdict ? r->verdict : "-");
	return buf;
}

/* Every key of a grid finds the same in both indexes. */
static void test_same_as_json(const struct sl_rule_index *nl, const struct sl_rule_index *js)
{
	static const char *const prefixes[] = {"sub", "vm", "deep", "lonely", "in ", "x", "same",
					       "j", "printk", "p\xc3\xa9", "v4", "", "in"};
	static const uint8_t pfs[] = {NFPROTO_IPV4, NFPROTO_IPV6, NFPROTO_INET, NFPROTO_ARP};
	size_t found = 0;

	for (size_t f = 0; f < sizeof(pfs); f++)
		for (uint8_t hook = 0; hook < 6; hook++)
			for (uint16_t g = 0; g < 9; g++)
				for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
					char a[1024], b[1024];
					const char *x = describe(nl, pfs[f], hook, g, prefixes[p], a, sizeof(a));
					const char *y = describe(js, pfs[f], hook, g, prefixes[p], b, sizeof(b));

					CHECK(!strcmp(x, y), "(%d, %d, %d, \"%s\"): netlink \"%s\", JSON \"%s\"",
					      pfs[f], hook, g, prefixes[p], x, y);
					found += *x != '\0';
				}
	/* the grid met them: the two regular chains' hooks, inet's two families, shared keys */
	CHECK(found >= 15, "%zu keys found", found);
}

static void test_rules(const struct sl_rule_index *nl)
{
	char buf[1024];
	struct sl_rule_index *x = (struct sl_rule_index *)nl;
	size_t n = sl_rule_index_count(x);

	/* the JSON's 12, and the rule loading a value */
	CHECK_EQ_U(n, 13);
	CHECK_STREQ(describe(nl, NFPROTO_IPV4, 1, 7, "load", buf, sizeof(buf)),
		    "ip t4 input #5 comment=- verdict=-");
	CHECK_STREQ(describe(nl, NFPROTO_IPV4, 1, 7, "gone", buf, sizeof(buf)), "");
	for (size_t i = 0; i < n; i++) {
		const struct sl_rule *r = sl_rule_index_rule(x, i);

		CHECK(strlen(r->table) == r->table_len && strlen(r->chain) == r->chain_len &&
		      strlen(r->family) == r->family_len);
		CHECK(!r->comment || strlen(r->comment) == r->comment_len);
		CHECK(!r->verdict || strlen(r->verdict) == r->verdict_len);
	}
}

/* Cut or damaged messages: refused or read, never read past (ASan in the sanitizer build). */
static void test_damaged(void)
{
	char err[256];
	size_t whole = used;
	int bad;

	for (size_t n = 0; n < whole; n += 3) {
		struct sl_rule_index *x;

		ruleset();
		/* the message cut at n says so: as when the kernel's bytes end there */
		for (size_t at = 0; at + NLMSG_HDRLEN <= whole;) {
			struct nlmsghdr *nlh = (struct nlmsghdr *)(msgs + at);
			size_t len = nlh->nlmsg_len;

			if (at + len > n && n > at) {
				nlh->nlmsg_len = (uint32_t)(n - at);
				break;
			}
			at += NLMSG_ALIGN(len);
		}
		x = read_msgs(n, err, sizeof(err), &bad);
		CHECK(x || err[0]);
		CHECK(!x == !!bad, "cut at %zu: index %p, a message refused %d", n, (void *)x, bad);
		sl_rule_index_free(x);
	}
	/* a byte flipped anywhere */
	for (size_t i = 0; i < whole; i += 7) {
		struct sl_rule_index *x;

		ruleset();
		msgs[i] ^= 0x5a;
		x = read_msgs(used, err, sizeof(err), &bad);
		CHECK(x || err[0]);
		sl_rule_index_free(x);
	}
}

int main(void)
{
	char err[256] = "";
	struct sl_rule_index *js = sl_rule_index_from_json(listing, strlen(listing), err, sizeof(err));
	struct sl_rule_index *nl;
	int bad;

	CHECK(js != NULL, "%s", err);
	ruleset();
	nl = read_msgs(used, err, sizeof(err), &bad);
	CHECK(nl != NULL && !bad, "%s", err);
	if (getenv("SLUICE_RULE_NL_SEED")) {	/* fuzz/corpus/rule_nl's seed */
		FILE *f = fopen(getenv("SLUICE_RULE_NL_SEED"), "wbx");

		CHECK(f && fwrite(msgs, 1, used, f) == used && fclose(f) == 0);
	}
	if (!js || !nl)
		return check_summary("test_rule_index_nl");
	test_same_as_json(nl, js);
	test_rules(nl);
	test_damaged();
	sl_rule_index_free(nl);
	sl_rule_index_free(js);
	return check_summary("test_rule_index_nl");
}
