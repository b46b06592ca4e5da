#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write an NFLOG-linktype pcap (what `nflog` would have read) from a list
of packets, one per line on stdin: TIME SRC DPORT PREFIX [IPID]
(TIME in seconds, float; SRC an IPv4 address; PREFIX the log prefix, '-'
for none, '_' for a space).  Each is a UDP packet SRC:40000 -> 10.0.0.254:DPORT,
with IP id IPID (default 1): two lines that differ only in TIME give
packets, and kernel log lines, that are the same.
nflog_pcap.py OUT < packets"""
import socket
import struct
import sys

NFULA_PAYLOAD, NFULA_PREFIX = 9, 10


def tlv(t, v):
    n = 4 + len(v)
    return struct.pack("<HH", n, t) + v + b"\0" * ((4 - n % 4) % 4)


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def packet(src, dport, ipid):
    payload = b"ratelimit"
    udp = struct.pack("!HHHH", 40000, dport, 8 + len(payload), 0) + payload
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), ipid, 0, 64, 17, 0,
                      socket.inet_aton(src), socket.inet_aton("10.0.0.254"))
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return hdr + udp


def main():
    out = bytearray(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 239))
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        t, src, dport, prefix = float(f[0]), f[1], int(f[2]), f[3]
        ipid = int(f[4]) if len(f) > 4 else 1
        rec = struct.pack("<BBH", socket.AF_INET, 0, socket.htons(5))
        if prefix != "-":
            rec += tlv(NFULA_PREFIX, prefix.replace("_", " ").encode() + b"\0")
        rec += tlv(NFULA_PAYLOAD, packet(src, dport, ipid))
        usec = round(t * 1e6)
        out += struct.pack("<IIII", usec // 1000000, usec % 1000000, len(rec), len(rec)) + rec
    open(sys.argv[1], "wb").write(out)


if __name__ == "__main__":
    main()
