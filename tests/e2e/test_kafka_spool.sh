#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The kafka output's disk spool (spool_dir) against the mock cluster
# (loopback only), records keyed by src_addr over a 3-partition topic and
# read back with kcat; the oracle for what went in is a json -> file stack
# of the same capture, for what was spooled spool_read.py --kafka (its own
# reader of the format).
#   config  a relative spool_dir is refused by sluice -t at its line:column.
#   outage  a steady paced replay (250 records/s, librdkafka's queue 16 KiB,
#           about 30 records) and every broker down until more than 1,000
#           records are spooled, then up:
#           the topic holds every record exactly once, per key in the
#           input's order, with its timestamp; spooled == spool_sent > 0,
#           nothing dropped, no segment left.
#   timeout message_timeout 1 s and the brokers down until a record has
#           timed out: records that time out inside librdkafka are
#           spooled (spooled_failed), not dropped; every record arrives
#           exactly once (those come after records spooled before they
#           timed out: not in order).
#   kill9   every broker down, sluice killed with SIGKILL once 500 records
#           are spooled (of a 30 s stream, so that it still runs however
#           late a busy machine lets the test look); restarted with the
#           brokers up and newer records: the topic holds exactly the
#           spooled records (as spool_read.py read them), then the newer
#           ones, per key in order.  What was in librdkafka's memory at the
#           kill is lost, and the test says how much.
#   full    spool_max_size 64 KiB, brokers down, stop after 500 ms: every
#           record is spooled or counted in spool_dropped (== dropped);
#           after a restart delivered + dropped == sent, and the topic
#           holds the spooled records in order.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka_lib.sh"
CAP="$SRCDIR/tests/data/eth-mixed.pcap"
[ -f "$CAP" ] || skip "no captures in tests/data"
READ="$SRCDIR/tests/e2e/spool_read.py"
PACED="$SRCDIR/tests/e2e/kafka_paced_pcap.py"
N=4000	# 4 ms apart: 16 s
python3 "$PACED" "$CAP" "$WORK/steady.pcap" $N 4
python3 "$PACED" "$CAP" "$WORK/burst.pcap" 30000 1 100
python3 "$PACED" "$CAP" "$WORK/later.pcap" 400 5 200
python3 "$PACED" "$CAP" "$WORK/full.pcap" 600 1 300

start_mock fw:3 tmo:3 kill:3 full:1

# conf NAME PCAP TOPIC SPOOL_DIR [MORE [PACE]]: replay (paced unless PACE
# is "none") -> json -> kafka with a spool and a 16 KiB queue; MORE
# replaces ", stop_timeout: 30s"
conf() {
	cat >"$WORK/$1.yaml" <<YAML
daemon: {control_socket: "$WORK/$1.sock"}
stacks:
  s: [{plugin: replay, file: "$WORK/$2", pace: ${6:-original}}, decode, json,
      {plugin: kafka, brokers: [$BOOTSTRAP], topic: $3, key: src_addr, queue_size: 16KiB,
       spool_dir: "$4"${5:-, stop_timeout: 30s}, properties: {reconnect.backoff.max.ms: 200}}]
YAML
}
# in_order SPOOL_TXT REF: the spooled values are a subsequence of REF, in its order
in_order() {
	python3 -c '
import sys
ref = iter(l.rstrip("\n") for l in open(sys.argv[2]))
for l in open(sys.argv[1]):
    v = l.rstrip("\n").split("\t", 2)[2]
    if not any(v == r for r in ref):
        sys.exit("spooled record out of the input order: " + v[:80])' "$1" "$2"
}
# ref PCAP OUT: the same records through json -> file
ref() {
	cat >"$WORK/ref.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$WORK/$1"}, decode, json, {plugin: file, file: "$2"}]
YAML
	"$SLUICE" -c "$WORK/ref.yaml" >"$WORK/ref.log" 2>&1 || { cat "$WORK/ref.log"; fail "reference run failed"; }
}
# stat NAME KEY...: s.kafka's KEYs (in, out, dropped, or counters) from one `sluice stats`
stat() {
	local name="$1"; shift
	"$SLUICE" stats --socket "$WORK/$name.sock" --json 2>/dev/null | python3 -c '
import json, sys
i = [i for i in json.load(sys.stdin)["instances"] if i["name"] == "s.kafka"][0]
print(*(i[k] if k in i else i["counters"][k] for k in sys.argv[1:]))' "$@" 2>/dev/null
}
segments() { find "$1" -name 'seg-*.spl' 2>/dev/null | wc -l; }
# expect LOG NAME=VALUE...: the counters of the daemon's last line
expect() {
	local log="$1" kv; shift
	for kv in "$@"; do
		[ "$(counter "$log" s.kafka "${kv%%=*}")" = "${kv#*=}" ] ||
			{ cat "$log"; fail "${kv%%=*} is $(counter "$log" s.kafka "${kv%%=*}"), expected ${kv#*=}"; }
	done
}

