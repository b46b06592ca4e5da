#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# daemon.user, started as root as README.md says: the files the outputs
# make at start are the user's, so SIGHUP, `sluice reopen` and a
# logrotate-style rename + reopen keep writing: every record the file and
# pcap outputs took is in their files, none dropped.  The control socket's
# folder is missing: it is made, the user's, not writable by others.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd setpriv python3
. "$(dirname "$0")/user_lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
LOG="$WORK/log" RUN="$WORK/run"
mkdir -m 750 "$LOG" && chown "$TUSER:$TGROUP" "$LOG"
cat >"$WORK/c.yaml" <<CONF
daemon: { user: $TUSER, control_socket: $RUN/control }
stacks:
  text: [{ plugin: gen, count: -1, per_tick: 10, interval: 10ms },
         { plugin: file, file: $LOG/out.log, flush_interval: 20ms }]
  pkts: [{ plugin: replay, file: "$SRCDIR/tests/data/raw-mixed.pcap", pace: original, loop: 0 },
         { plugin: pcap, file: $LOG/out.pcap, flush_interval: 20ms }]
CONF
chmod 644 "$WORK/c.yaml"
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
bigger() { [ "$(size "$1")" -gt "$2" ]; }
# grows FILE WHEN: wait until FILE is larger than it is now
grows() {
	wait_for 10 bigger "$1" "$(size "$1")" ||
		fail "$1 stopped growing after $2: $(cat "$WORK/err")"
}

run_sluice_bg "$WORK/err" -c "$WORK/c.yaml"
wait_for 10 test -S "$RUN/control" || fail "no control socket: $(cat "$WORK/err")"
wait_for 10 test -s "$LOG/out.log" -a -s "$LOG/out.pcap" || fail "nothing written: $(cat "$WORK/err")"
for f in "$LOG/out.log" "$LOG/out.pcap"; do
	[ "$(stat -c %U:%G "$f")" = "$TUSER:$TGROUP" ] || fail "$f made at start is $(stat -c %U:%G "$f")"
done
dir=$(stat -c "%U:%G %a" "$RUN")
[ "$dir" = "$TUSER:$TGROUP 750" ] || fail "control socket folder made as '$dir'"
[ "$(stat -c "%U:%G %a" "$RUN/control")" = "$TUSER:$TGROUP 660" ] ||
	fail "control socket is $(stat -c "%U:%G %a" "$RUN/control")"

kill -HUP "$SLUICE_PID"
wait_for 10 grep -q "reopening output files" "$WORK/err" || fail "no reload: $(cat "$WORK/err")"
grows "$LOG/out.log" SIGHUP; grows "$LOG/out.pcap" SIGHUP
out=$("$SLUICE" reopen -c "$WORK/c.yaml") && [ "$out" = ok ] || fail "sluice reopen: '$out'"
grows "$LOG/out.log" "sluice reopen"; grows "$LOG/out.pcap" "sluice reopen"
mv "$LOG/out.log" "$LOG/out.log.1"; mv "$LOG/out.pcap" "$LOG/out.pcap.1"
out=$("$SLUICE" reopen -c "$WORK/c.yaml") && [ "$out" = ok ] || fail "reopen after rename: '$out'"
wait_for 10 test -s "$LOG/out.log" -a -s "$LOG/out.pcap" || fail "no new files: $(cat "$WORK/err")"
grows "$LOG/out.log" rename; grows "$LOG/out.pcap" rename
kill -HUP "$SLUICE_PID"
grows "$LOG/out.log" "a second SIGHUP"; grows "$LOG/out.pcap" "a second SIGHUP"
kill -TERM "$SLUICE_PID"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(cat "$WORK/err")"

lines=$(cat "$LOG/out.log.1" "$LOG/out.log" | wc -l)
pkts=$(python3 - "$LOG/out.pcap.1" "$LOG/out.pcap" <<'PY'
import struct, sys
n = 0
for f in sys.argv[1:]:
    d = open(f, "rb").read()
    o = 24
    while o + 16 <= len(d):
        o += 16 + struct.unpack("<IIII", d[o:o + 16])[2]
        n += 1
print(n)
PY
)
for c in "text.file out=$lines" "pkts.pcap out=$pkts"; do
	set -- $c
	[ "$(counter "$1" dropped_records "$WORK/err")" = 0 ] &&
		[ "$(counter "$1" errors "$WORK/err")" = 0 ] &&
		[ "$(counter "$1" out "$WORK/err")" = "${2#out=}" ] ||
		fail "$1: files hold ${2#out=} records: $(grep "counters: $1 " "$WORK/err")"
done
grep -q "cannot\|Permission denied" "$WORK/err" && fail "errors logged: $(cat "$WORK/err")"
pass "$lines lines, $pkts packets through 2 SIGHUPs, 2 reopens and a rename; none dropped"
