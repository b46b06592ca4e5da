#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Seeds of fuzz_capture (fuzz/corpus/capture/), made from tests/data:
the first packets of each capture (every link type replay reads, pcap and
pcapng), the same as a nanosecond file and as files of the other byte
order (read by libpcap, which byte-swaps NFLOG TLV headers too).

  make-capture-seeds.py        (from the source tree; needs editcap)
"""
import os
import struct
import subprocess

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(TOP, "tests", "data")
OUT = os.path.join(TOP, "fuzz", "corpus", "capture")
KEEP = 3  # packets per seed: small seeds fuzz faster


def records(b):
    off = 24
    while off + 16 <= len(b):
        sec, frac, cap, ln = struct.unpack_from("<IIII", b, off)
        yield sec, frac, cap, ln, b[off + 16:off + 16 + cap]
        off += 16 + cap


def classic(hdr, recs, endian="<", nsec=False):
    magic, vmaj, vmin, tz, sig, snap, dlt = struct.unpack_from("<IHHiIII", hdr)
    out = struct.pack(endian + "IHHiIII", 0xA1B23C4D if nsec else 0xA1B2C3D4, vmaj, vmin, tz,
                      sig, snap, dlt)
    for sec, frac, cap, ln, data in recs:
        if nsec:
            frac *= 1000
        if endian == ">" and dlt == 239:
            data = swap_nflog(data)
        out += struct.pack(endian + "IIII", sec, frac, cap, ln) + data
    return out


def swap_nflog(d):
    """NFLOG TLV headers are in the byte order of the capturing machine."""
    d = bytearray(d)
    off = 4
    while off + 4 <= len(d):
        ln, ty = struct.unpack_from("<HH", d, off)
        struct.pack_into(">HH", d, off, ln, ty)
        if ln < 4:
            break
        off += (ln + 3) & ~3
    return bytes(d)


def write(name, b):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(b)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in ("eth-mixed", "eth-vlan", "nflog-mixed", "raw-mixed", "sll-mixed",
                 "sll2-mixed"):
        b = open(os.path.join(DATA, name + ".pcap"), "rb").read()
        recs = list(records(b))[:KEEP]
        write(name + ".pcap", classic(b[:24], recs))
        write(name + "-swapped.pcap", classic(b[:24], recs, endian=">"))
    b = open(os.path.join(DATA, "raw-mixed.pcap"), "rb").read()
    write("raw-mixed-nsec.pcap", classic(b[:24], list(records(b))[:KEEP], nsec=True))
    subprocess.run(["editcap", "-r", os.path.join(DATA, "eth-mixed.pcapng"),
                    os.path.join(OUT, "eth-mixed.pcapng"), "1-%d" % KEEP], check=True)


if __name__ == "__main__":
    main()
