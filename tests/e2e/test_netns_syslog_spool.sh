#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The syslog output's disk spool (spool_dir), live: seqgen's numbered UDP
# (fault_lib.sh) is logged by an nft rule to NFLOG; sluice turns it into
# logline text and sends it over TCP to tests/e2e/syslog_recv.py on the
# loopback of the same namespace, with a small memory queue (64 KiB, about
# 200 messages).  The oracle is the rule's nft counter and the packet
# numbers (SPT/DPT) in the received text, checked by fault_check.py.
#   outage  the receiver is not listening under 3,000 packets/s until
#           more than 10,000 messages are spooled, then comes up: every packet the kernel logged arrives, in
#           order, none twice, nothing dropped.
#   kill9   sluice is killed with SIGKILL while messages are spooled; the
#           spool as left is read by spool_read.py (its own reader of the
#           format); sluice restarted with the same config delivers
#           exactly those messages, in order, none twice.
#   reload  SIGHUP replaces the instance while messages are spooled: the
#           new one takes the spool over when the old one has stopped and
#           delivers in order, none twice; what its queue could not hold
#           before it had the lock is counted: received + drops == logged.
#   full    spool_max_size 64 KiB and the receiver away: the drops are
#           counted exactly: received + spool_dropped + dropped_messages
#           + possibly_lost == logged, and the core's dropped agrees.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft ss python3
. "$(dirname "$0")/fault_lib.sh"

fault_net 96 56
PORT=5514 DEST="transport: tcp" GOT="$WORK/got.txt" SPOOL="$WORK/spool"
RECV_PID=""
recv_start() {
	ip netns exec "$FB" python3 "$SRCDIR/tests/e2e/syslog_recv.py" $PORT "$GOT" 8>&- &
	RECV_PID=$!
	at_exit "kill -9 $RECV_PID"
	wait_for 10 listening || fail "receiver did not listen"
}
recv_stop() { kill "$RECV_PID"; wait "$RECV_PID" 2>/dev/null || true; }
# the logline text of each received message, for fault_check.py
texts() { strip "$GOT" >"$1"; }
. "$(dirname "$0")/spool_lib.sh"

# ---- reload: a replaced instance takes over the spool, order kept ----
phase_reload() {
	local base logged chk L sd dm
	conf "$WORK/reload.yaml" 64MiB
	start_sluice "$WORK/reload.log" "$WORK/reload.yaml"
	base=$(nft_logged)
	send_bg "$WORK/gen4.out" -n 9000 -r 3000 -t 60 -f 3000000
	wait_for 30 spooled_over "$WORK/reload.log" 1000 ||
		fail "reload: $(counter "$WORK/reload.log" s.syslog spooled) spooled without a receiver"
	sed -i 's/queue_size: 64KiB/queue_size: 128KiB/' "$WORK/reload.yaml"	# a new instance
	kill -HUP "$SLUICE_PID"
	wait "$GEN_PID"
	logged=$(( $(nft_logged) - base ))
	recv_start
	wait_for 20 lines_ge "$logged" || true
	settle
	stop_sluice "$WORK/reload.log"
	recv_stop
	grep -q "reload: .* 1 added, 1 removed" "$WORK/reload.log" || { cat "$WORK/reload.log"; fail "reload: the instance was not replaced"; }
	texts "$WORK/reload.txt"
	chk=$(python3 "$CHECK" text "$WORK/reload.txt") || fail "reload: $chk"
	L="$WORK/reload.log"
	sd=$(counter "$L" s.syslog spool_dropped)
	dm=$(counter "$L" s.syslog dropped_messages)
	RELOAD="logged $logged, received $(lines), spool_dropped $sd (the new instance's queue full before it had the lock), dropped_messages $dm"
	echo "reload: $RELOAD; $chk; $(grep -o 'took over the spool.*' "$L")"
	[ $(( $(field "$chk" records) + sd + dm )) = "$logged" ] ||
		fail "reload: $logged logged != $(field "$chk" records) received + $sd + $dm dropped"
	[ "$(field "$chk" records)" -ge $((logged * 9 / 10)) ] || fail "reload: most messages lost"
	rm -f "$GOT"
}

phase_outage
phase_kill9
phase_reload
phase_full
pass "tcp: outage ($OUTAGE); kill -9 ($KILL9); reload ($RELOAD); full spool ($FULL)"
