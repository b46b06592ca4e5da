# SPDX-License-Identifier: GPL-2.0-or-later
# A private clickhouse-server on loopback for the clickhouse output's tests.
# Source after lib.sh.  ch_start NAME starts one with its data and config in
# $WORK/ch-NAME on free ports and sets CH_HTTP_NAME / CH_TCP_NAME; the
# server is stopped by PID at exit.  ch_query NAME SQL runs one query
# through clickhouse-client.  Sets E2E, SQL (conf/clickhouse) and CAP.

need_cmd clickhouse-server clickhouse-client python3 curl
[ -e "$SLUICE_PLUGIN_PATH/clickhouse.so" ] || skip "clickhouse output not built (SLUICE_WITH_CLICKHOUSE=OFF)"
E2E=$(dirname "$0")
SQL="$SRCDIR/conf/clickhouse"
CAP="$SRCDIR/tests/data/nflog-mixed.pcap"	# the replay tests' capture

. "$(dirname "${BASH_SOURCE[0]}")/clickhouse_server.sh"

# ch_run NAME: start (or restart) the server NAME from its config (inside the
# network namespace $CH_NETNS when set).
ch_run() {
	local name="$1" dir="$WORK/ch-$1" http
	local -a ns=()
	[ -z "${CH_NETNS:-}" ] || ns=(ip netns exec "$CH_NETNS")
	http=$(sed -n 's:.*<http_port>\(.*\)</http_port>.*:\1:p' "$dir/config.xml")
	"${ns[@]}" clickhouse-server --config-file="$dir/config.xml" >>"$dir/server.log" 2>&1 &
	eval "CH_PID_$name=$!"
	at_exit "kill $!"
	wait_for 20 "${ns[@]}" curl -sf "http://127.0.0.1:$http/" -o /dev/null ||
		{ tail -20 "$dir/server.log"; fail "clickhouse-server $name did not start"; }
}

# ch_start NAME [EXTRA XML]: a fresh server on free ports (@TCP@ in the XML: its own TCP port).
ch_start() {
	local name="$1" extra="${2:-}" http tcp
	ch_free_ports
	http=$CH_FREE_HTTP tcp=$CH_FREE_TCP
	ch_write_config "$WORK/ch-$name" "$http" "$tcp" "${extra//@TCP@/$tcp}"
	eval "CH_HTTP_$name=$http CH_TCP_$name=$tcp"
	ch_run "$name"
}

# ch_stop NAME [SIGNAL]: stop the server (SIGTERM, or SIGNAL) and wait for it to exit.
ch_stop() {
	local pid
	eval "pid=\$CH_PID_$1"
	kill -"${2:-TERM}" "$pid" 2>/dev/null || true
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
}

# ch_query NAME SQL: clickhouse-client against the server NAME.
ch_query() {
	local port
	local -a ns=()
	[ -z "${CH_NETNS:-}" ] || ns=(ip netns exec "$CH_NETNS")
	eval "port=\$CH_TCP_$1"
	"${ns[@]}" clickhouse-client --host 127.0.0.1 --port "$port" --multiquery --query "$2"
}

# ch_start NAME "$CH_QUICK_STOP": a short graceful stop (18.16 keeps serving
# open keep-alive connections meanwhile), for the tests that stop the server.
CH_QUICK_STOP="<shutdown_wait_unfinished>1</shutdown_wait_unfinished><keep_alive_timeout>1</keep_alive_timeout>"

# spooled_recs DIR: records in the spool's segments (spool_read.py's own reading).
spooled_recs() { python3 "$E2E/spool_read.py" "$1" 2>&1 >/dev/null | sed -n 's/records=\([0-9]*\) .*/\1/p'; }

# What tests/e2e/clickhouse_packets.py compares with the json output.
CH_PACKETS_QUERY="SELECT IPv6NumToString(src_addr), IPv6NumToString(dst_addr), IPv4NumToString(src_ip4),
	ip_version, ip_proto, sport, dport, prefix, toUnixTimestamp(time), time_us, ip_ttl, ip_len,
	icmp_type FROM packets ORDER BY time, time_us FORMAT TSV"
