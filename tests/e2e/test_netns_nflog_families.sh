#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The nflog input takes events of every family that logs to a group:
# netdev (ingress), bridge, arp and inet rules in one namespace all log to
# one group; nflog -> decode -> pcap (NFLOG link type) must write them all,
# with their family, the Ethernet header where the kernel gives one, and
# the bridge port as physical input interface.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3

A=$(unique_name slfaa)
B=$(unique_name slfab)
G=9
make_netns "$A"
make_netns "$B"
ip link add va netns "$A" type veth peer name vb netns "$B" || skip "cannot create veth"
ip -n "$B" link add br0 type bridge || skip "no bridge support"
ip -n "$B" link set vb master br0
ip -n "$A" addr add 10.99.0.1/24 dev va
ip -n "$B" addr add 10.99.0.2/24 dev br0
ip -n "$A" link set va up
ip -n "$B" link set vb up
ip -n "$B" link set br0 up

ip netns exec "$B" nft -f - <<NFT || skip "nftables netdev/bridge/arp logging not available"
table netdev sluice_e2e {
	chain c {
		type filter hook ingress device vb priority 0;
		ip protocol udp log group $G prefix "nd "
	}
}
table bridge sluice_e2e {
	chain c {
		type filter hook input priority 0;
		ip protocol udp log group $G prefix "br "
	}
}
table arp sluice_e2e {
	chain c {
		type filter hook input priority 0;
		log group $G prefix "arp "
	}
}
table inet sluice_e2e {
	chain c {
		type filter hook input priority 0;
		ip protocol udp log group $G prefix "inet "
	}
}
NFT

cat >"$WORK/c.yaml" <<YAML
stacks:
  live:
    - {plugin: nflog, group: $G, qtimeout: 20ms}
    - decode
    - {plugin: pcap, file: "$WORK/out.pcap", linktype: nflog}
YAML
ip netns exec "$B" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }
# the bridge port forwards once the carrier event went through linkwatch
port_forwarding() { ip -n "$B" -d link show vb | grep -q "state forwarding"; }
wait_for 10 port_forwarding || skip "bridge port never reached forwarding"

ip netns exec "$A" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(2): s.sendto(b"sluice-e2e-%d" % i, ("10.99.0.2", 9999))
'
# 2 datagrams x (netdev, bridge, inet) + at least one ARP request
live_has_all() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	grep -Eq "\(nflog\): in=([7-9]|[1-9][0-9]) " "$WORK/sluice.log"
}
wait_for 10 live_has_all || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }

python3 - "$WORK/out.pcap" <<'PY' || fail "records are missing or wrong"
import struct, sys
d = open(sys.argv[1], "rb").read()
e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
assert struct.unpack(e + "I", d[20:24])[0] == 239, "not an NFLOG capture"
off, seen, ok = 24, {}, True
while off + 16 <= len(d):
    incl = struct.unpack(e + "I", d[off + 8:off + 12])[0]
    rec = d[off + 16:off + 16 + incl]
    off += 16 + incl
    fam, p, t = rec[0], 4, {}
    while p + 4 <= len(rec):
        l, ty = struct.unpack("=HH", rec[p:p + 4])
        t[ty & 0x3fff] = rec[p + 4:p + l]
        p += (l + 3) & ~3
    prefix = t.get(10, b"").rstrip(b"\0").decode()
    seen[prefix] = seen.get(prefix, 0) + 1
    want_fam = {"nd ": 5, "br ": 7, "arp ": 3, "inet ": 2}.get(prefix)
    if fam != want_fam:
        print("prefix %r: family %d, expected %s" % (prefix, fam, want_fam)); ok = False
    if prefix in ("nd ", "br ", "arp ") and len(t.get(16, b"")) != 14:
        print("prefix %r: no 14-byte hardware header" % prefix); ok = False
    if prefix == "br " and 6 not in t:
        print("bridge record without physindev"); ok = False
    if prefix != "arp " and b"sluice-e2e-" not in t.get(9, b""):
        print("prefix %r: packet missing" % prefix); ok = False
print("records by prefix:", seen)
for p, n in (("nd ", 2), ("br ", 2), ("inet ", 2)):
    if seen.get(p) != n:
        print("prefix %r: %s records, expected %d" % (p, seen.get(p), n)); ok = False
if not seen.get("arp "):
    print("no ARP record"); ok = False
sys.exit(0 if ok else 1)
PY
pass "netdev, bridge, arp and inet events"
