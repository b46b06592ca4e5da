#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The syslog output's disk spool (spool_dir), live: seqgen's numbered UDP
# (fault_lib.sh) is logged by an nft rule to NFLOG; sluice turns it into
# logline text and sends it over TCP to tests/e2e/syslog_recv.py on the
# loopback of the same namespace, with a small memory queue (64 KiB, about
# 200 messages).  The oracle is the rule's nft counter and the packet
# numbers (SPT/DPT) in the received text, checked by fault_check.py.
#   outage  the receiver is not listening for 10 s under 3,000 packets/s,
#           then comes up: every packet the kernel logged arrives, in
#           order, none twice, nothing dropped.
#   kill9   sluice is killed with SIGKILL while messages are spooled; the
#           spool as left is read by spool_read.py (its own reader of the
#           format); sluice restarted with the same config delivers
#           exactly those messages, in order, none twice.
#   reload  SIGHUP replaces the instance while messages are spooled: the
#           new one takes the spool over when the old one has stopped and
#           delivers in order, none twice; what its queue could not hold
#           before it had the lock is counted: received + drops == logged.
#   full    spool_max_size 64 KiB and the receiver away: the drops are
#           counted exactly: received + spool_dropped + dropped_messages
#           + possibly_lost == logged, and the core's dropped agrees.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft ss python3
. "$(dirname "$0")/fault_lib.sh"
READ="$(dirname "$0")/spool_read.py"
FACTOR=${SLUICE_TEST_TIME_FACTOR:-1}

fault_net 96 56
PORT=5514
SPOOL="$WORK/spool"
RECV_PID=""

conf() {	# conf FILE MAX_SIZE
	cat >"$1" <<YAML
instances:
  fw: {plugin: nflog, group: $FG, qtimeout: 20ms}
stacks:
  s:
    - fw
    - decode
    - logline
    - {plugin: syslog, transport: tcp, address: '127.0.0.1:$PORT', queue_size: 64KiB,
       message_size: 512, reconnect_min: 50ms, reconnect_max: 200ms,
       spool_dir: '$SPOOL', spool_max_size: $2}
YAML
}
listening() { ip netns exec "$FB" ss -Hltn "sport = :$PORT" | grep -q .; }
recv_start() {
	ip netns exec "$FB" python3 "$SRCDIR/tests/e2e/syslog_recv.py" $PORT "$WORK/got.txt" 8>&- &
	RECV_PID=$!
	at_exit "kill -9 $RECV_PID"
	wait_for 10 listening || fail "receiver did not listen"
}
recv_stop() { kill "$RECV_PID"; wait "$RECV_PID" 2>/dev/null || true; }
lines() { if [ -e "$WORK/got.txt" ]; then wc -l <"$WORK/got.txt"; else echo 0; fi; }
lines_ge() { [ "$(lines)" -ge "$1" ]; }
segments() { find "$SPOOL" -name 'seg-*.spl' 2>/dev/null | wc -l; }
# the logline text of each received message, for fault_check.py
strip() { sed 's/^<[0-9]*>[A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]* [^ ]* sluice\[[0-9]*\]: //' "$1"; }
texts() { strip "$WORK/got.txt" >"$1"; }
stop_sluice() {
	kill "$SLUICE_PID"
	wait "$SLUICE_PID" || { cat "$1"; fail "sluice exit status $?"; }
}
# settle: until nothing more comes for 0.5 s; settled N: and N lines came
settle() {
	local n=-1
	while [ "$n" != "$(lines)" ]; do
		n=$(lines)
		sleep 0.5
	done
}
settled() { settle; [ "$(lines)" = "$1" ]; }
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# ---- outage: 10 s without a receiver, then everything in order ----
conf "$WORK/big.yaml" 64MiB
start_sluice "$WORK/outage.log" "$WORK/big.yaml"
base=$(nft_logged)
send_bg "$WORK/gen1.out" -n 36000 -r 3000 -t 30
sleep 10
segs=$(segments)
[ "$segs" -ge 1 ] || { cat "$WORK/outage.log"; fail "outage: nothing spooled after 10 s"; }
echo "outage: after 10 s without a receiver: $segs segments, $(du -sb "$SPOOL" | cut -f1) bytes in $SPOOL"
recv_start
wait "$GEN_PID"
logged=$(( $(nft_logged) - base ))
wait_for $((20 * FACTOR)) lines_ge "$logged" || true
settled "$logged" || { tail -5 "$WORK/outage.log"; fail "outage: received $(lines) of $logged"; }
stop_sluice "$WORK/outage.log"
recv_stop
texts "$WORK/outage.txt"
chk=$(python3 "$CHECK" text "$WORK/outage.txt") || fail "outage: $chk $(python3 "$CHECK" text "$WORK/outage.txt" 2>&1 | tail -2)"
L="$WORK/outage.log"
spooled=$(counter "$L" s.syslog spooled)
ssent=$(counter "$L" s.syslog spool_sent)
echo "outage: logged $logged, sent by seqgen $(sent_of "$WORK/gen1.out"), received $(lines); $chk;" \
	"spooled $spooled, spool_sent $ssent, dropped $(counter "$L" s.syslog dropped)," \
	"spool_bytes $(counter "$L" s.syslog spool_bytes)"
