#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fault: SIGTERM under load.  One nflog input (the kernel's default 1 s
# queue timeout: up to a second of events can wait in the kernel when the
# signal comes) feeds an NFLOG-link-type pcap and decode -> logline -> file.
#  A. SIGTERM while numbered traffic flows at a high rate.  Every event the
#     input received reaches both files (files == the input's `in`, same
#     packets in both), and no event the kernel numbered for the input
#     before the last one it delivered is missing without a count (the
#     NFULA_SEQ holes in the pcap == the input's seq_lost).  What the nft
#     counter counted beyond that was logged after the input stopped.
#  B. The traffic stops, then SIGTERM at once (nothing waits for the
#     kernel's queue timeout or for sluice to catch up): the files hold
#     exactly what the nft counter counted.
# The rate is 100,000/s divided by SLUICE_TEST_TIME_FACTOR: a sanitized
# daemon reads that much slower, and B asserts that nothing overran.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 tcpdump capinfos
. "$(dirname "$0")/fault_lib.sh"

RATE=$((100000 / TIME_FACTOR))
fault_net 92 52

# run_case NAME: start sluice with its own files
run_case() {
	mkdir "$WORK/$1"
	cat >"$WORK/$1.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $FG}
stacks:
  cap: [fw, {plugin: pcap, file: "$WORK/$1/cap.pcap", linktype: nflog${FAULT_OUTPUT_KEYS:-}}]
  txt: [fw, decode, logline, {plugin: file, file: "$WORK/$1/fw.log"${FAULT_OUTPUT_KEYS:-}}]
YAML
	start_sluice "$WORK/$1.log" "$WORK/$1.yaml"
}
stop_sluice() {
	kill -TERM "$SLUICE_PID"
	wait "$SLUICE_PID" || { cat "$1"; fail "sluice exited with status $?"; }
}
# files_hold NAME WANT: both files hold WANT records, the same packets
files_hold() {
	local d="$WORK/$1" caps pf tf
	caps=$(capinfos -M -c -T "$d/cap.pcap" | awk -F'\t' 'NR == 2 {print $2}')
	pf=$(python3 "$CHECK" pcap "$d/cap.pcap") || fail "$1: cap.pcap: $pf"
	tf=$(python3 "$CHECK" text "$d/fw.log") || fail "$1: fw.log: $tf"
	echo "$1: pcap: capinfos $caps, $pf"
	echo "$1: text: $tf"
	[ "$caps" = "$2" ] || fail "$1: the pcap holds $caps packets, expected $2"
	[ "$(echo "$pf" | cut -d' ' -f1)" = "records=$2" ] || fail "$1: pcap: $pf, expected $2"
	[ "$(echo "$tf" | cut -d' ' -f1)" = "records=$2" ] || fail "$1: text: $tf, expected $2"
	[ "$(echo "$pf" | cut -d' ' -f1-8)" = "$(echo "$tf" | cut -d' ' -f1-8)" ] ||
		fail "$1: the pcap and the text file hold different packets"
}

# ---- A: SIGTERM while the traffic flows ----
run_case a
# Until after the stop, however long a busy machine (or TSan) makes it.
send_bg "$WORK/gen-a.out" -n 20000000 -r $RATE -t 300
# Well into the stream (the event, not a time): 20,000 packets read.
wait_for 10 live_over "$WORK/a.log" fw in 20000 || fail "a: the traffic does not reach sluice"
kill -0 "$GEN_PID" || fail "the generator stopped early: $(cat "$WORK/gen-a.out")"
stop_sluice "$WORK/a.log"
at_stop=$(nft_logged)
kill -TERM "$GEN_PID" 2>/dev/null || true	# it may have finished since
wait "$GEN_PID" || true
total=$(nft_logged)
in=$(counter "$WORK/a.log" fw in)
lost=$(counter "$WORK/a.log" fw seq_lost)
enobufs=$(counter "$WORK/a.log" fw enobufs)
grep "counters:" "$WORK/a.log"
files_hold a "$in"
pf=$(python3 "$CHECK" pcap "$WORK/a/cap.pcap")
holes=$(echo "$pf" | tr ' ' '\n' | sed -n 's/^nflog_seq_holes=//p')
last=$(echo "$pf" | tr ' ' '\n' | sed -n 's/^nflog_seq_last=//p')
[ "$holes" = "$lost" ] || fail "a: $holes NFLOG sequence numbers missing from the pcap, seq_lost=$lost"
[ $((last + 1)) = $((in + lost)) ] || fail "a: last NFLOG seq $last, but in=$in + seq_lost=$lost"
[ "$(counter "$WORK/a.log" cap.pcap dropped)" = 0 ] && [ "$(counter "$WORK/a.log" txt.file dropped)" = 0 ] ||
	fail "a: an output dropped records"
after=$((at_stop - in - lost))
echo "a: kernel logged $at_stop by the time sluice had exited ($total when the traffic stopped); input in=$in, seq_lost=$lost (enobufs $enobufs); $after logged after the input stopped"
A_FIG="$in of $at_stop at SIGTERM (${lost} counted lost)"

# ---- B: the traffic stops, SIGTERM at once ----
run_case b
send -n 60037 -r $RATE -t 60 >"$WORK/gen-b.out"
stop_sluice "$WORK/b.log"
logged=$(nft_logged)
logged=$((logged - total))
grep "counters:" "$WORK/b.log"
echo "b: sent $(sent_of "$WORK/gen-b.out"), kernel logged $logged, input in=$(counter "$WORK/b.log" fw in)"
[ "$(counter "$WORK/b.log" fw enobufs)" = 0 ] && [ "$(counter "$WORK/b.log" fw seq_lost)" = 0 ] ||
	fail "b: nflog overran: the load is too high for this machine"
files_hold b "$logged"
pass "SIGTERM at $RATE/s: files hold all $A_FIG; SIGTERM right after $logged packets at $RATE/s: all $logged in both files, 0 lost"
