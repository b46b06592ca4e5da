#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sql on PostgreSQL with times outside the calendar (issue 19, section 4):
# a replayed NFLOG capture (conform_pcap.py times) with NFULA_TIMESTAMPs
# 1700000000.123456, 2^63-1 and 253402300800 (10000-01-01) seconds, all in
# one batch.  PostgreSQL used to refuse the whole COPY over one time written
# as 1900-01-00, dropping the valid row with it; now all three rows arrive,
# the last two at the calendar's last second (docs/RELIABILITY.md), in a
# timestamptz column and as Unix seconds in a bigint one.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_lib.sh"
need_cmd psql python3
pg_have || skip "needs Debian's postgresql (initdb, pg_ctl) and the postgres user"
[ -e "$SLUICE_PLUGIN_PATH/sql.so" ] || skip "sql output not built"
E2E=$(dirname "$0")
export PGTZ=UTC PGOPTIONS="-c client_min_messages=warning"

python3 "$E2E/conform_pcap.py" times "$WORK/t.pcap" 1700000000 9223372036854775807 253402300800
pg_start "$WORK/pg" || fail "cannot start PostgreSQL"
pg_sql -f "$SRCDIR/conf/sql/packets-postgresql.sql"
pg_sql -c "CREATE TABLE epoch (t bigint, us bigint, dport integer)"
cat >"$WORK/t.yaml" <<YAML
instances:
  cap: {plugin: replay, file: "$WORK/t.pcap"}
  dec: {plugin: decode, ifnames: false}
stacks:
  p: [cap, dec, {plugin: sql, driver: postgresql, dsn: "$PG_DSN"}]
  e: [cap, dec, {plugin: sql, driver: postgresql, dsn: "$PG_DSN", table: epoch,
                 columns: {t: "timestamp:sec", us: "timestamp:usec", dport: dport}}]
YAML
timeout $((60 * ${SLUICE_TEST_TIME_FACTOR:-1})) "$SLUICE" -c "$WORK/t.yaml" >"$WORK/t.log" 2>&1 ||
	{ cat "$WORK/t.log"; fail "sluice failed"; }
got=$(pg_sql -c "SELECT dport, to_char(time, 'YYYY-MM-DD HH24:MI:SS.US') FROM packets ORDER BY dport" | paste -sd,)
want=$'1000\t2023-11-14 22:13:20.123456,1001\t9999-12-31 23:59:59.000000,1002\t9999-12-31 23:59:59.000000'
[ "$got" = "$want" ] || fail "packets: got '$got', want '$want'"$'\n'"$(cat "$WORK/t.log")"
got=$(pg_sql -c "SELECT dport, t, us FROM epoch ORDER BY dport" | paste -sd,)
want=$'1000\t1700000000\t123456,1001\t253402300799\t0,1002\t253402300799\t0'
[ "$got" = "$want" ] || fail "epoch: got '$got', want '$want'"$'\n'"$(cat "$WORK/t.log")"
grep -Eq "counters: p.sql \(sql\): in=3 out=3 dropped=0 errors=0 rows=3 batches=[0-9]+ failed=0 " "$WORK/t.log" ||
	fail "counters: $(grep 'p.sql (sql)' "$WORK/t.log")"
pass "3 rows, the two out of the calendar at 9999-12-31 23:59:59"
