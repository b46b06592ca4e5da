#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/JSON.md's key order is what json prints: every recorded capture
# (IPv4, IPv6, ICMP, TCP, UDP, Ethernet, VLAN, cooked) and a made-up NFLOG
# capture (json_keys_pcap.py: unknown interfaces next to known ones,
# bridge ports, ARP, mark/uid/gid/seq, a cut packet) go through replay ->
# decode -> json (host, packet, payload on) -> file; the keys of every
# object must be documented and come in the order of the table's rows.
# The example object of JSON.md must follow that order too and have the
# keys json prints for the same kind of record (a TCP SYN logged by nflog).
. "$(dirname "$0")/lib.sh"
need_cmd python3
DATA="$SRCDIR/tests/data"
[ -f "$DATA/counts.txt" ] || skip "no captures in tests/data"

python3 "$SRCDIR/tests/e2e/json_keys_pcap.py" "$WORK/keys.pcap"
caps=("$WORK/keys.pcap")
while read -r cap _; do
	[ -f "$DATA/$cap" ] && caps+=("$DATA/$cap")
done <"$DATA/counts.txt"
i=0
for cap in "${caps[@]}"; do
	i=$((i + 1))
	cat >"$WORK/j.yaml" <<YAML
stacks:
  j: [{plugin: replay, file: "$cap"}, decode,
      {plugin: json, host: fw1, packet: true, payload: true}, {plugin: file, file: "$WORK/$i.json"}]
YAML
	"$SLUICE" -c "$WORK/j.yaml" >"$WORK/j.log" 2>&1 || { cat "$WORK/j.log"; fail "sluice failed on $cap"; }
	cat >"$WORK/e.yaml" <<YAML
stacks:
  j: [{plugin: replay, file: "$cap"}, {plugin: decode, community_id: true},
      {plugin: json, host: fw1, schema: ecs}, {plugin: file, file: "$WORK/ecs-$i.json"}]
  c: [{plugin: replay, file: "$cap"}, {plugin: decode, community_id: true},
      {plugin: json, host: fw1, packet: true, payload: true}, {plugin: file, file: "$WORK/$i-cid.json"}]
  f: [{plugin: replay, file: "$cap"}, {plugin: decode, ifnames: false}, flow,
      {plugin: json, schema: ecs}, {plugin: file, file: "$WORK/ecs-flow-$i.json"}]
YAML
	"$SLUICE" -c "$WORK/e.yaml" >"$WORK/j.log" 2>&1 || { cat "$WORK/j.log"; fail "sluice (ecs) failed on $cap"; }
done
# The example is compared with plain json output of the same capture.
cat >"$WORK/plain.yaml" <<YAML
stacks:
  j: [{plugin: replay, file: "$DATA/nflog-mixed.pcap"}, decode, json, {plugin: file, file: "$WORK/plain.json"}]
YAML
"$SLUICE" -c "$WORK/plain.yaml" >"$WORK/j.log" 2>&1 || { cat "$WORK/j.log"; fail "sluice failed"; }

python3 - "$SRCDIR/docs/JSON.md" "$WORK/plain.json" "$WORK"/[0-9]*.json <<'PY' || fail "docs/JSON.md and json's output disagree (above)"
import json, re, sys
doc = open(sys.argv[1]).read()
table = doc[doc.index("\n## Fields\n"):]
table = table[:table.index("\n## ", 1)]
order = []
for line in table.splitlines():
    if line.startswith("| `"):
        order += re.findall(r"`([^`]+)`", line.split("|")[1])
rank = {k: i for i, k in enumerate(order)}
bad, n, seen = 0, 0, set()

def check(keys, where):
    global bad
    unknown = [k for k in keys if k not in rank]
    if unknown:
        print(f"{where}: keys not in the JSON.md table: {unknown}"); bad += 1
    known = [k for k in keys if k in rank]
    for a, b in zip(known, known[1:]):
        if rank[a] > rank[b]:
            print(f"{where}: '{a}' comes before '{b}', the table has them the other way"); bad += 1

