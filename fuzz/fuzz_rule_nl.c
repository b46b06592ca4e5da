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
#include "rule_index_check.h"
#include "rule_index_nl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
	rule_index_check(ix);
	return 0;
}
