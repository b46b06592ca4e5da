#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A start is all or nothing on disk, with daemon.user, as root:
#   A. a second daemon on the same control socket says "another sluice is
#      running" before any instance starts: none of its output files or
#      spool folders exist afterwards and its NFLOG group was never bound;
#   B. a start that fails later (its NFLOG group is held by the first
#      daemon) removes the files and the spool folder it created, and
#      leaves a file that was there before untouched.
# The first daemon runs on meanwhile and its own files stay.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip setpriv
. "$(dirname "$0")/user_lib.sh"
NS=$(unique_name slus)
make_netns "$NS"
LOG="$WORK/log" RUN="$WORK/run" G1=41 G2=42
mkdir -m 750 "$LOG" && chown "$TUSER:$TGROUP" "$LOG"
# conf FILE GROUP SOCKET NAME: nflog GROUP to a file, a pcap and a spooling syslog
conf() {
	cat >"$1" <<CONF
daemon: { user: $TUSER${3:+, control_socket: $3} }
instances:
  fw: { plugin: nflog, group: $2 }
stacks:
  t: [fw, decode, logline, { plugin: file, file: $LOG/$4.log }]
  p: [fw, { plugin: pcap, file: $LOG/$4.pcap }]
  s: [fw, decode, logline, { plugin: syslog, transport: tcp, address: "127.0.0.1:9",
                             spool_dir: $LOG/$4-spool }]
CONF
	chmod 644 "$1"
}
sluice_ns() { ip netns exec "$NS" "$SLUICE" "$@"; }

conf "$WORK/one.yaml" $G1 "$RUN/control" one
ip netns exec "$NS" "$SLUICE" -c "$WORK/one.yaml" >"$WORK/one.err" 2>&1 &
ONE=$!
at_exit "kill $ONE"
wait_for 10 grep -q "started:" "$WORK/one.err" || fail "first daemon: $(cat "$WORK/one.err")"
ls "$LOG" | sort >"$WORK/before"

# A. Same control socket, another group.
conf "$WORK/two.yaml" $G2 "$RUN/control" two
rc=0; sluice_ns -c "$WORK/two.yaml" >"$WORK/two.err" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "control socket $RUN/control: another sluice is running" "$WORK/two.err" ||
	fail "second daemon: exit $rc: $(cat "$WORK/two.err")"
grep -q "bound NFLOG group\|started:" "$WORK/two.err" &&
	fail "the second daemon started instances: $(cat "$WORK/two.err")"
ls "$LOG" | sort | diff "$WORK/before" - >"$WORK/diff" ||
	fail "the second daemon left files: $(cat "$WORK/diff")"

# B. The first daemon's group: the start fails at the input, after the outputs.
conf "$WORK/three.yaml" $G1 "" three
echo "kept" >"$LOG/three.log" && chown "$TUSER" "$LOG/three.log"
ls "$LOG" | sort >"$WORK/before"
rc=0; sluice_ns -c "$WORK/three.yaml" >"$WORK/three.err" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "cannot bind NFLOG group $G1" "$WORK/three.err" ||
	fail "third daemon: exit $rc: $(cat "$WORK/three.err")"
ls "$LOG" | sort | diff "$WORK/before" - >"$WORK/diff" ||
	fail "the failed start left files: $(cat "$WORK/diff"): $(cat "$WORK/three.err")"
[ "$(cat "$LOG/three.log")" = kept ] || fail "a file that was there was changed"
grep -q "removed $LOG/three.pcap: made by the start that failed" "$WORK/three.err" &&
	grep -q "removed $LOG/three-spool: made by the start that failed" "$WORK/three.err" ||
	fail "removals not logged: $(cat "$WORK/three.err")"

kill -0 "$ONE" || fail "the first daemon died: $(cat "$WORK/one.err")"
"$SLUICE" stats --socket "$RUN/control" >/dev/null || fail "the first daemon's socket is gone"
kill -TERM "$ONE"
rc=0; wait "$ONE" || rc=$?
[ "$rc" = 0 ] || fail "first daemon: exit $rc: $(cat "$WORK/one.err")"
[ -e "$LOG/one.log" ] && [ -e "$LOG/one.pcap" ] && [ -d "$LOG/one-spool" ] ||
	fail "the first daemon's files are gone: $(ls "$LOG")"
pass "a second daemon made nothing and bound nothing; a failed start removed what it made"
