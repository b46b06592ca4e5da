#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Plugin loading: a plugin of another ABI and an object without the entry
# symbol are refused with a message naming the file and both ABIs;
# --list-plugins and --describe read the plugins' own tables.
. "$(dirname "$0")/lib.sh"
T="$SLUICE_TEST_PLUGIN_DIR"

cat >"$WORK/c.yaml" <<CONF
stacks:
  a: [gen, { plugin: file, file: $WORK/out.log }]
CONF

rc=0; out=$(SLUICE_PLUGIN_PATH="$T/abi99:$SLUICE_PLUGIN_PATH" "$SLUICE" -t -c "$WORK/c.yaml" 2>&1) || rc=$?
[ "$rc" = 78 ] || fail "ABI 99 plugin: exit $rc, expected 78"
grep -qF "$T/abi99/gen.so: plugin built for sluice plugin ABI 99.4, this daemon has ABI 1.4" <<<"$out" ||
	fail "ABI mismatch message missing: $out"

rc=0; out=$(SLUICE_PLUGIN_PATH="$T/noentry:$SLUICE_PLUGIN_PATH" "$SLUICE" -t -c "$WORK/c.yaml" 2>&1) || rc=$?
[ "$rc" = 78 ] || fail "object without entry: exit $rc, expected 78"
grep -qF "$T/noentry/gen.so: not a sluice plugin: no 'sluice_plugin_entry' symbol" <<<"$out" ||
	fail "missing-entry message missing: $out"

export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$T"
list=$("$SLUICE" --list-plugins)
for p in gen upcase file; do
	grep -qE "^$p +(input|filter|output) " <<<"$list" || fail "--list-plugins lacks $p: $list"
done
desc=$("$SLUICE" --describe gen)
grep -q "^gen (input plugin): test input: emits numbered text records" <<<"$desc" || fail "describe header: $desc"
grep -A3 "^  count (integer)" <<<"$desc" | grep -q "values: an integer from -1 to 100000000" ||
	fail "describe count: $desc"
grep -A4 "^  interval (duration)" <<<"$desc" | grep -q "default: 0" || fail "describe interval: $desc"
rc=0; "$SLUICE" --describe nosuch 2>/dev/null || rc=$?
[ "$rc" = 78 ] || fail "--describe of a missing plugin: exit $rc"
pass
