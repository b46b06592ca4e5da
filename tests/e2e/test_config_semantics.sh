#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Configuration semantics (issue 10, section 6):
# - prefix sharing compares parsed values: `count: 1000` and `count: 0x3e8`
#   are one gen, `{plugin: upcase, drop_every: 0}` and a bare upcase one
#   upcase (-t shows one instance; running it, the shared instances count
#   each record once and every output gets every record once);
# - nflog's group and nfct's events are exclusive, after parsing;
# - --list-plugins and --describe take daemon.plugin_path from -c FILE and
#   read nothing else of it;
# - --help and a run without -c name the configured default file.
. "$(dirname "$0")/lib.sh"
BUILTIN_PATH=$SLUICE_PLUGIN_PATH
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"

cat >"$WORK/share.yaml" <<CONF
stacks:
  a: [{ plugin: gen, count: 1000, per_tick: 100 }, upcase, { plugin: file, file: $WORK/a.log }]
  b: [{ plugin: gen, count: 0x3e8, per_tick: 100, text: record }, { plugin: upcase, drop_every: 0, fail: no }, { plugin: file, file: $WORK/b.log }]
  c: [{ plugin: gen, count: 1000, per_tick: 100 }, { plugin: upcase, drop_every: 2 }, { plugin: file, file: $WORK/c.log }]
CONF
tree=$("$SLUICE" -t -c "$WORK/share.yaml") || fail "sluice -t failed"
expected="$WORK/share.yaml: configuration OK (6 instances, 3 stacks)
a.gen (gen count=1000 per_tick=100)  [a, b, c]
├─ a.upcase (upcase)  [a, b]
│  ├─ a.file (file file=$WORK/a.log)  [a]
│  └─ b.file (file file=$WORK/b.log)  [b]
└─ c.upcase (upcase drop_every=2)  [c]
   └─ c.file (file file=$WORK/c.log)  [c]"
[ "$tree" = "$expected" ] || fail "tree differs:
$tree"
"$SLUICE" -c "$WORK/share.yaml" 2>"$WORK/err" || fail "run failed: $(cat "$WORK/err")"
[ "$(grep -c "counters: .*(gen)" "$WORK/err")" = 1 ] && grep -q "counters: a.gen (gen): in=1000 out=1000 " "$WORK/err" ||
	fail "not one gen of 1000 records: $(grep counters "$WORK/err")"
grep -q "counters: a.upcase (upcase): in=1000 out=1000 dropped=0" "$WORK/err" ||
	fail "shared upcase did not run once per record: $(grep counters "$WORK/err")"
for f in a b; do
	[ "$(seq 0 999 | sed 's/^/RECORD /')" = "$(cat "$WORK/$f.log")" ] ||
		fail "$f.log is not the 1000 records once: $(wc -l <"$WORK/$f.log") lines"
done
[ "$(wc -l <"$WORK/c.log")" = 500 ] || fail "c.log has $(wc -l <"$WORK/c.log") lines"
shared="one gen, one upcase for 2 stacks, 1000 records in each output"

# The issue's own example: group 5 and 0x5, decode with ifnames: yes (its
# default) and a bare decode: one nflog, one decode.  010 is octal: a
# warning, and group 8.
cat >"$WORK/nflog.yaml" <<CONF
stacks:
  a: [{ plugin: nflog, group: 5 }, decode, logline, { plugin: file, file: $WORK/a.log }]
  b: [{ plugin: nflog, group: 0x5 }, { plugin: decode, ifnames: yes }, json, { plugin: file, file: $WORK/b.log }]
  c: [{ plugin: nflog, group: 010 }, decode, logline, { plugin: file, file: $WORK/c.log }]
CONF
tree=$("$SLUICE" -t -c "$WORK/nflog.yaml" 2>"$WORK/nflog.err") || fail "sluice -t nflog.yaml failed: $(cat "$WORK/nflog.err")"
[ "$(grep -c '(nflog ' <<<"$tree")" = 2 ] || fail "not two nflog instances (groups 5 and 8): $tree"
grep -qx 'a.nflog (nflog group=5)  \[a, b\]' <<<"$tree" || fail "group 5 and 0x5 not one instance: $tree"
grep -qx '└─ a.decode (decode)  \[a, b\]' <<<"$tree" || fail "decode not shared: $tree"
[ "$(cat "$WORK/nflog.err")" = "$WORK/nflog.yaml:4:31: warning: 'group': 010 is octal (a leading 0, as in YAML 1.1) and means 8; write 8, or 10 if decimal 10 was meant" ] ||
	fail "octal warning: $(cat "$WORK/nflog.err")"

