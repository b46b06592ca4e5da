#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The syslog output's disk spool with transport relp, live, against
# rsyslogd's imrelp (spool_rsyslog_lib.sh has the set-up):
#   outage  imrelp is not listening under 3,000 packets/s until more
#           than 10,000 messages are spooled, then comes up: every packet the kernel logged arrives, in order,
#           none twice, nothing dropped, the spool empty at the end (the
#           last SL_RELP_WINDOW spooled messages are proven by a session
#           close, see relp_spool_sync in syslog_send.c).
#   rkill   rsyslogd is killed with SIGKILL mid-stream (once 1,000
#           messages arrived) and started again when sluice has spooled
#           what it could not send: every logged packet arrives (first arrivals in
#           order); the duplicates RELP allows (acknowledgements lost with
#           the receiver) are counted and reported.
#   dkill   sluice is killed with SIGKILL while it sends a spool of 100,000
#           to a live imrelp; the restart sends what the spool had not
#           acknowledged: every logged packet arrives (first arrivals in
#           order); the duplicates (messages the receiver had but the
#           spool had not yet proven, at most 2 * SL_RELP_WINDOW + 64 = 320)
#           are counted and reported.
#   kill9   sluice is killed with SIGKILL while messages are spooled (the
#           receiver away); the restart delivers exactly those, in order.
#   full    spool_max_size 64 KiB and the receiver away: received +
#           spool_dropped + dropped_messages + possibly_lost == logged.
. "$(dirname "$0")/lib.sh"
TRANSPORT=relp
. "$(dirname "$0")/spool_rsyslog_lib.sh"

# arrivals FILE: texts FILE from what rsyslogd got, and for a receiver that
# may see a message twice: CHK (fault_check.py's summary), DUPS, DIST (the
# distinct messages) and DISORDER (first arrivals out of order)
arrivals() {
	texts "$1"
	CHK=$(python3 "$CHECK" text "$1" 2>/dev/null) || true
	DUPS=$(field "$CHK" dups)
	DIST=$(( $(field "$CHK" records) - DUPS ))
	DISORDER=$(first_in_order "$1")
}
arrivals_ok() {	# arrivals_ok PHASE LOGGED: each arrived, no holes, in order
	[ "$DIST" = "$2" ] || fail "$1: $DIST of $2 distinct messages arrived"
	[ "$(field "$CHK" holes)" = 0 ] || fail "$1: holes"
	[ "$DISORDER" = 0 ] || fail "$1: $DISORDER first arrivals out of order"
}

phase_rkill() {
	local base logged L
	conf "$WORK/rkill.yaml" 64MiB
	recv_start
	# librelp leaks inside itself after a reconnect (tests/lsan-librelp.supp);
	# only in this phase, and only what librelp allocated, is that forgiven.
	LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$SRCDIR/tests/lsan-librelp.supp:print_suppressions=0" \
		start_sluice "$WORK/rkill.log" "$WORK/rkill.yaml"
	base=$(nft_logged)
	send_bg "$WORK/gen5.out" -n 18000 -r 3000 -t 60 -f 3000000
	wait_for 20 lines_ge 1000 || fail "rkill: $(lines) messages arrived"
	local before=$(lines)
	rs_kill
	# Down until sluice noticed: it spools what the receiver cannot take.
	wait_for 30 spooled_over "$WORK/rkill.log" 0 ||
		fail "rkill: nothing spooled with the receiver killed"
	local down=$(lines)
	recv_start
	wait "$GEN_PID"
	logged=$(( $(nft_logged) - base ))
	wait_for 20 lines_ge "$logged" || true
	settle
	stop_sluice "$WORK/rkill.log"
	recv_stop
	arrivals "$WORK/rkill.txt"
	L="$WORK/rkill.log"
	RKILL="logged $logged, received $(lines) ($before before the kill, $down when down), distinct $DIST, duplicates $DUPS, holes $(field "$CHK" holes), spooled $(counter "$L" s.syslog spooled), dropped $(counter "$L" s.syslog dropped), reconnects $(counter "$L" s.syslog reconnects)"
	echo "rkill: $RKILL"
	arrivals_ok rkill "$logged"
	[ "$(counter "$L" s.syslog dropped)" = 0 ] || fail "rkill: drops"
	[ "$down" -lt "$logged" ] || fail "rkill: the kill came after the stream ended"
	[ "$(segments)" = 0 ] || fail "rkill: segments left"
	rm -f "$GOT"
}

phase_dkill() {
	local base logged L at
	conf "$WORK/dkill.yaml" 64MiB
	start_sluice "$WORK/dkill1.log" "$WORK/dkill.yaml"
	base=$(nft_logged)
	send -n 100000 -r 20000 -t 30 -f 4000000 >"$WORK/gen6.out"
	logged=$(( $(nft_logged) - base ))
	wait_for 10 input_caught_up "$WORK/dkill1.log" "$logged" ||
		fail "dkill: nflog got $(counter "$WORK/dkill1.log" fw in) of $logged"
	recv_start
	wait_for 10 lines_ge 2000 || fail "dkill: the spool is not being sent"
	# rsyslogd paused first: sluice cannot get past librelp's window, so the
	# kill lands mid-spool however fast this machine drains it
	kill -STOP "$RS_PID"
	kill -9 "$SLUICE_PID"
	wait "$SLUICE_PID" 2>/dev/null || true
	at=$(lines)
	kill -CONT "$RS_PID"
	start_sluice "$WORK/dkill2.log" "$WORK/dkill.yaml"
	wait_for 20 lines_ge "$logged" || true
	settle
	stop_sluice "$WORK/dkill2.log"
	recv_stop
	arrivals "$WORK/dkill.txt"
	L="$WORK/dkill2.log"
	DKILL="logged $logged, $at received at the kill, then $(lines) in all, distinct $DIST, duplicates $DUPS, holes $(field "$CHK" holes), spool_sent by the restart $(counter "$L" s.syslog spool_sent)"
	echo "dkill: $DKILL"
	[ "$at" -lt "$logged" ] || fail "dkill: the spool was sent in full before the kill; the test proves nothing"
	arrivals_ok dkill "$logged"
	[ "$DUPS" -le 320 ] || fail "dkill: $DUPS duplicates, more than the 320 librelp can hold unproven"
	[ "$(segments)" = 0 ] || fail "dkill: segments left"
	rm -f "$GOT"
}

phase_outage
phase_rkill
phase_dkill
phase_kill9
phase_full
pass "relp: outage ($OUTAGE); receiver kill -9 ($RKILL); sluice kill -9 while sending ($DKILL); kill -9 ($KILL9); full spool ($FULL)"
