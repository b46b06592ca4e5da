#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The nats output stopped while its JetStream server is frozen, then
# started again: nftables in a namespace logs (and counts) UDP datagrams to
# an NFLOG group; json -> nats (with a disk spool) and json -> file.  The
# server is frozen (SIGSTOP) and more traffic comes; SIGTERM must end the
# daemon within its stop_timeout, cleanly, with the records kept in the
# spool.  Then the server resumes, the daemon starts again on the same
# spool, a last round of traffic comes: the stream must hold exactly the
# nft counter's records, each once, in order.  Whatever the frozen server
# had read before the stop and stores when it resumes, the spooled records
# are resent with the ids they had, so it stores none of them twice.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
G=26
ROUND=300
netns_pair slr 96
NATS_NETNS=$B
. "$(dirname "$0")/nats_lib.sh"

nats_nft_log sluice_natsr_e2e 10.96.0.1 sluice-natsr

nats_single 300

cat >"$WORK/live.yaml" <<YAML
daemon: {stop_timeout: 10s}
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  n: [fw, decode, json, {plugin: nats, servers: [nats://127.0.0.1:4222],
      subject: "fw.{nflog_group}", spool_dir: "$WORK/spool",
      batch_size: 100, flush_interval: 100ms, ack_timeout: 1s, retry_max: 1s}]
  f: [fw, decode, json, {plugin: file, file: "$WORK/ref.json"}]
YAML
L="$WORK/sluice.log"
nats_sluice 1

# send FIRST COUNT: datagrams FIRST.. from A, a little paced
send() { nats_send 10.96.0 natsr "$@"; }

send 0 $ROUND
wait_for 30 stream_has $ROUND || fail "round 1: the stream holds $(nats_cli 4222 count LOGS), expected $ROUND"

kill -STOP "$NATS_PID_n1"
send $ROUND $ROUND
wait_for 10 lines_ge "$WORK/ref.json" $((2 * ROUND)) || fail "round 2 did not reach the file"
kill -TERM "$SLUICE_PID"
gone() { ! kill -0 "$SLUICE_PID" 2>/dev/null; }
# stop_timeout is 10 s; the output's own waits are bounded well below it
wait_for 30 gone || fail "sluice did not stop while the server was frozen"
wait "$SLUICE_PID" || { cat "$L"; fail "sluice's stop with the server frozen failed"; }
[ "$(counter "$L" n.nats spool_bytes)" -gt 0 ] 2>/dev/null || { cat "$L"; fail "nothing was kept in the spool"; }
grep -E "n.nats .*(dropped|dropped_records|spool_dropped|spool_corrupt)=[1-9]" "$L" &&
	fail "records counted lost at the stop"

kill -CONT "$NATS_PID_n1"
nats_sluice 2
send $((2 * ROUND)) $ROUND
logged=$(nft_count "$B" sluice_natsr_e2e logged)
[ "$logged" = $((3 * ROUND)) ] || fail "nft counted $logged of $((3 * ROUND)) datagrams"
wait_for 60 stream_has "$logged" ||
	{ cat "$L"; fail "the stream holds $(nats_cli 4222 count LOGS), nft counted $logged"; }
wait_for 10 lines_ge "$WORK/ref.json" "$logged" || fail "the file has $(wc -l <"$WORK/ref.json") lines"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$L"; fail "sluice exited with an error"; }
grep -E "n.nats .*(dropped|dropped_records|spool_dropped|spool_corrupt)=[1-9]" "$L" &&
	fail "records counted lost"
nats_cli 4222 dump LOGS "$WORK/stream.json" || fail "cannot read the stream back"
python3 "$SRCDIR/tests/e2e/nats_compare.py" "$WORK/ref.json" "$WORK/stream.json" "fw.$G" ordered ||
	fail "the stream differs from the json file"
pass "stopped with the server frozen and started again: nft counted $logged, the stream holds each once, in order"
