#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks of test_netns_nfacct.sh on sluice's nfacct records.

  nfacct_check.py polls JSON              polls as lines: "time name=pkts/bytes ..."
                                          (sluice's JSON, or ulogd2's NFACCT + JSON)
  nfacct_check.py list NFACCT_LIST_OUT    `nfacct list` as "name=pkts/bytes" lines
  nfacct_check.py interval JSON MS FACTOR [AFTER]
                                          gaps between polls (after time AFTER) ~ MS
  nfacct_check.py sum JSON SKIP           per object: the sum of the polls after the first SKIP
"""
import json
import re
import statistics
import sys
from datetime import datetime


def polls(fn):
    """[(time, {name: (pkts, bytes)})] in file order, one entry per poll time."""
    out = []
    for line in open(fn):
        r = json.loads(line)
        if "sum.name" in r:
            # ulogd2: the poll's time in oob.time (timestamp=1), keys sum.*
            t = r["oob.time.sec"] + r["oob.time.usec"] / 1e6
            name, obj = r["sum.name"], (r["sum.pkts"], r["sum.bytes"])
        else:
            t = datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")).timestamp()
            name, obj = r["acct_name"], (r["acct_packets"], r["acct_bytes"])
        if not out or out[-1][0] != t:
            out.append((t, {}))
        if name in out[-1][1]:
            sys.exit("%s: %s twice in one poll" % (fn, name))
        out[-1][1][name] = obj
    return out


def fmt(objs):
    return " ".join("%s=%d/%d" % (n, p, b) for n, (p, b) in sorted(objs.items()))


def main():
    cmd = sys.argv[1]
    if cmd == "polls":
        for t, objs in polls(sys.argv[2]):
            print("%.6f %s" % (t, fmt(objs)))
    elif cmd == "list":
        pat = re.compile(r"^\{ pkts = (\d{20}), bytes = (\d{20})"
                         r"(?:, quota = \d{20}, mode = (?:byte|packet), overquota = (?:yes|no))? \} = (.+);$")
        objs = {}
        for line in open(sys.argv[2]):
            m = pat.match(line.rstrip("\n"))
            if not m:
                sys.exit("nfacct list: unexpected line %r" % line)
            objs[m.group(3)] = (int(m.group(1)), int(m.group(2)))
        print(fmt(objs))
    elif cmd == "interval":
        ms, factor = float(sys.argv[3]), float(sys.argv[4])
        after = float(sys.argv[5]) if len(sys.argv) > 5 else 0
        times = [t for t, _ in polls(sys.argv[2]) if t > after]
        gaps = [(b - a) * 1000 for a, b in zip(times, times[1:])]
        if len(gaps) < 2:
            sys.exit("only %d polls" % len(times))
        med = statistics.median(gaps)
        print("gaps_ms=%s median=%.1f" % (",".join("%.0f" % g for g in gaps), med))
        # a tick may come late under load (and the next one on time: a short gap)
        if min(gaps) < ms * 0.5 or abs(med - ms) > ms * 0.1 * factor:
            sys.exit("poll gaps %s do not match the interval %d ms" % (gaps, ms))
    elif cmd == "sum":
        skip = int(sys.argv[3])
        tot = {}
        for _, objs in polls(sys.argv[2])[skip:]:
            for n, (p, b) in objs.items():
                tp, tb = tot.get(n, (0, 0))
                tot[n] = (tp + p, tb + b)
        print(fmt(tot))
    else:
        sys.exit("unknown command " + cmd)


main()
