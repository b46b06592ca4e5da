#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Crafted captures for the conformance tests (issue 19, sections 4 and 5).

conform_pcap.py protos OUT
    raw-IP pcap (LINKTYPE_RAW): one IPv4 packet for each of the protocols
    2, 4, 33, 41, 89, 94, 103 (no upper-layer header sluice decodes), then
    UDP over IPv6 from ::ffff:10.1.2.3 to 2001:db8::1 and from 2001:db8::1
    to ::ffff:10.1.2.4, then UDP over IPv4 10.1.2.3 -> 10.1.2.4.
conform_pcap.py tos OUT
    raw-IP pcap: UDP over IPv4 with TOS 0xb8 (EF), 2 packets, and over
    IPv6 with traffic class 0x28, 3 packets, 10.9.0.1:5001 -> 10.9.0.2:53
    and 2001:db8::1:5002 -> 2001:db8::2:53.
conform_pcap.py times OUT SEC...
    NFLOG pcap (LINKTYPE_NFLOG, 239): per SEC a UDP packet 10.0.0.1:40000 ->
    10.0.0.2:(1000 + its index) whose NFULA_TIMESTAMP is SEC seconds and
    123456 microseconds (the pcap record's own time is 1700000000).
"""
import socket
import struct
import sys

NFULA_TIMESTAMP, NFULA_PAYLOAD, NFULA_PREFIX = 3, 9, 10


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def ip4(src, dst, proto, payload, tos=0):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(payload), 1, 0, 64, proto, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    return hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:] + payload


def ip6(src, dst, nxt, payload, tclass=0):
    first = (6 << 28) | (tclass << 20)
    return struct.pack("!IHBB16s16s", first, len(payload), nxt, 64,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + payload


def udp(sport, dport, data=b"conform"):
    # checksum 0: valid over IPv4, and sluice does not check it over IPv6
    return struct.pack("!HHHH", sport, dport, 8 + len(data), 0) + data


def pcap(linktype, records):
    out = bytearray(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, linktype))
    for sec, usec, data in records:
        out += struct.pack("<IIII", sec, usec, len(data), len(data)) + data
    return bytes(out)


def tlv(t, v):
    n = 4 + len(v)
    return struct.pack("<HH", n, t) + v + b"\0" * ((4 - n % 4) % 4)


def main():
    mode, out = sys.argv[1], sys.argv[2]
    t = 1700000000
    recs = []
    if mode == "protos":
        for i, p in enumerate((2, 4, 33, 41, 89, 94, 103)):
            recs.append((t + i, 0, ip4("10.1.2.3", "10.1.2.4", p, b"\0" * 24)))
        recs.append((t + 10, 0, ip6("::ffff:10.1.2.3", "2001:db8::1", 17, udp(40001, 53))))
        recs.append((t + 11, 0, ip6("2001:db8::1", "::ffff:10.1.2.4", 17, udp(40002, 53))))
        recs.append((t + 12, 0, ip4("10.1.2.3", "10.1.2.4", 17, udp(40003, 53))))
        data = pcap(101, recs)
    elif mode == "tos":
        for i in range(2):
            recs.append((t, i, ip4("10.9.0.1", "10.9.0.2", 17, udp(5001, 53), tos=0xb8)))
        for i in range(3):
            recs.append((t, 10 + i, ip6("2001:db8::1", "2001:db8::2", 17, udp(5002, 53), tclass=0x28)))
        data = pcap(101, recs)
    elif mode == "times":
        for i, sec in enumerate(int(s) for s in sys.argv[3:]):
            rec = struct.pack("<BBH", socket.AF_INET, 0, socket.htons(0))
            rec += tlv(NFULA_PREFIX, b"conform \0")
            rec += tlv(NFULA_TIMESTAMP, struct.pack("!QQ", sec, 123456))
            rec += tlv(NFULA_PAYLOAD, ip4("10.0.0.1", "10.0.0.2", 17, udp(40000, 1000 + i)))
            recs.append((t, 0, rec))
        data = pcap(239, recs)
    else:
        sys.exit("unknown mode " + mode)
    open(out, "wb").write(data)


if __name__ == "__main__":
    main()
