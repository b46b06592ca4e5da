#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kafka output's spool across a reload (loopback, the mock cluster):
# every broker down, a paced replay spooling, SIGHUP with a changed kafka
# option replaces the instance; the new one takes the spool over once the
# old one has stopped (its stop_timeout, 1 s, runs out and its queue goes in
# front of the spool).  Brokers up: the topic holds each record at most
# once, and delivered + dropped == sent, the drops all spool_dropped of the
# new instance (records its queue could not hold before it had the lock).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka_lib.sh"
CAP="$SRCDIR/tests/data/eth-mixed.pcap"
[ -f "$CAP" ] || skip "no captures in tests/data"
N=2000	# 4 ms apart: 8 s
python3 "$SRCDIR/tests/e2e/kafka_paced_pcap.py" "$CAP" "$WORK/paced.pcap" $N 4
cat >"$WORK/ref.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$WORK/paced.pcap"}, decode, json, {plugin: file, file: "$WORK/ref.json"}]
YAML
"$SLUICE" -c "$WORK/ref.yaml" >"$WORK/ref.log" 2>&1 || { cat "$WORK/ref.log"; fail "reference run failed"; }

start_mock fw:3
conf() {	# conf LINGER
	cat >"$WORK/k.yaml" <<YAML
daemon: {control_socket: "$WORK/k.sock"}
stacks:
  s: [{plugin: replay, file: "$WORK/paced.pcap", pace: original}, decode, json,
      {plugin: kafka, brokers: [$BOOTSTRAP], topic: fw, key: src_addr, queue_size: 16KiB,
       linger: $1, spool_dir: "$WORK/spool", stop_timeout: 1s,
       properties: {reconnect.backoff.max.ms: 200}}]
YAML
}
stat() {
	"$SLUICE" stats --socket "$WORK/k.sock" --json 2>/dev/null | python3 -c '
import json, sys
i = [i for i in json.load(sys.stdin)["instances"] if i["name"] == "s.kafka"][0]
print(i["counters"][sys.argv[1]])' "$1" 2>/dev/null
}
mock_cmd "down all"
conf 5ms
run_sluice_bg "$WORK/k.log" -c "$WORK/k.yaml"
some_spooled() { [ "$(stat spooled || echo 0)" -ge 300 ]; }
wait_for 10 some_spooled || { cat "$WORK/k.log"; fail "nothing spooled"; }
conf 4ms
kill -HUP "$SLUICE_PID"
took_over() { grep -q "^sluice: reload: [0-9]* kept, 1 added, 1 removed" "$WORK/k.log"; }
wait_for 10 took_over || { cat "$WORK/k.log"; fail "no reload logged"; }
sleep 1
mock_cmd "up all"
wait "$SLUICE_PID" || { cat "$WORK/k.log"; fail "sluice failed"; }
L="$WORK/k.log"
delivered=$(counter "$L" s.kafka delivered); dropped=$(counter "$L" s.kafka dropped)
sd=$(counter "$L" s.kafka spool_dropped)
read_topic fw "$WORK/fw.got"
got=$(wc -l <"$WORK/fw.got")
python3 -c '
import sys
ref = set(l.rstrip("\n") for l in open(sys.argv[1]))
seen = set()
for l in open(sys.argv[2]):
    v = l.rstrip("\n").split("\t", 3)[3]
    if v not in ref:
        sys.exit("a message not from the input: " + v[:80])
    if v in seen:
        sys.exit("a message twice: " + v[:80])
    seen.add(v)' "$WORK/ref.json" "$WORK/fw.got" || fail "the topic is not the input's records, each at most once"
echo "reload while spooling: on the topic $got, the last instance's delivered=$delivered dropped=$dropped spool_dropped=$sd"
[ $((got + dropped)) = $N ] && [ "$dropped" = "$sd" ] ||
	{ cat "$L"; fail "$got on the topic + $dropped dropped != $N sent (spool_dropped $sd)"; }
pass "a reload hands the spool over: $got delivered once, $dropped dropped and counted, of $N"
