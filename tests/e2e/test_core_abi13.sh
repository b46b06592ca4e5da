#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Plugin ABI 1.3, the loader's side (issue 19 section 6):
#  - a plugin states the minor it needs: one needing 1.2 loads and runs,
#    one needing a minor newer than the daemon's is refused naming the file
#    and both versions, one declaring 1.2 but using a 1.3 option flag is
#    refused naming the option and the flag;
#  - option tables are checked at load: a duplicate name and a default that
#    does not parse are the plugin's errors (naming its file and option),
#    for -t, --describe and sluice --check-plugin, which lists each problem;
#  - a broken or misnamed plugin on the path is named with its reason by
#    --list-plugins and at start, and cannot take another plugin's name;
#  - <sluice/plugin.h> compiles as C++17 (tests/oot/cxxtag.cc, loaded and
#    run) and SL_OPT_ROW no longer compiles.
. "$(dirname "$0")/lib.sh"
need_cmd cc g++
T="$SLUICE_TEST_PLUGIN_DIR"
V="$T/abi13"

cat >"$WORK/c.yaml" <<CONF
stacks:
  a: [{ plugin: gen, count: 3 }, { plugin: file, file: $WORK/out.log }]
CONF
run_with() {	# run_with DIR ARGS...: the test plugins' gen replaced by DIR/gen.so
	local dir=$1
	shift
	SLUICE_PLUGIN_PATH="$dir:$SLUICE_PLUGIN_PATH:$T" "$SLUICE" "$@"
}

# Needs 1.2, uses nothing newer: loads and runs (a 1.2 daemon applies the same test).
run_with "$V/min2" -c "$WORK/c.yaml" 2>"$WORK/err" || fail "plugin needing 1.2 refused: $(cat "$WORK/err")"
[ "$(wc -l <"$WORK/out.log")" = 3 ] || fail "plugin needing 1.2 did not run: $(cat "$WORK/err")"
out=$("$SLUICE" --check-plugin "$V/min2/gen.so") || fail "--check-plugin refused min2: $out"
grep -qF "$V/min2/gen.so: plugin 'gen' (input), needs ABI 1.2 (this sluice has 1.4): OK" <<<"$out" ||
	fail "--check-plugin min2: $out"

# Needs a newer minor than the daemon's.
rc=0; out=$(run_with "$V/nextminor" -t -c "$WORK/c.yaml" 2>&1) || rc=$?
[ "$rc" = 78 ] || fail "plugin needing 1.4: exit $rc, expected 78: $out"
grep -qF "$V/nextminor/gen.so: plugin needs sluice plugin ABI 1.5, this daemon has ABI 1.4" <<<"$out" ||
	fail "newer-minor message: $out"

# Declares 1.2, marks an option SL_OPT_SECRET (1.3): a 1.2 daemon would print the secret.
rc=0; out=$(run_with "$V/min2secret" -t -c "$WORK/c.yaml" 2>&1) || rc=$?
[ "$rc" = 78 ] || fail "1.3 flag under a 1.2 header: exit $rc, expected 78: $out"
grep -qF "$V/min2secret/gen.so: plugin 'gen': option 'token' uses SL_OPT_SECRET, defined since ABI 1.3, but the plugin declares it needs only ABI 1.2" <<<"$out" ||
	fail "1.3 flag message: $out"
out=$(run_with "$V/secret" -t -c "$WORK/c.yaml" 2>&1) || fail "the same plugin needing 1.3 refused: $out"

# A duplicate option and a default that is no integer: the plugin's errors.
rc=0; out=$(run_with "$V/badopts" -t -c "$WORK/c.yaml" 2>&1) || rc=$?
[ "$rc" = 78 ] || fail "bad option table: exit $rc, expected 78: $out"
grep -qF "$V/badopts/gen.so: plugin 'gen': option 'count' is declared twice (rows 1 and 7 of the table)" <<<"$out" ||
	fail "duplicate option not reported: $out"
