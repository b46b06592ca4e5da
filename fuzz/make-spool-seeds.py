#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Seeds for fuzz_spool: spool segments (plugins/common/spool.h) whole, torn,
# corrupted, with an acked offset.  Run from fuzz/: writes corpus/spool/.
import os
import struct


def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xffffffff


def rec(data):
    ln = struct.pack('<I', len(data))
    return ln + struct.pack('<I', crc32c(ln + data)) + data


def seg(records, acked=16):
    return b'SLSPOOL1' + struct.pack('<Q', acked) + b''.join(rec(r) for r in records)


recs = [b'<165>Dec  1 12:00:00 host sluice[1]: record %d' % i for i in range(5)]
whole = seg(recs)
seeds = {
    'whole': whole,
    'empty': seg([]),
    'torn': whole[:-7],
    'acked': seg(recs, acked=16 + len(rec(recs[0])) + len(rec(recs[1]))),
    'acked-bad': seg(recs, acked=17),
    'flipped': whole[:40] + bytes([whole[40] ^ 1]) + whole[41:],
    'huge-len': whole[:16] + struct.pack('<I', 0xfffffff0) + whole[20:],
    'zero-len': seg([b'', b'x', b'']),
    'not-a-segment': b'SLSPOOL0' + whole[8:],
}
os.makedirs('corpus/spool', exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join('corpus/spool', name), 'wb') as f:
        f.write(data)
