#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The pcapng tests' oracle: what tshark read from pcapng files against the
JSON records of the same packets.

  pcapng_check.py cmp JSONFILE TSV...   every packet of the TSV files
      (tshark -T fields -e frame.time_epoch -e frame.interface_name
      -e frame.comment, one file per pcapng) equals one JSON record: time
      (the JSON's microseconds), interface (the JSON's "in" or "out"), and
      each part of the comment the JSON's field of that name (prefix,
      ct_id, community_id; rule_* when the records have them); every part
      the JSON has is in the comment.  Prints the packets matched.

The comment's text (docs/PLUGINS.md, pcap): `name value` parts separated
by "; ", strings from packets and rulesets escaped as \\xNN.
"""
import json
import re
import sys


def unescape(s):
    return re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]),
                  s.encode()).decode("utf-8", "surrogateescape")


def parse_comment(c):
    parts = {}
    for p in c.split("; ") if c else []:
        name, _, value = p.partition(" ")
        if name in parts:
            sys.exit("part %s twice in %r" % (name, c))
        if name == "prefix":
            if not (value.startswith('"') and value.endswith('"')):
                sys.exit("prefix not quoted: %r" % c)
            parts[name] = unescape(value[1:-1])
        elif name == "rule":
            m = re.fullmatch(r'([^/ ]+)/([^# ]+)(?:#(\d+))?(?: "([^"]*)")?(?: (.+))?', value)
            if not m:
                sys.exit("rule not as documented: %r" % value)
            parts["rule_table"] = unescape(m.group(1))
            parts["rule_chain"] = unescape(m.group(2))
            if m.group(3):
                parts["rule_handle"] = int(m.group(3))
            if m.group(4) is not None:
                parts["rule_comment"] = unescape(m.group(4))
            if m.group(5):
                parts["rule_verdict"] = unescape(m.group(5))
        elif name == "ct_id":
            parts[name] = int(value)
        elif name == "community_id":
            parts[name] = unescape(value)
        else:
            sys.exit("unknown part %r in %r" % (name, c))
    return parts


KEYS = ("prefix", "ct_id", "community_id", "rule_table", "rule_chain", "rule_handle",
        "rule_comment", "rule_verdict")


def usec(t):
    """JSON's RFC 3339 time -> (seconds since 1970, microseconds)."""
    from datetime import datetime
    d = datetime.fromisoformat(t.replace("Z", "+00:00"))
    return int(d.timestamp()), d.microsecond


def main():
    if sys.argv[1] != "cmp":
        sys.exit(__doc__)
    recs = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
    pkts = []
    for fn in sys.argv[3:]:
        for line in open(fn):
            line = line.rstrip("\n")
            if not line:
                continue
            f = line.split("\t")
            while len(f) < 3:
                f.append("")
            pkts.append(f)
    if len(pkts) != len(recs):
        sys.exit("%d packets in the pcapng files, %d JSON records" % (len(pkts), len(recs)))
    want = {}
    for r in recs:
        sec, us = usec(r["timestamp"])
        key = (sec, us, r.get("in", r.get("out", "")))
        want.setdefault(key, []).append({k: r[k] for k in KEYS if k in r})
    matched = 0
    for t, ifname, comment in pkts:
        sec, frac = t.split(".")
        if len(frac) != 9:
            sys.exit("time %s not in nanoseconds" % t)
        key = (int(sec), int(frac[:6]), ifname)
        got = parse_comment(comment)
        cands = want.get(key, [])
        if got not in cands:
            sys.exit("packet %s on %s, comment %r: no JSON record with %r (there: %r)" %
                     (t, ifname, comment, got, cands))
        cands.remove(got)
        matched += 1
    print(matched)


main()
