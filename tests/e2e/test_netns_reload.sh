#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Reload under traffic.  Numbered UDP (seqgen, 4000/s) is logged by one nft
# rule to NFLOG group FG; sluice's input `fw` (on its own thread) feeds two
# stacks that stay: `keep` (decode, logline, file on fw's thread) and
# `keept` (the same output with thread: true, behind its queue).  20
# reloads alternately add and remove a stack `extra` (a third file below
# the kept logline, so the kept fan-out changes), one of them an invalid
# file, one a daemon.* change, and one a new output that cannot start
# (rolled back).  Then the group of a second input changes and traffic to
# the new group must arrive.  Oracles: the nft counters, the sequence
# numbers in the files (fault_check.py), sluice's own counters.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3
. "$(dirname "$0")/fault_lib.sh"

FACTOR=${SLUICE_TEST_TIME_FACTOR:-1}
RATE=4000 RELOADS=20
fault_net 94 54
G2=55 G3=56 G4=57
# A second rule pair: UDP to port 30000 -> group G2, to 30001 -> group G3.
ip netns exec "$FB" nft -f - <<NFT
table ip sluice_reload {
	counter g2 { }
	counter g3 { }
	chain in {
		type filter hook input priority -10; policy accept;
		ip saddr 10.$FN.0.1 udp dport 30000 counter name "g2" log group $G2 prefix "g2 " drop
		ip saddr 10.$FN.0.1 udp dport 30001 counter name "g3" log group $G3 prefix "g3 " drop
	}
}
NFT
nft_count() { ip netns exec "$FB" nft list counter ip sluice_reload "$1" | sed -n 's/.*packets \([0-9]*\).*/\1/p'; }
udp_to() {	# PORT COUNT
	ip netns exec "$FA" python3 -c "
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range($2):
    s.sendto(b'x', ('10.$FN.0.2', $1))"
}

D="$WORK/log"
mkdir "$D"
: >"$WORK/notadir"
CONF="$WORK/sluice.yaml"
L="$WORK/sluice.log"
# conf EXTRA [GROUP] [DAEMON]: the configuration; EXTRA is the added stack's text.
conf() {
	cat >"$CONF.new" <<YAML
daemon:
  batch_size: ${3:-256}
${RELOAD_DAEMON_KEYS:-}
instances:
  fw: {plugin: nflog, group: $FG, qtimeout: 20ms, thread: true}
  g: {plugin: nflog, group: ${2:-$G2}, qtimeout: 20ms}
stacks:
  keep: [fw, decode, logline, {plugin: file, file: "$D/keep.log", flush_interval: 50ms}]
  keept: [fw, decode, logline, {plugin: file, file: "$D/keept.log", flush_interval: 50ms, thread: true}]
  grp: [g, decode, logline, {plugin: file, file: "$D/grp.log", flush_interval: 50ms}]
$1
YAML
	mv "$CONF.new" "$CONF"
}
# extra N: the stack that comes and goes; every other time its output has a
# thread of its own, and with it comes an input on a thread of its own (no traffic).
extra() {
	local t=""
	[ $(($1 % 4)) = 1 ] && t=", thread: true"
	echo "  extra: [fw, decode, logline, {plugin: file, file: \"$D/extra$1.log\", flush_interval: 50ms$t}]"
	[ -z "$t" ] || echo "  idle: [{plugin: nflog, group: $G4, thread: true}, decode, logline, {plugin: file, file: \"$D/idle.log\"}]"
}
reloads() { grep -c "reload: [0-9]* kept" "$L" || true; }
failures() { grep -c "reload failed" "$L" || true; }
# hup WHAT: SIGHUP and wait for the reload's verdict line
hup() {
	local ok=$(reloads) bad=$(failures) end=$((SECONDS + 10 * FACTOR))
	kill -HUP "$SLUICE_PID"
	until [ "$(reloads)" -gt "$ok" ] || [ "$(failures)" -gt "$bad" ]; do
		[ $SECONDS -lt $end ] || fail "no reload verdict after $1"
		sleep 0.02
	done
	kill -0 "$SLUICE_PID" || fail "sluice died at $1"
}

conf ""
start_sluice "$L" "$CONF"
grep -q "bound NFLOG group $G2" "$L" || wait_for 5 grep -qs "bound NFLOG group $G2" "$L" ||
	fail "input g did not bind group $G2"
send_bg "$WORK/gen.out" -n 1000000 -r $RATE -t $((60 * FACTOR))
wait_for 10 test -s "$D/keep.log" || fail "no traffic reaches keep.log"
udp_to 30000 100

