#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# clickhouse output against a real clickhouse-server (Debian's 18.16) on
# loopback, with conf/clickhouse/*.sql:
#  1. replay -> decode -> clickhouse: the rows read back with clickhouse-client
#     hold the addresses, ports, protocol, prefix, TTL, length and time
#     (seconds and microseconds) of the json output of the same replay; so do
#     user columns with the ipv4 and text conversions; a bad entry is refused;
#     so do the rows sent as RowBinary (format: RowBinary);
#  2. a missing table: HTTP errors counted, the rows dropped and counted after
#     the retries (in == out + dropped);
#  3. a Distributed table over two local servers receives every row;
#  4. the server killed for 10 s mid-stream and restarted: no row lost, none twice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_lib.sh"
[ -f "$CAP" ] || skip "no captures in tests/data"

# counters LOG INSTANCE: the instance's line of the counters printed at exit.
counters() { grep "counters: $2 (clickhouse)" "$1" || { cat "$1"; fail "no counters for $2"; }; }

# ---- 1. values ----
ch_start a
clickhouse-client --port "$CH_TCP_a" -n <"$SQL/packets.sql"
sed 's/EXISTS packets (/EXISTS rb (/' "$SQL/packets.sql" | clickhouse-client --port "$CH_TCP_a" -n
cat >"$WORK/v.yaml" <<YAML
instances:
  cap: {plugin: replay, file: "$CAP"}
  dec: {plugin: decode, ifnames: false}
stacks:
  j: [cap, dec, json, {plugin: file, file: "$WORK/v.json"}]
  c: [cap, dec, {plugin: clickhouse, url: "http://127.0.0.1:$CH_HTTP_a", table: packets,
                 batch_size: 7, flush_interval: 100ms}]
  m: [cap, dec, {plugin: clickhouse, url: "http://127.0.0.1:$CH_HTTP_a", table: mapped,
                 columns: ["t=timestamp", "us=timestamp:usec", "src4=src_addr:ipv4", "dst=dst_addr:text", "p=prefix"]}]
  r: [cap, dec, {plugin: clickhouse, url: "http://127.0.0.1:$CH_HTTP_a", table: rb, format: RowBinary,
                 batch_size: 9}]
YAML
ch_query a "CREATE TABLE mapped (t DateTime, us UInt32, src4 UInt32, dst String, p String) ENGINE = MergeTree ORDER BY t"
"$SLUICE" -c "$WORK/v.yaml" >"$WORK/v.log" 2>&1 || { cat "$WORK/v.log"; fail "sluice failed"; }
counters "$WORK/v.log" c.clickhouse | grep -Eq "in=40 out=40 dropped=0 errors=0 inserts=([6-9]|[1-4][0-9]) rows=40 http_errors=0 connect_errors=0 retries=0 dropped_rows=0" ||
	fail "counters: $(counters "$WORK/v.log" ch)"
ch_query a "$CH_PACKETS_QUERY" >"$WORK/v.tsv"
python3 "$E2E/clickhouse_packets.py" "$WORK/v.json" "$WORK/v.tsv" || fail "rows differ from the json output"
counters "$WORK/v.log" r.clickhouse | grep -q "in=40 out=40 dropped=0 errors=0 inserts=5 rows=40 http_errors=0" ||
	fail "RowBinary counters: $(counters "$WORK/v.log" r.clickhouse)"
ch_query a "${CH_PACKETS_QUERY/FROM packets/FROM rb}" >"$WORK/rb.tsv"
python3 "$E2E/clickhouse_packets.py" "$WORK/v.json" "$WORK/rb.tsv" || fail "RowBinary rows differ from the json output"
# every column, not only those the script compares: RowBinary = JSONEachRow
cols="toUnixTimestamp(time), time_us, prefix, ifname_in, ifname_out, ip_version, hex(src_addr), hex(dst_addr),
	ip_proto, sport, dport, ip_len, ip_ttl, tcp_flags, icmp_type, icmp_code, mark, src_ip4, dst_ip4"
[ "$(ch_query a "SELECT $cols FROM packets FORMAT TSV" | sort)" = "$(ch_query a "SELECT $cols FROM rb FORMAT TSV" | sort)" ] ||
	fail "RowBinary rows differ from the JSONEachRow rows"
# columns: ipv4 (0 for IPv6) and text conversions, read back next to the json
ch_query a "SELECT toUnixTimestamp(t), us, IPv4NumToString(src4), dst, p FROM mapped ORDER BY t, us FORMAT TSV" >"$WORK/m.tsv"
python3 - "$WORK/v.json" "$WORK/m.tsv" <<'PY' || fail "mapped columns differ from the json output"
import calendar, json, sys, time
want = []
for line in open(sys.argv[1]):
    o = json.loads(line)
    sec, frac = o["timestamp"].rstrip("Z").split(".")
    want.append("%d\t%d\t%s\t%s\t%s" % (calendar.timegm(time.strptime(sec, "%Y-%m-%dT%H:%M:%S")), int(frac),
                o["src_ip"] if o["ip_version"] == 4 else "0.0.0.0", o["dest_ip"], o["prefix"]))
got = [l.rstrip("\n") for l in open(sys.argv[2])]
if sorted(want) != sorted(got):
    sys.exit("rows in only one of them:\n" + "\n".join(sorted(set(got) ^ set(want))))
PY
# a malformed column entry is a configuration error at its place
cat >"$WORK/bad.yaml" <<YAML
stacks:
  m: [{plugin: replay, file: "$CAP"}, decode, {plugin: clickhouse, table: t,
      columns: ["a=src_addr:usec"]}]
