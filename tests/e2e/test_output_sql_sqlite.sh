#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sql output, driver sqlite, with conf/sql/*-sqlite.sql, read back with sqlite3:
#  1. replay -> decode -> sql: every row of the packets table is the record
#     the json output of the same replay wrote, column by column
#     (sql_compare.py); so are the flow filter's records in the flows table;
#     the file is in WAL mode (PRAGMA journal_mode), or in the journal_mode set;
#  2. another sqlite3 holding the write lock for 2 s: the batches wait
#     busy_timeout, fail, are retried, and every row arrives;
#  3. a missing file, table or column: the daemon does not start and names it;
#  4. the disk full (a small tmpfs, root only): failed batches counted and
#     retried until there is room again, every row arrives.
. "$(dirname "$0")/lib.sh"
need_cmd sqlite3 python3
[ -e "$SLUICE_PLUGIN_PATH/sql.so" ] || skip "sql output not built"
E2E=$(dirname "$0")
CAP="$SRCDIR/tests/data/nflog-mixed.pcap"
[ -f "$CAP" ] || skip "no captures in tests/data"

counters() { grep "counters: $2 (sql)" "$1" || { cat "$1"; fail "no counters for $2"; }; }
# rows DB SCHEMA: the default table as sql_compare.py reads it
rows() { sqlite3 -batch -noheader -separator $'\t' -nullvalue '\N' "$1" "SELECT $(python3 "$E2E/sql_compare.py" columns "$2") FROM $2"; }
mkdb() { sqlite3 "$1" <"$SRCDIR/conf/sql/packets-sqlite.sql" && sqlite3 "$1" <"$SRCDIR/conf/sql/flows-sqlite.sql"; }

# ---- 1. values ----
mkdb "$WORK/v.db"
mkdb "$WORK/d.db"
cat >"$WORK/v.yaml" <<YAML
instances:
  cap: {plugin: replay, file: "$CAP"}
  dec: {plugin: decode, ifnames: false}
  fl: {plugin: flow}
stacks:
  j: [cap, dec, json, {plugin: file, file: "$WORK/v.json"}]
  p: [cap, dec, {plugin: sql, driver: sqlite, path: "$WORK/v.db", batch_size: 7}]
  fj: [cap, dec, fl, json, {plugin: file, file: "$WORK/f.json"}]
  f: [cap, dec, fl, {plugin: sql, driver: sqlite, path: "$WORK/v.db", schema: flows, batch_size: 5}]
  d: [cap, dec, {plugin: sql, driver: sqlite, path: "$WORK/d.db", journal_mode: delete, synchronous: full}]
YAML
"$SLUICE" -c "$WORK/v.yaml" >"$WORK/v.log" 2>&1 || { cat "$WORK/v.log"; fail "sluice failed"; }
counters "$WORK/v.log" p.sql | grep -q "in=40 out=40 dropped=0 errors=0 rows=40 batches=6 failed=0 retries=0 reconnects=0 dropped_rows=0" ||
	fail "packets counters: $(counters "$WORK/v.log" p.sql)"
rows "$WORK/v.db" packets >"$WORK/v.tsv"
packets=$(python3 "$E2E/sql_compare.py" packets "$WORK/v.json" "$WORK/v.tsv") || fail "packet rows differ from the json output"
echo "packets: $packets"
nflows=$(wc -l <"$WORK/f.json")
counters "$WORK/v.log" f.sql | grep -q "in=$nflows out=$nflows dropped=0 errors=0 rows=$nflows " ||
	fail "flows counters: $(counters "$WORK/v.log" f.sql)"
