#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pcap's pcapng comment finds the rule attribution fields by name
# (rule_table, rule_chain, rule_handle, rule_comment, rule_verdict: nflog's
# `rules: true`, issue 22; here set by the test filter rulestub, with a
# separator and quotes in the names to escape): the capture of
# tests/data/nflog-mixed.pcap replayed to a pcapng and to JSON, tshark's
# comment of every packet equals the JSON record's prefix and rule_*
# fields.  Without the rule fields (no rulestub) the comment has no rule
# part; with only some (no handle, no comment) it has what is there.  The
# link types raw, ethernet and nflog all carry the comment.
. "$(dirname "$0")/lib.sh"
need_cmd tshark python3
E2E=$(dirname "$0")
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR/rules"
[ -e "$SLUICE_TEST_PLUGIN_DIR/rules/rulestub.so" ] || skip "rulestub test plugin not built"

# run NAME STUB_OPTIONS [LINKTYPE]: replay -> decode -> [rulestub] -> pcapng and json
run() {
	local stub=""
	[ -z "$2" ] || stub="{ plugin: rulestub, $2 },"
	cat >"$WORK/$1.yaml" <<YAML
instances:
  rp: { plugin: replay, file: "$SRCDIR/tests/data/nflog-mixed.pcap" }
stacks:
  ng: [rp, decode, $stub { plugin: pcap, file: "$WORK/$1.pcapng", format: pcapng, linktype: ${3:-raw} }]
  js: [rp, decode, $stub json, { plugin: file, file: "$WORK/$1.json" }]
YAML
	"$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.log" 2>&1 || { cat "$WORK/$1.log"; fail "$1: sluice failed"; }
	tshark -r "$WORK/$1.pcapng" -T fields -e frame.time_epoch -e frame.interface_name -e frame.comment \
		>"$WORK/$1.tsv" 2>"$WORK/$1.err" || fail "$1: tshark: $(cat "$WORK/$1.err")"
	m=$(python3 "$E2E/pcapng_check.py" cmp "$WORK/$1.json" "$WORK/$1.tsv" 2>&1) || fail "$1: $m"
	[ "$m" = 40 ] || fail "$1: $m of 40 packets matched"
}

run full 'table: filter, chain: "in;put", handle: 12, comment: "ssh \"in\"", verdict: accept'
grep -q 'prefix "sluice-test "; rule filter/in\\x3bput#12 "ssh \\x22in\\x22" accept$' "$WORK/full.tsv" ||
	fail "rule part not as documented: $(head -1 "$WORK/full.tsv")"
run some 'table: filter, chain: input, verdict: "jump other"' ethernet
grep -q 'prefix "sluice-test "; rule filter/input jump other$' "$WORK/some.tsv" ||
	fail "partial rule not as documented: $(head -1 "$WORK/some.tsv")"
run none '' nflog
grep -q 'rule' "$WORK/none.tsv" && fail "a rule part without rule fields: $(head -1 "$WORK/none.tsv")"
pass "the comment's rule part equals the JSON's rule_* fields for every packet (all, some, none)"
