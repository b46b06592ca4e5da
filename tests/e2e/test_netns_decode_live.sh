#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# decode on live NFLOG events: nflog -> decode (checksums on) -> json -> file
# in a private namespace B behind a bridge.  Traffic from namespace A: TCP
# SYN, UDP, ICMP echo, ICMPv6 echo, a fragmented UDP datagram (logged
# before reassembly), an ARP request, and UDP over a veth created after the
# daemon started (its name must come from the live link events).  Every
# record must carry the decoded fields and interface names, and no
# checksum may be reported bad: veth leaves checksums to the "NIC"
# (CHECKSUM_PARTIAL) and decode must recognise that.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3

A=$(unique_name sldla)
B=$(unique_name sldlb)
G=11
make_netns "$A"
make_netns "$B"
ip link add va netns "$A" type veth peer name vb netns "$B" || skip "cannot create veth"
ip -n "$B" link add br0 type bridge || skip "no bridge support"
ip -n "$B" link set vb master br0
ip -n "$A" link set va address 02:00:00:99:00:01
ip -n "$B" link set br0 address 02:00:00:99:00:02
ip -n "$A" addr add 10.99.0.1/24 dev va
ip -n "$B" addr add 10.99.0.2/24 dev br0
ip -n "$A" addr add fd99::1/64 dev va nodad
ip -n "$B" addr add fd99::2/64 dev br0 nodad
ip -n "$A" link set va up
ip -n "$B" link set vb up
ip -n "$B" link set br0 up
ip -n "$A" neigh add 10.99.0.2 lladdr 02:00:00:99:00:02 dev va nud permanent
ip -n "$A" neigh add fd99::2 lladdr 02:00:00:99:00:02 dev va nud permanent
ip -n "$B" neigh add 10.99.0.1 lladdr 02:00:00:99:00:01 dev br0 nud permanent
ip -n "$B" neigh add fd99::1 lladdr 02:00:00:99:00:01 dev br0 nud permanent

ip netns exec "$B" nft -f - <<NFT || skip "nftables logging not available"
table inet sluice_e2e {
	chain pre {
		type filter hook prerouting priority -500; policy accept;
		ip saddr 10.99.0.1 ip frag-off & 0x3fff != 0 log group $G prefix "frag "
	}
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.99.0.1 ip frag-off & 0x3fff == 0 log group $G prefix "in4 "
		ip6 saddr fd99::1 log group $G prefix "in6 "
		ip saddr 10.98.0.1 log group $G prefix "new "
	}
}
table bridge sluice_e2e {
	chain in {
		type filter hook input priority 0;
		udp dport 9998 log group $G prefix "br "
	}
}
table arp sluice_e2e {
	chain in {
		type filter hook input priority 0;
		arp operation request log group $G prefix "arp "
	}
}
NFT

cat >"$WORK/c.yaml" <<YAML
stacks:
  live:
    - {plugin: nflog, group: $G, qtimeout: 20ms}
    - {plugin: decode, checksums: true}
    - json
    - {plugin: file, file: "$WORK/out.json"}
YAML
ip netns exec "$B" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }
port_forwarding() { ip -n "$B" -d link show vb | grep -q "state forwarding"; }
wait_for 10 port_forwarding || skip "bridge port never reached forwarding"

# A link the daemon has never seen in its start-up dump.
ip link add va2 netns "$A" type veth peer name vb2 netns "$B"
ip -n "$A" addr add 10.98.0.1/24 dev va2
ip -n "$B" addr add 10.98.0.2/24 dev vb2
ip -n "$A" link set va2 up
ip -n "$B" link set vb2 up

ip netns exec "$A" python3 - <<'PY'
import socket, struct, time
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.sendto(b"sluice-decode-udp", ("10.99.0.2", 9999))
u.sendto(b"sluice-decode-br", ("10.99.0.2", 9998))
u.sendto(b"sluice-decode-new", ("10.98.0.2", 9999))
# fragments: DF off, 3000 bytes over a 1500-byte MTU
f = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
f.setsockopt(socket.IPPROTO_IP, 10, 0)      # IP_MTU_DISCOVER = IP_PMTUDISC_DONT
f.sendto(b"F" * 3000, ("10.99.0.2", 7777))
# ICMP echo
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
m = struct.pack("!BBHHH", 8, 0, 0, 0x5199, 1) + b"sluice-ping!"
s.sendto(m[:2] + struct.pack("!H", csum(m)) + m[4:], ("10.99.0.2", 0))
s6 = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
s6.sendto(struct.pack("!BBHHH", 128, 0, 0, 0x5199, 2) + b"sluice-ping6", ("fd99::2", 0))
for fam, dst in ((socket.AF_INET, "10.99.0.2"), (socket.AF_INET6, "fd99::2")):
    t = socket.socket(fam, socket.SOCK_STREAM)
    t.settimeout(2)
    try: t.connect((dst, 8081))
    except OSError: pass
