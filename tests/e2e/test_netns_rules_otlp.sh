#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `rules: true` in OTLP (issue 22): test_netns_rules' ruleset
# (rules_lib.sh, its regular chain's rule with a hostile comment) logs UDP
# in a namespace; nflog -> decode -> json fans out to otlp (a test
# receiver) and to a file, the oracle.  The requests are decoded by
# protobufjs with @opentelemetry/otlp-transformer's definitions
# (otlp_lib.sh) and otlp_compare.py holds every record's attributes to its
# json line: the rule as security_rule.ruleset.name, security_rule.name and
# netfilter.rule_* (the handle an int), none on the ambiguous records.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rules_lib.sh"
need_root
need_cmd ip nft python3
. "$(dirname "$0")/otlp_lib.sh"
otlp_decoder
rules_netns slrot
HOSTILE="s=1|x]y\\z'q"
rules_nft_load "$HOSTILE" "out 6001"
start_receiver "$NS" "$WORK/recv"
cat >"$WORK/c.yaml" <<YAML
stacks:
  o: [{plugin: nflog, group: $G, rules: true}, decode, json,
      {plugin: otlp, url: "http://127.0.0.1:$RECV_PORT/pb/v1/logs", flush_interval: 100ms}]
  f: [{plugin: nflog, group: $G, rules: true}, decode, json, {plugin: file, file: "$WORK/ref.json"}]
YAML
rules_sluice_start
rules_send_all
wait_for 20 rules_logged 24 || { cat "$WORK/sluice.log"; fail "not every packet was logged"; }
wait_for 30 records_ge "$WORK/recv" 24 || fail "the receiver has $(wc -l <"$WORK/.count") of 24 records"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with $?"; }
decode "$WORK/recv" "$WORK/all.jsonl"
python3 "$SRCDIR/tests/e2e/otlp_compare.py" "$WORK/ref.json" "$WORK/all.jsonl" expect=24 ||
	fail "OTLP records differ from json"
python3 - "$WORK/all.jsonl" "$HOSTILE" <<'PY' || fail "the rule attributes are not all there"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
ruled = [r["attrs"] for r in recs if "security_rule.ruleset.name" in r["attrs"]]
assert len(ruled) == 18, len(ruled)
assert all(a["security_rule.ruleset.name"] == {"str": "f"} and "int" in a["netfilter.rule_handle"]
           for a in ruled), ruled
assert any(a.get("security_rule.name") == {"str": sys.argv[2]} for a in ruled), "no hostile comment"
PY
pass "24 OTLP records, the rule's attributes equal json's on the 18 attributed (hostile comment included)"
