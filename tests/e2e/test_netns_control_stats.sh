#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control socket, live.  One nft rule counts numbered UDP (fault_lib)
# and logs it to NFLOG; sluice runs `fw` (nflog) shared by two stacks,
# fw -> pcap and fw -> decode -> logline -> file (on a thread, so it has a
# queue).  Checks: a stale socket file left by a dead daemon is replaced;
# the socket is mode 0660; a client that connects and sends nothing (and
# one that sends and never reads) does not keep `sluice stats` from
# answering; `sluice stats --json` (read with python3) counts what the nft
# counter counted, at every instance, and what tcpdump -r and wc -l find
# in the outputs; the table lists every instance, the shared one with both
# stacks; --watch into a pipe prints blocks with rates; `sluice reopen`
# after a logrotate-style mv makes both files reappear and fill;
# `sluice reload` prints ok; a second daemon on the same socket refuses to
# start; with no daemon, `sluice stats` exits 69 and says why.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 tcpdump
. "$(dirname "$0")/fault_lib.sh"

TF=${SLUICE_TEST_TIME_FACTOR:-1}
fault_net 97 57
D="$WORK/log"
SOCK="$WORK/ctl.sock"
mkdir "$D"
cat >"$WORK/sluice.yaml" <<YAML
daemon:
  control_socket: $SOCK
instances:
  fw: {plugin: nflog, group: $FG, qtimeout: 20ms}
stacks:
  cap: [fw, {plugin: pcap, file: "$D/cap.pcap", linktype: raw, flush_interval: 50ms}]
  txt: [fw, decode, logline, {plugin: file, file: "$D/fw.log", flush_interval: 50ms, thread: true}]
YAML
stats() { "$SLUICE" stats -c "$WORK/sluice.yaml" "$@"; }
# field INSTANCE KEY: a number from `sluice stats --json`
field() {
	stats --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
i = [i for i in s["instances"] if i["name"] == sys.argv[1]][0]
print(i[sys.argv[2]])' "$1" "$2"
}

# A stale socket: bound by a process that died without removing it.
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$SOCK"
[ -S "$SOCK" ] || fail "could not make the stale socket"
start_sluice "$WORK/sluice.log" "$WORK/sluice.yaml"
L="$WORK/sluice.log"
wait_for 5 grep -qs "control socket $SOCK: listening" "$L" || { cat "$L"; fail "no control socket"; }
grep -q "removing the stale socket" "$L" || fail "the stale socket was not reported as replaced"
mode=$(stat -c %a "$SOCK")
[ "$mode" = 660 ] && [ -S "$SOCK" ] || fail "socket mode $mode, expected 660"

# Clients that hold a connection: one sends nothing, one asks and never reads.
python3 - "$SOCK" <<'PY' &
import socket, sys, time
idle = socket.socket(socket.AF_UNIX); idle.connect(sys.argv[1])
mute = socket.socket(socket.AF_UNIX); mute.connect(sys.argv[1]); mute.sendall(b"stats\n")
time.sleep(30)
PY
HOLD=$!
at_exit "kill $HOLD"
sleep 0.2
t0=$(date +%s%N)
timeout $((3 * TF)) "$SLUICE" stats --socket "$SOCK" --json >"$WORK/first.json" ||
	fail "sluice stats did not answer while two clients hold connections"
ms=$((($(date +%s%N) - t0) / 1000000))
python3 -m json.tool "$WORK/first.json" >/dev/null || fail "stats --json is not JSON"
echo "stats answered in $ms ms while an idle and a non-reading client were connected"

caught_up() { [ "$(field "$1" "$2")" = "$3" ]; }
N1=2000
send -n $N1 -r 20000 >"$WORK/gen1.out"
wait_for 10 caught_up txt.file out "$(nft_logged)" ||
	fail "txt.file out=$(field txt.file out), the kernel logged $(nft_logged)"
logged=$(nft_logged)
[ "$logged" -gt 0 ] || fail "the kernel logged nothing"
stats --json >"$WORK/s1.json"
python3 - "$WORK/s1.json" "$logged" <<'PY' || fail "stats disagree with the nft counter"
import json, sys
s, n = json.load(open(sys.argv[1])), int(sys.argv[2])
want = {"fw": ("nflog", ["cap", "txt"]), "cap.pcap": ("pcap", ["cap"]),
        "txt.decode": ("decode", ["txt"]), "txt.logline": ("logline", ["txt"]),
        "txt.file": ("file", ["txt"])}
