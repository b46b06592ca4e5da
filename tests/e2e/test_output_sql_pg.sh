#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sql output, driver postgresql, against a private PostgreSQL (pg_lib.sh) with
# conf/sql/*-postgresql.sql:
#  1. replay -> decode -> sql: every row of the packets table is the record
#     the json output of the same replay wrote, column by column
#     (sql_compare.py); so are the flow filter's records in the flows table;
#     a columns map (time as seconds, the packet as bytea) likewise;
#  2. a missing table, a missing column, a column of the wrong type: the
#     daemon does not start and names it; sluice -t does not connect;
#  3. a wrong password and a port nobody listens on: failed batches counted
#     and retried, then dropped and counted (in == out + dropped);
#  4. the server stopped (pg_ctl stop -m fast) and started again in the
#     middle of a paced replay: every record in the table, no duplicate;
#  5. ulogd2's names: conf/sql/ulogd2-view-postgresql.sql's view over the
#     packets of 1, and (when Debian's ulogd2 documentation is installed)
#     conf/sql-ulogd2.yaml writing into ulogd2's own flat ulog2 table, read
#     through ulogd2's own view: the same values as the json output;
#  6. spool_dir: rows spooled while the server is down are written by the
#     next run, first; a paced replay through a queue of 2 batches that drops
#     when full loses nothing during a 3 s outage, none twice.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_lib.sh"
need_cmd psql python3
pg_have || skip "needs Debian's postgresql (initdb, pg_ctl) and the postgres user"
[ -e "$SLUICE_PLUGIN_PATH/sql.so" ] || skip "sql output not built"
E2E=$(dirname "$0")
CAP="$SRCDIR/tests/data/nflog-mixed.pcap"
export PGTZ=UTC PGOPTIONS="-c client_min_messages=warning"
[ -f "$CAP" ] || skip "no captures in tests/data"

counters() { grep "counters: $2 (sql)" "$1" || { cat "$1"; fail "no counters for $2"; }; }
# rows SCHEMA TABLE: the table as sql_compare.py reads it
rows() { pg_sql -P null='\N' -c "SELECT $(python3 "$E2E/sql_compare.py" columns "$1") FROM $2"; }

pg_start "$WORK/pg" || fail "cannot start PostgreSQL"
pg_sql -f "$SRCDIR/conf/sql/packets-postgresql.sql" -f "$SRCDIR/conf/sql/flows-postgresql.sql"
pg_sql -c "CREATE TABLE mapped (t bigint, src text, p varchar(64), raw bytea)"

# ---- 1. values ----
cat >"$WORK/v.yaml" <<YAML
instances:
  cap: {plugin: replay, file: "$CAP"}
  dec: {plugin: decode, ifnames: false}
  fl: {plugin: flow}
stacks:
  j: [cap, dec, json, {plugin: file, file: "$WORK/v.json"}]
  p: [cap, dec, {plugin: sql, driver: postgresql, dsn: "$PG_DSN", batch_size: 7, flush_interval: 100ms}]
  fj: [cap, dec, fl, json, {plugin: file, file: "$WORK/f.json"}]
  f: [cap, dec, fl, {plugin: sql, driver: postgresql, dsn: "$PG_DSN", schema: flows, batch_size: 5}]
  m: [cap, dec, {plugin: sql, driver: postgresql, dsn: "$PG_DSN", table: mapped,
                 columns: {t: timestamp, src: src_addr, p: prefix, raw: packet}}]
YAML
"$SLUICE" -c "$WORK/v.yaml" >"$WORK/v.log" 2>&1 || { cat "$WORK/v.log"; fail "sluice failed"; }
counters "$WORK/v.log" p.sql | grep -q "in=40 out=40 dropped=0 errors=0 rows=40 batches=6 failed=0 retries=0 reconnects=0 dropped_rows=0" ||
	fail "packets counters: $(counters "$WORK/v.log" p.sql)"
rows packets packets >"$WORK/v.tsv"
packets=$(python3 "$E2E/sql_compare.py" packets "$WORK/v.json" "$WORK/v.tsv") || fail "packet rows differ from the json output"
echo "packets: $packets"
nflows=$(wc -l <"$WORK/f.json")
[ "$nflows" -gt 0 ] || fail "no flows in the json output"
counters "$WORK/v.log" f.sql | grep -q "in=$nflows out=$nflows dropped=0 errors=0 rows=$nflows " ||
	fail "flows counters: $(counters "$WORK/v.log" f.sql)"
