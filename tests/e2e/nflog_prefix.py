#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Copy an NFLOG-linktype pcap, replacing the prefix (NFULA_PREFIX) of its
records with raw bytes given in hex: nflog_prefix.py IN OUT HEX [--first].
The packets stay the kernel's; only the prefix is hostile."""
import struct
import sys

NFULA_PREFIX = 10


def main():
    src, dst, prefix = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
    first_only = "--first" in sys.argv[4:]
    d = open(src, "rb").read()
    e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    if struct.unpack(e + "I", d[20:24])[0] != 239:
        sys.exit("%s: not linktype NFLOG" % src)
    out, off, n = bytearray(d[:24]), 24, 0
    while off + 16 <= len(d):
        sec, frac, incl, orig = struct.unpack(e + "IIII", d[off:off + 16])
        rec = d[off + 16:off + 16 + incl]
        off += 16 + incl
        if not (first_only and n):
            body, p = bytearray(rec[:4]), 4
            while p + 4 <= len(rec):
                ln, t = struct.unpack("=HH", rec[p:p + 4])   # TLVs are host-endian
                val = rec[p + 4:p + ln]
                if t & 0x3fff == NFULA_PREFIX:
                    val = prefix
                tlv = struct.pack("=HH", 4 + len(val), t) + val
                body += tlv + b"\0" * (-len(tlv) % 4)
                p += (ln + 3) & ~3
            rec = bytes(body)
            incl = orig = len(rec)
        out += struct.pack(e + "IIII", sec, frac, incl, orig) + rec
        n += 1
    open(dst, "wb").write(out)


main()
