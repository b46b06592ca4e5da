#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The core's side of ABI 1.2, with the test plugins:
#  - a descriptor without SL_PLUGIN_HEADER is refused naming the macro;
#  - a misspelt field in a plugin's provides gets a "did you mean" warning;
#  - stop() runs for an instance whose start() failed (gen frees its timer);
#  - a filter whose process() fails counts the batch as errors, visibly,
#    and in == out + dropped + errors holds;
#  - fan-out rewinds the batch arena between branches: with one record per
#    batch and records of 1.5 KB, the second branch would find no room;
#  - json prints a field another plugin registered, by its type.
. "$(dirname "$0")/lib.sh"
T="$SLUICE_TEST_PLUGIN_DIR"

cat >"$WORK/c.yaml" <<CONF
stacks:
  a: [gen, { plugin: file, file: $WORK/out.log }]
CONF

rc=0; out=$(SLUICE_PLUGIN_PATH="$T/noheader:$SLUICE_PLUGIN_PATH" "$SLUICE" -t -c "$WORK/c.yaml" 2>&1) || rc=$?
[ "$rc" = 78 ] || fail "plugin without header: exit $rc, expected 78"
grep -qF "$T/noheader/gen.so: plugin descriptor has no ABI version: it must begin with SL_PLUGIN_HEADER" <<<"$out" ||
	fail "no-header message missing: $out"
grep -q "ABI 0.0" <<<"$out" && fail "still says ABI 0.0: $out"

out=$(SLUICE_PLUGIN_PATH="$T/typo:$SLUICE_PLUGIN_PATH" "$SLUICE" -t -c "$WORK/c.yaml" 2>&1) ||
	fail "typo plugin refused: $out"
grep -qF "$T/typo/gen.so: warning: plugin 'gen' declares field 'seq_locl' in its provides, a field nothing else knows, so it is registered as a new field; did you mean 'seq_local'?" <<<"$out" ||
	fail "typo warning missing: $out"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$T"
out=$("$SLUICE" -t -c "$WORK/c.yaml" 2>&1) || fail "gen refused: $out"
grep -q "did you mean" <<<"$out" && fail "warning without a typo: $out"

# stop() after a failed start()
cat >"$WORK/f.yaml" <<CONF
stacks:
  a: [{ plugin: gen, fail_start: true }, { plugin: file, file: $WORK/out.log }]
CONF
rc=0; out=$("$SLUICE" -c "$WORK/f.yaml" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "failed start: exit $rc, expected 1: $out"
grep -q "a.gen: error: failing start() as told" <<<"$out" || fail "start did not fail: $out"
grep -q "a.gen: stopped: timer freed" <<<"$out" || fail "stop() not called after the failed start: $out"

# a failing filter: the batch counts as errors, with a warning
cat >"$WORK/e.yaml" <<CONF
stacks:
  a: [{ plugin: gen, count: 1000, per_tick: 100 }, { plugin: upcase, fail: true },
      { plugin: file, file: $WORK/e.log }]
CONF
out=$("$SLUICE" -c "$WORK/e.yaml" 2>&1) || fail "failing filter stack: $out"
grep -q "counters: a.upcase (upcase): in=1000 out=0 dropped=0 errors=1000" <<<"$out" ||
	fail "failed batches not counted as errors: $(grep counters <<<"$out")"
grep -q "counters: a.file (file): in=0 out=0" <<<"$out" || fail "records passed a failed batch: $out"
n=$(grep -c "a.upcase: process() failed: 100 records lost" <<<"$out" || true)
[ "$n" = 1 ] || fail "expected one warning for 10 failed batches, got $n: $out"
[ -s "$WORK/e.log" ] && fail "file got records"

# fan-out: every branch has the whole arena
text=$(head -c 1500 /dev/zero | tr '\0' x)
cat >"$WORK/a.yaml" <<CONF
daemon: { batch_size: 1 }
stacks:
  one: [{ plugin: gen, count: 50, text: "$text" }, upcase, { plugin: file, file: $WORK/one.log }]
  two: [{ plugin: gen, count: 50, text: "$text" }, upcase, { plugin: file, file: $WORK/two.log }]
  three: [{ plugin: gen, count: 50, text: "$text" }, { plugin: upcase, drop_every: 1000 },
          { plugin: file, file: $WORK/three.log }]
CONF
out=$("$SLUICE" -c "$WORK/a.yaml" 2>&1) || fail "fan-out stack: $out"
for s in one two three; do
	n=$(grep -c "^X\{1500\} [0-9]*$" "$WORK/$s.log" || true)
	[ "$n" = 50 ] || fail "branch $s: $n of 50 records upper-cased: $(grep counters <<<"$out")"
done

# json names and prints a field registered by upcase (upcase_len, u64)
cat >"$WORK/j.yaml" <<CONF
stacks:
  j: [{ plugin: gen, count: 20, text: hello }, upcase, json, { plugin: file, file: $WORK/j.log }]
CONF
"$SLUICE" -c "$WORK/j.yaml" 2>"$WORK/err" || fail "json stack: $(cat "$WORK/err")"
python3 - "$WORK/j.log" <<'PY' || fail "json lacks the registered field"
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
assert len(objs) == 20, len(objs)
for i, o in enumerate(objs):
    assert o["seq_local"] == i, o
    assert o["upcase_len"] == len("hello %d" % i), o
PY
pass
