#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What a plugin may see (plugin ABI 1.3): an output is shown only the
# fields it reads (needs, need_field(), `.reads`), whether it runs on its
# own thread or not.  The out-of-tree output peek (tests/oot) reads only
# `prefix` and writes the names of the fields each record shows it: on
# both, every one of the 40 lines is "prefix", though replay and decode
# set some twenty fields.  Before ABI 1.3 only the threaded one was
# (0/40 vs 40/40 lines with other fields, issue 19).
. "$(dirname "$0")/lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR:$SLUICE_TEST_PLUGIN_DIR/oot"
CAP="$SRCDIR/tests/data/nflog-mixed.pcap"

for thread in false true; do
	cat >"$WORK/c.yaml" <<CONF
stacks:
  s: [{ plugin: replay, file: $CAP }, decode, { plugin: peek, file: $WORK/$thread.txt, thread: $thread }]
CONF
	"$SLUICE" -c "$WORK/c.yaml" 2>"$WORK/err" || fail "sluice failed (thread: $thread): $(cat "$WORK/err")"
	[ "$(wc -l <"$WORK/$thread.txt")" = 40 ] || fail "thread: $thread: $(wc -l <"$WORK/$thread.txt") lines, not 40"
	other=$(grep -cvx prefix "$WORK/$thread.txt" || true)
	[ "$other" = 0 ] ||
		fail "thread: $thread: $other of 40 records showed fields peek does not read: $(grep -vx prefix "$WORK/$thread.txt" | head -1)"
done
pass "40 of 40 records show only what peek reads, threaded or not"
