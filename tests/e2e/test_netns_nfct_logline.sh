#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nfct -> logline prints what `conntrack -E -o timestamp` prints.  Real
# connections in a namespace with accounting and timestamps on (TCP and UDP
# over IPv4 and IPv6, ping and ping6, a connection with a ct mark, one in a
# ct zone), destroyed by timeout (kernel GC: no portid) and by `conntrack
# -F` ("[USERSPACE] portid=N").  Both listeners subscribe to the same three
# groups, so they see the same events in the same order: each line must be
# byte for byte the same once the "[sec.usec]<TAB>" prefix is set aside.
# The prefixes are both receive times (conntrack: gettimeofday() when it
# prints; sluice: when nfct read the datagram) and must agree within 1 s.
# conntrack appends " progname=NAME" when the process that caused the event
# is still alive as it prints: a race sluice does not reproduce (it would
# cost a /proc lookup per record), so that suffix is dropped before comparing.
# A second pair does the same with `-o timestamp,id,extended` (option
# conntrack_output), with GRE and an unknown protocol added to the traffic.
# Also: json of the same records parses and carries flow_start/flow_end and
# both directions' counters on destroy events.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nfct_lib.sh"
need_root
need_cmd ip nft conntrack python3 ping
[ -e "$SLUICE_PLUGIN_PATH/nfct.so" ] && [ -e "$SLUICE_PLUGIN_PATH/logline.so" ] &&
	[ -e "$SLUICE_PLUGIN_PATH/json.so" ] || skip "nfct, logline or json plugin not built"
E2E=$(dirname "$0")
NS=$(unique_name slctl)
ct_netns "$NS" 4739
# A mark on the IPv6 UDP connection, a zone on the IPv6 TCP one (set before
# conntrack sees the packet: raw priority, both directions, both hooks).
ip netns exec "$NS" nft -f - <<'NFT' || skip "nft ct mark / ct zone unavailable"
table inet sluice_ctl {
	chain raw_pre { type filter hook prerouting priority raw; tcp sport 5011 ct zone set 3; tcp dport 5011 ct zone set 3; }
	chain raw_out { type filter hook output priority raw; tcp sport 5011 ct zone set 3; tcp dport 5011 ct zone set 3; }
	chain out { type filter hook output priority 0; udp dport 5012 ct mark set 7; }
}
NFT
# ICMP connections end by timeout, so some destroys come from the kernel.
ip netns exec "$NS" sysctl -qw net.netfilter.nf_conntrack_icmp_timeout=1 \
	net.netfilter.nf_conntrack_icmpv6_timeout=1

cat >"$WORK/c.yaml" <<CONF
instances:
  ct: { plugin: nfct, events: [new, update, destroy] }
stacks:
  text: [ct, logline, { plugin: file, file: $WORK/sluice.txt, flush_interval: 50ms }]
  ext: [ct, { plugin: logline, conntrack_output: [timestamp, id, extended] },
        { plugin: file, file: $WORK/sluice-ext.txt, flush_interval: 50ms }]
  json: [ct, json, { plugin: file, file: $WORK/sluice.json, flush_interval: 50ms }]
CONF
ip netns exec "$NS" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
ip netns exec "$NS" conntrack -E -o timestamp >"$WORK/conntrack.txt" 2>"$WORK/conntrack.err" &
CT_PID=$!
at_exit "kill $CT_PID"
ip netns exec "$NS" conntrack -E -o timestamp,id,extended >"$WORK/conntrack-ext.txt" 2>>"$WORK/conntrack.err" &
CT2_PID=$!
at_exit "kill $CT2_PID"
wait_for 10 grep -qs "started" "$WORK/sluice.log" || fail "sluice did not start: $(cat "$WORK/sluice.log")"

# Both listening: probes to udp/9 until each has printed one (probe lines
# are left out of the comparison: each listener may have seen a different
# number of them).
probe() {
	ip netns exec "$NS" python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"p", ("127.0.0.1", 9))'
	grep -q "dport=9 " "$WORK/conntrack.txt" && grep -q "dport=9 " "$WORK/conntrack-ext.txt" &&
		grep -qs "dport=9 " "$WORK/sluice.txt" && grep -qs "dport=9 " "$WORK/sluice-ext.txt"
}
wait_for 10 probe || fail "listeners not ready: $(cat "$WORK/conntrack.err" "$WORK/sluice.log")"

ip netns exec "$NS" python3 "$E2E/nfct_traffic.py" flows || fail "traffic failed"
ip netns exec "$NS" ping -c 2 -i 0.2 -q 127.0.0.1 >/dev/null || fail "ping failed"
ip netns exec "$NS" ping -6 -c 2 -i 0.2 -q ::1 >/dev/null || fail "ping6 failed"
# GRE (keys printed as srckey=/dstkey=) and a protocol conntrack has no name for
ip netns exec "$NS" python3 -c '
import socket
for fam, dst, proto in ((socket.AF_INET, "127.0.0.1", 47), (socket.AF_INET, "127.0.0.1", 253),
                        (socket.AF_INET6, "::1", 253)):
    socket.socket(fam, socket.SOCK_RAW, proto).sendto(b"\0\0\x08\0" + b"x" * 20, (dst, 0))
