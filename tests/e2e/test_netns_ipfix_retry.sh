#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ipfix retries a refused send with the sink engine's backoff (issue 20):
# replay -> decode -> flow -> ipfix, 300 one-packet UDP flows in messages
# of at most 256 bytes, to a collector in a namespace whose input hook
# rejects the first IPFIX message (sequence number 0) with ICMP port
# unreachable, as a port nobody listens on does.  UDP reports that
# refusal on a later send, which then fails with ECONNREFUSED without
# sending; with max_retries that message is sent again after retry_min
# instead of being lost.  The collector (a UDP socket read here, headers
# and sets decoded) then has every record but those of the rejected
# message: sequence numbers without a gap from it on, and those records
# plus its sequence number make the 300 flows.  sluice counts each
# refusal in send_errors and as one retry, and no records_lost.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 ss
for p in replay decode flow ipfix; do
	[ -e "$SLUICE_PLUGIN_PATH/$p.so" ] || skip "$p plugin not built"
done
E2E=$(dirname "$0")
FACTOR=${SLUICE_TEST_TIME_FACTOR:-1}
NFLOWS=300
NS=$(unique_name slipr)
make_netns "$NS"

python3 - "$E2E" "$WORK/flows.pcap" "$NFLOWS" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from conform_pcap import ip4, udp, pcap
t = 1700000000
recs = [(t, i, ip4("10.7.%d.1" % (i // 250), "10.8.0.2", 17, udp(1024 + i, 53)))
        for i in range(int(sys.argv[3]))]
open(sys.argv[2], "wb").write(pcap(101, recs))
PY

# The first message refused, everything after it let through.
ip netns exec "$NS" nft -f - <<'NFT' || skip "cannot load the nft rule (no reject, raw payload?)"
table ip t {
	chain in {
		type filter hook input priority 0;
		udp dport 4739 @th,128,32 0 counter reject with icmp type port-unreachable
	}
}
NFT

# The collector: per message its sequence number, data records, and data
# sets of a template it never got (undecodable), kept in a file.
cat >"$WORK/collector.py" <<'PY'
import os, socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.bind(("127.0.0.1", 4739))
reclen, out = {}, sys.argv[1]
while True:
    d = s.recv(65535)
    ver, length, _, seq, _ = struct.unpack("!HHIII", d[:16])
    assert ver == 10 and length == len(d), (ver, length, len(d))
    n, unknown, off = 0, 0, 16
    while off < length:
        sid, slen = struct.unpack("!HH", d[off:off + 4])
        body = d[off + 4:off + slen]
        if sid == 2:
            tid, cnt = struct.unpack("!HH", body[:4])
            reclen[tid] = sum(struct.unpack("!HH", body[4 + 4 * i:8 + 4 * i])[1] for i in range(cnt))
        elif sid in reclen:
            n += len(body) // reclen[sid]
        else:
            unknown += 1
        off += slen
    with open(out, "a") as f:
        f.write("%d %d %d\n" % (seq, n, unknown))
PY
ip netns exec "$NS" python3 "$WORK/collector.py" "$WORK/got.txt" >"$WORK/collector.log" 2>&1 &
at_exit "kill $!"
listening() { ip netns exec "$NS" ss -Huln "sport = :4739" | grep -q .; }
wait_for 10 listening || fail "the collector did not start: $(cat "$WORK/collector.log")"

cat >"$WORK/r.yaml" <<YAML
instances:
  cap: {plugin: replay, file: "$WORK/flows.pcap"}
  dec: {plugin: decode, ifnames: false}
  fl: {plugin: flow}
stacks:
  s: [cap, dec, fl, {plugin: ipfix, address: "127.0.0.1:4739", mtu: 256,
                     max_retries: 3, retry_min: 10ms, retry_max: 100ms}]
YAML
timeout $((30 * FACTOR)) ip netns exec "$NS" "$SLUICE" -c "$WORK/r.yaml" >"$WORK/r.log" 2>&1 ||
	fail "sluice failed: $(cat "$WORK/r.log")"
drained() { [ "$(ip netns exec "$NS" ss -Huln "sport = :4739" | awk '{print $2}')" = 0 ]; }
wait_for 10 drained || fail "the collector did not read every message: $(cat "$WORK/collector.log"; ip netns exec "$NS" ss -Huln)"
# the collector appends what it read: every message sent but the rejected one
sent=$(grep -o ' messages=[0-9]*' "$WORK/r.log" | tail -1 | cut -d= -f2)
complete() { [ "$(wc -l <"$WORK/got.txt" 2>/dev/null)" = $((sent - 1)) ]; }
wait_for 10 complete ||
	fail "collector: $(wc -l <"$WORK/got.txt") messages, sluice sent $sent: $(cat "$WORK/collector.log")"

counter() { grep "counters: s.ipfix (" "$WORK/r.log" | tail -1 | tr ' ' '\n' | sed -n "s/^$1=\([0-9]*\)$/\1/p"; }
errs=$(counter send_errors) retries=$(counter retries) lost=$(counter records_lost)
[ "${errs:-0}" -ge 1 ] || fail "no refused send (send_errors=$errs): $(cat "$WORK/r.log")"
[ "$retries" = "$errs" ] && [ "$lost" = 0 ] ||
	fail "send_errors=$errs retries=$retries records_lost=$lost: $(grep 'ipfix' "$WORK/r.log")"
[ "$(counter out)" = "$NFLOWS" ] || fail "ipfix out: $(grep 'ipfix)' "$WORK/r.log")"
rejected=$(ip netns exec "$NS" nft list chain ip t in | sed -nE 's/.*counter packets ([0-9]+).*/\1/p')
[ "$rejected" = 1 ] || fail "the rule rejected $rejected messages, want 1"

res=$(python3 - "$WORK/got.txt" "$NFLOWS" 2>&1 <<'PY'
import sys
msgs = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
first, total = msgs[0][0], 0
nxt = first
for seq, n, unknown in msgs:
    if unknown:
        sys.exit("sequence %d: %d data sets of a template never received" % (seq, unknown))
    if seq != nxt:
        sys.exit("sequence %d where %d was due (a message lost)" % (seq, nxt))
    nxt, total = seq + n, total + n
if first == 0 or first + total != int(sys.argv[2]):
    sys.exit("%d records from sequence %d on; the rejected message had %d: not %s"
             % (total, first, first, sys.argv[2]))
print("%d records in %d messages after the rejected one of %d" % (total, len(msgs), first))
PY
) || fail "collector: $res"
pass "$errs refused send(s) retried: $res"
