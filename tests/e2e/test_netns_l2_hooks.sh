#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Link-layer records from live traffic: netdev rules on the ingress and the
# egress hook of a veth and a bridge-family rule log to one group;
# nflog -> decode -> json -> file must give each record its family, hook,
# interfaces, MAC addresses, ethertype and, for 802.1Q-tagged frames, the
# VLAN id; nflog -> decode -> pcap (ethernet) must show the frames as sent,
# tags included (tshark).  Frames are written with AF_PACKET so the tags are exactly known
# (this kernel may have no 8021q module; a tagged frame needs no VLAN
# device: the receive path moves the tag into skb metadata and the kernel
# reports it in NFULA_VLAN, while at egress it stays in the frame).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3

A=$(unique_name sl2a)
B=$(unique_name sl2b)
G=31
make_netns "$A"
make_netns "$B"
ip link add va netns "$A" type veth peer name vb netns "$B" || skip "cannot create veth"
ip link add va2 netns "$A" type veth peer name vb2 netns "$B" || skip "cannot create veth"
ip -n "$B" link add br0 type bridge || skip "no bridge support"
# no IPv6: no router solicitations or MLD reports among the records
for ns in "$A" "$B"; do
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
done
ip -n "$A" link set va address 02:00:00:97:00:01
ip -n "$B" link set vb address 02:00:00:97:00:02
ip -n "$A" link set va2 address 02:00:00:97:01:01
ip -n "$B" link set vb2 address 02:00:00:97:01:02
ip -n "$B" link set br0 address 02:00:00:97:01:03
ip -n "$B" link set vb2 master br0
ip -n "$A" addr add 10.97.0.1/24 dev va
ip -n "$B" addr add 10.97.0.2/24 dev vb
ip -n "$B" addr add 10.97.1.2/24 dev br0
for l in va va2; do ip -n "$A" link set $l up; done
for l in vb vb2 br0; do ip -n "$B" link set $l up; done
ip -n "$B" neigh add 10.97.0.1 lladdr 02:00:00:97:00:01 dev vb nud permanent

ip netns exec "$B" nft -f - <<NFT || skip "nftables netdev egress / bridge logging not available"
table netdev sluice_l2 {
	chain in {
		type filter hook ingress device vb priority 0;
		udp dport 9999 log group $G prefix "ndi "
		vlan id 100 log group $G prefix "ndi "
	}
	chain out {
		type filter hook egress device vb priority 0;
		udp dport 9999 log group $G prefix "nde "
		# a tag in the frame hides the UDP header from "udp dport"
		ether saddr 02:00:00:97:00:02 ether type 8021q log group $G prefix "nde "
	}
}
table bridge sluice_l2 {
	chain in {
		type filter hook input priority 0;
		udp dport 9999 log group $G prefix "br "
	}
}
NFT

cat >"$WORK/c.yaml" <<YAML
stacks:
  live:
    - {plugin: nflog, group: $G, qtimeout: 20ms}
    - decode
    - {plugin: json, payload: true}
    - {plugin: file, file: "$WORK/out.json"}
  eth:
    - {plugin: nflog, group: $G, qtimeout: 20ms}
    - decode
    - {plugin: pcap, file: "$WORK/out.pcap", linktype: ethernet}
YAML
ip netns exec "$B" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }
port_forwarding() { ip -n "$B" -d link show vb2 | grep -q "state forwarding"; }
wait_for 10 port_forwarding || skip "bridge port never reached forwarding"

# frame(dst, src, vlan, ...): Ethernet + 802.1Q tag(s) (vlan: None, an id or
# a list of ids, outer first) + IPv4 + UDP to 9999
cat >"$WORK/frames.py" <<'PY'
import socket, struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
def frame(dst, src, vlan, sip, dip, pl):
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28 + len(pl), 7, 0x4000, 64, 17, 0,
                     socket.inet_aton(sip), socket.inet_aton(dip))
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    ids = [] if vlan is None else vlan if isinstance(vlan, list) else [vlan]
    tag = b"".join(struct.pack("!HH", 0x8100, v) for v in ids)
    return (bytes.fromhex(dst.replace(":", "")) + bytes.fromhex(src.replace(":", "")) + tag +
            b"\x08\x00" + ip + struct.pack("!HHHH", 40000, 9999, 8 + len(pl), 0) + pl)
def send(dev, *frames):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    for f in frames:
        s.send(f)
PY
# from A: into vb (netdev ingress) and through vb2 into br0 (bridge input)
ip netns exec "$A" python3 -c "
import sys; sys.path.insert(0, '$WORK'); from frames import *
send('va', frame('02:00:00:97:00:02', '02:00:00:97:00:01', None, '10.97.0.1', '10.97.0.2', b'nd-plain'),
           frame('02:00:00:97:00:02', '02:00:00:97:00:01', 10, '10.97.0.1', '10.97.0.2', b'nd-tag10'),
           frame('02:00:00:97:00:02', '02:00:00:97:00:01', [100, 200], '10.97.0.1', '10.97.0.2', b'nd-qinq'))
send('va2', frame('02:00:00:97:01:03', '02:00:00:97:01:01', None, '10.97.1.1', '10.97.1.2', b'br-plain'),
            frame('02:00:00:97:01:03', '02:00:00:97:01:01', 20, '10.97.1.1', '10.97.1.2', b'br-tag20'))
