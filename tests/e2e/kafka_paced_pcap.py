# SPDX-License-Identifier: GPL-2.0-or-later
# kafka_paced_pcap.py IN OUT N GAP_MS [START_S]: N packets cycled from the
# classic pcap IN, written to OUT GAP_MS apart (from 1700000000 + START_S
# seconds), so replay's `pace: original` sends a steady stream for
# N * GAP_MS while a test breaks the destination.
import struct, sys

src, dst, n, gap = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
start = int(sys.argv[5]) if len(sys.argv) > 5 else 0
data = open(src, "rb").read()
magic = struct.unpack("<I", data[:4])[0]
if magic not in (0xa1b2c3d4, 0xa1b23c4d):
    sys.exit("%s: not a little-endian classic pcap" % src)
pkts, off = [], 24
while off + 16 <= len(data):
    ts, tu, incl, orig = struct.unpack("<IIII", data[off:off + 16])
    pkts.append((incl, orig, data[off + 16:off + 16 + incl]))
    off += 16 + incl
with open(dst, "wb") as f:
    f.write(data[:24])
    t0 = (1700000000 + start) * 1000000
    scale = 1000 if magic == 0xa1b23c4d else 1	# nanosecond pcap
    for i in range(n):
        incl, orig, body = pkts[i % len(pkts)]
        t = t0 + i * gap * 1000
        f.write(struct.pack("<IIII", t // 1000000, (t % 1000000) * scale, incl, orig) + body)
