# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by bench/sinks.sh and bench/fleet.sh: a librdkafka mock cluster
# (tests/kafka_mock.c, built in BUILD/tests) and a private clickhouse-server,
# both on loopback with their data in $W, stopped by PID at exit (the
# caller's cleanup calls sinks_stop).  Source it after setting W, BUILD and TOP.

MOCK_PID="" CH_PID=""

# proc_cpu PID: user + system CPU seconds of the whole process (every
# thread, also the ones that ended: /proc/PID/stat), "0" once it is gone.
TCK=$(getconf CLK_TCK)
proc_cpu() {
	awk -v t="$TCK" '{ sub(/.*\) /, ""); printf "%.3f", ($12 + $13) / t }' /proc/"$1"/stat 2>/dev/null || echo 0
}

# free_port, ch_free_ports, ch_write_config
. "$TOP/tests/e2e/clickhouse_server.sh"

# mock_start [-p PARTS] TOPIC...: the mock cluster (3 brokers); sets BOOTSTRAP.
mock_start() {
	local i
	"$BUILD/tests/kafka_mock" -f "$@" </dev/null >"$W/mock.out" 2>"$W/mock.err" &
	MOCK_PID=$!
	for i in $(seq 100); do grep -qx ready "$W/mock.out" 2>/dev/null && break; sleep 0.1; done
	grep -qx ready "$W/mock.out" || { cat "$W/mock.err" >&2; return 1; }
	BOOTSTRAP=$(awk '$1 == "bootstrap" { print $2 }' "$W/mock.out")
}

# topic_end TOPIC PARTS: records appended to the topic (sum of the end offsets).
topic_end() {
	local p args=()
	for ((p = 0; p < $2; p++)); do args+=(-t "$1:$p:-1"); done
	kcat -Q -b "$BOOTSTRAP" "${args[@]}" 2>/dev/null | awk '{ n += $NF } END { print n + 0 }'
}

# ch_start: a clickhouse-server on free ports; sets CH_HTTP, CH_TCP, CH_PID.
ch_start() {
	local d=$W/ch
	ch_free_ports
	CH_HTTP=$CH_FREE_HTTP CH_TCP=$CH_FREE_TCP
	ch_write_config "$d" "$CH_HTTP" "$CH_TCP"
	clickhouse-server --config-file="$d/config.xml" >>"$d/server.log" 2>&1 &
	CH_PID=$!
	for _ in $(seq 200); do curl -sf "http://127.0.0.1:$CH_HTTP/" -o /dev/null && return 0; sleep 0.1; done
	tail -20 "$d/server.log" >&2
	return 1
}

ch_query() {
	clickhouse-client --host 127.0.0.1 --port "$CH_TCP" --multiquery --query "$1"
}

# ch_packets_table NAME: a fresh table NAME with conf/clickhouse/packets.sql's schema.
ch_packets_table() {
	ch_query "DROP TABLE IF EXISTS $1" &&
		sed "s/CREATE TABLE IF NOT EXISTS packets/CREATE TABLE $1/" "$TOP/conf/clickhouse/packets.sql" |
		grep -v '^--' | clickhouse-client --host 127.0.0.1 --port "$CH_TCP" --multiquery
}

# counter LOG INSTANCE NAME: a counter of the daemon's last "counters:" line.
counter() {
	sed -n "s/^sluice: counters: $2 ([a-z]*):.* $3=\([0-9]*\).*/\1/p" "$1" | tail -n 1
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2); else print 0 }'; }

sinks_stop() {
	[ -n "$MOCK_PID" ] && kill "$MOCK_PID" 2>/dev/null
	[ -n "$CH_PID" ] && kill "$CH_PID" 2>/dev/null
	[ -n "$CH_PID" ] && for _ in $(seq 100); do kill -0 "$CH_PID" 2>/dev/null || break; sleep 0.1; done
	MOCK_PID="" CH_PID=""
}