grep -qF "$V/badopts/gen.so: plugin 'gen': bad default: option 'ratio': expected an integer from 0 to 10, got 'lots'" <<<"$out" ||
	fail "bad default not reported: $out"
grep -q "has a bad default" <<<"$out" && fail "bad default blamed on the configuration: $out"
rc=0; out=$(run_with "$V/dupopt" --describe gen 2>&1) || rc=$?
[ "$rc" = 78 ] || fail "--describe of a table with a duplicate: exit $rc: $out"
grep -qF "option 'count' is declared twice" <<<"$out" || fail "--describe duplicate: $out"
[ "$(grep -c '^  count ' <<<"$out")" = 0 ] || fail "--describe listed the options anyway: $out"

# --check-plugin: every problem, one a line, non-zero; sound plugins pass.
rc=0; out=$("$SLUICE" --check-plugin "$V/badopts/gen.so" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "--check-plugin badopts: exit $rc: $out"
[ "$(grep -c "^$V/badopts/gen.so: plugin 'gen': " <<<"$out")" = 2 ] || fail "--check-plugin problems: $out"
rc=0; out=$("$SLUICE" --check-plugin "$V/min2secret/gen.so" 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -q "SL_OPT_SECRET, defined since ABI 1.3" <<<"$out" || fail "--check-plugin min2secret: $rc $out"
rc=0; out=$("$SLUICE" --check-plugin "$V/nextminor/gen.so" 2>&1) || rc=$?
[ "$rc" = 1 ] || fail "--check-plugin nextminor: exit $rc: $out"
rc=0; out=$("$SLUICE" --check-plugin "$WORK/none.so" 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -qF "$WORK/none.so: cannot load plugin" <<<"$out" || fail "--check-plugin missing: $rc $out"
for p in "$T/gen.so" "$T/upcase.so" "$T/csv.so"; do
	"$SLUICE" --check-plugin "$p" >/dev/null || fail "--check-plugin refused $p"
done

# A broken and a misnamed plugin on the path, and one shadowed by a same-named file.
mkdir -p "$WORK/third" "$WORK/later"
echo "not an ELF" >"$WORK/third/broken.so"
cp "$T/upcase.so" "$WORK/third/aaa.so"		# calls itself upcase
cp "$T/gen.so" "$WORK/later/gen.so"
export SLUICE_PLUGIN_PATH="$WORK/third:$SLUICE_PLUGIN_PATH:$T:$WORK/later"
"$SLUICE" --list-plugins >"$WORK/list" 2>"$WORK/err" || fail "--list-plugins: $(cat "$WORK/err")"
grep -qF "sluice: $WORK/third/broken.so: cannot load plugin: " "$WORK/err" || fail "broken.so not named: $(cat "$WORK/err")"
grep -qF "sluice: $WORK/third/aaa.so: file is named 'aaa' but the plugin calls itself 'upcase'" "$WORK/err" ||
	fail "misnamed plugin not named: $(cat "$WORK/err")"
grep -qF "sluice: warning: $WORK/later/gen.so: not used: plugin name 'gen' is taken by $T/gen.so, earlier on the plugin path" "$WORK/err" ||
	fail "shadowed plugin not named: $(cat "$WORK/err")"
[ "$(grep -c '^upcase ' "$WORK/list")" = 1 ] || fail "upcase listed twice: $(cat "$WORK/list")"
"$SLUICE" --describe upcase | grep -qF "file: $T/upcase.so" || fail "the misnamed file took upcase's name"
cat >"$WORK/u.yaml" <<CONF
stacks:
  u: [{ plugin: gen, count: 2, text: hi }, upcase, { plugin: file, file: $WORK/u.log }]
CONF
"$SLUICE" -c "$WORK/u.yaml" 2>"$WORK/err" || fail "stack beside broken plugins: $(cat "$WORK/err")"
grep -qF "$WORK/third/broken.so: cannot load plugin: " "$WORK/err" || fail "start was silent on broken.so: $(cat "$WORK/err")"
grep -qF "$WORK/third/aaa.so: file is named 'aaa' but the plugin calls itself 'upcase'; the plugin is skipped" "$WORK/err" ||
	fail "start was silent on aaa.so: $(cat "$WORK/err")"
[ "$(head -1 "$WORK/u.log")" = "HI 0" ] || fail "upcase did not run: $(cat "$WORK/u.log")"
export SLUICE_PLUGIN_PATH="${SLUICE_PLUGIN_PATH#"$WORK/third:"}"

# C++: the header and the example filter build as C++17 and run.
mkdir -p "$WORK/cxx"
g++ -std=c++17 -Wall -Wextra -Wno-missing-field-initializers -Werror -fPIC -fvisibility=hidden \
	-I"$SRCDIR/core/include" -shared -o "$WORK/cxx/cxxtag.so" "$SRCDIR/tests/oot/cxxtag.cc" \
	-Wl,--no-undefined 2>"$WORK/gxx.log" || fail "cxxtag.cc does not build: $(cat "$WORK/gxx.log")"
"$SLUICE" --check-plugin "$WORK/cxx/cxxtag.so" >/dev/null || fail "--check-plugin refused cxxtag"
cat >"$WORK/x.yaml" <<CONF
stacks:
  x: [{ plugin: gen, count: 3, text: abc }, { plugin: cxxtag, tag: "t-", where: after, upper: true, repeat: 2, skip: ["abc 1"] },
      { plugin: file, file: $WORK/x.log }]
CONF
SLUICE_PLUGIN_PATH="$WORK/cxx:$SLUICE_PLUGIN_PATH" "$SLUICE" -c "$WORK/x.yaml" 2>"$WORK/err" ||
	fail "C++ plugin stack: $(cat "$WORK/err")"
[ "$(cat "$WORK/x.log")" = "$(printf 'abc 0T-T-\nabc 1\nabc 2T-T-')" ] || fail "C++ plugin output: $(cat "$WORK/x.log")"
cat >"$WORK/xe.yaml" <<CONF
stacks:
  x: [gen, { plugin: cxxtag, tag: "" }, { plugin: file, file: $WORK/x.log }]
CONF
rc=0; out=$(SLUICE_PLUGIN_PATH="$WORK/cxx:$SLUICE_PLUGIN_PATH" "$SLUICE" -t -c "$WORK/xe.yaml" 2>&1) || rc=$?
[ "$rc" = 78 ] && grep -q "xe.yaml:2:.*the tag must not be empty" <<<"$out" || fail "C++ config_error: $rc $out"

# The header's typed rows: a wrong member type fails in C++ too; SL_OPT_ROW is gone.
cat >"$WORK/row.cc" <<'SRC'
#include <sluice/plugin.h>
struct cfg { int n; };
static const struct sl_option o[] = { SL_OPT_INT("n", struct cfg, n, "1", 0, 9, "n"), SL_OPT_END };
const struct sl_option *use() { return o; }
SRC
g++ -std=c++17 -fsyntax-only -I"$SRCDIR/core/include" "$WORK/row.cc" 2>"$WORK/gxx.log" && fail "an int member compiled for SL_OPT_INT in C++"
grep -q "option member must have the option's type" "$WORK/gxx.log" || fail "C++ type error: $(cat "$WORK/gxx.log")"
cat >"$WORK/row.c" <<'SRC'
#include <sluice/plugin.h>
struct cfg { int n; };
const struct sl_option o[] = { SL_OPT_ROW("n", SL_OPT_INT, struct cfg, n, "1", "n", 0, 9, NULL, 0), SL_OPT_END };
SRC
cc -std=gnu11 -fsyntax-only -I"$SRCDIR/core/include" "$WORK/row.c" 2>"$WORK/cc.log" && fail "SL_OPT_ROW still compiles"
grep -q "SL_OPT_ROW_was_removed_in_ABI_1_3" "$WORK/cc.log" || fail "SL_OPT_ROW error: $(cat "$WORK/cc.log")"
pass
