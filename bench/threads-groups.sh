#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Quick, by hand (not part of run.sh): one NFLOG group read by one input
# thread against the same traffic split over two groups (nft rules by the
# parity of seqgen's packet number) read by two input threads, each
# nflog -> decode -> json -> file.  Prints each thread's CPU per packet
# (/proc/PID/task/TID/schedstat) and the loss (nft counter - input's in).
# Run as root: bash bench/threads-groups.sh (built tree in build/);
# N and RATE from the environment.
TOP=$(cd "$(dirname "$0")/.." && pwd)
export SLUICE=$TOP/build/core/sluice SLUICE_PLUGIN_PATH=$TOP/build/plugins BUILDDIR=$TOP/build SRCDIR=$TOP
cd "$TOP/tests/e2e"
. ./lib.sh
. ./fault_lib.sh
fault_net 97 58
N=${N:-300000} RATE=${RATE:-100000}
G0=58 G1=59
for mode in one two; do
	if [ $mode = two ]; then
		ip netns exec "$FB" nft -f - <<NFT
flush chain ip sluice_fault in
table ip sluice_fault {
	chain in {
		ip saddr 10.$FN.0.1 udp dport 20000-20999 udp sport & 1 == 0 counter name "logged" log group $G0 prefix "fault " drop
		ip saddr 10.$FN.0.1 udp dport 20000-20999 counter name "logged" log group $G1 prefix "fault " drop
	}
}
NFT
		inputs="  g0: {plugin: nflog, group: $G0, thread: true}
  g1: {plugin: nflog, group: $G1, thread: true}"
		stacks="  j0: [g0, decode, json, {plugin: file, file: \"$WORK/j0.log\"}]
  j1: [g1, decode, json, {plugin: file, file: \"$WORK/j1.log\"}]"
	else
		inputs="  g0: {plugin: nflog, group: $G0}"
		stacks="  j0: [g0, decode, json, {plugin: file, file: \"$WORK/j0.log\"}]"
	fi
	printf 'instances:\n%s\nstacks:\n%s\n' "$inputs" "$stacks" >"$WORK/$mode.yaml"
	ip netns exec "$FB" "$SLUICE" -c "$WORK/$mode.yaml" >"$WORK/$mode.out" 2>&1 &
	SLUICE_PID=$!
	wait_for 10 grep -qs "bound NFLOG group $G0" "$WORK/$mode.out" || { cat "$WORK/$mode.out"; exit 1; }
	sleep 0.5
	declare -A before
	for t in /proc/$SLUICE_PID/task/*; do before[$t]=$(cut -d' ' -f1 $t/schedstat); done
	gen=$(send -n $N -r $RATE -t 60)
	sleep 1
	for t in /proc/$SLUICE_PID/task/*; do
		d=$(( $(cut -d' ' -f1 $t/schedstat) - ${before[$t]:-0} ))
		echo "$mode $(cat $t/comm): $(python3 -c "print('%.3f us/pkt of all packets' % ($d/1000/$N))")"
	done
	unset before
	logged=$(nft_logged)
	kill -TERM $SLUICE_PID; wait $SLUICE_PID
	in=0; for g in g0 g1; do v=$(counter "$WORK/$mode.out" $g in || true); in=$((in + ${v:-0})); done
	echo "$mode: generator: $gen; logged $logged, inputs got $in, lost $((logged - in)) ($(grep -o 'enobufs=[0-9]*' "$WORK/$mode.out" | tr '\n' ' '))"
	ip netns exec "$FB" nft reset counter ip sluice_fault logged >/dev/null
done
