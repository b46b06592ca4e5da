#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The otlp output against a receiver that answers its first three requests
# 503 with Retry-After: 1, then 200: the batch is retried in place (no
# spool), each retry no sooner than the second Retry-After asks for (the
# backoff alone would retry after 50, 100, 200 ms), and in the end every
# record the kernel logged is delivered exactly once, equal to json's line.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
. "$(dirname "$0")/otlp_lib.sh"
otlp_decoder
G=25
N=200
netns_pair slr 97

otlp_nft_log sluice_otlp_retry 10.97.0.1 otlp-retry

start_receiver "$B" "$WORK/recv" --fail 3 --retry-after 1
cat >"$WORK/live.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  o: [fw, decode, json, {plugin: otlp, url: "http://127.0.0.1:$RECV_PORT/v1/logs", batch_size: 1000,
                         flush_interval: 200ms, retry_min: 50ms, retry_max: 5s, max_retries: 8}]
  f: [fw, decode, json, {plugin: file, file: "$WORK/ref.json"}]
YAML
otlp_sluice

ip netns exec "$A" python3 - "$N" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.97.0.1", 0))
for i in range(int(sys.argv[1])):
    s.sendto(b"retry-%d" % i, ("10.97.0.2", 9999))
PY
logged=$(otlp_logged sluice_otlp_retry)
wait_for 20 lines_ge "$WORK/ref.json" "$logged" || fail "the file has $(wc -l <"$WORK/ref.json") of $logged lines"
otlp_drain "$logged"
L="$WORK/sluice.log"
[ "$logged" = "$N" ] || fail "nft counted $logged of $N datagrams"
[ "$(wc -l <"$WORK/recv/failed.log")" = 3 ] || fail "the receiver answered 503 $(wc -l <"$WORK/recv/failed.log") times, not 3"
[ "$(counter "$L" o.otlp records)" = "$logged" ] || { cat "$L"; fail "records is not the nft counter $logged"; }
[ "$(counter "$L" o.otlp http_errors)" = 3 ] || { cat "$L"; fail "http_errors is not 3"; }
[ "$(counter "$L" o.otlp retries)" -ge 3 ] || { cat "$L"; fail "fewer than 3 retries counted"; }
grep -E "o.otlp .*(dropped[a-z_]*|rejected_records|connect_errors)=[1-9]" "$L" && fail "losses counted"
grep -q "HTTP 503: busy" "$L" || fail "the 503 was not logged with the receiver's answer"
# each try after a 503 came no sooner than its Retry-After (1 s; 0.9 for clock granularity)
python3 - "$WORK/recv" <<'PY' || fail "a retry came before the Retry-After"
import glob, json, sys
t = [float(x) for x in open(sys.argv[1] + "/failed.log")]
t += [min(json.load(open(h))["t"] for h in glob.glob(sys.argv[1] + "/*.head"))]
gaps = [b - a for a, b in zip(t, t[1:])]
print("gaps after each 503: " + " ".join("%.2f" % g for g in gaps))
sys.exit(0 if all(g >= 0.9 for g in gaps) else 1)
PY
decode "$WORK/recv" "$WORK/all.jsonl"
python3 "$SRCDIR/tests/e2e/otlp_compare.py" "$WORK/ref.json" "$WORK/all.jsonl" expect="$logged" ||
	fail "delivered records differ from json"
pass "3 x 503 with Retry-After honoured, then all $logged records delivered once"
