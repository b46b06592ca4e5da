#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The packet <-> flow join by ct_id (docs/JSON.md): one configuration with
# nflog (conntrack: true) and nfct (destroy events), both to JSON, and the
# packets to a pcapng too.  Live ICMP, UDP and TCP over IPv4 and IPv6 are
# logged, then `conntrack -F` ends every connection: every logged packet
# must find exactly one flow record with its ct_id, whose original tuple
# is the packet's (addresses and protocol, either direction), and its
# pcapng comment must carry the same ct_id.  Replies logged in the output
# hook (echo replies, the RST of the closed TCP port, whose connection
# conntrack destroys at once, and the port unreachable errors of the UDP
# datagrams, related to their connection) join too; packets a rule logs and drops
# (their connection is never confirmed) get no ct_id.  Datagrams DNATed
# (to port 9997, now 9000) are logged after NAT: their tuple is neither of
# the connection's, and is found as the inverse of its reply tuple.
# The kernel gives the id with the packet when it has
# CONFIG_NETFILTER_NETLINK_GLUE_CT; without it (CI's, this one's) nflog
# looks it up through ctnetlink and conntrack's destroy events
# (plugins/input/nflog_ct.h): the test runs either way and says which, and
# without the glue checks nflog's ct_missing counts the dropped packets.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pcapng_lib.sh"
need_root
need_cmd ip nft python3 tshark conntrack
[ -e "$SLUICE_PLUGIN_PATH/nfct.so" ] || skip "nfct plugin not built"
E2E=$(dirname "$0")

G=25
pcapng_netns slpngj 93 sluice_pcapng_join "join " "ct state new,established counter"
# replies, logged on the way out; and a port whose packets are dropped
ip netns exec "$B" nft -f - <<NFT || fail "cannot add the reply and drop rules"
table inet sluice_pcapng_join2 {
	chain out {
		type filter hook output priority 0; policy accept;
		ip daddr 10.93.0.1 meta l4proto { icmp, tcp } log group $G prefix "reply "
		ip6 daddr fd93::1 icmpv6 type { echo-reply, destination-unreachable } log group $G prefix "reply "
		ip6 daddr fd93::1 meta l4proto tcp log group $G prefix "reply "
	}
	chain in {
		type filter hook input priority -10; policy accept;
		udp dport 9998 log group $G prefix "dropped " drop
		udp dport 9000 log group $G prefix "nat "
	}
}
table ip sluice_pcapng_join_nat {
	chain pre {
		type nat hook prerouting priority dstnat; policy accept;
		udp dport 9997 dnat to 10.93.0.2:9000
	}
}
NFT

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
wait_for 10 grep -qs "started" "$WORK/sluice.log" || fail "sluice did not start: $(cat "$WORK/sluice.log")"
LOOKUP=false
grep -q "looked up through ctnetlink" "$WORK/sluice.log" && LOOKUP=true

ip netns exec "$A" python3 "$E2E/send_mixed.py" 10.93.0.2 fd93::2 join
# 3 datagrams (one connection) the rule drops: never confirmed
ip netns exec "$A" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(3):
    s.sendto(b"dropped", ("10.93.0.2", 9998))
for i in range(3):
    s.sendto(b"nat", ("10.93.0.2", 9997))'
# 16 from A; 2 echo replies and 1 RST per IP version; 3 dropped; 3 DNATed
# ones, logged twice; and up to 8 port unreachables (rate-limited by the
# kernel: not counted)
N=31
lines_ge() { [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ]; }
# the DNATed ones too (sent last): looked up live, not found by their destroy event
nat_read() { [ "$(grep -c '"prefix":"nat "' "$WORK/packets.json" 2>/dev/null)" -ge 3 ]; }
enough() { lines_ge "$WORK/packets.json" $N && nat_read; }
wait_for 10 enough || fail "only $(wc -l <"$WORK/packets.json") of $N packets"
# every connection ends now: one DESTROY event each
ip netns exec "$B" conntrack -F 2>/dev/null
cat >"$WORK/join.py" <<'PY'
import json, sys
pk = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fl = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
cm = [l.rstrip("\n") for l in open(sys.argv[4])] if len(sys.argv) > 4 else None
byid = {}
for f in fl:
    byid.setdefault(f.get("ct_id"), []).append(f)
