/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The rule index (plugins/common/rule_index.c) built from nft's JSON
 * listing of a ruleset made for it (nft 1.0.6's `nft -j -a list ruleset`,
 * the comment of rule 12 edited to hold escapes): statements keyed by the
 * hooks of base chains and of the base chains that reach a regular chain
 * (jump, goto, anonymous and named verdict maps, through two chains), one
 * key per packet family of an inet table, keys two rules share, the
 * verdicts, comments, printk statements left out, malformed listings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter.h>

#include "check.h"
#include "rule_index.h"

#include "rule_listing.h"

static struct sl_rule_index *ix;

/* The rule (pf, hook, group, prefix) finds: "inet t input #12", "" for none, "shared". */
static const char *who(uint8_t pf, uint8_t hook, uint16_t group, const char *prefix)
{
	static char buf[512];
	const struct sl_rule *r = NULL;

	switch (sl_rule_index_find(ix, pf, hook, group, prefix, (uint32_t)strlen(prefix), &r)) {
	case SL_RULE_NONE:
		return "";
	case SL_RULE_SHARED:
		return "shared";
	case SL_RULE_ONE:
		break;
	}
	snprintf(buf, sizeof(buf), "%s %s %s #%llu", r->family, r->table, r->chain,
		 (unsigned long long)r->handle);
	return buf;
}

#define CHECK_WHO(pf, hook, group, prefix, want)                                       \
	do {                                                                           \
		const char *got_ = who(pf, hook, group, prefix);                       \
		CHECK(!strcmp(got_, want), "(%d, %d, %d, \"%s\"): \"%s\", want \"%s\"", \
		      pf, hook, group, prefix, got_, want);                            \
	} while (0)

static const struct sl_rule *one(uint8_t pf, uint8_t hook, uint16_t group, const char *prefix)
{
	const struct sl_rule *r = NULL;

	if (sl_rule_index_find(ix, pf, hook, group, prefix, (uint32_t)strlen(prefix), &r) !=
	    SL_RULE_ONE)
		return NULL;
	return r;
}

static char shared_lines[4096];

static void collect(void *arg, const char *line)
{
	size_t *n = arg;

	*n += (size_t)snprintf(shared_lines + *n, sizeof(shared_lines) - *n, "%s\n", line);
}

static void test_keys(void)
{
	enum { V4 = NFPROTO_IPV4, V6 = NFPROTO_IPV6, IN = 1, OUT = 3, FWD = 2 };

	/* the same group and prefix in the input and the output chain: told apart by the hook */
	CHECK_WHO(V4, IN, 5, "in ", "inet t input #12");
	CHECK_WHO(V6, IN, 5, "in ", "inet t input #12");
	CHECK_WHO(V4, OUT, 5, "in ", "inet t output #20");
	CHECK_WHO(V6, OUT, 5, "in ", "inet t output #20");
	CHECK_WHO(V4, FWD, 5, "in ", "");
	CHECK_WHO(V4, IN, 4, "in ", "");
	CHECK_WHO(V4, IN, 5, "in", "");
	/* a regular chain jumped to from both base chains, and gone to from a chain jumped to */
	CHECK_WHO(V4, IN, 5, "sub", "inet t sub #8");
	CHECK_WHO(V4, OUT, 5, "sub", "inet t sub #8");
	CHECK_WHO(V4, FWD, 5, "sub", "");
	CHECK_WHO(V4, IN, 5, "deep", "inet t deep #10");
	CHECK_WHO(V4, OUT, 5, "deep", "");
	/* through the named verdict map @vm */
	CHECK_WHO(V6, IN, 5, "vm", "inet t viamap #9");
	CHECK_WHO(V6, OUT, 5, "vm", "");
	/* nothing reaches it */
	CHECK_WHO(V4, IN, 5, "lonely", "");
	CHECK_WHO(V4, OUT, 5, "lonely", "");
	/* two rules with the same key */
	CHECK_WHO(V4, IN, 6, "same", "shared");
	CHECK_WHO(V6, IN, 6, "same", "shared");
	/* an ip table: IPv4 only; a printk log statement is not a key */
	CHECK_WHO(V4, IN, 7, "v4", "ip t4 input #4");
	CHECK_WHO(V6, IN, 7, "v4", "");
	CHECK_WHO(V4, IN, 7, "p\xc3\xa9", "ip t4 input #3");
	CHECK_WHO(V4, IN, 0, "printk", "");
	CHECK_EQ_U(sl_rule_index_count(ix), 12);
}