' || fail "raw packets failed"
# The ICMP connections time out after 1 s.  The kernel reports them when it
# reaps them: its GC worker may take a minute, but a table dump evicts
# expired entries at once (as the kernel does it: no portid in the event).
icmp_gone() {
	ip netns exec "$NS" conntrack -L >/dev/null 2>&1
	[ "$(grep -c '\[DESTROY\] icmp' "$WORK/conntrack.txt")" -ge 2 ]
}
sleep 1
wait_for 30 icmp_gone || fail "no destroy events for the timed-out ICMP connections"
ip netns exec "$NS" conntrack -F 2>/dev/null
tcp_gone() { [ "$(grep -c '\[DESTROY\] tcp' "$WORK/conntrack.txt")" -ge 2 ]; }
wait_for 10 tcp_gone || fail "no destroy events after conntrack -F"
sleep 0.5
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "sluice exit status $?: $(cat "$WORK/sluice.log")"
kill "$CT_PID" "$CT2_PID"; wait "$CT_PID" "$CT2_PID" 2>/dev/null || true

compare() {
python3 - "$@" <<'PY'
import re, sys
def load(path):
    out = []
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"^\[(\d+)\.(\d{6})\]\t(.*)$", line)
        if not m:
            continue  # conntrack's closing "N flow events have been shown."
        text = re.sub(r" progname=\S+$", "", m.group(3))
        if "dport=9 " in text:
            continue
        out.append((int(m.group(1)) + int(m.group(2)) / 1e6, text))
    return out
ct, sl = load(sys.argv[1]), load(sys.argv[2])
bad = 0
if len(ct) != len(sl):
    print(f"conntrack printed {len(ct)} lines, sluice {len(sl)}")
    bad += 1
dt = 0.0
for i, (a, b) in enumerate(zip(ct, sl)):
    if a[1] != b[1]:
        print(f"line {i + 1}:\n  conntrack: {a[1]}\n  sluice:    {b[1]}")
        bad += 1
    dt = max(dt, abs(a[0] - b[0]))
if dt >= 1.0:
    print(f"timestamps differ by up to {dt:.6f} s")
    bad += 1
need = ["[NEW] tcp", "[UPDATE] tcp", "[DESTROY] tcp", "[DESTROY] udp", "[DESTROY] icmp ",
        "[DESTROY] icmpv6", "[UNREPLIED]", "[ASSURED]", "mark=7", "zone=3", "delta-time=",
        "packets=", "[USERSPACE] portid=", "gre      47 ", "srckey=0x0 dstkey=0x0",
        "unknown  253 "]
if sys.argv[3] == "ext":
    need += ["ipv4     2 tcp", "ipv6     10 udp", " id="]
# (the extended column sits between the event and the protocol)
plain = [re.sub(r"\] ipv[46] +\d+ ", "] ", t) for _, t in sl]
for n in need:
    if not any(n in t for t in plain + [t for _, t in sl]):
        print(f"no line has {n!r}")
        bad += 1
# Destroys caused by the kernel (timeouts) carry no portid.
if not any("[DESTROY] icmp" in t and "[USERSPACE]" not in t for t in plain):
    print("no destroy without [USERSPACE]")
    bad += 1
print(f"{sys.argv[3]}: {len(sl)} lines compared, timestamps within {dt * 1e3:.3f} ms")
sys.exit(1 if bad else 0)
PY
}
compare "$WORK/conntrack.txt" "$WORK/sluice.txt" default || fail "lines differ (see above)"
compare "$WORK/conntrack-ext.txt" "$WORK/sluice-ext.txt" ext || fail "-o timestamp,id,extended lines differ (see above)"

python3 -m json.tool --json-lines "$WORK/sluice.json" >/dev/null || fail "json output does not parse"
python3 - "$WORK/sluice.json" <<'PY' || fail "json destroy records incomplete"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
destroys = [r for r in recs if r.get("ct_event") == "DESTROY" and r.get("orig_dest_port") != 9]
keys = ["flow_start", "flow_end", "orig_packets", "orig_bytes", "reply_packets", "reply_bytes",
        "orig_src_ip", "reply_src_ip", "proto"]
bad = [r for r in destroys if any(k not in r for k in keys) or r["flow_start"] > r["flow_end"]]
for r in bad:
    print("incomplete:", r)
if len(destroys) < 6:
    print(f"only {len(destroys)} destroy records")
    sys.exit(1)
sys.exit(1 if bad else 0)
PY
pass "every line equal to conntrack -E -o timestamp's, and to -o timestamp,id,extended's"