rows flows flows >"$WORK/f.tsv"
flows=$(python3 "$E2E/sql_compare.py" flows "$WORK/f.json" "$WORK/f.tsv") || fail "flow rows differ from the json output"
echo "flows: $flows"
# the map: time as seconds into bigint, the packet into bytea (its length is the IP length)
pg_sql -c "SELECT t, src, p, octet_length(raw) FROM mapped" >"$WORK/m.tsv"
python3 - "$WORK/v.json" "$WORK/m.tsv" <<'PY' || fail "mapped columns differ from the json output"
import calendar, json, sys, time
want = sorted("%d\t%s\t%s\t%d" % (calendar.timegm(time.strptime(o["timestamp"][:19], "%Y-%m-%dT%H:%M:%S")),
              o["src_ip"], o["prefix"], o["len"]) for o in map(json.loads, open(sys.argv[1])))
got = sorted(l.rstrip("\n") for l in open(sys.argv[2]))
if want != got:
    sys.exit("rows in only one of them:\n" + "\n".join(sorted(set(got) ^ set(want))))
PY
[ "$(pg_sql -c "SELECT count(*) FROM mapped WHERE substr(raw, 1, 1) IN ('\\x45'::bytea, '\\x60'::bytea)")" = 40 ] ||
	fail "the bytea column does not start with the IP header"

# a hostile prefix (tab, newline, CR, backslash, a byte that is not UTF-8,
# then an e-acute) survives COPY's escaping; the bad byte is U+FFFD
python3 "$E2E/nflog_prefix.py" "$CAP" "$WORK/hostile.pcap" 6109620a630d645c65ff66c3a9
cat >"$WORK/h.yaml" <<YAML
stacks:
  h: [{plugin: replay, file: "$WORK/hostile.pcap"}, decode, {plugin: sql, driver: postgresql,
      dsn: "$PG_DSN", table: hostile, columns: {p: prefix}}]
YAML
pg_sql -c "CREATE TABLE hostile (p text)"
"$SLUICE" -c "$WORK/h.yaml" >"$WORK/h.log" 2>&1 || { cat "$WORK/h.log"; fail "hostile prefix: sluice failed"; }
got=$(pg_sql -c "SELECT DISTINCT encode(convert_to(p, 'UTF8'), 'hex') || ' ' || count(*) OVER () FROM hostile")
[ "$got" = "6109620a630d645c65efbfbd66c3a9 40" ] || fail "hostile prefix stored as $got"

# ---- 2. a wrong table: no start, the column named ----
bad() {	# bad NAME TABLE-SQL COLUMNS-YAML EXPECTED
	pg_sql -c "DROP TABLE IF EXISTS $1" ${2:+-c "$2"}
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  b: [{plugin: replay, file: "$CAP"}, decode, {plugin: sql, driver: postgresql, dsn: "$PG_DSN", table: $1 $3}]
YAML
	"$SLUICE" -t -c "$WORK/$1.yaml" >/dev/null 2>&1 || fail "$1: sluice -t failed (it must not look at the table)"
	"$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 && fail "$1: sluice started with a wrong table"
	grep -q "$4" "$WORK/$1.log" || { cat "$WORK/$1.log"; fail "$1: no '$4'"; }
}
bad nosuch "" "" "table 'nosuch' does not exist"
bad nocol "CREATE TABLE nocol (time timestamptz, src_addr inet)" ", columns: {time: timestamp, src_addr: src_addr, dport: dport}" \
	"table 'nocol' has no column 'dport'"
bad wrongtype "CREATE TABLE wrongtype (time timestamptz, sport inet)" ", columns: {time: timestamp, sport: sport}" \
	"column 'sport' of table 'wrongtype' is inet; its field needs a numeric type"
# the daemon never connects for -t: a server nobody runs is fine
sed "s|$PG_DSN|host=127.0.0.1 port=1 user=nobody|" "$WORK/v.yaml" >"$WORK/t.yaml"
"$SLUICE" -t -c "$WORK/t.yaml" >"$WORK/t.log" 2>&1 || { cat "$WORK/t.log"; fail "sluice -t connected"; }

