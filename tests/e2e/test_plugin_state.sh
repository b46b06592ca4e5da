#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every plugin's configure() takes its state from sl_state_new()
# (plugins/common/plugin_state.h): plugin_state.py reads each plugin's
# configure() and fails on a state allocated another way, unless the
# plugin is on its ALLOWED list, which only shrinks (an entry whose plugin
# uses sl_state_new() now fails too).  Copies of the tree with a made-up
# hand allocation, and with an ALLOWED plugin converted, show the check
# sees both.
. "$(dirname "$0")/lib.sh"
need_cmd python3
check="$(dirname "$0")/plugin_state.py"
python3 "$check" "$SRCDIR" ||
	fail "a plugin allocates its state without sl_state_new(), or ALLOWED names one that uses it (above)"

# where.c allocating its state with calloc()
mkdir -p "$WORK/tree"
cp -r "$SRCDIR/plugins" "$WORK/tree/"
sed -i 's/= sl_state_new(struct where_state, host, inst, config);$/= calloc(1, sizeof(struct where_state));/' \
	"$WORK/tree/plugins/filter/where.c"
grep -q '= calloc(1, sizeof(struct where_state));$' "$WORK/tree/plugins/filter/where.c" ||
	fail "could not make up the hand allocation"
python3 "$check" "$WORK/tree" >"$WORK/calloc.out" && fail "a state allocated by calloc() passed"
grep -q '^plugins/filter/where.c:[0-9]*: where_configure() assigns its state st from calloc, not sl_state_new()$' \
	"$WORK/calloc.out" || fail "the hand allocation is not reported as one: $(cat "$WORK/calloc.out")"

# an ALLOWED plugin that uses sl_state_new() (where.c's text in its place)
allowed=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import plugin_state as p; print(p.ALLOWED[0] if p.ALLOWED else "")' \
	"$(dirname "$0")")
if [ -n "$allowed" ]; then
	rm -rf "$WORK/tree" && mkdir -p "$WORK/tree"
	cp -r "$SRCDIR/plugins" "$WORK/tree/"
	cp "$SRCDIR/plugins/filter/where.c" "$WORK/tree/$allowed"
	python3 "$check" "$WORK/tree" >"$WORK/stale.out" && fail "a stale ALLOWED entry passed"
	grep -qxF "$allowed uses sl_state_new() now: delete its ALLOWED entry" "$WORK/stale.out" ||
		fail "the stale ALLOWED entry is not reported as one: $(cat "$WORK/stale.out")"
fi
pass "every plugin's state comes from sl_state_new() but ALLOWED's, and each of those still allocates by hand"
