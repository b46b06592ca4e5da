# SPDX-License-Identifier: GPL-2.0-or-later
# A private clickhouse-server on loopback for the clickhouse output's tests.
# Source after lib.sh.  ch_start NAME starts one with its data and config in
# $WORK/ch-NAME on free ports and sets CH_HTTP_NAME / CH_TCP_NAME; the
# server is stopped by PID at exit.  ch_query NAME SQL runs one query
# through clickhouse-client.

need_cmd clickhouse-server clickhouse-client python3 curl
[ -e "$SLUICE_PLUGIN_PATH/clickhouse.so" ] || skip "clickhouse output not built (SLUICE_WITH_CLICKHOUSE=OFF)"

# free_port: a TCP port on 127.0.0.1 nothing listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ch_write_config NAME HTTP TCP [EXTRA XML]: the server's config in $WORK/ch-NAME.
ch_write_config() {
	local name="$1" http="$2" tcp="$3" extra="${4:-}" dir="$WORK/ch-$1"
	mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files"
	cat >"$dir/users.xml" <<XML
<yandex>
  <profiles><default/></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default/></quotas>
</yandex>
XML
	cat >"$dir/config.xml" <<XML
<yandex>
  <logger><level>warning</level><console>1</console></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>$http</http_port>
  <tcp_port>$tcp</tcp_port>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/user_files/</user_files_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  <mark_cache_size>5368709</mark_cache_size>
  $extra
</yandex>
XML
}

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
	wait_for $((20 * ${SLUICE_TEST_TIME_FACTOR:-1})) "${ns[@]}" curl -sf "http://127.0.0.1:$http/" -o /dev/null ||
		{ tail -20 "$dir/server.log"; fail "clickhouse-server $name did not start"; }
}

# ch_start NAME [EXTRA XML]: a fresh server on free ports (@TCP@ in the XML: its own TCP port).
ch_start() {
	local name="$1" extra="${2:-}" http tcp
	http=$(free_port); tcp=$(free_port)
	while [ "$tcp" = "$http" ]; do tcp=$(free_port); done
	ch_write_config "$name" "$http" "$tcp" "${extra//@TCP@/$tcp}"
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

# What tests/e2e/clickhouse_packets.py compares with the json output.
CH_PACKETS_QUERY="SELECT IPv6NumToString(src_addr), IPv6NumToString(dst_addr), IPv4NumToString(src_ip4),
	ip_version, ip_proto, sport, dport, prefix, toUnixTimestamp(time), time_us, ip_ttl, ip_len,
	icmp_type FROM packets ORDER BY time, time_us FORMAT TSV"
