#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reopen that fails, as an admin meets it.  The daemon (as user nobody
# when the test is root, like the unit's daemon.user) writes a text file
# on the main thread and a JSON file on a thread of its own, in a
# directory of its user; a systemd notify receiver is NOTIFY_SOCKET.
#  1. files moved away (as logrotate does), `sluice reopen`: exit 0, "ok";
#  2. files moved away again and the directory made read-only:
#     `sluice reopen` and `sluice reload` (file unchanged) exit 1 and name
#     both outputs with their error (the ESC in one file name escaped as
#     \x1b); the notify STATUS= says so, and the periodic STATUS= 3 s later
#     still does;
#  3. directory writable again: `sluice reload` exits 0 with "ok:
#     configuration unchanged, files reopened", the files are back, and the
#     next periodic STATUS= is the counters alone;
#  4. a configuration with an error and SIGHUP (what `systemctl reload`
#     sends): the periodic STATUS= after it still says the reload failed;
#     the file fixed and SIGHUP again: it no longer does.
. "$(dirname "$0")/lib.sh"
need_cmd python3
FACTOR=${SLUICE_TEST_TIME_FACTOR:-1}
ESC=$'\e'
AS=()
if [ "$(id -u)" = 0 ]; then
	need_cmd setpriv
	getent passwd nobody >/dev/null || skip "no user nobody"
	AS=(setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups --)
	chmod 755 "$WORK"
fi
D="$WORK/log"
mkdir -m 0755 "$D" "$WORK/run"
[ "$(id -u)" = 0 ] && chown nobody "$D" "$WORK/run"
SOCK="$WORK/run/ctl"
NOTE="$WORK/notify"

write_config() {
	cat >"$WORK/s.yaml" <<YAML
daemon: {control_socket: $SOCK}
instances:
  src: {plugin: replay, file: "$SRCDIR/tests/data/raw-mixed.pcap", pace: original, loop: 0}
  text: {plugin: file, file: "$D/fw\\e.log", flush_interval: 50ms}
  jsonout: {plugin: file, file: "$D/fw.json", thread: true, flush_interval: 50ms}
stacks:
  a: [src, decode, logline, text]
  b: [src, decode, json, jsonout]
$1
YAML
}
write_config ""
python3 "$SRCDIR/tests/e2e/notify_recv.py" "@sluice-reopen-test-$$" "$NOTE" "$D/fw.json" \
	$((120 * FACTOR)) &
at_exit "kill $!"
wait_for 10 grep -qs BOUND "$NOTE" || fail "the notify receiver did not bind"
NOTIFY_SOCKET="@sluice-reopen-test-$$" "${AS[@]}" "$SLUICE" -c "$WORK/s.yaml" >"$WORK/err" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "READY=1" "$NOTE" || fail "no READY=1: $(cat "$WORK/err")"
wait_for 10 test -s "$D/fw$ESC.log" -a -s "$D/fw.json" || fail "no output: $(cat "$WORK/err")"

# op CMD: run `sluice CMD`, its exit status in RC, output in OUT/ERRS
op() {
	RC=0
	"$SLUICE" "$1" --socket "$SOCK" >"$WORK/op.out" 2>"$WORK/op.err" || RC=$?
	OUT=$(cat "$WORK/op.out")
	ERRS=$(cat "$WORK/op.err")
}
rotate() {
	mv "$D/fw$ESC.log" "$D/fw$ESC.log.$1"
	mv "$D/fw.json" "$D/fw.json.$1"
}
# periodic_after N REGEX: a periodic STATUS= (a datagram of its own) after
# line N of the notify log matches REGEX
periodic_after() {
	tail -n +"$(($1 + 1))" "$NOTE" | grep -E '^[0-9.]+ STATUS=' | head -1 | grep -qE "$2"
}
# periodic_seen N: some periodic STATUS= after line N
periodic_seen() { tail -n +"$(($1 + 1))" "$NOTE" | grep -qE '^[0-9.]+ STATUS='; }
readies() { [ "$(grep -c 'READY=1' "$NOTE")" -ge "$1" ]; }
# ready_line K: the line of the K-th READY=1 (a reload's answer), once it came
ready_line() {
	wait_for 10 readies "$1" || fail "no READY=1 number $1: $(cat "$NOTE")"
	grep -n 'READY=1' "$NOTE" | sed -n "$1p" | cut -d: -f1
}

