#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Compare the journal output's entries with the json filter's records.
usage: journal_compare.py JSON_LINES TEXT_LINES JOURNALCTL_JSON IDENT PRIORITY

Every record of JSON_LINES (one json object per line) must be one entry of
JOURNALCTL_JSON (journalctl -o json): each key upper-cased is a field whose
value is the json value (a string as is, anything else as compact JSON
text), and the entry has no other field of its own (journald's trusted
fields, which start with _, aside).  Every entry's MESSAGE is a line of
TEXT_LINES (the logline output), SYSLOG_IDENTIFIER is IDENT and PRIORITY is
PRIORITY.  Records and entries are compared as multisets."""
import collections
import json
import sys

OWN = {"MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER"}


def value(v):
    if isinstance(v, str):
        return v
    return json.dumps(v, separators=(",", ":"))


def journal_value(v):
    # journalctl prints a value that is not UTF-8 text as an array of bytes
    if isinstance(v, list):
        return bytes(v).decode("utf-8", "surrogateescape")
    return v


def main(json_path, text_path, journal_path, ident, prio):
    want = collections.Counter()
    for line in open(json_path, encoding="utf-8"):
        rec = json.loads(line)
        want[json.dumps(sorted((k.upper(), value(v)) for k, v in rec.items()))] += 1
    texts = collections.Counter(l.rstrip("\n") for l in open(text_path, encoding="utf-8"))
    got = collections.Counter()
    msgs = collections.Counter()
    bad = 0
    for line in open(journal_path, encoding="utf-8"):
        e = json.loads(line)
        if e.get("SYSLOG_IDENTIFIER") != ident or e.get("PRIORITY") != prio:
            print("entry with SYSLOG_IDENTIFIER %r PRIORITY %r" % (e.get("SYSLOG_IDENTIFIER"), e.get("PRIORITY")))
            bad += 1
        msgs[journal_value(e.get("MESSAGE"))] += 1
        fields = sorted((k, journal_value(v)) for k, v in e.items() if not k.startswith("_") and k not in OWN)
        got[json.dumps(fields)] += 1
    for k in (want - got):
        print("json record without its entry:", k)
        bad += 1
    for k in (got - want):
        print("entry without its json record:", k)
        bad += 1
    if msgs != texts:
        print("MESSAGE values differ from the logline lines:", (msgs - texts) or "", (texts - msgs) or "")
        bad += 1
    if not want:
        print("no records")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:6]))
