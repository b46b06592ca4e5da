#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog -> decode -> flow -> flowfile on live traffic: two namespaces joined
# by a veth pair; nftables in the server namespace logs every packet of
# known exchanges (TCP, UDP over IPv4 and IPv6, ping, ping6) in both
# directions to an NFLOG group, each rule with a counter.  The flow file,
# read back with `nfdump -r FILE -o csv`, must hold exactly one flow per
# direction of each exchange, with its addresses, ports, protocol, packets
# and layer-3 bytes: UDP and ICMP against the numbers the traffic was built
# with, everything (TCP too, whose ACKs the kernel times) against the
# counters of the nft rules that logged the packets.
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nft python3 nfdump ping
for p in nflog decode flow flowfile; do
	[ -e "$SLUICE_PLUGIN_PATH/$p.so" ] || skip "$p plugin not built"
done
E2E=$(dirname "$0")
A=$(unique_name slfa)
B=$(unique_name slfb)
G=23
make_netns "$A"
make_netns "$B"
ip link add vfa netns "$A" type veth peer name vfb netns "$B" || skip "cannot create veth"
ip -n "$A" addr add 10.98.0.1/24 dev vfa
ip -n "$B" addr add 10.98.0.2/24 dev vfb
ip -n "$A" addr add fd98::1/64 dev vfa nodad
ip -n "$B" addr add fd98::2/64 dev vfb nodad
ip -n "$A" link set vfa up
ip -n "$B" link set vfb up
# No ARP / neighbour discovery: only the exchanges below cross the link.
MA=$(ip -n "$A" -br link show vfa | awk '{print $3}')
MB=$(ip -n "$B" -br link show vfb | awk '{print $3}')
ip -n "$A" neigh add 10.98.0.2 lladdr "$MB" dev vfa nud permanent
ip -n "$B" neigh add 10.98.0.1 lladdr "$MA" dev vfb nud permanent
ip -n "$A" neigh add fd98::2 lladdr "$MB" dev vfa nud permanent
ip -n "$B" neigh add fd98::1 lladdr "$MA" dev vfb nud permanent
# One packet per segment: no GRO/GSO aggregates on either side.
for ns in "$A" "$B"; do
	ip netns exec "$ns" ethtool -K "$(ip -n "$ns" -br link | awk '/^vf/{sub(/@.*/,"",$1); print $1}')" \
		gro off gso off tso off >/dev/null 2>&1 || true
done

ip netns exec "$B" nft -f - <<NFT || skip "nftables log group not available"
table inet sluice_flow_e2e {
	chain in {
		type filter hook input priority 0; policy accept;
		ip saddr 10.98.0.1 tcp dport 5001 counter log group $G comment "tcp4-in"
		ip saddr 10.98.0.1 udp dport 5002 counter log group $G comment "udp4-in"
		ip saddr 10.98.0.1 icmp type echo-request counter log group $G comment "icmp4-in"
		ip6 saddr fd98::1 udp dport 5012 counter log group $G comment "udp6-in"
		ip6 saddr fd98::1 icmpv6 type echo-request counter log group $G comment "icmp6-in"
	}
	chain out {
		type filter hook output priority 0; policy accept;
		ip daddr 10.98.0.1 tcp sport 5001 counter log group $G comment "tcp4-out"
		ip daddr 10.98.0.1 udp sport 5002 counter log group $G comment "udp4-out"
		ip daddr 10.98.0.1 icmp type echo-reply counter log group $G comment "icmp4-out"
		ip6 daddr fd98::1 udp sport 5012 counter log group $G comment "udp6-out"
		ip6 daddr fd98::1 icmpv6 type echo-reply counter log group $G comment "icmp6-out"
	}
}
NFT

mkdir -p "$WORK/ff"
cat >"$WORK/c.yaml" <<CONF
stacks:
  flows: [{ plugin: nflog, group: $G, qtimeout: 20ms }, decode, flow,
          { plugin: flowfile, dir: $WORK/ff, rotate_interval: 1h, ident: live }]
CONF
TZ=UTC ip netns exec "$B" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "started" "$WORK/sluice.log" || fail "sluice did not start: $(cat "$WORK/sluice.log")"

ip netns exec "$B" python3 "$E2E/flow_traffic.py" server "$WORK/ready" &
SRV=$!
at_exit "kill $SRV"
wait_for 10 test -e "$WORK/ready" || fail "traffic server did not start"
t0=$(date +%s)
ip netns exec "$A" python3 "$E2E/flow_traffic.py" client || fail "traffic client failed"
wait "$SRV" || fail "traffic server failed"
ip netns exec "$A" ping -c 3 -i 0.2 -s 56 -q 10.98.0.2 >/dev/null || fail "ping failed"
ip netns exec "$A" ping -6 -c 2 -i 0.2 -s 56 -q fd98::2 >/dev/null || fail "ping6 failed"
sleep 0.3	# NFLOG qtimeout
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "sluice exit status $?: $(cat "$WORK/sluice.log")"
t1=$(date +%s)
ip netns exec "$B" nft list table inet sluice_flow_e2e >"$WORK/nft.txt"