# 1. a reopen that works
rotate 1
op reopen
[ "$RC" = 0 ] && [ "$OUT" = ok ] || fail "reopen: exit $RC, '$OUT' '$ERRS'"
wait_for 10 test -s "$D/fw$ESC.log" -a -s "$D/fw.json" || fail "1: no new files"

# 2. the directory read-only: each failing output named, with its error
rotate 2
chmod 0555 "$D"
op reopen
echo "reopen: exit $RC; $ERRS"
[ "$RC" = 1 ] || fail "reopen into a read-only directory: exit $RC ($OUT $ERRS)"
[ -z "$OUT" ] || fail "reopen failed but printed '$OUT' on stdout"
grep -qx "2 outputs not reopened:" <<<"$ERRS" || fail "reopen: no count: $ERRS"
grep -q "^text: cannot open $D/fw\\\\x1b.log: Permission denied" <<<"$ERRS" ||
	fail "reopen: the text output (ESC escaped) not named: $ERRS"
grep -q "^jsonout: cannot open $D/fw.json: Permission denied" <<<"$ERRS" ||
	fail "reopen: the threaded output not named: $ERRS"
[[ "$ERRS" != *"$ESC"* ]] || fail "an ESC reached the terminal"
grep -q "reopen failed" "$WORK/err" || fail "the log does not say reopen failed"
op reload
echo "reload: exit $RC; $ERRS"
[ "$RC" = 1 ] || fail "reload with failing reopens: exit $RC ($OUT $ERRS)"
grep -qx "configuration unchanged" <<<"$ERRS" && grep -q "^jsonout: cannot open" <<<"$ERRS" &&
	grep -q "^text: cannot open" <<<"$ERRS" || fail "reload: $ERRS"
N=$(ready_line 2)
sed -n "${N}p" "$NOTE" | grep -q "READY=1|STATUS=reload: 2 outputs not reopened; see the log; records in" ||
	fail "no failing STATUS= after the reload: $(tail -n +"$N" "$NOTE")"
wait_for 10 periodic_seen "$N" || fail "no periodic STATUS= after the reload"
periodic_after "$N" "STATUS=reload: 2 outputs not reopened; see the log; records in [0-9]+" ||
	fail "the periodic STATUS= forgot the failure: $(tail -n +"$((N + 1))" "$NOTE")"

# 3. fixed: the next reload succeeds and STATUS= is the counters again
chmod 0755 "$D"
op reload
[ "$RC" = 0 ] && [ "$OUT" = "ok: configuration unchanged, files reopened" ] ||
	fail "reload after the fix: exit $RC, '$OUT' '$ERRS'"
N=$(ready_line 3)
wait_for 10 test -s "$D/fw$ESC.log" -a -s "$D/fw.json" || fail "3: no new files"
wait_for 10 periodic_seen "$N" || fail "no periodic STATUS= after the good reload"
periodic_after "$N" "STATUS=records in [0-9]+" || fail "STATUS= still failing: $(tail -2 "$NOTE")"

# 4. a configuration error, by SIGHUP: STATUS= keeps saying so
write_config "  c: [src, {plugin: no_such_plugin}]"
kill -HUP "$SLUICE_PID"
N=$(ready_line 4)
wait_for 10 periodic_seen "$N" || fail "no periodic STATUS= after the failed reload"
periodic_after "$N" "STATUS=reload failed, running the previous configuration; see the log; records in" ||
	fail "the periodic STATUS= forgot the failed reload: $(tail -n +"$((N + 1))" "$NOTE")"
write_config ""
kill -HUP "$SLUICE_PID"
N=$(ready_line 5)
wait_for 10 periodic_seen "$N" || fail "no periodic STATUS= after the good reload"
periodic_after "$N" "STATUS=records in [0-9]+" || fail "STATUS= still failing after SIGHUP: $(tail -2 "$NOTE")"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "the daemon exited with status $?: $(tail "$WORK/err")"
pass "reopen and reload exit 1 naming both outputs; STATUS= keeps a failure until a good reload"
