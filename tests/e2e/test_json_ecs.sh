#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# json schema: ecs and decode's community_id on the recorded captures
# (tests/data): replay -> decode (community_id: true) -> json -> file, once
# with the default schema and once with schema: ecs.  Every ECS line must
# parse (python3 json) and be exactly the document the mapping of
# docs/JSON.md makes from the default schema's line of the same record:
# same paths, same values, nothing else.  The Community IDs must equal
# Wireshark's own Community ID dissector (tshark -e communityid) packet by
# packet, and with community_id_seed: 7 equal tshark's with
# communityid.seed:7.  schema: ecs with packet: true must be refused.
. "$(dirname "$0")/lib.sh"
need_cmd python3 tshark
DATA="$SRCDIR/tests/data"
[ -f "$DATA/counts.txt" ] || skip "no captures in tests/data"

# run CAPTURE OUT DECODE_OPTS JSON_OPTS
run() {
	cat >"$WORK/j.yaml" <<YAML
stacks:
  j: [{plugin: replay, file: "$1"}, {plugin: decode, community_id: true$3},
      {plugin: json, host: "fw-1"$4}, {plugin: file, file: "$2"}]
YAML
	rm -f "$2"
	"$SLUICE" -c "$WORK/j.yaml" >"$WORK/j.log" 2>&1 || { cat "$WORK/j.log"; fail "sluice failed on $1"; }
}

cat >"$WORK/check.py" <<'PY'
import json, sys
flat_fn, ecs_fn, tshark_fn, want_n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
flows = tshark_fn == "-"	# flow records: no tshark comparison, other paths

def lines(fn):
    out = []
    for i, line in enumerate(open(fn, encoding="utf-8"), 1):
        try:
            out.append(json.loads(line))
        except ValueError as e:
            sys.exit("%s:%d: not JSON (%s): %s" % (fn, i, e, line[:200]))
    return out

IANA = {"icmp": 1, "igmp": 2, "ipip": 4, "tcp": 6, "udp": 17, "ipv6": 41, "gre": 47, "esp": 50,
        "ah": 51, "icmpv6": 58, "ospf": 89, "pim": 103, "vrrp": 112, "sctp": 132, "udplite": 136}
# network.transport: IANA's keyword (test_json_conform checks the odd ones)
KEYWORD = {1: "icmp", 2: "igmp", 4: "ipv4", 6: "tcp", 17: "udp", 33: "dccp", 41: "ipv6",
           47: "gre", 50: "esp", 51: "ah", 58: "ipv6-icmp", 89: "ospfigp", 94: "ipip",
           103: "pim", 112: "vrrp", 132: "sctp", 136: "udplite"}

def expect(f):
    """The ECS document docs/JSON.md maps the default schema's object f to."""
    e = {"ecs": {"version": "8.11.0"},
         "event": {"kind": "event", "category": ["network"]},
         "observer": {"hostname": f["host"]}}
    if "timestamp" in f or "flow_end" in f:
        e["@timestamp"] = f.get("timestamp", f.get("flow_end"))
    if "prefix" in f:
        e["event"]["action"] = f["prefix"].rstrip(" :")
    if "flow_start" in f: e["event"]["start"] = f["flow_start"]
    if "flow_end" in f: e["event"]["end"] = f["flow_end"]
    for key, name, idx in (("ingress", "in", "ifindex_in"), ("egress", "out", "ifindex_out")):
        if name in f:
            e["observer"][key] = {"interface": {"name": f[name]}}
        elif f.get(idx):
            e["observer"][key] = {"interface": {"id": str(f[idx])}}
    flow_ports = f.get("proto") in ("tcp", "udp", "sctp", "udplite", "33")
    for side, d, mac, rd in (("source", "src", "mac_src", "orig"), ("destination", "dest", "mac_dst", "reply")):
        o = {}
        ip = f.get(d + "_ip", f.get("orig_%s_ip" % d))
        if ip is not None: o["ip"] = ip
        if d + "_port" in f: o["port"] = f[d + "_port"]
        elif flow_ports and "orig_%s_port" % d in f: o["port"] = f["orig_%s_port" % d]
        if mac in f: o["mac"] = f[mac].upper().replace(":", "-")
        for k in ("bytes", "packets"):
            if "%s_%s" % (rd, k) in f: o[k] = f["%s_%s" % (rd, k)]
        if o: e[side] = o
    n = {}
    if f.get("ip_version") in (4, 6):
        n["type"] = "ipv%d" % f["ip_version"]
    if "proto" in f:
        p = f["proto"]
        num = IANA[p] if p in IANA else int(p)
        if num in KEYWORD:
            n["transport"] = KEYWORD[num]
        n["iana_number"] = str(num)
    if "community_id" in f:
        n["community_id"] = f["community_id"]
    for k in ("bytes", "packets"):
        if "orig_" + k in f or "reply_" + k in f:
            n[k] = f.get("orig_" + k, 0) + f.get("reply_" + k, 0)
    if "vlan" in f:
        n["vlan"] = {"id": str(f["vlan"])}
    if n: e["network"] = n
    ipt = {}
    if "tcp_flags" in f:
        ipt["tcp"] = {"flags": f["tcp_flags"].split()}
    if "icmp_type" in f:
        ipt["icmp"] = {"type": f["icmp_type"]}
        if "icmp_code" in f: ipt["icmp"]["code"] = f["icmp_code"]
    if ipt: e["iptables"] = ipt
    return e

