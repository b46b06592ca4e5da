#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# nflog's `rules: true` in the journal (issue 22): test_netns_rules'
# ruleset (rules_lib.sh, its regular chain's rule with a hostile comment)
# logs UDP in a namespace; nflog -> decode fans out to json -> file,
# logline -> file and logline -> journal, in a mount namespace with a
# private systemd-journald (journal_lib.sh).  journal_compare.py holds
# every entry to its json record (RULE_FAMILY, RULE_TABLE, RULE_CHAIN,
# RULE_HANDLE, RULE_COMMENT, RULE_VERDICT included, none on the ambiguous
# records) and its MESSAGE to the logline text; journalctl finds the
# packets of one rule by RULE_HANDLE=.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/rules_lib.sh"
. "$(dirname "$0")/journal_lib.sh"
need_root
need_cmd ip nft python3
[ -e "$SLUICE_PLUGIN_PATH/journal.so" ] || skip "journal output not built"
rules_netns slrj
# after the namespace: the mount namespace binds /run/netns
journal_ns_start
journald_start
HOSTILE="s=1|x]y\\z'q"
rules_nft_load "$HOSTILE" "out 6001"
cat >"$WORK/c.yaml" <<YAML
instances:
  fw: {plugin: nflog, group: $G, rules: true}
stacks:
  j: [fw, decode, json, {plugin: file, file: "$WORK/live.json"}]
  t: [fw, decode, logline, {plugin: file, file: "$WORK/live.txt"}]
  jn: [fw, decode, logline, {plugin: journal}]
YAML
"${JNS[@]}" ip netns exec "$NS" "$SLUICE" -c "$WORK/c.yaml" >"$WORK/sluice.log" 2>&1 &
SLUICE_PID=$!
at_exit "kill $SLUICE_PID"
wait_for 10 grep -qs "bound NFLOG group $G" "$WORK/sluice.log" || { cat "$WORK/sluice.log"; fail "nflog did not start"; }
rules_send_all
wait_for 20 rules_logged 24 || { cat "$WORK/sluice.log"; fail "not every packet was logged"; }
wait_for 10 have_entries 24 || true
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || { cat "$WORK/sluice.log"; fail "sluice exited with $?"; }
wait_for 10 have_entries 24 || fail "$(entries) of 24 journal entries"
jctl -t sluice -o json >"$WORK/journal.json" || fail "journalctl cannot read the journal"
python3 "$SRCDIR/tests/e2e/journal_compare.py" "$WORK/live.json" "$WORK/live.txt" "$WORK/journal.json" sluice 6 ||
	fail "journal entries differ from the json output"
# the packets of one rule, by its handle: the 6 of 5001 (IPv4 and IPv6)
h=$(python3 -c 'import json,sys
print({json.loads(l)["rule_handle"] for l in open(sys.argv[1]) if json.loads(l)["dest_port"] == 5001}.pop())' "$WORK/live.json")
n=$(jctl -t sluice -o json RULE_HANDLE="$h" | wc -l)
[ "$n" = 6 ] || fail "journalctl RULE_HANDLE=$h found $n entries, not 6"
python3 - "$WORK/journal.json" "$HOSTILE" <<'PY' || fail "the rule fields are not all there"
import json, sys
ents = [json.loads(l) for l in open(sys.argv[1])]
ruled = [e for e in ents if "RULE_TABLE" in e]
assert len(ents) == 24 and len(ruled) == 18, (len(ents), len(ruled))
assert any(e.get("RULE_COMMENT") == sys.argv[2] for e in ruled), "no hostile comment"
PY
pass "24 journal entries equal json's records, the rule's fields on the 18 attributed; RULE_HANDLE= finds a rule's packets"
