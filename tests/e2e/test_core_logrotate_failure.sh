#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# conf/sluice.logrotate run by the real logrotate (`logrotate -f -s STATE
# CONF`) when the daemon cannot reopen its files, and what it rotates.
#  0. every file conf/*.yaml and docs/CONFIG.md write under
#     /var/log/sluice matches one of the snippet's globs (a strftime name
#     rotates itself; a SQLite database is not a log to rename);
#  1. the daemon (user nobody, like daemon.user) writes a .log, a .pcap
#     and a .json (on a thread of its own) in a directory of its user:
#     logrotate exits 0, each of the three is rotated and written anew, and
#     the SIGHUP fallback (a PATH entry `systemctl` recording its calls) is
#     not used;
#  2. the admin made the directory root's (the files stay the daemon's):
#     logrotate (su root root) rotates, the daemon cannot create the new
#     files, and logrotate exits non-zero with sluice's message naming the
#     three outputs and the error; the fallback is not used either.
. "$(dirname "$0")/lib.sh"
need_cmd python3 logrotate setpriv
[ "$(id -u)" = 0 ] || skip "needs root (logrotate's su, the daemon as another user)"
getent passwd nobody >/dev/null || skip "no user nobody"
NG=$(id -gn nobody)

# 0. the globs cover what the shipped configurations write
mapfile -t GLOBS < <(sed -n 's|^\(/var/log/sluice/[^{]*\){$|\1|p' "$SRCDIR/conf/sluice.logrotate" | tr ' ' '\n' | grep .)
[ "${#GLOBS[@]}" -gt 0 ] || fail "no globs found in conf/sluice.logrotate"
for f in $(grep -ohE "/var/log/sluice/[A-Za-z0-9_.%-]+" "$SRCDIR"/conf/*.yaml "$SRCDIR/docs/CONFIG.md" | sort -u); do
	case $f in *%*|*.db) continue ;; esac
	hit=false
	for g in "${GLOBS[@]}"; do
		# shellcheck disable=SC2053
		[[ $f == $g ]] && hit=true
	done
	$hit || fail "$f (written by a shipped configuration) is not rotated: globs ${GLOBS[*]}"
done

chmod 755 "$WORK"
D="$WORK/log"
mkdir -m 0750 "$D" "$WORK/run" "$WORK/bin"
chown nobody:"$NG" "$D" "$WORK/run"
SOCK="$WORK/run/ctl"
cat >"$WORK/s.yaml" <<YAML
daemon: {control_socket: $SOCK}
instances:
  src: {plugin: replay, file: "$SRCDIR/tests/data/raw-mixed.pcap", pace: original, loop: 0}
stacks:
  txt: [src, decode, logline, {plugin: file, file: "$D/fw.log", flush_interval: 50ms}]
  cap: [src, {plugin: pcap, file: "$D/fw.pcap", flush_interval: 50ms}]
  js: [src, decode, json, {plugin: file, file: "$D/fw.json", thread: true, flush_interval: 50ms}]
YAML
cat >"$WORK/bin/sluice" <<SH
#!/bin/bash
exec "$SLUICE" "\$@" -c "$WORK/s.yaml"
SH
cat >"$WORK/bin/systemctl" <<SH
#!/bin/bash
echo "\$*" >>"$WORK/systemctl.calls"
exit 1
SH
chmod 755 "$WORK/bin/sluice" "$WORK/bin/systemctl"
# conf NAME USER GROUP: the snippet, for this directory and su user
conf() {
	sed -e "s|/var/log/sluice|$D|g" -e "s|^\([[:space:]]*su\) sluice sluice|\1 $2 $3|" \
		"$SRCDIR/conf/sluice.logrotate" >"$WORK/$1.logrotate"
	grep -q "^[[:space:]]*su $2 $3\$" "$WORK/$1.logrotate" || fail "the snippet has no 'su sluice sluice'"
}
conf own nobody "$NG"
conf root root root

setpriv --reuid=nobody --regid="$NG" --clear-groups -- "$SLUICE" -c "$WORK/s.yaml" >"$WORK/err" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
files_written() { test -s "$D/fw.log" -a -s "$D/fw.pcap" -a -s "$D/fw.json"; }
wait_for 10 files_written || fail "no output: $(cat "$WORK/err")"

# 1. rotation that works
rc=0
PATH="$WORK/bin:$PATH" logrotate -f -s "$WORK/state" "$WORK/own.logrotate" >"$WORK/lr1" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "logrotate: exit $rc: $(cat "$WORK/lr1")"
for f in fw.log fw.pcap fw.json; do
	[ -s "$D/$f.1" ] || fail "$f not rotated: $(ls "$D")"
done
wait_for 10 files_written || fail "no new files after the rotation: $(tail -3 "$WORK/err")"
[ ! -e "$WORK/systemctl.calls" ] || fail "the fallback ran: $(cat "$WORK/systemctl.calls")"

# 2. the directory is root's now: the reopen fails, logrotate says so
chown root:root "$D"
chmod 0755 "$D"
rc=0
PATH="$WORK/bin:$PATH" logrotate -f -s "$WORK/state" "$WORK/root.logrotate" >"$WORK/lr2" 2>&1 || rc=$?
echo "logrotate exit $rc:"
cat "$WORK/lr2"
[ "$rc" != 0 ] || fail "logrotate exited 0 though the daemon could not reopen its files"
grep -q "postrotate" "$WORK/lr2" || fail "logrotate does not blame the postrotate script"
grep -q "3 outputs not reopened" "$WORK/lr2" || fail "sluice's answer is not in logrotate's output"
for f in fw.log fw.pcap fw.json; do
	grep -q ": cannot open $D/$f: Permission denied" "$WORK/lr2" || fail "$f not named"
done
[ ! -e "$WORK/systemctl.calls" ] || fail "the fallback ran: $(cat "$WORK/systemctl.calls")"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "the daemon exited with status $?: $(tail "$WORK/err")"
pass "logrotate exit $rc naming the 3 outputs; .log .pcap .json rotated"
