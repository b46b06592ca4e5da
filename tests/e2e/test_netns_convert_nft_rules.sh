#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sluice convert nft keeps every converted rule attributable (issue 22 §1):
# printk log rules that would share (family, hook, group, prefix) once
# converted get distinct groups, so that nflog's `rules: true` can tell
# them apart.  In a namespace: two rules of the input chain with one prefix,
# a regular chain with the same prefix jumped to from input and output, an
# output rule with it too (it may share a group with the first input rule:
# another hook).  After --apply, a sluice with `rules: true` on every
# group the conversion chose attributes each logged packet (UDP over lo,
# one per rule path) to its rule, and counts nothing in rule_ambiguous.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rules_lib.sh"
need_root
need_cmd ip nft python3
rules_netns sccnr
nftn() { ip netns exec "$NS" nft "$@"; }
nftn -f - <<'NFT' || skip "nftables not available"
table inet f {
	chain sub {
		log prefix "same "
	}
	chain input {
		type filter hook input priority 0; policy accept;
		udp dport 7001 log prefix "same " accept
		udp dport 7002 log prefix "same " accept
		udp dport 7003 jump sub
	}
	chain output {
		type filter hook output priority 0; policy accept;
		udp dport 7004 jump sub
		udp dport 7005 log prefix "same "
	}
}
NFT
ip netns exec "$NS" "$SLUICE" convert nft --syslog none --log-file "$WORK/fw.log" \
	--apply --yaml "$WORK/conv.yaml" >"$WORK/conv.out" 2>"$WORK/conv.err" ||
	{ cat "$WORK/conv.err"; fail "convert nft --apply failed"; }
nftn -a list ruleset >"$WORK/after.txt"
# port (or "sub") -> group and handle of its log rule
python3 - "$WORK/after.txt" >"$WORK/rules.txt" <<'PY' || { cat "$WORK/after.txt"; fail "cannot read the converted ruleset"; }
import re, sys
for line in open(sys.argv[1]):
    m = re.search(r'log prefix "same " group (\d+).*# handle (\d+)', line)
    if not m:
        continue
    p = re.search(r"udp dport (\d+)", line)
    print(p.group(1) if p else "sub", m.group(1), m.group(2))
PY
[ "$(wc -l <"$WORK/rules.txt")" = 4 ] || { cat "$WORK/after.txt"; fail "not 4 converted log rules"; }
grp() { awk -v k="$1" '$1 == k { print $2 }' "$WORK/rules.txt"; }
hnd() { awk -v k="$1" '$1 == k { print $3 }' "$WORK/rules.txt"; }
g1=$(grp 7001) g2=$(grp 7002) gs=$(grp sub) g5=$(grp 7005)
[ "$g1" != "$g2" ] && [ "$gs" != "$g1" ] && [ "$gs" != "$g2" ] ||
	fail "rules sharing hook and prefix share a group: 7001 $g1, 7002 $g2, sub $gs"
[ "$g5" = "$g1" ] || fail "the output rule got group $g5, not the input rule's $g1 (another hook: no clash)"
[ "$(grep -c '^# group [0-9]*: .*(a further group: ' "$WORK/conv.out")" = 2 ] ||
	{ cat "$WORK/conv.out"; fail "the preview does not say why the two further groups are there"; }

# sluice with rules: true on every group chosen, one JSON file each
groups=$(awk '{ print $2 }' "$WORK/rules.txt" | sort -un)
{
	echo "instances:"
	for g in $groups; do echo "  fw$g: {plugin: nflog, group: $g, qtimeout: 20ms, rules: true}"; done
	echo "stacks:"
	for g in $groups; do
		echo "  s$g: [fw$g, json, {plugin: file, file: \"$WORK/g$g.json\", flush_interval: 50ms}]"
	done
} >"$WORK/c.yaml"
ip netns exec "$NS" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "started" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "sluice did not start"; }
ip netns exec "$NS" ip link set lo up
ip netns exec "$NS" python3 -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for port in range(7001, 7006):
    s.sendto(b"x", ("127.0.0.1", port))'
records() { cat "$WORK"/g*.json 2>/dev/null | wc -l; }
five() { [ "$(records)" -ge 5 ]; }
wait_for 10 five || fail "only $(records) of 5 records: $(cat "$WORK"/g*.json 2>/dev/null)"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with an error"; }
python3 - "$WORK/rules.txt" "$WORK"/g*.json <<'PY' || fail "attribution (above)"
import json, sys
rules = {}
for line in open(sys.argv[1]):
    k, g, h = line.split()
    rules[k] = (int(g), int(h))
want = {7001: "7001", 7002: "7002", 7003: "sub", 7004: "sub", 7005: "7005"}
seen, n = set(), 0
for f in sys.argv[2:]:
    for line in open(f):
        r = json.loads(line)
        n += 1
        seen.add((r["group"], r.get("rule_handle"), r["hook"]))
if n != 5:
    sys.exit("%d records, want 5" % n)
expect = {(rules[want[p]][0], rules[want[p]][1], "INPUT" if p < 7004 else "OUTPUT") for p in want}
if seen != expect:
    print("records (group, rule_handle, hook) %r, want %r" % (sorted(seen, key=str), sorted(expect, key=str)))
    sys.exit(1)
PY
amb=$(grep "counters: fw[0-9]* (nflog):" "$WORK/sluice.log" | sed -n 's/.* rule_ambiguous=\([0-9]*\).*/\1/p' | sort -u)
[ "$amb" = 0 ] || fail "rule_ambiguous: $(grep "counters: fw" "$WORK/sluice.log")"
pass "groups 7001=$g1 7002=$g2 sub=$gs 7005=$g5: 5 packets each attributed to its rule, none ambiguous"
