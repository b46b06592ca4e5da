#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What a plugin may write (plugin ABI 1.3): the out-of-tree filter retag
# (tests/oot) overwrites `prefix` without declaring it in `provides`.  Two
# stacks behind one replay input: the other stack must show the capture's
# own prefixes (tshark reads them), the write is refused in retag's stack
# too, and every refused write is counted in retag's undeclared_writes
# (one per record) and logged once.  With the refusal gone, the sibling
# stack showed "REWRITTEN" in 40 of 40 records (issue 19).
. "$(dirname "$0")/lib.sh"
need_cmd tshark
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR:$SLUICE_TEST_PLUGIN_DIR/oot"
CAP="$SRCDIR/tests/data/nflog-mixed.pcap"

# csv writes a string quoted: the prefixes as tshark reads them, quoted.
tshark -r "$CAP" -T fields -e nflog.prefix 2>/dev/null | sed 's/.*/"&"/' >"$WORK/want" ||
	fail "tshark cannot read $CAP"
[ "$(wc -l <"$WORK/want")" = 40 ] || fail "expected 40 packets in $CAP"
# retag's stack first: its branch runs before the sibling's.
for thread in false true; do
	cat >"$WORK/c.yaml" <<CONF
instances:
  in: { plugin: replay, file: $CAP }
stacks:
  a: [in, retag, { plugin: csv, file: $WORK/a.csv, fields: [prefix], header: false }]
  b: [in, { plugin: csv, file: $WORK/b.csv, fields: [prefix], header: false, thread: $thread }]
CONF
	"$SLUICE" -c "$WORK/c.yaml" 2>"$WORK/err" || fail "sluice failed: $(cat "$WORK/err")"
	diff "$WORK/want" "$WORK/b.csv" >"$WORK/diff" ||
		fail "the sibling stack (thread: $thread) saw retag's prefix: $(head -5 "$WORK/diff")"
	diff "$WORK/want" "$WORK/a.csv" >"$WORK/diff" ||
		fail "retag's own stack saw the refused write: $(head -5 "$WORK/diff")"
	grep -q "counters: a.retag (retag): in=40 out=40 dropped=0 errors=0 undeclared_writes=40" "$WORK/err" ||
		fail "refusals not counted: $(grep counters "$WORK/err")"
	[ "$(grep -c "a.retag: plugin 'retag' changed field 'prefix', which it does not declare in provides: refused" "$WORK/err")" = 1 ] ||
		fail "refusal not logged once: $(cat "$WORK/err")"
	# A plugin that writes only what it provides is not counted; a
	# threaded output writes into its queue's copy and is not checked.
	line=$(grep "counters: b.csv (csv): in=40 out=40 dropped=0 errors=0 write_failed=0" "$WORK/err") ||
		fail "csv counters (thread: $thread): $(grep counters "$WORK/err")"
	case "$thread $line" in
	"false "*" undeclared_writes=0" | "true "*" queue_high="[0-9]*) ;;
	*) fail "csv counters (thread: $thread): $line" ;;
	esac
done
pass "40 of 40 records keep their prefix in both stacks; 40 refusals counted"
