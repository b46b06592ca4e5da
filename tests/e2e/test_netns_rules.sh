#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `rules: true`: which rule logged each packet.  In a namespace of
# its own, a ruleset logs UDP over loopback to one group: the same prefix
# in the input and the output chain (told apart by the hook), a regular
# chain jumped to from both base chains (its rule attributed at either
# hook), two rules sharing group, prefix and hook (counted in
# rule_ambiguous, named in the log), and a rule added while sluice runs;
# over IPv4 and IPv6 (an inet table).
# Every record of nflog -> decode -> json must carry the rule_* fields of
# the rule that logged it, as `nft -j -a list ruleset` lists it (handle,
# table, chain, family, comment, verdict), or none and be counted; the ECS
# document of the same records must carry rule.id, rule.name,
# rule.ruleset and event.action from the verdict.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rules_lib.sh"
need_root
need_cmd ip nft python3
rules_netns slru
rules_nft_load "sub rule" "out 6001"

cat >"$WORK/c.yaml" <<YAML
stacks:
  j:
    - {plugin: nflog, group: $G, rules: true}
    - decode
    - json
    - {plugin: file, file: "$WORK/out.json"}
  e:
    - {plugin: nflog, group: $G, rules: true}
    - decode
    - {plugin: json, schema: ecs}
    - {plugin: file, file: "$WORK/ecs.json"}
YAML
rules_sluice_start

# send ADDR PORT...: 3 datagrams to each port
send() {
	ip netns exec "$NS" python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, socket.SOCK_DGRAM)
for port in sys.argv[2:]:
    for _ in range(3):
        s.sendto(b"rules", (sys.argv[1], int(port)))' "$@"
}
send 127.0.0.1 5001 5002 5003 6001 6002
# an inet table's statements key IPv6 packets too
send ::1 5001 6002
# a rule added while sluice runs: attributed, from a listing of the new generation
ip netns exec "$NS" nft add rule inet f input udp dport 5004 counter log group $G prefix '"late"' drop comment '"added"'
send 127.0.0.1 5004
# 3 packets x (5001, 5002, 6001, 6002, 5004), 3 x 2 statements for 5003, IPv6: 3 x (5001, 6002)
have_all() {
	kill -USR1 "$SLUICE_PID"
	sleep 0.1
	grep -q "(nflog): in=27 " "$WORK/sluice.log"
}
wait_for 20 have_all || { cat "$WORK/sluice.log"; fail "not every packet was logged"; }
ip netns exec "$NS" nft -j -a list ruleset >"$WORK/ruleset.json"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "sluice exited with $?"

python3 - "$WORK" <<'PY' || { cat "$WORK/sluice.log"; fail "records and rules differ"; }
import json, re, sys
work = sys.argv[1]
rules = {}
for item in json.load(open(f"{work}/ruleset.json"))["nftables"]:
    r = item.get("rule")
    if not r:
        continue
    port = None
    for e in r["expr"]:
        m = e.get("match")
        if m and m["left"].get("payload", {}).get("field") == "dport":
            port = m["right"]
        if "log" in e and port is None:
            port = "sub"
    verdict = None
    last = r["expr"][-1]
    for v in ("accept", "drop", "reject"):
        if v in last:
            verdict = v
    rules.setdefault(port, []).append(dict(rule_family=r["family"], rule_table=r["table"],
        rule_chain=r["chain"], rule_handle=r["handle"], rule_comment=r.get("comment"),
        rule_verdict=verdict))
def want(port):
    return {k: v for k, v in rules[port][0].items() if v is not None}
expect = {5001: want(5001), 6001: want(6001), 5002: want("sub"), 6002: want("sub"),
          5004: want(5004), 5003: {}}
assert want(5001)["rule_chain"] == "input" and want(6001)["rule_chain"] == "output"
assert want(5004) == {"rule_family": "inet", "rule_table": "f", "rule_chain": "input",
                      "rule_handle": want(5004)["rule_handle"], "rule_comment": "added",
                      "rule_verdict": "drop"}, want(5004)
fields = ("rule_family", "rule_table", "rule_chain", "rule_handle", "rule_comment", "rule_verdict")
seen = {}
v6 = 0
for line in open(f"{work}/out.json"):
    rec = json.loads(line)
    port = rec["dest_port"]
    v6 += rec["family"] == "ipv6"
    got = {k: rec[k] for k in fields if k in rec}
    assert got == expect[port], (port, rec["hook"], got, expect[port])
    seen[port] = seen.get(port, 0) + 1
    if port in (5002, 6002):
        assert rec["hook"] == ("INPUT" if port == 5002 else "OUTPUT"), rec
assert seen == {5001: 6, 5002: 3, 5003: 6, 6001: 3, 6002: 6, 5004: 3}, seen
assert v6 == 6, v6
n = 0
for line in open(f"{work}/ecs.json"):
    doc = json.loads(line)
    port = doc["destination"]["port"]
    w = expect[port]
    if not w:
        assert "rule" not in doc and doc["event"]["action"] == "dup", doc
        continue
    rule = {"id": str(w["rule_handle"]), "ruleset": w["rule_table"]}
    if "rule_comment" in w:
        rule["name"] = w["rule_comment"]
    assert doc["rule"] == rule, (doc["rule"], rule)
    assert doc["event"]["action"] == w.get("rule_verdict", "p"), doc["event"]
    n += 1
assert n == 21, n
# the two rules sharing a key are named
dup = sorted(r["rule_handle"] for r in rules[5003])
log = open(f"{work}/sluice.log").read()
assert re.search(r'group 7 prefix "dup" \(ipv4 input\): inet f input #%d, inet f input #%d' % tuple(dup), log) or \
       re.search(r'group 7 prefix "dup" \(ipv4 input\): inet f input #%d, inet f input #%d' % tuple(reversed(dup)), log), log
PY
counters=$(grep "counters: j.nflog (nflog):" "$WORK/sluice.log" | tail -1)
[[ "$counters" == *" rule_ambiguous=6 "* ]] || fail "rule_ambiguous: $counters"
[[ "$counters" == *" rule_unattributed=0 "* ]] || fail "rule_unattributed: $counters"
pass "21 records attributed by hook, regular chain, family and a rule added live; 6 ambiguous, named"
