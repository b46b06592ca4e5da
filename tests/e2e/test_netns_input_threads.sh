#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Inputs on several threads.  Two nft rules split numbered traffic (60,000
# packets at 20k/s) over two NFLOG groups by the parity of the packet
# number (seqgen's source port), each rule with its own counter.  Two nflog
# inputs, one with `thread: true`, the other spread by `daemon.threads: 1`:
# each runs on a thread of its own with its subtree (pcap, and decode ->
# logline -> file with the file output on a thread too).  Every file holds
# exactly what its rule's counter counted, each packet number once, in
# order, and only numbers of its own parity.  The stacks also meet in two
# named outputs fed by both inputs (the per-CPU recipe of
# docs/ARCHITECTURE.md): a file with `thread: true, when_full: block`, and a
# pcap with no key, which the core puts on a thread of its own because its
# producers run on two threads.  Each holds exactly even + odd records,
# each number once, and each input's numbers in order.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 tcpdump capinfos
. "$(dirname "$0")/fault_lib.sh"

N=60000 RATE=20000
fault_net 95 55
G0=55 G1=56
ip netns exec "$FB" nft -f - <<NFT || fail "cannot load the split rules"
flush chain ip sluice_fault in
table ip sluice_fault {
	counter even { }
	counter odd { }
	chain in {
		ip saddr 10.$FN.0.1 udp dport 20000-20999 udp sport & 1 == 0 counter name "even" log group $G0 prefix "fault " drop
		ip saddr 10.$FN.0.1 udp dport 20000-20999 counter name "odd" log group $G1 prefix "fault " drop
	}
}
NFT
nft_count() { ip netns exec "$FB" nft list counter ip sluice_fault "$1" | sed -n 's/.*packets \([0-9]*\).*/\1/p'; }

cat >"$WORK/sluice.yaml" <<YAML
daemon:
  threads: 1
instances:
  g0: {plugin: nflog, group: $G0, qtimeout: 20ms, thread: true}
  g1: {plugin: nflog, group: $G1, qtimeout: 20ms}
  all-log: {plugin: file, file: "$WORK/all.log", thread: true, when_full: block}
  all-pcap: {plugin: pcap, file: "$WORK/all.pcap", linktype: raw}
stacks:
  cap0: [g0, {plugin: pcap, file: "$WORK/g0.pcap", linktype: raw}]
  txt0: [g0, decode, logline, {plugin: file, file: "$WORK/g0.log", thread: true, when_full: block}]
  cap1: [g1, {plugin: pcap, file: "$WORK/g1.pcap", linktype: raw}]
  txt1: [g1, decode, logline, {plugin: file, file: "$WORK/g1.log", thread: true, when_full: block}]
  alltxt0: [g0, decode, logline, all-log]
  alltxt1: [g1, decode, logline, all-log]
  allcap0: [g0, all-pcap]
  allcap1: [g1, all-pcap]
YAML
"$SLUICE" -t -c "$WORK/sluice.yaml" >"$WORK/tree.txt" || fail "sluice -t refuses the config"
grep -q "g0 (nflog .*; own thread)" "$WORK/tree.txt" || { cat "$WORK/tree.txt"; fail "sluice -t does not show g0's thread"; }
ip netns exec "$FB" "$SLUICE" -c "$WORK/sluice.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G1" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }
wait_for 10 grep -qs "bound NFLOG group $G0" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }
# Each nflog input, each file output, the shared pcap, and the main thread.
# "started:" follows the bind lines once the threads run: wait for it.
wait_for 10 grep -qs "started: " "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "sluice did not start"; }
grep -q "started: .* inputs, 7 threads" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "not 7 threads"; }
grep -q "all-pcap (pcap .*; own thread, queue 64 batches, when_full drop)" "$WORK/tree.txt" ||
	{ cat "$WORK/tree.txt"; fail "sluice -t does not show the shared pcap on its own thread"; }
