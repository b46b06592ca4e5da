#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Write a raw-IP pcap (LINKTYPE_RAW) of UDP packets between public IPv4
and IPv6 addresses (and a few no database knows: documentation and
private ranges), each address once as source and once as destination,
the whole set `rounds` times (later rounds hit the cache).
geoip_pcap.py OUT [ROUNDS]
geoip_pcap.py OUT --pair SRC DST COUNT: COUNT packets SRC -> DST (benchmarks)
geoip_pcap.py OUT --list ADDR...: these addresses instead of the built-in ones, one round"""
import ipaddress
import struct
import sys

V4 = ["8.8.8.8", "1.1.1.1", "9.9.9.9", "208.67.222.222", "185.199.108.153",
      "151.101.1.69", "81.2.69.142", "212.58.244.20", "77.88.55.242", "202.12.27.33",
      "200.160.2.3", "41.231.53.3", "133.242.0.3", "195.46.39.39",
      "192.0.2.1", "10.1.2.3"]
V6 = ["2001:4860:4860::8888", "2606:4700:4700::1111", "2620:fe::fe",
      "2a00:1450:4001:80e::200e", "2001:67c:2e8:22::c100:68b", "2400:cb00:2048:1::c629:d7a2",
      "2a02:6b8::2:242", "2001:500:2f::f", "2001:db8::1", "fd00::1"]


def udp(sport, dport, payload):
    return struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload


def ip4(src, dst, l4):
    return struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0x4000, 64, 17, 0,
                       ipaddress.ip_address(src).packed, ipaddress.ip_address(dst).packed) + l4


def ip6(src, dst, l4):
    return struct.pack(">IHBB16s16s", 6 << 28, len(l4), 17, 64,
                       ipaddress.ip_address(src).packed, ipaddress.ip_address(dst).packed) + l4


def main():
    out, pkts = sys.argv[1], []
    if len(sys.argv) == 6 and sys.argv[2] == "--pair":
        src, dst = sys.argv[3], sys.argv[4]
        mk = ip6 if ":" in src else ip4
        pkts = [mk(src, dst, udp(40000 + i % 1000, 53, b"geoip")) for i in range(int(sys.argv[5]))]
    v4, v6 = V4, V6
    if len(sys.argv) > 3 and sys.argv[2] == "--list":
        v4 = [a for a in sys.argv[3:] if ":" not in a]
        v6 = [a for a in sys.argv[3:] if ":" in a]
    rounds = int(sys.argv[2]) if len(sys.argv) == 3 else 0 if pkts else 1
    for _ in range(rounds):
        for addrs, mk in ((v4, ip4), (v6, ip6)):
            for i, a in enumerate(addrs):
                pkts.append(mk(a, addrs[(i + 1) % len(addrs)], udp(40000 + i, 53, b"geoip")))
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 101))
        for n, p in enumerate(pkts):
            f.write(struct.pack("<IIII", 1764454688 + n, 0, len(p), len(p)) + p)


if __name__ == "__main__":
    main()
