#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Times outside the calendar (issue 19, section 4; docs/RELIABILITY.md): a
# replayed NFLOG capture whose NFULA_TIMESTAMPs are 1700000000.123456 (in
# range), 2^63-1 and 253402300800 (10000-01-01) seconds.  Every output keeps
# all three records and writes the last two clamped to the end of what it
# can write (its last second, fraction zero), read back by the real readers:
# - json: 9999-12-31T23:59:59.000000Z (python3 json);
# - logline with line_header: syslog: "Dec 31 23:59:59", in UTC and in
#   Europe/Berlin (the calendar's last second, whatever the zone); rfc3339:
#   9999-12-31T23:59:59.000000+00:00;
# - pcap (unsigned 32-bit seconds): 4294967295.000000000 (tshark);
# - sql on SQLite: 9999-12-31 23:59:59.000000+00:00, which sqlite3's own
#   date functions read as 9999-12-31 23:59:59 (julianday is a number);
# - the flow filter, whose clock is int64 nanoseconds: flows from
#   2262-04-11T23:47:15Z (before: 1969 and 1816, a signed overflow).
# PostgreSQL and ClickHouse: test_output_sql_pg_time, test_output_clickhouse_time.
. "$(dirname "$0")/lib.sh"
need_cmd python3 tshark sqlite3
[ -e "$SLUICE_PLUGIN_PATH/sql.so" ] || skip "sql output not built"
E2E=$(dirname "$0")
[ -f /usr/share/zoneinfo/Europe/Berlin ] || skip "needs tzdata (Europe/Berlin)"

python3 "$E2E/conform_pcap.py" times "$WORK/t.pcap" 1700000000 9223372036854775807 253402300800
sqlite3 "$WORK/t.db" <"$SRCDIR/conf/sql/packets-sqlite.sql"

run() {	# run TZ NAME
	cat >"$WORK/$2.yaml" <<YAML
instances:
  cap: {plugin: replay, file: "$WORK/t.pcap"}
  dec: {plugin: decode, ifnames: false}
stacks:
  j: [cap, dec, json, {plugin: file, file: "$WORK/$2.json"}]
  s: [cap, dec, logline, {plugin: file, file: "$WORK/$2-syslog.txt", line_header: syslog, header_host: fw}]
  r: [cap, dec, logline, {plugin: file, file: "$WORK/$2-rfc.txt", line_header: rfc3339, header_host: fw}]
  p: [cap, {plugin: pcap, file: "$WORK/$2.pcap"}]
  q: [cap, dec, {plugin: sql, driver: sqlite, path: "$WORK/t.db"}]
  f: [cap, dec, flow, json, {plugin: file, file: "$WORK/$2-flow.json"}]
YAML
	TZ="$1" timeout $((30 * ${SLUICE_TEST_TIME_FACTOR:-1})) "$SLUICE" -c "$WORK/$2.yaml" >"$WORK/$2.log" 2>&1 ||
		{ cat "$WORK/$2.log"; fail "$2: sluice failed"; }
}
run UTC utc
run Europe/Berlin berlin
sqlite3 -batch "$WORK/t.db" "DELETE FROM packets WHERE rowid > 3"	# berlin's rows: the same

err=()
want() { [ "$2" = "$3" ] || err+=("$1: got '$2', want '$3'"); }

want json "$(python3 -c 'import json, sys
print(" ".join(json.loads(l)["timestamp"] for l in open(sys.argv[1])))' "$WORK/utc.json")" \
	"2023-11-14T22:13:20.123456Z 9999-12-31T23:59:59.000000Z 9999-12-31T23:59:59.000000Z"
want "syslog header (UTC)" "$(cut -c1-15 "$WORK/utc-syslog.txt" | paste -sd,)" \
	"Nov 14 22:13:20,Dec 31 23:59:59,Dec 31 23:59:59"
want "syslog header (Berlin)" "$(cut -c1-15 "$WORK/berlin-syslog.txt" | paste -sd,)" \
	"Nov 14 23:13:20,Dec 31 23:59:59,Dec 31 23:59:59"
want "rfc3339 header (UTC)" "$(cut -d' ' -f1 "$WORK/utc-rfc.txt" | paste -sd,)" \
	"2023-11-14T22:13:20.123456+00:00,9999-12-31T23:59:59.000000+00:00,9999-12-31T23:59:59.000000+00:00"
want pcap "$(tshark -r "$WORK/utc.pcap" -T fields -e frame.time_epoch | paste -sd,)" \
	"1700000000.123456000,4294967295.000000000,4294967295.000000000"
want sqlite "$(sqlite3 -batch "$WORK/t.db" "SELECT time || '|' || datetime(time) || '|' || typeof(julianday(time)) FROM packets ORDER BY rowid" | paste -sd,)" \
	"2023-11-14 22:13:20.123456+00:00|2023-11-14 22:13:20|real,9999-12-31 23:59:59.000000+00:00|9999-12-31 23:59:59|real,9999-12-31 23:59:59.000000+00:00|9999-12-31 23:59:59|real"
want flow "$(python3 -c 'import json, sys
print(" ".join(sorted(json.loads(l)["flow_start"] + "/" + json.loads(l)["flow_end"] for l in open(sys.argv[1]))))' "$WORK/utc-flow.json")" \
	"2023-11-14T22:13:20.123456Z/2023-11-14T22:13:20.123456Z 2262-04-11T23:47:15.000000Z/2262-04-11T23:47:15.000000Z 2262-04-11T23:47:15.000000Z/2262-04-11T23:47:15.000000Z"
for f in utc berlin; do
	grep -q "counters: q.sql (sql): in=3 out=3 dropped=0 errors=0 rows=3 " "$WORK/$f.log" ||
		err+=("$f: sql counters: $(grep 'q.sql (sql)' "$WORK/$f.log")")
	n=$(cat "$WORK/$f.json" "$WORK/$f-syslog.txt" "$WORK/$f-rfc.txt" | wc -l)
	[ "$n" = 9 ] || err+=("$f: $n lines in the text outputs, want 9")
done
[ ${#err[@]} = 0 ] || fail "$(printf '%s\n' "${err[@]}")"
pass "json, syslog and rfc3339 headers, pcap, sqlite, flow: 3 records each, clamped to the end of their range"
