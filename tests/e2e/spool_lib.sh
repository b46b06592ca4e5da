# SPDX-License-Identifier: GPL-2.0-or-later
# The syslog spool tests' shared part, for test_netns_syslog_spool.sh (plain
# TCP to syslog_recv.py) and spool_rsyslog_lib.sh (TLS or RELP to rsyslogd).
# Source it after lib.sh, fault_lib.sh and fault_net, with PORT, DEST (the
# syslog instance's transport options), GOT (the receiver's file) and SPOOL
# set and recv_start, recv_stop and texts FILE (the logline text of each
# message in GOT) defined.  It gives conf FILE MAX_SIZE, the helpers below
# and the phases outage, kill9 and full, which set OUTAGE, KILL9 and FULL to
# what they measured.
READ="$(dirname "$0")/spool_read.py"

conf() {	# conf FILE MAX_SIZE
	cat >"$1" <<YAML
instances:
  fw: {plugin: nflog, group: $FG, qtimeout: 20ms}
stacks:
  s:
    - fw
    - decode
    - logline
    - {plugin: syslog, $DEST, address: '127.0.0.1:$PORT', queue_size: 64KiB,
       message_size: 512, reconnect_min: 50ms, reconnect_max: 200ms,
       spool_dir: '$SPOOL', spool_max_size: $2}
YAML
}
listening() { ip netns exec "$FB" ss -Hltn "sport = :$PORT" | grep -q .; }
lines() { if [ -e "$GOT" ]; then wc -l <"$GOT"; else echo 0; fi; }
lines_ge() { [ "$(lines)" -ge "$1" ]; }
segments() { find "$SPOOL" -name 'seg-*.spl' 2>/dev/null | wc -l; }
strip() { sed 's/^<[0-9]*>[A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]* [^ ]* sluice\[[0-9]*\]: //' "$1"; }
stop_sluice() {
	kill "$SLUICE_PID"
	wait "$SLUICE_PID" || { cat "$1"; fail "sluice exit status $?"; }
}
# spooled_over LOG N: SIGUSR1 shows more than N messages spooled
spooled_over() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.05
	[ "$(counter "$1" s.syslog spooled)" -gt "$2" ] 2>/dev/null
}
# all_accounted LOG LOGGED: SIGUSR1 shows every logged message received
# or counted as dropped by the spool or the output
all_accounted() {
	local sd dm pl
	kill -USR1 "$SLUICE_PID"
	sleep 0.05
	sd=$(counter "$1" s.syslog spool_dropped) dm=$(counter "$1" s.syslog dropped_messages)
	pl=$(counter "$1" s.syslog possibly_lost)
	[ $(($(lines) + ${sd:-0} + ${dm:-0} + ${pl:-0})) = "$2" ]
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
# first_in_order FILE: the first arrival of each number is in increasing order
first_in_order() {
	python3 - "$1" <<'PY'
import re, sys
seen, last, bad = set(), -1, 0
for l in open(sys.argv[1]):
    m = re.search(r"SPT=(\d+) DPT=(\d+)", l)
    s = (int(m.group(2)) - 20000) * 64000 + int(m.group(1)) - 1024
    if s in seen:
        continue
    seen.add(s)
    bad += s < last
    last = s
print(bad)
PY
}

# ---- outage: no receiver until more than 10,000 are spooled, then
# everything in order, none twice ----
phase_outage() {
	conf "$WORK/big.yaml" 64MiB
	start_sluice "$WORK/outage.log" "$WORK/big.yaml"
	local base logged chk L spooled ssent
	base=$(nft_logged)
	send_bg "$WORK/gen1.out" -n 36000 -r 3000 -t 60
	# The spool, not a time: on a busy machine the traffic may come late.
	wait_for 30 spooled_over "$WORK/outage.log" 10000 ||
		{ cat "$WORK/outage.log"; fail "outage: $(counter "$WORK/outage.log" s.syslog spooled) spooled without a receiver"; }
	[ "$(segments)" -ge 1 ] || { cat "$WORK/outage.log"; fail "outage: no spool segment"; }
	echo "outage: without a receiver: $(segments) segments, $(du -sb "$SPOOL" | cut -f1) bytes in the spool"
	recv_start
	wait "$GEN_PID"
	logged=$(( $(nft_logged) - base ))
	wait_for 20 lines_ge "$logged" || true
	settled "$logged" || { tail -5 "$WORK/outage.log"; fail "outage: received $(lines) of $logged"; }
	stop_sluice "$WORK/outage.log"
	recv_stop
	texts "$WORK/outage.txt"
	chk=$(python3 "$CHECK" text "$WORK/outage.txt") ||
		fail "outage: $chk $(python3 "$CHECK" text "$WORK/outage.txt" 2>&1 | tail -2)"
	L="$WORK/outage.log"
	spooled=$(counter "$L" s.syslog spooled)
	ssent=$(counter "$L" s.syslog spool_sent)
	OUTAGE="logged $logged, received $(lines), $chk; spooled $spooled, spool_sent $ssent, dropped $(counter "$L" s.syslog dropped)"
	echo "outage: $OUTAGE, spool_bytes $(counter "$L" s.syslog spool_bytes), segments left $(segments)"
	[ "$(field "$chk" records)" = "$logged" ] || fail "outage: $logged logged, $(field "$chk" records) received"
	[ "$(field "$chk" holes)" = 0 ] || fail "outage: holes"
	[ "$spooled" -gt 10000 ] || fail "outage: only $spooled messages spooled"
	[ "$spooled" = "$ssent" ] || fail "outage: spooled $spooled, spool_sent $ssent"
	[ "$(counter "$L" s.syslog dropped)" = 0 ] || fail "outage: drops"
	[ "$(counter "$L" s.syslog spool_bytes)" = 0 ] || fail "outage: spool_bytes not back to 0"
	[ "$(segments)" = 0 ] || fail "outage: segments left after everything was sent"
	rm -f "$GOT"
}

# ---- kill9: what is spooled when sluice dies is delivered by the next run ----
phase_kill9() {
	local want chk extra
	conf "$WORK/big.yaml" 64MiB
	start_sluice "$WORK/kill1.log" "$WORK/big.yaml"
	send_bg "$WORK/gen2.out" -n 9000 -r 3000 -t 60 -f 1000000
	wait_for 30 spooled_over "$WORK/kill1.log" 2000 ||
		fail "kill9: $(counter "$WORK/kill1.log" s.syslog spooled) spooled without a receiver"
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
	wait_for 20 lines_ge "$want" || true
	settled "$want" || { tail -5 "$WORK/kill2.log"; fail "kill9: received $(lines) of $want spooled"; }
	stop_sluice "$WORK/kill2.log"
	recv_stop
	texts "$WORK/kill.txt"
	cmp -s "$WORK/kill.txt" "$WORK/spooled.txt" ||
		{ diff "$WORK/spooled.txt" "$WORK/kill.txt" | head -5; fail "kill9: received != what was spooled"; }
	chk=$(python3 "$CHECK" text "$WORK/kill.txt") || fail "kill9: $chk"
	grep -q "segments (.* bytes) from an earlier run" "$WORK/kill2.log" || fail "kill9: the restart did not find the spool"
	KILL9="$want spooled at the kill, all delivered by the restart in order, none twice"
	echo "kill9: $KILL9; $chk; spool_sent $(counter "$WORK/kill2.log" s.syslog spool_sent)"
	[ "$(segments)" = 0 ] || fail "kill9: segments left"
	rm -f "$GOT"
}

# ---- full: a 64 KiB spool, its drops counted exactly ----
phase_full() {
	local base logged got sd dm pl core chk L
	conf "$WORK/small.yaml" 64KiB
	start_sluice "$WORK/full.log" "$WORK/small.yaml"
	base=$(nft_logged)
	send -n 6000 -r 3000 -t 30 -f 2000000 >"$WORK/gen3.out"
	logged=$(( $(nft_logged) - base ))
	wait_for 10 input_caught_up "$WORK/full.log" "$logged" ||
		fail "full: nflog got $(counter "$WORK/full.log" fw in) of $logged"
	recv_start
	wait_for 30 all_accounted "$WORK/full.log" "$logged" || true	# the checks below say what is missing
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
	FULL="logged $logged, received $got, spool_dropped $sd, dropped_messages $dm, possibly_lost $pl, core dropped $core"
	echo "full: $FULL, spooled $(counter "$L" s.syslog spooled); $chk"
	[ "$(counter "$L" fw in)" = "$logged" ] || fail "full: nflog read $(counter "$L" fw in) of $logged"
	[ "$sd" -gt 0 ] || fail "full: nothing dropped by a 64 KiB spool"
	[ $((got + sd + dm + pl)) = "$logged" ] || fail "full: $got + $sd + $dm + $pl != $logged"
	[ "$core" = $((sd + dm + pl)) ] || fail "full: core dropped $core != $sd + $dm + $pl"
	rm -f "$GOT"
	rm -rf "$SPOOL"
}