# a relative spool_dir is refused at its line and column
conf rel steady.pcap fw sp0
sed -i "s|spool_dir: \"sp0\"|spool_dir: sp0|" "$WORK/rel.yaml"
"$SLUICE" -t -c "$WORK/rel.yaml" >"$WORK/rel.log" 2>&1 && fail "sluice -t took a relative spool_dir"
grep -Eq "rel.yaml:[0-9]+:[0-9]+: .*spool_dir.*absolute" "$WORK/rel.log" ||
	{ cat "$WORK/rel.log"; fail "a relative spool_dir was not refused with file:line:column"; }

# ---- outage: every broker down under a steady stream, until 1,000 are spooled
ref steady.pcap "$WORK/steady.json"
conf outage steady.pcap fw "$WORK/sp1"
run_sluice_bg "$WORK/outage.log" -c "$WORK/outage.yaml"
some_delivered() { [ "$(stat outage delivered || echo 0)" -ge 200 ]; }
wait_for 30 some_delivered || { cat "$WORK/outage.log"; fail "nothing delivered before the outage"; }
mock_cmd "down all"
# Waits for the spool, not a time: on a busy machine the paced replay runs late.
sp=0 d=0 b=0
outage_spooled() {
	read -r sp d b < <(stat outage spooled delivered spool_bytes) && [ "${sp:-0}" -gt 1000 ] && [ "${b:-0}" -gt 0 ]
}
wait_for 60 outage_spooled || { cat "$WORK/outage.log"; fail "brokers down: spooled=$sp spool_bytes=$b"; }
mock_cmd "up all"
echo "brokers down: delivered $d, spooled $sp ($b bytes on disk)"
wait "$SLUICE_PID" || { cat "$WORK/outage.log"; fail "sluice failed"; }
L="$WORK/outage.log"
sent=$(counter "$L" s.kafka spool_sent)
expect "$L" delivered=$N dropped=0 spool_dropped=0 spool_bytes=0 spooled="$sent" spooled_failed=0
[ "$(segments "$WORK/sp1")" = 0 ] || fail "segments left in the spool"
read_topic fw "$WORK/fw.got"
python3 "$SRCDIR/tests/e2e/kafka_compare.py" "$WORK/steady.json" "$WORK/fw.got" json-key ||
	fail "after the outage the topic differs from the json file"
echo "outage: $N delivered, $sent of them through the spool, each once, per key in order"

# ---- timeout: message_timeout 1 s, every broker down until records time out
N2=1500
python3 "$PACED" "$CAP" "$WORK/tmo.pcap" $N2 4 400
ref tmo.pcap "$WORK/tmo.json"
conf tmo tmo.pcap tmo "$WORK/sp4" ", stop_timeout: 30s, message_timeout: 1s"
run_sluice_bg "$WORK/tmo.log" -c "$WORK/tmo.yaml"
some_delivered() { [ "$(stat tmo delivered || echo 0)" -ge 100 ]; }
wait_for 30 some_delivered || { cat "$WORK/tmo.log"; fail "nothing delivered before the outage"; }
mock_cmd "down all"
timed_out() { [ "$(stat tmo spooled_failed || echo 0)" -gt 0 ]; }
wait_for 30 timed_out || { cat "$WORK/tmo.log"; fail "brokers down: no record timed out into the spool"; }
mock_cmd "up all"
wait "$SLUICE_PID" || { cat "$WORK/tmo.log"; fail "sluice failed"; }
L="$WORK/tmo.log"
sf=$(counter "$L" s.kafka spooled_failed)
expect "$L" delivered=$N2 dropped=0 failed_msg_timed_out=0 spool_bytes=0
[ "$sf" -gt 0 ] || { cat "$L"; fail "no timed-out record was spooled"; }
read_topic tmo "$WORK/tmo.got"
python3 "$SRCDIR/tests/e2e/kafka_compare.py" "$WORK/tmo.json" "$WORK/tmo.got" once ||
	fail "after timeouts the topic differs from the json file"
