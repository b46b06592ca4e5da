#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live NFLOG records through decode -> json -> otlp, decoded by an
# implementation that is not ours (protobufjs with the OTLP definitions of
# @opentelemetry/otlp-transformer): nftables in a namespace logs UDP
# datagrams from 20 source ports and TCP connection attempts; one nflog
# input fans out to three otlp outputs on one test receiver (protobuf;
# OTLP/JSON gzipped; protobuf without json before it) and to json -> file,
# the oracle.  Every line of the file is the body of exactly one record of
# each encoding, with every attribute equal to what json printed; without
# json the body is the prefix.  The Authorization header reaches the
# receiver and is never printed.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
. "$(dirname "$0")/otlp_lib.sh"
otlp_decoder
G=24
N=300
T=40
TOKEN="Bearer s3cr3t-otlp-token"
netns_pair slo 98

otlp_nft_log sluice_otlp_e2e 10.98.0.1 sluice-otlp \
	"ip saddr 10.98.0.1 tcp dport 9998 tcp flags syn counter name logged log group $G prefix \"sluice-otlp \""

start_receiver "$B" "$WORK/recv"
U="http://127.0.0.1:$RECV_PORT"
cat >"$WORK/live.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  p: [fw, decode, json, {plugin: otlp, url: "$U/pb/v1/logs", batch_size: 64, flush_interval: 100ms,
                         headers: {Authorization: "$TOKEN"}}]
  j: [fw, decode, json, {plugin: otlp, url: "$U/json/v1/logs", encoding: json, compression: gzip,
                         batch_size: 64, flush_interval: 100ms}]
  b: [fw, decode, {plugin: otlp, url: "$U/bare/v1/logs", flush_interval: 100ms}]
  f: [fw, decode, json, {plugin: file, file: "$WORK/ref.json"}]
YAML
"$SLUICE" -t -c "$WORK/live.yaml" >"$WORK/check.log" 2>&1 || { cat "$WORK/check.log"; fail "sluice -t refused the configuration"; }
otlp_sluice

ip netns exec "$A" python3 - "$N" "$T" <<'PY'
import socket, sys, time
socks = []
for p in range(20):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("10.98.0.1", 31000 + p))
    socks.append(s)
for i in range(int(sys.argv[1])):
    socks[i % 20].sendto(b"otlp-%d" % i, ("10.98.0.2", 9999))
    if i % 100 == 99:
        time.sleep(0.005)
for i in range(int(sys.argv[2])):
    c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    c.settimeout(2)
    try:
        c.connect(("10.98.0.2", 9998))   # nobody listens: SYN, then RST
    except OSError:
        pass
    c.close()
PY
logged=$(otlp_logged sluice_otlp_e2e)
wait_for 20 lines_ge "$WORK/ref.json" "$logged" || fail "the file has $(wc -l <"$WORK/ref.json") of $logged lines"
wait_for 30 records_ge "$WORK/recv" $((3 * logged)) ||
	fail "the receiver has $(wc -l <"$WORK/.count") of $((3 * logged)) records"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
L="$WORK/sluice.log"
[ "$logged" -ge $((N + T)) ] || fail "nft counted $logged of $((N + T)) packets"
for s in p j b; do
	[ "$(counter "$L" $s.otlp records)" = "$logged" ] || { cat "$L"; fail "$s: records is not the nft counter $logged"; }
done
grep -E "otlp .*(dropped[a-z_]*|rejected_records|http_errors|connect_errors|errors)=[1-9]" "$L" && fail "failures counted"
grep -q "s3cr3t" "$L" "$WORK/check.log" && fail "the Authorization token was printed"

decode "$WORK/recv" "$WORK/all.jsonl"
python3 "$SRCDIR/tests/e2e/otlp_compare.py" "$WORK/ref.json" "$WORK/all.jsonl" path=/pb/v1/logs \
	encoding=application/x-protobuf gzip=0 expect="$logged" || fail "protobuf records differ from json"
python3 "$SRCDIR/tests/e2e/otlp_compare.py" "$WORK/ref.json" "$WORK/all.jsonl" path=/json/v1/logs \
	encoding=application/json gzip=1 expect="$logged" || fail "OTLP/JSON records differ from json"
python3 - "$WORK/all.jsonl" "$logged" "$TOKEN" <<'PY' || fail "the bare stack's records or the headers are wrong"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
bare = [r for r in recs if r["path"] == "/bare/v1/logs"]
assert len(bare) == int(sys.argv[2]), len(bare)
for r in bare:
    assert r["body"] == "sluice-otlp ", r["body"]
    assert r["attrs"]["netfilter.prefix"] == {"str": "sluice-otlp "}, r["attrs"]
    assert r["attrs"]["network.transport"]["str"] in ("udp", "tcp"), r["attrs"]
    assert int(r["attrs"]["destination.port"]["int"]) in (9998, 9999), r["attrs"]
    if r["attrs"]["network.transport"]["str"] == "tcp":
        assert "netfilter.tcp_options" in r["attrs"], r["attrs"]   # a SYN has options (bytes)
for r in recs:
    want = sys.argv[3] if r["path"] == "/pb/v1/logs" else None
    assert r["headers"].get("authorization") == want, r["headers"]
PY
pass "nft counted $logged; protobuf, gzipped OTLP/JSON and bare records all equal json's"
