#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live packets into PostgreSQL and SQLite: nftables in a namespace logs UDP,
# ICMP and TCP over IPv4 and IPv6 to an NFLOG group; nflog -> decode -> sql
# (conf/sql/packets-postgresql.sql on a private PostgreSQL in the same
# namespace, and conf/sql/packets-sqlite.sql) next to nflog -> decode ->
# json.  Every packet the nft counters counted is a row in both databases,
# and the rows are the json output's records, column by column; so are
# those of a PostgreSQL table made before the optional rule columns
# (nflog's, issue 22), which the default columns then leave out.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 psql sqlite3
. "$(dirname "$0")/pg_lib.sh"
pg_have || skip "needs Debian's postgresql (initdb, pg_ctl) and the postgres user"
[ -e "$SLUICE_PLUGIN_PATH/sql.so" ] || skip "sql output not built"
E2E=$(dirname "$0")
export PGTZ=UTC
G=7
netns_pair slsq 99
ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_e2e {
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.99.0.1 meta l4proto { icmp, tcp, udp } counter log group $G prefix "sluice-test "
		ip6 saddr fd99::1 meta l4proto { tcp, udp } counter log group $G prefix "sluice-test "
		ip6 saddr fd99::1 icmpv6 type echo-request counter log group $G prefix "sluice-test "
	}
}
NFT
export PG_NETNS=$B	# pg_lib.sh runs the server and psql in B
pg_start "$WORK/pg" || fail "cannot start PostgreSQL in the namespace"
pg_sql -f "$SRCDIR/conf/sql/packets-postgresql.sql"
grep -v $'^\trule_' "$SRCDIR/conf/sql/packets-postgresql.sql" |
	sed $'s/^\tmark\t\tbigint,$/\tmark\t\tbigint/; s/TABLE IF NOT EXISTS packets (/TABLE IF NOT EXISTS packets_old (/' \
	>"$WORK/old.sql"
pg_sql -f "$WORK/old.sql"
[ "$(pg_sql -c "SELECT count(*) FROM information_schema.columns WHERE table_name = 'packets_old' AND column_name LIKE 'rule_%'")" = 0 ] ||
	fail "packets_old has rule columns"
sqlite3 "$WORK/p.db" <"$SRCDIR/conf/sql/packets-sqlite.sql"
cat >"$WORK/live.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  j: [fw, decode, json, {plugin: file, file: "$WORK/live.json", flush_interval: 50ms}]
  p: [fw, decode, {plugin: sql, driver: postgresql, dsn: "$PG_DSN", flush_interval: 100ms}]
  po: [fw, decode, {plugin: sql, driver: postgresql, dsn: "$PG_DSN", table: packets_old, flush_interval: 100ms}]
  s: [fw, decode, {plugin: sql, driver: sqlite, path: "$WORK/p.db", flush_interval: 100ms}]
YAML
ip netns exec "$B" "$SLUICE" -c "$WORK/live.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }
# 5 UDP + 2 ICMP echo + 1 TCP SYN (to a closed port) per IP version
ip netns exec "$A" python3 "$E2E/send_mixed.py" 10.99.0.2 fd99::2 sluice-e2e
sent=$(ip netns exec "$B" nft list table inet sluice_e2e | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
both() {
	[ "$(pg_sql -c "SELECT count(*) FROM packets")" -ge "$sent" ] &&
		[ "$(pg_sql -c "SELECT count(*) FROM packets_old")" -ge "$sent" ] &&
		[ "$(sqlite3 "$WORK/p.db" "SELECT count(*) FROM packets")" -ge "$sent" ]
}
wait_for 10 both || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || true
cols=$(python3 "$E2E/sql_compare.py" columns packets)
pg_sql -P null='\N' -c "SELECT $cols FROM packets" >"$WORK/pg.tsv"
pg_sql -P null='\N' -c "SELECT $cols FROM packets_old" >"$WORK/pgold.tsv"
sqlite3 -batch -noheader -separator $'\t' -nullvalue '\N' "$WORK/p.db" "SELECT $cols FROM packets" >"$WORK/lite.tsv"
np=$(wc -l <"$WORK/pg.tsv") ns=$(wc -l <"$WORK/lite.tsv")
[ "$sent" -ge 16 ] && [ "$np" = "$sent" ] && [ "$ns" = "$sent" ] ||
	fail "PostgreSQL $np rows, SQLite $ns rows, nft counted $sent packets (16 sent)"
python3 "$E2E/sql_compare.py" packets "$WORK/live.json" "$WORK/pg.tsv" || fail "PostgreSQL rows differ from the json output"
python3 "$E2E/sql_compare.py" packets "$WORK/live.json" "$WORK/lite.tsv" || fail "SQLite rows differ from the json output"
python3 "$E2E/sql_compare.py" packets "$WORK/live.json" "$WORK/pgold.tsv" ||
	fail "the rows of PostgreSQL's table without the rule columns differ from the json output"
pass "$sent packets counted by nft: $np rows in PostgreSQL, $ns in SQLite, equal to the json output"
