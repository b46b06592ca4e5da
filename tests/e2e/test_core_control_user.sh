#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control socket with daemon.user: made before the privilege drop in a
# folder only root may write, then owned by the daemon's user and group,
# mode 0660.  Root and that user can ask for stats and a reopen; another
# user gets "Permission denied" and exit 77.  After the drop the daemon
# cannot remove the socket from root's folder; the next start replaces it.
# And the client's errors: no daemon.control_socket in the file (78), a
# bad option (64).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd setpriv python3
getent passwd nobody >/dev/null && getent passwd daemon >/dev/null ||
	skip "needs the users 'nobody' and 'daemon'"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
chmod 755 "$WORK"
mkdir -m 755 "$WORK/run" "$WORK/log" && chown nobody "$WORK/log"
SOCK="$WORK/run/control"
cat >"$WORK/c.yaml" <<CONF
daemon: { user: nobody, control_socket: $SOCK }
stacks:
  s: [{ plugin: gen, count: -1, per_tick: 10, interval: 10ms },
      { plugin: file, file: $WORK/log/out.log, flush_interval: 50ms }]
CONF
chmod 644 "$WORK/c.yaml"
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups "$@"; }

run_sluice_bg "$WORK/err" -c "$WORK/c.yaml"
wait_for 10 test -s "$WORK/log/out.log" || fail "nothing written: $(cat "$WORK/err")"
grep -q "running as user nobody" "$WORK/err" || fail "no privilege drop: $(cat "$WORK/err")"
own=$(stat -c "%U:%G %a" "$SOCK")
[ "$own" = "nobody:$(id -gn nobody) 660" ] || fail "socket is $own"

"$SLUICE" stats -c "$WORK/c.yaml" >"$WORK/root.txt" || fail "stats as root: exit $?"
grep -q "^s  *s.gen  *gen " "$WORK/root.txt" && grep -q "^s  *s.file  *file " "$WORK/root.txt" ||
	fail "stats as root: $(cat "$WORK/root.txt")"
as nobody "$SLUICE" stats --json -c "$WORK/c.yaml" | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert [i["name"] for i in s["instances"]] == ["s.gen", "s.file"], s
assert s["instances"][1]["out"] > 0' || fail "stats --json as nobody"
mv "$WORK/log/out.log" "$WORK/log/out.log.1"
out=$(as nobody "$SLUICE" reopen --socket "$SOCK") || fail "reopen as nobody: exit $?"
[ "$out" = ok ] || fail "reopen as nobody printed '$out'"
wait_for 10 test -s "$WORK/log/out.log" || fail "no reopen as nobody: $(cat "$WORK/err")"

rc=0
as daemon "$SLUICE" stats --socket "$SOCK" >/dev/null 2>"$WORK/denied" || rc=$?
[ "$rc" = 77 ] && grep -q "Permission denied" "$WORK/denied" ||
	fail "another user: exit $rc, '$(cat "$WORK/denied")'"

kill -TERM "$SLUICE_PID"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(cat "$WORK/err")"
left=no; [ -S "$SOCK" ] && left=yes
run_sluice_bg "$WORK/err2" -c "$WORK/c.yaml"
wait_for 10 grep -q "control socket $SOCK: listening" "$WORK/err2" ||
	fail "restart: $(cat "$WORK/err2")"
[ $left = no ] || grep -q "removing the stale socket" "$WORK/err2" ||
	fail "restart did not say it replaced the stale socket: $(cat "$WORK/err2")"
"$SLUICE" stats --socket "$SOCK" >/dev/null || fail "stats after the restart: exit $?"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "second run: exit $?"

printf 'stacks:\n  s: [gen, { plugin: file, file: /dev/null }]\n' >"$WORK/nosock.yaml"
rc=0; "$SLUICE" stats -c "$WORK/nosock.yaml" 2>"$WORK/nosock" || rc=$?
[ "$rc" = 78 ] && grep -q "sets no daemon.control_socket; give --socket PATH" "$WORK/nosock" ||
	fail "no control_socket: exit $rc, '$(cat "$WORK/nosock")'"
rc=0; "$SLUICE" reload --json --socket "$SOCK" 2>/dev/null || rc=$?
[ "$rc" = 64 ] || fail "reload --json: exit $rc, expected 64"
pass "socket nobody:$(id -gn nobody) 0660 in root's folder; root and nobody served, daemon denied (77); left after exit: $left, replaced at restart"