# ---- 3. a wrong password, nobody listening: counted, retried, dropped ----
pg_sql -c "CREATE TABLE auth (LIKE packets)" -c "CREATE ROLE sl LOGIN PASSWORD 'right'" -c "GRANT SELECT, INSERT ON auth TO sl"
sed -i "1i host all sl 127.0.0.1/32 scram-sha-256" "$PG_DIR/pg_hba.conf"
pg_sql -c "SELECT pg_reload_conf()" >/dev/null
port=$(_pg_free_port)
# e_yaml DSN-TAIL: a replay into the table auth as user sl
e_yaml() {
	cat >"$WORK/e.yaml" <<YAML
stacks:
  e: [{plugin: replay, file: "$CAP"}, decode, {plugin: sql, driver: postgresql, table: auth,
      dsn: "host=127.0.0.1 port=$PG_PORT dbname=postgres user=sl password=right connect_timeout=2 $1",
      batch_size: 20, max_retries: 2, retry_min: 50ms, retry_max: 100ms}]
YAML
}
for what in "password=wrong" "port=$port"; do
	e_yaml "$what"
	"$SLUICE" -c "$WORK/e.yaml" >"$WORK/e.log" 2>&1 || { cat "$WORK/e.log"; fail "$what: sluice failed"; }
	c=$(counters "$WORK/e.log" e.sql)
	echo "$c" | grep -q "in=40 out=0 dropped=40 errors=0 rows=0 batches=0 failed=6 retries=4 reconnects=0 dropped_rows=40" ||
		fail "$what: $c"
	case $what in
	password*) grep -q "password authentication failed for user \"sl\"" "$WORK/e.log" ;;
	port*) grep -q "cannot connect: .*Connection refused" "$WORK/e.log" ;;
	esac || { cat "$WORK/e.log"; fail "$what: the reason is not logged"; }
done
# the right password works through the same pg_hba line
e_yaml ""
"$SLUICE" -c "$WORK/e.yaml" >"$WORK/e.log" 2>&1 || { cat "$WORK/e.log"; fail "right password: sluice failed"; }
counters "$WORK/e.log" e.sql | grep -q "in=40 out=40 dropped=0 errors=0 rows=40" || fail "right password: $(counters "$WORK/e.log" e.sql)"

# ---- 4. the server restarted mid-stream ----
loops=14
pg_sql -c "CREATE TABLE outage (LIKE packets)"
cat >"$WORK/r.yaml" <<YAML
stacks:
  r: [{plugin: replay, file: "$CAP", loop: $loops, pace: original}, decode, {plugin: sql,
      driver: postgresql, dsn: "$PG_DSN", table: outage, batch_size: 20, flush_interval: 100ms,
      timeout: 2s, retry_min: 100ms, retry_max: 1s, max_retries: 100}]
YAML
run_sluice_bg "$WORK/r.log" -c "$WORK/r.yaml"
some() { [ "$(pg_sql -c "SELECT count(*) FROM outage")" -gt 100 ]; }
wait_for 10 some || fail "no rows before the restart"
before=$(pg_sql -c "SELECT count(*) FROM outage")
pg_stop fast
# Down until sluice counted a failed batch and a retry (checked below).
pg_failing() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	grep "counters: r.sql (sql)" "$WORK/r.log" | tail -1 | grep -Eq "failed=[1-9][0-9]* retries=[1-9]"
}
wait_for 30 pg_failing || fail "restart: no failed batch counted with the server down"
pg_restart || fail "PostgreSQL did not start again"
wait "$SLUICE_PID" || { cat "$WORK/r.log"; fail "sluice failed"; }
total=$(pg_sql -c "SELECT count(*) FROM outage")
# a replayed record repeats its time, addresses and ports once per loop
over=$(pg_sql -c "SELECT count(*) FROM (SELECT count(*) AS n FROM outage
	GROUP BY time, src_addr, dst_addr, sport, dport, ip_proto, icmp_type HAVING count(*) <> $loops) x")
c=$(counters "$WORK/r.log" r.sql | tail -1)	# at exit
n=$((40 * loops))
echo "$c" | grep -q "in=$n out=$n dropped=0 errors=0 rows=$n .*failed=[1-9][0-9]* retries=[1-9][0-9]* reconnects=1 dropped_rows=0" ||
	fail "restart: $c"
[ "$total" = "$n" ] && [ "$over" = 0 ] || fail "restart: $total rows (expected $n), $over keys not $loops times"
restart_total=$total restart_c=$(echo "$c" | grep -o 'failed=[0-9]* retries=[0-9]* reconnects=[0-9]*')
# ---- 5. ulogd2's column names ----
ULOG_Q="SELECT oob_time_sec, oob_time_usec, oob_prefix, oob_family, host(ip_saddr_str), host(ip_daddr_str),
	ip_protocol, coalesce(tcp_sport, udp_sport), coalesce(tcp_dport, udp_dport),
	coalesce(icmp_type, icmpv6_type), coalesce(icmp_code, icmpv6_code) FROM ulog"
