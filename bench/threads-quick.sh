#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Quick, by hand (not part of run.sh): the input thread's CPU per packet
# (from /proc/PID/task/TID/schedstat) for nflog -> decode -> json -> file
# alone, and for the four-stack fan-out (pcap, logline -> file, json ->
# file, logline -> UDP syslog) with syslog on its own thread and without.
# Uses the fault tests' namespaces and seqgen; N and RATE from the environment.
# Run as root from anywhere: bash bench/threads-quick.sh (built tree in build/).
TOP=$(cd "$(dirname "$0")/.." && pwd)
export SLUICE=$TOP/build/core/sluice SLUICE_PLUGIN_PATH=$TOP/build/plugins BUILDDIR=$TOP/build SRCDIR=$TOP
cd "$TOP/tests/e2e"
. ./lib.sh
. ./fault_lib.sh
fault_net 96 57
N=${N:-150000} RATE=${RATE:-50000}
# UDP sink for syslog in FB
ip netns exec "$FB" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1<<24)
s.bind(("127.0.0.1", 5514))
while True: s.recv(65536)' &
at_exit "kill $!"
for cfg in json fan4 fan4nothread; do
	case $cfg in
	json) stacks="  j: [fw, decode, json, {plugin: file, file: \"$WORK/j.log\"}]";;
	fan4*) th=true; [ $cfg = fan4nothread ] && th=false
	stacks="  p: [fw, {plugin: pcap, file: \"$WORK/p.pcap\", linktype: raw}]
  t: [fw, decode, logline, {plugin: file, file: \"$WORK/t.log\"}]
  j: [fw, decode, json, {plugin: file, file: \"$WORK/j.log\"}]
  s: [fw, decode, logline, {plugin: syslog, transport: udp, address: \"127.0.0.1:5514\", thread: $th}]";;
	esac
	cat > "$WORK/$cfg.yaml" <<EOF
instances:
  fw: {plugin: nflog, group: $FG, qtimeout: 20ms}
stacks:
$stacks
EOF
	rm -f "$WORK"/*.log "$WORK"/*.pcap
	start_sluice "$WORK/$cfg.out" "$WORK/$cfg.yaml"
	sleep 0.5
	declare -A before
	for t in /proc/$SLUICE_PID/task/*; do before[$t]=$(cut -d' ' -f1 $t/schedstat); done
	send -n $N -r $RATE -t 30 >/dev/null
	logged=$(nft_logged); base=${base:-0}
	wait_for 20 input_caught_up "$WORK/$cfg.out" $(( logged )) >/dev/null 2>&1
	for t in /proc/$SLUICE_PID/task/*; do
		now=$(cut -d' ' -f1 $t/schedstat); d=$(( now - ${before[$t]:-0} ))
		echo "$cfg $(cat $t/comm): $(python3 -c "print('%.3f us/pkt' % ($d/1000/$N))") ($d ns)"
	done
	kill -TERM $SLUICE_PID; wait $SLUICE_PID
	grep -E "counters: (fw|s.syslog) " "$WORK/$cfg.out" | cut -c1-200
	ip netns exec "$FB" nft reset counter ip sluice_fault logged >/dev/null
	unset before
done
