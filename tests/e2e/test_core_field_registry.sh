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

# ---- the count is shown to an operator: sluice stats (--json), /metrics ----
# Stack s writes the unknown id, stack t does not: only s.fieldkeep shows it.
MODULE="${SLUICE_PLUGIN_PATH%%:*}/metrics_http.so"
metrics=
if [ -f "$MODULE" ] && command -v curl >/dev/null; then
	PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	metrics=", metrics: { listen: \"127.0.0.1:$PORT\" }"
fi
cat >"$WORK/live.yaml" <<YAML
daemon: { batch_size: 4, control_socket: "$WORK/ctl"$metrics }
stacks:
  s: [{ plugin: gen, count: -1, interval: 20ms, per_tick: 5 },
      { plugin: fieldkeep, write_unknown: dport_typo }, { plugin: file, file: "$WORK/s.log" }]
  t: [{ plugin: gen, count: -1, interval: 20ms, per_tick: 5 }, fieldkeep,
      { plugin: file, file: "$WORK/t.log" }]
YAML
run_sluice_bg "$WORK/live.log" -c "$WORK/live.yaml"
counted() {
	"$SLUICE" stats --json --socket "$WORK/ctl" >"$WORK/stats.json" 2>/dev/null &&
		grep -q '"bad_field_writes":[1-9]' "$WORK/stats.json" &&
		grep -q '"t.fieldkeep".*"in":[1-9]' "$WORK/stats.json"
}
wait_for "$T" counted || fail "sluice stats --json shows no bad_field_writes: $(cat "$WORK/stats.json" "$WORK/live.log")"
python3 - "$WORK/stats.json" <<'PY' || fail "stats --json: $(cat "$WORK/stats.json")"
import json, sys
inst = {i["name"]: i for i in json.load(open(sys.argv[1]))["instances"]}
s, t = inst["s.fieldkeep"], inst["t.fieldkeep"]
assert 0 < s["counters"]["bad_field_writes"] <= s["in"], s
assert "bad_field_writes" not in t["counters"], t
assert all("bad_field_writes" not in i["counters"] for n, i in inst.items() if n != "s.fieldkeep"), inst
PY
"$SLUICE" stats --socket "$WORK/ctl" >"$WORK/stats.txt" || fail "sluice stats failed"
grep -Eq '^s +s.fieldkeep +fieldkeep .* bad_field_writes=[1-9][0-9]*$' "$WORK/stats.txt" ||
	fail "sluice stats shows no bad_field_writes: $(cat "$WORK/stats.txt")"
grep -q '^t .*bad_field_writes' "$WORK/stats.txt" && fail "sluice stats shows it for t: $(cat "$WORK/stats.txt")"
if [ -n "$metrics" ]; then
	wait_for "$T" grep -qs "metrics: serving" "$WORK/live.log" || fail "no metrics: $(cat "$WORK/live.log")"
	curl -sS --max-time $((10 * TIME_FACTOR)) -o "$WORK/m.txt" "http://127.0.0.1:$PORT/metrics" ||
		fail "the scrape failed"
	grep -Eq '^sluice_fieldkeep_bad_field_writes_total\{instance="s.fieldkeep"\} [1-9][0-9]*$' "$WORK/m.txt" ||
		fail "/metrics has no bad_field_writes: $(grep fieldkeep "$WORK/m.txt")"
	grep -q '^# TYPE sluice_fieldkeep_bad_field_writes_total counter$' "$WORK/m.txt" ||
		fail "/metrics: no TYPE line: $(grep bad_field "$WORK/m.txt")"
	grep -q 'bad_field_writes_total{instance="t.fieldkeep"}' "$WORK/m.txt" &&
		fail "/metrics shows it for t: $(grep bad_field "$WORK/m.txt")"
else
	echo "note: /metrics not checked (no $MODULE or no curl)"
fi
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "sluice exited with $?: $(tail -5 "$WORK/live.log")"
pass "kept field names outlive a reload; a write to an unknown id is refused, counted and shown"