rows "$WORK/v.db" flows >"$WORK/f.tsv"
flows=$(python3 "$E2E/sql_compare.py" flows "$WORK/f.json" "$WORK/f.tsv") || fail "flow rows differ from the json output"
echo "flows: $flows"
[ "$(sqlite3 "$WORK/v.db" "PRAGMA journal_mode")" = wal ] || fail "v.db is not in WAL mode"
[ "$(sqlite3 "$WORK/d.db" "PRAGMA journal_mode")" = delete ] || fail "journal_mode: delete not applied"
rows "$WORK/d.db" packets >"$WORK/d.tsv"
python3 "$E2E/sql_compare.py" packets "$WORK/v.json" "$WORK/d.tsv" >/dev/null || fail "journal_mode delete: rows differ"

# a hostile prefix: bound as it is, but a byte that is not UTF-8 is U+FFFD
python3 "$E2E/nflog_prefix.py" "$CAP" "$WORK/hostile.pcap" 6109620a630d645c65ff66c3a9
sqlite3 "$WORK/v.db" "CREATE TABLE hostile (p TEXT)"
cat >"$WORK/h.yaml" <<YAML
stacks:
  h: [{plugin: replay, file: "$WORK/hostile.pcap"}, decode, {plugin: sql, driver: sqlite,
      path: "$WORK/v.db", table: hostile, columns: {p: prefix}}]
YAML
"$SLUICE" -c "$WORK/h.yaml" >"$WORK/h.log" 2>&1 || { cat "$WORK/h.log"; fail "hostile prefix: sluice failed"; }
got=$(sqlite3 "$WORK/v.db" "SELECT lower(hex(p)), count(*) FROM hostile GROUP BY p")
[ "$got" = "6109620a630d645c65efbfbd66c3a9|40" ] || fail "hostile prefix stored as $got"

# ---- 2. another writer holds the lock for 2 s ----
mkdb "$WORK/l.db"
sqlite3 "$WORK/l.db" "PRAGMA journal_mode = wal" >/dev/null
# BEGIN IMMEDIATE takes the write lock; the SELECT says it is held
: >"$WORK/lock.out"
{ echo "BEGIN IMMEDIATE;"; echo "SELECT 'locked';"; sleep 2; echo "COMMIT;"; } | sqlite3 "$WORK/l.db" >"$WORK/lock.out" &
locker=$!
at_exit "kill $locker"
wait_for 5 grep -q locked "$WORK/lock.out" || fail "the other sqlite3 did not take the lock"
t0=$(date +%s%N)
cat >"$WORK/l.yaml" <<YAML
stacks:
  l: [{plugin: replay, file: "$CAP"}, decode, {plugin: sql, driver: sqlite, path: "$WORK/l.db",
      batch_size: 10, busy_timeout: 300ms, retry_min: 100ms, retry_max: 400ms}]
YAML
"$SLUICE" -c "$WORK/l.yaml" >"$WORK/l.log" 2>&1 || { cat "$WORK/l.log"; fail "sluice failed"; }
ms=$((($(date +%s%N) - t0) / 1000000))
wait "$locker"
c=$(counters "$WORK/l.log" l.sql)
echo "$c" | grep -Eq "in=40 out=40 dropped=0 errors=0 rows=40 batches=4 failed=[1-9][0-9]* retries=[1-9][0-9]* reconnects=0 dropped_rows=0" ||
	fail "locked: $c"
grep -q "cannot begin a transaction: database is locked" "$WORK/l.log" || { cat "$WORK/l.log"; fail "the lock is not logged"; }
[ "$(sqlite3 "$WORK/l.db" "SELECT count(*) FROM packets")" = 40 ] || fail "locked: rows missing"
[ "$ms" -ge 1500 ] || fail "locked: done after $ms ms, before the lock was released"
lockc=$(echo "$c" | grep -o 'failed=[0-9]* retries=[0-9]*')