echo "timeout: $sf records timed out in librdkafka and went to the spool; all $N2 delivered, each once"

# ---- kill9: records spooled, SIGKILL, restart
mock_cmd "down all"
conf kill9 burst.pcap kill "$WORK/sp2"
run_sluice_bg "$WORK/kill9.log" -c "$WORK/kill9.yaml"
some_spooled() { [ "$(stat kill9 spooled || echo 0)" -ge 500 ]; }
wait_for 30 some_spooled || { cat "$WORK/kill9.log"; fail "nothing spooled"; }
read -r in sp < <(stat kill9 in spooled) || { cat "$WORK/kill9.log"; fail "sluice ended before the kill"; }
kill -9 "$SLUICE_PID"
wait "$SLUICE_PID" 2>/dev/null || true
python3 "$READ" --kafka "$WORK/sp2" >"$WORK/sp2.txt" 2>"$WORK/sp2.err"
R=$(wc -l <"$WORK/sp2.txt")
echo "kill -9: at the last stats $in records in, $sp spooled, so $((in - sp)) in librdkafka's memory (lost);" \
	"on disk $R ($(cat "$WORK/sp2.err"))"
[ "$R" -ge 500 ] || fail "only $R records in the spool after kill -9"
ref burst.pcap "$WORK/burst.json"
in_order "$WORK/sp2.txt" "$WORK/burst.json" || fail "the spool is not in the input's order"
mock_cmd "up all"
ref later.pcap "$WORK/later.json"
conf restart later.pcap kill "$WORK/sp2"
"$SLUICE" -c "$WORK/restart.yaml" >"$WORK/restart.log" 2>&1 || { cat "$WORK/restart.log"; fail "restart failed"; }
L="$WORK/restart.log"
expect "$L" delivered=$((R + 400)) dropped=0 spool_sent=$((R + $(counter "$L" s.kafka spooled))) spool_bytes=0
read_topic kill "$WORK/kill.got"
{ cut -f3- "$WORK/sp2.txt"; cat "$WORK/later.json"; } >"$WORK/kill.want"
python3 "$SRCDIR/tests/e2e/kafka_compare.py" "$WORK/kill.want" "$WORK/kill.got" json-key ||
	fail "after the restart the topic is not the spool, then the newer records"
echo "restart: the $R spooled records, then 400 newer ones, each once, per key in order"

# ---- full: a 64 KiB spool, the brokers away
mock_cmd "down all"
ref full.pcap "$WORK/full.json"
conf full full.pcap full "$WORK/sp3" ", spool_max_size: 64KiB, stop_timeout: 500ms" none
"$SLUICE" -c "$WORK/full.yaml" >"$WORK/full.log" 2>&1 || { cat "$WORK/full.log"; fail "sluice failed"; }
L="$WORK/full.log"
S=$(counter "$L" s.kafka spooled); D=$(counter "$L" s.kafka spool_dropped)
expect "$L" delivered=0 dropped="$D"
[ "$D" -gt 0 ] && [ $((S + D)) = 600 ] || { cat "$L"; fail "600 records: spooled=$S spool_dropped=$D"; }
python3 "$READ" --kafka "$WORK/sp3" >"$WORK/sp3.txt" 2>/dev/null
[ "$(wc -l <"$WORK/sp3.txt")" = "$S" ] || fail "spooled=$S but $(wc -l <"$WORK/sp3.txt") records on disk"
in_order "$WORK/sp3.txt" "$WORK/full.json" || fail "the full spool is not in the input's order"
mock_cmd "up all"
conf full2 later.pcap full "$WORK/sp3"
"$SLUICE" -c "$WORK/full2.yaml" >"$WORK/full2.log" 2>&1 || { cat "$WORK/full2.log"; fail "restart failed"; }
L="$WORK/full2.log"
expect "$L" delivered=$((S + 400)) dropped=0
[ $((S + 400 + D)) = $((600 + 400)) ] || fail "delivered + dropped != sent"
read_topic full "$WORK/full.got"
{ cut -f3- "$WORK/sp3.txt"; cat "$WORK/later.json"; } >"$WORK/full.want"
python3 "$SRCDIR/tests/e2e/kafka_compare.py" "$WORK/full.want" "$WORK/full.got" exact ||
	fail "the full spool's records did not arrive in order"
echo "full: 600 sent, $S spooled, $D spool_dropped; after the restart $((S + 400)) delivered + $D dropped = 1000"
pass "outage, kill -9 and a full spool: every spooled record delivered once, in order, drops exact"
