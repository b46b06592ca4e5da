#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The clickhouse output's disk spool (spool_dir) against a real
# clickhouse-server (Debian's 18.16) on loopback:
#  1. a paced replay (format: RowBinary) into a queue of 8 batches (at most
#     184 rows) that drops when full, more than that during the outage; the
#     server stopped (SIGTERM, by PID) mid-stream until more than 40 rows
#     are spooled (the event, not a time) and started again:
#     every row arrives, none twice (unless an INSERT failed after its body
#     was sent: PLUGINS.md, Duplicates), nothing dropped, rows went through the
#     spool (spooled = spool_sent > 0) and the spool is empty at the end;
#  2. kill -9 of sluice while the server is down and rows are spooled; the
#     server back and sluice started again on the same spool: the table holds
#     exactly the rows the segments held (read with spool_read.py, compared by
#     time and microseconds) plus the second run's (the first run spooled
#     JSONEachRow rows, the second sends RowBinary: each row goes in its own format);
#  3. a 64 KiB spool with the server down: in = spooled + spool_dropped,
#     dropped = spool_dropped, and the segments hold exactly `spooled` rows.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/clickhouse_lib.sh"
[ -f "$CAP" ] || skip "no captures in tests/data"

# counters LOG: the clickhouse instance's line of the counters printed at exit.
counters() { grep "counters: c.clickhouse (clickhouse)" "$1" || { cat "$1"; fail "no counters in $1"; }; }
# cval LINE NAME: one counter's value.
cval() { echo "$1" | sed -n "s/.* $2=\([0-9]*\).*/\1/p"; }
count() { ch_query a "SELECT count() FROM $1"; }

ch_start a "$CH_QUICK_STOP"
for t in outage killed full; do
	sed "s/EXISTS packets (/EXISTS $t (/" "$SQL/packets.sql" | clickhouse-client --port "$CH_TCP_a" -n
done

# ---- 1. the server away for 10 s under a paced stream ----
cat >"$WORK/o.yaml" <<YAML
stacks:
  c: [{plugin: replay, file: "$CAP", loop: 25, pace: original}, decode, {plugin: clickhouse,
      url: "http://127.0.0.1:$CH_HTTP_a", table: outage, batch_size: 20, flush_interval: 200ms,
      timeout: 10s, retry_min: 200ms, retry_max: 1s, spool_dir: "$WORK/spool-o", format: RowBinary,
      queue: 8, when_full: drop}]
YAML
run_sluice_bg "$WORK/o.log" -c "$WORK/o.yaml"
rows_o() { [ "$(count outage)" -gt 0 ]; }
wait_for 10 rows_o || { cat "$WORK/o.log"; fail "no rows before the outage"; }
sleep 2
before=$(count outage)
echo "$(date +%T.%N) stopping, $before rows" >&2
ch_stop a
echo "$(date +%T.%N) stopped" >&2
t0=$SECONDS
spooled_over_40() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	[ "$(cval "$(grep "counters: c.clickhouse (clickhouse)" "$WORK/o.log" | tail -1)" spooled)" -gt 40 ] 2>/dev/null
}
wait_for 60 spooled_over_40 || { tail -5 "$WORK/o.log"; fail "outage: no more than 40 rows spooled with the server away"; }
ch_run a
away=$((SECONDS - t0))
wait "$SLUICE_PID" || { cat "$WORK/o.log"; fail "sluice failed"; }
c=$(counters "$WORK/o.log")
after=$(count outage)
# every (time, time_us, src_addr) of the capture 25 times, no more
# every (time, time_us, src_addr) of the capture at least 25 times
groups=$(ch_query a "SELECT count() FROM (SELECT time, time_us, src_addr, count() AS n FROM outage GROUP BY time, time_us, src_addr HAVING n >= 25)")
dups=$(ch_query a "SELECT count() FROM (SELECT time, time_us, src_addr, count() AS n FROM outage GROUP BY time, time_us, src_addr HAVING n > 25)")
# Rows stored twice are allowed only as PLUGINS.md's "Duplicates" says: an
# INSERT that failed after its body went out (a timeout or a reply cut
# short by the stopping server, on a loaded machine) may have been stored
# and is sent again. A refused connection sent nothing.
maybe_twice=$(sed -n 's/.*INSERT of \([0-9]*\) rows failed: \(.*\)/\1 \2/p' "$WORK/o.log" |
	{ grep -v -E "Couldn.t connect|Failed to connect|Connection refused|Connection timed out" || true; } | awk '{n += $1} END {print n + 0}')
c=$(echo "$c" | tail -1)	# the line at exit (SIGUSR1 printed others)
echo "$c" | grep -q "in=1000 out=1000 dropped=0 errors=0 .*rows=1000 .*dropped_rows=0" || { grep -v "counters:" "$WORK/o.log" | tail -30; fail "outage: $c"; }
sp=$(cval "$c" spooled)
[ "$sp" -gt 40 ] && [ "$(cval "$c" spool_sent)" = "$sp" ] && [ "$(cval "$c" spool_dropped)" = 0 ] ||
	fail "outage: the spool did not take the rows: $c"
