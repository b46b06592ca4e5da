#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog: an overrun at the END of the traffic is counted.  The daemon is
# stopped (SIGSTOP) while a burst is logged to a 64 KiB socket buffer, so
# the kernel drops nearly all of it (ENOBUFS), and nothing is logged
# afterwards: no later NFULA_SEQ reveals the gap.  The nft counter on the
# log rule is the oracle (what the kernel logged).
#  A. qthreshold 1 (one event per datagram): the kernel's drop count of
#     the socket is the events lost, so in + lost == logged exactly, while
#     the daemon runs (SIGUSR1) and in its last counters line.
#  B. Batches of 50 events per datagram (qthreshold 50; the burst is a
#     whole number of batches, so none waits for the kernel's timer): the
#     drop count is a lower bound: 0 < lost and in + lost <= logged.  Then
#     one more packet reveals the gap by its sequence number: in + lost ==
#     logged exactly, and lost == seq_lost (the dropped datagrams that
#     bounded it are not counted again).  A second burst at the end: lost
#     grows by at least its dropped datagrams although seq_lost already
#     exceeds the drops, then another packet makes it exact again.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft
. "$(dirname "$0")/fault_lib.sh"

fault_net 86 46
BURST=3000	# a multiple of B's qthreshold

# run_case NAME EXTRA: start sluice with a 64 KiB buffer (the smallest) and EXTRA nflog keys
run_case() {
	cat >"$WORK/$1.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $FG, netlink_buffer: 64KiB$2}
stacks:
  txt: [fw, decode, logline, {plugin: file, file: "$WORK/$1.txt"}]
YAML
	start_sluice "$WORK/$1.log" "$WORK/$1.yaml"
}
# accounted LOG LOGGED: SIGUSR1 shows in + lost == LOGGED
accounted() {
	local i l
	kill -USR1 "$SLUICE_PID"
	sleep 0.05
	i=$(counter "$1" fw in)
	l=$(counter "$1" fw lost)
	[ -n "$i" ] && [ -n "$l" ] && [ $((i + l)) = "$2" ]
}
# settled LOG [ENOBUFS]: two SIGUSR1 lines in a row agree on in and lost, enobufs > ENOBUFS
settled() {
	local a b
	kill -USR1 "$SLUICE_PID"
	sleep 0.2
	a="$(counter "$1" fw in) $(counter "$1" fw lost)"
	kill -USR1 "$SLUICE_PID"
	sleep 0.2
	b="$(counter "$1" fw in) $(counter "$1" fw lost)"
	[ "$a" = "$b" ] && [ "$(counter "$1" fw enobufs)" -gt "${2:-0}" ] 2>/dev/null
}
stop_sluice() {
	kill -TERM "$SLUICE_PID"
	wait "$SLUICE_PID" || { cat "$1"; fail "sluice exited with status $?"; }
}
# burst NAME [FIRST]: SIGSTOP, BURST packets all logged by the kernel, SIGCONT
burst() {
	local before=$(nft_logged)
	kill -STOP "$SLUICE_PID"
	send -n $BURST -f "${2:-0}" -r 5000 -t 60 >"$WORK/gen-$1.out"
	wait_for 10 test "$(nft_logged)" = $((before + BURST)) ||
		fail "$1: the kernel logged $(($(nft_logged) - before)) of $BURST: $(cat "$WORK/gen-$1.out")"
	kill -CONT "$SLUICE_PID"
}
show() { echo "$1: logged $2, $(grep "counters: fw (" "$WORK/$1.log" | tail -1 | sed 's/.*counters: //')"; }

# ---- A: one event per datagram: exact ----
run_case a ", qthreshold: 1, nlbufsiz: 4KiB"
burst a
logged=$(nft_logged)
wait_for 20 accounted "$WORK/a.log" "$logged" || {
	show a "$logged"
	fail "a: in + lost != $logged logged (seq_lost $(counter "$WORK/a.log" fw seq_lost)): the overrun at the end is not counted"
}
stop_sluice "$WORK/a.log"
show a "$logged"
in=$(counter "$WORK/a.log" fw in)
lost=$(counter "$WORK/a.log" fw lost)
[ "$(counter "$WORK/a.log" fw enobufs)" -gt 0 ] || fail "a: no ENOBUFS: the burst did not overrun"
[ "$lost" -gt 0 ] && [ $((in + lost)) = "$logged" ] || fail "a: at exit in=$in + lost=$lost != $logged logged"
[ "$(wc -l <"$WORK/a.txt")" = "$in" ] || fail "a: the file holds $(wc -l <"$WORK/a.txt") lines, in=$in"
A_FIG="$in received + $lost lost = $logged logged"

# ---- B: batches: a lower bound, then exact ----
base=$(nft_logged)
run_case b ", qthreshold: 50"
burst b
logged=$(($(nft_logged) - base))
wait_for 20 settled "$WORK/b.log" || { show b "$logged"; fail "b: no ENOBUFS or the counters do not settle"; }
show b "$logged"
in=$(counter "$WORK/b.log" fw in)
lost=$(counter "$WORK/b.log" fw lost)
[ "$lost" -gt 0 ] || fail "b: the kernel dropped datagrams but lost=0"
[ $((in + lost)) -le "$logged" ] || fail "b: in=$in + lost=$lost > $logged logged: counted too many"
B_FIG="$in received + at least $lost lost of $logged"
# one more packet: its sequence number reveals the whole gap
send -n 1 -f $BURST -r 1 -t 10 >"$WORK/gen-b2.out"
logged=$(($(nft_logged) - base))
wait_for 20 accounted "$WORK/b.log" "$logged" || { show b "$logged"; fail "b: a later packet did not make the count exact"; }
show b "$logged"
lost=$(counter "$WORK/b.log" fw lost)
seq_lost=$(counter "$WORK/b.log" fw seq_lost)
[ "$lost" = "$seq_lost" ] || fail "b: lost=$lost but seq_lost=$seq_lost: counted twice?"
B_FIG="$B_FIG, exact ($lost) once a later packet came"

# a second overrun at the end: counted on top of the first
lost1=$lost
burst b2 $((BURST + 1))
logged=$(($(nft_logged) - base))
wait_for 20 settled "$WORK/b.log" 1 || { show b "$logged"; fail "b2: no second ENOBUFS or the counters do not settle"; }
show b "$logged"
in=$(counter "$WORK/b.log" fw in)
lost=$(counter "$WORK/b.log" fw lost)
[ "$lost" -gt "$lost1" ] || fail "b2: the second overrun at the end was not counted (lost stays $lost)"
[ $((in + lost)) -le "$logged" ] || fail "b2: in=$in + lost=$lost > $logged logged: counted too many"
B_FIG="$B_FIG; a second overrun at the end: at least $((lost - lost1)) more"
send -n 1 -f $((2 * BURST + 1)) -r 1 -t 10 >"$WORK/gen-b3.out"
logged=$(($(nft_logged) - base))
wait_for 20 accounted "$WORK/b.log" "$logged" || { show b "$logged"; fail "b2: a later packet did not make the count exact"; }
stop_sluice "$WORK/b.log"
show b "$logged"
in=$(counter "$WORK/b.log" fw in)
lost=$(counter "$WORK/b.log" fw lost)
seq_lost=$(counter "$WORK/b.log" fw seq_lost)
[ $((in + lost)) = "$logged" ] || fail "b: at exit in=$in + lost=$lost != $logged logged"
[ "$lost" = "$seq_lost" ] || fail "b: lost=$lost but seq_lost=$seq_lost: counted twice?"
pass "end-of-traffic overrun, qthreshold 1: $A_FIG; batched: $B_FIG, exact ($lost) again"
