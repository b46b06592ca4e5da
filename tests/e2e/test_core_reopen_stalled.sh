#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `sluice reopen` while an output on a thread of its own is stuck: its
# file is a FIFO whose reader has stopped reading (a stalled log shipper),
# so the thread blocks in write() and cannot take the reopen queued after
# its batches.  The answer must not wait for it forever: `sluice reopen`
# exits 1 naming that output ("no answer from its thread within 3 s"),
# the output on the main thread is not named (its reopen worked), and the
# daemon keeps answering (`sluice stats`) and writing the other file while
# the thread is still stuck.  Then the reader reads again: the thread
# catches up, and SIGTERM ends the daemon with status 0.
. "$(dirname "$0")/lib.sh"
need_cmd python3
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
SOCK="$WORK/ctl"
mkfifo "$WORK/slow.fifo"

# The reader: holds the FIFO open without reading until WORK/go, then
# reads until WORK/stop.
python3 - "$WORK" <<'PY' &
import os, sys, time
work = sys.argv[1]
fd = os.open(work + "/slow.fifo", os.O_RDONLY | os.O_NONBLOCK)
open(work + "/rx.ready", "w").close()
while not os.path.exists(work + "/go"):
    time.sleep(0.01)
while True:
    try:
        b = os.read(fd, 1 << 16)
    except BlockingIOError:
        b = None
    if not b:
        if b == b"" and os.path.exists(work + "/stop"):
            break       # no writer left, and the daemon is gone
        time.sleep(0.01)
PY
RX_PID=$!
at_exit "kill $RX_PID"
wait_for 10 test -e "$WORK/rx.ready" || fail "the reader did not start"

cat >"$WORK/s.yaml" <<YAML
daemon: {control_socket: $SOCK}
instances:
  src: {plugin: gen, count: -1, per_tick: 200, interval: 10ms}
  slow: {plugin: file, file: "$WORK/slow.fifo", thread: true, flush_interval: 50ms}
  fast: {plugin: file, file: "$WORK/fast.log", flush_interval: 50ms}
stacks:
  a: [src, slow]
  b: [src, fast]
YAML
run_sluice_bg "$WORK/err" -c "$WORK/s.yaml"
wait_for 10 test -S "$SOCK" || fail "no control socket: $(cat "$WORK/err")"
# stuck: the output's thread sleeps in the kernel's pipe write (the pipe is full)
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

RC=0
"$SLUICE" reopen --socket "$SOCK" >"$WORK/op.out" 2>"$WORK/op.err" || RC=$?
ERRS=$(cat "$WORK/op.err")
echo "reopen: exit $RC; $ERRS"
[ "$RC" = 1 ] || fail "reopen with a stuck thread: exit $RC: $(cat "$WORK/op.out") $ERRS"
grep -qx "1 output not reopened:" <<<"$ERRS" || fail "not one output named: $ERRS"
grep -qx "slow: no answer from its thread within 3 s (see the log)" <<<"$ERRS" ||
	fail "the stuck output is not named: $ERRS"
! grep -q "^fast:" <<<"$ERRS" || fail "the main thread's output is named: $ERRS"

# The main loop runs on while the thread is stuck.
SIZE=$(stat -c %s "$WORK/fast.log")
bigger() { [ "$(stat -c %s "$WORK/fast.log")" -gt "$SIZE" ]; }
wait_for 10 bigger || fail "fast.log stopped growing"
"$SLUICE" stats --socket "$SOCK" >/dev/null || fail "stats while the thread is stuck"
[ ! -e "$WORK/go" ] || fail "the reader was let go too early"

stuck || fail "the output was no longer stuck when the answer came"
touch "$WORK/go"
wait_for 10 eval '! stuck' || fail "the output did not go on"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "the daemon exited with status $?: $(tail "$WORK/err")"
touch "$WORK/stop"
wait "$RX_PID" || true
pass "reopen answered in time (exit 1) naming the stuck output; the main loop went on"
