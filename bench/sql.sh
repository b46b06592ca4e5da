#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Records per CPU second into PostgreSQL and SQLite (issue 13 §4): sluice's
# sql output against ulogd2's PGSQL output, in the same run.
#
#   sudo bench/sql.sh [-n PACKETS] [-p PPS] [-N RECORDS] [-r RUNS] [-f SECS] [-b BUILDDIR] [-k]
#
# One private PostgreSQL (tests/e2e/pg_lib.sh: fsync, full_page_writes and
# synchronous_commit off; autovacuum off here so that no worker's CPU lands
# in a run), database ulog2 with ulogd2's own schema
# (/usr/share/doc/ulogd2/pgsql-ulogd2.sql.gz: ulog2 + udp/tcp/... + mac,
# with their indexes; INSERT_PACKET_FULL), database ulog2flat (below) and
# database sluice with conf/sql/packets-postgresql.sql (no index) and an
# indexed copy of its table (below).  Every client connects over the server's
# Unix socket (it reaches across network namespaces), all alike.
#
#   ulogd2-live   NFLOG,BASE,IFINDEX,IP2STR,HWHDR,PGSQL (Debian's ulogd.conf
#                 stack): one `SELECT INSERT_PACKET_FULL(...)` per packet
#   ulogd2flat-live  the same stack into database ulog2flat: ulogd2's flat
#                 schema (pgsql-ulogd2-flat.sql.gz) with its 11 secondary
#                 indexes dropped, procedure INSERT: one plain INSERT per
#                 packet into a table with only its primary key, ulogd2's
#                 cheapest way into PostgreSQL
#   sluice-live   nflog -> decode -> sql (postgresql, COPY in batches)
#   sluiceflat-live  nflog -> decode -> where udp -> sql into ulogd2flat-live's
#                 table with conf/sql-ulogd2.yaml's columns map: the same table
#   ulogd2-full, sluice-full: the first and the third at the generator's full
#                 rate for SECS (1; 0: none), where ulogd2 cannot keep up: its loss
#   replay-pg     replay -> decode -> sql (postgresql), RECORDS of gen_nflog -m mix
#   replayidx-pg  the same into a copy of the table with the six indexes
#                 ulogd2's flat schema has on the columns both store
#                 (family, addresses, source MAC, ports)
#   replay-sqlite replay -> decode -> sql (sqlite, conf/sql/packets-sqlite.sql, in WORKDIR)
#
# Live rows: bench/run.sh's rig (two namespaces, a veth pair, `udp dport
# 9999 counter log group 42 drop` in B), gen/udpgen on CPU 0 sending PACKETS
# 64-byte datagrams at PPS (paced so that ulogd2 keeps up: it waits for
# each INSERT's answer), the logger in B on CPU 1.  Each run: the tables
# truncated and a CHECKPOINT, the logger started, traffic, then wait until
# neither the logger nor its backends used CPU for 1.5 s; rows are
# count(*) of the table (ulog2 for ulogd2), loss is the nft counter minus
# rows.  Logger CPU: the growth of every thread's schedstat from before the
# traffic to then; backend CPU: the same over the server's client backends
# of that database (their process titles); other server CPU: the
# postmaster and its auxiliary processes (WAL writer, checkpointer, ...).
# Replay rows: sluice's rusage (all threads, start to exit; pinned to CPU
# 1); backends are born and gone within the run, so theirs is the growth of
# the postmaster's cutime + cstime (children it reaped), read when no
# client backend is left.  RUNS (3) runs of each, interleaved; medians.
#
# Without ulogd2-pgsql (apt-get install -y ulogd2 ulogd2-pgsql postgresql)
# the ulogd2 row is not measured; without root the live rows are not; a
# build without the sql output (SLUICE_WITH_PGSQL/SQLITE off) loses those
# rows.  Results: a markdown table on stdout and in docs/BENCHMARKS.md
# between <!-- sql-tables:begin/end --> (DOC=path another copy, NODOC=1 none).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILDDIR:-${BUILD:-$TOP/build}}
N=40000 PPS=5000 NREPLAY=300000 RUNS=3 FULL=1 KEEP=0
while getopts "n:p:N:r:f:b:k" o; do
	case $o in
	f) FULL=$OPTARG ;;
	n) N=$OPTARG ;;
	p) PPS=$OPTARG ;;
	N) NREPLAY=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	k) KEEP=1 ;;
	*) sed -n '7p' "$0" >&2; exit 64 ;;
	esac
