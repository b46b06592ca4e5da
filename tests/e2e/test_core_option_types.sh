#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The option macros check the member's C type and SL_FIELD_DECL the field
# id at compile time: a right table compiles; each wrong one must not, and
# must fail with the message that names the problem.
. "$(dirname "$0")/lib.sh"
CC=${CC:-cc}
need_cmd "$CC"

compile() {	# compile ROWS: the table body, with the struct below
	cat >"$WORK/t.c" <<C
#include <sluice/plugin.h>
struct cfg {
	int64_t i64; uint64_t u64; int e; bool b; const char *s; char *mut; struct sl_strlist l;
};
static const char *const ch[] __attribute__((unused)) = {"a", NULL};
const struct sl_option table[] = { $1, SL_OPT_END };
const struct sl_field_decl fields[] = { SL_FIELD_DECL(SL_F_PREFIX), SL_FIELD_END };
$2
C
	"$CC" -std=gnu11 -Wall -Wextra -Werror -I"$SRCDIR/core/include" -c "$WORK/t.c" -o "$WORK/t.o" \
		>"$WORK/cc.log" 2>&1
}

compile 'SL_OPT_INT("a", struct cfg, i64, "1", 0, 9, "d"), SL_OPT_SIZE("b", struct cfg, u64, "1k", 0, 0, "d"),
	SL_OPT_DURATION("c", struct cfg, u64, "1s", 0, 0, "d"), SL_OPT_ENUM("d", struct cfg, e, "a", ch, "d"),
	SL_OPT_BOOL("e", struct cfg, b, "true", "d"), SL_OPT_STR("f", struct cfg, s, SL_REQUIRED, "d"),
	SL_OPT_LIST("g", struct cfg, l, "[a, b]", "d")' '' ||
	fail "a correct table does not compile: $(cat "$WORK/cc.log")"

n=0
while IFS='|' read -r row want; do
	[ -n "$row" ] || continue
	compile "$row" '' && fail "compiled, but must not: $row"
	grep -qF "$want" "$WORK/cc.log" || fail "$row: no '$want' in: $(cat "$WORK/cc.log")"
	n=$((n + 1))
done <<'ROWS'
SL_OPT_INT("a", struct cfg, e, "1", 0, 9, "an int declared as a 64-bit option")|option member e must be of type int64_t
SL_OPT_ENUM("a", struct cfg, i64, "a", ch, "an int64_t as an enum")|option member i64 must be of type int
SL_OPT_SIZE("a", struct cfg, i64, "1k", 0, 0, "signed size")|option member i64 must be of type uint64_t
SL_OPT_DURATION("a", struct cfg, e, "1s", 0, 0, "an int duration")|option member e must be of type uint64_t
SL_OPT_BOOL("a", struct cfg, e, "true", "an int bool")|option member e must be of type _Bool
SL_OPT_STR("a", struct cfg, mut, NULL, "char * is not const char *")|option member mut must be of type const char *
SL_OPT_LIST("a", struct cfg, s, "[a]", "a string as a list")|option member s must be of type struct sl_strlist
ROWS
compile 'SL_OPT_BOOL("a", struct cfg, b, "true", "d")' \
	'const struct sl_field_decl typo[] = { SL_FIELD_DECL(SL_F_PREFX), SL_FIELD_END };' &&
	fail "a misspelt field id compiled"
grep -q "SL_F_PREFX" "$WORK/cc.log" || fail "no error naming SL_F_PREFX: $(cat "$WORK/cc.log")"
echo "$n wrong option rows and one wrong field id refused"
pass
