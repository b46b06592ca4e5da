#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nfct -> ipfix -> nfcapd: real TCP and UDP connections over IPv4 and IPv6
# in a namespace with conntrack; what nfdump reads back from nfcapd's file
# has the addresses, ports, protocol and per-direction packets and bytes
# `conntrack -L` showed before the connections were destroyed.  The same
# nfct instance also fans out to two flowfile outputs (LZ4 and
# uncompressed) whose files must read back the same, with nfdump -I totals
# that match their records.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nfct_lib.sh"
need_root
need_cmd ip nft conntrack nfcapd nfdump python3 ss
[ -e "$SLUICE_PLUGIN_PATH/nfct.so" ] && [ -e "$SLUICE_PLUGIN_PATH/ipfix.so" ] ||
	skip "nfct or ipfix plugin not built"
E2E=$(dirname "$0")
NS=$(unique_name slct)
ct_netns "$NS" 4739

# Accounting off: sluice says so at start (the sysctl is per namespace).
ip netns exec "$NS" sysctl -qw net.netfilter.nf_conntrack_acct=0
cat >"$WORK/warn.yaml" <<CONF
stacks:
  s: [nfct, { plugin: ipfix, address: "127.0.0.1:4739" }]
CONF
ip netns exec "$NS" "$SLUICE" -c "$WORK/warn.yaml" >"$WORK/warn.log" 2>&1 &
pid=$!
wait_for 10 grep -q "started" "$WORK/warn.log" || fail "sluice did not start: $(cat "$WORK/warn.log")"
kill -TERM $pid; wait $pid || true
grep -q "nf_conntrack_acct is 0" "$WORK/warn.log" || fail "no warning about nf_conntrack_acct=0"
ip netns exec "$NS" sysctl -qw net.netfilter.nf_conntrack_acct=1

start_nfcapd "$NS" "$WORK/nfcap" 4739
mkdir -p "$WORK/ff" "$WORK/ffraw"
cat >"$WORK/c.yaml" <<CONF
instances:
  ct: { plugin: nfct }
stacks:
  export: [ct, { plugin: ipfix, address: "127.0.0.1:4739", flush_interval: 100ms }]
  files: [ct, { plugin: flowfile, dir: $WORK/ff, rotate_interval: 1h }]
  raw: [ct, { plugin: flowfile, dir: $WORK/ffraw, rotate_interval: 1h, compression: none }]
CONF
ip netns exec "$NS" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -q "started" "$WORK/sluice.log" || fail "sluice did not start: $(cat "$WORK/sluice.log")"
grep -q "is 0" "$WORK/sluice.log" && fail "sysctl warning with accounting on: $(cat "$WORK/sluice.log")"

t0=$(date +%s)
ip netns exec "$NS" python3 "$E2E/nfct_traffic.py" flows || fail "traffic failed"
# Counters as conntrack has them before the connections end, then end them.
ip netns exec "$NS" conntrack -L >"$WORK/conntrack.txt" 2>/dev/null
ip netns exec "$NS" conntrack -F 2>/dev/null
t1=$(date +%s)
delivered() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.2
	[ "$(counter export.ipfix out "$WORK/sluice.log")" -ge 4 ] 2>/dev/null
}
wait_for 10 delivered || fail "the 4 destroys did not reach ipfix: $(cat "$WORK/sluice.log")"
kill -TERM "$SLUICE_PID"
rc=0; wait "$SLUICE_PID" || rc=$?
[ $rc = 0 ] || fail "sluice exit status $rc: $(cat "$WORK/sluice.log")"
stop_nfcapd
[ "$(counter export.ipfix send_errors "$WORK/sluice.log")" = 0 ] || fail "send errors: $(cat "$WORK/sluice.log")"

nfdump -R "$WORK/nfcap" -o csv >"$WORK/ipfix.csv" 2>&1 || fail "nfdump: $(cat "$WORK/ipfix.csv")"
res=$(python3 "$E2E/nfct_compare.py" "$WORK/conntrack.txt" "$WORK/ipfix.csv" "$t0" "$t1") ||
	fail "ipfix -> nfcapd: $res"$'\n'"$(cat "$WORK/conntrack.txt")"$'\n'"$(cat "$WORK/ipfix.csv")"
msg="ipfix: $res"
# Flow files, LZ4 and uncompressed: the same flows, and nfdump -I's totals
# (flows, packets and bytes of both directions) agree with the records.
for dir in ff ffraw; do
	nfdump -R "$WORK/$dir" -o csv >"$WORK/$dir.csv" 2>&1 || fail "nfdump of $dir: $(cat "$WORK/$dir.csv")"
	res=$(python3 "$E2E/nfct_compare.py" "$WORK/conntrack.txt" "$WORK/$dir.csv" "$t0" "$t1") ||
		fail "flowfile $dir: $res"$'\n'"$(cat "$WORK/$dir.csv")"
	msg="$msg; flowfile $dir: $res"
	want=$(awk -F, '$1 ~ /^[0-9][0-9][0-9][0-9]-/ {n++; p += $12 + $14; b += $13 + $15} END {print n, p, b}' "$WORK/$dir.csv")
	got=$(for f in $(find "$WORK/$dir" -name 'nfcapd.2*' | sort); do nfdump -I -r "$f"; done |
		awk -F': ' '$1 == "Flows" {n += $2} $1 == "Packets" {p += $2} $1 == "Bytes" {b += $2} END {print n, p, b}')
	[ "$want" = "$got" ] || fail "$dir: nfdump -I totals '$got', records add up to '$want'"
done
pass "$msg"
