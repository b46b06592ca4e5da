#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fault test: a syslog TCP receiver killed (kill -9) and restarted under
# load (gen: 20,000 messages at ~5,000/s into syslog over TCP on the
# loopback of a private namespace).  sluice must reconnect, never send a
# message twice, and account for every message:
#   received + dropped_messages + possibly_lost == sent
# and the core's dropped == dropped_messages + possibly_lost.
#
# TCP tells the sender what the peer's kernel acknowledged, not what the
# peer's process read: bytes acknowledged but still unread in the dead
# receiver's socket are lost without a trace on the sending side (that is
# what RELP is for).  So the exact round first stops traffic towards the
# receiver with an nft rule, lets it read all it was acknowledged, and only
# then kills it: what sluice wrote meanwhile is unacknowledged, in flight,
# and must come back as possibly_lost, exactly.  The second round kills the
# receiver with nothing held back (the real crash) and reports what was
# lost in its socket (bounded by what one receiver wake-up leaves unread).
# The receiver is tests/e2e/syslog_recv.py: it writes each complete message
# out as it arrives, so its kill loses nothing that it had read (rsyslogd
# would also lose its in-memory queue, which no sender can count).
# The exact round runs again over transport: tls (the receiver speaks TLS
# 1.3 through Python's ssl and sends session tickets sluice must read):
# sluice maps the unacknowledged bytes to the TLS records holding them, and
# every message of such a record must be counted, so the same equality holds.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft ss python3 openssl
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"

NS=$(unique_name slsyf)
make_netns "$NS"
PORT=5514
SENT=20000
RECV_PID=""
C="$WORK/certs"
mkdir "$C"
. "$(dirname "$0")/certs_lib.sh"
ca ca
leaf server ca "IP:127.0.0.1" serverAuth

recv_start() {	# recv_start [CERT KEY]
	ip netns exec "$NS" python3 "$SRCDIR/tests/e2e/syslog_recv.py" $PORT "$WORK/got.txt" "$@" 8>&- &
	RECV_PID=$!
	at_exit "kill -9 $RECV_PID"
	wait_for 10 listening || fail "receiver did not listen"
}
listening() { ip netns exec "$NS" ss -Hltn "sport = :$PORT" | grep -q .; }
# queue COLUMN FILTER: sum of Recv-Q (1) or Send-Q (2) of established sockets
queue() { ip netns exec "$NS" ss -Htn state established "$2" | awk -v c="$1" '{s += $c} END {print s + 0}'; }
lines() { if [ -e "$WORK/got.txt" ]; then wc -l <"$WORK/got.txt"; else echo 0; fi; }
lines_ge() { [ "$(lines)" -ge "$1" ]; }
unread_is_0() { [ "$(queue 1 "sport = :$PORT")" = 0 ]; }
counter() { grep "counters: $2 " "$1" | tail -1 | sed -nE "s/.* $3=([0-9]+).*/\1/p"; }

