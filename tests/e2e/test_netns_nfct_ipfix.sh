#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nfct -> ipfix -> nfcapd: real TCP and UDP connections over IPv4 and IPv6
# in a namespace with conntrack; what nfdump reads back from nfcapd's file
# has the addresses, ports, protocol and per-direction packets and bytes
# `conntrack -L` showed before the connections were destroyed.  When the
# flowfile output is built, the same records also go to flow files (one
# nfct instance fanned out to both) and must read back the same.
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
FLOWFILE=no
[ -e "$SLUICE_PLUGIN_PATH/flowfile.so" ] && FLOWFILE=yes
{
	echo "instances:"
	echo "  ct: { plugin: nfct }"
	echo "stacks:"
	echo "  export: [ct, { plugin: ipfix, address: \"127.0.0.1:4739\", flush_interval: 100ms }]"
	if [ $FLOWFILE = yes ]; then
		mkdir -p "$WORK/ff"
		echo "  files: [ct, { plugin: flowfile, dir: $WORK/ff, rotate_interval: 1h }]"
	fi
} >"$WORK/c.yaml"
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
if [ $FLOWFILE = yes ]; then
	nfdump -R "$WORK/ff" -o csv >"$WORK/ff.csv" 2>&1 || fail "nfdump of flowfile: $(cat "$WORK/ff.csv")"
	res=$(python3 "$E2E/nfct_compare.py" "$WORK/conntrack.txt" "$WORK/ff.csv" "$t0" "$t1") ||
		fail "flowfile: $res"$'\n'"$(cat "$WORK/ff.csv")"
	msg="$msg; flowfile: $res"
fi
pass "$msg"
