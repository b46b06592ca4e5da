#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `sluice tail`, live (issue 23).  Namespace FA sends numbered UDP
# (fault_lib) and pings to FB, where nft logs both to one NFLOG group and
# counts each; sluice runs one lossless stack, nflog -> decode -> json ->
# file on a thread of its own (the tap runs there, the control socket on
# the main thread).  Checks:
#  - while pings outnumber the UDP packets, `tail -n 20 --where
#    'ip_proto == 17' --json` prints 20 JSON objects, every one UDP, and
#    exits 0 (and a tail without --where does show the pings: the filter
#    is what keeps them out); --text prints the kernel's LOG lines;
#  - a tail reader stopped (SIGSTOP) beside the file stack while 6,000
#    packets are logged: the file still has every packet the kernel's
#    counter counted, so the stack did not slow down; once the reader
#    goes on and gets SIGINT, it exits 0, says "N records lost" (N > 0),
#    and what it printed plus N is exactly what was logged meanwhile, each
#    line the very object the json filter wrote to the file;
#  - a user outside the socket's group is refused (exit 77), one in it is
#    served; a bad --where and an unknown instance are refused (exit 1);
#  - a reload that changes the graph ends a session (exit 1, said), the
#    daemon's stop too (exit 0, said), and the daemon exits 0.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 ping setpriv
getent passwd nobody >/dev/null && getent passwd daemon >/dev/null ||
	skip "needs the users 'nobody' and 'daemon'"
. "$(dirname "$0")/fault_lib.sh"

fault_net 98 58
ip netns exec "$FB" nft -f - <<NFT || skip "nftables log group not available"
table ip sluice_tail {
	counter pings { }
	chain in {
		type filter hook input priority -10; policy accept;
		icmp type echo-request counter name "pings" log group $FG prefix "ping " drop
	}
}
NFT
pings() {
	nft_counter "$FB" ip sluice_tail pings
}
D="$WORK/log"
SOCK="$WORK/ctl.sock"
chmod 755 "$WORK"
mkdir "$D"
cat >"$WORK/sluice.yaml" <<YAML
daemon:
  control_socket: $SOCK
instances:
  fw: {plugin: nflog, group: $FG, qtimeout: 20ms, thread: true}
stacks:
  txt: [fw, decode, json, {plugin: file, file: "$D/fw.json", flush_interval: 50ms}]
YAML
start_sluice "$WORK/sluice.log" "$WORK/sluice.yaml"
L="$WORK/sluice.log"
wait_for 5 grep -qs "control socket $SOCK: listening" "$L" || { cat "$L"; fail "no control socket"; }
tail_() { "$SLUICE" tail -c "$WORK/sluice.yaml" "$@"; }
lines() { if [ -e "$1" ]; then wc -l <"$1"; else echo 0; fi; }
# (wait_for runs its command again each time: these read the numbers anew)
pings_over() { [ "$(pings)" -gt "$1" ]; }
file_has() { [ "$(lines "$D/fw.json")" = "$(($1 + $(nft_logged) + $(pings)))" ]; }
sessions_over() { [ "$(grep -c "tail session" "$L")" -gt "$1" ]; }

# 1. The filter, while pings (500 a second) outnumber UDP (50 a second).
ip netns exec "$FA" ping -q -i 0.002 -s 16 10.98.0.2 >/dev/null 2>&1 &
PING=$!
at_exit "kill $PING"
send_bg "$WORK/gen1.out" -n 1000000 -r 50
wait_for 10 pings_over 50 || fail "no pings logged"
timeout $((30 * TIME_FACTOR)) "$SLUICE" tail -c "$WORK/sluice.yaml" -n 60 --json \
	>"$WORK/all.json" || fail "tail without --where: exit $?"
python3 - "$WORK/all.json" <<'PY' || fail "tail without --where did not show the mix"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 60, len(recs)
protos = {r.get("proto") for r in recs}
assert "icmp" in protos, protos
PY
rc=0
timeout $((30 * TIME_FACTOR)) "$SLUICE" tail -c "$WORK/sluice.yaml" -n 20 \
	--where 'ip_proto == 17' --json >"$WORK/udp.json" 2>"$WORK/udp.err" || rc=$?
[ "$rc" = 0 ] || fail "tail -n 20 --where: exit $rc: $(cat "$WORK/udp.err")"
python3 - "$WORK/udp.json" <<'PY' || fail "tail --where 'ip_proto == 17' printed other records"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 20, len(recs)
for r in recs:
    assert r["proto"] == "udp" and r["dest_ip"] == "10.98.0.2" and r["prefix"] == "fault ", r
PY
timeout $((30 * TIME_FACTOR)) "$SLUICE" tail -c "$WORK/sluice.yaml" -n 5 --text \
	--where 'prefix == "ping "' >"$WORK/ping.txt" || fail "tail --text: exit $?"
[ "$(grep -c '^ping IN=vb OUT= MAC=.* SRC=10\.98\.0\.1 DST=10\.98\.0\.2 .* PROTO=ICMP TYPE=8 ' \
	"$WORK/ping.txt")" = 5 ] || fail "tail --text: $(cat "$WORK/ping.txt")"
kill "$PING" "$GEN_PID"
wait "$PING" "$GEN_PID" 2>/dev/null || true

# 2. A stalled reader beside the file stack.
wait_for 10 file_has 0 ||
	fail "the file has $(lines "$D/fw.json") records, the kernel logged $(($(nft_logged) + $(pings)))"
