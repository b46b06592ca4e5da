#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Back-pressure stalls the inputs, never the daemon (issue 19).  An input
# on the main thread feeds an output on its own thread with `when_full:
# block, queue: 2`; the output's file is a FIFO whose reader holds it open
# and never reads, so the output's thread blocks in write(), its queue
# fills and the input waits for room.  Meanwhile:
#  - `sluice stats` answers, again and again, showing the full queue and
#    an input that no longer moves (it waits, it is not dropping), and so
#    does /metrics when the metrics module is built;
#  - `sluice reload` answers at once with an error naming the output
#    (a reload cannot run in the middle of a batch), and SIGHUP is put off
#    (logged), not lost or run under the waiting input;
#  - SIGTERM ends the daemon within daemon.stop_timeout (default 10 s):
#    status 1, the log naming the stuck output and the records it did not
#    flush.
# Every client runs under `timeout`: a daemon that went deaf fails the
# test instead of hanging it.
. "$(dirname "$0")/lib.sh"
need_cmd python3 timeout
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
SOCK="$WORK/ctl"
mkfifo "$WORK/slow.fifo"

# The reader: opens the FIFO (so sluice can open it for writing) and never reads.
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

METRICS=
if [ -e "${SLUICE_PLUGIN_PATH%%:*}/metrics_http.so" ]; then
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	METRICS=", metrics: {listen: \"127.0.0.1:$PORT\"}"
fi
cat >"$WORK/s.yaml" <<YAML
daemon: {control_socket: $SOCK$METRICS}
instances:
  src: {plugin: gen, count: -1, per_tick: 100, interval: 5ms}
  slow: {plugin: file, file: "$WORK/slow.fifo", thread: true, queue: 2, when_full: block,
         flush_interval: 20ms}
stacks:
  a: [src, slow]
YAML
run_sluice_bg "$WORK/err" -c "$WORK/s.yaml"
wait_for 10 test -S "$SOCK" || fail "no control socket: $(cat "$WORK/err")"

# A client with a deadline: no answer is a failure, never a hang.
client() {
	local rc=0
	timeout $((15 * TIME_FACTOR)) "$SLUICE" "$@" --socket "$SOCK" || rc=$?
	[ "$rc" != 124 ] || fail "no answer to 'sluice $*' within $((15 * TIME_FACTOR)) s: the daemon is deaf"
	return "$rc"
}
# field INSTANCE EXPR: a value of the stats JSON (EXPR on the instance's object i)
field() {
	python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))
i = [x for x in s["instances"] if x["name"] == sys.argv[2]][0]
print(eval(sys.argv[3]))' "$WORK/st.json" "$1" "$2"
}
full() {
	client stats --json >"$WORK/st.json" || fail "stats failed: $(cat "$WORK/st.json")"
	[ "$(field slow 'i["queue"]["depth"] == i["queue"]["capacity"]')" = True ]
}
wait_for 30 full || fail "the queue never filled: $(cat "$WORK/st.json")"

# The input waits for room now: stats still answers, and the input no longer moves.
client stats --json >"$WORK/st.json" || fail "stats failed"
before=$(field src 'i["out"]')
for i in 1 2 3; do
	client stats >"$WORK/table" || fail "stats failed: $(cat "$WORK/table")"
done
client stats --json >"$WORK/st.json" || fail "stats failed"
after=$(field src 'i["out"]')
[ "$after" = "$before" ] || fail "the input went on ($before -> $after records): it did not wait for room"
[ "$(field slow 'i["queue"]["dropped"]')" = 0 ] || fail "when_full: block dropped records"
if [ -n "$METRICS" ]; then
	python3 - "$PORT" <<'PY' || fail "/metrics did not answer while the input waited for room"
import sys, urllib.request
body = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=15).read().decode()
sys.exit(0 if 'instance="slow"' in body else 1)
PY
	echo "/metrics answered"
fi
echo "input waits at $after records; stats answered 5 times"

RC=0
client reload >"$WORK/reload.out" 2>&1 || RC=$?
[ "$RC" = 1 ] || fail "reload while waiting: exit $RC: $(cat "$WORK/reload.out")"
grep -q "cannot reload now: .*queue of 'slow' (when_full: block)" "$WORK/reload.out" ||
	fail "the reload's answer does not say why: $(cat "$WORK/reload.out")"
kill -HUP "$SLUICE_PID"
wait_for 10 grep -q "SIGHUP: the reload waits until the queue of 'slow' has room" "$WORK/err" ||
	fail "SIGHUP while waiting was not put off: $(cat "$WORK/err")"
client stats >/dev/null || fail "stats after SIGHUP failed"

kill -TERM "$SLUICE_PID"
gone() { ! kill -0 "$SLUICE_PID" 2>/dev/null; }
wait_for 40 gone || fail "SIGTERM did not end the daemon (daemon.stop_timeout is 10 s): $(tail -5 "$WORK/err")"
RC=0
wait "$SLUICE_PID" || RC=$?
cat "$WORK/err"
[ "$RC" = 1 ] || fail "exit status $RC after the stop deadline, expected 1"
grep -q "slow: still busy at the stop deadline (daemon.stop_timeout): [1-9][0-9]* records not flushed" \
	"$WORK/err" || fail "the log does not name the stuck output and what it did not flush"
pass "stats and reload answered while the input waited for room; HUP put off; TERM ended it (status 1)"
