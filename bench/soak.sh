#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Soak (issue 8; not in CI): sluice under steady live traffic for a long
# time, with a rotation every minute, and its memory sampled.
#
#   sudo bench/soak.sh                 10 minutes at 5000 packets/s
#   sudo DURATION=120 bench/soak.sh    a shorter run
#
# Two namespaces this script creates and deletes; bench/gen/seqgen sends
# numbered UDP from A to B, where `counter name logged log group 61 drop`
# counts what the kernel logged.  One nflog input in B feeds five stacks:
#   pcap (raw)              nflog -> pcap
#   text                    nflog -> decode -> logline -> file
#   json                    nflog -> decode -> json -> file
#   syslog                  ... logline -> syslog over UDP to a receiver in B
#   flows                   nflog -> decode -> flow -> flowfile
# Every packet is a new flow (seqgen's source ports), so the flow table
# keeps filling and emptying (idle_timeout 2s).  Every ROTATE seconds the
# pcap, text and JSON files are moved aside (as logrotate does) and sluice
# gets SIGHUP; flowfile rotates its own files every minute.
#
# RSS (VmRSS of /proc/PID/status) is sampled every SAMPLE seconds.  The
# verdict: the samples of the first WARMUP seconds are warm-up (buffers and
# pools filling, the flow table reaching its working size, the first
# rotations); the reference is the largest sample of the minute after
# warm-up (a third of the rest in runs under 4 minutes); the run is FLAT when no later sample is larger than the
# reference by more than 2% or 512 KiB, whichever is larger.  A leak of a
# few bytes per record (5,000 records/s: megabytes per minute) fails that;
# allocator noise does not.
#
# At the end the outputs are counted against the nft counter: packets in
# all pcaps, lines in all text and JSON files, flows in the flow files
# (nfdump, when installed), messages the syslog receiver got.
#
# Environment: DURATION (s, 600), RATE (packets/s, 5000), ROTATE (s, 60),
# SAMPLE (s, 10), WARMUP (s, 60; shorter runs use a quarter of DURATION),
# BUILD (build dir, build/), KEEP=1 (keep the work dir).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
DURATION=${DURATION:-600}
RATE=${RATE:-5000}
ROTATE=${ROTATE:-60}
SAMPLE=${SAMPLE:-10}
WARMUP=${WARMUP:-60}
[ $((DURATION / 4)) -lt "$WARMUP" ] && WARMUP=$((DURATION / 4))
G=61 N=95

die() { echo "soak.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (network namespaces, nftables)"
for c in ip nft python3 tcpdump cmake; do command -v $c >/dev/null || die "needs $c"; done
echo "== build ($BUILD)"
{ cmake -S "$TOP" -B "$BUILD" >/dev/null && cmake --build "$BUILD" -j2 >/dev/null; } || die "build failed"
SLUICE=$BUILD/core/sluice SEQGEN=$BUILD/bench/seqgen
export SLUICE_PLUGIN_PATH=$BUILD/plugins

T=$(mktemp -d /tmp/sluice-soak.XXXXXX)
NA=slsoA$$ NB=slsoB$$
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del $NA 2>/dev/null
	ip netns del $NB 2>/dev/null
	[ "${KEEP:-0}" = 1 ] && echo "work dir kept: $T" || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# No tests/e2e/lib.sh lock: nothing here touches global sysctls (NFLOG
# groups are per namespace), and holding it for ten minutes would stall
# every live test on the machine.
ip netns add $NA && ip netns add $NB || die "cannot create namespaces"
ip -n $NA link set lo up
ip -n $NB link set lo up
ip link add va netns $NA type veth peer name vb netns $NB || die "cannot create veth"
ip -n $NA link set va address 02:00:00:$N:00:01
ip -n $NB link set vb address 02:00:00:$N:00:02
ip -n $NA addr add 10.$N.0.1/24 dev va
ip -n $NB addr add 10.$N.0.2/24 dev vb
ip -n $NA link set va up
ip -n $NB link set vb up
ip -n $NA neigh add 10.$N.0.2 lladdr 02:00:00:$N:00:02 dev va nud permanent
ip netns exec $NB nft -f - <<NFT || die "nftables log group not available"
table ip sluice_soak {
	counter logged { }
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.$N.0.1 udp dport 20000-20999 counter name "logged" log group $G prefix "soak " drop
	}
}
NFT
logged() { ip netns exec $NB nft list counter ip sluice_soak logged | sed -n 's/.*packets \([0-9]*\).*/\1/p'; }

# syslog receiver: counts datagrams
ip netns exec $NB python3 - "$T/syslog.count" <<'PY' &
import signal, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind(("127.0.0.1", 5514))
open(sys.argv[1] + ".ready", "w").close()
n = 0
def done(*_):
    open(sys.argv[1], "w").write("%d\n" % n)
    sys.exit(0)
signal.signal(signal.SIGTERM, done)
while True:
    s.recv(65536)
    n += 1
PY
RX_PID=$!
PIDS+=($RX_PID)
for _ in $(seq 100); do [ -e "$T/syslog.count.ready" ] && break; sleep 0.1; done

D=$T/out
mkdir -p "$D/flows"
cat >"$T/soak.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 50ms}
  dec: {plugin: decode}
