#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Regenerate the small test captures in tests/data/ (run as root).
#
# Two private network namespaces joined by a veth pair carry ICMP, TCP and
# UDP over IPv4 and IPv6; nftables in the receiving namespace logs them to
# NFLOG group 7 and tcpdump records the same traffic several ways:
#   nflog-mixed.pcap   linktype NFLOG (239), from tcpdump -i nflog:7
#   eth-mixed.pcap     linktype EN10MB (1), tcpdump on the veth
#   eth-mixed.pcapng   the same packets as pcapng (needs editcap)
#   eth-vlan.pcap      eth-mixed.pcap with an 802.1Q tag (VLAN 10) put in
#                      every frame (the test kernel has no 8021q module)
#   sll-mixed.pcap     linktype LINUX_SLL (113), tcpdump -i any -y LINUX_SLL
#   sll2-mixed.pcap    linktype LINUX_SLL2 (276), tcpdump -i any
#   raw-mixed.pcap     linktype RAW (101): eth-mixed.pcap without the
#                      Ethernet headers (libpcap offers no RAW on a veth)
# and counts.txt lists how many packets each holds (the replay tests read it).
#
# Addresses are fixed (10.99.0.1/2, fd99::1/2) and exist
# only inside the namespaces made here.  Usage: make-captures.sh [OUTDIR]
set -euo pipefail

OUT=$(realpath "${1:-$(dirname "$0")}")
GROUP=7
A=slcapa$$
B=slcapb$$
TMP=$(mktemp -d /tmp/sluice-captures.XXXXXX)
PIDS=()

[ "$(id -u)" = 0 ] || { echo "make-captures.sh: must run as root" >&2; exit 1; }
for c in ip nft tcpdump python3; do
	command -v $c >/dev/null || { echo "make-captures.sh: needs $c" >&2; exit 1; }
done

cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	ip netns del $A 2>/dev/null || true
	ip netns del $B 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

ip netns add $A
ip netns add $B
ip -n $A link set lo up
ip -n $B link set lo up
ip link add va netns $A type veth peer name vb netns $B
# Fixed MACs so the captures do not change from run to run.
ip -n $A link set va address 02:00:00:99:00:01
ip -n $B link set vb address 02:00:00:99:00:02
ip -n $A addr add 10.99.0.1/24 dev va
ip -n $B addr add 10.99.0.2/24 dev vb
ip -n $A addr add fd99::1/64 dev va nodad
ip -n $B addr add fd99::2/64 dev vb nodad
ip -n $A link set va up
ip -n $B link set vb up
# No neighbour discovery in the captures: static neighbours both ways.
ip -n $A neigh add 10.99.0.2 lladdr 02:00:00:99:00:02 dev va nud permanent
ip -n $B neigh add 10.99.0.1 lladdr 02:00:00:99:00:01 dev vb nud permanent
ip -n $A neigh add fd99::2 lladdr 02:00:00:99:00:02 dev va nud permanent
ip -n $B neigh add fd99::1 lladdr 02:00:00:99:00:01 dev vb nud permanent

# Log what A sends to B (input hook) and what B answers (output hook: these
# carry uid/gid when a local socket sent them).
ip netns exec $B nft -f - <<NFT
table inet sluice_test {
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.99.0.1 meta l4proto { icmp, tcp, udp } log group $GROUP prefix "sluice-test "
		ip6 saddr fd99::1 meta l4proto { tcp, udp } log group $GROUP prefix "sluice-test "
		ip6 saddr fd99::1 icmpv6 type { echo-request } log group $GROUP prefix "sluice-test "
	}
	chain out {
		type filter hook output priority 0; policy accept;
		ip daddr 10.99.0.1 meta l4proto { icmp, tcp, udp } log group $GROUP prefix "sluice-test-out "
		ip6 daddr fd99::1 meta l4proto { tcp, udp } log group $GROUP prefix "sluice-test-out "
		ip6 daddr fd99::1 icmpv6 type { echo-reply, destination-unreachable } log group $GROUP prefix "sluice-test-out "
	}
}
NFT

FILTER='icmp or tcp or udp or (icmp6 and (ip6[40] == 128 or ip6[40] == 129 or ip6[40] == 1))'

# start_capture NAME ARGS...: tcpdump in B, waits until it listens.
start_capture() {
	local name=$1; shift
	ip netns exec $B tcpdump -n -U -s 65535 "$@" -w "$TMP/$name" 2>"$TMP/$name.err" &
	PIDS+=($!)
	for _ in $(seq 50); do
		grep -q "listening on" "$TMP/$name.err" 2>/dev/null && return 0
		sleep 0.1
	done
	cat "$TMP/$name.err" >&2
	return 1
}