sessions=$(grep -c "tail session" "$L")
"$SLUICE" tail -c "$WORK/sluice.yaml" --json >"$WORK/stalled.json" 2>"$WORK/stalled.err" &
TPID=$!
at_exit "kill -CONT $TPID; kill $TPID"
wait_for 10 sessions_over "$sessions" || fail "no tail session"
kill -STOP "$TPID"
before=$(nft_logged)
in_file=$(lines "$D/fw.json")
offset=$((in_file - before - $(pings)))
N=6000
send -n $N -r 3000 >"$WORK/gen2.out"
wait_for 30 file_has "$offset" ||
	fail "while a tail reader was stopped the file got $(($(lines "$D/fw.json") - in_file)) records, the kernel logged $(($(nft_logged) - before))"
logged=$(($(nft_logged) - before))
[ "$logged" -ge $((N * 9 / 10)) ] || fail "the kernel logged only $logged of $N"
kill -CONT "$TPID"
kill -INT "$TPID"
rc=0
wait "$TPID" || rc=$?
[ "$rc" = 0 ] || fail "the stalled tail exited $rc: $(cat "$WORK/stalled.err")"
lost=$(sed -n 's/^\([0-9]*\) records lost$/\1/p' "$WORK/stalled.err")
[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "the stalled tail lost nothing? $(cat "$WORK/stalled.err")"
printed=$(lines "$WORK/stalled.json")
[ $((printed + lost)) = "$logged" ] ||
	fail "the stalled tail printed $printed and lost $lost, the kernel logged $logged"
# the json filter's objects: each line the tail printed is one the file stack wrote
python3 -c '
import json, sys
written = set(open(sys.argv[2]))
for l in open(sys.argv[1]):
    assert json.loads(l)["proto"] == "udp", l
    assert l in written, "not in the file: " + l' "$WORK/stalled.json" "$D/fw.json" ||
	fail "the stalled tail printed other JSON than the json filter"

# 3. Access: the socket's group, as for stats; refusals.
chgrp daemon "$SOCK"
as() { local u=$1; shift; setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups "$@"; }
rc=0
as nobody "$SLUICE" tail --socket "$SOCK" -n 1 >/dev/null 2>"$WORK/denied" || rc=$?
[ "$rc" = 77 ] && grep -q "Permission denied" "$WORK/denied" ||
	fail "a user outside the group: exit $rc, '$(cat "$WORK/denied")'"
send_bg "$WORK/gen3.out" -n 1000000 -r 100 -f 5000000
timeout $((30 * TIME_FACTOR)) setpriv --reuid=nobody --regid=daemon --clear-groups \
	"$SLUICE" tail --socket "$SOCK" -n 3 --json >"$WORK/group.json" ||
	fail "a user in the socket's group: exit $?"
[ "$(lines "$WORK/group.json")" = 3 ] || fail "a user in the group got $(cat "$WORK/group.json")"
kill "$GEN_PID"
rc=0
tail_ --where 'dport ==' >/dev/null 2>"$WORK/bad" || rc=$?
[ "$rc" = 1 ] && grep -q "tail refused: --where, column 9" "$WORK/bad" ||
	fail "a bad --where: exit $rc, '$(cat "$WORK/bad")'"
rc=0
tail_ nosuch >/dev/null 2>"$WORK/bad" || rc=$?
[ "$rc" = 1 ] && grep -q "no instance is named 'nosuch'" "$WORK/bad" ||
	fail "an unknown instance: exit $rc, '$(cat "$WORK/bad")'"
kill -0 "$SLUICE_PID" || fail "the daemon died: $(cat "$L")"

# 4. A reload that changes the graph ends the sessions (they watch its
# instances); the daemon's stop ends them too, and says so.
gone() { ! kill -0 "$1" 2>/dev/null; }
sessions=$(grep -c "tail session" "$L")
"$SLUICE" tail -c "$WORK/sluice.yaml" >/dev/null 2>"$WORK/reload.err" &
TPID=$!
at_exit "kill $TPID"
wait_for 10 sessions_over "$sessions" || fail "no tail session before the reload"
echo "  txt2: [fw, decode, logline, {plugin: file, file: \"$D/fw.log\"}]" >>"$WORK/sluice.yaml"
"$SLUICE" reload -c "$WORK/sluice.yaml" >"$WORK/reload.out" || fail "reload: $(cat "$WORK/reload.out")"
wait_for 10 gone "$TPID" || fail "the tail session outlived a reload"
rc=0; wait "$TPID" || rc=$?
[ "$rc" = 1 ] && grep -q "the daemon reloaded its configuration" "$WORK/reload.err" ||
	fail "tail across a reload: exit $rc, '$(cat "$WORK/reload.err")'"
sessions=$(grep -c "tail session" "$L")
"$SLUICE" tail -c "$WORK/sluice.yaml" >/dev/null 2>"$WORK/stop.err" &
TPID=$!
at_exit "kill $TPID"
wait_for 10 sessions_over "$sessions" || fail "no tail session before the stop"
kill -TERM "$SLUICE_PID"
wait_for 10 gone "$TPID" || fail "the tail session outlived the daemon"
rc=0; wait "$TPID" || rc=$?
[ "$rc" = 0 ] && grep -q "the daemon stopped" "$WORK/stop.err" ||
	fail "tail across the daemon's stop: exit $rc, '$(cat "$WORK/stop.err")'"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "the daemon exited $rc: $(cat "$L")"
pass "20 UDP of a ping flood; stalled reader: $logged logged, all in the file, $printed printed + $lost lost"
