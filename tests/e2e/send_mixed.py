#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Send the live tests' mixed traffic from namespace A to B: per IP version
5 UDP datagrams to port 9999 (payload TAG-0 .. TAG-4), 2 ICMP echo requests
(id 0x5199, seq 1 and 2, payload "sluice-ping!") and 1 TCP SYN to the
closed port 8081: 16 packets in all.
usage: send_mixed.py IPV4_DST IPV6_DST TAG"""
import socket
import struct
import sys
import time


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def main(dst4, dst6, tag):
    for fam, dst in ((socket.AF_INET, dst4), (socket.AF_INET6, dst6)):
        u = socket.socket(fam, socket.SOCK_DGRAM)
        for i in range(5):
            u.sendto(b"%s-%d" % (tag.encode(), i), (dst, 9999))
        for seq in (1, 2):
            if fam == socket.AF_INET:
                s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_ICMP)
                m = struct.pack("!BBHHH", 8, 0, 0, 0x5199, seq) + b"sluice-ping!"
                m = m[:2] + struct.pack("!H", csum(m)) + m[4:]
            else:
                s = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
                m = struct.pack("!BBHHH", 128, 0, 0, 0x5199, seq) + b"sluice-ping!"
            s.sendto(m, (dst, 0))
        t = socket.socket(fam, socket.SOCK_STREAM)
        t.settimeout(2)
        try:
            t.connect((dst, 8081))
        except OSError:
            pass
        time.sleep(0.05)


if __name__ == "__main__":
    main(*sys.argv[1:4])