flat, ecs = lines(flat_fn), lines(ecs_fn)
if len(flat) != want_n or len(ecs) != want_n:
    sys.exit("%d default and %d ECS objects, expected %d" % (len(flat), len(ecs), want_n))
for i, (f, e) in enumerate(zip(flat, ecs), 1):
    want = expect(f)
    if e != want:
        sys.exit("%s:%d:\n  got  %s\n  want %s" % (ecs_fn, i, json.dumps(e, sort_keys=True),
                                                json.dumps(want, sort_keys=True)))
if flows:
    need = {"@timestamp", "event.start", "event.end", "source.ip", "source.port", "source.bytes",
            "source.packets", "destination.ip", "destination.port", "destination.bytes",
            "destination.packets", "network.bytes", "network.packets", "network.transport"}
    paths = set()
    def walk(o, pre=""):
        for k, v in o.items():
            if isinstance(v, dict): walk(v, pre + k + ".")
            else: paths.add(pre + k)
    for e in ecs: walk(e)
    if not need <= paths:
        sys.exit("flow paths missing: %r" % sorted(need - paths))
    print("%s: %d flow documents equal their mapping" % (ecs_fn.rsplit("/", 1)[-1], len(ecs)))
    sys.exit(0)
tshark = [l.rstrip("\n") for l in open(tshark_fn)]
if len(tshark) != want_n:
    sys.exit("tshark: %d packets, expected %d" % (len(tshark), want_n))
ids = 0
for i, (f, t) in enumerate(zip(flat, tshark), 1):
    if f.get("community_id", "") != t:
        sys.exit("packet %d: community_id %r, tshark %r (%r)" % (i, f.get("community_id"), t, f))
    ids += bool(t)
paths = set()
def walk(o, pre=""):
    for k, v in o.items():
        if isinstance(v, dict): walk(v, pre + k + ".")
        else: paths.add(pre + k)
for e in ecs: walk(e)
need = {"@timestamp", "source.ip", "destination.ip", "network.transport", "network.type",
        "network.iana_number", "network.community_id", "event.kind", "event.category",
        "iptables.tcp.flags", "source.port", "destination.port"}
if any("mac_src" in f for f in flat):	# not in captures without an Ethernet header
    need.add("source.mac")
if not need <= paths:
    sys.exit("paths missing: %r" % sorted(need - paths))
print("%s: %d documents equal their mapping, %d community ids equal tshark's" %
      (ecs_fn.rsplit("/", 1)[-1], len(ecs), ids))
PY

tshark_ids() { # CAPTURE OUT [SEED]
	tshark -r "$1" --enable-protocol communityid -o "communityid.seed:${3:-0}" \
		-T fields -e communityid >"$2" 2>"$WORK/tshark.err" || { cat "$WORK/tshark.err"; fail "tshark on $1"; }
}

