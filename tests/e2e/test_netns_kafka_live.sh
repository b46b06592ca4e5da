#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A live stack into Kafka: nftables in a namespace logs (and counts) UDP
# datagrams from 50 source ports to an NFLOG group; one nflog input fans
# out to json -> kafka (keyed by sport, an integer key printed in decimal)
# on the mock cluster running in the same namespace, and to json -> file.
# The topic must hold as many messages as the nft counter saw packets, each
# equal to a line of the file, keyed by its src_port, one key per partition
# and in order.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
G=23
N=2000
netns_pair slk 99
MOCK_NETNS=$B
. "$(dirname "$0")/kafka_lib.sh"

ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_kafka_e2e {
	counter logged { }
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.99.0.1 udp dport 9999 counter name logged log group $G prefix "sluice-kafka "
	}
}
NFT

start_mock fw:3
cat >"$WORK/live.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  k: [fw, decode, json, {plugin: kafka, brokers: [$BOOTSTRAP], topic: fw, key: sport, linger: 2ms}]
  f: [fw, decode, json, {plugin: file, file: "$WORK/ref.json"}]
YAML
ip netns exec "$B" "$SLUICE" -c "$WORK/live.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "nflog did not start"; }

ip netns exec "$A" python3 - "$N" <<'PY'
import socket, sys, time
socks = []
for p in range(50):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.99.0.1", 30000 + p))
    socks.append(s)
for i in range(int(sys.argv[1])):
    socks[i % 50].sendto(b"kafka-%d" % i, ("10.99.0.2", 9999))
    if i % 100 == 99:
        time.sleep(0.005)
PY
logged=$(ip netns exec "$B" nft -j list counter inet sluice_kafka_e2e logged |
	python3 -c 'import json,sys; print([o["counter"]["packets"] for o in json.load(sys.stdin)["nftables"] if "counter" in o][0])')
lines_ge() { [ "$(wc -l <"$1")" -ge "$2" ]; }
wait_for 10 lines_ge "$WORK/ref.json" "$logged" || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
L="$WORK/sluice.log"
[ "$logged" = $N ] || fail "nft counted $logged of $N datagrams"
[ "$(counter "$L" k.kafka delivered)" = "$logged" ] || { cat "$L"; fail "delivered is not the nft counter $logged"; }
grep -E "k.kafka .*(dropped|failed_[a-z_]*|errors)=[1-9]" "$L" && fail "failures counted"
read_topic fw "$WORK/fw.got"
[ "$(wc -l <"$WORK/fw.got")" = "$logged" ] || fail "topic holds $(wc -l <"$WORK/fw.got"), nft counted $logged"
python3 "$SRCDIR/tests/e2e/kafka_compare.py" "$WORK/ref.json" "$WORK/fw.got" json-key=src_port ||
	fail "topic differs from the json file"
pass "nft counted $logged, the topic holds $logged keyed by sport, equal to the file"