YAML
"$SLUICE" -t -c "$WORK/bad.yaml" >"$WORK/bad.log" 2>&1 && fail "a bad columns entry was accepted"
grep -q "bad.yaml:[0-9]*:[0-9]*: .*'a=src_addr:usec': usec needs a time field" "$WORK/bad.log" ||
	fail "bad columns: $(cat "$WORK/bad.log")"

# ---- 2. a table that does not exist ----
cat >"$WORK/e.yaml" <<YAML
stacks:
  c: [{plugin: replay, file: "$CAP"}, decode, {plugin: clickhouse,
      url: "http://127.0.0.1:$CH_HTTP_a", table: nosuch, max_retries: 2, retry_min: 20ms}]
YAML
"$SLUICE" -c "$WORK/e.yaml" >"$WORK/e.log" 2>&1 || { cat "$WORK/e.log"; fail "sluice failed"; }
counters "$WORK/e.log" c.clickhouse | grep -q "in=40 out=0 dropped=40 errors=0 inserts=0 rows=0 http_errors=3 connect_errors=0 retries=2 dropped_rows=40" ||
	fail "missing table: $(counters "$WORK/e.log" ch)"
grep -q "HTTP 404: Code: 60, .*Table default.nosuch doesn't exist" "$WORK/e.log" ||
	{ cat "$WORK/e.log"; fail "the server's answer is not logged"; }

# ---- 3. Distributed over two servers ----
ch_start d2
ch_start d1 "<remote_servers><sluice>
  <shard><replica><host>127.0.0.1</host><port>@TCP@</port></replica></shard>
  <shard><replica><host>127.0.0.1</host><port>$CH_TCP_d2</port></replica></shard>
</sluice></remote_servers>"
for s in d1 d2; do
	sed 's/EXISTS packets (/EXISTS packets_local (/' "$SQL/packets.sql" |
		clickhouse-client --port "$(eval echo \$CH_TCP_$s)" -n
done
clickhouse-client --port "$CH_TCP_d1" -n <"$SQL/distributed.sql"
cat >"$WORK/d.yaml" <<YAML
stacks:
  c: [{plugin: replay, file: "$CAP", loop: 25}, decode, {plugin: clickhouse,
      url: "http://127.0.0.1:$CH_HTTP_d1", table: packets, batch_size: 50, max_retries: 2}]
YAML
"$SLUICE" -c "$WORK/d.yaml" >"$WORK/d.log" 2>&1 || { cat "$WORK/d.log"; fail "sluice failed"; }
counters "$WORK/d.log" c.clickhouse | grep -Eq "in=1000 out=1000 dropped=0 errors=0 inserts=[0-9]+ rows=1000 http_errors=0" ||
	fail "distributed: $(counters "$WORK/d.log" ch)"
both() { n1=$(ch_query d1 "SELECT count() FROM packets_local"); n2=$(ch_query d2 "SELECT count() FROM packets_local"); [ $((n1 + n2)) -ge 1000 ]; }
wait_for 20 both || true
[ $((n1 + n2)) = 1000 ] && [ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] ||
	fail "Distributed: $n1 + $n2 rows on the shards, expected 1000 split over both"
echo "distributed: $n1 + $n2 rows"

# ---- 4. the server killed (-9) mid-stream, away for 10 s ----
# A table of its own: after a kill -9, 18.16 brings back the parts a TRUNCATE
# had only marked for deletion.
sed 's/EXISTS packets (/EXISTS outage (/' "$SQL/packets.sql" | clickhouse-client --port "$CH_TCP_a" -n
cat >"$WORK/r.yaml" <<YAML
stacks:
  c: [{plugin: replay, file: "$CAP", loop: 14, pace: original}, decode, {plugin: clickhouse,
      url: "http://127.0.0.1:$CH_HTTP_a", table: outage, batch_size: 20,
      flush_interval: 200ms, timeout: 2s, retry_min: 200ms, retry_max: 2s, max_retries: 15}]
YAML
run_sluice_bg "$WORK/r.log" -c "$WORK/r.yaml"
rows_a() { [ "$(ch_query a "SELECT count() FROM outage")" -gt 0 ]; }
wait_for 10 rows_a || fail "no rows before the outage"
sleep 1
before=$(ch_query a "SELECT count() FROM outage")
ch_stop a KILL
t0=$SECONDS
# Away until sluice counted a failed INSERT and a retry (checked below),
# not for a fixed time.
failing() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	grep "counters: c.clickhouse (clickhouse)" "$WORK/r.log" | tail -1 | grep -Eq "connect_errors=[1-9].* retries=[1-9]"
}
wait_for 30 failing || fail "outage: no failed INSERT counted"
ch_run a
echo "server away for $((SECONDS - t0)) s, $before rows before"
wait "$SLUICE_PID" || { cat "$WORK/r.log"; fail "sluice failed"; }
after=$(ch_query a "SELECT count() FROM outage")
dups=$(ch_query a "SELECT count() FROM (SELECT time, time_us, src_addr, count() AS n FROM outage GROUP BY time, time_us, src_addr HAVING n > 14)")
c=$(counters "$WORK/r.log" c.clickhouse | tail -1)	# at exit
echo "$c" | grep -q "in=560 out=560 dropped=0 errors=0 .*rows=560 .*dropped_rows=0" || fail "outage: $c"
echo "$c" | grep -Eq "connect_errors=[1-9].* retries=[1-9]" || fail "no failed INSERT counted: $c"
[ "$after" = 560 ] && [ "$dups" = 0 ] || fail "outage: $after rows in the table (expected 560), $dups duplicated"
pass "values of 40 rows, 3 HTTP errors, distributed $n1+$n2, outage: $before rows before, 560 after ($(echo "$c" | grep -o 'connect_errors=[0-9]* retries=[0-9]*'))"
