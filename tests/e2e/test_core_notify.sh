#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# systemd notify, the daemon side (sd_notify(3)'s datagram protocol): a
# python3 AF_UNIX SOCK_DGRAM receiver is NOTIFY_SOCKET, once as a path and
# once as an abstract name.  Checked, in the order received:
# READY=1 (only once the output file exists) -> SIGHUP -> RELOADING=1 with
# MONOTONIC_USEC -> READY=1 -> a STATUS= refresh with the counters ->
# SIGTERM -> STOPPING=1; WATCHDOG=1 with WATCHDOG_USEC=200000 every ~100 ms;
# none with WATCHDOG_PID naming another process; without NOTIFY_SOCKET no
# datagram socket is opened at all (/proc/PID/fd against /proc/net/unix).
. "$(dirname "$0")/lib.sh"
need_cmd python3
FACTOR=${SLUICE_TEST_TIME_FACTOR:-1}

cat >"$WORK/s.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$SRCDIR/tests/data/raw-mixed.pcap", pace: original, loop: 0},
      decode, logline, {plugin: file, file: "$WORK/out.log"}]
YAML

# dgram_sockets PID: how many AF_UNIX datagram sockets PID has open
dgram_sockets() {
	local inodes
	inodes=$(find "/proc/$1/fd" -lname 'socket:*' -printf '%l\n' 2>/dev/null | tr -dc '0-9\n')
	[ -n "$inodes" ] || { echo 0; return; }
	awk 'NR == FNR { want[$1] = 1; next } $5 == "0002" && ($7 in want) { n++ } END { print n + 0 }' \
		<(echo "$inodes") /proc/net/unix
}

# readies FILE N: at least N READY=1 received
readies() { [ "$(grep -c 'READY=1' "$1")" -ge "$2" ]; }

# run NAME SOCKET [ENV...]: the daemon under a receiver; log in $WORK/NAME.notify
run() {
	local name="$1" sock="$2"; shift 2
	rm -f "$WORK/out.log"
	python3 "$SRCDIR/tests/e2e/notify_recv.py" "$sock" "$WORK/$name.notify" "$WORK/out.log" \
		$((30 * FACTOR)) &
	local rpid=$!
	at_exit "kill $rpid"
	wait_for 10 grep -qs BOUND "$WORK/$name.notify" || fail "$name: receiver did not bind"
	env NOTIFY_SOCKET="$sock" WATCHDOG_USEC=200000 "$@" "$SLUICE" -c "$WORK/s.yaml" \
		>"$WORK/$name.log" 2>&1 &
	local pid=$!
	at_exit "kill $pid"
	wait_for 10 grep -qs "READY=1" "$WORK/$name.notify" ||
		{ cat "$WORK/$name.log"; fail "$name: no READY=1"; }
	sleep 1
	[ "$(dgram_sockets $pid)" = 1 ] || fail "$name: no notify socket open"
	kill -HUP $pid
	wait_for 10 readies "$WORK/$name.notify" 2 ||
		fail "$name: no READY=1 after the reload"
	# the periodic STATUS= (every 3 s) after the reload
	wait_for 10 grep -qE '^[0-9.]+ STATUS=' "$WORK/$name.notify" ||
		fail "$name: no STATUS= refresh"
	kill -TERM $pid
	wait $pid || fail "$name: exit status $?"
	wait $rpid || true
}

# check NAME WATCHDOG(yes|no): the order, the payloads, the watchdog rate
check() {
	python3 - "$WORK/$1.notify" "$2" "$FACTOR" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
watchdog, factor = sys.argv[2] == "yes", int(sys.argv[3])
assert "EXISTS 1" in lines, "READY=1 came before the output file existed: %r" % lines[:3]
events, pings = [], []
for l in lines:
    m = re.match(r"([0-9.]+) (.*)", l)
    if not m:
        continue
    t, keys = float(m.group(1)), m.group(2).split("|")
    for k in keys:
        if k == "WATCHDOG=1":
            pings.append(t)
        elif k.startswith("STATUS="):
            if len(keys) == 1:
                events.append(("STATUS", t, k))
        elif not k.startswith("MONOTONIC_USEC="):
            events.append((k, t, keys))
names = [e[0] for e in events]
want = ["READY=1", "RELOADING=1", "READY=1", "STATUS", "STOPPING=1"]
assert names[:5] == want and all(n == "STATUS" for n in names[3:-1]) and names[-1] == "STOPPING=1", names
assert any(k.startswith("MONOTONIC_USEC=") for k in events[1][2]), events[1]
assert any(re.match(r"STATUS=records in \d+, out \d+, dropped \d+, errors \d+$", k) for k in events[0][2]), events[0]
m = re.match(r"STATUS=records in (\d+), out (\d+), dropped (\d+), errors (\d+)$", events[3][2])
assert m and int(m.group(1)) > 0 and m.group(1) == m.group(2), events[3]
ready, stop = events[0][1], events[-1][1]
if not watchdog:
    assert not pings, "%d pings with WATCHDOG_PID of another process" % len(pings)
    print("no pings with WATCHDOG_PID=1")
    sys.exit(0)
gaps = sorted(b - a for a, b in zip(pings, pings[1:]))
median = gaps[len(gaps) // 2]
expect = (stop - ready) / 0.1
assert 0.08 <= median <= 0.1 * factor + 0.03, "median ping interval %.3f s" % median
assert len(pings) >= expect * 0.6 / factor, "%d pings in %.2f s" % (len(pings), stop - ready)
print("%d pings in %.2f s (median interval %.1f ms), status %s" %
      (len(pings), stop - ready, median * 1000, events[3][2]))
PY
}

run path "$WORK/notify.sock"
R1=$(check path yes) || fail "path socket: see above"
run abstract "@sluice-notify-test-$$"
R2=$(check abstract yes) || fail "abstract socket: see above"
run otherpid "@sluice-notify-test-$$-b" WATCHDOG_PID=1
R3=$(check otherpid no) || fail "WATCHDOG_PID: see above"
# Without NOTIFY_SOCKET: no socket, nothing sent (the receiver stays silent).
python3 "$SRCDIR/tests/e2e/notify_recv.py" "$WORK/quiet.sock" "$WORK/quiet.notify" "$WORK/out.log" \
	$((30 * FACTOR)) &
QPID=$!
at_exit "kill $QPID"
wait_for 10 grep -qs BOUND "$WORK/quiet.notify" || fail "quiet: receiver did not bind"
env -u NOTIFY_SOCKET WATCHDOG_USEC=200000 "$SLUICE" -c "$WORK/s.yaml" >"$WORK/quiet.log" 2>&1 &
pid=$!
at_exit "kill $pid"
wait_for 10 test -s "$WORK/out.log" || fail "quiet: no output"
sleep 0.5
[ "$(dgram_sockets $pid)" = 0 ] || fail "a datagram socket open without NOTIFY_SOCKET"
kill -TERM $pid
wait $pid || fail "quiet: exit status $?"
[ "$(cat "$WORK/quiet.notify")" = BOUND ] || fail "sent something without NOTIFY_SOCKET"
pass "path: $R1; abstract: $R2; $R3"
