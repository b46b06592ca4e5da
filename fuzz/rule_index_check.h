/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What fuzz_rule_index and fuzz_rule_nl check of an index their reader
 * built, whichever way it was read: every rule's strings whole (their
 * lengths as said), every lookup over a grid of (family, hook, group,
 * prefix) answering a whole rule, and the shared keys' log lines not
 * empty.  Aborts on a violation; frees ix.
 */
#ifndef SLUICE_FUZZ_RULE_INDEX_CHECK_H
#define SLUICE_FUZZ_RULE_INDEX_CHECK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rule_index.h"

static void rule_index_check_line(void *arg, const char *l)
{
	(void)arg;
	if (!*l)
		abort();
}

static void rule_index_check_rule(const struct sl_rule *r)
{
	if (!r->table || !r->chain || !r->family || strlen(r->table) != r->table_len ||
	    strlen(r->chain) != r->chain_len || (r->comment && strlen(r->comment) != r->comment_len) ||
	    (r->verdict && strlen(r->verdict) != r->verdict_len))
		abort();
}

static void rule_index_check(struct sl_rule_index *ix)
{
	static const char *const prefixes[] = {"", "in ", "sub", "x"};

	for (size_t i = 0; i < sl_rule_index_count(ix); i++)
		rule_index_check_rule(sl_rule_index_rule(ix, i));
	for (uint8_t pf = 0; pf < 13; pf++)
		for (uint8_t hook = 0; hook < 6; hook++)
			for (size_t p = 0; p < 4; p++)
				for (uint16_t g = 0; g < 8; g++) {
					const struct sl_rule *r = NULL;

					if (sl_rule_index_find(ix, pf, hook, g, prefixes[p],
							       (uint32_t)strlen(prefixes[p]), &r) ==
					    SL_RULE_ONE)
						rule_index_check_rule(r);
				}
	sl_rule_index_shared(ix, -1, rule_index_check_line, NULL);
	sl_rule_index_free(ix);
}

#endif
