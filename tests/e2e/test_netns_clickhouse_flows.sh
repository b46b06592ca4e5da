#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nfct -> clickhouse (schema: flows, conf/clickhouse/flows.sql) with real
# connections in a namespace (TCP and UDP over IPv4 and IPv6, then
# `conntrack -F`), against a clickhouse-server running in that namespace: the
# rows read back hold what the json output of the same nfct stack says for
# every event (id, event, protocol, both directions' addresses, ports,
# packet and byte counters, time).  The server's own connections are not
# tracked, so they never show as flows.  A second stack sends the same rows
# as RowBinary into flows_rb: every column equals the JSONEachRow table's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nfct_lib.sh"
need_root
need_cmd ip nft conntrack python3
. "$(dirname "$0")/clickhouse_lib.sh"
NS=$(unique_name slchf)
ct_netns "$NS" 4739
CH_NETNS=$NS
ch_start a
ip netns exec "$NS" nft -f - <<NFT || fail "cannot add the notrack rules"
table inet sluice_ch {
	chain raw_pre { type filter hook prerouting priority raw; tcp dport { $CH_HTTP_a, $CH_TCP_a } notrack; tcp sport { $CH_HTTP_a, $CH_TCP_a } notrack; }
	chain raw_out { type filter hook output priority raw; tcp dport { $CH_HTTP_a, $CH_TCP_a } notrack; tcp sport { $CH_HTTP_a, $CH_TCP_a } notrack; }
}
NFT
ip netns exec "$NS" clickhouse-client --port "$CH_TCP_a" -n <"$SRCDIR/conf/clickhouse/flows.sql"
sed 's/EXISTS flows (/EXISTS flows_rb (/' "$SRCDIR/conf/clickhouse/flows.sql" |
	ip netns exec "$NS" clickhouse-client --port "$CH_TCP_a" -n

cat >"$WORK/c.yaml" <<CONF
instances:
  ct: { plugin: nfct, events: [new, destroy] }
stacks:
  json: [ct, json, { plugin: file, file: $WORK/sluice.json, flush_interval: 50ms }]
  store: [ct, { plugin: clickhouse, url: "http://127.0.0.1:$CH_HTTP_a", table: flows,
                schema: flows, flush_interval: 100ms }]
  store_rb: [ct, { plugin: clickhouse, url: "http://127.0.0.1:$CH_HTTP_a", table: flows_rb,
                   schema: flows, format: RowBinary, flush_interval: 100ms }]
CONF
ip netns exec "$NS" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "started" "$WORK/sluice.log" || fail "sluice did not start: $(cat "$WORK/sluice.log")"
ip netns exec "$NS" python3 "$E2E/nfct_traffic.py" flows || fail "traffic failed"
ip netns exec "$NS" conntrack -F 2>/dev/null
destroys() { [ "$(grep -c '"ct_event":"DESTROY"' "$WORK/sluice.json" 2>/dev/null)" -ge 4 ]; }
wait_for 10 destroys || fail "no destroy events: $(cat "$WORK/sluice.log")"
sleep 0.5
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || true
grep -q "counters: store.clickhouse (clickhouse): .* dropped=0 errors=0 .*http_errors=0 connect_errors=0" \
	"$WORK/sluice.log" || fail "counters: $(grep 'counters: store' "$WORK/sluice.log")"
ch_query a "SELECT ct_id, ct_event, ip_proto, IPv6NumToString(orig_src), IPv6NumToString(orig_dst),
	orig_sport, orig_dport, IPv6NumToString(reply_src), reply_sport, orig_packets, orig_bytes,
	reply_packets, reply_bytes, toUnixTimestamp(time), time_us FROM flows FORMAT TSV" >"$WORK/rows.tsv"
python3 - "$WORK/sluice.json" "$WORK/rows.tsv" <<'PY' || fail "rows differ from the json output"
import calendar, ipaddress, json, sys, time
ev = {"NEW": 1, "UPDATE": 2, "DESTROY": 4}
protos = {"tcp": 6, "udp": 17}
def addr(a):
    a = ipaddress.ip_address(a)
    return str((a.ipv4_mapped if a.version == 6 else None) or a)
want = []
for line in open(sys.argv[1]):
    o = json.loads(line)
    sec, frac = o["timestamp"].rstrip("Z").split(".")
    want.append((o["ct_id"], ev[o["ct_event"]], protos.get(o["proto"], o["proto"]),
                 addr(o["orig_src_ip"]), addr(o["orig_dest_ip"]), o["orig_src_port"],
                 o["orig_dest_port"], addr(o["reply_src_ip"]), o["reply_src_port"],
                 o.get("orig_packets", 0), o.get("orig_bytes", 0), o.get("reply_packets", 0),
                 o.get("reply_bytes", 0), calendar.timegm(time.strptime(sec, "%Y-%m-%dT%H:%M:%S")),
                 int(frac)))
got = []
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("\t")
    got.append((int(f[0]), int(f[1]), int(f[2]), addr(f[3]), addr(f[4]), int(f[5]), int(f[6]),
                addr(f[7]), int(f[8]), int(f[9]), int(f[10]), int(f[11]), int(f[12]), int(f[13]),
                int(f[14])))
want.sort(); got.sort()
if got != want:
    sys.exit("clickhouse:\n%s\njson:\n%s" % ("\n".join(map(repr, got)), "\n".join(map(repr, want))))
d = [g for g in got if g[1] == 4]
if len(d) < 4 or not any(g[10] > 0 and g[12] > 0 for g in d):
    sys.exit("destroy rows without both directions' counters: %r" % d)
print("%d rows (%d destroy) equal the json output" % (len(got), len(d)))
PY
grep -q "counters: store_rb.clickhouse (clickhouse): .* dropped=0 errors=0 .*http_errors=0 connect_errors=0" \
	"$WORK/sluice.log" || fail "RowBinary counters: $(grep 'counters: store_rb' "$WORK/sluice.log")"
cols="toUnixTimestamp(time), time_us, ct_event, ct_id, family, ip_proto, hex(orig_src), hex(orig_dst),
	orig_sport, orig_dport, hex(reply_src), hex(reply_dst), reply_sport, reply_dport, orig_packets,
	orig_bytes, reply_packets, reply_bytes, toUnixTimestamp(flow_start), toUnixTimestamp(flow_end),
	tcp_state, mark, ct_zone"
ch_query a "SELECT $cols FROM flows FORMAT TSV" | sort >"$WORK/json.tsv"
ch_query a "SELECT $cols FROM flows_rb FORMAT TSV" | sort >"$WORK/rb.tsv"
[ -s "$WORK/rb.tsv" ] && cmp -s "$WORK/json.tsv" "$WORK/rb.tsv" ||
	fail "RowBinary rows differ from the JSONEachRow rows: $(diff "$WORK/json.tsv" "$WORK/rb.tsv" | head)"
pass "$(wc -l <"$WORK/rows.tsv") flow rows equal the json output, and the RowBinary rows equal them"