got = {i["name"]: i for i in s["instances"]}
assert set(got) == set(want), "instances %s" % sorted(got)
for name, (plugin, stacks) in want.items():
    i = got[name]
    assert i["plugin"] == plugin and i["stacks"] == stacks, (name, i["plugin"], i["stacks"])
    assert i["in"] == n and i["out"] == n, "%s in=%d out=%d, nft %d" % (name, i["in"], i["out"], n)
    assert i["dropped"] == 0 and i["errors"] == 0, name
assert got["txt.file"]["queue"]["capacity"] > 0 and got["txt.file"]["queue"]["dropped"] == 0
assert got["cap.pcap"]["queue"] is None
assert s["reloads_failed"] == 0 and s["uptime_seconds"] >= 0 and s["start_time"] > 1.7e9
PY

# what the outputs hold, by their readers
pcap_count() { tcpdump --count -r "$1" 2>/dev/null | sed -n 's/ packets\?$//p'; }
in_outputs() { [ "$(pcap_count "$D/cap.pcap")" = "$1" ] && [ "$(wc -l <"$D/fw.log")" = "$1" ]; }
wait_for 5 in_outputs "$logged" ||
	fail "outputs hold $(pcap_count "$D/cap.pcap") packets / $(wc -l <"$D/fw.log") lines, nft $logged"

# the table: a row for every instance; the shared one shows both stacks
stats >"$WORK/table.txt"
cat "$WORK/table.txt"
head -2 "$WORK/table.txt" | tail -1 | grep -q "^STACK  *INSTANCE  *PLUGIN  *IN  *OUT  *DROPPED  *ERRORS" ||
	fail "table header: $(sed -n 2p "$WORK/table.txt")"
for row in "cap,txt fw nflog" "cap cap.pcap pcap" "txt txt.decode decode" \
	   "txt txt.logline logline" "txt txt.file file"; do
	set -- $row
	awk -v s="$1" -v i="$2" -v p="$3" -v n="$logged" \
		'$1 == s && $2 == i && $3 == p && $4 == n && $5 == n {f = 1} END {exit !f}' \
		"$WORK/table.txt" || fail "no table row '$row' with in=out=$logged"
done

# --watch into a pipe: blocks one after the other, rates from the second on
send_bg "$WORK/gen2.out" -n $((3000 * TF)) -r 1000 -f $N1
timeout $((2 * TF)).6 "$SLUICE" stats --socket "$SOCK" --watch >"$WORK/watch.txt" || true
blocks=$(grep -c "^sluice .*: up " "$WORK/watch.txt" || true)
[ "$blocks" -ge 2 ] || fail "--watch printed $blocks blocks in $((2 * TF)).6 s: $(cat "$WORK/watch.txt")"
rate=$(awk '$2 == "fw" {r = $8} END {print r}' "$WORK/watch.txt")
grep -q "IN/s" "$WORK/watch.txt" && [ -n "$rate" ] && [ "$rate" != - ] && [ "$rate" -gt 0 ] ||
	fail "no fw rate in --watch: $(tail -8 "$WORK/watch.txt")"
echo "--watch: $blocks blocks, fw at $rate records/s (sent at 1000/s)"
kill -TERM "$GEN_PID" 2>/dev/null || true	# it may have sent everything
wait "$GEN_PID" || true

