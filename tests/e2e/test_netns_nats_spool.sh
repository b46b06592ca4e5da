#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The nats output into a JetStream stream, and a server that stops
# answering: nftables in a namespace logs (and counts) UDP datagrams to an
# NFLOG group; one nflog input fans out to json -> nats (subject
# fw.{nflog_group}.{ip_proto}, a disk spool) and to json -> file.  Traffic
# goes in three rounds: the server up, the server frozen (SIGSTOP: its
# socket stays open, nothing is answered, libnats notices by its pings),
# the server back (SIGCONT).  The frozen round must go to the spool, and
# afterwards the stream must hold exactly the nft counter's number of
# messages, equal to the file's lines in the same order, each once with its
# own Nats-Msg-Id: nothing lost, nothing twice although the batches that
# timed out were sent again.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
G=24
ROUND=400
netns_pair sln 98
NATS_NETNS=$B
. "$(dirname "$0")/nats_lib.sh"

nats_nft_log sluice_nats_e2e 10.98.0.1 sluice-nats

nats_single 120

cat >"$WORK/live.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  n: [fw, decode, json, {plugin: nats, servers: [nats://127.0.0.1:4222],
      subject: "fw.{nflog_group}.{ip_proto}", spool_dir: "$WORK/spool",
      batch_size: 100, flush_interval: 100ms, ack_timeout: 1s, retry_max: 1s}]
  f: [fw, decode, json, {plugin: file, file: "$WORK/ref.json"}]
YAML
L="$WORK/sluice.log"
nats_sluice 1

# send FIRST COUNT: datagrams FIRST.. from A, a little paced
send() { nats_send 10.98.0 nats "$@"; }
# live_counter NAME: the nats instance's counter NAME now (SIGUSR1)
live_counter() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	counter "$L" n.nats "$1"
}
spooled() { [ "$(live_counter spooled)" -gt 0 ] 2>/dev/null; }

send 0 $ROUND
wait_for 30 stream_has $ROUND || fail "round 1: the stream holds $(nats_cli 4222 count LOGS), expected $ROUND"

kill -STOP "$NATS_PID_n1"
send $ROUND $ROUND
wait_for 60 grep -qs "not connected to a NATS server" "$L" ||
	{ cat "$L"; fail "the frozen server was not noticed"; }
wait_for 30 spooled || { cat "$L"; fail "nothing went to the spool while the server was frozen"; }
kill -CONT "$NATS_PID_n1"

send $((2 * ROUND)) $ROUND
logged=$(nft_count "$B" sluice_nats_e2e logged)
[ "$logged" = $((3 * ROUND)) ] || fail "nft counted $logged of $((3 * ROUND)) datagrams"
wait_for 60 stream_has "$logged" ||
	{ cat "$L"; fail "the stream holds $(nats_cli 4222 count LOGS), nft counted $logged"; }
wait_for 10 lines_ge "$WORK/ref.json" "$logged" || fail "the file has $(wc -l <"$WORK/ref.json") lines"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$L"; fail "sluice exited with an error"; }

grep -E "n.nats .*(dropped|dropped_records|spool_dropped|spool_corrupt|no_text|bad_subject)=[1-9]" "$L" &&
	fail "records counted lost"
[ "$(counter "$L" n.nats spooled)" -gt 0 ] || fail "spooled is 0"
nats_cli 4222 dump LOGS "$WORK/stream.json" || fail "cannot read the stream back"
python3 "$SRCDIR/tests/e2e/nats_compare.py" "$WORK/ref.json" "$WORK/stream.json" "fw.$G.17" ordered ||
	fail "the stream differs from the json file"
pass "nft counted $logged; $(counter "$L" n.nats spooled) spooled while the server was frozen; the stream holds each once, in order"
