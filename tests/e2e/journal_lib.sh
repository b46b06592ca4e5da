# SPDX-License-Identifier: GPL-2.0-or-later
# A private systemd-journald for the journal output's tests: a mount
# namespace of its own (held by a sleeping process) with tmpfs over
# /run/systemd, /run/log and /var/log/journal, so journald's socket and
# files are the test's only.  Source after lib.sh.
#   journal_ns_start      the namespace (JNS_PID); skips where it cannot be made
#   in_jns CMD...         run CMD in it
#   journald_start        journald in it (JOURNALD_PID), once its socket is there
#   journald_kill         journald stopped by its PID (SIGKILL), its socket left behind
#   jctl ARGS...          journalctl on the namespace's journal
JOURNALD=/lib/systemd/systemd-journald

journal_ns_start() {
	[ -x "$JOURNALD" ] || skip "needs $JOURNALD (Debian's systemd)"
	need_cmd journalctl unshare nsenter
	unshare --mount --propagation private -- sh -c '
		mount -t tmpfs -o mode=755 sluice-jrun /run/systemd &&
		mkdir /run/systemd/journal &&
		mkdir -p /run/log && mount -t tmpfs -o mode=755 sluice-jlog /run/log || exit 125
		if [ -d /var/log/journal ]; then
			mount -t tmpfs -o mode=755 sluice-jvar /var/log/journal || exit 125
		fi
		echo ready >"$1"
		exec sleep 100000' jns "$WORK/jns.ready" &
	JNS_PID=$!
	at_exit "kill $JNS_PID"
	wait_for 10 test -s "$WORK/jns.ready" || skip "cannot make a mount namespace with a private /run/systemd"
}

in_jns() { nsenter -t "$JNS_PID" -m -- "$@"; }

journald_start() {
	in_jns "$JOURNALD" >>"$WORK/journald.log" 2>&1 &
	JOURNALD_PID=$!
	at_exit "kill $JOURNALD_PID"
	wait_for 10 in_jns test -S /run/systemd/journal/socket -a -d /run/log/journal ||
		{ cat "$WORK/journald.log"; fail "systemd-journald did not start"; }
}

journald_kill() {
	kill -KILL "$JOURNALD_PID"
	wait "$JOURNALD_PID" 2>/dev/null || true
}

jctl() { in_jns journalctl -D /run/log/journal "$@"; }