grep -q "g1 (nflog .*; input thread 1)" "$WORK/tree.txt" || fail "sluice -t does not show g1 on input thread 1"
ps -L -o comm= -p "$SLUICE_PID" | sort >"$WORK/threads.txt"
send -n $N -r $RATE -t 20 >"$WORK/gen.out"
even=$(nft_count even) odd=$(nft_count odd)
caught_up() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.05
	[ "$(counter "$WORK/sluice.log" g0 in)" = "$even" ] && [ "$(counter "$WORK/sluice.log" g1 in)" = "$odd" ]
}
wait_for 20 caught_up || fail "inputs received $(counter "$WORK/sluice.log" g0 in)/$even and $(counter "$WORK/sluice.log" g1 in)/$odd"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with status $?"; }
L="$WORK/sluice.log"
grep "counters:" "$L"
echo "threads: $(tr '\n' ' ' <"$WORK/threads.txt")"
echo "sent $(sent_of "$WORK/gen.out"): rule even $even, rule odd $odd"
[ $((even + odd)) = "$N" ] && [ "$even" -gt 0 ] && [ "$odd" -gt 0 ] || fail "the rules did not split the traffic"

check_group() {	# check_group G COUNT PARITY
	local g=$1 want=$2 par=$3 caps lines pf tf
	caps=$(capinfos -M -c -T "$WORK/$g.pcap" | awk -F'\t' 'NR == 2 {print $2}')
	lines=$(wc -l <"$WORK/$g.log")
	pf=$(python3 "$CHECK" pcap "$WORK/$g.pcap") || fail "$g.pcap: $pf"
	tf=$(python3 "$CHECK" text "$WORK/$g.log") || fail "$g.log: $tf"
	echo "$g: pcap $caps ($pf); text $lines lines"
	[ "$caps" = "$want" ] && [ "$lines" = "$want" ] || fail "$g: pcap $caps, text $lines, its rule counted $want"
	[ "$(counter "$L" "$g" enobufs)" = 0 ] || fail "$g overran"
	# Only its own parity: the split really reached two inputs.
	python3 - "$WORK/$g.log" "$par" <<'PY' || fail "$g holds packets of the other rule"
import re, sys
bad = 0
for line in open(sys.argv[1]):
    spt, dpt = map(int, re.search(r"SPT=(\d+) DPT=(\d+)", line).groups())
    seq = (dpt - 20000) * 64000 + spt - 1024
    bad += seq % 2 != int(sys.argv[2])
sys.exit(1 if bad else 0)
PY
}
check_group g0 "$even" 0
check_group g1 "$odd" 1

# The shared outputs: both inputs' records, each input's in order.
for f in all.log all.pcap; do
	figs=$(python3 - "$WORK/$f" <<'PY'
import re, struct, sys
name = sys.argv[1]
seqs = []
if name.endswith(".pcap"):
    d = open(name, "rb").read()
    pos = 24
    while pos + 16 <= len(d):
        incl = struct.unpack("<I", d[pos + 8:pos + 12])[0]
        m = re.search(rb"sluice-seq (\d{10})", d[pos + 16:pos + 16 + incl])
        seqs.append(int(m.group(1)) if m else -1)
        pos += 16 + incl
else:
    for line in open(name):
        spt, dpt = map(int, re.search(r"SPT=(\d+) DPT=(\d+)", line).groups())
        seqs.append((dpt - 20000) * 64000 + spt - 1024)
bad = sum(1 for s in seqs if s < 0)
disorder = 0
for par in (0, 1):
    mine = [s for s in seqs if s >= 0 and s % 2 == par]
    disorder += sum(1 for a, b in zip(mine, mine[1:]) if b <= a)
print(len(seqs), len(set(seqs)), disorder, bad)
PY
) || fail "cannot read $f"
	read -r n uniq disorder bad <<<"$figs"
	echo "$f: $n records, $uniq distinct, $disorder out of order within an input, $bad unreadable"
	[ "$n" = "$N" ] && [ "$uniq" = "$N" ] && [ "$disorder" = 0 ] && [ "$bad" = 0 ] ||
		fail "$f: $n records ($uniq distinct, $disorder disorder, $bad bad), expected $N"
done
[ "$(counter "$L" all-pcap dropped)" = 0 ] && [ "$(counter "$L" all-log dropped)" = 0 ] || fail "a shared output dropped"
[ "$(counter "$L" all-pcap in)" = "$N" ] || fail "all-pcap in=$(counter "$L" all-pcap in)"
pass "$N packets at ${RATE}/s split over two NFLOG groups, two input threads: $even + $odd, every file exact and in order, the shared outputs hold all $N"
