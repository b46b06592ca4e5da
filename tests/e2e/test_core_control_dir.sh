#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control socket's folder: one that others than root and the daemon's
# user can write to (where the socket could be swapped for a link between
# bind and chown) is refused before anything starts: world-writable even
# with the sticky bit, group-writable by another group, owned by another
# user.  Refused means exit 1 and no output file made.  A folder of root's
# (0755) or of the user's is accepted; the socket is the user's, 0660.
# sluice -t reports a world-writable folder, and one that cannot be made.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd setpriv
. "$(dirname "$0")/user_lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
getent group nogroup >/dev/null || skip "no group 'nogroup'"
getent passwd nobody >/dev/null || skip "no user 'nobody'"
LOG="$WORK/log"
mkdir -m 750 "$LOG" && chown "$TUSER:$TGROUP" "$LOG"
# try NAME MODE OWNER: the daemon with its control socket in $WORK/NAME
try() {
	mkdir -m "$2" "$WORK/$1" && chown "$3" "$WORK/$1" && chmod "$2" "$WORK/$1"
	cat >"$WORK/$1.yaml" <<CONF
daemon: { user: $TUSER, control_socket: $WORK/$1/control }
stacks:
  s: [{ plugin: gen, count: 1 }, { plugin: file, file: $LOG/$1.log }]
CONF
	chmod 644 "$WORK/$1.yaml"
	rc=0; "$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.err" 2>&1 || rc=$?
}
for c in "sticky 1777 root:root" "group 0775 root:nogroup" "other 0755 nobody:root"; do
	set -- $c
	try "$@"
	[ "$rc" = 1 ] && grep -q "control socket: directory $WORK/$1 (owner uid [0-9]*, gid [0-9]*, mode $2) can be written by others than root and the daemon's user" "$WORK/$1.err" ||
		fail "$1 ($2 $3): exit $rc: $(cat "$WORK/$1.err")"
	[ ! -e "$LOG/$1.log" ] && [ ! -e "$WORK/$1/control" ] || fail "$1: files made: $(ls "$LOG" "$WORK/$1")"
done
for c in "root 0755 root:root" "own 0770 $TUSER:$TGROUP" "rootgroup 0770 root:root"; do
	set -- $c
	try "$@"
	[ "$rc" = 0 ] || fail "$1 ($2 $3): exit $rc: $(cat "$WORK/$1.err")"
	grep -q "control socket $WORK/$1/control: listening" "$WORK/$1.err" && [ -s "$LOG/$1.log" ] ||
		fail "$1: $(cat "$WORK/$1.err")"
done
# sluice -t says so for the world-writable one, and that a folder whose parent
# is missing cannot be made; a missing folder with a parent is fine.
rc=0; "$SLUICE" -t -c "$WORK/sticky.yaml" >"$WORK/t.out" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q "sticky.yaml:1:[0-9]*: error: control socket: directory $WORK/sticky (owner uid 0, gid 0, mode 1777) can be written by others" "$WORK/t.out" ||
	fail "-t, sticky folder: exit $rc: $(cat "$WORK/t.out")"
sed "s|$WORK/root/control|$WORK/no/such/control|" "$WORK/root.yaml" >"$WORK/noparent.yaml"
rc=0; "$SLUICE" -t -c "$WORK/noparent.yaml" >"$WORK/t.out" 2>&1 || rc=$?
[ "$rc" = 78 ] && grep -q "noparent.yaml:1:[0-9]*: error: control_socket: its directory $WORK/no/such cannot be created: its parent does not exist" "$WORK/t.out" ||
	fail "-t, no parent: exit $rc: $(cat "$WORK/t.out")"
sed "s|$WORK/root/control|$WORK/new/control|" "$WORK/root.yaml" >"$WORK/new.yaml"
"$SLUICE" -t -c "$WORK/new.yaml" >"$WORK/t.out" 2>&1 || fail "-t, a folder to make: $(cat "$WORK/t.out")"
# Serving: the socket is 0660 from its bind on, and the user's once
# chowned (just after the bind: wait for that, not only for the socket).
mkdir -m 755 "$WORK/serve"
sed "s|$WORK/root/|$WORK/serve/|; s/count: 1/count: -1, interval: 100ms/" "$WORK/root.yaml" >"$WORK/serve.yaml"
chmod 644 "$WORK/serve.yaml"
run_sluice_bg "$WORK/serve.err" -c "$WORK/serve.yaml"
wait_for 10 test -S "$WORK/serve/control" || fail "no socket: $(cat "$WORK/serve.err")"
[ "$(stat -c %a "$WORK/serve/control")" = 660 ] || fail "socket mode $(stat -c %a "$WORK/serve/control") at its bind"
wait_for 10 eval '[ "$(stat -c %U "$WORK/serve/control")" = "$TUSER" ]'
[ "$(stat -c "%U:%G %a" "$WORK/serve/control")" = "$TUSER:$TGROUP 660" ] ||
	fail "socket is $(stat -c "%U:%G %a" "$WORK/serve/control")"
as "$TUSER" "$SLUICE" stats --socket "$WORK/serve/control" >/dev/null || fail "the user cannot ask"
pass "sticky, other group's and other user's folders refused with nothing made; root's and the user's used"