done
SLUICE=$BUILD/core/sluice
export SLUICE_PLUGIN_PATH=$BUILD/plugins
GROUP=42 PORT=9999 GEN_CPU=0 LOG_CPU=1
SETTLE=1.3 # the kernel sends a partly filled NFLOG batch after 1 s
QUIET_NS=3000000 QUIET_SECS=1.5 # "idle": under 3 ms of CPU in 1.5 s
TF=${SLUICE_TEST_TIME_FACTOR:-1}

die() { echo "sql.sh: $*" >&2; exit 1; }
note() { echo "sql.sh: $*" >&2; }
for c in taskset python3 psql zcat ${CC:-cc}; do command -v "$c" >/dev/null || die "needs $c"; done
[ -x "$SLUICE" ] || die "no daemon at $SLUICE (build first, or -b BUILDDIR)"
# shellcheck source=tests/e2e/pg_lib.sh
. "$TOP/tests/e2e/pg_lib.sh"
pg_have || die "needs Debian's postgresql (initdb, pg_ctl, psql, the postgres user)"

# What can be measured here; a row that cannot says why in the table.
WHY_LIVE='' WHY_ULOGD='' WHY_PG='' WHY_SQLITE=''
ULOGD_SCHEMA=/usr/share/doc/ulogd2/pgsql-ulogd2.sql.gz
ULOGD_FLAT=/usr/share/doc/ulogd2/pgsql-ulogd2-flat.sql.gz
ULOGD_LIB=$(dirname "$(ls /usr/lib/*/ulogd/ulogd_output_PGSQL.so 2>/dev/null | head -1)" 2>/dev/null)
if [ "$(id -u)" != 0 ]; then
	WHY_LIVE="not root"
else
	for c in ip nft; do command -v $c >/dev/null || WHY_LIVE="needs $c"; done
	[ -x "$BUILD/bench/udpgen" ] || WHY_LIVE="no $BUILD/bench/udpgen"
fi
if ! command -v ulogd >/dev/null || [ -z "$ULOGD_LIB" ] || [ ! -r "$ULOGD_SCHEMA" ] || [ ! -r "$ULOGD_FLAT" ]; then
	WHY_ULOGD="ulogd2-pgsql not installed"
fi
[ -n "$WHY_LIVE" ] && WHY_ULOGD=${WHY_ULOGD:-$WHY_LIVE}
if [ ! -e "$SLUICE_PLUGIN_PATH/sql.so" ]; then
	WHY_PG="the sql output is not in this build" WHY_SQLITE=$WHY_PG
else
	[ -r "$TOP/conf/sql/packets-postgresql.sql" ] || WHY_PG="no conf/sql/packets-postgresql.sql"
	[ -r "$TOP/conf/sql/packets-sqlite.sql" ] || WHY_SQLITE="no conf/sql/packets-sqlite.sql"
	command -v sqlite3 >/dev/null || WHY_SQLITE="needs sqlite3"
fi

