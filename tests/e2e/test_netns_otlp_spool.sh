#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The otlp output with spool_dir while its receiver is down: the failed
# request's records go to the spool at once, and so does everything after
# them; once a receiver listens on the port again every record the kernel
# logged arrives, exactly once and in order, equal to json's line.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
. "$(dirname "$0")/otlp_lib.sh"
otlp_decoder
G=26
N=300
netns_pair sls 96

otlp_nft_log sluice_otlp_spool 10.96.0.1 otlp-spool

# a port nobody listens on, then the receiver's
start_receiver "$B" "$WORK/recv"
PORT=$RECV_PORT
stop_receiver
cat >"$WORK/live.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  o: [fw, decode, json, {plugin: otlp, url: "http://127.0.0.1:$PORT/v1/logs", batch_size: 50,
                         flush_interval: 100ms, retry_min: 100ms, retry_max: 1s,
                         spool_dir: "$WORK/spool"}]
  f: [fw, decode, json, {plugin: file, file: "$WORK/ref.json"}]
YAML
otlp_sluice

send() {
	ip netns exec "$A" python3 - "$1" "$2" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.96.0.1", 0))
for i in range(int(sys.argv[1]), int(sys.argv[2])):
    s.sendto(b"spool-%d" % i, ("10.96.0.2", 9999))
PY
}
send 0 $((N / 2))
wait_for 20 grep -qs "go to the spool" "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "nothing went to the spool"; }
send $((N / 2)) "$N"
wait_for 20 lines_ge "$WORK/ref.json" "$N" || fail "the file has $(wc -l <"$WORK/ref.json") of $N lines"
[ ! -e "$WORK/recv/000001.head" ] || fail "a request arrived while nobody listened"

start_receiver "$B" "$WORK/recv" --port "$PORT"
logged=$(otlp_logged sluice_otlp_spool)
otlp_drain "$logged"
L="$WORK/sluice.log"
[ "$logged" = "$N" ] || fail "nft counted $logged of $N datagrams"
[ "$(counter "$L" o.otlp records)" = "$logged" ] || { cat "$L"; fail "records is not the nft counter $logged"; }
[ "$(counter "$L" o.otlp spool_sent)" -gt 0 ] || { cat "$L"; fail "nothing was sent from the spool"; }
[ "$(counter "$L" o.otlp connect_errors)" -gt 0 ] || { cat "$L"; fail "no failed connection counted"; }
grep -E "o.otlp .*(dropped[a-z_]*|rejected_records|http_errors|spool_corrupt)=[1-9]" "$L" && fail "losses counted"
decode "$WORK/recv" "$WORK/all.jsonl"
python3 "$SRCDIR/tests/e2e/otlp_compare.py" "$WORK/ref.json" "$WORK/all.jsonl" expect="$logged" ||
	fail "delivered records differ from json"
# in order: the records arrive as the kernel logged them (seq of the datagrams)
python3 - "$WORK/all.jsonl" <<'PY' || fail "records arrived out of order"
import json, sys
t = [int(json.loads(l)["time"]) for l in open(sys.argv[1])]
sys.exit(0 if t == sorted(t) else 1)
PY
pass "receiver down: spooled, then all $logged records delivered once and in order"
