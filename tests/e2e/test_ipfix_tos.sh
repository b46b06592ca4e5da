#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ipfix exports the TOS (issue 19, section 5): replay -> decode -> flow ->
# ipfix -> nfcapd on loopback, and flowfile beside it, on a crafted capture
# (conform_pcap.py tos) with an IPv4 flow of TOS 0xb8 (DSCP EF) and an IPv6
# flow of traffic class 0x28.  nfdump reads ipClassOfService (element 5)
# from nfcapd's file as the flows' "src tos", the same as from the flow
# file: 184 and 40, with the packets and addresses of the capture.
. "$(dirname "$0")/lib.sh"
need_cmd nfcapd nfdump python3 ss
[ -e "$SLUICE_PLUGIN_PATH/ipfix.so" ] && [ -e "$SLUICE_PLUGIN_PATH/flowfile.so" ] ||
	skip "ipfix or flowfile plugin not built"
E2E=$(dirname "$0")
FACTOR=${SLUICE_TEST_TIME_FACTOR:-1}
export TZ=UTC

python3 "$E2E/conform_pcap.py" tos "$WORK/tos.pcap"
port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$WORK/nfcap" "$WORK/ff"
nfcapd -b 127.0.0.1 -p "$port" -w "$WORK/nfcap" -t 3600 >"$WORK/nfcapd.log" 2>&1 &
NFCAPD_PID=$!
at_exit "kill $NFCAPD_PID"
listening() { ss -Huln "sport = :$port" | grep -q .; }
wait_for 10 listening || fail "nfcapd did not start: $(cat "$WORK/nfcapd.log")"

cat >"$WORK/t.yaml" <<YAML
instances:
  cap: {plugin: replay, file: "$WORK/tos.pcap"}
  dec: {plugin: decode, ifnames: false}
  fl: {plugin: flow}
stacks:
  s: [cap, dec, fl, {plugin: ipfix, address: "127.0.0.1:$port"}]
  f: [cap, dec, fl, {plugin: flowfile, dir: "$WORK/ff", compression: none}]
YAML
timeout $((30 * FACTOR)) "$SLUICE" -c "$WORK/t.yaml" >"$WORK/t.log" 2>&1 || { cat "$WORK/t.log"; fail "sluice failed"; }
grep -Eq "counters: s.ipfix \(ipfix\): in=2 out=2 dropped=0 errors=0 messages=[12] send_errors=0 " "$WORK/t.log" ||
	fail "ipfix counters: $(grep 'ipfix)' "$WORK/t.log")"
# the message is in nfcapd's socket once sent: wait until nfcapd has read it, then stop it
drained() { [ "$(ss -Huln "sport = :$port" | awk '{print $2}')" = 0 ]; }
wait_for 10 drained || fail "nfcapd did not read the message"
kill -TERM "$NFCAPD_PID"
wait "$NFCAPD_PID" 2>/dev/null || true

fmt='fmt:%sa,%da,%sp,%dp,%pr,%pkt,%tos'
nfdump -q -R "$WORK/nfcap" -o "$fmt" | tr -d ' ' | sort >"$WORK/ipfix.txt" || fail "nfdump of nfcapd's file"
nfdump -q -R "$WORK/ff" -o "$fmt" | tr -d ' ' | sort >"$WORK/ff.txt" || fail "nfdump of the flow file"
want=$'10.9.0.1,10.9.0.2,5001,53,UDP,2,184\n2001:db8::1,2001:db8::2,5002,53,UDP,3,40'
[ "$(cat "$WORK/ipfix.txt")" = "$want" ] ||
	fail "nfcapd's file: got"$'\n'"$(cat "$WORK/ipfix.txt")"$'\n'"want"$'\n'"$want"
[ "$(cat "$WORK/ff.txt")" = "$want" ] ||
	fail "flow file: got"$'\n'"$(cat "$WORK/ff.txt")"$'\n'"want"$'\n'"$want"
pass "TOS 184 and 40 through nfcapd, as in the flow file"
