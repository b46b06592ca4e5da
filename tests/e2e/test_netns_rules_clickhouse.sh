#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `rules: true` into ClickHouse (issue 22): test_netns_rules'
# ruleset (rules_lib.sh, its regular chain's rule with a hostile comment)
# logs UDP in a namespace; nflog -> decode -> clickhouse writes into
# conf/clickhouse/packets.sql's table altered by the ALTER TABLE its
# comment gives, with its columns list (the packets mapping and the rule's),
# beside nflog -> decode -> json.  Every row's rule columns are the json
# record's, NULL where json has no rule (the ambiguous records).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rules_lib.sh"
need_root
need_cmd ip nft python3
. "$(dirname "$0")/clickhouse_lib.sh"
rules_netns slrch
HOSTILE="s=1|x]y\\z'q"
rules_nft_load "$HOSTILE" "out 6001"
CH_NETNS=$NS
ch_start a
ip netns exec "$NS" clickhouse-client --port "$CH_TCP_a" -n <"$SQL/packets.sql" || fail "packets.sql"
# the comment's ALTER TABLE, from its first line to the one ending in ';'
sed -n '/^--   ALTER TABLE packets ADD COLUMN rule_/,/;$/p' "$SQL/packets.sql" | sed 's/^--   //' >"$WORK/alter.sql"
[ -s "$WORK/alter.sql" ] || fail "packets.sql's comment has no ALTER TABLE for the rule"
ip netns exec "$NS" clickhouse-client --port "$CH_TCP_a" -n <"$WORK/alter.sql" || fail "the ALTER TABLE of packets.sql"
cat >"$WORK/c.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, rules: true}
stacks:
  j: [fw, decode, json, {plugin: file, file: "$WORK/out.json"}]
  c:
    - fw
    - decode
    - plugin: clickhouse
      url: "http://127.0.0.1:$CH_HTTP_a"
      table: packets
      flush_interval: 100ms
      columns: [time=timestamp:sec, time_us=timestamp:usec, prefix=prefix, ifname_in=ifname_in,
                ifname_out=ifname_out, ip_version=ip_version, src_addr=src_addr, dst_addr=dst_addr,
                ip_proto=ip_proto, sport=sport, dport=dport, ip_len=ip_len, ip_ttl=ip_ttl,
                tcp_flags=tcp_flags, icmp_type=icmp_type, icmp_code=icmp_code, mark=mark,
                rule_family=rule_family, rule_table=rule_table, rule_chain=rule_chain,
                rule_handle=rule_handle, rule_comment=rule_comment, rule_verdict=rule_verdict]
YAML
rules_sluice_start
rules_send_all
wait_for 20 rules_logged 24 || { cat "$WORK/sluice.log"; fail "not every packet was logged"; }
rows() { [ "$(ch_query a "SELECT count() FROM packets")" -ge 24 ]; }
wait_for 20 rows || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with $?"; }
[ "$(ch_query a "SELECT count() FROM packets")" = 24 ] || fail "$(ch_query a "SELECT count() FROM packets") rows, not 24"
ch_query a "SELECT time, time_us, dport, prefix, rule_family, rule_table, rule_chain, rule_handle,
	rule_comment, rule_verdict FROM packets ORDER BY time, time_us, dport FORMAT JSONEachRow" >"$WORK/rows.json"
python3 - "$WORK" "$HOSTILE" <<'PY' || fail "rows and json records differ"
import collections, json, sys
work, hostile = sys.argv[1], sys.argv[2]
fields = ("rule_family", "rule_table", "rule_chain", "rule_handle", "rule_comment", "rule_verdict")
def key(port, prefix, rule):
    return (port, prefix, tuple((k, str(rule[k])) for k in fields if rule.get(k) is not None))
want = collections.Counter()
for l in open(f"{work}/out.json"):
    o = json.loads(l)
    want[key(o["dest_port"], o["prefix"], o)] += 1
got = collections.Counter()
for l in open(f"{work}/rows.json"):
    r = json.loads(l)
    got[key(int(r["dport"]), r["prefix"], r)] += 1
assert sum(want.values()) == 24 and got == want, (got, want)
assert any(dict(k[2]).get("rule_comment") == hostile for k in got), "no hostile comment"
assert sum(n for k, n in got.items() if not k[2]) == 6, got
PY
pass "24 rows, each with its json record's rule (6 ambiguous: NULL), through packets.sql's ALTER TABLE"
