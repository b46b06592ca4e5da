#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cef on conntrack events: nfct -> cef, cef (format: leef) and json, each
# into a file, for real connections in a namespace (TCP and UDP over IPv4
# and IPv6, ping and ping6, a connection with a ct mark), NEW, UPDATE and
# DESTROY events (conntrack -F).  cef_check.py reads the lines with its
# own parser and compares each with json's object for the same record:
# the original direction's addresses, ports (TCP and UDP only: an ICMP
# tuple has none), protocol, both directions' bytes, the conntrack id and
# event, the mark; no prefix, so signature and name are "-".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/nfct_lib.sh"
need_root
need_cmd ip nft conntrack python3 ping
E2E=$(dirname "$0")
NS=$(unique_name slcefct)
ct_netns "$NS" 4740
ip netns exec "$NS" nft -f - <<'NFT' || skip "nft ct mark unavailable"
table inet sluice_cefct {
	chain out { type filter hook output priority 0; udp dport 5012 ct mark set 7; }
}
NFT

cat >"$WORK/c.yaml" <<CONF
instances:
  ct: { plugin: nfct, events: [new, update, destroy] }
stacks:
  cef: [ct, cef, { plugin: file, file: "$WORK/out.cef", flush_interval: 50ms }]
  leef: [ct, { plugin: cef, format: leef }, { plugin: file, file: "$WORK/out.leef", flush_interval: 50ms }]
  json: [ct, json, { plugin: file, file: "$WORK/out.json", flush_interval: 50ms }]
CONF
ip netns exec "$NS" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID 2>/dev/null"
wait_for 10 grep -qs "started" "$WORK/sluice.log" || fail "sluice did not start: $(cat "$WORK/sluice.log")"
probe() {
	ip netns exec "$NS" python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"p", ("127.0.0.1", 9))'
	grep -qs '"dest_port":9\b\|"orig_dest_port":9,' "$WORK/out.json"
}
wait_for 10 probe || fail "nfct not listening: $(cat "$WORK/sluice.log")"

ip netns exec "$NS" python3 "$E2E/nfct_traffic.py" flows || fail "traffic failed"
ip netns exec "$NS" ping -c 2 -i 0.2 -q 127.0.0.1 >/dev/null || fail "ping failed"
ip netns exec "$NS" ping -6 -c 2 -i 0.2 -q ::1 >/dev/null || fail "ping6 failed"
ip netns exec "$NS" conntrack -F 2>/dev/null
destroyed() { [ "$(grep -c 'cs3=DESTROY' "$WORK/out.cef")" -ge 4 ] && grep -qs 'proto=TCP' "$WORK/out.cef"; }
wait_for 10 destroyed || fail "no DESTROY events in the CEF file: $(cat "$WORK/sluice.log")"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "sluice exit status $?: $(cat "$WORK/sluice.log")"

python3 "$SRCDIR/tests/e2e/cef_check.py" "$WORK/out.cef" "$WORK/out.leef" "$WORK/out.json" ||
	{ head -c 3000 "$WORK/out.cef"; fail "CEF/LEEF lines of connections do not read back"; }
for want in 'c6a2=::1' 'proto=ICMP ' 'proto=ICMPV6' 'proto=UDP' 'cs3=NEW' 'cn3=7' 'out='; do
	grep -qF -- "$want" "$WORK/out.cef" || fail "no CEF line has $want"
done
pass "$(wc -l <"$WORK/out.cef") connection events as CEF and LEEF, read back to json's values"
