#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write an NFLOG-linktype pcap whose events put the json keys that the
recorded captures never show next to each other: an unknown input
interface (ifindex_in) with a known output one (out, ifindex 1 = lo),
the same for the bridge ports, mark/uid/gid/sequence numbers, an ARP
event, an IPv6 event out of an unknown interface, and an ICMP
frag-needed cut short by the capture (pktlen, caplen, icmp_mtu).
json_keys_pcap.py OUT"""
import struct
import sys

UNKNOWN = 999999  # no interface has this index


def tlv(t, v):
    b = struct.pack("<HH", 4 + len(v), t) + v  # pcap NFLOG TLVs: little-endian headers
    return b + b"\0" * (-len(b) % 4)


def u32(t, v):
    return tlv(t, struct.pack(">I", v))


def event(family, hook, proto, payload, attrs=b"", group=7, cut=0):
    body = struct.pack(">BBH", family, 0, group)
    body += tlv(1, struct.pack(">HBB", proto, hook, 0))           # NFULA_PACKET_HDR
    body += tlv(3, struct.pack(">QQ", 1764454688, 943671))        # NFULA_TIMESTAMP
    body += tlv(10, b"keys \0") + attrs                          # NFULA_PREFIX
    if cut:   # the payload TLV says its full length, the capture keeps less
        full = tlv(9, payload)
        return body + full[:len(full) - len(payload) - (-len(full) % 4) + cut]
    return body + tlv(9, payload)                                 # NFULA_PAYLOAD


def ip4(proto, l4, tos=0):
    total = 20 + len(l4)
    return struct.pack(">BBHHHBBH4s4s", 0x45, tos, total, 0x1234, 0x4000, 64, proto, 0,
                       bytes([10, 99, 0, 1]), bytes([10, 99, 0, 2])) + l4


tcp_syn = struct.pack(">HHIIBBHHH", 40000, 22, 1000, 0, 0x50, 0x02, 64240, 0, 0)
udp = struct.pack(">HHHH", 5353, 53, 12, 0) + b"abcd"
ip6_udp = struct.pack(">IHBB16s16s", 0x60012345, len(udp), 17, 64,
                      bytes.fromhex("fd990000000000000000000000000001"),
                      bytes.fromhex("fd990000000000000000000000000002")) + udp
arp = struct.pack(">HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1, bytes.fromhex("020000990001"),
                  bytes([10, 99, 0, 1]), bytes(6), bytes([10, 99, 0, 2]))
inner = ip4(17, udp)
frag_needed = struct.pack(">BBHHH", 3, 4, 0, 0, 1400) + inner

events = [
    # FORWARD on the bridge: in and phys in unknown, out and phys out = lo
    event(2, 2, 0x0800, ip4(6, tcp_syn),
          u32(4, UNKNOWN) + u32(5, 1) + u32(6, UNKNOWN - 1) + u32(7, 1) + u32(2, 0x10) +
          u32(11, 1000) + u32(14, 1001) + u32(12, 5) + u32(13, 6)),
    # ARP, INPUT (arp hooks: 0 IN, 1 OUT, 2 FORWARD) on lo
    event(3, 0, 0x0806, arp,
          u32(4, 1) + tlv(15, struct.pack(">H", 1)) +
          tlv(8, struct.pack(">HH8s", 6, 0, bytes.fromhex("0200009900010000")))),
    # IPv6 UDP, OUTPUT, out of an unknown interface
    event(10, 3, 0x86dd, ip6_udp, u32(5, UNKNOWN)),
    # ICMP frag-needed, cut 10 bytes short by the capture
    event(2, 1, 0x0800, ip4(1, frag_needed), u32(4, 1), cut=len(ip4(1, frag_needed)) - 10),
]

out = bytearray(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 239))
for i, e in enumerate(events):
    orig = len(e) + (10 if i == 3 else 0)
    out += struct.pack("<IIII", 1764454688 + i, 0, len(e), orig) + e
open(sys.argv[1], "wb").write(out)
