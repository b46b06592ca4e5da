#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# kill -9 and restart (issue 8.7): replay -> decode -> flow -> flowfile with
# 30000 one-packet UDP flows (record size 96: 10922 flows per 1 MiB block),
# a pcap stack beside it, `kill -9` once every flow reached flowfile, then
# a restart on the same directory.  The restart finishes the orphan
# nfcapd.current.* into the slot's nfcapd file (nothing is left), and
# nfdump reads every flow in it:
#   - flush_interval 0: exactly the flows of the full blocks survive
#     (2 x 10922); the 8156 of the block still in memory are the crash loss;
#   - flush_interval 100ms: all 30000 survive, also when the crash tore a
#     block in the middle (the torn tail is cut, its bytes named in the log);
#   - an orphan whose writer is alive (its lock is held) is left alone by a
#     second daemon on the same directory, and its writer finishes it;
#   - with daemon.user the orphan belongs to that user: root recovers it.
# Restart flows + recovered flows add up to what was sent; the pcap stack's
# file, cut by kill -9, is read whole by capinfos.
. "$(dirname "$0")/lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
need_cmd nfdump python3 capinfos
for p in replay decode flow flowfile pcap; do
	[ -e "$SLUICE_PLUGIN_PATH/$p.so" ] || [ -e "${SLUICE_PLUGIN_PATH%%:*}/$p.so" ] || skip "$p not built"
done
export TZ=UTC
N=30000
PER_BLOCK=$((1048576 / 96))

