#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reload reads, parses and checks the new file off the main thread,
# where the inputs run by default (daemon.threads: 0): a 15 MiB file
# stalled them 5 s and lost packets.  The daemon replays a capture on the
# main thread; the new file has 300,000 unused instances (about 9 MB,
# seconds to check) and one more stack.  While `sluice reload` waits,
# `sluice stats` (answered by the main loop) must answer before the
# reload has finished: the log has no verdict yet when stats returns.
# No time is measured, only the order of the two answers.  Then:
#  - the reload was applied (the new stack writes its file);
#  - the 300,000 unused instances made one warning, not one per instance;
#  - a second `sluice reload` asked while the first is read gets its own
#    answer after the first (a reload of the file as it is then), and a
#    SIGTERM during a reload stops the daemon cleanly.
. "$(dirname "$0")/lib.sh"
N=300000
SOCK="$WORK/ctl"
L="$WORK/sluice.log"
D="$WORK/out"
mkdir "$D"

# conf [EXTRA_STACK] [UNUSED]: the configuration, with UNUSED logline instances
conf() {
	awk -v n="${2:-0}" -v sock="$SOCK" -v pcap="$SRCDIR/tests/data/raw-mixed.pcap" \
	    -v dir="$D" -v extra="${1:-}" 'BEGIN {
		printf "daemon: {control_socket: %s, stop_timeout: 120s}\ninstances:\n", sock
		printf "  src: {plugin: replay, file: \"%s\", pace: original, loop: 0}\n", pcap
		for (i = 0; i < n; i++)
			printf "  u%d: {plugin: logline}\n", i
		printf "stacks:\n  a: [src, decode, logline, {plugin: file, file: %s/a.log, flush_interval: 50ms}]\n", dir
		if (extra != "")
			printf "  %s: [src, decode, logline, {plugin: file, file: %s/%s.log, flush_interval: 50ms}]\n", extra, dir, extra
	}' >"$WORK/s.yaml.new"
	mv "$WORK/s.yaml.new" "$WORK/s.yaml"
}
verdicts() { grep -cE "reload: [0-9]+ kept|reload failed" "$L" || true; }
# read_begun K: the K-th reload has begun reading
read_begun() { [ "$(grep -c "reload: reading" "$L" || true)" -ge "$1" ]; }

conf
run_sluice_bg "$L" -c "$WORK/s.yaml"
wait_for 10 test -s "$D/a.log" || fail "no output: $(cat "$L")"
wait_for 10 "$SLUICE" stats --socket "$SOCK" >/dev/null || fail "no stats: $(cat "$L")"

# 1. stats is answered while the large file is read
conf b "$N"
"$SLUICE" reload --socket "$SOCK" >"$WORK/r1.out" 2>&1 &
R1=$!
wait_for 60 grep -q "reload: reading" "$L" || fail "the reload did not begin: $(tail "$L")"
"$SLUICE" stats --socket "$SOCK" >"$WORK/stats" 2>&1 || fail "stats failed: $(cat "$WORK/stats")"
[ "$(verdicts)" = 0 ] ||
	fail "stats was answered only after the reload had finished: the main loop stood still"
grep -q "^a *src *replay" "$WORK/stats" || fail "stats during the reload: $(cat "$WORK/stats")"
wait "$R1" || fail "reload failed: $(cat "$WORK/r1.out")"
grep -qx "ok: 4 kept, 1 added, 0 removed" "$WORK/r1.out" || fail "reload said: $(cat "$WORK/r1.out")"
wait_for 10 test -s "$D/b.log" || fail "the new stack writes nothing"

# 2. one warning for the unused instances
grep "not used by any stack" "$L" >"$WORK/warnings" || true
[ "$(wc -l <"$WORK/warnings")" = 1 ] ||
	fail "$(wc -l <"$WORK/warnings") warnings about unused instances: $(head -3 "$WORK/warnings")"
grep -q "$N instances of plugin 'logline' are not used by any stack" "$WORK/warnings" ||
	fail "the warning has no count: $(cat "$WORK/warnings")"

# 3. a reload asked while one is read is another reload, answered after it
conf c "$N"
"$SLUICE" reload --socket "$SOCK" >"$WORK/r2.out" 2>&1 &
R2=$!
wait_for 60 read_begun 2 || fail "the second reload did not begin"
conf c
"$SLUICE" reload --socket "$SOCK" >"$WORK/r3.out" 2>&1 || fail "third reload: $(cat "$WORK/r3.out")"
wait "$R2" || fail "second reload failed: $(cat "$WORK/r2.out")"
grep -qx "ok: 4 kept, 1 added, 1 removed" "$WORK/r2.out" || fail "second reload: $(cat "$WORK/r2.out")"
# The third read the small file after the second read the large one.
grep -qx "ok: 5 kept, 0 added, 0 removed" "$WORK/r3.out" || fail "third reload: $(cat "$WORK/r3.out")"
wait_for 10 test -s "$D/c.log" || fail "the stack of the second reload writes nothing"

# 4. SIGTERM while a reload is read: a clean stop
conf d "$N"
"$SLUICE" reload --socket "$SOCK" >"$WORK/r4.out" 2>&1 &
R4=$!
wait_for 60 read_begun 4 || fail "the fourth reload did not begin"
# The stop waits for the reader between its steps (reading the file, checking,
# building); under ASan on a busy machine reading 300,000 instances took more
# than the default 10 s stop_timeout, hence stop_timeout: 120s above.
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "the daemon exited with status $? during a reload: $(tail "$L")"
wait "$R4" && fail "the reload interrupted by SIGTERM reported success: $(cat "$WORK/r4.out")"
pass "stats answered during the reload of a file with $N instances"
