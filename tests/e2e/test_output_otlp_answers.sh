#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What the otlp output does with its receiver's answers (replay of the 40
# records of eth-mixed.pcap, 10 per request, to a test receiver on
# loopback):
#   1. 400 to every request: refused at once (the same request would get
#      the same answer): no retry, every record dropped and counted, the
#      status and the answer's first line logged;
#   2. 200 with partial_success.rejected_log_records = 3, in protobuf and
#      in OTLP/JSON: 3 records of each request counted as rejected and
#      dropped, the rest delivered (in == out + dropped holds).
. "$(dirname "$0")/lib.sh"
need_cmd python3
. "$(dirname "$0")/otlp_lib.sh"
CAP="$SRCDIR/tests/data/eth-mixed.pcap"

start_receiver - "$WORK/r400" --status 400
cat >"$WORK/a.yaml" <<YAML
stacks:
  o: [{plugin: replay, file: "$CAP"}, decode, json,
      {plugin: otlp, url: "http://127.0.0.1:$RECV_PORT/v1/logs", batch_size: 10, retry_min: 10ms}]
YAML
"$SLUICE" -c "$WORK/a.yaml" >"$WORK/a.log" 2>&1 || { cat "$WORK/a.log"; fail "sluice failed"; }
grep -q "counters: o.otlp (otlp): in=40 out=0 dropped=40 errors=0 requests=0 records=0 http_errors=4 connect_errors=0 retries=0 dropped_records=40 rejected_records=0" "$WORK/a.log" ||
	{ cat "$WORK/a.log"; fail "400: not 4 requests refused at once and 40 records dropped"; }
grep -q "HTTP 400: refused by the test" "$WORK/a.log" || fail "the 400 and its answer were not logged"
[ "$(ls "$WORK/r400"/*.head | wc -l)" = 4 ] || fail "the receiver saw $(ls "$WORK/r400"/*.head | wc -l) requests, not 4"
stop_receiver

start_receiver - "$WORK/rp" --rejected 3
cat >"$WORK/b.yaml" <<YAML
instances:
  cap: {plugin: replay, file: "$CAP"}
stacks:
  p: [cap, decode, json, {plugin: otlp, url: "http://127.0.0.1:$RECV_PORT/v1/logs", batch_size: 10}]
  j: [cap, decode, json, {plugin: otlp, url: "http://127.0.0.1:$RECV_PORT/v1/logs", batch_size: 10,
                          encoding: json}]
YAML
"$SLUICE" -c "$WORK/b.yaml" >"$WORK/b.log" 2>&1 || { cat "$WORK/b.log"; fail "sluice failed"; }
for s in p j; do
	grep -q "counters: $s.otlp (otlp): in=40 out=28 dropped=12 errors=0 requests=4 records=40 http_errors=0 connect_errors=0 retries=0 dropped_records=0 rejected_records=12" "$WORK/b.log" ||
		{ cat "$WORK/b.log"; fail "$s: partial success not counted as 12 rejected of 40"; }
done
grep -q "p.otlp: warning: the receiver rejected 3 of 10 records" "$WORK/b.log" || fail "the partial success was not logged"
pass "400 refused at once (40 dropped); partial_success counted in protobuf and JSON (12 of 40)"
