#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kafka output when the mock cluster misbehaves (loopback only):
#  1. the partition leader's broker goes down mid-stream (a paced replay of
#     30 s, long enough for a busy machine to get there) and comes back once
#     delivered has settled and 100 more records came in: while it is down
#     nothing is delivered (`sluice stats`), and afterwards the topic holds every record once,
#     in order, equal to a json -> file stack of the same capture;
#  2. produce errors injected into the cluster: with retries off and one
#     message per request, failed_broker_error equals the number injected
#     and the topic holds the rest; with librdkafka's retries (the default)
#     every record is delivered once (retries may reorder: librdkafka keeps
#     order only with enable.idempotence) and nothing is counted failed;
#  3. leader down and a 1 KiB queue: what does not fit is failed_queue_full,
#     what is queued at stop is failed_at_stop after stop_timeout, and the
#     two add up to every record, all in `dropped`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka_lib.sh"
CAP="$SRCDIR/tests/data/eth-mixed.pcap"
[ -f "$CAP" ] || skip "no captures in tests/data"
N=600
python3 "$SRCDIR/tests/e2e/kafka_paced_pcap.py" "$CAP" "$WORK/paced.pcap" $N 10
N1=3000
python3 "$SRCDIR/tests/e2e/kafka_paced_pcap.py" "$CAP" "$WORK/long.pcap" $N1 10

start_mock out:1 inj:1 retry:1 full:1

# conf NAME INPUT_OPTS KAFKA_OPTS: replay of the paced capture -> json -> kafka
conf() {
	cat >"$WORK/$1.yaml" <<YAML
daemon: {control_socket: "$WORK/$1.sock"}
stacks:
  s: [{plugin: replay, file: "$WORK/${PCAP:-paced.pcap}"$2}, decode, json,
      {plugin: kafka, brokers: [$BOOTSTRAP]$3}]
YAML
}
# stat NAME KEY: s.kafka's KEY (in, out, dropped, or a counter) from `sluice stats`
stat() {
	"$SLUICE" stats --socket "$WORK/$1.sock" --json | python3 -c '
import json, sys
i = [i for i in json.load(sys.stdin)["instances"] if i["name"] == "s.kafka"][0]
print(i[sys.argv[1]] if sys.argv[1] in i else i["counters"][sys.argv[1]])' "$2"
}

# the reference: the same records through json -> file
for f in paced long; do
	cat >"$WORK/ref.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$WORK/$f.pcap"}, decode, json, {plugin: file, file: "$WORK/ref-$f.json"}]
YAML
	"$SLUICE" -c "$WORK/ref.yaml" >"$WORK/ref.log" 2>&1 || { cat "$WORK/ref.log"; fail "reference run failed"; }
done

# ---- 1. the leader down and back, mid-stream (30 s of records, 10 ms apart)
PCAP=long.pcap conf down ", pace: original" ", topic: out, stop_timeout: 30s, properties: {reconnect.backoff.max.ms: 500}"
run_sluice_bg "$WORK/down.log" -c "$WORK/down.yaml"
some_delivered() { [ "$(stat down delivered 2>/dev/null || echo 0)" -ge 50 ]; }
wait_for 30 some_delivered || { cat "$WORK/down.log"; fail "nothing delivered before the outage"; }
mock_cmd "down $LEADER_out_0"
# What was in flight settles: delivered the same over half a second.
d1=-1
settled() { local d=$d1; d1=$(stat down delivered) && [ "$d1" = "$d" ] || { sleep 0.5; false; }; }
wait_for 20 settled || fail "leader down: delivered does not settle ($d1)"
# Records keep coming in (100 more than were delivered, about 1 s of the
# stream, or the rest of it), however slowly: none of them may be delivered.
came_in() { in2=$(stat down in) && [ "$in2" -ge $((d1 + 100 < N1 ? d1 + 100 : N1)) ]; }
wait_for 20 came_in || fail "leader down: no records came in (in ${in2:-?})"
d2=$(stat down delivered)
mock_cmd "up $LEADER_out_0"
[ "$d1" = "$d2" ] && [ "$in2" -gt "$d2" ] ||
	fail "leader down, yet delivered went $d1 -> $d2 (in $in2)"
