/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * libFuzzer target: any bytes as nft's JSON listing of a ruleset
 * (plugins/common/rule_index.c).  A listing it accepts is looked up with
 * every key of a few prefixes and its shared keys are named; abort() when
 * a found rule lacks a table or chain, or a length disagrees with its
 * string.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rule_index.h"

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
	char err[256];
	struct sl_rule_index *ix = sl_rule_index_from_json((const char *)data, size, err, sizeof(err));

	if (!ix) {
		if (!err[0])
			abort();
		return 0;
	}
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
