# SPDX-License-Identifier: GPL-2.0-or-later
"""clickhouse_packets.py JSON TSV: the rows of the packets table (TSV of the
query CH_PACKETS_QUERY of clickhouse_lib.sh) hold what the json output of the same records says."""
import calendar, ipaddress, json, sys
protos = {"icmp": 1, "tcp": 6, "udp": 17, "icmpv6": 58}
def addr(a):
    a = ipaddress.ip_address(a)
    return (a.ipv4_mapped if a.version == 6 else None) or a
want = []
for line in open(sys.argv[1]):
    o = json.loads(line)
    sec, frac = o["timestamp"].rstrip("Z").split(".")
    t = calendar.timegm(__import__("time").strptime(sec, "%Y-%m-%dT%H:%M:%S"))
    want.append((addr(o["src_ip"]), addr(o["dest_ip"]), o["ip_version"], protos[o["proto"]],
                 o.get("src_port", 0), o.get("dest_port", 0), o["prefix"], t, int(frac),
                 o["ttl"], o["len"], o.get("icmp_type", 0)))
want.sort(key=lambda w: (w[7], w[8]))
got = []
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("\t")
    src = addr(f[0])
    if src.version == 4 and f[2] != str(src):
        sys.exit("src_ip4 %s for %s" % (f[2], src))
    got.append((src, addr(f[1]), int(f[3]), int(f[4]), int(f[5]), int(f[6]), f[7], int(f[8]),
                int(f[9]), int(f[10]), int(f[11]), int(f[12])))
if len(got) != len(want):
    sys.exit("%d rows, %d json objects" % (len(got), len(want)))
for g, w in zip(got, want):
    if g != w:
        sys.exit("row %r\njson %r" % (g, w))
print("%d rows equal the json output" % len(got))
