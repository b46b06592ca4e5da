#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Stack wiring: a named instance fans out to every stack using it, equal
# prefixes are shared (one upcase for stacks a and b, seen in the tree and
# in the counters), two instances of one plugin work side by side, and a
# branch's drops and rewrites never leak into a sibling branch.
. "$(dirname "$0")/lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"

cat >"$WORK/c.yaml" <<CONF
instances:
  src: { plugin: gen, count: 1000, per_tick: 100 }
stacks:
  a: [src, upcase, { plugin: file, file: $WORK/a.log }]
  b: [src, upcase, { plugin: file, file: $WORK/b.log }]
  c: [src, { plugin: upcase, drop_every: 2 }, { plugin: file, file: $WORK/c.log }]
  d: [src, { plugin: file, file: $WORK/d.log }]
CONF

tree=$("$SLUICE" -t -c "$WORK/c.yaml") || fail "sluice -t failed"
expected="src (gen count=1000 per_tick=100)  [a, b, c, d]
├─ a.upcase (upcase)  [a, b]
│  ├─ a.file (file file=$WORK/a.log)  [a]
│  └─ b.file (file file=$WORK/b.log)  [b]
├─ c.upcase (upcase drop_every=2)  [c]
│  └─ c.file (file file=$WORK/c.log)  [c]
└─ d.file (file file=$WORK/d.log)  [d]"
[ "$(tail -n +2 <<<"$tree")" = "$expected" ] || fail "tree differs:
$tree"

"$SLUICE" -c "$WORK/c.yaml" 2>"$WORK/err" || fail "run failed: $(cat "$WORK/err")"
grep -q "counters: a.upcase (upcase): in=1000 out=1000 dropped=0" "$WORK/err" ||
	fail "shared upcase did not run once per record: $(cat "$WORK/err")"
grep -q "counters: c.upcase (upcase): in=1000 out=500 dropped=500" "$WORK/err" ||
	fail "c.upcase counters: $(cat "$WORK/err")"
for f in a b d; do
	[ "$(wc -l <"$WORK/$f.log")" = 1000 ] || fail "$f.log has $(wc -l <"$WORK/$f.log") lines"
done
[ "$(wc -l <"$WORK/c.log")" = 500 ] || fail "c.log has $(wc -l <"$WORK/c.log") lines"
[ "$(sed -n 1p "$WORK/a.log")" = "RECORD 0" ] || fail "a.log not upper-cased"
cmp -s "$WORK/a.log" "$WORK/b.log" || fail "a.log and b.log differ"
# d is a sibling of the upcase branches: it must see the text as gen made it.
[ "$(sed -n 1p "$WORK/d.log")" = "record 0" ] || fail "upcase leaked into stack d: $(sed -n 1p "$WORK/d.log")"
[ "$(seq 0 999 | sed 's/^/record /')" = "$(cat "$WORK/d.log")" ] || fail "d.log lost or reordered records"
[ "$(sed -n 2p "$WORK/c.log")" = "RECORD 2" ] || fail "c.log dropped the wrong records"
pass
