#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""nats_compare.py REF DUMP SUBJECT [ordered|unordered]: the stream dump
(nats_client.py dump) holds each line of REF (the json file output of the
same records) exactly once, on SUBJECT, every message with its own
Nats-Msg-Id; `ordered`: in REF's order."""
import json
import sys

ref_path, dump_path, subject, mode = sys.argv[1:5]
ref = [l.rstrip("\n") for l in open(ref_path)]
got = [json.loads(l) for l in open(dump_path)]
bad = [m for m in got if m["subject"] != subject]
if bad:
    sys.exit("%d messages on another subject, first: %s" % (len(bad), bad[0]["subject"]))
ids = [m["msg_id"] for m in got]
if None in ids:
    sys.exit("a message without Nats-Msg-Id")
if len(set(ids)) != len(ids):
    sys.exit("%d messages share a Nats-Msg-Id" % (len(ids) - len(set(ids))))
data = [m["data"] for m in got]
if len(data) != len(ref):
    sys.exit("the stream holds %d messages, the file %d lines" % (len(data), len(ref)))
if mode == "ordered":
    for i, (a, b) in enumerate(zip(data, ref)):
        if a != b:
            sys.exit("message %d differs from line %d:\n  %s\n  %s" % (i + 1, i + 1, a, b))
elif sorted(data) != sorted(ref):
    sys.exit("the messages differ from the file's lines")
if len(set(data)) != len(data):
    sys.exit("a record is in the stream twice")
print("%d messages equal to the file's lines%s" % (len(data), ", in order" if mode == "ordered" else ""))