echo "leader down: delivered stayed at $d2 while in reached $in2"
wait "$SLUICE_PID" || { cat "$WORK/down.log"; fail "sluice failed"; }
L="$WORK/down.log"
[ "$(counter "$L" s.kafka delivered)" = $N1 ] || { cat "$L"; fail "delivered is not $N1 after the outage"; }
read_topic out "$WORK/out.got"
python3 "$SRCDIR/tests/e2e/kafka_compare.py" "$WORK/ref-long.json" "$WORK/out.got" exact ||
	fail "after the outage the topic differs from the json file"

# ---- 2. injected produce errors (CORRUPT_MESSAGE = 2, NOT_ENOUGH_REPLICAS = 19)
K=7
ONE=", properties: {batch.num.messages: 1, max.in.flight.requests.per.connection: 1"
mock_cmd "err inj 2 $K"
conf inj "" ", topic: inj, linger: 0ms, idempotence: false$ONE, retries: 0}"
"$SLUICE" -c "$WORK/inj.yaml" >"$WORK/inj.log" 2>&1 || { cat "$WORK/inj.log"; fail "sluice failed"; }
L="$WORK/inj.log"
f=$(counter "$L" s.kafka failed_broker_error)
d=$(counter "$L" s.kafka delivered)
[ "$f" = $K ] && [ "$d" = $((N - K)) ] && [ "$(counter "$L" s.kafka dropped)" = $K ] ||
	{ cat "$L"; fail "$K errors injected: failed_broker_error=$f delivered=$d"; }
read_topic inj "$WORK/inj.got"
[ "$(wc -l <"$WORK/inj.got")" = $((N - K)) ] || fail "topic inj holds $(wc -l <"$WORK/inj.got")"
echo "$K injected errors, retries off: failed_broker_error=$f, delivered=$d, on the topic $((N - K))"

mock_cmd "err retry 19 $K"
conf retry "" ", topic: retry, stop_timeout: 30s$ONE}"
"$SLUICE" -c "$WORK/retry.yaml" >"$WORK/retry.log" 2>&1 || { cat "$WORK/retry.log"; fail "sluice failed"; }
L="$WORK/retry.log"
[ "$(counter "$L" s.kafka delivered)" = $N ] && [ "$(counter "$L" s.kafka dropped)" = 0 ] ||
	{ cat "$L"; fail "retried errors were not all delivered"; }
read_topic retry "$WORK/retry.got"
python3 "$SRCDIR/tests/e2e/kafka_compare.py" "$WORK/ref-paced.json" "$WORK/retry.got" once ||
	fail "after retried errors the topic differs from the json file"
echo "$K injected retriable errors, retries on: all $N delivered, each once"

# ---- 3. leader down from the start, a 1 KiB queue, stop after 500 ms
mock_cmd "down $LEADER_full_0"
conf full "" ", topic: full, queue_size: 1KiB, stop_timeout: 500ms"
"$SLUICE" -c "$WORK/full.yaml" >"$WORK/full.log" 2>&1 || { cat "$WORK/full.log"; fail "sluice failed"; }
L="$WORK/full.log"
qf=$(counter "$L" s.kafka failed_queue_full)
st=$(counter "$L" s.kafka failed_at_stop)
[ "$qf" -gt 0 ] && [ "$st" -gt 0 ] && [ $((qf + st)) = $N ] &&
	[ "$(counter "$L" s.kafka dropped)" = $N ] && [ "$(counter "$L" s.kafka delivered)" = 0 ] ||
	{ cat "$L"; fail "full queue: failed_queue_full=$qf failed_at_stop=$st, expected a sum of $N"; }
grep -q "messages not delivered to full within stop_timeout" "$L" || fail "the loss at stop was not logged"
mock_cmd "up $LEADER_full_0"
read_topic full "$WORK/full.got"
[ ! -s "$WORK/full.got" ] || fail "purged messages reached the topic"
echo "queue full: failed_queue_full=$qf, failed_at_stop=$st"
pass "outage lossless within the queue, injected errors counted exactly, a full queue counted"
