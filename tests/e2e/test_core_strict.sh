#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Strict mode for plugin development (SLUICE_STRICT=1, or
# daemon.strict_plugins: true): the tests/oot plugins run under it.  The
# deliberately wrong retag (writes `prefix` without providing it,
# allocates in process()) is reported, in the log and in its counters;
# the correct rot13, csv and peek are not (no warning, both counters 0),
# nor are the in-tree ratelimit and dedup, which insert records in place.
# In strict mode a write to an undeclared field is refused in a stack
# without a fan-out too (outside it, only what another stack would see).
# And the poisoned pools and the filters' masks, with tests/oot/hold.c.
. "$(dirname "$0")/lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR:$SLUICE_TEST_PLUGIN_DIR/oot"
CAP="$SRCDIR/tests/data/nflog-mixed.pcap"

cat >"$WORK/c.yaml" <<CONF
instances:
  in: { plugin: replay, file: $CAP }
stacks:
  a: [in, retag, { plugin: csv, file: $WORK/a.csv, fields: [prefix], header: false }]
  b: [in, decode, { plugin: csv, file: $WORK/b.csv, fields: [src_addr, dport, prefix] }]
  c: [in, decode, logline, rot13, { plugin: file, file: $WORK/c.txt }]
  d: [in, decode, { plugin: peek, file: $WORK/d.txt }]
  e: [in, decode, { plugin: peek, file: $WORK/e.txt, thread: true }]
  f: [in, decode, { plugin: ratelimit, rate: 1, burst: 2, key: [src_addr] },
      { plugin: csv, file: $WORK/f.csv, fields: [src_addr, prefix, suppressed] }]
  g: [in, decode, { plugin: dedup, key: [src_addr] },
      { plugin: csv, file: $WORK/g.csv, fields: [src_addr, prefix, suppressed] }]
CONF
SLUICE_STRICT=1 "$SLUICE" -c "$WORK/c.yaml" 2>"$WORK/err" || fail "sluice failed: $(cat "$WORK/err")"
grep -q "strict plugin checks on (SLUICE_STRICT=1)" "$WORK/err" || fail "strict mode not announced: $(cat "$WORK/err")"
# A sanitizer build cannot count allocations (its runtime owns malloc)
# and says so; the malloc checks then expect nothing.
if grep -q "allocations are not counted in this build" "$WORK/err"; then
	echo "note: allocations are not counted in this (sanitizer) build: malloc checks skipped"
	mallocs='[0-9]+'
else
	grep -q "a.retag: strict: plugin 'retag' allocates memory in process()" "$WORK/err" ||
		fail "retag's malloc() not reported: $(cat "$WORK/err")"
	mallocs='[1-9][0-9]*'
fi
grep -q "a.retag: plugin 'retag' changed field 'prefix', which it does not declare in provides: refused" "$WORK/err" ||
	fail "retag's write not reported: $(cat "$WORK/err")"
grep -Eq "counters: a.retag \(retag\): in=40 .* undeclared_writes=40 strict_mallocs=$mallocs" "$WORK/err" ||
	fail "retag's counters: $(grep retag "$WORK/err")"
others=$(grep -E "warning:|error:" "$WORK/err" | grep -v "a.retag: " || true)
[ -z "$others" ] || fail "a correct plugin was reported: $others"
for i in a.csv b.csv c.rot13 d.peek e.peek; do
	grep -Eq "counters: $i \([a-z0-9]+\): in=40 out=40 dropped=0 errors=0 .*undeclared_writes=0 strict_mallocs=0" "$WORK/err" ||
		fail "$i: $(grep "counters: $i " "$WORK/err")"
done
# The in-tree filters that drop records and insert summaries in place
# (plugins/common/splice.c) allocate nothing in process() either.
for i in f.ratelimit g.dedup; do
	grep -Eq "counters: $i \([a-z]+\): in=40 out=[0-9]+ dropped=[0-9]+ errors=0 .* summaries=[1-9][0-9]* .*undeclared_writes=0 strict_mallocs=0$" "$WORK/err" ||
		fail "$i: $(grep "counters: $i " "$WORK/err")"
