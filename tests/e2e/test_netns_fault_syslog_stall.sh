#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fault: a syslog TCP receiver that accepts and then never reads, next to
# a pcap stack on the same nflog input, under live traffic (60,000 numbered
# packets at 30k/s).  syslog runs on its own thread (the default for a
# network output), fed through the core's queue.  The pcap stack must lose
# nothing: the pcap (counted by capinfos and tcpdump -r, numbers checked by
# fault_check.py) holds exactly what the nft counter counted.  The syslog
# stack's queue fills and it drops, every drop counted: its `in` equals the
# nft counter, the core's `dropped` equals what the plugin and the core's
# queue say they lost (dropped_messages + possibly_lost + queue_dropped),
# and in = out + dropped.  After sluice has exited the receiver finally
# reads: it gets exactly out + possibly_lost whole messages: what the
# receiver's kernel acknowledged while sluice ran, and what was still
# unacknowledged in the socket at exit (counted as possibly lost, since
# sluice cannot know the receiver will read it), none twice.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 tcpdump capinfos
. "$(dirname "$0")/fault_lib.sh"

N=60000 RATE=30000
fault_net 91 51
PORT=6514

# The receiver: a small receive buffer, accept, then nothing until told.
ip netns exec "$FB" python3 - "$WORK" $PORT <<'PY' &
import os, socket, sys, time
work, port = sys.argv[1], int(sys.argv[2])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)   # inherited by the accepted socket
ls.bind(("127.0.0.1", port))
ls.listen(1)
open(work + "/rx.ready", "w").close()
c, _ = ls.accept()
open(work + "/rx.accepted", "w").close()
while not os.path.exists(work + "/rx.go"):     # never read while sluice runs
    time.sleep(0.05)
c.settimeout(5)
data = b""
while True:
    try:
        b = c.recv(1 << 20)
    except socket.timeout:
        break
    if not b:
        break
    data += b
open(work + "/rx.data", "wb").write(data)
PY
RX_PID=$!
at_exit "kill $RX_PID"
wait_for 10 test -e "$WORK/rx.ready" || fail "receiver did not start"

cat >"$WORK/sluice.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $FG, qtimeout: 20ms}
stacks:
  cap: [fw, {plugin: pcap, file: "$WORK/cap.pcap", linktype: raw}]
  sys: [fw, decode, logline, {plugin: syslog, transport: tcp, address: "127.0.0.1:$PORT",
                              queue_size: 256KiB}]
YAML
start_sluice "$WORK/sluice.log" "$WORK/sluice.yaml"
wait_for 10 test -e "$WORK/rx.accepted" || { cat "$WORK/sluice.log"; fail "sluice did not connect"; }

send -n $N -r $RATE -t 20 >"$WORK/gen.out"
logged=$(nft_logged)
wait_for 20 input_caught_up "$WORK/sluice.log" "$logged" ||
	{ cat "$WORK/sluice.log"; fail "nflog received $(counter "$WORK/sluice.log" fw in) of $logged"; }
kill -0 "$SLUICE_PID" || fail "sluice died"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with status $?"; }
touch "$WORK/rx.go"
wait "$RX_PID" || fail "receiver failed"
L="$WORK/sluice.log"
grep "counters:" "$L"
grep -q "started: .* threads" "$L" || fail "syslog did not get a thread of its own"

# ---- the pcap stack: lossless ----
caps=$(capinfos -M -c -T "$WORK/cap.pcap" | awk -F'\t' 'NR == 2 {print $2}')
tdump=$(tcpdump --count -r "$WORK/cap.pcap" 2>/dev/null | sed -n "s/ packets\?$//p")
figs=$(python3 "$CHECK" pcap "$WORK/cap.pcap") || fail "cap.pcap: $figs"
echo "kernel logged $logged (sent $(sent_of "$WORK/gen.out")); pcap: capinfos $caps, tcpdump $tdump, $figs"
[ "$(counter "$L" fw enobufs)" = 0 ] && [ "$(counter "$L" fw seq_lost)" = 0 ] ||
	fail "nflog overran (enobufs $(counter "$L" fw enobufs), seq_lost $(counter "$L" fw seq_lost)): the test's load is too high for this machine"
[ "$caps" = "$logged" ] && [ "$tdump" = "$logged" ] || fail "pcap holds $caps (capinfos) / $tdump (tcpdump) packets, the kernel logged $logged"
[ "$(counter "$L" cap.pcap dropped)" = 0 ] || fail "the pcap stack dropped records"

# ---- the syslog stack: drops, all counted ----
in=$(counter "$L" sys.syslog in)
out=$(counter "$L" sys.syslog out)
dropped=$(counter "$L" sys.syslog dropped)
dm=$(counter "$L" sys.syslog dropped_messages)
pl=$(counter "$L" sys.syslog possibly_lost)
qd=$(counter "$L" sys.syslog queue_dropped)
echo "syslog: in=$in out=$out dropped=$dropped dropped_messages=$dm possibly_lost=$pl queue_dropped=$qd queue_high=$(counter "$L" sys.syslog queue_high)"
[ "$in" = "$logged" ] || fail "syslog in=$in, the kernel logged $logged"
[ "$dm" -gt 0 ] || fail "the stalled receiver did not make the queue drop (dropped_messages=0): the fault did not happen"
[ "$dropped" = $((dm + pl + qd)) ] ||
	fail "core dropped=$dropped but dropped_messages=$dm + possibly_lost=$pl + queue_dropped=$qd"
[ $((out + dropped)) = "$in" ] || fail "in=$in != out=$out + dropped=$dropped"

# ---- what the receiver read at last: exactly out + possibly_lost whole messages ----
# The stream may end inside one message: the one sluice was part-way
# through when it gave up at exit (TCP cannot take bytes back); that one
# is counted in dropped, not in out.  Anything else malformed fails.
got=$(python3 - "$WORK/rx.data" <<'PY'
import re, sys
d = open(sys.argv[1], "rb").read()
pos, seen, bad, total, cut = 0, set(), 0, 0, 0
line = re.compile(rb"^<166>\w{3} [ \d]\d \d\d:\d\d:\d\d \S+ sluice\[\d+\]: fault IN=vb .* SPT=(\d+) DPT=(\d+) LEN=\d+ $")
while pos < len(d):
    sp = d.index(b" ", pos)
    n = int(d[pos:sp])
    msg = d[sp + 1:sp + 1 + n]
    pos = sp + 1 + n
    if len(msg) < n and pos >= len(d):
        cut = len(msg)
        print("the stream ends inside a message: %d of %d bytes" % (len(msg), n), file=sys.stderr)
        break
    total += 1
    m = line.match(msg)
    if not m:
        bad += 1
        print("malformed message %d: %r" % (total, msg[:100]), file=sys.stderr)
        continue
    seen.add((int(m.group(1)), int(m.group(2))))
print(len(seen), total, bad, cut)
PY
) || fail "cannot parse what the receiver read"
read -r uniq total bad cut <<<"$got"
echo "receiver read $total whole messages ($uniq distinct, $bad malformed), then ${cut} bytes of a cut one"
[ "$bad" = 0 ] && [ "$uniq" = "$total" ] || fail "receiver: $bad malformed, $((total - uniq)) repeated"
[ "$total" = $((out + pl)) ] ||
	fail "the receiver read $total whole messages, sluice counted out=$out + possibly_lost=$pl"
pass "$logged packets at ${RATE}/s: pcap $caps/$logged lossless; stalled syslog on its thread in=$in out=$out dropped=$dropped (=$dm+$pl+$qd), receiver read $total"
