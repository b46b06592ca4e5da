#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The packet <-> flow join by ct_id (docs/JSON.md): one configuration with
# nflog (conntrack: true) and nfct (destroy events), both to JSON, and the
# packets to a pcapng too.  Live ICMP, UDP and TCP over IPv4 and IPv6 are
# logged, then `conntrack -F` ends every connection: every logged packet
# must find exactly one flow record with its ct_id, whose original tuple
# is the packet's (addresses and protocol, either direction), and its
# pcapng comment must carry the same ct_id.  Needs a kernel with
# CONFIG_NETFILTER_NETLINK_GLUE_CT (nflog's conntrack: true); skipped
# without it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pcapng_lib.sh"
need_root
need_cmd ip nft python3 tshark conntrack
[ -e "$SLUICE_PLUGIN_PATH/nfct.so" ] || skip "nfct plugin not built"
E2E=$(dirname "$0")

G=25
pcapng_netns slpngj 93 sluice_pcapng_join "join " "ct state new,established counter"

cat >"$WORK/j.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms, conntrack: true}
  ct: {plugin: nfct, events: [destroy]}
  dec: {plugin: decode, community_id: true}
stacks:
  pkts: [fw, dec, json, {plugin: file, file: "$WORK/packets.json", flush_interval: 50ms}]
  ng: [fw, dec, {plugin: pcap, file: "$WORK/packets.pcapng", format: pcapng, flush_interval: 50ms}]
  flows: [ct, json, {plugin: file, file: "$WORK/flows.json", flush_interval: 50ms}]
YAML
ip netns exec "$B" "$SLUICE" -c "$WORK/j.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
started() { grep -qs "bound NFLOG group $G\\|conntrack: not supported" "$WORK/sluice.log"; }
wait_for 10 started || { cat "$WORK/sluice.log"; fail "nflog did not start"; }
grep -q "conntrack: not supported" "$WORK/sluice.log" &&
	skip "nflog conntrack: true needs CONFIG_NETFILTER_NETLINK_GLUE_CT, which this kernel lacks"
wait_for 10 grep -qs "started" "$WORK/sluice.log" || fail "sluice did not start: $(cat "$WORK/sluice.log")"

ip netns exec "$A" python3 "$E2E/send_mixed.py" 10.93.0.2 fd93::2 join
N=16
lines_ge() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]; }
wait_for 10 lines_ge "$WORK/packets.json" $N || fail "only $(wc -l <"$WORK/packets.json") of $N packets"
# every connection ends now: one DESTROY event each
ip netns exec "$B" conntrack -F 2>/dev/null
cat >"$WORK/join.py" <<'PY'
import json, sys
pk = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fl = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
cm = [l.rstrip("\n") for l in open(sys.argv[3])] if len(sys.argv) > 3 else None
byid = {}
for f in fl:
    byid.setdefault(f.get("ct_id"), []).append(f)
missing = []
for i, p in enumerate(pk):
    if "ct_id" not in p:
        sys.exit("packet without ct_id: %r" % p)
    fs = byid.get(p["ct_id"], [])
    ends = {(f.get("orig_src_ip"), f.get("orig_dest_ip")) for f in fs}
    if len(fs) != 1 or not ends & {(p["src_ip"], p["dest_ip"]), (p["dest_ip"], p["src_ip"])}:
        missing.append(p)
    elif fs[0].get("proto") != p.get("proto"):
        missing.append(p)
    if cm is not None and "ct_id %d" % p["ct_id"] not in cm[i]:
        sys.exit("pcapng comment %r lacks ct_id %d" % (cm[i], p["ct_id"]))
if missing:
    print("%d of %d packets find no flow: %r" % (len(missing), len(pk), missing[:2]))
    sys.exit(1)
print(len(pk))
PY
joined() { python3 "$WORK/join.py" "$WORK/packets.json" "$WORK/flows.json" >"$WORK/join.out" 2>&1; }
wait_for 10 joined || fail "join: $(cat "$WORK/join.out"); flows: $(head -3 "$WORK/flows.json")"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
tshark -r "$WORK/packets.pcapng" -T fields -e frame.comment >"$WORK/comments.txt" 2>/dev/null ||
	fail "tshark cannot read the pcapng"
m=$(python3 "$WORK/join.py" "$WORK/packets.json" "$WORK/flows.json" "$WORK/comments.txt") ||
	fail "join with the pcapng comments: $m"
pass "$m packets each find their flow by ct_id, and their pcapng comment carries it"