W=$(mktemp -d /tmp/sluice-bench-sql.XXXXXX)
NA=sqbA$$ NB=sqbB$$
LOGGER_PID=
cleanup() {
	[ -n "$LOGGER_PID" ] && kill -KILL "$LOGGER_PID" 2>/dev/null
	pg_stop fast
	if [ -z "$WHY_LIVE" ]; then
		ip netns del $NA 2>/dev/null
		ip netns del $NB 2>/dev/null
	fi
	if [ "$KEEP" = 1 ]; then echo "work dir kept: $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

# ---- the server and its three databases ----
pg_start "$W/pg" -c autovacuum=off || die "PostgreSQL did not start"
SOCK="host=$PG_DIR port=$PG_PORT user=postgres"
q() { # q DB ARGS...: psql -At on database DB, stop at the first error
	local db=$1
	shift
	psql "$SOCK dbname=$db" -X -q -At -v ON_ERROR_STOP=1 "$@"
}
q postgres -c "CREATE DATABASE ulog2" -c "CREATE DATABASE ulog2flat" -c "CREATE DATABASE sluice" ||
	die "cannot create the databases"
if [ -z "$WHY_ULOGD" ]; then
	zcat "$ULOGD_SCHEMA" | q ulog2 >/dev/null 2>"$W/ulogd-schema.err" ||
		{ cat "$W/ulogd-schema.err" >&2; die "ulogd2's schema did not load"; }
	zcat "$ULOGD_FLAT" | q ulog2flat >/dev/null 2>"$W/ulogd-schema.err" ||
		{ cat "$W/ulogd-schema.err" >&2; die "ulogd2's flat schema did not load"; }
	q ulog2flat -c "DO \$\$ DECLARE i text; BEGIN
		FOR i IN SELECT indexname FROM pg_indexes WHERE tablename = 'ulog2' AND indexname <> 'ulog2_pkey' LOOP
			EXECUTE 'DROP INDEX ' || quote_ident(i);
		END LOOP; END \$\$" || die "cannot drop the flat schema's indexes"
fi
SL_TABLE=
if [ -z "$WHY_PG" ]; then
	q sluice -f "$TOP/conf/sql/packets-postgresql.sql" >/dev/null || die "conf/sql/packets-postgresql.sql did not load"
	# the table the schema file creates
	SL_TABLE=$(sed -n 's/^CREATE TABLE \(IF NOT EXISTS \)\{0,1\}\([A-Za-z_0-9]*\).*/\2/Ip' \
		"$TOP/conf/sql/packets-postgresql.sql" | head -1)
	[ -n "$SL_TABLE" ] || die "no CREATE TABLE in conf/sql/packets-postgresql.sql"
	q sluice -c "CREATE TABLE ${SL_TABLE}_idx (LIKE $SL_TABLE)" \
		-c "CREATE INDEX ON ${SL_TABLE}_idx (ip_version)" -c "CREATE INDEX ON ${SL_TABLE}_idx (src_addr)" \
		-c "CREATE INDEX ON ${SL_TABLE}_idx (dst_addr)" -c "CREATE INDEX ON ${SL_TABLE}_idx (mac_src)" \
		-c "CREATE INDEX ON ${SL_TABLE}_idx (sport)" -c "CREATE INDEX ON ${SL_TABLE}_idx (dport)" ||
		die "cannot create the indexed copy of $SL_TABLE"
fi

# ---- CPU counters ----
TCK=$(getconf CLK_TCK)
# tasks_ns PID: CPU ns of the process's live threads (schedstat's run time)
tasks_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ n += $1 } END { printf "%.0f", n }'
}
# pg_children WHICH: the postmaster's children: "+" the client backends
# (title "postgres: USER DB ..."), "-" the others, DB the client backends
# of that database.
pg_children() {
	local c t
	for c in $(ps -o pid= --ppid "$PG_PID"); do
		t=$(tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null)
		case $1 in
		+) [[ $t == "postgres: postgres "* ]] && echo "$c" ;;
		-) [[ $t == "postgres: postgres "* ]] || echo "$c" ;;
		*) [[ $t == "postgres: postgres $1 "* ]] && echo "$c" ;;
		esac
	done
	true
}
group_ns() { # group_ns PID...: their CPU ns together
	local p n=0
	for p in "$@"; do n=$((n + $(tasks_ns "$p"))); done
	echo $n
}
# shellcheck disable=SC2046 # a list of PIDs
backends_ns() { group_ns $(pg_children "$1"); }
# shellcheck disable=SC2046
aux_ns() { group_ns "$PG_PID" $(pg_children -); }
# reaped_s: CPU seconds of the postmaster's children it has waited for
reaped_s() { awk -v t="$TCK" '{ sub(/.*\) /, ""); printf "%.2f", ($14 + $15) / t }' /proc/"$PG_PID"/stat; }
# no_backends: wait (up to 10 s) until no client backend is left, so that
# its CPU is in the postmaster's cutime
no_backends() {
	local i
	for i in $(seq $((100 * TF))); do
		[ -z "$(pg_children +)" ] && return 0
		sleep 0.1
	done
	note "client backends still there after $((10 * TF)) s"
}
ns_s() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", (b - a) / 1e9 }'; }