start_capture nflog-mixed.pcap -i nflog:$GROUP
start_capture eth-mixed.pcap -i vb "$FILTER"
start_capture sll-mixed.pcap -i any -y LINUX_SLL "$FILTER"
start_capture sll2-mixed.pcap -i any -y LINUX_SLL2 "$FILTER"

# A TCP server in B: answers "pong" to each connection.
ip netns exec $B python3 - <<'PY' &
import socket, threading
def serve(fam, addr):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, 8080)); s.listen(8)
    while True:
        c, _ = s.accept()
        c.recv(100); c.sendall(b"pong\n"); c.close()
for fam, addr in ((socket.AF_INET, "10.99.0.2"), (socket.AF_INET6, "fd99::2")):
    threading.Thread(target=serve, args=(fam, addr), daemon=True).start()
threading.Event().wait(30)
PY
PIDS+=($!)
sleep 0.5

# The traffic, sent from A.
ip netns exec $A python3 - <<'PY'
import socket, struct, time

def csum(b):
    if len(b) % 2: b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16: s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff

def ping4(dst, seq):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    hdr = struct.pack("!BBHHH", 8, 0, 0, 0x5199, seq) + b"sluice-ping"
    hdr = hdr[:2] + struct.pack("!H", csum(hdr)) + hdr[4:]
    s.sendto(hdr, (dst, 0)); s.settimeout(1)
    try: s.recv(1500)
    except OSError: pass
    s.close()

def ping6(dst, seq):
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    s.sendto(struct.pack("!BBHHH", 128, 0, 0, 0x5199, seq) + b"sluice-ping", (dst, 0))
    s.settimeout(1)
    try: s.recv(1500)
    except OSError: pass
    s.close()

def tcp(fam, dst, port):
    s = socket.socket(fam, socket.SOCK_STREAM); s.settimeout(2)
    try:
        s.connect((dst, port)); s.sendall(b"ping\n"); s.recv(100)
    except OSError: pass
    s.close(); time.sleep(0.2)

def udp(fam, dst, n):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    for i in range(n):
        s.sendto(b"sluice-udp %d" % i, (dst, 9999)); time.sleep(0.05)
    s.close()

for seq in (1, 2):
    ping4("10.99.0.2", seq); ping6("fd99::2", seq)
udp(socket.AF_INET, "10.99.0.2", 2); udp(socket.AF_INET6, "fd99::2", 2)
tcp(socket.AF_INET, "10.99.0.2", 8080); tcp(socket.AF_INET6, "fd99::2", 8080)
tcp(socket.AF_INET, "10.99.0.2", 8081); tcp(socket.AF_INET6, "fd99::2", 8081)
PY

sleep 1
for p in "${PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
wait 2>/dev/null || true
PIDS=()

# RAW: strip the 14-byte Ethernet header of each record of eth-mixed.pcap;
# VLAN: insert a tag for VLAN 10 (priority 3) after the MAC addresses.
python3 - "$TMP/eth-mixed.pcap" "$TMP/raw-mixed.pcap" "$TMP/eth-vlan.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
magic = d[:4]
e = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
raw = bytearray(d[:20] + struct.pack(e + "I", 101))
vlan = bytearray(d[:24])
tag = struct.pack("!HH", 0x8100, (3 << 13) | 10)
off = 24
while off + 16 <= len(d):
    sec, frac, incl, orig = struct.unpack(e + "IIII", d[off:off + 16])
    pkt = d[off + 16:off + 16 + incl]
    off += 16 + incl
    if incl < 14: continue
    raw += struct.pack(e + "IIII", sec, frac, incl - 14, orig - 14) + pkt[14:]
    vlan += struct.pack(e + "IIII", sec, frac, incl + 4, orig + 4) + pkt[:12] + tag + pkt[12:]
open(sys.argv[2], "wb").write(raw)
open(sys.argv[3], "wb").write(vlan)
PY

if command -v editcap >/dev/null; then
	editcap -F pcapng "$TMP/eth-mixed.pcap" "$TMP/eth-mixed.pcapng"
fi

: >"$TMP/counts.txt"
for f in nflog-mixed.pcap eth-mixed.pcap eth-mixed.pcapng eth-vlan.pcap sll-mixed.pcap sll2-mixed.pcap raw-mixed.pcap; do
	[ -f "$TMP/$f" ] || continue
	n=$(tcpdump -n -r "$TMP/$f" 2>/dev/null | wc -l)
	echo "$f $n" >>"$TMP/counts.txt"
	cp "$TMP/$f" "$OUT/$f"
done
cp "$TMP/counts.txt" "$OUT/counts.txt"
cat "$OUT/counts.txt"
ls -l "$OUT"/*.pcap*
