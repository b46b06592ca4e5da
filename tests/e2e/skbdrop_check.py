#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Count skbdrop's JSON records of one network namespace.

skbdrop_check.py FILE.json INODE REASON SRC DST SPORT DPORT
prints "N OTHER": N records of namespace INODE with drop_reason REASON
and SRC's family (ipv6 when it has a colon), each decoded to
SRC:SPORT -> DST:DPORT over UDP (anything else of that namespace, reason
and family is an error, exit 1), and OTHER, the records of other
namespaces (the host's own drops)."""
import json
import sys


def main():
    path, inode, reason, src, dst, sport, dport = sys.argv[1:8]
    n = other = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r.get("netns_inode") != int(inode):
                other += 1
                continue
            family = "ipv6" if ":" in src else "ipv4"
            if r.get("drop_reason") != reason or r.get("family") != family:
                continue
            want = {"src_ip": src, "dest_ip": dst, "src_port": int(sport),
                    "dest_port": int(dport), "family": family,
                    "proto": "udp"}
            got = {k: r.get(k) for k in want}
            if got != want or not r.get("drop_location") or "timestamp" not in r:
                print(f"record {n + 1}: {got}, want {want}: {line.strip()}")
                return 1
            n += 1
    print(n, other)
    return 0


if __name__ == "__main__":
    sys.exit(main())
