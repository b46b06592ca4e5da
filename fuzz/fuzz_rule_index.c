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
#include "rule_index_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct sl_rule_index *ix = sl_rule_index_from_json((const char *)data, size, err, sizeof(err));

	if (!ix) {
		if (!err[0])
			abort();
		return 0;
	}
	rule_index_check(ix);
	return 0;
}
