#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kafka output against librdkafka's mock cluster (3 brokers): replay ->
# decode -> json -> kafka, keyed by src_addr, over a 3-partition topic.
# Read back with kcat, every message equals the line a json -> file stack
# wrote from the same replay, its key is the record's source address (as
# json prints src_ip), one key stays in one partition and in order, and
# the message timestamp is the record's.  Then logline -> kafka (format
# text) with each compression codec, against logline -> file; and text fed
# to format: json is counted not_json, not sent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/kafka_lib.sh"
DATA="$SRCDIR/tests/data"
CAP="$DATA/eth-mixed.pcap"
[ -f "$CAP" ] || skip "no captures in tests/data"
LOOP=50
N=$((40 * LOOP))

start_mock fw:3 text_none text_lz4 text_zstd text_gzip text_snappy wrong

# run NAME CONVERTER OUTPUT: one replay of the capture through CONVERTER into OUTPUT.
run() {
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$CAP", loop: $LOOP}, decode, $2, $3]
YAML
	"$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 || { cat "$WORK/$1.log"; fail "$1: sluice failed"; }
}

run ref-json json "{plugin: file, file: \"$WORK/ref.json\"}"
run ref-text logline "{plugin: file, file: \"$WORK/ref.txt\"}"
[ "$(wc -l <"$WORK/ref.json")" = $N ] || fail "reference json has $(wc -l <"$WORK/ref.json") lines"

run kafka-json json "{plugin: kafka, brokers: [$BOOTSTRAP], topic: fw, key: src_addr, linger: 1ms}"
L="$WORK/kafka-json.log"
[ "$(counter "$L" s.kafka delivered)" = $N ] || { cat "$L"; fail "delivered is not $N"; }
grep -E "s.kafka .*(dropped|failed_[a-z_]*|errors)=[1-9]" "$L" && fail "failures counted"
read_topic fw "$WORK/fw.got"
python3 "$SRCDIR/tests/e2e/kafka_compare.py" "$WORK/ref.json" "$WORK/fw.got" json-key ||
	fail "topic fw differs from the json file"

for codec in none lz4 zstd gzip snappy; do
	run "kafka-$codec" logline "{plugin: kafka, brokers: [$BOOTSTRAP], topic: text_$codec,
	    format: text, compression: $codec, acks: \"1\", batch_size: 16KiB}"
	[ "$(counter "$WORK/kafka-$codec.log" s.kafka delivered)" = $N ] ||
		{ cat "$WORK/kafka-$codec.log"; fail "$codec: delivered is not $N"; }
	read_topic "text_$codec" "$WORK/$codec.got"
	echo -n "compression $codec: "
	python3 "$SRCDIR/tests/e2e/kafka_compare.py" "$WORK/ref.txt" "$WORK/$codec.got" exact ||
		fail "topic text_$codec differs from the logline file"
done

run kafka-wrong logline "{plugin: kafka, brokers: [$BOOTSTRAP], topic: wrong}"
L="$WORK/kafka-wrong.log"
[ "$(counter "$L" s.kafka not_json)" = $N ] && [ "$(counter "$L" s.kafka dropped)" = $N ] &&
	[ "$(counter "$L" s.kafka delivered)" = 0 ] || { cat "$L"; fail "logline text as json not counted"; }
read_topic wrong "$WORK/wrong.got"
[ ! -s "$WORK/wrong.got" ] || fail "text sent as json"
pass "$N records per run: json keyed over 3 partitions and 5 codecs of text arrived intact"