done
grep -q "counters: f.ratelimit (ratelimit): in=40 out=[0-9]* dropped=[1-9]" "$WORK/err" ||
	fail "ratelimit dropped nothing: $(grep "counters: f.ratelimit " "$WORK/err")"
# The poisoned pools did not change what the correct plugins wrote.
[ "$(grep -c . "$WORK/c.txt")" = 40 ] && [ "$(grep -cx prefix "$WORK/d.txt")" = 40 ] &&
	cmp -s "$WORK/d.txt" "$WORK/e.txt" || fail "outputs under strict mode: $(wc -l "$WORK"/*.txt)"

# A stack of its own (no fan-out), strict mode from the configuration:
# retag's write is refused there too.  Without strict mode it stands.
for strict in true false; do
	cat >"$WORK/one.yaml" <<CONF
daemon: { strict_plugins: $strict }
stacks:
  a: [{ plugin: replay, file: $CAP }, retag, { plugin: csv, file: $WORK/one-$strict.csv, fields: [prefix], header: false }]
CONF
	"$SLUICE" -c "$WORK/one.yaml" 2>"$WORK/err" || fail "sluice failed: $(cat "$WORK/err")"
done
[ "$(grep -c REWRITTEN "$WORK/one-true.csv")" = 0 ] || fail "strict mode let retag's write through"
[ "$(grep -c REWRITTEN "$WORK/one-false.csv")" = 40 ] || fail "retag's own stack without strict mode: $(head -3 "$WORK/one-false.csv")"
cmp -s "$WORK/one-true.csv" "$WORK/a.csv" || fail "strict single stack differs from the fan-out's"

# The deliberately wrong hold keeps its last record after process(): in
# strict mode the batch went back to its pool overwritten, so at stop() the
# record reads 0xa5 bytes; without strict mode it looks like a record.  And
# a filter is shown only what it needs and reads (hold: prefix), in strict
# mode only; the fields hidden from it are there again for the csv after it.
for strict in true false; do
	cat >"$WORK/hold.yaml" <<CONF
daemon: { strict_plugins: $strict }
stacks:
  h: [{ plugin: replay, file: $CAP }, decode, { plugin: hold, file: $WORK/hold-$strict.txt },
      { plugin: csv, file: $WORK/hold-$strict.csv, fields: [src_addr, dport, prefix] }]
CONF
	"$SLUICE" -c "$WORK/hold.yaml" 2>"$WORK/hold-$strict.err" || fail "sluice failed: $(cat "$WORK/hold-$strict.err")"
	[ "$(grep -vc '^kept record: ' "$WORK/hold-$strict.txt")" = 40 ] || fail "hold saw $(wc -l <"$WORK/hold-$strict.txt") records"
done
a5=$(printf "a5%.0s" $(seq 16))
[ "$(tail -1 "$WORK/hold-true.txt")" = "kept record: $a5" ] ||
	fail "strict mode: a record kept after process() is not poisoned: $(tail -1 "$WORK/hold-true.txt")"
kept=$(tail -1 "$WORK/hold-false.txt")
case "$kept" in "kept record: $a5") fail "poisoned without strict mode" ;;
"kept record: "*) ;; *) fail "hold kept no record: $kept" ;; esac
n=$(grep -cx prefix "$WORK/hold-true.txt" || true)
[ "$n" = 40 ] || fail "strict mode: the filter was shown more than it reads in $((40 - n)) of 40 records: $(grep -vx prefix "$WORK/hold-true.txt" | head -2)"
grep -q ' src_addr ' "$WORK/hold-false.txt" || fail "without strict mode the filter is shown every field: $(head -2 "$WORK/hold-false.txt")"
grep -q '^[0-9]' "$WORK/hold-true.csv" && cmp -s "$WORK/hold-true.csv" "$WORK/hold-false.csv" ||
	fail "the fields hidden from hold did not come back after it: $(diff "$WORK/hold-false.csv" "$WORK/hold-true.csv" | head -4)"
pass "retag reported (40 refused writes, malloc in process()); rot13, csv, peek not; a kept record reads 0xa5; a filter is shown what it reads"