# reset KIND: empty the tables a run writes, flush them out (the checkpoint's
# work is not the next run's)
reset() {
	case $1 in
	ulogd2-*) q ulog2 -c "TRUNCATE ulog2, udp, tcp, icmp, icmpv6, sctp, hwhdr, mac, nufw" -c CHECKPOINT ;;
	ulogd2flat-* | sluiceflat-*) q ulog2flat -c "TRUNCATE ulog2 CASCADE" -c CHECKPOINT 2>/dev/null ;;
	sluice-* | replay-pg) q sluice -c "TRUNCATE $SL_TABLE" -c CHECKPOINT ;;
	replayidx-pg) q sluice -c "TRUNCATE ${SL_TABLE}_idx" -c CHECKPOINT ;;
	replay-sqlite)
		rm -f "$W"/out.db*
		sqlite3 "$W/out.db" <"$TOP/conf/sql/packets-sqlite.sql" ;;
	esac
}

RESULTS=$W/results.tsv
: >"$RESULTS"
# row KIND RUN SENT LOGGED ROWS LOGGER_S BACKEND_S AUX_S WALL_S SENT_PPS DETAIL
row() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RESULTS"
	printf '  %-14s run %s: sent %s logged %s rows %s  logger %s s  backend %s s  other server %s s  wall %s s  (%s pps) %s\n' \
		"$@" >&2
}

# lost_detail KIND LOG: where a live run's logger says it lost packets:
# sluice's counters (nflog: ENOBUFS and packets missing from the kernel's
# sequence numbers; sql: rows dropped, queue full), ulogd2's ENOBUFS lines
lost_detail() {
	local c
	case $1 in
	sluice*)
		c=$(grep '^sluice: counters: ' "$2" | tail -n 20)
		printf 'enobufs=%s,seq_lost=%s,sql_dropped_rows=%s,sql_queue_dropped=%s' \
			"$(sed -n 's/.* (nflog):.* enobufs=\([0-9]*\).*/\1/p' <<<"$c" | tail -1)" \
			"$(sed -n 's/.* (nflog):.* seq_lost=\([0-9]*\).*/\1/p' <<<"$c" | tail -1)" \
			"$(sed -n 's/.* (sql):.* dropped_rows=\([0-9]*\).*/\1/p' <<<"$c" | tail -1)" \
			"$(sed -n 's/.* (sql):.* queue_dropped=\([0-9]*\).*/\1/p' <<<"$c" | tail -1)" ;;
	ulogd2*) printf 'enobufs_lines=%s' "$(grep -c 'losing events\|Maximum buffer size' "$2")" ;;
	esac
}

# ---- live ----
if [ -z "$WHY_LIVE" ]; then
	G=$BUILD/bench
	ip netns add $NA && ip netns add $NB || die "cannot create namespaces"
	ip link add va netns $NA type veth peer name vb netns $NB || die "cannot create veth"
	ip -n $NA addr add 10.198.0.1/24 dev va
	ip -n $NB addr add 10.198.0.2/24 dev vb
	for n in $NA $NB; do ip -n $n link set lo up; done
	ip -n $NA link set va up
	ip -n $NB link set vb up
	ip netns exec $NB nft add table inet sqbench
	ip netns exec $NB nft add chain inet sqbench input '{ type filter hook input priority 0; policy accept; }'
	ip netns exec $NB nft add rule inet sqbench input udp dport $PORT counter log group $GROUP drop
	ip netns exec $NA ping -c 1 -W 2 10.198.0.2 >/dev/null || die "veth pair does not pass traffic"
fi
nft_count() {
	ip netns exec $NB nft list chain inet sqbench input |
		awk '{ for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }'
}

# ulogd_conf DB TABLE PROCEDURE: ulogd2 as Debian's ulogd.conf has it (the
# pgsql1 stack and section), the socket buffer as bench/run.sh gives every
# logger (maxsize must exceed size, or ulogd 2.0.8 keeps the kernel default)
ulogd_conf() {
	local p
	echo "[global]"
	echo "logfile=\"$W/ulogd.log\""
	echo "loglevel=5"
	for p in inppkt_NFLOG raw2packet_BASE filter_IFINDEX filter_IP2STR filter_HWHDR output_PGSQL; do
		echo "plugin=\"$ULOGD_LIB/ulogd_$p.so\""
	done
	cat <<EOF
stack=log1:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,mac2str1:HWHDR,pgsql1:PGSQL
[log1]
group=$GROUP
netlink_socket_buffer_size=8388608
netlink_socket_buffer_maxsize=16777216
[pgsql1]
db="$1"
host="$PG_DIR"
port=$PG_PORT
user="postgres"
pass=""
table="$2"
procedure="$3"
EOF
}