# round NAME HOLD [tls]: one run; HOLD=1 holds traffic back before the kill
round() {
	local name=$1 hold=$2 log="$WORK/$1.log" tr=tcp tlsopt="" rargs=()
	if [ "${3:-}" = tls ]; then
		tr=tls tlsopt="tls_ca_file: '$C/ca.pem',"
		rargs=("$C/server.pem" "$C/server.key")
	fi
	rm -f "$WORK/got.txt"
	cat >"$WORK/$name.yaml" <<YAML
stacks:
  s:
    - {plugin: gen, count: $SENT, per_tick: 5, interval: 1ms}
    - {plugin: syslog, transport: $tr, address: '127.0.0.1:$PORT', queue_size: 64KiB, $tlsopt
       message_size: 256, reconnect_min: 50ms, reconnect_max: 200ms}
YAML
	recv_start "${rargs[@]}"
	ip netns exec "$NS" "$SLUICE" -c "$WORK/$name.yaml" >"$log" 2>&1 8>&- &
	SLUICE_PID=$!
	at_exit "kill $SLUICE_PID"
	wait_for 10 lines_ge 3000 || { cat "$log"; fail "$name: messages do not arrive"; }
	if [ "$hold" = 1 ]; then
		ip netns exec "$NS" nft add table inet sl_fault
		ip netns exec "$NS" nft add chain inet sl_fault out '{ type filter hook output priority 0; }'
		ip netns exec "$NS" nft add rule inet sl_fault out tcp dport $PORT drop
		# sluice writes on: unacknowledged (the event, not 0.3 s)
		in_flight() { [ "$(queue 2 "dport = :$PORT")" -gt 0 ]; }
		wait_for 10 in_flight || fail "$name: nothing in flight to lose"
		wait_for 5 unread_is_0 || fail "$name: receiver does not read"
		in_flight || fail "$name: nothing in flight to lose"
	fi
	kill -9 "$RECV_PID"
	wait "$RECV_PID" 2>/dev/null || true
	sleep 0.3	# receiver down: sluice queues, then drops
	[ "$hold" = 1 ] && ip netns exec "$NS" nft delete table inet sl_fault
	recv_start "${rargs[@]}"
	wait "$SLUICE_PID" || { cat "$log"; fail "$name: sluice exit status $?"; }
	# sluice has exited: until the receiver has read every byte (any state:
	# the connections are closing), then until it has written the rest
	drained() {
		[ "$(ip netns exec "$NS" ss -Htn "sport = :$PORT" | awk '{s += $2} END {print s + 0}')" = 0 ]
	}
	wait_for 10 drained || fail "$name: the receiver does not read the rest"
	local n=-1
	while [ "$n" != "$(lines)" ]; do
		n=$(lines)
		sleep 0.3
	done
	kill "$RECV_PID"
	wait "$RECV_PID" 2>/dev/null || true

	local sent got dm pl core rec dups
	sent=$(counter "$log" s.gen out)
	dm=$(counter "$log" s.syslog dropped_messages)
	pl=$(counter "$log" s.syslog possibly_lost)
	core=$(counter "$log" s.syslog dropped)
	rec=$(counter "$log" s.syslog reconnects)
	got=$(lines)
	dups=$(sed 's/.*\]: //' "$WORK/got.txt" | sort | uniq -d | wc -l)
	UNCOUNTED=$((sent - got - dm - pl))
	echo "$name: sent $sent, received $got, dropped_messages $dm, possibly_lost $pl," \
		"core dropped $core, reconnects $rec, uncounted $UNCOUNTED"
	[ "$sent" = $SENT ] || fail "$name: gen sent $sent"
	[ "$dups" = 0 ] || fail "$name: $dups messages received twice"
	[ "$(grep -Evc '^<166>[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8} [^ ]+ sluice\[[0-9]+\]: record [0-9]+$' "$WORK/got.txt")" = 0 ] ||
		{ grep -Ev ' sluice\[[0-9]+\]: record [0-9]+$' "$WORK/got.txt" | head -3; fail "$name: garbled messages"; }
	[ "${rec:-0}" -ge 1 ] || { cat "$log"; fail "$name: no reconnect"; }
	[ "$core" = $((dm + pl)) ] || fail "$name: core dropped $core != $dm + $pl"
	[ "$UNCOUNTED" -ge 0 ] || fail "$name: more received than sent"
	PL=$pl
}

round exact 1
[ "$UNCOUNTED" = 0 ] || fail "exact: $UNCOUNTED messages lost uncounted"
[ "$PL" -gt 0 ] || fail "exact: nothing counted as possibly lost"
round crash 0
# unread in the dead receiver's socket: at most a few wake-ups' worth
[ "$UNCOUNTED" -le 500 ] || fail "crash: $UNCOUNTED messages lost uncounted"
round tls_exact 1 tls
[ "$UNCOUNTED" = 0 ] || fail "tls_exact: $UNCOUNTED messages lost uncounted"
[ "$PL" -gt 0 ] || fail "tls_exact: nothing counted as possibly lost"
pass "every message received once or counted (tcp and tls)"