def related(p):
    """An ICMP error: conntrack relates it to the quoted packet's connection."""
    t = p.get("icmp_type")
    return (p.get("proto") == "icmp" and t in (3, 4, 5, 11, 12)) or \
        (p.get("proto") == "icmpv6" and t in (1, 2, 3, 4))
missing = []
lookup = sys.argv[3] == "true"
dropped = 0
for i, p in enumerate(pk):
    if p["prefix"] == "dropped ":
        dropped += 1
        # the kernel's glue names even an unconfirmed connection; a lookup finds none
        if lookup and "ct_id" in p:
            sys.exit("a dropped packet has a ct_id: %r" % p)
        if cm is not None and lookup and "ct_id" in cm[i]:
            sys.exit("a dropped packet's comment has a ct_id: %r" % cm[i])
        continue
    if "ct_id" not in p:
        sys.exit("packet without ct_id: %r" % p)
    fs = byid.get(p["ct_id"], [])
    ends = {(f.get("orig_src_ip"), f.get("orig_dest_ip")) for f in fs}
    if len(fs) != 1 or not ends & {(p["src_ip"], p["dest_ip"]), (p["dest_ip"], p["src_ip"])}:
        missing.append(p)
    elif fs[0].get("proto") != p.get("proto") and not related(p):
        missing.append(p)
    if cm is not None and "ct_id %d" % p["ct_id"] not in cm[i]:
        sys.exit("pcapng comment %r lacks ct_id %d" % (cm[i], p["ct_id"]))
if missing:
    print("%d of %d packets find no flow: %r" % (len(missing), len(pk), missing[:2]))
    sys.exit(1)
if dropped != 3:
    sys.exit("%d dropped packets logged, want 3" % dropped)
nat = sum(1 for p in pk if p["prefix"] == "nat " and p.get("dest_port") == 9000)
if nat != 3:
    sys.exit("%d packets logged after DNAT, want 3" % nat)
print(len(pk) - dropped)
PY
joined() { python3 "$WORK/join.py" "$WORK/packets.json" "$WORK/flows.json" $LOOKUP >"$WORK/join.out" 2>&1; }
wait_for 10 joined || fail "join: $(cat "$WORK/join.out"); flows: $(head -3 "$WORK/flows.json")"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
tshark -r "$WORK/packets.pcapng" -T fields -e frame.comment >"$WORK/comments.txt" 2>/dev/null ||
	fail "tshark cannot read the pcapng"
m=$(python3 "$WORK/join.py" "$WORK/packets.json" "$WORK/flows.json" $LOOKUP "$WORK/comments.txt") ||
	fail "join with the pcapng comments: $m"
how="the kernel's glue"
if [ $LOOKUP = true ]; then
	line=$(grep "counters: fw (nflog):" "$WORK/sluice.log") || fail "no counters line: $(cat "$WORK/sluice.log")"
	missing=$(echo "$line" | sed -n 's/.* ct_missing=\([0-9]*\).*/\1/p')
	lookups=$(echo "$line" | sed -n 's/.* ct_lookups=\([0-9]*\).*/\1/p')
	[ "$missing" = 3 ] || fail "ct_missing=$missing, want 3 (the dropped packets): $line"
	[ "${lookups:-0}" -gt 0 ] || fail "no ct_lookups counted: $line"
	how="ctnetlink lookups ($lookups) and destroy events"
fi
pass "$m packets each find their flow by ct_id ($how), and their pcapng comment carries it; 3 dropped ones have none"