# ulog_compare JSON TSV: the rows of ULOG_Q are the json output's records
ulog_compare() {
	python3 - "$1" "$2" <<'PY'
import calendar, ipaddress, json, sys, time
P = {"icmp": 1, "tcp": 6, "udp": 17, "icmpv6": 58}
def a(v):
    v = ipaddress.ip_address(v)
    return str((v.ipv4_mapped if v.version == 6 else None) or v)
def n(v):
    return "\\N" if v is None else str(v)
want = []
for o in map(json.loads, open(sys.argv[1])):
    want.append("\t".join([str(calendar.timegm(time.strptime(o["timestamp"][:19], "%Y-%m-%dT%H:%M:%S"))),
        str(int(o["timestamp"][20:26])), o["prefix"], {"ipv4": "2", "ipv6": "10"}[o["family"]],
        a(o["src_ip"]), a(o["dest_ip"]), str(P[o["proto"]]), n(o.get("src_port")), n(o.get("dest_port")),
        n(o.get("icmp_type")), n(o.get("icmp_code"))]))
got = [l.rstrip("\n") for l in open(sys.argv[2])]
got = ["\t".join(f[:4] + [a(f[4]), a(f[5])] + f[6:]) for f in (l.split("\t") for l in got)]
if sorted(want) != sorted(got):
    sys.exit("rows in only one of them:\n" + "\n".join(sorted(set(got) ^ set(want))))
print("%d rows" % len(got))
PY
}
pg_sql -f "$SRCDIR/conf/sql/ulogd2-view-postgresql.sql"
pg_sql -P null='\N' -c "$ULOG_Q" >"$WORK/view.tsv"
ulog_compare "$WORK/v.json" "$WORK/view.tsv" >/dev/null || fail "the ulog view differs from the json output"
syn=$(pg_sql -c "SELECT count(*) FILTER (WHERE tcp_syn), count(*) FILTER (WHERE NOT tcp_syn) FROM ulog")
[ "$syn" = "$(python3 -c 'import json, sys
t = [json.loads(l).get("tcp_flags") for l in open(sys.argv[1])]
print("%d\t%d" % (sum("SYN" in f.split() for f in t if f is not None), sum("SYN" not in f.split() for f in t if f is not None)))' "$WORK/v.json")" ] ||
	fail "tcp_syn in the view: $syn"
flat=/usr/share/doc/ulogd2/pgsql-ulogd2-flat.sql.gz
ulog2="not run (no $flat: Debian's ulogd2)"
if [ -f "$flat" ]; then
	pg_sql -c "CREATE DATABASE ulogd"
	zcat "$flat" | psql "$PG_DSN dbname=ulogd" -X -q -v ON_ERROR_STOP=1 >/dev/null || fail "ulogd2's schema does not load"
	sed -e "s|fw: {plugin: nflog, group: 5}|fw: {plugin: replay, file: \"$CAP\"}|" \
	    -e "s|dec: {plugin: decode}|dec: {plugin: decode, ifnames: false}|" \
	    -e "s|dsn: \"dbname=ulogd user=ulogd\"|dsn: \"$PG_DSN dbname=ulogd\"|" "$SRCDIR/conf/sql-ulogd2.yaml" >"$WORK/u.yaml"
	"$SLUICE" -c "$WORK/u.yaml" >"$WORK/u.log" 2>&1 || { cat "$WORK/u.log"; fail "conf/sql-ulogd2.yaml: sluice failed"; }
	grep "counters: .*(sql)" "$WORK/u.log" | grep -v "dropped=0 errors=0 rows=[0-9]* batches=[0-9]* failed=0" &&
		fail "conf/sql-ulogd2.yaml: rows lost"
	psql "$PG_DSN dbname=ulogd" -X -q -At -F $'\t' -P null='\N' -c "$ULOG_Q" >"$WORK/ulog2.tsv"
	ulog2=$(ulog_compare "$WORK/v.json" "$WORK/ulog2.tsv") || fail "ulogd2's ulog view over sluice's rows differs from the json output"
	ulog2="$ulog2 in ulogd2's ulog2 table"
fi
echo "ulogd2's names: view ok, $ulog2"

# ---- 6. the spool ----
pg_sql -c "CREATE TABLE spooled (LIKE packets)"
cat >"$WORK/s.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP"}, {plugin: decode, ifnames: false}, {plugin: sql, driver: postgresql, dsn: "$PG_DSN",
      table: spooled, batch_size: 15, timeout: 1s, retry_min: 50ms, retry_max: 200ms,
      spool_dir: "$WORK/spool"}]
