# SPDX-License-Identifier: GPL-2.0-or-later
# kafka_compare.py REFERENCE TOPIC_DUMP MODE: the messages read back from a
# topic (kafka_lib.sh read_topic: partition, key, timestamp, value) against
# the file a json/logline -> file stack wrote from the same replay.
#   MODE json-key[=MEMBER]: keys are the JSON's MEMBER (src_ip by default;
#     "" when absent), each key
#     stays in one partition, in the reference's order; timestamps are the
#     records' (ms).  MODE exact: one partition, values equal line by line.
#   MODE once: the same values, each as often, in any order (retries
#     without idempotence may reorder).
import datetime, json, sys
from collections import defaultdict

ref = [l.rstrip("\n") for l in open(sys.argv[1], encoding="utf-8")]
got = [l.rstrip("\n").split("\t", 3) for l in open(sys.argv[2], encoding="utf-8")]
mode = sys.argv[3]
if len(got) != len(ref):
    sys.exit("topic has %d messages, the file %d" % (len(got), len(ref)))
if mode == "once":
    if sorted(g[3] for g in got) != sorted(ref):
        sys.exit("the topic's messages are not the file's lines, each once")
    print("%d messages, each line of the file once" % len(got))
    sys.exit(0)
if mode == "exact":
    for i, (g, r) in enumerate(zip(got, ref)):
        if g[3] != r:
            sys.exit("message %d differs:\n topic %s\n file  %s" % (i, g[3], r))
    print("%d messages equal to the file, in order" % len(got))
    sys.exit(0)

member = mode.split("=", 1)[1] if "=" in mode else "src_ip"


def ms(ts):
    d = datetime.datetime.strptime(ts[:26], "%Y-%m-%dT%H:%M:%S.%f").replace(
        tzinfo=datetime.timezone.utc)
    return int(d.timestamp()) * 1000 + d.microsecond // 1000

want = defaultdict(list)
for line in ref:
    o = json.loads(line)
    v = o.get(member, "")
    want[v if isinstance(v, str) else json.dumps(v)].append((str(ms(o["timestamp"])), line))
have, parts = defaultdict(list), defaultdict(set)
for p, k, t, v in got:
    have[k].append((t, v))
    parts[k].add(p)
for k in set(want) | set(have):
    if len(parts[k]) != 1:
        sys.exit("key %r in partitions %r" % (k, sorted(parts[k])))
    if have[k] != want[k]:
        sys.exit("key %r: %d messages, %d expected, or other values/order/timestamps"
                 % (k, len(have[k]), len(want[k])))
print("%d messages, %d keys over %d partitions: keys, values, order and timestamps match"
      % (len(got), len(want), len({p for s in parts.values() for p in s})))
