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

# A reload that puts a kept retag behind a new fan-out: from then on its
# writes are refused and counted (alone in its stack they stood, as no
# other stack could see them).
cat >"$WORK/r.yaml" <<CONF
daemon: { control_socket: $WORK/ctl }
instances:
  in: { plugin: replay, file: $CAP, pace: original, loop: 0 }
stacks:
  a: [in, retag, { plugin: csv, file: $WORK/ra.csv, fields: [prefix], header: false }]
CONF
run_sluice_bg "$WORK/r.log" -c "$WORK/r.yaml"
rewritten() { [ "$(grep -c REWRITTEN "$WORK/$1" 2>/dev/null)" -ge "$2" ]; }
wait_for 30 rewritten ra.csv 1 || fail "retag alone in its stack: nothing written: $(cat "$WORK/r.log")"
echo "  b: [in, { plugin: csv, file: $WORK/rb.csv, fields: [prefix], header: false }]" >>"$WORK/r.yaml"
"$SLUICE" reload --socket "$WORK/ctl" >"$WORK/reload.out" 2>&1 || fail "reload failed: $(cat "$WORK/reload.out")"
grep -q "3 kept, 1 added, 0 removed" "$WORK/reload.out" || fail "reload: $(cat "$WORK/reload.out")"
lines() { [ "$(wc -l <"$WORK/$1" 2>/dev/null || echo 0)" -ge "$2" ]; }
wait_for 60 lines rb.csv 40 || fail "the added stack got $(wc -l <"$WORK/rb.csv") records"
"$SLUICE" stats --json --socket "$WORK/ctl" >"$WORK/stats.json" || fail "stats failed"
kill "$SLUICE_PID"
[ "$(grep -c REWRITTEN "$WORK/rb.csv")" = 0 ] || fail "after the reload the added stack saw retag's prefix"
python3 - "$WORK/stats.json" "$(wc -l <"$WORK/rb.csv")" <<'PY' || fail "retag's refusals after the reload not counted"
import json, sys
inst = {i["name"]: i for i in json.load(open(sys.argv[1]))["instances"]}
n = inst["a.retag"]["counters"].get("undeclared_writes", 0)
assert n >= int(sys.argv[2]) - 40 and n > 0, (n, sys.argv[2])
PY
pass "40 of 40 records keep their prefix in both stacks; 40 refusals counted; and after a reload"
