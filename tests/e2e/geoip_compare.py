#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check geoip's fields in json lines against mmdblookup on the same files.
geoip_compare.py JSON N DBS KEY=PATH...  (DBS: comma-separated, in order)
For each record and each of src_ip/dest_ip, the expected value of a key
is the first database's answer for its path (mmdblookup --file DB --ip IP
path...), absent when none answers; the record's src_<key>/dst_<key> must
be exactly that, and no other src_/dst_ geoip key may be present.  Prints
how many values matched and how many addresses had none."""
import json
import re
import subprocess
import sys

ALL_KEYS = ["country", "city", "asn", "as_org", "country_name", "continent", "region",
            "postal", "timezone"]
memo = {}


def lookup(db, ip, path):
    """mmdblookup's value, or None when the file has no such entry/path."""
    k = (db, ip, path)
    if k not in memo:
        p = subprocess.run(["mmdblookup", "--file", db, "--ip", ip] + path.split("."),
                           capture_output=True, text=True)
        out = p.stdout.strip()
        m = re.fullmatch(r'"(.*)" <utf8_string>', out, re.S)
        n = re.fullmatch(r"(\d+) <(uint16|uint32|uint64|int32)>", out)
        if p.returncode != 0:
            memo[k] = None
        elif m:
            memo[k] = m.group(1)
        elif n:
            memo[k] = int(n.group(1))
        else:
            sys.exit("mmdblookup %s %s %s: cannot read %r" % (db, ip, path, out))
    return memo[k]


def main():
    fn, want_n, dbs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
    fields = dict(a.split("=", 1) for a in sys.argv[4:])
    objs = [json.loads(l) for l in open(fn, encoding="utf-8")]
    if len(objs) != want_n:
        sys.exit("%s: %d records, expected %d" % (fn, len(objs), want_n))
    matched, unknown, addrs = 0, set(), set()
    for o in objs:
        for ipkey, side in (("src_ip", "src"), ("dest_ip", "dst")):
            ip = o[ipkey]
            addrs.add(ip)
            want = {}
            for key, path in fields.items():
                for db in dbs:
                    v = lookup(db, ip, path)
                    if v is not None:
                        want[key] = v
                        break
            got = {k: o[side + "_" + k] for k in ALL_KEYS if side + "_" + k in o}
            if got != want:
                sys.exit("%s %s: sluice %r, mmdblookup %r\n%r" % (side, ip, got, want, o))
            matched += len(want)
            if not want:
                unknown.add(ip)
    print("%d records, %d addresses, %d values equal to mmdblookup's, %d addresses unknown: %s"
          % (len(objs), len(addrs), matched, len(unknown), " ".join(sorted(unknown))))


if __name__ == "__main__":
    main()
