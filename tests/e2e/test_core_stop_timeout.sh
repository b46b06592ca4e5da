#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The stop deadline (daemon.stop_timeout, issue 19).  One input feeds two
# outputs on threads of their own: `slow` writes into a FIFO whose reader
# holds it open and never reads (its thread blocks in write(), its queue
# fills), `fast` into a regular file.  On SIGTERM the daemon must exit by
# itself within stop_timeout (2 s here, times the time factor: the grace
# before it must let `fast` close; the test only checks that it
# exits, within a generous deadline), with status 1 (records were given
# up), the log naming `slow` and how many records it did not flush, the
# counters still balanced (in = out + dropped), and fast.log whole: every
# line complete, as many as `fast` counted out, the last one ending in a
# newline.
. "$(dirname "$0")/lib.sh"
need_cmd python3
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
mkfifo "$WORK/slow.fifo"

python3 - "$WORK" <<'PY' &
import os, sys, time
work = sys.argv[1]
fd = os.open(work + "/slow.fifo", os.O_RDONLY | os.O_NONBLOCK)
open(work + "/rx.ready", "w").close()
while not os.path.exists(work + "/stop"):
    time.sleep(0.05)
PY
RX_PID=$!
at_exit "touch $WORK/stop; kill $RX_PID"
wait_for 10 test -e "$WORK/rx.ready" || fail "the reader did not start"

cat >"$WORK/s.yaml" <<YAML
daemon: {stop_timeout: $((2 * TIME_FACTOR))s}
instances:
  src: {plugin: gen, count: -1, per_tick: 100, interval: 5ms}
  slow: {plugin: file, file: "$WORK/slow.fifo", thread: true, queue: 4, flush_interval: 20ms}
  fast: {plugin: file, file: "$WORK/fast.log", thread: true, flush_interval: 20ms}
stacks:
  a: [src, slow]
  b: [src, fast]
YAML
"$SLUICE" -t -c "$WORK/s.yaml" >/dev/null || fail "sluice -t refuses the configuration"
run_sluice_bg "$WORK/err" -c "$WORK/s.yaml"
# stuck: the slow output's thread sleeps in the kernel's pipe write (the pipe is full)
stuck() {
	local t
	for t in /proc/"$SLUICE_PID"/task/*; do
		[ "$(cat "$t/comm" 2>/dev/null)" = "sl:slow" ] &&
			[[ "$(cat "$t/wchan" 2>/dev/null)" == *pipe_write* ]] && return 0
	done
	return 1
}
if ! wait_for 20 stuck; then
	wchan=$(cat /proc/"$SLUICE_PID"/task/*/wchan 2>/dev/null | tr '\n' ' ')
	[[ "$wchan" =~ [a-z] ]] || skip "/proc/PID/task/*/wchan names no kernel function here ($wchan)"
	fail "the output never blocked on the full FIFO ($wchan): $(cat "$WORK/err")"
fi
grown() { [ -s "$WORK/fast.log" ]; }
wait_for 10 grown || fail "fast.log stays empty"
# Its queue full (it drops under when_full: drop), as it stays: the thread is stuck.
full() {
	kill -USR1 "$SLUICE_PID"
	grep "counters: slow (" "$WORK/err" | tail -1 | grep -q " queue_dropped=[1-9]"
}
wait_for 20 full || fail "the stuck output's queue never filled: $(tail -3 "$WORK/err")"

kill -TERM "$SLUICE_PID"
gone() { ! kill -0 "$SLUICE_PID" 2>/dev/null; }
wait_for 30 gone || fail "SIGTERM did not end the daemon within daemon.stop_timeout: $(tail -5 "$WORK/err")"
RC=0
wait "$SLUICE_PID" || RC=$?
cat "$WORK/err"
[ "$RC" = 1 ] || fail "exit status $RC when records were given up at the stop deadline, expected 1"
L="$WORK/err"
line=$(grep "slow: still busy at the stop deadline (daemon.stop_timeout): " "$L") ||
	fail "the log does not name the stuck output"
lost=$(sed -n 's/.*: \([0-9]*\) records not flushed.*/\1/p' <<<"$line")
[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "no count of the records not flushed: $line"
counter() { grep "counters: $1 (" "$L" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=\([0-9]*\)$/\1/p"; }
in=$(counter slow in) out=$(counter slow out) dropped=$(counter slow dropped)
[ -n "$in" ] || fail "no counters logged for slow"
[ $((out + dropped)) = "$in" ] || fail "slow: in=$in != out=$out + dropped=$dropped"
[ "$dropped" -ge "$lost" ] || fail "slow: $lost not flushed, but only $dropped counted dropped"

[ "$(tail -c 1 "$WORK/fast.log" | od -An -c | tr -d ' ')" = '\n' ] ||
	fail "fast.log ends inside a line: $(tail -c 40 "$WORK/fast.log" | od -c | tail -3)"
bad=$(grep -cvx 'record [0-9]*' "$WORK/fast.log" || true)
[ "$bad" = 0 ] || fail "fast.log has $bad lines that are not whole records"
lines=$(wc -l <"$WORK/fast.log")
fout=$(counter fast out)
[ "$lines" = "$fout" ] || fail "fast.log has $lines lines, fast counted out=$fout"
pass "TERM with an output stuck on a FIFO: exit 1 at daemon.stop_timeout, slow: $lost records not flushed (in=$in out=$out dropped=$dropped); fast.log whole ($lines lines)"