sql_stack() { # sql_stack pg|sqlite [TABLE]: the sql output's inline instance
	if [ "$1" = pg ]; then
		echo "{ plugin: sql, driver: postgresql, dsn: \"$SOCK dbname=sluice\", table: ${2:-$SL_TABLE}${SQL_EXTRA:+, $SQL_EXTRA} }"
	else
		echo "{ plugin: sql, driver: sqlite, path: $W/out.db, table: $SL_TABLE_LITE }"
	fi
}
SL_TABLE_LITE=
[ -z "$WHY_SQLITE" ] && SL_TABLE_LITE=$(sed -n 's/^CREATE TABLE \(IF NOT EXISTS \)\{0,1\}\([A-Za-z_0-9]*\).*/\2/Ip' \
	"$TOP/conf/sql/packets-sqlite.sql" | head -1)

# sluice_flat_conf: sluice into ulogd2's flat ulog2 table, the udp stack of
# conf/sql-ulogd2.yaml (the traffic is UDP alone)
sluice_flat_conf() {
	cat <<EOF
instances:
  fw: { plugin: nflog, group: $GROUP }
stacks:
  udp:
    - fw
    - decode
    - { plugin: where, expr: 'ip_proto == udp' }
    - plugin: sql
      driver: postgresql
      dsn: "$SOCK dbname=ulog2flat"
      table: ulog2
      columns: {oob_time_sec: "timestamp:sec", oob_time_usec: "timestamp:usec", oob_prefix: prefix,
                oob_mark: mark, oob_in: ifname_in, oob_out: ifname_out, oob_hook: hook,
                oob_family: family, ip_saddr_str: src_addr, ip_daddr_str: dst_addr,
                ip_protocol: ip_proto, ip_tos: ip_tos, ip_ttl: ip_ttl, ip_totlen: ip_len,
                ip_id: ip_id, mac_saddr_str: mac_src, mac_daddr_str: mac_dst,
                udp_sport: sport, udp_dport: dport, udp_len: udp_len}
EOF
}

# quiet PID DB: wait until the logger and its backends have used under
# QUIET_NS of CPU over QUIET_SECS (at most 60 s)
quiet() {
	local prev cur i
	prev=$(($(tasks_ns "$1") + $(backends_ns "$2")))
	for i in $(seq $((40 * TF))); do
		sleep $QUIET_SECS
		cur=$(($(tasks_ns "$1") + $(backends_ns "$2")))
		[ $((cur - prev)) -lt $QUIET_NS ] && return 0
		prev=$cur
	done
	note "the logger did not go quiet within $((60 * TF)) s"
}