YAML
pg_stop fast
"$SLUICE" -c "$WORK/s.yaml" >"$WORK/s1.log" 2>&1 || { cat "$WORK/s1.log"; fail "spool, server down: sluice failed"; }
c=$(counters "$WORK/s1.log" s.sql)
echo "$c" | grep -q "in=40 out=40 dropped=0 errors=0 rows=0 .* dropped_rows=0 spooled=40 spool_sent=0 spool_bytes=[1-9][0-9]* spool_dropped=0" ||
	fail "spool, server down: $c"
pg_restart || fail "PostgreSQL did not start again"
"$SLUICE" -c "$WORK/s.yaml" >"$WORK/s2.log" 2>&1 || { cat "$WORK/s2.log"; fail "spool, server up: sluice failed"; }
c=$(counters "$WORK/s2.log" s.sql)
# new rows follow the old ones through the spool while it holds any
sp=$(echo "$c" | sed -n 's/.* spooled=\([0-9]*\) spool_sent=\([0-9]*\) .*/\1 \2/p')
echo "$c" | grep -q "in=40 out=40 dropped=0 errors=0 rows=80 .* dropped_rows=0 spooled=.* spool_bytes=0 spool_dropped=0" &&
	[ $((${sp#* } - ${sp% *})) = 40 ] || fail "spool, server up: $c"
# every cell through the spool and back: the rows are the json's records, twice
cat "$WORK/v.json" "$WORK/v.json" >"$WORK/vv.json"
rows packets spooled >"$WORK/spooled.tsv"
python3 "$E2E/sql_compare.py" packets "$WORK/vv.json" "$WORK/spooled.tsv" ||
	fail "spool: the rows written from the spool differ from the json output"
! compgen -G "$WORK/spool/*.spl" >/dev/null || fail "spool: segments left after everything was written"
# an outage under a paced replay, through a queue that drops when full
loops=10
pg_sql -c "CREATE TABLE outage2 (LIKE packets)"
cat >"$WORK/o.yaml" <<YAML
stacks:
  o: [{plugin: replay, file: "$CAP", loop: $loops, pace: original}, decode, {plugin: sql,
      driver: postgresql, dsn: "$PG_DSN", table: outage2, batch_size: 20, flush_interval: 100ms,
      timeout: 1s, retry_min: 100ms, retry_max: 500ms, spool_dir: "$WORK/spool2",
      queue: 2, when_full: drop}]
YAML
run_sluice_bg "$WORK/o.log" -c "$WORK/o.yaml"
some2() { [ "$(pg_sql -c "SELECT count(*) FROM outage2")" -gt 60 ]; }
wait_for 10 some2 || fail "spool outage: no rows before the stop"
pg_stop fast
# Down until rows went to the spool (checked below).
pg_spooled() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	grep "counters: o.sql (sql)" "$WORK/o.log" | tail -1 | grep -Eq " spooled=[1-9]"
}
wait_for 30 pg_spooled || fail "spool outage: nothing spooled with the server down"
pg_restart || fail "PostgreSQL did not start again"
wait "$SLUICE_PID" || { cat "$WORK/o.log"; fail "sluice failed"; }
n=$((40 * loops))
c=$(counters "$WORK/o.log" o.sql | tail -1)	# at exit
total=$(pg_sql -c "SELECT count(*) FROM outage2")
over=$(pg_sql -c "SELECT count(*) FROM (SELECT count(*) AS n FROM outage2
	GROUP BY time, src_addr, dst_addr, sport, dport, ip_proto, icmp_type HAVING count(*) <> $loops) x")
echo "$c" | grep -q "in=$n out=$n dropped=0 errors=0 rows=$n .*dropped_rows=0 spooled=[1-9][0-9]* spool_sent=[1-9][0-9]* spool_bytes=0 spool_dropped=0 spool_corrupt=0 queue_dropped=0" ||
	fail "spool outage: $c"
[ "$total" = "$n" ] && [ "$over" = 0 ] || fail "spool outage: $total rows (expected $n), $over keys not $loops times"
spooled=$(echo "$c" | grep -o 'spooled=[0-9]*')
echo "spool: 40 rows kept across runs; outage: $total rows, $spooled"
pass "packets $(echo "$packets" | cut -d' ' -f1), flows $nflows equal the json; spool outage $spooled of $n; restart: $before rows before, $restart_total after, $restart_c"