# an ARP request: nobody has 10.99.0.77
u.sendto(b"x", ("10.99.0.77", 9))
time.sleep(0.2)
PY

# in4: udp, udp 9998, 1 reassembled... no: input sees the reassembled datagram
# too, ICMP, TCP = 5; in6: ICMPv6, TCP = 2; br 1; frag 3; new 1; arp >= 1
enough() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	grep -Eq "\(nflog\): in=(1[3-9]|[2-9][0-9]) " "$WORK/sluice.log"
}
wait_for 10 enough || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }

python3 - "$WORK/out.json" <<'PY' || { cat "$WORK/sluice.log"; fail "decoded records are missing or wrong"; }
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in recs:
    by.setdefault(r.get("prefix"), []).append(r)
print("records by prefix:", {k: len(v) for k, v in by.items()})
bad = []
def want(cond, what, r=None):
    if not cond:
        bad.append(what + (": " + json.dumps(r) if r else ""))
A_MAC, B_MAC = "02:00:00:99:00:01", "02:00:00:99:00:02"
for r in recs:
    flags = r.get("decode_flags", [])
    want(not set(flags) - {"fragment"}, "unexpected decode_flags", r)
in4 = by.get("in4 ", [])
for r in in4:
    want(r.get("in") == "br0" and r.get("mac_src") == A_MAC and r.get("mac_dst") == B_MAC, "in4 link", r)
    want(r.get("ip_version") == 4 and r.get("src_ip") == "10.99.0.1" and r.get("dest_ip") == "10.99.0.2", "in4 ip", r)
def one(recs, what, **kv):
    m = [r for r in recs if all(r.get(k) == v for k, v in kv.items())]
    want(len(m) == 1, "%s: %d matching records" % (what, len(m)))
    return m[0] if m else {}
r = one(in4, "udp 9999", proto="udp", dest_port=9999)
want(r.get("udp_len") == 8 + len("sluice-decode-udp") and r.get("ip_flags") == "DF", "udp fields", r)
r = one(in4, "tcp syn", proto="tcp", dest_port=8081)
want(r.get("tcp_flags") == "SYN" and r.get("tcp_window", 0) > 0 and r.get("ip_flags") == "DF", "tcp fields", r)
r = one(in4, "icmp echo", proto="icmp")
want(r.get("icmp_type") == 8 and r.get("icmp_id") == 0x5199 and r.get("icmp_seq") == 1, "icmp fields", r)
r = one(in4, "reassembled", proto="udp", dest_port=7777)
want(r.get("len") == 3028 and "fragment" not in r.get("decode_flags", []), "reassembled datagram", r)
in6 = by.get("in6 ", [])
for r in in6:
    want(r.get("in") == "br0" and r.get("ip_version") == 6 and r.get("src_ip") == "fd99::1", "in6", r)
r = one(in6, "icmpv6 echo", proto="icmpv6")
want(r.get("icmp_type") == 128 and r.get("icmp_id") == 0x5199 and r.get("icmp_seq") == 2, "icmpv6 fields", r)
r = one(in6, "tcp6 syn", proto="tcp", dest_port=8081)
want(r.get("tcp_flags") == "SYN" and "flowlabel" in r, "tcp6 fields", r)
r = one(by.get("br ", []), "bridge", dest_port=9998)
want(r.get("family") == "bridge" and r.get("in") == "br0" and r.get("physin") == "vb", "bridge names", r)
want(r.get("mac_src") == A_MAC and r.get("eth_type") == 2048 and r.get("udp_len") == 8 + len("sluice-decode-br"), "bridge fields", r)
frag = by.get("frag ", [])
want(len(frag) == 3, "3 fragments, got %d" % len(frag))
first = [r for r in frag if "fragment" not in r.get("decode_flags", [])]
rest = [r for r in frag if "fragment" in r.get("decode_flags", [])]
want(len(first) == 1 and first[0].get("dest_port") == 7777 and first[0].get("ip_flags") == "MF", "first fragment", first[0] if first else None)
want(len(rest) == 2 and all("dest_port" not in r and r.get("frag_offset", 0) > 0 for r in rest), "later fragments")
want(len({r.get("ip_id") for r in frag}) == 1, "fragments share one id")
arp = by.get("arp ", [])
want(any(r.get("arp_op") == 1 and r.get("arp_spa") == "10.99.0.1" and r.get("arp_tpa") == "10.99.0.77"
         and r.get("arp_sha") == A_MAC and r.get("in") == "br0" for r in arp), "arp request", arp[0] if arp else None)
r = one(by.get("new ", []), "new link", dest_port=9999)
want(r.get("in") == "vb2", "name of a link created after start", r)
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
grep -q "(decode):.* bad_checksum=0 .*ifname_unknown=0" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "decode counters"; }
pass "$(wc -l <"$WORK/out.json") live records decoded"