files=("$WORK"/ff/nfcapd.2*)
[ ${#files[@]} = 1 ] && [ -f "${files[0]}" ] || fail "want one flow file, have: $(ls -R "$WORK/ff")"
TZ=UTC nfdump -q -o csv -r "${files[0]}" >"$WORK/flows.csv" 2>"$WORK/nfdump.err" || fail "nfdump -r: $(cat "$WORK/nfdump.err")"

python3 - "$WORK/flows.csv" "$WORK/nft.txt" "$t0" "$t1" <<'PY' || fail "flows differ (see above)"
import calendar, re, sys, time
rows = [l.split(",") for l in open(sys.argv[1]) if l.count(",") > 12]
# nft counters by rule comment
nft = {m.group(3): (int(m.group(1)), int(m.group(2)))
       for m in re.finditer(r"counter packets (\d+) bytes (\d+) .*?comment \"([^\"]+)\"", open(sys.argv[2]).read())}
t0, t1 = int(sys.argv[3]), int(sys.argv[4])
S4, C4, S6, C6 = "10.98.0.2", "10.98.0.1", "fd98::2", "fd98::1"
# (sa, da, sp, dp, proto) -> (nft rule, packets, bytes) ; None: only the nft counter is known
want = {
    (C4, S4, 40001, 5001, "TCP"): ("tcp4-in", None, None),
    (S4, C4, 5001, 40001, "TCP"): ("tcp4-out", None, None),
    (C4, S4, 40002, 5002, "UDP"): ("udp4-in", 4, 4 * 128),
    (S4, C4, 5002, 40002, "UDP"): ("udp4-out", 2, 2 * 328),
    (C6, S6, 40012, 5012, "UDP"): ("udp6-in", 2, 2 * 148),
    (S6, C6, 5012, 40012, "UDP"): ("udp6-out", 1, 98),
    # ICMP: source port 0, destination type << 8 | code (csv prints the number)
    (C4, S4, 0, 8 << 8, "ICMP"): ("icmp4-in", 3, 3 * 84),
    (S4, C4, 0, 0, "ICMP"): ("icmp4-out", 3, 3 * 84),
    (C6, S6, 0, 128 << 8, "ICMP6"): ("icmp6-in", 2, 2 * 104),
    (S6, C6, 0, 129 << 8, "ICMP6"): ("icmp6-out", 2, 2 * 104),
}
bad = 0
got = {}
for c in rows:
    # ts,te,td,sa,da,sp,dp,pr,flg,fwd,stos,ipkt,ibyt,...
    sp = int(c[5])
    key = (c[3], c[4], sp, int(c[6]), c[7])
    if key in got:
        print("two flows for", key)
        bad += 1
    got[key] = (int(c[11]), int(c[12]), c[0], c[1])
for key, (rule, pk, by) in want.items():
    if key not in got:
        print("missing flow", key, "have:", sorted(got))
        bad += 1
        continue
    gp, gb, ts, te = got[key]
    np, nb = nft.get(rule, (None, None))
    if (gp, gb) != (np, nb):
        print(f"{key}: nfdump {gp} packets {gb} bytes, nft counter {rule}: {np} {nb}")
        bad += 1
    if pk is not None and (gp, gb) != (pk, by):
        print(f"{key}: nfdump {gp} packets {gb} bytes, the traffic made {pk} {by}")
        bad += 1
    # times: within the run (csv times are UTC with TZ=UTC)
    s = calendar.timegm(time.strptime(ts[:19], "%Y-%m-%d %H:%M:%S"))
    e = calendar.timegm(time.strptime(te[:19], "%Y-%m-%d %H:%M:%S"))
    if not (t0 - 1 <= s <= e <= t1 + 1):
        print(f"{key}: times {ts} .. {te} outside the run {t0} .. {t1}")
        bad += 1
for key in got:
    if key not in want:
        print("unexpected flow", key, got[key])
        bad += 1
tcp = got.get((C4, S4, 40001, 5001, "TCP"), (0, 0))
print(f"{len(got)} flows; tcp4 client->server {tcp[0]} packets {tcp[1]} bytes")
sys.exit(1 if bad else 0)
PY
pass "10 flows of live traffic as nfdump reads them"