[ "$(field "$chk" records)" = "$logged" ] || fail "outage: $logged logged, $(field "$chk" records) received"
[ "$(field "$chk" holes)" = 0 ] || fail "outage: holes"
[ "$spooled" -gt 10000 ] || fail "outage: only $spooled messages spooled"
[ "$spooled" = "$ssent" ] || fail "outage: spooled $spooled, spool_sent $ssent"
[ "$(counter "$L" s.syslog dropped)" = 0 ] || fail "outage: drops"
[ "$(counter "$L" s.syslog spool_bytes)" = 0 ] || fail "outage: spool_bytes not back to 0"
[ "$(segments)" = 0 ] || fail "outage: segments left after everything was sent"

# ---- kill9: what is spooled when sluice dies is delivered by the next run ----
rm -f "$WORK/got.txt"
start_sluice "$WORK/kill1.log" "$WORK/big.yaml"
send_bg "$WORK/gen2.out" -n 9000 -r 3000 -t 30 -f 1000000
sleep 2
kill -9 "$SLUICE_PID"
wait "$SLUICE_PID" 2>/dev/null || true
wait "$GEN_PID"
python3 "$READ" "$SPOOL" >"$WORK/spooled.raw" 2>"$WORK/spool_read.err" || fail "spool_read.py failed"
strip "$WORK/spooled.raw" >"$WORK/spooled.txt"
want=$(wc -l <"$WORK/spooled.txt")
echo "kill9: left in the spool after kill -9: $(cat "$WORK/spool_read.err")"
[ "$want" -gt 1000 ] || fail "kill9: only $want messages spooled when killed"
python3 "$CHECK" text "$WORK/spooled.txt" >/dev/null || fail "kill9: the spool itself is out of order"
recv_start
start_sluice "$WORK/kill2.log" "$WORK/big.yaml"
wait_for $((20 * FACTOR)) lines_ge "$want" || true
settled "$want" || { tail -5 "$WORK/kill2.log"; fail "kill9: received $(lines) of $want spooled"; }
stop_sluice "$WORK/kill2.log"
recv_stop
texts "$WORK/kill.txt"
cmp -s "$WORK/kill.txt" "$WORK/spooled.txt" ||
	{ diff "$WORK/spooled.txt" "$WORK/kill.txt" | head -5; fail "kill9: received != what was spooled"; }
chk=$(python3 "$CHECK" text "$WORK/kill.txt") || fail "kill9: $chk"
grep -q "segments (.* bytes) from an earlier run" "$WORK/kill2.log" || fail "kill9: the restart did not find the spool"
echo "kill9: restarted sluice delivered all $want spooled messages in order; $chk;" \
	"spool_sent $(counter "$WORK/kill2.log" s.syslog spool_sent)"
