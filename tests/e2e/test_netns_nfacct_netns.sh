#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nfacct's `netns:` (issue 23 §1): one daemon in the root namespace polls
# the accounting objects of two namespaces, each with an object of the same
# name counting a different number of datagrams.  Each namespace's records
# carry its name and hold its own count (as its `nfacct list` says).
. "$(dirname "$0")/lib.sh"
need_root
need_cmd ip nfacct iptables-nft python3
[ -e "$SLUICE_PLUGIN_PATH/nfacct.so" ] && [ -e "$SLUICE_PLUGIN_PATH/json.so" ] ||
	skip "nfacct or json plugin not built"
A=$(unique_name snaa)
B=$(unique_name snab)
for ns in "$A" "$B"; do
	make_netns "$ns"
	ip netns exec "$ns" nfacct add sl_obj || skip "nfacct add failed: no nfnetlink_acct"
	ip netns exec "$ns" iptables-nft -A OUTPUT -p udp --dport 9999 -m nfacct --nfacct-name sl_obj \
		2>"$WORK/ipt.err" || skip "iptables-nft -m nfacct refused ($(head -1 "$WORK/ipt.err"))"
done
# udp NS COUNT: COUNT datagrams to port 9999 on the namespace's loopback
udp() {
	ip netns exec "$1" python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(int(sys.argv[1])):
    s.sendto(b"x", ("127.0.0.1", 9999))' "$2"
}
udp "$A" 3
udp "$B" 8
listed() { ip netns exec "$1" nfacct list | sed -n 's/.*pkts = 0*\([0-9][0-9]*\),.*sl_obj.*/\1/p'; }
[ "$(listed "$A")" = 3 ] && [ "$(listed "$B")" = 8 ] || fail "nfacct list: $(listed "$A") and $(listed "$B")"

cat >"$WORK/c.yaml" <<CONF
instances:
  out: { plugin: file, file: $WORK/out.json, flush_interval: 50ms }
stacks:
  a: [{ plugin: nfacct, interval: 200ms, netns: "$A" }, json, out]
  b: [{ plugin: nfacct, interval: 200ms, netns: "/run/netns/$B" }, json, out]
CONF
"$SLUICE" -t -c "$WORK/c.yaml" || fail "sluice -t refused the configuration"
run_sluice_bg "$WORK/sluice.log" -c "$WORK/c.yaml"
# packets NS: the packets of the newest sl_obj record tagged NS
packets() {
	python3 - "$WORK/out.json" "$1" <<'PY'
import json, sys
v = ""
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("netns") == sys.argv[2] and r.get("acct_name") == "sl_obj":
        v = r.get("acct_packets")
print(v)
PY
}
both() { [ -s "$WORK/out.json" ] && [ "$(packets "$A")" = 3 ] && [ "$(packets "$B")" = 8 ]; }
wait_for 20 both || {
	cat "$WORK/sluice.log"
	fail "records: $A $(packets "$A") (want 3), $B $(packets "$B") (want 8)"
}
untagged=$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if "netns" not in json.loads(l)))' "$WORK/out.json")
[ "$untagged" = 0 ] || fail "$untagged records without netns"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
pass "two namespaces' accounting objects, each its own"
