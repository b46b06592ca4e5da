#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Lost conntrack events are recovered.  With a 4KiB event buffer and
# reliable off, destroying N connections at once (conntrack -F) while sluice
# is stopped overruns the socket (ENOBUFS); the table dump that follows
# finds them gone and nfct reports them as destroyed: nfcapd must receive
# every one of the N flows
# exactly once, never with more than its real counters (exact ones when
# resync_interval refreshes them).  Then the same with reliable on: the
# kernel redelivers, no ENOBUFS and nothing to recover.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nfct_lib.sh"
need_root
need_cmd ip nft conntrack nfcapd nfdump python3 ss
[ -e "$SLUICE_PLUGIN_PATH/nfct.so" ] && [ -e "$SLUICE_PLUGIN_PATH/ipfix.so" ] ||
	skip "nfct or ipfix plugin not built"
E2E=$(dirname "$0")
NS=$(unique_name slco)
N=300
ct_netns "$NS" 4739

# run_case NAME BASE_PORT NFCT_OPTIONS: N flows from ports BASE.., all destroyed at once.
run_case() {
	local name="$1" base="$2" opts="$3" log="$WORK/$1.log" pid
	start_nfcapd "$NS" "$WORK/$name" 4739
	cat >"$WORK/$name.yaml" <<CONF
instances:
  ct: { plugin: nfct, netlink_buffer: 4KiB, $opts }
stacks:
  s: [ct, { plugin: ipfix, address: "127.0.0.1:4739", flush_interval: 100ms }]
CONF
	ip netns exec "$NS" "$SLUICE" -c "$WORK/$name.yaml" >"$log" 2>&1 &
	pid=$!
	at_exit "kill $pid"
	wait_for 10 grep -q "started" "$log" || fail "$name: sluice did not start: $(cat "$log")"
	ip netns exec "$NS" python3 "$E2E/nfct_traffic.py" burst $N "$base" || fail "traffic failed"
	# creating them may overrun too: let that resync finish (they must be known)
	sleep 2.5
	# a daemon too slow for the burst: stopped while the kernel sends it
	kill -STOP $pid
	ip netns exec "$NS" conntrack -F 2>/dev/null
	sleep 0.3
	kill -CONT $pid
	reported() {
		kill -USR1 $pid
		sleep 0.2
		[ "$(counter s.ipfix in "$log")" -ge $N ] 2>/dev/null
	}
	wait_for 20 reported || fail "$name: not all $N destroys reported: $(grep -v counters "$log")
$(grep counters "$log" | tail -2)"
	sleep 0.5	# anything more would be a duplicate: give it time to show
	kill -TERM $pid
	wait $pid || fail "$name: sluice failed: $(cat "$log")"
	stop_nfcapd
	nfdump -R "$WORK/$name" -o csv "dst port 6000" >"$WORK/$name.csv" 2>&1 ||
		fail "nfdump: $(cat "$WORK/$name.csv")"
	ENOBUFS=$(counter ct enobufs "$log")
	RECOVERED=$(counter ct recovered "$log")
	LOST=$(counter ct lost "$log")
	# Every flow once, with one 50-byte datagram out and a 70-byte reply.  A
	# recovered flow has the counters of its last sighting (a dump, or its
	# NEW event, which carries none): never more than the truth.
	EXACT=$(python3 - "$WORK/$name.csv" "$base" $N "$RECOVERED" <<'PY'
import sys
path, base, n, recovered = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
exact = 0
lines = open(path).read().splitlines()
head = lines[0].split(",")
c = {k: i for i, k in enumerate(head)}
seen = {}
for l in lines[1:]:
    f = l.split(",")
    if len(f) != len(head) or f[c["dp"]] != "6000":
        continue
    sp = int(f[c["sp"]])
    seen[sp] = seen.get(sp, 0) + 1
    got = tuple(int(f[c[k]]) for k in ("ipkt", "ibyt", "opkt", "obyt"))
    if got == (1, 78, 1, 98):
        exact += 1
    elif got not in ((0, 0, 0, 0), (1, 78, 0, 0)):
        sys.exit("port %d: pkts/bytes in/out %s, expected (1, 78, 1, 98)" % (sp, got))
want = set(range(base, base + n))
dup = sorted(p for p, k in seen.items() if k > 1)
if set(seen) != want or dup:
    sys.exit("missing %s, unexpected %s, duplicated %s" % (
        sorted(want - set(seen))[:10], sorted(set(seen) - want)[:10], dup[:10]))
if exact < n - recovered:
    sys.exit("only %d flows with exact counters, %d were not recovered" % (exact, n - recovered))
print(exact)
PY
	) || fail "$name: flows read back are wrong"
}

run_case lossy 20000 "reliable: false"
[ "$ENOBUFS" -gt 0 ] || fail "no ENOBUFS with a 4KiB buffer: the test did not overrun"
[ "$RECOVERED" -gt 0 ] || fail "ENOBUFS but nothing recovered"
# each recovered flow had its DESTROY dropped by the kernel: counted lost
[ "${LOST:-0}" -ge "$RECOVERED" ] || fail "lost=${LOST:-?}: fewer events counted lost than the $RECOVERED flows recovered"
grep -q "losing events.*ENOBUFS" "$WORK/lossy.log" || fail "no warning about the overrun"
msg="reliable off: $N/$N flows, enobufs=$ENOBUFS, $LOST events lost, $RECOVERED recovered by a dump"
msg="$msg ($EXACT with exact counters)"

# Periodic dumps keep the counters of tracked connections fresh: a
# recovered flow then has the counters it ended with.
run_case periodic 22000 "reliable: false, resync_interval: 1s"
[ "$ENOBUFS" -gt 0 ] && [ "$RECOVERED" -gt 0 ] || fail "periodic: enobufs=$ENOBUFS recovered=$RECOVERED"
[ "$EXACT" = $N ] || fail "periodic: only $EXACT of $N flows with exact counters"
msg="$msg; with resync_interval: $N/$N exact ($RECOVERED recovered)"

run_case reliable 21000 "reliable: true"
[ "$ENOBUFS" = 0 ] || fail "ENOBUFS reported in reliable mode"
[ "$LOST" = 0 ] || fail "reliable mode counted $LOST events lost (the kernel redelivers them)"
[ "$RECOVERED" = 0 ] || fail "reliable mode recovered $RECOVERED (the kernel should redeliver)"
[ "$EXACT" = $N ] || fail "reliable mode: only $EXACT of $N flows with exact counters"
pass "$msg; reliable on: $N/$N flows exact, no ENOBUFS"
