#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Offline, an output on its own thread: replay (tests/data/eth-mixed.pcap
# 20,000 times: 800,000 records) -> decode -> logline -> file.
#  A. `thread: true` and no when_full: below a finite input the default is
#     `block` (sluice -t says so), so the file is byte for byte the file the
#     same stack writes without a thread: every record, none twice, in
#     order.
#  B. `when_full: drop, queue: 2` into a FIFO whose reader sleeps 1 s
#     before it reads: the writing thread blocks, the queue refuses
#     batches, and every refused record is counted: in = out + dropped,
#     dropped = queue_dropped > 0, the reader gets exactly `out` lines, all
#     of them lines of A.
#  C. pcap (linktype nflog: every metadata field it knows; ethernet: the
#     rebuilt link header, MACs and VLAN tags) on its own thread: its
#     queue copies only the fields pcap declares it reads, and the file is
#     byte for byte the file written without a thread.
. "$(dirname "$0")/lib.sh"
need_cmd python3 cmp
CAP="$SRCDIR/tests/data/eth-mixed.pcap"
[ -f "$CAP" ] || skip "no $CAP"
LOOP=20000
want=$((40 * LOOP))

run() {	# run NAME FILE-KEYS
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP", loop: $LOOP}, decode, logline,
      {plugin: file, file: "$WORK/$1.log"$2}]
YAML
	"$SLUICE" -t -c "$WORK/$1.yaml" >"$WORK/$1.tree" || fail "$1: sluice -t failed"
	"$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.out" 2>&1 || { cat "$WORK/$1.out"; fail "$1: sluice failed"; }
	grep "counters: s.file" "$WORK/$1.out"
}
counter() { grep "counters: $2 (" "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$3=\([0-9]*\)$/\1/p"; }

run plain ""
[ "$(wc -l <"$WORK/plain.log")" = "$want" ] || fail "without a thread: $(wc -l <"$WORK/plain.log") lines, expected $want"

run a ", thread: true"
grep -q "s.file (.*; own thread, queue 64 batches, when_full block)" "$WORK/a.tree" ||
	{ cat "$WORK/a.tree"; fail "sluice -t does not show when_full block below replay"; }
cmp "$WORK/plain.log" "$WORK/a.log" || fail "the threaded file differs from the file written without a thread"
[ "$(counter "$WORK/a.out" s.file dropped)" = 0 ] || fail "A dropped records"

mkfifo "$WORK/b.fifo"
python3 - "$WORK" <<'PY' &
import os, sys, time
w = sys.argv[1]
fd = os.open(w + "/b.fifo", os.O_RDONLY | os.O_NONBLOCK)   # so sluice can open it
os.set_blocking(fd, True)
open(w + "/b.ready", "w").close()
time.sleep(1)                                              # the stalled sink
with open(w + "/b.log", "wb") as out:
    while True:
        b = os.read(fd, 1 << 16)
        if not b:
            break
        out.write(b)
PY
RX=$!
at_exit "kill $RX"
wait_for 10 test -e "$WORK/b.ready" || fail "reader did not start"
cat >"$WORK/b.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP", loop: $LOOP}, decode, logline,
      {plugin: file, file: "$WORK/b.fifo", thread: true, when_full: drop, queue: 2}]
YAML
"$SLUICE" -c "$WORK/b.yaml" >"$WORK/b.out" 2>&1 || { cat "$WORK/b.out"; fail "b: sluice failed"; }
wait "$RX" || fail "reader failed"
in=$(counter "$WORK/b.out" s.file in) out=$(counter "$WORK/b.out" s.file out)
dropped=$(counter "$WORK/b.out" s.file dropped) qd=$(counter "$WORK/b.out" s.file queue_dropped)
lines=$(wc -l <"$WORK/b.log")
echo "B: in=$in out=$out dropped=$dropped queue_dropped=$qd lines=$lines"
[ "$in" = "$want" ] || fail "B: in=$in, replay read $want"
[ $((out + dropped)) = "$in" ] || fail "B: in=$in != out=$out + dropped=$dropped"
[ "$dropped" = "$qd" ] && [ "$qd" -gt 0 ] || fail "B: dropped=$dropped, queue_dropped=$qd (expected equal and > 0)"
[ "$lines" = "$out" ] || fail "B: the file has $lines lines, out=$out"
python3 - "$WORK/plain.log" "$WORK/b.log" <<'PY' || fail "B: a line that A does not have"
import sys
a = set(open(sys.argv[1], "rb"))
sys.exit(0 if all(l in a for l in open(sys.argv[2], "rb")) else 1)
PY
for c in nflog-mixed:nflog eth-vlan:ethernet sll2-mixed:nflog; do
	cap=${c%%:*} lt=${c#*:}
	[ -f "$SRCDIR/tests/data/$cap.pcap" ] || fail "no tests/data/$cap.pcap"
	for t in false true; do
		cat >"$WORK/c.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$SRCDIR/tests/data/$cap.pcap", loop: 50}, decode,
      {plugin: pcap, file: "$WORK/c-$t.pcap", linktype: $lt, thread: $t}]
YAML
		"$SLUICE" -c "$WORK/c.yaml" >"$WORK/c.out" 2>&1 || { cat "$WORK/c.out"; fail "C: sluice failed"; }
	done
	[ "$(stat -c %s "$WORK/c-true.pcap")" -gt 24 ] || fail "C: $cap: empty pcap"
	cmp "$WORK/c-false.pcap" "$WORK/c-true.pcap" ||
		fail "C: $cap as $lt: the threaded pcap differs from the one written without a thread"
done
pass "$want records: threaded file == unthreaded file (block below replay); with drop: $out written + $dropped dropped (= queue_dropped)"