# Exclusive resources, after parsing: 5 and 0x5 is one group.
cat >"$WORK/excl.yaml" <<CONF
instances:
  fw: { plugin: nflog, group: 5 }
stacks:
  a: [fw, decode, logline, { plugin: file, file: $WORK/x.log }]
  b: [{ plugin: nflog, group: 0x5, seq: false }, decode, logline, { plugin: file, file: $WORK/y.log }]
  c: [{ plugin: nfct, events: [new, destroy] }, logline, { plugin: file, file: $WORK/z.log }]
  d: [{ plugin: nfct, events: [destroy, new], family: ipv4 }, logline, { plugin: file, file: $WORK/w.log }]
CONF
rc=0
"$SLUICE" -t -c "$WORK/excl.yaml" >/dev/null 2>"$WORK/excl.err" || rc=$?
[ "$rc" = 78 ] || fail "two instances on group 5: exit $rc, not 78"
[ "$(cat "$WORK/excl.err")" = "$WORK/excl.yaml:5:31: error: instance 'b.nflog' has the same group 5 as instance 'fw' (line 2, column 31); plugin 'nflog' allows one instance per value of 'group'
$WORK/excl.yaml:7:31: error: instance 'd.nfct' has the same events [destroy, new] as instance 'c.nfct' (line 6, column 31); plugin 'nfct' allows one instance per value of 'events'
sluice: 2 errors in $WORK/excl.yaml; nothing started" ] || fail "exclusive errors: $(cat "$WORK/excl.err")"
"$SLUICE" --describe nflog | grep -A4 '^  group (integer)' | grep -qx '      exclusive: one instance of nflog per value' ||
	fail "--describe nflog does not say group is exclusive"

# --list-plugins / --describe with -c: only daemon.plugin_path is read.
mkdir "$WORK/plugins"
cp "$SLUICE_TEST_PLUGIN_DIR/gen.so" "$WORK/plugins/"
cat >"$WORK/path.yaml" <<CONF
daemon:
  plugin_path: $WORK/plugins
  bogus: 1
stackz: nothing valid here
CONF
list=$(SLUICE_PLUGIN_PATH=$BUILTIN_PATH "$SLUICE" --list-plugins -c "$WORK/path.yaml") ||
	fail "--list-plugins -c failed"
grep -q '^gen  *input ' <<<"$list" || fail "--list-plugins -c: no gen from daemon.plugin_path"
grep -q '^nflog  *input ' <<<"$list" || fail "--list-plugins -c: lost the other plugins"
! SLUICE_PLUGIN_PATH=$BUILTIN_PATH "$SLUICE" --list-plugins | grep -q '^gen ' ||
	fail "--list-plugins without -c found gen"
SLUICE_PLUGIN_PATH=$BUILTIN_PATH "$SLUICE" -c "$WORK/path.yaml" --describe gen |
	grep -qx "file: $WORK/plugins/gen.so" || fail "--describe gen -c: not from daemon.plugin_path"
rc=0
SLUICE_PLUGIN_PATH=$BUILTIN_PATH "$SLUICE" --describe gen >/dev/null 2>&1 || rc=$?
[ "$rc" = 78 ] || fail "--describe gen without -c: exit $rc, not 78"
printf 'daemon: { plugin_path: [%s\n' "$WORK/plugins" >"$WORK/broken.yaml"
rc=0
"$SLUICE" --list-plugins -c "$WORK/broken.yaml" >/dev/null 2>&1 || rc=$?
[ "$rc" = 78 ] || fail "--list-plugins -c with a YAML syntax error: exit $rc, not 78"

# The default file is the configured one, in --help and when read.
: "${SLUICE_DEFAULT_CONFIG:?run through ctest}"
"$SLUICE" --help | grep -qF "(default $SLUICE_DEFAULT_CONFIG)" ||
	fail "--help does not name $SLUICE_DEFAULT_CONFIG"
# (With an installed config hidden: lib.sh's uninstalled.)
if uninstalled true; then
	rc=0
	uninstalled "$SLUICE" -t >/dev/null 2>"$WORK/default.err" || rc=$?
	[ "$rc" = 78 ] && grep -qF "$SLUICE_DEFAULT_CONFIG" "$WORK/default.err" ||
		fail "sluice -t without -c did not read $SLUICE_DEFAULT_CONFIG: exit $rc, $(cat "$WORK/default.err")"
fi
pass "$shared; exclusive group/events reported; plugin_path from -c; default $SLUICE_DEFAULT_CONFIG"
