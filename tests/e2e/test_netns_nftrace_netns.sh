#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nftrace's `netns:` (issue 23 §1): one daemon in the root namespace traces
# two namespaces, one instance each (by name and by path).  Each
# namespace's trace records carry its name, their rule texts come from its
# own ruleset (the rule's comment names the namespace), and the records of
# its traced rule equal that rule's counter.
. "$(dirname "$0")/lib.sh"
need_root
[ -e "$BUILDDIR/plugins/nftrace.so" ] || skip "built without SLUICE_WITH_NFTRACE"
need_cmd ip nft python3
A=$(unique_name snta)
B=$(unique_name sntb)
for ns in "$A" "$B"; do
	make_netns "$ns"
	ip netns exec "$ns" nft -f - <<NFT || skip "nftables not available"
table inet sl_tr {
	counter seen {}
	chain raw { type filter hook output priority -300; policy accept; udp dport 5201 meta nftrace set 1; }
	chain out { type filter hook output priority 0; policy accept; udp dport 5201 counter name seen comment "traced in $ns"; }
}
NFT
done
cat >"$WORK/c.yaml" <<YAML
instances:
  out: {plugin: file, file: "$WORK/out.json"}
stacks:
  a: [{plugin: nftrace, netns: "$A"}, json, out]
  b: [{plugin: nftrace, netns: "/run/netns/$B"}, json, out]
YAML
"$SLUICE" -t -c "$WORK/c.yaml" || fail "sluice -t refused the configuration"
run_sluice_bg "$WORK/sluice.log" -c "$WORK/c.yaml"
started() { [ "$(grep -c "listening to nftables trace events.*netns" "$WORK/sluice.log")" = 2 ]; }
wait_for 10 started || { cat "$WORK/sluice.log"; fail "nftrace did not start"; }
send() {
	ip netns exec "$1" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"x", ("127.0.0.1", 5201))' "$2"
}
counter() {
	nft_counter "$1" inet sl_tr seen
}
# check NS: "RULE_RECORDS FOREIGN": records of NS whose rule text is its
# traced rule, and records of NS naming the other namespace's rule
check() {
	[ -s "$WORK/out.json" ] || { echo "0 0"; return; }
	python3 - "$WORK/out.json" "$1" <<'PY'
import json, sys
mine = foreign = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("netns") != sys.argv[2]:
        continue
    text = json.dumps(r)
    if "traced in " + sys.argv[2] in text:
        mine += 1
    elif "traced in " in text:
        foreign += 1
print(mine, foreign)
PY
}
send "$A" 3
send "$B" 5
equal() { [ "$(check "$A")" = "$(counter "$A") 0" ] && [ "$(check "$B")" = "$(counter "$B") 0" ]; }
wait_for 20 equal || {
	head -3 "$WORK/out.json"
	cat "$WORK/sluice.log"
	fail "$A: $(check "$A") (counter $(counter "$A")), $B: $(check "$B") (counter $(counter "$B"))"
}
[ "$(counter "$A")" = 3 ] && [ "$(counter "$B")" = 5 ] || fail "unexpected counters"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
pass "two namespaces traced, each with its own rule texts"