[ "$(cval "$c" spool_bytes)" = 0 ] && [ "$(spooled_recs "$WORK/spool-o")" = 0 ] || fail "outage: rows left in the spool: $c"
[ "$groups" = 40 ] && [ "$after" -ge 1000 ] && [ $((after - 1000)) -le "$maybe_twice" ] || {
	grep "INSERT of" "$WORK/o.log" | tail -20
	fail "outage: $after rows (expected 1000, or up to $maybe_twice more from failed INSERTs), $groups of 40 rows at least 25 times, $dups more often"
}
echo "outage: away ${away} s, $before rows before, $after after, spooled $sp, $dups rows stored twice (failed INSERTs that may have been stored: $maybe_twice rows)"

# ---- 2. kill -9 while rows are spooled, then a restart ----
ch_stop a
cat >"$WORK/k.yaml" <<YAML
stacks:
  c: [{plugin: replay, file: "$CAP", loop: 0, pace: original}, decode, {plugin: clickhouse,
      url: "http://127.0.0.1:$CH_HTTP_a", table: killed, batch_size: 10, flush_interval: 100ms,
      timeout: 1s, retry_min: 100ms, retry_max: 500ms, spool_dir: "$WORK/spool-k"}]
YAML
run_sluice_bg "$WORK/k.log" -c "$WORK/k.yaml"
some() { [ "$(spooled_recs "$WORK/spool-k")" -ge 100 ]; }
wait_for 20 some || { cat "$WORK/k.log"; fail "nothing spooled"; }
kill -KILL "$SLUICE_PID"
wait "$SLUICE_PID" 2>/dev/null || true
python3 "$E2E/spool_read.py" "$WORK/spool-k" >"$WORK/k.spooled" 2>"$WORK/k.stat"
kept=$(sed -n 's/records=\([0-9]*\) .*/\1/p' "$WORK/k.stat")
ch_run a
sed 's/loop: 0, pace: original/loop: 1/; s/table: killed,/table: killed, format: RowBinary,/' "$WORK/k.yaml" >"$WORK/k2.yaml"
"$SLUICE" -c "$WORK/k2.yaml" >"$WORK/k2.log" 2>&1 || { cat "$WORK/k2.log"; fail "sluice failed after the kill"; }
c=$(counters "$WORK/k2.log")
n=$(count killed)
[ "$n" = $((kept + 40)) ] || fail "after kill -9: $n rows, expected the $kept spooled + 40: $c"
[ "$(spooled_recs "$WORK/spool-k")" = 0 ] || fail "after kill -9: rows left in the spool"
# the table holds the spooled rows (time, microseconds) plus the capture once
ch_query a "SELECT toUnixTimestamp(time), time_us FROM killed FORMAT TSV" >"$WORK/k.tsv"
python3 - "$WORK/k.spooled" "$WORK/k.tsv" <<'PY' || fail "after kill -9: the rows are not the spooled ones"
import collections, re, sys
spooled = collections.Counter()
for line in open(sys.argv[1], "rb"):
    m = re.match(rb'F\{"time":(\d+),"time_us":(\d+),', line)    # F: the format byte of JSONEachRow
    if not m:
        sys.exit("a spooled row without time: %r" % line[:60])
    spooled[(int(m.group(1)), int(m.group(2)))] += 1
table = collections.Counter(tuple(map(int, l.split("\t"))) for l in open(sys.argv[2]))
extra = table - spooled
if sum(extra.values()) != 40 or len(extra) != 40 or spooled - table:
    sys.exit("table minus spool: %d rows (expected the capture's 40 distinct ones), spool minus table: %d"
             % (sum(extra.values()), sum((spooled - table).values())))
PY
echo "kill -9: $kept rows in the spool ($(cat "$WORK/k.stat")), $n in the table after the restart"

# ---- 3. a full spool counts its drops ----
ch_stop a
cat >"$WORK/f.yaml" <<YAML
stacks:
  c: [{plugin: replay, file: "$CAP", loop: 50}, decode, {plugin: clickhouse,
      url: "http://127.0.0.1:$CH_HTTP_a", table: full, batch_size: 100, timeout: 1s,
      spool_dir: "$WORK/spool-f", spool_max_size: 64KiB}]
YAML
"$SLUICE" -c "$WORK/f.yaml" >"$WORK/f.log" 2>&1 || { cat "$WORK/f.log"; fail "sluice failed"; }
c=$(counters "$WORK/f.log")
sp=$(cval "$c" spooled)
sd=$(cval "$c" spool_dropped)
on_disk=$(spooled_recs "$WORK/spool-f")
echo "$c" | grep -q "in=2000 out=$sp dropped=$sd " || fail "full: $c"
[ $((sp + sd)) = 2000 ] && [ "$sd" -gt 0 ] && [ "$on_disk" = "$sp" ] && [ "$(cval "$c" dropped_rows)" = 0 ] ||
	fail "full: spooled $sp + dropped $sd != 2000 or $on_disk rows on disk: $c"
grep -q "spool $WORK/spool-f: full (max_size): dropping records" "$WORK/f.log" || fail "full: not logged"
pass "outage ${away} s: $after rows for 1000, $dups twice; kill -9: $kept spooled rows delivered after restart; full 64 KiB spool: $sp spooled, $sd dropped, $on_disk on disk"
