#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The nats output and a JetStream cluster losing its stream leader: three
# nats-server processes routed together on loopback in a namespace, a
# stream with 3 replicas and a duplicate window, and nftables logging (and
# counting) a UDP flood to an NFLOG group.  One nflog input fans out to
# json -> nats (all three servers) and to json -> file.  In the middle of
# the flood the stream's leader is killed with -9: the other two elect a
# new one, batches that were not acknowledged are sent again with the same
# Nats-Msg-Id, and the stream must end with exactly as many messages as the
# kernel logged, each record once (each id once, the messages equal to the
# file's lines).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
G=25
netns_pair slc 97
NATS_NETNS=$B
. "$(dirname "$0")/nats_lib.sh"

nats_nft_log sluice_natsc_e2e 10.97.0.1 sluice-natsc

declare -A PORT=([n1]=4222 [n2]=4223 [n3]=4224)
for n in n1 n2 n3; do
	nats_start "$n" "${PORT[$n]}" $((PORT[$n] + 2000)) 6222 6223 6224
done
for n in n1 n2 n3; do nats_ready "${PORT[$n]}"; done
create() { nats_cli 4222 create LOGS "fw.>" 3 120 >/dev/null 2>"$WORK/create.err"; }
wait_for 60 create || fail "cannot create the stream: $(cat "$WORK/create.err")"

cat >"$WORK/live.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, qtimeout: 20ms}
stacks:
  # queue: the output's thread waits out the election (acknowledgements
  # timing out, then resends); its queue holds the flood meanwhile
  n: [fw, decode, json, {plugin: nats, queue: 4096,
      servers: [nats://127.0.0.1:4222, nats://127.0.0.1:4223, nats://127.0.0.1:4224],
      subject: "fw.{nflog_group}", spool_dir: "$WORK/spool",
      batch_size: 200, flush_interval: 100ms, ack_timeout: 2s, retry_max: 1s}]
  f: [fw, decode, json, {plugin: file, file: "$WORK/ref.json"}]
YAML
L="$WORK/sluice.log"
nats_sluice 1

# The flood: paced datagrams until $WORK/stop exists.
ip netns exec "$A" python3 - "$WORK/stop" <<'PY' &
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.97.0.1", 30000))
i = 0
while not os.path.exists(sys.argv[1]):
    s.sendto(b"natsc-%d" % i, ("10.97.0.2", 9999))
    i += 1
    if i % 50 == 0:
        time.sleep(0.01)
PY
GEN=$!
at_exit "touch $WORK/stop; kill $GEN"

# count_over PORT N: the stream holds more than N messages (asked at PORT)
count_over() { [ "$(nats_cli "$1" count LOGS 2>/dev/null)" -gt "$2" ] 2>/dev/null; }
wait_for 60 count_over 4222 1000 || { cat "$L"; fail "the stream does not fill"; }
leader=$(nats_cli 4222 leader LOGS) || fail "no stream leader"
[ -n "${PORT[$leader]:-}" ] || fail "leader '$leader' is not one of ours"
before=$(nats_cli "${PORT[$leader]}" count LOGS)
pid_var="NATS_PID_$leader"
kill -9 "${!pid_var}"
for n in n1 n2 n3; do [ "$n" = "$leader" ] || Q=${PORT[$n]}; done
# the flood goes on into the new leader: at least as much again
wait_for 120 count_over "$Q" $((2 * before)) ||
	{ cat "$L"; fail "no new records after the leader $leader was killed at $before"; }
touch "$WORK/stop"
wait "$GEN"
logged=$(nft_count "$B" sluice_natsc_e2e logged)
wait_for 120 stream_has "$logged" "$Q" ||
	{ cat "$L"; fail "the stream holds $(nats_cli "$Q" count LOGS), nft counted $logged"; }
wait_for 10 lines_ge "$WORK/ref.json" "$logged" || fail "the file has $(wc -l <"$WORK/ref.json") lines"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$L"; fail "sluice exited with an error"; }

grep -E "n.nats .*(dropped|dropped_records|spool_dropped|spool_corrupt|no_text|bad_subject|queue_dropped)=[1-9]" "$L" &&
	fail "records counted lost"
grep -E "counters: fw .*(lost|seq_lost|enobufs)=[1-9]" "$L" && fail "the kernel's records were lost before sluice"
# the failover must have made batches fail, else nothing was resent
resent=$(($(counter "$L" n.nats timeouts) + $(counter "$L" n.nats ack_errors)))
[ "$resent" -gt 0 ] || { cat "$L"; fail "no batch failed across the failover: nothing was resent"; }
nats_cli "$Q" dump LOGS "$WORK/stream.json" || fail "cannot read the stream back"
python3 "$SRCDIR/tests/e2e/nats_compare.py" "$WORK/ref.json" "$WORK/stream.json" "fw.$G" unordered ||
	fail "the stream differs from the json file"
pass "leader $leader killed at $before messages, $resent failed acknowledgements; nft counted $logged, the stream holds each once"
