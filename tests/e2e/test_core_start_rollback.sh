#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The start is a reload from an empty graph (issue 20): one path places,
# starts and, when an instance cannot start, rolls back.  The same two new
# stacks fail the same way at start and at a reload: the output of stack c
# starts first (outputs start last-first) and creates its file, on a thread
# of its own; the output of stack b cannot open its file.  Both times c's
# output is stopped again, its thread never runs and the file it created is
# removed ("leaves nothing behind when it refuses"); the start exits 1, the
# reload answers non-zero and the running stack a goes on.  Before the start
# and the reload shared the path, a failed reload left c's file behind.
. "$(dirname "$0")/lib.sh"
for p in replay decode logline file; do
	[ -e "${SLUICE_PLUGIN_PATH%%:*}/$p.so" ] || skip "$p not built"
done
SOCK="$WORK/ctl"
D="$WORK/out"
mkdir "$D"
SRC="src: {plugin: replay, file: \"$SRCDIR/tests/data/raw-mixed.pcap\", pace: original, loop: 0}"
A="  a: [src, decode, logline, {plugin: file, file: \"$D/a.log\", flush_interval: 50ms}]"
BC="  b: [src, decode, logline, {plugin: file, file: \"$WORK/nodir/b.log\"}]
  c: [src, decode, logline, {plugin: file, file: \"$D/c.log\", thread: true}]"
# conf FILE STACKS: the configuration with the control socket and the replay input
conf() {
	printf 'daemon: {control_socket: %s}\ninstances:\n  %s\nstacks:\n%s\n' "$SOCK" "$SRC" "$2" >"$1"
}
threads() { daemon_threads "$SLUICE_PID"; }

# 1. at start: refused, exit 1, nothing of c left
conf "$WORK/bad.yaml" "$A
$BC"
rc=0
timeout $((30 * TIME_FACTOR)) "$SLUICE" -c "$WORK/bad.yaml" >"$WORK/start.log" 2>&1 || rc=$?
cat "$WORK/start.log"
[ "$rc" = 1 ] || fail "start: exit $rc, 1 expected"
grep -q "b.file: could not start; stopping" "$WORK/start.log" || fail "start: no message for b"
[ ! -e "$D/c.log" ] || fail "start: c's file was left behind"
[ ! -e "$D/a.log" ] || fail "start: a's file was left behind"
grep -q "removed $D/c.log: made by the start that failed" "$WORK/start.log" ||
	fail "start: the removal is not logged"
echo "ok: the start is refused and leaves nothing"

# 2. the same stacks added by a reload
conf "$WORK/s.yaml" "$A"
run_sluice_bg "$WORK/sluice.log" -c "$WORK/s.yaml"
wait_for 10 test -s "$D/a.log" || fail "no output: $(cat "$WORK/sluice.log")"
T=$(threads)
conf "$WORK/s.yaml" "$A
$BC"
rc=0
"$SLUICE" reload --socket "$SOCK" >"$WORK/r.out" 2>"$WORK/r.err" || rc=$?
cat "$WORK/r.out" "$WORK/r.err"
[ "$rc" != 0 ] || fail "reload: exit 0, a failure expected"
grep -q "b.file could not start" "$WORK/r.err" || fail "reload: the answer does not name b"
[ ! -e "$D/c.log" ] || fail "reload: c's file was left behind"
grep -q "removed $D/c.log: made by the start that failed" "$WORK/sluice.log" ||
	fail "reload: the removal is not logged"
[ "$(threads)" = "$T" ] || fail "reload: $T threads before, $(threads) after"
n=$(wc -l <"$D/a.log")
wait_for 20 bash -c "[ \$(wc -l <'$D/a.log') -gt $n ]" || fail "a stopped writing"
kill -TERM "$SLUICE_PID"
rc=0
wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "the daemon exited $rc: $(tail -5 "$WORK/sluice.log")"
pass "a failed start and a failed reload roll back alike"