# live KIND RUN: KIND ulogd2-live, ulogd2flat-live, sluice-live (PACKETS at
# PPS) or ulogd2-full, sluice-full (the generator's full rate for FULL seconds)
live() {
	local kind=$1 run=$2 db table sent gsecs k0 k1 l0 l1 b0 b1 a0 a1 rows t0 t1 rate=$PPS secs
	secs=$(awk -v n="$N" -v r="$PPS" 'BEGIN { print n / r }')
	[[ $kind == *-full ]] && rate=0 secs=$FULL
	reset "$kind" || die "$kind: cannot reset the tables"
	no_backends
	case $kind in
	ulogd2*)
		table=ulog2
		if [[ $kind == ulogd2flat-* ]]; then
			db=ulog2flat
			ulogd_conf ulog2flat ulog2 INSERT >"$W/ulogd.conf"
		else
			db=ulog2
			ulogd_conf ulog2 ulog INSERT_PACKET_FULL >"$W/ulogd.conf"
		fi
		: >"$W/ulogd.log"
		ip netns exec $NB taskset -c $LOG_CPU ulogd -c "$W/ulogd.conf" >"$W/log" 2>&1 &
		LOGGER_PID=$! ;;
	sluice-*)
		db=sluice table=$SL_TABLE
		printf 'instances:\n  fw: { plugin: nflog, group: %s }\nstacks:\n  sql: [fw, decode, %s]\n' \
			$GROUP "$(sql_stack pg)" >"$W/sluice.yaml"
		ip netns exec $NB taskset -c $LOG_CPU "$SLUICE" -c "$W/sluice.yaml" >"$W/log" 2>&1 &
		LOGGER_PID=$! ;;
	sluiceflat-*)
		db=ulog2flat table=ulog2
		sluice_flat_conf >"$W/sluice.yaml"
		ip netns exec $NB taskset -c $LOG_CPU "$SLUICE" -c "$W/sluice.yaml" >"$W/log" 2>&1 &
		LOGGER_PID=$! ;;
	esac
	sleep 1
	kill -0 "$LOGGER_PID" 2>/dev/null || { cat "$W/log" "$W/ulogd.log" 2>/dev/null | tail -5 >&2; die "$kind did not start"; }
	[ -n "$(pg_children $db)" ] || sleep 2 # connected by now, or it connects at the first batch
	k0=$(nft_count) l0=$(tasks_ns "$LOGGER_PID") b0=$(backends_ns $db) a0=$(aux_ns)
	t0=$(date +%s.%N)
	read -r _ sent _ gsecs _ < <(timeout $((N / PPS + 30)) ip netns exec $NA "$G/udpgen" -d 10.198.0.2 -p $PORT \
		-s 64 -r "$rate" -t "$secs" -c $GEN_CPU)
	sleep $SETTLE
	quiet "$LOGGER_PID" $db
	t1=$(date +%s.%N)
	l1=$(tasks_ns "$LOGGER_PID") b1=$(backends_ns $db) a1=$(aux_ns) k1=$(nft_count)
	kill -TERM "$LOGGER_PID"
	for _ in $(seq $((100 * TF))); do kill -0 "$LOGGER_PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$LOGGER_PID" 2>/dev/null
	wait "$LOGGER_PID" 2>/dev/null
	LOGGER_PID=
	cp "$W/log" "$W/$kind-$run.log"
	[[ $kind == ulogd2* ]] && cp "$W/ulogd.log" "$W/$kind-$run.ulogd.log"
	rows=$(q $db -c "SELECT count(*) FROM $table") || die "$kind: cannot count the rows"
	row "$kind" "$run" "${sent:-0}" $((k1 - k0)) "$rows" "$(ns_s "$l0" "$l1")" "$(ns_s "$b0" "$b1")" \
		"$(ns_s "$a0" "$a1")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')" \
		"$(awk -v n="${sent:-0}" -v s="${gsecs:-0}" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')" \
		"$(lost_detail "$kind" "$W/$kind-$run$([[ $kind == ulogd2* ]] && echo .ulogd).log")"
}

# replay KIND RUN
replay() {
	local kind=$1 run=$2 db=sluice table=$SL_TABLE out c0 c1 a0 a1 rows
	[ "$kind" = replayidx-pg ] && table=${SL_TABLE}_idx
	reset "$kind" || die "$kind: cannot reset the tables"
	no_backends
	if [[ $kind == *-pg ]]; then
		printf 'stacks:\n  sql: [{ plugin: replay, file: %s }, decode, %s]\n' "$W/in.pcap" \
			"$(sql_stack pg "$table")" >"$W/sluice.yaml"
	else
		printf 'stacks:\n  sql: [{ plugin: replay, file: %s }, decode, %s]\n' "$W/in.pcap" "$(sql_stack sqlite)" >"$W/sluice.yaml"
	fi
	c0=$(reaped_s) a0=$(aux_ns)
	out=$(python3 - "$W/log" taskset -c $LOG_CPU "$SLUICE" -c "$W/sluice.yaml" <<'PY'
import os, subprocess, sys, time
t = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"))
_, status, ru = os.wait4(p.pid, 0)
print(f"{ru.ru_utime + ru.ru_stime:.4f} {time.monotonic() - t:.4f}")
sys.exit(os.waitstatus_to_exitcode(status))
PY
) || { tail -5 "$W/log" >&2; die "$kind: sluice failed"; }
	cp "$W/log" "$W/$kind-$run.log"
	if [[ $kind == *-pg ]]; then
		no_backends
		c1=$(reaped_s) a1=$(aux_ns)
		rows=$(q $db -c "SELECT count(*) FROM $table") || die "$kind: cannot count the rows"
		set -- $out # CPU WALL
		row "$kind" "$run" "$NREPLAY" "$NREPLAY" "$rows" "$1" \
			"$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }')" "$(ns_s "$a0" "$a1")" "$2" - -
	else
		rows=$(sqlite3 "$W/out.db" "SELECT count(*) FROM $SL_TABLE_LITE") || die "$kind: cannot count the rows"
		set -- $out # CPU WALL
		row "$kind" "$run" "$NREPLAY" "$NREPLAY" "$rows" "$1" - - "$2" - -
	fi
	# a replay delivers everything, or the figures mean nothing
	[ "$rows" = "$NREPLAY" ] || { grep counters "$W/log" | tail -2 >&2; die "$kind: $rows of $NREPLAY rows arrived"; }
}

