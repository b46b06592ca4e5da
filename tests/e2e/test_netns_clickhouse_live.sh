#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live packets into ClickHouse: nftables in a namespace logs UDP, ICMP and
# TCP over IPv4 and IPv6 to an NFLOG group; nflog -> decode -> clickhouse
# (conf/clickhouse/packets.sql, a clickhouse-server in the same namespace)
# next to nflog -> decode -> json.  Every packet the nft counter counted is
# a row, and the rows hold what the json output says (addresses, ports,
# protocol, prefix, TTL, length, time).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
. "$(dirname "$0")/clickhouse_lib.sh"
G=7
netns_pair slch 99
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
CH_NETNS=$B
ch_start a
ip netns exec "$B" clickhouse-client --port "$CH_TCP_a" -n <"$SRCDIR/conf/clickhouse/packets.sql"
cat >"$WORK/live.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  j: [fw, decode, json, {plugin: file, file: "$WORK/live.json", flush_interval: 50ms}]
  c: [fw, decode, {plugin: clickhouse, url: "http://127.0.0.1:$CH_HTTP_a", table: packets,
                   flush_interval: 100ms}]
YAML
ip netns exec "$B" "$SLUICE" -c "$WORK/live.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }
# 5 UDP + 2 ICMP echo + 1 TCP SYN (to a closed port) per IP version
ip netns exec "$A" python3 "$E2E/send_mixed.py" 10.99.0.2 fd99::2 sluice-e2e
sent=$(ip netns exec "$B" nft list table inet sluice_e2e | sed -n 's/.*counter packets \([0-9]*\) .*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
rows() { [ "$(ch_query a "SELECT count() FROM packets")" -ge "$sent" ]; }
wait_for 10 rows || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || true
n=$(ch_query a "SELECT count() FROM packets")
[ "$sent" -ge 16 ] && [ "$n" = "$sent" ] || fail "$n rows, nft counted $sent packets (16 sent)"
ch_query a "$CH_PACKETS_QUERY" >"$WORK/live.tsv"
python3 "$E2E/clickhouse_packets.py" "$WORK/live.json" "$WORK/live.tsv" || fail "rows differ from the json output"
pass "$n rows for $sent packets counted by nft, equal to the json output"