python3 - "$WORK/flows.pcap" $N <<'PY'
import struct, sys
n = int(sys.argv[2])
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 101))
    for i in range(n):
        udp = struct.pack("!HHHH", 1024, 53, 12, 0) + struct.pack("!I", i)
        h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                        bytes([10, 1, i >> 8, i & 255]), bytes([10, 2, 0, 1]))
        p = h[:10] + struct.pack("!H", csum(h)) + h[12:] + udp
        us = 1700000000 * 10**6 + 2 * 10**6 * i // n     # 2 s of capture
        f.write(struct.pack("<IIII", us // 10**6, us % 10**6, len(p), len(p)) + p)
PY

# config NAME DIR FLUSH KEEPALIVE: the flow stack (and an endless one, so
# the daemon stays up after the replay until it is killed).
config() {
	cat >"$WORK/$1.yaml" <<YAML
stacks:
  f:
    - {plugin: replay, file: "$WORK/flows.pcap", pace: original}
    - decode
    - {plugin: flow, idle_timeout: 100ms}
    - {plugin: flowfile, dir: "$2", rotate_interval: 1d, flush_interval: $3}
YAML
	[ "$4" = 1 ] && cat >>"$WORK/$1.yaml" <<YAML
  p:
    - {plugin: replay, file: "$WORK/flows.pcap", pace: original}
    - decode
    - {plugin: pcap, file: "$2.pcap", flush_interval: 100ms}
  keep:
    - {plugin: gen, count: -1, interval: 200ms, per_tick: 1}
    - {plugin: file, file: /dev/null}
YAML
	return 0
}

counter() { grep "counters: $2 " "$1" | tail -1 | sed -nE "s/.* $3=([0-9]+).*/\1/p"; }

# run_until_delivered NAME: start, wait until flowfile has taken every flow.
run_until_delivered() {
	run_sluice_bg "$WORK/$1.log" -c "$WORK/$1.yaml"
	local end=$((SECONDS + 20 * TIME_FACTOR)) out=
	while [ $SECONDS -lt $end ]; do
		sleep 0.5
		kill -USR1 "$SLUICE_PID" 2>/dev/null || { cat "$WORK/$1.log"; fail "$1: sluice died"; }
		sleep 0.1
		out=$(counter "$WORK/$1.log" f.flowfile out)
		[ "${out:-0}" = $N ] && return 0
	done
	cat "$WORK/$1.log"
	fail "$1: flowfile got ${out:-0} of $N flows"
}

# flows DIR: "files flows distinct" over DIR's nfcapd files, each checked by nfdump.
flows() {
	local total=0 f n i
	: >"$WORK/keys"
	for f in "$1"/nfcapd.*; do
		[ -e "$f" ] || continue
		n=$(nfdump -q -o csv -r "$f" 2>"$WORK/nfdump.err" | tee -a "$WORK/keys" | grep -c ,) || true
		[ -s "$WORK/nfdump.err" ] && fail "nfdump -r $f: $(cat "$WORK/nfdump.err")"
		i=$(nfdump -I -r "$f" | sed -n 's/^Flows: //p')
		[ "$i" = "$n" ] || fail "$f: nfdump -I says $i flows, the file has $n"
		total=$((total + n))
	done
	echo "$(find "$1" -name 'nfcapd.*' | wc -l) $total $(cut -d, -f4 "$WORK/keys" | sort -u | wc -l)"
}

no_orphans() {
	local left
	left=$(find "$1" -name 'nfcapd.current.*')
	[ -z "$left" ] || fail "$2: left behind: $left"
}

# ---- 1. only full blocks: the block in memory is what the crash loses ----
mkdir "$WORK/a"
config a1 "$WORK/a" 0 1
run_until_delivered a1
kill -9 "$SLUICE_PID"
wait "$SLUICE_PID" 2>/dev/null || true
orphan=$(find "$WORK/a" -name 'nfcapd.current.*')
[[ $(basename "$orphan") =~ ^nfcapd\.current\.[0-9]+\.86400\.[0-9a-f]{16}$ ]] ||
	fail "orphan name '$orphan' (nfcapd.current.SLOT.INTERVAL.RANDOM expected)"
# the pcap file a kill -9 cut: whole packets only, every one of them
pk=$(capinfos -c -M "$WORK/a.pcap" 2>&1) || fail "capinfos after kill -9: $pk"
[[ $pk =~ "Number of packets:"[[:space:]]*$N ]] || fail "pcap after kill -9: $pk"
config a2 "$WORK/a" 0 0
timeout $((30 * TIME_FACTOR)) "$SLUICE" -c "$WORK/a2.yaml" >"$WORK/a2.log" 2>&1 || { cat "$WORK/a2.log"; fail "restart failed"; }
no_orphans "$WORK/a" "restart"
want=$((N / PER_BLOCK * PER_BLOCK))
rec=$(counter "$WORK/a2.log" f.flowfile recovered)
[ "$rec" = $want ] || { cat "$WORK/a2.log"; fail "recovered ${rec:-?} flows, want the $want of the full blocks"; }
grep -q "recovered $want flows in 2 blocks of a writer that died into $WORK/a/nfcapd\.[0-9]\{12\}" "$WORK/a2.log" ||
	{ cat "$WORK/a2.log"; fail "recovery not logged"; }
read -r nfiles total distinct < <(flows "$WORK/a")
[ "$total" = $((want + N)) ] && [ "$distinct" = $N ] ||
	fail "after restart: $total flows ($distinct distinct) in $nfiles files, want $((want + N)) ($N)"
echo "ok: flush_interval 0: $want of $N flows recovered (full blocks), $((N - want)) lost in memory; $total flows in $nfiles file(s) after the restart"

# ---- 2. flush_interval 100ms: everything survives, a torn block is cut ----
mkdir "$WORK/b"
config b1 "$WORK/b" 100ms 1
run_until_delivered b1
sleep 0.5	# > flush_interval: the last block is written
kill -9 "$SLUICE_PID"
wait "$SLUICE_PID" 2>/dev/null || true
orphan=$(find "$WORK/b" -name 'nfcapd.current.*')
[ -n "$orphan" ] || fail "no orphan after kill -9"
# the crash came in the middle of the next block: a header promising 60000 bytes, 3000 of them
python3 -c 'import struct, sys, os; sys.stdout.buffer.write(struct.pack("<IIHH", 600, 60000, 3, 0) + os.urandom(3000))' >>"$orphan"
config b2 "$WORK/b" 100ms 0
timeout $((30 * TIME_FACTOR)) "$SLUICE" -c "$WORK/b2.yaml" >"$WORK/b2.log" 2>&1 || { cat "$WORK/b2.log"; fail "restart failed"; }
no_orphans "$WORK/b" "restart"
rec=$(counter "$WORK/b2.log" f.flowfile recovered)
[ "$rec" = $N ] || { cat "$WORK/b2.log"; fail "recovered ${rec:-?} flows, want $N"; }
grep -q "recovered $N flows .*(cut 3012 bytes of an unfinished block" "$WORK/b2.log" ||
	{ cat "$WORK/b2.log"; fail "the torn block is not reported"; }
read -r nfiles total distinct < <(flows "$WORK/b")
[ "$total" = $((2 * N)) ] && [ "$distinct" = $N ] ||
	fail "after restart: $total flows ($distinct distinct), want $((2 * N)) ($N)"
nfdump -v "$(find "$WORK/b" -name 'nfcapd.*' | head -1)" >"$WORK/v.txt" 2>&1 || fail "nfdump -v: $(cat "$WORK/v.txt")"
echo "ok: flush_interval 100ms: all $N flows recovered, torn block cut; $total flows after the restart"

# ---- 3. a live writer's file is not an orphan ----
mkdir "$WORK/c"
config c1 "$WORK/c" 100ms 1
run_until_delivered c1
live=$SLUICE_PID
tmp=$(find "$WORK/c" -name 'nfcapd.current.*')
sum=$(sha256sum <"$tmp")
config c2 "$WORK/c" 100ms 0
timeout $((30 * TIME_FACTOR)) "$SLUICE" -c "$WORK/c2.yaml" >"$WORK/c2.log" 2>&1 || { cat "$WORK/c2.log"; fail "second daemon failed"; }
[ -e "$tmp" ] && [ "$(sha256sum <"$tmp")" = "$sum" ] || fail "the live writer's file was touched"
rec=$(counter "$WORK/c2.log" f.flowfile recovered)
[ "$rec" = 0 ] || fail "a live writer's file was recovered ($rec flows)"
kill -TERM "$live"
wait "$live" || fail "the first daemon did not exit cleanly"
no_orphans "$WORK/c" "two daemons"
read -r nfiles total distinct < <(flows "$WORK/c")
[ "$total" = $((2 * N)) ] || fail "two daemons: $total flows, want $((2 * N))"
echo "ok: a live writer's file is left alone; both daemons' $total flows in $nfiles file(s)"

# ---- 4. with daemon.user: the orphan belongs to that user, root recovers it ----
if [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null; then
	mkdir "$WORK/d"
	chmod 755 "$WORK"
	chown nobody "$WORK/d"
	cat >"$WORK/d1.yaml" <<YAML
daemon: { user: nobody }
stacks:
  f:
    - {plugin: replay, file: "$WORK/flows.pcap", pace: original, loop: 0}
    - decode
    - {plugin: flow, idle_timeout: 100ms}
    - {plugin: flowfile, dir: "$WORK/d", rotate_interval: 1s, flush_interval: 100ms}
YAML
	run_sluice_bg "$WORK/d1.log" -c "$WORK/d1.yaml"
	users_orphan() { [ -n "$(find "$WORK/d" -name 'nfcapd.current.*' -user nobody -size +1k)" ]; }
	wait_for 10 users_orphan ||
		{ cat "$WORK/d1.log"; fail "daemon.user: no file of nobody's with blocks"; }
	kill -9 "$SLUICE_PID"
	wait "$SLUICE_PID" 2>/dev/null || true
	orphan=$(find "$WORK/d" -name 'nfcapd.current.*')
	[ "$(stat -c %U "$orphan")" = nobody ] || fail "daemon.user: the orphan belongs to $(stat -c %U "$orphan")"
	config d2 "$WORK/d" 100ms 0
	timeout $((30 * TIME_FACTOR)) "$SLUICE" -c "$WORK/d2.yaml" >"$WORK/d2.log" 2>&1 || { cat "$WORK/d2.log"; fail "restart failed"; }
	no_orphans "$WORK/d" "daemon.user"
	rec=$(counter "$WORK/d2.log" f.flowfile recovered)
	[ "${rec:-0}" -gt 0 ] || { cat "$WORK/d2.log"; fail "daemon.user: nothing recovered"; }
	read -r nfiles total distinct < <(flows "$WORK/d")
	echo "ok: daemon.user: nobody's orphan recovered by root ($rec flows); $total flows in $nfiles files"
fi

pass "kill -9: orphans finished, losses exactly the unwritten block"