if [ -z "$WHY_PG" ] || [ -z "$WHY_SQLITE" ]; then
	${CC:-cc} -O2 -Wall -Wextra -o "$W/gen_nflog" "$TOP/bench/gen_nflog.c" || die "cannot build gen_nflog"
	"$W/gen_nflog" -o "$W/in.pcap" -n "$NREPLAY" -m mix 2>/dev/null || die "gen_nflog failed"
fi
KINDS=
[ -z "$WHY_ULOGD" ] && KINDS+=" ulogd2-live ulogd2flat-live"
[ -z "$WHY_LIVE" ] && [ -z "$WHY_PG" ] && KINDS+=" sluice-live"
[ -z "$WHY_ULOGD" ] && [ -z "$WHY_PG" ] && KINDS+=" sluiceflat-live"
if [ "$FULL" != 0 ]; then
	[ -z "$WHY_ULOGD" ] && KINDS+=" ulogd2-full"
	[ -z "$WHY_LIVE" ] && [ -z "$WHY_PG" ] && KINDS+=" sluice-full"
fi
[ -z "$WHY_PG" ] && KINDS+=" replay-pg replayidx-pg"
[ -z "$WHY_SQLITE" ] && KINDS+=" replay-sqlite"
# SQL_EXTRA="queue: 1024, ...": more options for the sql output of the
# sluice-*, replay* rows (trying a setting; the committed table uses none)
if [ -n "${ONLY:-}" ]; then # ONLY="kind ...": just those (trying a change)
	k=
	for kind in $KINDS; do [[ " $ONLY " == *" $kind "* ]] && k+=" $kind"; done
	KINDS=$k
fi
echo "== $RUNS runs of:$KINDS (live: $N packets at $PPS pps; replay: $NREPLAY records)" >&2
START=$SECONDS
for ((i = 1; i <= RUNS; i++)); do
	for kind in $KINDS; do
		case $kind in
		*-live | *-full) live "$kind" "$i" ;;
		*) replay "$kind" "$i" ;;
		esac
	done
done
ELAPSED=$((SECONDS - START))
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
[ "$KEEP" = 1 ] && cp "$RESULTS" "$W/results.kept.tsv"

WHY="ulogd2-live=$WHY_ULOGD;ulogd2flat-live=$WHY_ULOGD;sluiceflat-live=${WHY_ULOGD:-$WHY_PG};replayidx-pg=$WHY_PG;sluice-live=${WHY_LIVE:-$WHY_PG};ulogd2-full=$WHY_ULOGD;sluice-full=${WHY_LIVE:-$WHY_PG};replay-pg=$WHY_PG;replay-sqlite=$WHY_SQLITE"
python3 "$TOP/bench/sql_report.py" "$RESULTS" --why "$WHY" --packets "$N" --pps "$PPS" \
	--replay "$NREPLAY" --full "$FULL" | tee "$W/results.md"
if [ "${NODOC:-0}" != 1 ]; then
	DOC=${DOC:-$TOP/docs/BENCHMARKS.md}
	python3 "$TOP/bench/benchdoc.py" "$DOC" sql-tables --by "bench/sql.sh -n $N -p $PPS -N $NREPLAY -r $RUNS -f $FULL" \
		--extra "Load average before / after: $LOAD_BEFORE / $LOAD_AFTER; measured in ${ELAPSED} s. PostgreSQL $(q postgres -c 'SHOW server_version' 2>/dev/null || echo ?), ulogd2 $(dpkg-query -W -f '${Version}' ulogd2-pgsql 2>/dev/null || echo none), SQLite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1)." \
		<"$W/results.md" || die "tables not written into $DOC"
fi
