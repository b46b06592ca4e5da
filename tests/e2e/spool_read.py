#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Read a spool directory (format: plugins/common/spool.h) on its own, for
the spool tests: every record not yet acknowledged, segments in number
order, each record checked against its CRC32C; a damaged record ends its
segment here (the spool skips to the next sound record instead; the tests
that use this reader read undamaged spools).  Prints each record's bytes as one line
(the syslog framing's octet count and a trailing LF taken off), then, on
stderr, "records=N segments=S torn_bytes=T".   spool_read.py [--kafka] DIR
With --kafka, records are the kafka output's (plugins/output/kafka.c:
'k', i64 LE timestamp ms, u32 LE key length, key, value), printed as
"key<TAB>timestamp<TAB>value" lines."""
import os
import re
import struct
import sys


def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xffffffff


kafka = sys.argv[1] == "--kafka"
d = sys.argv[2 if kafka else 1]
names = sorted(n for n in os.listdir(d) if re.fullmatch(r"seg-[0-9a-f]{16}\.spl", n))
recs, torn = 0, 0
out = sys.stdout.buffer
for n in names:
    b = open(os.path.join(d, n), "rb").read()
    if len(b) < 16 or b[:8] != b"SLSPOOL1":
        torn += len(b)
        continue
    off = struct.unpack("<Q", b[8:16])[0]
    if off < 16 or off > len(b):
        off = 16
    while off < len(b):
        if len(b) - off < 8:
            break
        ln, crc = struct.unpack("<II", b[off:off + 8])
        data = b[off + 8:off + 8 + ln]
        if len(data) != ln or crc32c(b[off:off + 4] + data) != crc:
            break
        if kafka:
            if data[:1] != b"k" or len(data) < 13:
                break
            ts, kl = struct.unpack("<qI", data[1:13])
            out.write(data[13:13 + kl] + b"\t" + str(ts).encode() + b"\t" + data[13 + kl:] + b"\n")
            recs += 1
            off += 8 + ln
            continue
        m = re.match(rb"(\d+) ", data)
        if m and int(m.group(1)) == ln - len(m.group(0)):
            data = data[len(m.group(0)):]
        out.write(data.rstrip(b"\n") + b"\n")
        recs += 1
        off += 8 + ln
    torn += len(b) - off
print("records=%d segments=%d torn_bytes=%d" % (recs, len(names), torn), file=sys.stderr)
