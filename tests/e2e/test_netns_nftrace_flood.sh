#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nftrace under a flood: 20000 traced UDP datagrams (3 trace events each:
# the rule with the packet headers, the end of the chain, the policy) into
# a 64 KiB socket buffer.  The kernel must overrun it (ENOBUFS counted,
# warned about), the daemon must survive and keep tracing (a last traced
# ping after the flood is recorded; pinged until one is), and the counts must add up: every
# record nftrace emitted is in the json file, the events received plus
# those counted lost (the kernel's drop count of the socket) are the
# kernel's 3 per traced packet (nft counter), and records =
# 2 per event with headers + 1 per other event - the rule-less ends
# (chain_end) as the input counts them.  The unchanged ruleset is dumped
# only once: after an overrun its generation is compared instead.
. "$(dirname "$0")/lib.sh"
need_root
[ -e "$BUILDDIR/plugins/nftrace.so" ] || skip "built without SLUICE_WITH_NFTRACE"
need_cmd ip nft python3

N=20000
netns_pair slnf 42

ip netns exec "$B" nft -f - <<'NFT' || skip "nftables not available"
table inet sl_flood {
	chain raw {
		type filter hook prerouting priority -300; policy accept;
		ip saddr 10.42.0.1 counter meta nftrace set 1
	}
}
NFT

cat >"$WORK/c.yaml" <<YAML
stacks:
  flood:
    - {plugin: nftrace, netlink_buffer: 64KiB}
    - decode
    - json
    - {plugin: file, file: "$WORK/out.json", flush_interval: 100ms}
YAML
ip netns exec "$B" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs 'listening to nftables trace events' "$WORK/sluice.log" ||
	{ cat "$WORK/sluice.log"; fail "nftrace did not start"; }

ip netns exec "$A" python3 - "$N" <<'PY'
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    u.sendto(b"flood %d" % i, ("10.42.0.2", 9999))
PY
kill -0 "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice died in the flood"; }
# Still tracing after the overrun: a ping, until one is in the file (while
# the daemon still drains the flood a ping's events may be lost too).
ping_traced() {
	kill -0 "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice died in the flood"; }
	ip netns exec "$A" ping -c 1 -W 1 10.42.0.2 >/dev/null 2>&1 || true
	sleep 0.2
	grep -Eq '"proto": ?"icmp"' "$WORK/out.json"
}
wait_for 20 ping_traced || fail "no ping traced after the flood"
kill "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }

traced=$(ip netns exec "$B" nft list chain inet sl_flood raw | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
line=$(grep 'counters: flood.nftrace (nftrace):' "$WORK/sluice.log") || { cat "$WORK/sluice.log"; fail "no counters line"; }
get() { echo "$line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }
in=$(get in) events=$(get events) enobufs=$(get enobufs) chain_end=$(get chain_end) malformed=$(get malformed) lost=$(get lost)
records=$(wc -l <"$WORK/out.json")
read -r packets others pings < <(python3 - "$WORK/out.json" <<'PY'
import json, sys
p = o = pings = 0
for l in open(sys.argv[1]):
    j = json.loads(l)
    if j["trace_type"] == "packet":
        p += 1
        pings += j.get("proto") == "icmp"
    else:
        o += 1
print(p, o, pings)
PY
)
echo "traced=$traced in=$in events=$events enobufs=$enobufs lost=$lost chain_end=$chain_end records=$records packets=$packets others=$others"
[ "$traced" -ge $((N + 1)) ] || fail "nft counted $traced traced packets, sent $((N + 1))"
[ "$enobufs" -ge 1 ] || fail "no ENOBUFS counted: the flood did not overrun 64 KiB"
grep -q 'losing events: socket receive buffer overrun (ENOBUFS)' "$WORK/sluice.log" || fail "no ENOBUFS warning"
[ "$malformed" = 0 ] || fail "$malformed malformed events"
[ "$records" = "$in" ] || fail "json has $records records, nftrace emitted $in"
[ "$events" -lt $((3 * traced)) ] || fail "$events events received of $((3 * traced)): nothing lost despite ENOBUFS?"
[ "$events" -gt 0 ] || fail "no events"
# one event per datagram: the kernel's drop count is the events lost, exactly
[ $((events + lost)) = $((3 * traced)) ] || fail "events $events + lost ${lost:-?} != $((3 * traced)) the kernel traced"
# each event is one record, one with headers two, a rule-less end none
[ "$in" = $((events + packets - chain_end)) ] ||
	fail "records $in != events $events + packet records $packets - chain ends $chain_end"
[ "$pings" -ge 1 ] || fail "the ping after the flood was not traced"
# lost events might have held a ruleset change: a generation check, not a dump, per overrun
[ "$(get ruleset_dumps)" = 1 ] || fail "$(get ruleset_dumps) ruleset dumps: the unchanged ruleset was dumped again"
pass "$traced packets traced, $events of $((3 * traced)) events received, $lost counted lost, $enobufs overruns, $in records"
