#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fault: a file sink that stops reading under live traffic (numbered
# packets at 20k/s, divided by SLUICE_TEST_TIME_FACTOR, flowing until the
# sink has read again after the stall), next to a pcap stack on the same
# nflog input.  The reader stops 1 s after its first data and reads again
# once the file output counted drops at its queue (the event the stall
# must cause, however slow the machine).  The slow sink is a FIFO whose reader pauses, so the file
# output's write() blocks; it runs with `thread: true, queue: 4,
# when_full: drop`, so its thread blocks, not the input.  The pcap stack
# must lose nothing (capinfos, tcpdump -r and fault_check.py against the
# nft counter).  The file stack drops whole records at its queue, every one
# counted: in = nft counter, dropped = queue_dropped > 0, in = out +
# dropped, and what the reader got is exactly `out` whole lines, none
# twice, in increasing order (one thread writes them, in queue order),
# with the gap of the stall between two runs (segments=2: it recovered).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 tcpdump capinfos
. "$(dirname "$0")/fault_lib.sh"

RATE=$((20000 / TIME_FACTOR))
fault_net 94 54
mkfifo "$WORK/slow.fifo"

# The reader: read 1 s, stop until rx.resume exists (the sink stalls), then
# read to the end.
python3 - "$WORK" <<'PY' &
import os, sys, time
work = sys.argv[1]
# Open without waiting for a writer (sluice's open needs a reader), then block.
fd = os.open(work + "/slow.fifo", os.O_RDONLY | os.O_NONBLOCK)
os.set_blocking(fd, True)
f = os.fdopen(fd, "rb", buffering=0)
out = open(work + "/rx.log", "wb")
open(work + "/rx.ready", "w").close()
t0 = time.time()
paused = False
while True:
    if not paused and os.path.exists(work + "/rx.first") and time.time() - t0 > 1:
        open(work + "/rx.paused", "w").close()
        while not os.path.exists(work + "/rx.resume"):
            time.sleep(0.05)
        paused = True
    b = f.read(1 << 16)
    if not b and not os.path.exists(work + "/rx.first"):
        time.sleep(0.01)        # no writer yet
        continue
    if not b:
        break
    if not os.path.exists(work + "/rx.first"):
        open(work + "/rx.first", "w").close()
        t0 = time.time()
    out.write(b)
out.close()
PY
RX_PID=$!
at_exit "kill $RX_PID"
wait_for 10 test -e "$WORK/rx.ready" || fail "reader did not start"

cat >"$WORK/sluice.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $FG, qtimeout: 20ms}
stacks:
  cap: [fw, {plugin: pcap, file: "$WORK/cap.pcap", linktype: raw}]
  slow: [fw, decode, logline, {plugin: file, file: "$WORK/slow.fifo", flush_interval: 20ms,
                               thread: true, queue: 4, when_full: drop}]
YAML
start_sluice "$WORK/sluice.log" "$WORK/sluice.yaml"
send_bg "$WORK/gen.out" -n 20000000 -r $RATE -t 600
wait_for 30 test -e "$WORK/rx.paused" || fail "the reader never paused: the fault did not happen"
wait_for 30 live_over "$WORK/sluice.log" slow.file queue_dropped 0 ||
	fail "the stalled sink did not fill the queue (queue_dropped=0)"
out_at=$(counter "$WORK/sluice.log" slow.file out)
touch "$WORK/rx.resume"
# Records written after the stall (5,000 more than the queue could hold
# then: some came after the drops), while the traffic still flows.
wait_for 30 live_over "$WORK/sluice.log" slow.file out $((out_at + 5000)) ||
	fail "nothing was written after the stall"
kill -0 "$GEN_PID" || fail "the traffic ended during the stall"
kill -TERM "$GEN_PID"
wait "$GEN_PID" || true
logged=$(nft_logged)
wait_for 20 input_caught_up "$WORK/sluice.log" "$logged" ||
	{ cat "$WORK/sluice.log"; fail "nflog received $(counter "$WORK/sluice.log" fw in) of $logged"; }
[ -e "$WORK/rx.paused" ] || fail "the reader never paused: the fault did not happen"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with status $?"; }
wait "$RX_PID" || fail "reader failed"
L="$WORK/sluice.log"
grep "counters:" "$L"

# ---- the pcap stack: lossless ----
caps=$(capinfos -M -c -T "$WORK/cap.pcap" | awk -F'\t' 'NR == 2 {print $2}')
tdump=$(tcpdump --count -r "$WORK/cap.pcap" 2>/dev/null | sed -n "s/ packets\?$//p")
figs=$(python3 "$CHECK" pcap "$WORK/cap.pcap") || fail "cap.pcap: $figs"
echo "kernel logged $logged (sent $(sent_of "$WORK/gen.out")); pcap: capinfos $caps, tcpdump $tdump, $figs"
[ "$(counter "$L" fw enobufs)" = 0 ] && [ "$(counter "$L" fw seq_lost)" = 0 ] ||
	fail "nflog overran (enobufs $(counter "$L" fw enobufs)): the stalled sink held up the input"
[ "$caps" = "$logged" ] && [ "$tdump" = "$logged" ] || fail "pcap holds $caps / $tdump packets, the kernel logged $logged"

# ---- the stalled file stack: drops at its queue, all counted ----
in=$(counter "$L" slow.file in)
out=$(counter "$L" slow.file out)
dropped=$(counter "$L" slow.file dropped)
qd=$(counter "$L" slow.file queue_dropped)
tf=$(python3 "$CHECK" text "$WORK/rx.log") || fail "what the reader got: $tf"
records=$(echo "$tf" | tr ' ' '\n' | sed -n 's/^records=//p')
echo "file on its thread: in=$in out=$out dropped=$dropped queue_dropped=$qd queue_high=$(counter "$L" slow.file queue_high); reader: $tf"
[ "$in" = "$logged" ] || fail "file in=$in, the kernel logged $logged"
[ "$qd" -gt 0 ] || fail "the stalled sink did not fill the queue (queue_dropped=0)"
[ "$dropped" = "$qd" ] || fail "core dropped=$dropped but queue_dropped=$qd"
[ $((out + dropped)) = "$in" ] || fail "in=$in != out=$out + dropped=$dropped"
[ "$records" = "$out" ] || fail "the reader got $records lines, sluice counted out=$out"
segs=$(echo "$tf" | tr ' ' '\n' | sed -n 's/^segments=//p')
[ "$segs" -ge 2 ] || fail "nothing was written after the stall (segments=$segs)"
pass "$logged packets at ${RATE}/s, sink stalled until its queue dropped: pcap $caps/$logged lossless; file on its thread in=$in out=$out dropped=$dropped (=queue_dropped), reader got $records lines in order"