# ---- 3. a missing file, table, column ----
bad() {	# bad NAME PATH TABLE-SQL COLUMNS-YAML EXPECTED
	[ -z "$3" ] || sqlite3 "$2" "$3"
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  b: [{plugin: replay, file: "$CAP"}, decode, {plugin: sql, driver: sqlite, path: "$2", table: $1 $4}]
YAML
	"$SLUICE" -t -c "$WORK/$1.yaml" >/dev/null 2>&1 || fail "$1: sluice -t failed (it must not open the file)"
	"$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 && fail "$1: sluice started"
	grep -q "$5" "$WORK/$1.log" || { cat "$WORK/$1.log"; fail "$1: no '$5'"; }
}
bad nofile "$WORK/none.db" "" "" "cannot open $WORK/none.db: unable to open database file"
bad nosuch "$WORK/b.db" "CREATE TABLE other (a)" "" "table 'nosuch' does not exist in $WORK/b.db"
bad nocol "$WORK/b.db" "CREATE TABLE nocol (time TEXT, src_addr TEXT)" ", columns: {time: timestamp, dport: dport}" \
	"table 'nocol' has no column 'dport'"
bad wrongtype "$WORK/b.db" "CREATE TABLE wrongtype (sport TEXT)" ", columns: {sport: sport}" \
	"column 'sport' of table 'wrongtype' is TEXT; its field needs INTEGER"
# a malformed option is a configuration error at its place
cat >"$WORK/o.yaml" <<YAML
stacks:
  o: [{plugin: replay, file: "$CAP"}, decode, {plugin: sql, driver: sqlite, path: "$WORK/v.db",
      journal_mode: fast}]
YAML
"$SLUICE" -t -c "$WORK/o.yaml" >"$WORK/o.log" 2>&1 && fail "journal_mode: fast accepted"
grep -q "o.yaml:[0-9]*:[0-9]*: .*journal_mode.*expected wal, delete, truncate, persist, memory or off" "$WORK/o.log" ||
	fail "journal_mode: $(cat "$WORK/o.log")"

# ---- 4. the disk full ----
full="not run (needs root)"
if [ "$(id -u)" = 0 ] && mkdir -p "$WORK/fs" && mount -t tmpfs -o size=1m tmpfs "$WORK/fs" 2>/dev/null; then
	at_exit "umount -l $WORK/fs"
	mkdb "$WORK/fs/f.db"
	sqlite3 "$WORK/fs/f.db" "PRAGMA journal_mode = wal" >/dev/null
	# leave a few KiB: the first batches fit, then the WAL cannot grow
	avail=$(($(stat -f -c '%a' "$WORK/fs") * $(stat -f -c '%S' "$WORK/fs") / 1024))
	dd if=/dev/zero of="$WORK/fs/filler" bs=1k count=$((avail - 96)) 2>/dev/null
	cat >"$WORK/full.yaml" <<YAML
stacks:
  f: [{plugin: replay, file: "$CAP", loop: 25}, decode, {plugin: sql, driver: sqlite,
      path: "$WORK/fs/f.db", batch_size: 50, retry_min: 100ms, retry_max: 300ms, max_retries: 100}]
YAML
	run_sluice_bg "$WORK/full.log" -c "$WORK/full.yaml"
	wait_for 10 grep -q "database or disk is full" "$WORK/full.log" || { cat "$WORK/full.log"; fail "the disk never filled"; }
	sleep 1
	rm -f "$WORK/fs/filler"
	wait "$SLUICE_PID" || { cat "$WORK/full.log"; fail "sluice failed"; }
	c=$(counters "$WORK/full.log" f.sql)
	echo "$c" | grep -Eq "in=1000 out=1000 dropped=0 errors=0 rows=1000 batches=[0-9]* failed=[1-9][0-9]* retries=[1-9][0-9]* .*dropped_rows=0" ||
		fail "disk full: $c"
	[ "$(sqlite3 "$WORK/fs/f.db" "SELECT count(*) FROM packets")" = 1000 ] || fail "disk full: rows missing"
	full=$(echo "$c" | grep -o 'failed=[0-9]* retries=[0-9]*')
fi
pass "packets 40, flows $nflows equal the json; locked 2 s: $lockc, $ms ms; disk full: $full"
