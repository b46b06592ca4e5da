#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The clickhouse output's spool across a reload: a paced replay into a
# clickhouse output with spool_dir while the server (Debian's 18.16, on
# loopback) is down; SIGHUP with a changed flush_interval replaces the
# output instance while rows are spooled (the new one starts before the old
# one stops and must wait for the spool's lock); then the server comes up:
# every row arrives, none twice, none dropped by either instance.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_lib.sh"
[ -f "$CAP" ] || skip "no captures in tests/data"

count() { ch_query a "SELECT count() FROM packets"; }

ch_start a "$CH_QUICK_STOP"
clickhouse-client --port "$CH_TCP_a" -n <"$SRCDIR/conf/clickhouse/packets.sql"
ch_stop a
cat >"$WORK/r.yaml" <<YAML
stacks:
  c: [{plugin: replay, file: "$CAP", loop: 12, pace: original}, decode, {plugin: clickhouse,
      url: "http://127.0.0.1:$CH_HTTP_a", table: packets, batch_size: 10, flush_interval: 100ms,
      timeout: 1s, retry_min: 100ms, retry_max: 500ms, spool_dir: "$WORK/spool"}]
YAML
run_sluice_bg "$WORK/r.log" -c "$WORK/r.yaml"
some() { [ "$(spooled_recs "$WORK/spool")" -ge 60 ]; }
wait_for 10 some || { cat "$WORK/r.log"; fail "nothing spooled"; }
sed -i 's/flush_interval: 100ms/flush_interval: 150ms/' "$WORK/r.yaml"	# a new instance
kill -HUP "$SLUICE_PID"
replaced() { grep -q "reload: .* 1 added, 1 removed" "$WORK/r.log"; }
wait_for 10 replaced || { cat "$WORK/r.log"; fail "the instance was not replaced"; }
at_reload=$(spooled_recs "$WORK/spool")
sleep 1
ch_run a
wait "$SLUICE_PID" || { cat "$WORK/r.log"; fail "sluice failed"; }
n=$(count)
groups=$(ch_query a "SELECT count() FROM (SELECT time, time_us, src_addr, count() AS k FROM packets GROUP BY time, time_us, src_addr HAVING k = 12)")
dups=$(ch_query a "SELECT count() FROM (SELECT time, time_us, src_addr, count() AS k FROM packets GROUP BY time, time_us, src_addr HAVING k > 12)")
grep -q "counters: c.clickhouse (clickhouse): in=[0-9]* out=[0-9]* dropped=0 " "$WORK/r.log" ||
	fail "rows dropped: $(grep 'counters: c.clickhouse' "$WORK/r.log")"
grep -q "spool .* in use" "$WORK/r.log" || echo "note: the new instance found the spool free at once"
[ "$n" = 480 ] && [ "$groups" = 40 ] && [ "$dups" = 0 ] ||
	{ grep -v 'INSERT of' "$WORK/r.log" | tail -20; fail "$n rows (expected 480), $groups of 40 rows 12 times, $dups more often"; }
[ "$(spooled_recs "$WORK/spool")" = 0 ] || fail "rows left in the spool"
pass "reload with $at_reload rows spooled: 480 of 480 rows, $dups twice"
