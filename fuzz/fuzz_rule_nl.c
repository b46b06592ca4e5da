/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as nf_tables' netlink messages of a ruleset
 * dump, one after the other (plugins/common/rule_index_nl.c).  The index
 * they make is looked up with every key of a few prefixes and its shared
 * keys are named; abort() when a found rule lacks a table or chain, when a
 * length disagrees with its string, or when a message was refused and an
 * index was made all the same.  The seed is test_rule_index_nl's ruleset
 * (SLUICE_RULE_NL_SEED=FILE build/tests/test_rule_index_nl writes it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netlink.h>

#include "rule_index.h"
#include "rule_index_nl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void line(void *arg, const char *l)
{
	(void)arg;
	if (!*l)
		abort();
}

static void check(const struct sl_rule *r)
{
	if (!r->table || !r->chain || !r->family || strlen(r->table) != r->table_len ||
	    strlen(r->chain) != r->chain_len || (r->comment && strlen(r->comment) != r->comment_len) ||
	    (r->verdict && strlen(r->verdict) != r->verdict_len))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const prefixes[] = {"", "in ", "sub", "x"};
	struct sl_rule_nl *rn = sl_rule_nl_new();
	struct sl_rule_index *ix;
	/* the messages 4-byte aligned, as a socket's buffer holds them */
	uint32_t *buf = malloc(size + 4);
	char err[256] = "";
	int refused = 0;

	if (!rn || !buf)
		abort();
	memcpy(buf, data, size);
	for (size_t at = 0; at + NLMSG_HDRLEN <= size;) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)((const uint8_t *)buf + at);

		if (sl_rule_nl_msg(rn, nlh, size - at) < 0)
			refused = 1;
		if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > size - at)
			break;
		at += NLMSG_ALIGN(nlh->nlmsg_len);
	}
	ix = sl_rule_nl_done(rn, err, sizeof(err));
	free(buf);
	if (!ix) {
		if (!err[0] || !refused)
			abort();
		return 0;
	}
	if (refused)
		abort();
	for (size_t i = 0; i < sl_rule_index_count(ix); i++)
		check(sl_rule_index_rule(ix, i));
	for (uint8_t pf = 0; pf < 13; pf++)
		for (uint8_t hook = 0; hook < 6; hook++)
			for (size_t p = 0; p < 4; p++)
				for (uint16_t g = 0; g < 8; g++) {
					const struct sl_rule *r = NULL;

					if (sl_rule_index_find(ix, pf, hook, g, prefixes[p],
							       (uint32_t)strlen(prefixes[p]), &r) ==
					    SL_RULE_ONE)
						check(r);
				}
	sl_rule_index_shared(ix, -1, line, NULL);
	sl_rule_index_free(ix);
	return 0;
}
