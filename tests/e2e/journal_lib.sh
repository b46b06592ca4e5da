# SPDX-License-Identifier: GPL-2.0-or-later
# A private systemd-journald for the journal output's tests: a mount
# namespace of its own (held by a sleeping process) with a tmpfs over /run
# (the network namespaces' /run/netns bound back in: make them first) and
# /var/log/journal, so journald's socket and
# files are the test's only, and its own journald.conf (volatile storage,
# no rate limit) bound over /etc/systemd/journald.conf.  Source after lib.sh.
#   journal_ns_start      the namespace (JNS_PID); skips where it cannot be made
#   in_jns CMD...         run CMD in it; "${JNS[@]}" CMD & in the background ($! is CMD's)
#   journald_start        journald in it (JOURNALD_PID), once its socket is there
#   journald_held_start   journald on a socket journald_held.py holds, as systemd's
#                         socket unit does (JOURNALD_PID)
#   journald_held_kill    that journald killed (SIGKILL): datagrams wait in the socket
#   journald_held_restart the next journald on the same socket (JOURNALD_PID)
#   jctl ARGS...          journalctl on the namespace's journal
#   entries, have_entries N   how many entries sluice wrote; true once there are N
#   journal_netns_start NAME NET  a live test's checks, netns_pair A -> B, then journal_ns_start
#   journal_sluice_start  sluice on $WORK/j.yaml in the mount namespace and B (SLUICE_PID)
JOURNALD=/lib/systemd/systemd-journald
JOURNAL_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

journal_ns_start() {
	[ -x "$JOURNALD" ] || skip "needs $JOURNALD (Debian's systemd)"
	need_cmd journalctl unshare nsenter
	printf '[Journal]\nStorage=volatile\nRateLimitIntervalSec=0\nRateLimitBurst=0\n' >"$WORK/journald.conf"
	unshare --mount --propagation private -- sh -c '
		old=$3/run
		mkdir -p "$old" && mount --rbind /run "$old" &&
		mount -t tmpfs -o mode=755 sluice-jrun /run &&
		mkdir -p /run/systemd/journal /run/log /run/netns || exit 125
		if [ -d "$old/netns" ]; then
			mount --rbind "$old/netns" /run/netns || exit 125
		fi
		if [ -d /var/log/journal ]; then
			mount -t tmpfs -o mode=755 sluice-jvar /var/log/journal || exit 125
		fi
		if [ -f /etc/systemd/journald.conf ]; then
			mount --bind "$2" /etc/systemd/journald.conf || exit 125
		fi
		echo ready >"$1"
		exec sleep 100000' jns "$WORK/jns.ready" "$WORK/journald.conf" "$WORK" &
	JNS_PID=$!
	at_exit "kill $JNS_PID"
	wait_for 10 test -s "$WORK/jns.ready" || skip "cannot make a mount namespace with a private /run/systemd"
	# nsenter execs CMD: a background job's $! is CMD itself (not a subshell's, as a function's)
	JNS=(nsenter -t "$JNS_PID" -m --)
}

in_jns() { nsenter -t "$JNS_PID" -m -- "$@"; }

journald_start() {
	"${JNS[@]}" "$JOURNALD" >>"$WORK/journald.log" 2>&1 &
	JOURNALD_PID=$!
	at_exit "kill $JOURNALD_PID"
	wait_for 10 in_jns test -S /run/systemd/journal/socket -a -d /run/log/journal ||
		{ cat "$WORK/journald.log"; fail "systemd-journald did not start"; }
}

journald_held_start() {
	"${JNS[@]}" python3 "$JOURNAL_LIB_DIR/journald_held.py" "$JOURNALD" "$WORK/journald.pid" \
		>>"$WORK/journald.log" 2>&1 &
	at_exit "kill $!"
	at_exit 'kill $(cat "$WORK/journald.pid")'
	wait_for 10 test -s "$WORK/journald.pid" || fail "journald_held.py did not start journald"
	JOURNALD_PID=$(cat "$WORK/journald.pid")
	wait_for 10 in_jns test -d /run/log/journal || { cat "$WORK/journald.log"; fail "systemd-journald did not start"; }
}

journald_held_kill() {
	kill -KILL "$JOURNALD_PID"
	wait_for 10 eval '! kill -0 "$JOURNALD_PID" 2>/dev/null' || fail "journald $JOURNALD_PID did not die"
}

journald_held_restart() {
	local old=$JOURNALD_PID
	touch "$WORK/journald.pid.restart"
	wait_for 10 eval '[ "$(cat "$WORK/journald.pid")" != "$old" ]' || fail "journald did not start again"
	JOURNALD_PID=$(cat "$WORK/journald.pid")
}

jctl() { in_jns journalctl -D /run/log/journal "$@"; }

# entries: how many entries the journal holds from sluice (its MESSAGE lines)
entries() { jctl -t sluice -o cat 2>/dev/null | wc -l; }
# have_entries N: true once the journal holds N entries from sluice
have_entries() { [ "$(entries)" -ge "$1" ]; }

# journal_netns_start NAME NET: skips without root, nft, python3 or the journal output; namespaces A -> B (netns_pair), then the mount namespace
journal_netns_start() {
	need_root
	need_cmd ip nft python3
	[ -e "$SLUICE_PLUGIN_PATH/journal.so" ] || skip "journal output not built"
	netns_pair "$1" "$2"
	# after the namespaces: the mount namespace binds their /run/netns
	journal_ns_start
}

# journal_sluice_start: sluice on $WORK/j.yaml in the mount namespace and B, logging to $WORK/sluice.log (SLUICE_PID), once nflog bound group G
journal_sluice_start() {
	"${JNS[@]}" ip netns exec "$B" "$SLUICE" -c "$WORK/j.yaml" >"$WORK/sluice.log" 2>&1 &
	SLUICE_PID=$!
	at_exit "kill $SLUICE_PID"
	wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" ||
		{ cat "$WORK/sluice.log"; fail "nflog did not start"; }
}