static void test_rules(void)
{
	const struct sl_rule *r;

	CHECK((r = one(NFPROTO_IPV4, 1, 5, "in ")) != NULL);
	if (r) {
		CHECK(r->comment && !strcmp(r->comment, "ssh \"in\" \xc3\xa9"), "%s", r->comment);
		CHECK_EQ_U(r->comment_len, strlen("ssh \"in\" \xc3\xa9"));
		CHECK(r->verdict && !strcmp(r->verdict, "accept"));
		CHECK_EQ_U(r->verdict_len, 6);
		CHECK(!strcmp(r->family, "inet") && r->family_len == 4);
		CHECK(!strcmp(r->table, "t") && r->table_len == 1);
		CHECK(!strcmp(r->chain, "input") && r->chain_len == 5);
		CHECK_EQ_U(r->handle, 12);
	}
	CHECK((r = one(NFPROTO_IPV4, 1, 5, "sub")) && r->verdict && !strcmp(r->verdict, "drop") &&
	      !r->comment);
	CHECK((r = one(NFPROTO_IPV4, 1, 5, "x")) && r->verdict && !strcmp(r->verdict, "reject"));
	CHECK((r = one(NFPROTO_IPV4, 1, 5, "deep")) && r->verdict &&
	      !strcmp(r->verdict, "goto sub"));
	CHECK((r = one(NFPROTO_IPV4, 3, 5, "j")) && r->verdict && !strcmp(r->verdict, "jump sub") &&
	      r->verdict_len == 8);
	/* no verdict, return: none */
	CHECK((r = one(NFPROTO_IPV4, 3, 5, "in ")) && !r->verdict && r->verdict_len == 0);
	CHECK((r = one(NFPROTO_IPV4, 1, 7, "v4")) && !r->verdict);
}

static void test_shared(void)
{
	size_t len = 0;

	CHECK_EQ_U(sl_rule_index_shared(ix, 5, collect, &len), 0);
	CHECK_EQ_U(len, 0);
	CHECK_EQ_U(sl_rule_index_shared(ix, 6, collect, &len), 2);
	CHECK(strstr(shared_lines, "group 6 prefix \"same\" (ipv4 input): inet t input #18, inet t input #19\n") ||
	      strstr(shared_lines, "group 6 prefix \"same\" (ipv4 input): inet t input #19, inet t input #18\n"),
	      "%s", shared_lines);
	CHECK(strstr(shared_lines, "(ipv6 input)"), "%s", shared_lines);
	CHECK_EQ_U(sl_rule_index_shared(ix, -1, collect, &len), 2);
}

static void test_same(void)
{
	char err[256];
	struct sl_rule_index *again = sl_rule_index_from_json(listing, strlen(listing), err, sizeof(err));
	const struct sl_rule *a = one(NFPROTO_IPV4, 1, 5, "in "), *b = NULL, *c = one(NFPROTO_IPV4, 3, 5, "in ");

	CHECK(again != NULL, "%s", err);
	if (!again || !a || !c)
		return;
	CHECK_EQ_U(sl_rule_index_find(again, NFPROTO_IPV4, 1, 5, "in ", 3, &b), SL_RULE_ONE);
	CHECK(b != a && sl_rule_same(a, b));
	CHECK(!sl_rule_same(a, c));
	sl_rule_index_free(again);
}

static void test_malformed(void)
{
	static const char *const bad[] = {
		"",
		"{",
		"[]",
		"{\"nftables\": [",
		"{\"nftables\": [{\"rule\": {\"family\": \"inet\", \"expr\": [}}]}",
		"{\"nftables\": []} x",
		"{\"other\": []}",
		"{\"nftables\": [{\"table\": {\"name\": \"a\\u12\"}}]}",
		"{\"nftables\": [{\"table\": {\"name\": \"a\" \"b\": 1}}]}",
		"{\"nftables\": [{\"table\": {\"name\": \"a\",}}]}",
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sl_rule_index *x;

		err[0] = '\0';
		x = sl_rule_index_from_json(bad[i], strlen(bad[i]), err, sizeof(err));
		CHECK(!x && err[0], "listing %zu: %s", i, err);
		sl_rule_index_free(x);
	}
	/* every cut of the listing: refused, never read past */
	for (size_t n = 0; n + 1 < strlen(listing); n++) {
		char *cut = malloc(n ? n : 1);
		struct sl_rule_index *x;

		memcpy(cut, listing, n);
		x = sl_rule_index_from_json(cut, n, err, sizeof(err));
		CHECK(!x, "cut at %zu accepted", n);
		sl_rule_index_free(x);
		free(cut);
	}
	/* empty ruleset */
	{
		const char *e = "{\"nftables\": [{\"metainfo\": {\"version\": \"1.0.6\"}}]}";
		struct sl_rule_index *x = sl_rule_index_from_json(e, strlen(e), err, sizeof(err));
		const struct sl_rule *r;

		CHECK(x != NULL);
		if (x) {
			CHECK_EQ_U(sl_rule_index_find(x, NFPROTO_IPV4, 1, 5, "", 0, &r), SL_RULE_NONE);
			CHECK_EQ_U(sl_rule_index_count(x), 0);
		}
		sl_rule_index_free(x);
	}
}

int main(void)
{
	char err[256] = "";

	ix = sl_rule_index_from_json(listing, strlen(listing), err, sizeof(err));
	CHECK(ix != NULL, "%s", err);
	if (!ix)
		return 1;
	test_keys();
	test_rules();
	test_shared();
	test_same();
	test_malformed();
	sl_rule_index_free(ix);
	printf("%d checks, %d failed\n", checks, failures);
	return failures != 0;
}