stacks:
  pcap: [fw, {plugin: pcap, file: "$D/cap.pcap", linktype: raw}]
  text: [fw, dec, logline, {plugin: file, file: "$D/fw.log"}]
  json: [fw, dec, json, {plugin: file, file: "$D/fw.json"}]
  syslog: [fw, dec, logline, {plugin: syslog, transport: udp, address: "127.0.0.1:5514"}]
  flows: [fw, dec, {plugin: flow, idle_timeout: 2s}, {plugin: flowfile, dir: "$D/flows", rotate_interval: 1m}]
YAML
ip netns exec $NB "$SLUICE" -c "$T/soak.yaml" >"$T/sluice.log" 2>&1 &
SL=$!
PIDS+=($SL)
for _ in $(seq 100); do grep -qs "bound NFLOG group $G" "$T/sluice.log" && break; sleep 0.1; done
grep -qs "bound NFLOG group $G" "$T/sluice.log" || { cat "$T/sluice.log"; die "sluice did not start"; }

echo "== soak: $DURATION s at $RATE packets/s, rotation every $ROTATE s, RSS every $SAMPLE s (warm-up $WARMUP s)"
ip netns exec $NA "$SEQGEN" -d 10.$N.0.2 -r "$RATE" -t "$DURATION" -n $((RATE * DURATION + 1000)) >"$T/gen.out" &
GEN=$!
PIDS+=($GEN)
rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/$SL/status; }
t0=$(date +%s)
next_rot=$ROTATE rot=0
: >"$T/rss.txt"
printf '%6s %10s %12s %8s\n' "t (s)" "RSS (KiB)" "logged" "rotations"
while kill -0 $GEN 2>/dev/null; do
	t=$(($(date +%s) - t0))
	if [ $t -ge $next_rot ]; then
		rot=$((rot + 1))
		for f in cap.pcap fw.log fw.json; do mv "$D/$f" "$D/$f.$rot"; done
		kill -HUP $SL
		next_rot=$((next_rot + ROTATE))
	fi
	r=$(rss) || die "sluice died: $(tail -5 "$T/sluice.log")"
	echo "$t $r" >>"$T/rss.txt"
	printf '%6d %10d %12d %8d\n' "$t" "$r" "$(logged)" "$rot"
	sleep "$SAMPLE" & wait $! 2>/dev/null
done
wait $GEN
sleep 3	# the last flows time out (idle 2 s)
total=$(logged)
kill -TERM $SL
wait $SL || { tail -20 "$T/sluice.log"; die "sluice exited with an error"; }
kill -TERM $RX_PID
wait $RX_PID
grep "counters:" "$T/sluice.log" | sed 's/^/  /'
sent=$(sed -n 's/^sent \([0-9]*\) .*/\1/p' "$T/gen.out")

# ---- the outputs against the kernel's count ----
pk=0
for f in "$D"/cap.pcap*; do
	c=$(tcpdump --count -r "$f" 2>/dev/null | sed -n 's/ packets\?$//p')
	pk=$((pk + ${c:-0}))
done
tl=$(cat "$D"/fw.log* | wc -l)
jl=$(cat "$D"/fw.json* | wc -l)
sy=$(cat "$T/syslog.count")
cnt() { grep "counters: $1 (" "$T/sluice.log" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=\([0-9]*\)$/\1/p"; }
fl=
if command -v nfdump >/dev/null; then
	fl=$(nfdump -q -R "$D/flows" -o csv 2>/dev/null | grep -c '^[0-9]' || true)
fi
echo "== outputs: sent $sent, kernel logged $total; pcap $pk packets, text $tl lines, json $jl lines," \
	"syslog received $sy (out $(cnt syslog.syslog out), dropped $(cnt syslog.syslog dropped))," \
	"flows ${fl:-?} (flowfile in $(cnt flows.flowfile in)); $rot rotations"
ok_out=1
[ "$pk" = "$total" ] && [ "$tl" = "$total" ] && [ "$jl" = "$total" ] || ok_out=0
[ -z "$fl" ] || [ "$fl" = "$(cnt flows.flowfile in)" ] || ok_out=0

# ---- the verdict on RSS ----
python3 - "$T/rss.txt" "$WARMUP" "$DURATION" <<'PY'
import sys
s = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
warm, dur = int(sys.argv[2]), int(sys.argv[3])
span = min(60, (dur - warm) // 3)     # the reference window: a minute, less in short runs
ref = [r for t, r in s if warm <= t < warm + span]
later = [(t, r) for t, r in s if t >= warm + span]
if not ref or not later:
    print("== RSS: too short a run for a verdict (%d samples)" % len(s))
    sys.exit(2)
top = max(ref)
margin = max(top * 2 // 100, 512)
worst = max(later, key=lambda x: x[1])
first = s[0][1]
print("== RSS: start %d KiB, reference (max of t=%d..%d s) %d KiB, later max %d KiB at t=%d s, last %d KiB; margin %d KiB"
      % (first, warm, warm + span - 1, top, worst[1], worst[0], s[-1][1], margin))
flat = worst[1] <= top + margin
print("== verdict: RSS %s" % ("FLAT" if flat else "GROWS (%+d KiB over the reference)" % (worst[1] - top)))
sys.exit(0 if flat else 1)
PY
v=$?
[ $ok_out = 1 ] || echo "== outputs: DO NOT ADD UP"
[ $v = 0 ] && [ $ok_out = 1 ]
