#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `rules: true` per-rule metrics: with daemon.metrics on, /metrics
# has sluice_rule_records_total and sluice_rule_bytes_total per rule of
# the ruleset and sluice_rule_unattributed_total per input.  In a
# namespace of its own, rules with `counter` then `log group` (in the input
# and output chains, and a regular chain both jump to) see UDP of several
# sizes over IPv4 and IPv6; two of them share group and prefix.  Once the
# traffic is logged, each attributable rule's series equals its own nft
# counter (packets and bytes), the two that share have 0 (their records
# are ambiguous), nothing is unattributed, label values are escaped (a
# backslash in a comment), and promtool accepts the text.  `sluice stats
# --rules` prints the same counts, busiest rule first.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rules_lib.sh"
need_root
need_cmd ip nft python3 curl promtool
[ -e "${SLUICE_PLUGIN_PATH%%:*}/metrics_http.so" ] || skip "built without SLUICE_WITH_METRICS"

rules_netns slrm
PORT=9464
rules_nft_load "sub a\\b rule"

cat >"$WORK/c.yaml" <<YAML
daemon:
  metrics: { listen: "127.0.0.1:$PORT" }
  control_socket: $WORK/control
stacks:
  j:
    - {plugin: nflog, group: $G, rules: true}
    - decode
    - json
    - {plugin: file, file: "$WORK/out.json"}
YAML
rules_sluice_start

ip netns exec "$NS" python3 - <<'PY'
import socket
for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    for port, n in ((5001, 5), (5002, 4), (5003, 3), (6001, 2), (6002, 6)):
        for i in range(n):
            s.sendto(b"x" * (10 + 37 * i), (addr, port))
PY

# compare: 0 when every attributable rule's series equals its nft counter
cat >"$WORK/compare.py" <<'PY'
import json, re, sys
metrics, ruleset = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
series = {}
for m in re.finditer(r'^(sluice_rule_\w+)\{([^}]*)\} (\d+)$', metrics, re.M):
    labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
    series[(m.group(1), labels.get("chain"), labels.get("handle"))] = (labels, int(m.group(3)))
bad = []
keys = {}
rules = []
for item in ruleset["nftables"]:
    r = item.get("rule")
    if not r or not any("log" in e for e in r["expr"]):
        continue
    c = next(e["counter"] for e in r["expr"] if "counter" in e)
    log = next(e["log"] for e in r["expr"] if "log" in e)
    rules.append((r, c))
    keys.setdefault((r["chain"], log["prefix"]), []).append(r["handle"])
for r, c in rules:
    log = next(e["log"] for e in r["expr"] if "log" in e)
    shared = len(keys[(r["chain"], log["prefix"])]) > 1
    want_p, want_b = (0, 0) if shared else (c["packets"], c["bytes"])
    for fam, want in (("sluice_rule_records_total", want_p), ("sluice_rule_bytes_total", want_b)):
        got = series.get((fam, r["chain"], str(r["handle"])))
        if not got or got[1] != want:
            bad.append((fam, r["chain"], r["handle"], got and got[1], want))
            continue
        labels = got[0]
        comment = r.get("comment", "").replace("\\", "\\\\").replace('"', '\\"')
        if labels["family"] != "inet" or labels["table"] != "f" or labels["comment"] != comment or \
           not labels.get("netns"):
            bad.append(("labels", labels, r.get("comment")))
    if not shared and c["packets"] == 0:
        bad.append(("no traffic", r["handle"]))
un = re.search(r'^sluice_rule_unattributed_total\{[^}]*\} (\d+)$', metrics, re.M)
if not un or un.group(1) != "0":
    bad.append(("unattributed", un and un.group(1)))
if bad:
    print(bad)
    sys.exit(1)
PY
matches() {
	ip netns exec "$NS" curl -sS --max-time 5 -o "$WORK/m.txt" "http://127.0.0.1:$PORT/metrics" || return 1
	ip netns exec "$NS" nft -j -a list ruleset >"$WORK/ruleset.json"
	python3 "$WORK/compare.py" "$WORK/m.txt" "$WORK/ruleset.json" >"$WORK/compare.out"
}
wait_for 20 matches || { cat "$WORK/compare.out"; grep sluice_rule "$WORK/m.txt"; fail "the series differ from nft's counters"; }
promtool check metrics <"$WORK/m.txt" >"$WORK/promtool.out" 2>&1 ||
	{ cat "$WORK/promtool.out"; fail "promtool check metrics failed"; }
[ ! -s "$WORK/promtool.out" ] || { cat "$WORK/promtool.out"; fail "promtool printed lint problems"; }
# sluice stats --rules: the same records and bytes per rule, busiest first
"$SLUICE" stats --rules --socket "$WORK/control" >"$WORK/rules.txt" || fail "sluice stats --rules failed"
python3 - "$WORK/m.txt" "$WORK/rules.txt" <<'PY' || { cat "$WORK/rules.txt"; fail "stats --rules differs from /metrics"; }
import re, sys
want = {}
for m in re.finditer(r'^sluice_rule_(records|bytes)_total\{[^}]*chain="([^"]*)",handle="(\d+)"[^}]*\} (\d+)$',
                     open(sys.argv[1]).read(), re.M):
    want.setdefault((m.group(2), m.group(3)), {})[m.group(1)] = int(m.group(4))
lines = open(sys.argv[2]).read().splitlines()
assert lines[0].split()[:2] == ["RECORDS", "BYTES"], lines[0]
got, last = {}, None
for line in lines[1:]:
    f = line.split()
    rec, byt, inst, netns, fam, table, chain, handle = f[:8]
    assert inst == "j.nflog" and fam == "inet" and table == "f", line
    got[(chain, handle)] = {"records": int(rec), "bytes": int(byt)}
    assert last is None or int(rec) <= last, "not busiest first: " + line
    last = int(rec)
    if chain == "sub":
        assert line.endswith('"sub a\\x5cb rule"'), line
assert got == want, (got, want)
PY
pass "every attributable rule's series equals its nft counter; stats --rules agrees"