for fn in sys.argv[3:]:
    for ln, line in enumerate(open(fn), 1):
        keys = [k for k, _ in json.loads(line, object_pairs_hook=lambda p: p)]
        check(keys, f"{fn}:{ln}")
        seen.update(keys)
        n += 1
need = {"host", "group", "ifindex_in", "out", "ifindex_out", "physindex_in", "physout", "mark",
        "uid", "gid", "arp_sha", "arp_spa", "arp_tha", "arp_tpa", "pktlen", "caplen", "icmp_mtu",
        "seq_local", "seq_global", "vlan", "flowlabel", "decode_flags", "packet", "payload",
        "community_id"}
if need - seen:
    print(f"the captures did not show {sorted(need - seen)}: the order test lost its reach"); bad += 1

# The example: documented order, and the keys of a TCP SYN json prints.
ex = re.search(r"```json\n(.*?)\n```", doc, re.S).group(1)
exkeys = [k for k, _ in json.loads(ex, object_pairs_hook=lambda p: p)]
check(exkeys, "JSON.md example")
norm = lambda ks: [{"ifindex_in": "in"}.get(k, k) for k in ks]
syns = [norm([k for k, _ in json.loads(l, object_pairs_hook=lambda p: p)])
        for l in open(sys.argv[2]) if '"tcp_flags":"SYN"' in l]
if norm(exkeys) not in syns:
    print(f"JSON.md example has keys {exkeys};\n json prints for a TCP SYN: {syns[:1]}"); bad += 1
print(f"{n} objects, {len(seen)} distinct keys, {len(order)} documented keys in order")
sys.exit(1 if bad else 0)
PY
python3 - "$SRCDIR/docs/JSON.md" "$WORK"/ecs-*.json <<'PY' || fail "docs/JSON.md's ECS table and json's ECS output disagree (above)"
import json, re, sys
doc = open(sys.argv[1]).read()
sec = doc[doc.index("\n## Schema `ecs`\n"):]
sec = sec[:sec.index("\n## ", 1)]
order = []
for line in sec.splitlines():
    if line.startswith("| `"):
        order += re.findall(r"`([^`]+)`", line.split("|")[1])
rank = {k: i for i, k in enumerate(order)}
bad, n, seen = 0, 0, set()

def leaves(o, pre=""):
    for k, v in o:
        if isinstance(v, list) and v and isinstance(v[0], tuple):
            yield from leaves(v, pre + k + ".")
        else:
            yield pre + k

def check(line, where):
    global bad
    paths = list(leaves(json.loads(line, object_pairs_hook=lambda p: p)))
    seen.update(paths)
    unknown = [p for p in paths if p not in rank]
    if unknown:
        print(f"{where}: paths not in the ECS table: {unknown}"); bad += 1
    known = [p for p in paths if p in rank]
    for a, b in zip(known, known[1:]):
        if rank[a] > rank[b]:
            print(f"{where}: '{a}' comes before '{b}', the table has them the other way"); bad += 1

for fn in sys.argv[2:]:
    for ln, line in enumerate(open(fn), 1):
        check(line, f"{fn}:{ln}")
        n += 1
ex = re.search(r"```json\n(.*?)\n```", sec, re.S).group(1)
for i, line in enumerate(ex.splitlines(), 1):
    check(line, f"ECS example line {i}")
undocumented_unseen = set(order) - seen
if undocumented_unseen:
    print(f"the captures did not show {sorted(undocumented_unseen)}: the ECS order test lost its reach"); bad += 1
print(f"{n} ECS documents, {len(seen)} distinct paths, {len(order)} documented paths in order")
sys.exit(1 if bad else 0)
PY
pass "key order of every object, of the ECS documents and of the examples is the documented one"
