#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One naming dialect per floor (issue 20): plugins/common exports sl_*
# (functions and variables of its .c files; macros, tags and static inlines
# of its public headers), core/src/<folder>/<module>.c exports <module>_*
# or its documented exceptions (dialect.py says the rules), and no name
# tools/dev/rename_dialect.py renamed is spelled the old way again.  Copies
# of the tree with a made-up helper show the check sees a breach on each floor.
. "$(dirname "$0")/lib.sh"
need_cmd python3
dialect="$(dirname "$0")/dialect.py"
python3 "$dialect" "$SRCDIR" || fail "a name breaks the naming dialect (above)"
python3 "$SRCDIR/tools/dev/rename_dialect.py" --check "$SRCDIR" ||
	fail "a name tools/dev/rename_dialect.py renamed is back (run it)"

made_up() { # FILE TEXT: a copy of the tree with TEXT appended to FILE
	rm -rf "$WORK/tree"
	mkdir -p "$WORK/tree"
	cp -r "$SRCDIR/core" "$SRCDIR/plugins" "$WORK/tree/"
	printf '%s\n' "$2" >>"$WORK/tree/$1"
}
made_up plugins/common/fmt.c 'int fmt_extra(void) { return 0; }'
python3 "$dialect" "$WORK/tree" >"$WORK/out" 2>/dev/null && fail "an exported fmt_extra() in plugins/common passed"
grep -qx 'plugins/common/fmt.c: function fmt_extra is not sl_\*' "$WORK/out" ||
	fail "fmt_extra() not reported as such: $(cat "$WORK/out")"
made_up plugins/common/fmt.c 'static int fmt_extra(void) { return 0; }'
python3 "$dialect" "$WORK/tree" >"$WORK/out" 2>/dev/null || fail "a static helper was reported: $(cat "$WORK/out")"
made_up plugins/common/tls_stream.h '#define TLS_EXTRA 1'
python3 "$dialect" "$WORK/tree" >"$WORK/out" 2>/dev/null && fail "a TLS_EXTRA macro in a public header passed"
grep -qx 'plugins/common/tls_stream.h: macro TLS_EXTRA is not SL_\*' "$WORK/out" ||
	fail "TLS_EXTRA not reported as such: $(cat "$WORK/out")"
made_up core/src/runtime/queue.c 'int bq_extra; void bq_more(void) { }'
python3 "$dialect" "$WORK/tree" >"$WORK/out" 2>/dev/null && fail "bq_more() in queue.c passed"
grep -qx 'core/src/runtime/queue.c: function bq_more is not queue_\*' "$WORK/out" &&
	grep -qx 'core/src/runtime/queue.c: variable bq_extra is not queue_\*' "$WORK/out" ||
	fail "bq_more()/bq_extra not reported as such: $(cat "$WORK/out")"
pass "plugins/common exports sl_* names, every core module its own prefix, and a made-up breach of each is caught"
