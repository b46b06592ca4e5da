#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Seeds for fuzz_nftrace: NFT_MSG_TRACE payloads as the kernel builds them
# (nfgenmsg, attributes with big-endian numbers): a rule event with the
# packet headers, a jump, a policy, a return, an IPv6 one, cut and
# corrupted copies.  Run from fuzz/: writes corpus/nftrace/.
import os
import struct

TABLE, CHAIN, HANDLE, TYPE, VERDICT, ID, LL, NH, TH, IIF, IIFTYPE, OIF, OIFTYPE, MARK, NFPROTO, POLICY = range(1, 17)
RULE, RETURN, POLICYT = 3, 2, 1


def attr(t, v):
    a = struct.pack("=HH", 4 + len(v), t) + v
    return a + b"\0" * (-len(a) % 4)


def u32(t, v):
    return attr(t, struct.pack(">I", v & 0xffffffff))


def s(t, v):
    return attr(t, v.encode() + b"\0")


def event(family, typ, tid, table, chain, *rest):
    return bytes([family, 0, 0, 0]) + u32(TYPE, typ) + u32(ID, tid) + s(CHAIN, chain) + s(TABLE, table) + b"".join(rest)


def verdict(code, chain=None):
    v = u32(1, code)
    if chain:
        v += s(2, chain)
    return attr(VERDICT | 0x8000, v)


ip4 = bytes.fromhex("450000543a1c40004001e8a80a2900010a290002")
icmp = bytes.fromhex("0800f7ff1a2b0001")
tcp = bytes.fromhex("9c40001600000001000000005002faf000000000")
ip6 = bytes.fromhex("6000000000140640fd410000000000000000000000000001fd410000000000000000000000000002")
ll = bytes.fromhex("02000029000202000029000108 00".replace(" ", ""))

seeds = {
    "rule-packet": event(1, RULE, 0x3a9c0f12, "filter", "input", attr(HANDLE, struct.pack(">Q", 7)),
                         verdict(0xfffffffd, "uc"), u32(NFPROTO, 2), attr(LL, ll), attr(NH, ip4),
                         attr(TH, icmp), u32(IIF, 5), attr(IIFTYPE, struct.pack(">H", 1)), u32(MARK, 42)),
    "rule-accept": event(2, RULE, 1, "t", "uc", attr(HANDLE, struct.pack(">Q", 5)), verdict(1)),
    "policy": event(1, POLICYT, 2, "t", "input", u32(POLICY, 0), u32(MARK, 1)),
    "return": event(1, RETURN, 3, "t", "uc", verdict(0xffffffff)),
    "ip6-tcp": event(10, RULE, 4, "t6", "in", attr(HANDLE, struct.pack(">Q", 9)), verdict(0),
                     attr(NH, ip6), attr(TH, tcp), u32(OIF, 3)),
}
os.makedirs("corpus/nftrace", exist_ok=True)
for name, data in list(seeds.items()):
    seeds[name + "-cut"] = data[: len(data) // 2]
    bad = bytearray(data)
    bad[8] ^= 0xff
    seeds[name + "-badlen"] = bytes(bad)
for name, data in seeds.items():
    with open(os.path.join("corpus/nftrace", name), "wb") as f:
        f.write(data)
