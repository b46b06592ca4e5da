# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A private clickhouse-server's config, shared by tests/e2e/clickhouse_lib.sh
# and bench/sinks_lib.sh.  Needs nothing but bash and python3 (no lib.sh), so
# the benchmarks can source it too.

# free_port: a TCP port on 127.0.0.1 nothing listens on now.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ch_free_ports: sets CH_FREE_HTTP and CH_FREE_TCP to two different free ports.
ch_free_ports() {
	CH_FREE_HTTP=$(free_port) CH_FREE_TCP=$(free_port)
	while [ "$CH_FREE_TCP" = "$CH_FREE_HTTP" ]; do CH_FREE_TCP=$(free_port); done
}

# ch_write_config DIR HTTP TCP [EXTRA XML]: a server listening on 127.0.0.1
# only, its data and config in DIR (config.xml, users.xml), timezone UTC.
ch_write_config() {
	local dir="$1" http="$2" tcp="$3" extra="${4:-}"
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
