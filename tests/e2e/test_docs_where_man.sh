#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# sluice-where(7), the reference of the where filter's expressions, as
# `cmake --install` puts it: in man7, rendering without a warning (groff
# -ww, man -l); its grammar is the one of docs/PLUGINS.md's where section
# word for word; it names every operator of that grammar, every field
# alias the section lists, and every example expression of the section
# parses (`sluice -t`), so neither text can drift from the other or from
# the filter.  sluice.yaml(5), sluice(8) and the where option's own
# description point to it.
. "$(dirname "$0")/lib.sh"
need_cmd groff man python3
[ -f "$BUILDDIR/docs/sluice.yaml.5" ] || skip "built with -DSLUICE_MAN=OFF: no man pages"
"$SLUICE" --describe where >/dev/null 2>&1 || skip "no where plugin in this build"

ROOT="$WORK/root"
DESTDIR="$ROOT" cmake --install "$BUILDDIR" >"$WORK/install.log" 2>&1 ||
	fail "cmake --install: $(tail -5 "$WORK/install.log")"
page=$(find "$ROOT" -path '*/share/man/man7/sluice-where.7')
[ -n "$page" ] && [ -s "$page" ] || fail "sluice-where.7 is not installed in a man7: $(cd "$ROOT" && find . -path '*man*' -type f)"
groff -man -ww -z "$page" 2>"$WORK/groff.err"
[ ! -s "$WORK/groff.err" ] || fail "groff -ww warns on sluice-where.7: $(cat "$WORK/groff.err")"
LC_ALL=C.UTF-8 MANWIDTH=1000 man --warnings=all -l "$page" 2>"$WORK/man.err" | sed 's/‐//g' >"$WORK/where7.txt" ||
	fail "man -l sluice-where.7 failed"
[ ! -s "$WORK/man.err" ] || fail "man -l warns on sluice-where.7: $(cat "$WORK/man.err")"
if grep -qE '[{][{]|@[A-Z_]+@' "$page"; then fail "sluice-where.7 keeps a template marker"; fi

# The pages that point to it, and the option's description.
for p in man5/sluice.yaml.5 man8/sluice.8; do
	f=$(find "$ROOT" -path "*/share/man/$p")
	grep -q 'sluice\\-where (7)' "$f" || fail "$p does not point to sluice-where(7)"
done
"$SLUICE" --describe where | grep -qF 'sluice-where(7)' || fail "where's expr option does not point to sluice-where(7)"

python3 - "$SRCDIR/docs/PLUGINS.md" "$WORK/where7.txt" <<'PY' || fail "sluice-where(7) and docs/PLUGINS.md differ (above)"
import re, sys
md = open(sys.argv[1]).read()
sec = md[md.index('## where (filter)'):]
sec = sec[:sec.index('\n## ', 1)]
grammar = re.search(r'Grammar.*?\n```\n(.*?)\n```', sec, re.S).group(1)
page = open(sys.argv[2]).read()
norm = lambda s: [' '.join(l.split()) for l in s.splitlines() if l.strip()]
bad = []
flat = '\n'.join(norm(page))
for line in norm(grammar):
    if line not in flat:
        bad.append('grammar line missing: ' + line)
ops = re.search(r"op\s*:=(.*)", grammar).group(1)
for op in re.findall(r"'([^']+)'", ops):
    if not re.search(r'(^|\s)' + re.escape(op) + r'(\s|$)', flat, re.M):
        bad.append('operator not described: ' + op)
for kw in ('not', 'has', 'and', 'or'):
    if kw not in flat.split():
        bad.append('keyword not described: ' + kw)
fields = sec[sec.index('- Fields:'):sec.index('- Literals')]
for f in re.findall(r'`([a-z_]+)`', fields):
    if f not in flat:
        bad.append('field not in the page: ' + f)
for b in bad:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# Every expression in the page's examples parses, on the fields decode sets.
n=0
while IFS= read -r expr; do
	printf 'stacks:\n  a:\n    - { plugin: nflog, group: 5 }\n    - decode\n    - plugin: where\n      expr: %s\n    - logline\n    - { plugin: file, file: %s }\n' \
		"$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$expr")" "$WORK/out.log" >"$WORK/ex.yaml"
	"$SLUICE" -t -c "$WORK/ex.yaml" >"$WORK/ex.out" 2>&1 || fail "the page's example '$expr' does not parse: $(cat "$WORK/ex.out")"
	n=$((n + 1))
done < <(sed -n "s/.*expr: '\(.*\)' }.*/\1/p" "$WORK/where7.txt" | grep -vx expression; grep -oE '(dport != \{22, 23\}|mark & 0xff00|tcp_flags & 0x02|has dport and dport != 22|not dport == 22)' "$WORK/where7.txt" | sort -u)
[ "$n" -ge 5 ] || fail "only $n example expressions found in the page"
pass "installed in man7, renders cleanly, agrees with PLUGINS.md; $n example expressions parse"