seen=0
while read -r cap n; do
	[ -f "$DATA/$cap" ] || continue
	run "$DATA/$cap" "$WORK/flat.json" "" ""
	run "$DATA/$cap" "$WORK/ecs.json" "" ", schema: ecs"
	tshark_ids "$DATA/$cap" "$WORK/tshark.txt"
	python3 "$WORK/check.py" "$WORK/flat.json" "$WORK/ecs.json" "$WORK/tshark.txt" "$n" || fail "$cap"
	seen=$((seen + 1))
done <"$DATA/counts.txt"
[ "$seen" -ge 4 ] || fail "only $seen captures checked"

# A seed changes every id, the same way as Wireshark's.
cap="$DATA/eth-mixed.pcap"
run "$cap" "$WORK/flat.json" ", community_id_seed: 7" ""
run "$cap" "$WORK/ecs.json" ", community_id_seed: 7" ", schema: ecs"
tshark_ids "$cap" "$WORK/tshark.txt" 7
python3 "$WORK/check.py" "$WORK/flat.json" "$WORK/ecs.json" "$WORK/tshark.txt" 40 || fail "seed 7"
run "$cap" "$WORK/seed0.json" "" ""
if cmp -s "$WORK/flat.json" "$WORK/seed0.json"; then fail "community_id_seed changed nothing"; fi

# Flows (the flow filter; nfct records have the same fields): the original
# direction is the source, with the bytes and packets each side sent.
for f in flat ecs; do
	opts=""; [ "$f" = ecs ] && opts=", schema: ecs"
	cat >"$WORK/f.yaml" <<YAML
stacks:
  j: [{plugin: replay, file: "$DATA/eth-mixed.pcap"}, {plugin: decode, ifnames: false}, flow,
      {plugin: json, host: "fw-1"$opts}, {plugin: file, file: "$WORK/flow-$f.json"}]
YAML
	"$SLUICE" -c "$WORK/f.yaml" >"$WORK/f.log" 2>&1 || { cat "$WORK/f.log"; fail "sluice (flows)"; }
done
nflows=$(wc -l <"$WORK/flow-flat.json")
[ "$nflows" -ge 8 ] || fail "only $nflows flows"
python3 "$WORK/check.py" "$WORK/flow-flat.json" "$WORK/flow-ecs.json" - "$nflows" || fail "flows"

# Without community_id the field is absent in both schemas.
cat >"$WORK/n.yaml" <<YAML
stacks:
  j: [{plugin: replay, file: "$cap"}, decode, {plugin: json, schema: ecs}, {plugin: file, file: "$WORK/n.json"}]
YAML
"$SLUICE" -c "$WORK/n.yaml" >"$WORK/n.log" 2>&1 || { cat "$WORK/n.log"; fail "sluice without community_id"; }
! grep -q community_id "$WORK/n.json" || fail "community_id written though decode was not asked for it"
[ "$(wc -l <"$WORK/n.json")" = 40 ] || fail "without community_id: $(wc -l <"$WORK/n.json") lines"

# packet: true has no ECS field: refused at configuration time, with file:line:col.
cat >"$WORK/bad.yaml" <<YAML
stacks:
  j: [{plugin: replay, file: "$cap"}, decode, {plugin: json, schema: ecs, packet: true}, {plugin: file, file: "$WORK/x"}]
YAML
rc=0
"$SLUICE" -t -c "$WORK/bad.yaml" >"$WORK/bad.log" 2>&1 || rc=$?
[ "$rc" = 78 ] || { cat "$WORK/bad.log"; fail "schema: ecs with packet: true: exit $rc, expected 78"; }
grep -q "bad.yaml:2:[0-9]*:.*packet.*schema: ecs" "$WORK/bad.log" || { cat "$WORK/bad.log"; fail "error does not name the place"; }
pass "ECS documents equal their mapping of the default schema; Community IDs equal tshark's (seeds 0 and 7)"
