#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The file output keeps one record per line whatever plugin made the text:
# gen's text with a newline, ESC, DEL and a backslash comes out as one line
# per record with \xNN escapes (counted in "escaped"), while json's text
# from a capture with a hostile prefix is already safe and passes as it is
# (escaped=0, every line valid JSON).  json and logline mark their text
# safe and file skips its scan; a filter setting the text anew after them
# (taint) voids the mark.
. "$(dirname "$0")/lib.sh"
need_cmd python3
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"
DATA="$SRCDIR/tests/data"

cat >"$WORK/gen.yaml" <<YAML
stacks:
  s:
    - {plugin: gen, count: 1000, multiline: true, text: "a\\nFAKE\\e[31m\\x7f\\\\x\\tt\\u00e9"}
    - {plugin: file, file: "$WORK/gen.txt"}
YAML
"$SLUICE" -c "$WORK/gen.yaml" >"$WORK/gen.log" 2>&1 || { cat "$WORK/gen.log"; fail "gen: sluice failed"; }
n=$(wc -l <"$WORK/gen.txt")
[ "$n" = 1000 ] || fail "gen: $n lines for 1000 records"
[ "$(head -1 "$WORK/gen.txt")" = 'a\x0aFAKE\x1b[31m\x7f\x'$'\t''t'$'\303\251'' 0' ] ||
	{ head -1 "$WORK/gen.txt" | od -c | head; fail "gen: text not escaped as expected"; }
grep -q "counters: s.file (file): .* escaped=1000" "$WORK/gen.log" || { cat "$WORK/gen.log"; fail "escaped counter"; }

"$SLUICE" --describe json >/dev/null 2>&1 || skip "no json plugin"
EVIL=$(printf 'x\nFAKE \033[2J"\\\377\302\233' | od -An -tx1 | tr -d ' \n')
python3 "$SRCDIR/tests/e2e/nflog_prefix.py" "$DATA/nflog-mixed.pcap" "$WORK/evil.pcap" "$EVIL"
cat >"$WORK/json.yaml" <<YAML
stacks:
  s: [{plugin: replay, file: "$WORK/evil.pcap"}, decode, json, {plugin: file, file: "$WORK/j.txt"}]
YAML
"$SLUICE" -c "$WORK/json.yaml" >"$WORK/json.log" 2>&1 || { cat "$WORK/json.log"; fail "json: sluice failed"; }
python3 - "$WORK/j.txt" <<'PY' || fail "json lines"
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
assert lines[-1] == b"" and len(lines) == 41, len(lines)
for l in lines[:-1]:
    assert json.loads(l)["prefix"] == 'x\nFAKE \x1b[2J"\\\u00ff\u009b', l
PY
grep -q "counters: s.file (file): .* escaped=0" "$WORK/json.log" || { cat "$WORK/json.log"; fail "file re-escaped json"; }

# json and logline mark their text safe (text_safe) and file copies it
# without its scan: the lines must hold nothing the scan would escape.
# Behind taint (the text set anew with an ESC appended, in other memory)
# the mark does not match and file escapes again, also in a fan-out where
# the other branch takes json's text as it is.
cat >"$WORK/mark.yaml" <<YAML
instances:
  src: {plugin: replay, file: "$WORK/evil.pcap"}
stacks:
  j: [src, decode, json, {plugin: file, file: "$WORK/mj.txt"}]
  t: [src, decode, json, taint, {plugin: file, file: "$WORK/mt.txt"}]
  l: [src, decode, logline, {plugin: file, file: "$WORK/ml.txt"}]
YAML
"$SLUICE" -c "$WORK/mark.yaml" >"$WORK/mark.log" 2>&1 || { cat "$WORK/mark.log"; fail "mark: sluice failed"; }
python3 - "$WORK/mj.txt" "$WORK/ml.txt" "$WORK/mt.txt" <<'PY' || fail "marked text is not clean"
import sys
def clean(line):
    s = line.decode("utf-8")    # strict: no invalid UTF-8, surrogates, overlongs
    return not any((ord(c) < 0x20 and c != "\t") or 0x7f <= ord(c) <= 0x9f for c in s)
for name in sys.argv[1:3]:
    lines = open(name, "rb").read().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 41, (name, len(lines))
    for l in lines[:-1]:
        assert clean(l), (name, l)
j = open(sys.argv[1], "rb").read().split(b"\n")[:-1]
t = open(sys.argv[3], "rb").read().split(b"\n")[:-1]
assert [a + b"\\x1b" for a in j] == t, "taint's ESC not escaped"
PY
for s in "j.file (file): .* escaped=0" "l.file (file): .* escaped=0" "t.file (file): .* escaped=40\\b"; do
	grep -q "counters: $s" "$WORK/mark.log" || { grep counters "$WORK/mark.log"; fail "counter: $s"; }
done
pass "one line per record: gen's text escaped, json's and logline's passed as they are, taint's escaped"