"
# from B out of vb (netdev egress): a routed datagram and a tagged frame
ip netns exec "$B" python3 -c "
import socket, sys; sys.path.insert(0, '$WORK'); from frames import *
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'nde-plain', ('10.97.0.1', 9999))
send('vb', frame('02:00:00:97:00:01', '02:00:00:97:00:02', 30, '10.97.0.2', '10.97.0.1', b'nde-tag30'))
"
enough() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	grep -Eq "\(nflog\): in=([7-9]|[1-9][0-9]) " "$WORK/sluice.log"
}
wait_for 10 enough || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }

python3 - "$WORK/out.json" <<'PY' || { cat "$WORK/out.json"; fail "link-layer records are missing or wrong"; }
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in recs:
    by.setdefault(bytes.fromhex(r.get("payload", "")).decode("ascii", "replace"), []).append(r)
print("records:", {k: len(v) for k, v in by.items()})
A, B, A2, BR = "02:00:00:97:00:01", "02:00:00:97:00:02", "02:00:00:97:01:01", "02:00:00:97:01:03"
want = {
    # payload: expected fields (vlan None: the key must be absent)
    "nd-plain": dict(prefix="ndi ", family="netdev", hook="ingress", **{"in": "vb"}, mac_src=A, mac_dst=B,
                     vlan=None, src_ip="10.97.0.1", dest_ip="10.97.0.2", len=36),
    "nd-tag10": dict(prefix="ndi ", family="netdev", hook="ingress", **{"in": "vb"}, mac_src=A, mac_dst=B,
                     vlan=10, src_ip="10.97.0.1", dest_ip="10.97.0.2", len=36),
    # double-tagged: the receive path takes the outer tag (100) into
    # metadata, the inner one stays in the frame; vlan is the outer id
    "nd-qinq": dict(prefix="ndi ", family="netdev", hook="ingress", **{"in": "vb"}, mac_src=A, mac_dst=B,
                    vlan=100, src_ip="10.97.0.1", dest_ip="10.97.0.2", len=35),
    "br-plain": dict(prefix="br ", family="bridge", hook="INPUT", **{"in": "br0"}, physin="vb2", mac_src=A2,
                     mac_dst=BR, vlan=None, src_ip="10.97.1.1", dest_ip="10.97.1.2", len=36),
    "br-tag20": dict(prefix="br ", family="bridge", hook="INPUT", **{"in": "br0"}, physin="vb2", mac_src=A2,
                     mac_dst=BR, vlan=20, src_ip="10.97.1.1", dest_ip="10.97.1.2", len=36),
    "nde-plain": dict(prefix="nde ", family="netdev", hook="egress", out="vb", mac_src=B, mac_dst=A,
                      vlan=None, src_ip="10.97.0.2", dest_ip="10.97.0.1", len=37),
    "nde-tag30": dict(prefix="nde ", family="netdev", hook="egress", out="vb", mac_src=B, mac_dst=A,
                      vlan=30, src_ip="10.97.0.2", dest_ip="10.97.0.1", len=37),
}
bad = 0
for pl, w in want.items():
    got = by.get(pl, [])
    if len(got) != 1:
        print("%s: %d records, expected 1" % (pl, len(got))); bad += 1; continue
    r = got[0]
    w = dict(w, eth_type=2048, ip_version=4, proto="udp", dest_port=9999, udp_len=8 + len(pl))
    for k, v in w.items():
        if r.get(k) != v:
            print("%s: %s=%r, expected %r" % (pl, k, r.get(k), v)); bad += 1
    if "decode_flags" in r:
        print("%s: decode_flags %r" % (pl, r["decode_flags"])); bad += 1
extra = set(by) - set(want)
if extra:
    print("unexpected records:", extra); bad += 1
sys.exit(1 if bad else 0)
PY
grep -q "(nflog):.* errors=0 " "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog counted errors"; }

# The ethernet pcap shows the frames as they were on the wire, tags included.
if command -v tshark >/dev/null 2>&1; then
	tshark -r "$WORK/out.pcap" -T fields -E separator=/t -e eth.src -e eth.dst -e vlan.id -e ip.src -e data.data \
		2>/dev/null | sort >"$WORK/eth.txt"
	hex() { printf %s "$1" | od -An -tx1 | tr -d ' \n'; }
	sort >"$WORK/eth.want" <<EOF
02:00:00:97:00:01	02:00:00:97:00:02		10.97.0.1	$(hex nd-plain)
02:00:00:97:00:01	02:00:00:97:00:02	10	10.97.0.1	$(hex nd-tag10)
02:00:00:97:00:01	02:00:00:97:00:02	100,200	10.97.0.1	$(hex nd-qinq)
02:00:00:97:01:01	02:00:00:97:01:03		10.97.1.1	$(hex br-plain)
02:00:00:97:01:01	02:00:00:97:01:03	20	10.97.1.1	$(hex br-tag20)
02:00:00:97:00:02	02:00:00:97:00:01		10.97.0.2	$(hex nde-plain)
02:00:00:97:00:02	02:00:00:97:00:01	30	10.97.0.2	$(hex nde-tag30)
EOF
	diff "$WORK/eth.want" "$WORK/eth.txt" || fail "ethernet pcap: frames differ from the ones sent (tshark)"
fi
pass "netdev ingress/egress and bridge records with MACs, ethertype and VLAN ids"
