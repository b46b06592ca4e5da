#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# json against published references (issue 19, section 5), on a crafted
# raw-IP capture (conform_pcap.py protos): replay -> decode -> json, in
# the default schema and in schema: ecs.
# - ECS network.transport is the keyword of IANA's protocol numbers
#   registry in lower case (ipv4 for 4, not ipip, which is 94; ospfigp for
#   89; dccp for 33), and network.iana_number the number;
# - every address is written as the packet had it, which tshark shows:
#   an IPv6 packet from ::ffff:10.1.2.3 says "::ffff:10.1.2.3" next to
#   "ip_version":6 (source.ip in ECS), an IPv4 packet "10.1.2.3"; and so
#   does the sql output's text (SQLite, read back with sqlite3).
. "$(dirname "$0")/lib.sh"
need_cmd python3 tshark sqlite3
[ -e "$SLUICE_PLUGIN_PATH/sql.so" ] || skip "sql output not built"
E2E=$(dirname "$0")

python3 "$E2E/conform_pcap.py" protos "$WORK/protos.pcap"
sqlite3 "$WORK/p.db" <"$SRCDIR/conf/sql/packets-sqlite.sql"
for schema in flat ecs; do
	opts=""; [ $schema = ecs ] && opts=", schema: ecs"
	cat >"$WORK/$schema.yaml" <<YAML
stacks:
  j: [{plugin: replay, file: "$WORK/protos.pcap"}, decode,
      {plugin: json$opts}, {plugin: file, file: "$WORK/$schema.json"}]
YAML
	[ $schema = ecs ] || cat >>"$WORK/$schema.yaml" <<YAML
  q: [{plugin: replay, file: "$WORK/protos.pcap"}, decode, {plugin: sql, driver: sqlite, path: "$WORK/p.db"}]
YAML
	"$SLUICE" -c "$WORK/$schema.yaml" >"$WORK/$schema.log" 2>&1 ||
		{ cat "$WORK/$schema.log"; fail "sluice failed ($schema)"; }
done
tshark -r "$WORK/protos.pcap" -T fields -E separator=, -e ip.src -e ip.dst -e ipv6.src -e ipv6.dst \
	-e ip.proto >"$WORK/tshark.txt" || fail "tshark failed"
sqlite3 -batch -separator , "$WORK/p.db" "SELECT src_addr, dst_addr FROM packets ORDER BY rowid" >"$WORK/sql.txt"

cat >"$WORK/check.py" <<'PY'
import json, sys
flat = [json.loads(l) for l in open(sys.argv[1])]
ecs = [json.loads(l) for l in open(sys.argv[2])]
pk = [l.rstrip("\n").split(",") for l in open(sys.argv[3])]
sql = [l.rstrip("\n").split(",") for l in open(sys.argv[4])]
# IANA "Assigned Internet Protocol Numbers", the Keyword column, lower case
KEYWORD = {1: "icmp", 2: "igmp", 4: "ipv4", 6: "tcp", 17: "udp", 33: "dccp", 41: "ipv6",
           47: "gre", 50: "esp", 51: "ah", 58: "ipv6-icmp", 89: "ospfigp", 94: "ipip",
           103: "pim", 112: "vrrp", 132: "sctp", 136: "udplite"}
err = []
if not (len(flat) == len(ecs) == len(pk) == len(sql) == 10):
    sys.exit("%d default lines, %d ECS lines, %d sql rows, %d packets: want 10" %
             (len(flat), len(ecs), len(sql), len(pk)))
for i, (f, e, p, q) in enumerate(zip(flat, ecs, pk, sql), 1):
    src, dst = (p[0], p[1]) if p[0] else (p[2], p[3])
    got = (f.get("src_ip"), f.get("dest_ip"))
    if got != (src, dst):
        err.append("packet %d: src_ip/dest_ip %s, tshark %s" % (i, got, (src, dst)))
    got = (e.get("source", {}).get("ip"), e.get("destination", {}).get("ip"))
    if got != (src, dst):
        err.append("packet %d: ECS source.ip/destination.ip %s, tshark %s" % (i, got, (src, dst)))
    if tuple(q) != (src, dst):
        err.append("packet %d: sql src_addr/dst_addr %s, tshark %s" % (i, tuple(q), (src, dst)))
    if p[4]:
        num = int(p[4])
        n = e.get("network", {})
        if n.get("iana_number") != str(num) or n.get("transport") != KEYWORD.get(num):
            err.append("protocol %d: ECS network %s, want transport %s" % (num, n, KEYWORD.get(num)))
if err:
    sys.exit("\n".join(err))
print("10 packets: transports and addresses as published")
PY
res=$(python3 "$WORK/check.py" "$WORK/flat.json" "$WORK/ecs.json" "$WORK/tshark.txt" "$WORK/sql.txt") ||
	fail "$res"$'\n'"$(cat "$WORK/flat.json" "$WORK/ecs.json")"
pass "$res"
