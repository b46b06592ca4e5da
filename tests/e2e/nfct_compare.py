# SPDX-License-Identifier: GPL-2.0-or-later
"""Compare flows read back with nfdump against `conntrack -L` taken before
the connections were destroyed.

  nfct_compare.py CONNTRACK_L NFDUMP_CSV T0 T1

Every TCP/UDP connection of conntrack -L whose ports come from
nfct_traffic.py must appear exactly once in the nfdump CSV with the same
addresses, ports, protocol, and packets/bytes per direction (in = original,
out = reply), with a first-seen time between T0 and T1 (epoch seconds).
"""
import ipaddress
import sys
import time

PORTS = {5001, 5002, 5011, 5012}


def conntrack_flows(path):
    flows = {}
    for line in open(path):
        words = line.split()
        if not words or words[0] not in ("tcp", "udp"):
            continue
        kv = {}
        for w in words:
            if "=" in w:
                k, v = w.split("=", 1)
                kv.setdefault(k, []).append(v)
        if int(kv["dport"][0]) not in PORTS:
            continue
        key = (words[0].upper(), str(ipaddress.ip_address(kv["src"][0])),
               str(ipaddress.ip_address(kv["dst"][0])), int(kv["sport"][0]), int(kv["dport"][0]))
        flows[key] = tuple(int(x) for x in (kv["packets"][0], kv["bytes"][0],
                                            kv["packets"][1], kv["bytes"][1]))
    return flows


def nfdump_flows(path):
    flows = {}
    lines = open(path).read().splitlines()
    head = lines[0].split(",")
    col = {name: i for i, name in enumerate(head)}
    for line in lines[1:]:
        f = line.split(",")
        if len(f) != len(head):
            continue  # the summary lines
        key = (f[col["pr"]].strip(), str(ipaddress.ip_address(f[col["sa"]].strip())),
               str(ipaddress.ip_address(f[col["da"]].strip())), int(f[col["sp"]]), int(f[col["dp"]]))
        if key[4] not in PORTS:
            continue
        if key in flows:
            sys.exit("flow reported twice: %s" % (key,))
        ts = time.mktime(time.strptime(f[col["ts"]], "%Y-%m-%d %H:%M:%S"))
        flows[key] = (tuple(int(f[col[c]]) for c in ("ipkt", "ibyt", "opkt", "obyt")), ts,
                      float(f[col["td"]]))
    return flows


def main():
    ct = conntrack_flows(sys.argv[1])
    nf = nfdump_flows(sys.argv[2])
    t0, t1 = float(sys.argv[3]), float(sys.argv[4])
    if len(ct) != 4:
        sys.exit("conntrack -L shows %d of the 4 test connections" % len(ct))
    bad = []
    for key, counts in sorted(ct.items()):
        if key not in nf:
            bad.append("missing: %s" % (key,))
            continue
        got, ts, td = nf[key]
        if got != counts:
            bad.append("%s: exported pkts/bytes in/out %s, conntrack %s" % (key, got, counts))
        if not (t0 - 1 <= ts <= t1 + 1) or td < 0:
            bad.append("%s: first seen %s (duration %s) not within the test" % (key, ts, td))
    extra = set(nf) - set(ct)
    if extra:
        bad.append("flows conntrack did not have: %s" % sorted(extra))
    if bad:
        sys.exit("\n".join(bad))
    fams = {("v6" if ":" in k[1] else "v4") for k in nf}
    print("%d flows match (%s)" % (len(nf), ", ".join(sorted(fams))))


main()
