#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A live flood through ratelimit: seqgen sends 50 000 UDP packets/s for 3 s
# from one source (10.93.0.1, namespace FA) to FB, where one nft rule counts,
# logs (NFLOG) and drops them (fault_lib.sh).  Two stacks on the one nflog
# input:
#   cap: every record to a pcap             == the nft counter (tcpdump -r)
#   lim: decode, ratelimit {rate: 100, burst: 20, key: [src_addr]}, logline, file
# The oracle for lim is the pcap: T = the time between its first and last
# record (the same records, the same timestamps), and the limited file must
# hold P packet lines with 0.9 * rate * T + burst <= P <= rate * T + burst + 1
# (upper: the token bucket's bound, exact; lower: 10 % allowance for gaps in
# the flood, where tokens overflow the full bucket), and summaries whose
# `N records suppressed` add up with P to the pcap's count exactly.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 tcpdump
. "$(dirname "$0")/fault_lib.sh"
for p in ratelimit decode logline file pcap nflog; do
	[ -e "$SLUICE_PLUGIN_PATH/$p.so" ] || skip "plugin $p not built"
done
TF=${SLUICE_TEST_TIME_FACTOR:-1}
RATE=100 BURST=20 PPS=50000 SECS=3

fault_net 93 53
cat >"$WORK/rl.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $FG, netlink_buffer: 64MiB}
stacks:
  cap: [fw, {plugin: pcap, file: "$WORK/all.pcap", linktype: nflog}]
  lim: [fw, decode, {plugin: ratelimit, rate: $RATE, burst: $BURST, key: [src_addr]}, logline,
        {plugin: file, file: "$WORK/lim.log"}]
YAML
start_sluice "$WORK/sluice.log" "$WORK/rl.yaml"
send -n $((PPS * SECS)) -r $PPS -t $((SECS * 2 * TF)) >"$WORK/sent.txt"
cat "$WORK/sent.txt"
logged=$(nft_logged)
wait_for 20 input_caught_up "$WORK/sluice.log" "$logged" ||
	{ tail -5 "$WORK/sluice.log"; fail "nflog took $(counter "$WORK/sluice.log" fw in) of $logged records"; }
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with status $?"; }
grep ratelimit "$WORK/sluice.log" | tail -1

tcpdump -nn -tt -r "$WORK/all.pcap" 2>/dev/null | sed -n 's/^\([0-9]*\.[0-9]*\) .*/\1/p' >"$WORK/times.txt"
python3 - "$WORK/times.txt" "$WORK/lim.log" "$logged" $RATE $BURST <<'PY' || fail "limited stack out of bounds (above)"
import re, sys
times = [float(x) for x in open(sys.argv[1])]
lim, logged, rate, burst = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
if len(times) != logged:
    sys.exit("pcap holds %d records, nft logged %d" % (len(times), logged))
span = times[-1] - times[0]
passed, supp, sums, other = 0, 0, 0, 0
for line in open(lim):
    m = re.match(r"^fault (\d+) records suppressed$", line.rstrip("\n"))
    if m:
        sums += 1
        supp += int(m.group(1))
    elif "SRC=10.93.0.1 " in line:
        passed += 1
    else:
        other += 1
lo, hi = 0.9 * rate * span + burst, rate * span + burst + 1
print("pcap %d records over %.3f s (%.0f/s); limited: %d passed (bounds %.0f..%.0f, %.1f/s), "
      "%d summaries of %d suppressed" % (logged, span, logged / span, passed, lo, hi, passed / span, sums, supp))
if other:
    sys.exit("%d unexpected lines" % other)
if not lo <= passed <= hi:
    sys.exit("passed %d not in %.1f..%.1f" % (passed, lo, hi))
if passed + supp != logged:
    sys.exit("passed %d + suppressed %d != logged %d" % (passed, supp, logged))
PY
pass "flood of $logged held to ~$RATE/s; pcap stack complete"