[ "$(segments)" = 0 ] || fail "kill9: segments left"

# ---- reload: a replaced instance takes over the spool, order kept ----
rm -f "$WORK/got.txt"
conf "$WORK/reload.yaml" 64MiB
start_sluice "$WORK/reload.log" "$WORK/reload.yaml"
base=$(nft_logged)
send_bg "$WORK/gen4.out" -n 9000 -r 3000 -t 30 -f 3000000
sleep 1.5
sed -i 's/queue_size: 64KiB/queue_size: 128KiB/' "$WORK/reload.yaml"	# a new instance
kill -HUP "$SLUICE_PID"
wait "$GEN_PID"
logged=$(( $(nft_logged) - base ))
recv_start
wait_for $((20 * FACTOR)) lines_ge "$logged" || true
settle
stop_sluice "$WORK/reload.log"
recv_stop
grep -q "reload: .* 1 added, 1 removed" "$WORK/reload.log" || { cat "$WORK/reload.log"; fail "reload: the instance was not replaced"; }
texts "$WORK/reload.txt"
chk=$(python3 "$CHECK" text "$WORK/reload.txt") || fail "reload: $chk"
L="$WORK/reload.log"
sd=$(counter "$L" s.syslog spool_dropped)
dm=$(counter "$L" s.syslog dropped_messages)
echo "reload: logged $logged, received $(lines), spool_dropped $sd (the new instance's queue full before" \
	"it had the lock), dropped_messages $dm; $chk; $(grep -o 'took over the spool.*' "$L")"
[ $(( $(field "$chk" records) + sd + dm )) = "$logged" ] ||
	fail "reload: $logged logged != $(field "$chk" records) received + $sd + $dm dropped"
[ "$(field "$chk" records)" -ge $((logged * 9 / 10)) ] || fail "reload: most messages lost"

# ---- full: a 64 KiB spool, its drops counted exactly ----
rm -f "$WORK/got.txt"
conf "$WORK/small.yaml" 64KiB
start_sluice "$WORK/full.log" "$WORK/small.yaml"
base=$(nft_logged)
send -n 6000 -r 3000 -t 30 -f 2000000 >"$WORK/gen3.out"
logged=$(( $(nft_logged) - base ))
wait_for $((10 * FACTOR)) input_caught_up "$WORK/full.log" "$logged" || fail "full: nflog got $(counter "$WORK/full.log" fw in) of $logged"
recv_start
sleep 1
settle
stop_sluice "$WORK/full.log"
recv_stop
L="$WORK/full.log"
got=$(lines)
sd=$(counter "$L" s.syslog spool_dropped)
dm=$(counter "$L" s.syslog dropped_messages)
pl=$(counter "$L" s.syslog possibly_lost)
core=$(counter "$L" s.syslog dropped)
texts "$WORK/full.txt"
chk=$(python3 "$CHECK" text "$WORK/full.txt") || fail "full: $chk"
echo "full: logged $logged, nflog in $(counter "$L" fw in), received $got, spool_dropped $sd," \
	"dropped_messages $dm, possibly_lost $pl, core dropped $core, spooled $(counter "$L" s.syslog spooled); $chk"
[ "$(counter "$L" fw in)" = "$logged" ] || fail "full: nflog read $(counter "$L" fw in) of $logged"
[ "$sd" -gt 0 ] || fail "full: nothing dropped by a 64 KiB spool"
[ $((got + sd + dm + pl)) = "$logged" ] || fail "full: $got + $sd + $dm + $pl != $logged"
[ "$core" = $((sd + dm + pl)) ] || fail "full: core dropped $core != $sd + $dm + $pl"
pass "outage, kill -9, reload and a full spool: every message delivered in order or counted"
