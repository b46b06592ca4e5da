#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No C file in core/ or plugins/ over 1,000 lines (issue 20): a file that
# long holds more than one concern, and the next change to it should split
# it.  Counted as `wc -l` does; the check is shown to see a long file by a
# made-up one in a copy of the tree.
. "$(dirname "$0")/lib.sh"
MAX=1000

long_files() {	# DIR: "LINES PATH" of each .c over MAX, longest first
	find "$1/core" "$1/plugins" -name '*.c' -print0 | xargs -0 wc -l |
		awk -v max=$MAX '$2 != "total" && $1 > max { print $1, $2 }' | sort -rn
}

long=$(long_files "$SRCDIR")
[ -z "$long" ] || fail "C files over $MAX lines (split them by concern):
$long"

mkdir -p "$WORK/tree/core" "$WORK/tree/plugins"
seq 1 $((MAX + 1)) | sed 's/^/int x/' >"$WORK/tree/plugins/long.c"
seq 1 $MAX | sed 's/^/int y/' >"$WORK/tree/core/just.c"
got=$(long_files "$WORK/tree")
[ "$got" = "$((MAX + 1)) $WORK/tree/plugins/long.c" ] ||
	fail "the check does not see a made-up file of $((MAX + 1)) lines alone: '$got'"
pass "no C file in core/ or plugins/ is over $MAX lines"