threads() { daemon_threads "$SLUICE_PID"; }
base=$(threads)
added=0 added_at=0 invalid_at=7 fixed_at=11 broken_at=15
for ((i = 1; i <= RELOADS; i++)); do
	if [ $i = $invalid_at ]; then
		# line 2 of the file (batch_size's value), column 15
		conf "$(extra $i)" "" "lots"
		hup "invalid file"
		grep -q "$CONF:2:15: error" "$L" || fail "the invalid file's error lacks file:line:col: $(grep error "$L" | tail -3)"
		continue
	fi
	if [ $i = $fixed_at ]; then
		conf "$(extra $i)" "" 512
		hup "daemon.batch_size change"
		grep -q "$CONF:2:15: error: daemon.batch_size cannot change while sluice runs" "$L" ||
			fail "a daemon.batch_size change was not refused at its position"
		continue
	fi
	if [ $i = $broken_at ]; then
		# roll.log may start, bad.log cannot (its directory is a file): both go
		# started outputs first, in reverse order: extra and roll start, bad fails
		conf "  bad: [fw, decode, logline, {plugin: file, file: \"$WORK/notadir/bad.log\"}]
  roll: [fw, decode, logline, {plugin: file, file: \"$D/roll.log\"}]
$(extra $i)"
		hup "a new output that cannot start"
		grep -q "reload failed: .*could not start" "$L" || fail "no rollback message: $(tail -5 "$L")"
		continue
	fi
	if ((added)); then conf ""; added=0; else conf "$(extra $i)"; added=1 added_at=$i; fi
	hup "reload $i"
	t=$(threads)
	if ((added)); then
		want=$base
		[ $((i % 4)) = 1 ] && want=$((base + 2))	# the output's and the input's
		[ "$t" = $want ] || fail "reload $i (added): $t threads, expected $want"
	else
		[ "$t" = "$base" ] || fail "reload $i (removed): $t threads, expected $base: a thread was not ended"
	fi
	sleep "$(awk "BEGIN {print 0.2 * $FACTOR}")"
done
ok=$(reloads) bad=$(failures)
echo "$RELOADS reloads: $ok applied, $bad refused; $base threads with the fixed stacks"
[ "$(grep -c "bound NFLOG group $G4" "$L")" -ge 2 ] || fail "the threaded input of the added stack did not start"
[ "$bad" = 3 ] || fail "expected 3 refused reloads, got $bad: $(grep 'reload failed' "$L")"

# An unchanged file only reopens.
hup_reopen_before=$(grep -c "unchanged: reopening output files" "$L" || true)
kill -HUP "$SLUICE_PID"
wait_for 5 bash -c "[ \$(grep -c 'unchanged: reopening output files' '$L') -gt $hup_reopen_before ]" ||
	fail "an unchanged file did not just reopen"

# The group of input g changes: it re-binds, traffic to the new group arrives.
# The stack added last stays as it is: only g changes.
if ((added)); then conf "$(extra $added_at)" $G3; else conf "" $G3; fi
hup "the group change"
wait_for 5 grep -qs "bound NFLOG group $G3" "$L" || fail "input g did not bind group $G3"
udp_to 30001 100

# The same group with other options: the new input cannot bind while the
# old one holds the group, so the reload is rolled back and g keeps logging.
sed -i "s/group: $G3, qtimeout: 20ms/group: $G3, qtimeout: 30ms/" "$CONF"
hup "an option change of g"
grep -q "reload failed: g could not start: cannot bind NFLOG group $G3" "$L" &&
	grep -q "^(g, which it would replace, holds the same group $G3 until" "$L" ||
	fail "replacing g in place was not refused: $(tail -3 "$L")"
udp_to 30001 50

sleep 0.3
kill -TERM "$GEN_PID"
wait "$GEN_PID" || true
logged=$(nft_logged)
wait_for 20 input_caught_up "$L" "$logged" ||
	fail "nflog received $(counter "$L" fw in) of $logged"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { tail -20 "$L"; fail "sluice exited with status $?"; }
grep "counters:" "$L" | tail -12
g2=$(nft_count g2) g3=$(nft_count g3)

# The stacks that stayed: exactly what the kernel logged, once each, in order.
for f in keep keept; do
	lines=$(wc -l <"$D/$f.log")
	r=$(python3 "$CHECK" text "$D/$f.log") || fail "$f.log: $r"
	echo "$f.log: $lines lines; $r"
	[ "$lines" = "$logged" ] || fail "$f.log holds $lines lines, the kernel logged $logged"
	echo "$r" | grep -q " holes=0 segments=1" || fail "$f.log has a gap: $r"
done
[ "$(counter "$L" fw in)" = "$logged" ] || fail "fw's counter did not survive the reloads"
[ "$(counter "$L" keept.file out)" = "$logged" ] || fail "keept.file's counter: $(counter "$L" keept.file out)"
# Each added stack: logging from its reload on, without a gap.
n=0
for f in "$D"/extra*.log; do
	[ "$f" != "$D/extra$broken_at.log" ] || continue
	r=$(python3 "$CHECK" text "$f") || fail "$(basename "$f"): $r"
	echo "$r" | grep -q " holes=0 segments=1" || fail "$(basename "$f") has a gap: $r"
	[ "$(wc -l <"$f")" -gt 0 ] || fail "$(basename "$f") is empty"
	n=$((n + 1))
done
[ $n -ge 8 ] || fail "only $n added stacks logged"
[ ! -s "$D/roll.log" ] || fail "the rolled-back output wrote $(wc -l <"$D/roll.log") lines"
[ ! -e "$D/extra$invalid_at.log" ] && [ ! -e "$D/extra$fixed_at.log" ] ||
	fail "a refused reload started its stack"
[ ! -e "$D/extra$broken_at.log" ] || [ ! -s "$D/extra$broken_at.log" ] ||
	fail "the rolled-back reload's extra stack logged"
# The group change: before it group G2's packets, after it G3's.
a=$(grep -c "^g2 " "$D/grp.log" || true) b=$(grep -c "^g3 " "$D/grp.log" || true)
echo "grp.log: $a lines from group $G2 (nft $g2), $b from group $G3 (nft $g3)"
[ "$a" = "$g2" ] && [ "$b" = "$g3" ] && [ "$b" -gt 0 ] || fail "the group change lost packets"
pass "$logged packets at ${RATE}/s across $RELOADS reloads ($ok applied, $bad refused): kept stacks exact and in order, $n added stacks without a gap, rollback, group $G2 -> $G3"
