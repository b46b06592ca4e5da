#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ABI 1.3, the field registry, with the out-of-tree filter tests/oot/fieldkeep.c:
#  - a name field_name() gave in configure() lives as long as the process:
#    the filter keeps the pointer and prints it on every record; a reload
#    that keeps the filter and registers another field (upcase_len) frees
#    the old registry.  Before, the name was freed with it: garbage in the
#    output (or a heap-use-after-free under ASan);
#  - writing the id field_id() answered for an unknown name (-1, 65535 as
#    an sl_field) is refused: the output is the same as without the write,
#    the refused writes are counted (bad_field_writes) and logged once.
. "$(dirname "$0")/lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
T=30

# ---- a kept name survives the reload ----
conf() {	# conf FILE [extra stack]
	cat >"$1" <<YAML
stacks:
  s: [{ plugin: gen, count: -1, interval: 20ms, per_tick: 5 }, fieldkeep,
      { plugin: file, file: "$WORK/out.log" }]
${2:-}
YAML
}
conf "$WORK/c.yaml"
L="$WORK/run.log"
run_sluice_bg "$L" -c "$WORK/c.yaml"
wait_for "$T" grep -q "started:" "$L" || fail "did not start: $(cat "$L")"
lines() { wc -l <"$WORK/out.log" 2>/dev/null || echo 0; }
wait_for "$T" bash -c "[ \$(wc -l <'$WORK/out.log' 2>/dev/null || echo 0) -gt 10 ]" ||
	fail "no records: $(tail -3 "$L")"
conf "$WORK/c.yaml" "  t: [{ plugin: gen, count: 5, text: other }, upcase, { plugin: file, file: \"$WORK/t.log\" }]"
kill -HUP "$SLUICE_PID"
wait_for "$T" grep -q "reload: 3 kept, 3 added, 0 removed" "$L" || fail "no reload: $(tail -5 "$L")"
n=$(lines)
wait_for "$T" bash -c "[ \$(wc -l <'$WORK/out.log' 2>/dev/null || echo 0) -gt $((n + 20)) ]" ||
	fail "no records after the reload: $(tail -5 "$L")"
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "sluice exited with $?: $(tail -20 "$L")"
[ "$(wc -l <"$WORK/t.log")" = 5 ] || fail "the added stack wrote $(wc -l <"$WORK/t.log") of 5 records"
# Every record, before and after the reload, carries the name as registered.
bad=$(grep -avc '^fieldkeep_tag=record [0-9]*$' "$WORK/out.log" || true)
[ "$bad" = 0 ] || fail "$bad records with another name after the reload: $(grep -av '^fieldkeep_tag=record' "$WORK/out.log" | head -3 | od -c | head -5)"
grep -q "ERROR: AddressSanitizer" "$L" && fail "ASan: $(grep -A5 AddressSanitizer "$L")"

# ---- an unknown id is refused, counted once, harms no record ----
run() {	# run NAME [fieldkeep options]
	cat >"$WORK/$1.yaml" <<YAML
daemon: { batch_size: 4 }
stacks:
  s: [{ plugin: gen, count: 1000, per_tick: 50 }, { plugin: fieldkeep${2:-} }, json,
      { plugin: file, file: "$WORK/$1.json" }]
YAML
	"$SLUICE" -c "$WORK/$1.yaml" >"$WORK/$1.err" 2>&1 || fail "$1: sluice failed: $(tail -5 "$WORK/$1.err")"
}
run good
run bad ", write_unknown: dport_typo"
cmp "$WORK/good.json" "$WORK/bad.json" || fail "records changed by the refused write: $(diff "$WORK/good.json" "$WORK/bad.json" | head -5)"
[ "$(wc -l <"$WORK/bad.json")" = 1000 ] || fail "$(wc -l <"$WORK/bad.json") of 1000 records"
grep -q "counters: s.fieldkeep (fieldkeep): in=1000 out=1000 dropped=0 errors=0 bad_field_writes=1000$" "$WORK/bad.err" ||
	fail "refused writes not counted: $(grep counters "$WORK/bad.err")"
n=$(grep -c "s.fieldkeep: plugin 'fieldkeep' wrote a field id it never registered" "$WORK/bad.err" || true)
[ "$n" = 1 ] || fail "expected one warning, got $n: $(cat "$WORK/bad.err")"
# An id past the configuration's fields but below SL_FIELD_REFUSED cannot be
# refused by the setter (it does not know the graph): its presence bit is
# found after process(), cleared and counted.  Marked only, so no value is
# written past the record here.
run mark ", mark_id: 254"
cmp "$WORK/good.json" "$WORK/mark.json" || fail "the marked id reached json: $(diff "$WORK/good.json" "$WORK/mark.json" | head -5)"
grep -q "counters: s.fieldkeep (fieldkeep): in=1000 out=1000 dropped=0 errors=0 bad_field_writes=1000$" "$WORK/mark.err" ||
	fail "marked id not counted: $(grep counters "$WORK/mark.err")"
grep -q "bad_field_writes" "$WORK/good.err" && fail "counted without a bad write: $(grep counters "$WORK/good.err")"
pass "kept field names outlive a reload; a write to an unknown id is refused and counted"