# logrotate-style: move both files away, then ask for a reopen
wait_for 10 caught_up txt.file out "$(nft_logged)" || fail "not caught up before the mv"
mv "$D/cap.pcap" "$D/cap.pcap.1"
mv "$D/fw.log" "$D/fw.log.1"
out=$("$SLUICE" reopen -c "$WORK/sluice.yaml") || fail "sluice reopen exited $?"
[ "$out" = ok ] || fail "sluice reopen printed '$out'"
wait_for 5 test -e "$D/cap.pcap" -a -e "$D/fw.log" || fail "the files did not reappear"
send -n 500 -r 20000 -f 10000 >"$WORK/gen3.out"
wait_for 10 caught_up txt.file out "$(nft_logged)" || fail "not caught up after the reopen"
logged=$(nft_logged)
both() {
	local p=$(($(pcap_count "$D/cap.pcap.1") + $(pcap_count "$D/cap.pcap")))
	local t=$(cat "$D/fw.log.1" "$D/fw.log" | wc -l)
	[ "$p" = "$1" ] && [ "$t" = "$1" ] && [ "$(pcap_count "$D/cap.pcap")" -gt 0 ]
}
wait_for 5 both "$logged" || fail "after the reopen the outputs hold \
$(pcap_count "$D/cap.pcap.1")+$(pcap_count "$D/cap.pcap") packets, \
$(wc -l <"$D/fw.log.1")+$(wc -l <"$D/fw.log") lines; nft $logged"
new=$(pcap_count "$D/cap.pcap")
[ "$(field cap.pcap out)" = "$logged" ] || fail "cap.pcap out=$(field cap.pcap out), nft $logged"

out=$("$SLUICE" reload -c "$WORK/sluice.yaml") || fail "sluice reload exited $?"
case "$out" in ok*) ;; *) fail "sluice reload printed '$out'" ;; esac
reloads=$("$SLUICE" stats --json -c "$WORK/sluice.yaml" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["reloads_ok"], s["reloads_failed"])')
[ "$reloads" = "1 0" ] || fail "after one reload stats says reloads ok/failed = $reloads"
# a file with an error: the reload fails, says where, and is counted
cp "$WORK/sluice.yaml" "$WORK/good.yaml"
printf 'bogus_key: 1\n' >>"$WORK/sluice.yaml"
if out=$("$SLUICE" reload -c "$WORK/good.yaml" 2>&1); then fail "a broken file reloaded: $out"; fi
case "$out" in *sluice.yaml:*:*) ;; *) fail "the failed reload did not name file:line:col: $out" ;; esac
# a YAML syntax error reaches the client too, with its position
printf 'stacks: [\n' >"$WORK/sluice.yaml"
if out=$("$SLUICE" reload -c "$WORK/good.yaml" 2>&1); then fail "a file with a YAML error reloaded: $out"; fi
case "$out" in *sluice.yaml:*:*) ;; *) fail "the YAML error did not reach sluice reload: $out" ;; esac
cp "$WORK/good.yaml" "$WORK/sluice.yaml"
reloads=$("$SLUICE" stats --json -c "$WORK/sluice.yaml" | python3 -c 'import json,sys; s=json.load(sys.stdin); print(s["reloads_ok"], s["reloads_failed"])')
[ "$reloads" = "1 2" ] || fail "after two failed reloads stats says reloads ok/failed = $reloads"
grep -q "control socket: reload (asked by uid 0, pid [0-9]*)" "$L" || fail "the daemon did not log the reload and who asked"

# a second daemon on the same socket (another input, so only the socket clashes)
cat >"$WORK/second.yaml" <<YAML
daemon:
  control_socket: $SOCK
stacks:
  r: [{plugin: replay, file: "$SRCDIR/tests/data/eth-mixed.pcap"}, {plugin: pcap, file: "$WORK/r.pcap"}]
YAML
rc=0
"$SLUICE" -c "$WORK/second.yaml" >"$WORK/second.log" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "another sluice is running" "$WORK/second.log" ||
	fail "a second daemon on a live socket: exit $rc, $(cat "$WORK/second.log")"
[ -S "$SOCK" ] && stats >/dev/null || fail "the second daemon broke the first one's socket"

kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$L"; fail "sluice exited with status $?"; }
[ ! -e "$SOCK" ] || fail "the socket is left behind after a clean exit"
rc=0
stats >"$WORK/none.out" 2>"$WORK/none.err" || rc=$?
[ "$rc" = 69 ] && grep -q "no daemon answers on $SOCK" "$WORK/none.err" ||
	fail "no daemon: exit $rc, '$(cat "$WORK/none.err")'"
pass "$logged packets: stats == nft counter at 5 instances, == tcpdump -r and wc -l; \
stats answered in $ms ms past 2 stuck clients; reopen after mv ($new packets in the new pcap); \
reload ok; stale socket replaced, live one refused; mode 0660; no daemon: 69"
