#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The man pages as installed by `cmake --install`: each of sluice(8),
# sluice.yaml(5) and sluice-plugin(3) is in its section and renders
# without one warning (groff -ww, man -l); the rendered sluice.yaml(5)
# has a subsection for every plugin --describe-all finds, with exactly
# that plugin's options and every field it provides; sluice(8) names
# every plugin, every option --help shows and every exit status, and
# exits as it says in the describe modes; every daemon key the daemon
# accepts is in sluice.yaml(5) and docs/CONFIG.md; sluice-plugin(3)
# names every host function, descriptor member and option macro.
# The daemon runs as on a machine where sluice is not installed (lib.sh's
# uninstalled): an installed plugin directory must change no answer.
. "$(dirname "$0")/lib.sh"
need_cmd groff man python3 unshare
uninstalled true || skip "cannot hide the installed sluice (no mount namespace)"
[ -f "$BUILDDIR/docs/sluice.yaml.5" ] || skip "built with -DSLUICE_MAN=OFF: no man pages"

inst="$WORK/inst"
cmake --install "$BUILDDIR" --prefix "$inst" >"$WORK/install.log" 2>&1 ||
	fail "cmake --install: $(tail -5 "$WORK/install.log")"
mandir=$(find "$inst" -type d -name man -path '*/share/man' | head -1)
[ -n "$mandir" ] || fail "no share/man under the install prefix"
for page in man8/sluice.8 man5/sluice.yaml.5 man3/sluice-plugin.3; do
	f="$mandir/$page"
	[ -s "$f" ] || fail "$page is not installed"
	# groff exits 0 on warnings: only stderr tells.
	groff -man -ww -z "$f" 2>"$WORK/groff.err"
	[ ! -s "$WORK/groff.err" ] || fail "groff -ww warns on $page: $(cat "$WORK/groff.err")"
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=all -l "$f" >"$WORK/$(basename "$f").txt" \
		2>"$WORK/man.err" || fail "man -l $page failed"
	[ ! -s "$WORK/man.err" ] || fail "man -l warns on $page: $(cat "$WORK/man.err")"
	if grep -qE '[{][{]|@[A-Z_]+@' "$f"; then fail "$page keeps a template marker"; fi
done

# Wide and unhyphenated, so every name is one word on the page.
render() { LC_ALL=C.UTF-8 MANWIDTH=1000 man -l "$1" 2>/dev/null | sed 's/‐//g'; }
render "$mandir/man5/sluice.yaml.5" >"$WORK/yaml5.txt"
render "$mandir/man8/sluice.8" >"$WORK/sluice8.txt"
uninstalled "$SLUICE" --describe-all --format=markdown >"$WORK/all.md"
"$SLUICE" --help >"$WORK/help.txt"
# The daemon keys, as the daemon lists them for an unknown one.
printf 'daemon:\n  no_such_key: 1\nstacks:\n  a: [nflog, file]\n' >"$WORK/keys.yaml"
"$SLUICE" -t -c "$WORK/keys.yaml" >"$WORK/keys.out" 2>&1 || true
sed -n "s/.*unknown key 'daemon.no_such_key' (expected \(.*\))$/\1/p" "$WORK/keys.out" |
	sed 's/,/ /g; s/ or / /' >"$WORK/daemon-keys.txt"
[ -s "$WORK/daemon-keys.txt" ] || fail "sluice no longer lists the daemon keys for an unknown one"
cp "$SRCDIR/docs/CONFIG.md" "$WORK/CONFIG.md"
cp "$SRCDIR/core/include/sluice/plugin.h" "$WORK/plugin.h"
render "$mandir/man3/sluice-plugin.3" >"$WORK/sluice-plugin.3.txt"

# The exit statuses the page gives for the describe modes.
rc=0; "$SLUICE" --describe-all --format=x >/dev/null 2>&1 || rc=$?
[ "$rc" = 64 ] || fail "--format=x: exit $rc, sluice(8) says 64"
rc=0; "$SLUICE" --format=man >/dev/null 2>&1 || rc=$?
[ "$rc" = 64 ] || fail "--format without --describe-all: exit $rc, sluice(8) says 64"
rc=0; SLUICE_PLUGIN_PATH="$WORK/none" uninstalled "$SLUICE" --describe-all >/dev/null 2>&1 || rc=$?
[ "$rc" = 69 ] || fail "--describe-all without plugins: exit $rc, sluice(8) says 69"
if [ -d "${SLUICE_TEST_PLUGIN_DIR:-}/abi99" ]; then
	rc=0; SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR/abi99" \
		uninstalled "$SLUICE" --describe-all >/dev/null 2>&1 || rc=$?
	[ "$rc" = 69 ] || fail "--describe-all with a plugin that fails to load: exit $rc, sluice(8) says 69"
fi
# The octal rule the pages state, on flowfile's subdirs (0-8): 010 is 8 and
# accepted where 10 is out of range, 08 is no number.
oct() {
	printf 'stacks:\n  a: [nfct, {plugin: flowfile, dir: /tmp, subdirs: %s}]\n' "$1" >"$WORK/oct.yaml"
	"$SLUICE" -t -c "$WORK/oct.yaml" 2>&1
}
oct 010 >/dev/null || fail "subdirs: 010 is refused; the pages say it is octal, 8"
out=$(oct 10) && fail "subdirs: 10 accepted"
grep -q "option 'subdirs': expected an integer from 0 to 8" <<<"$out" || fail "subdirs: 10: $out"
out=$(oct 08) && fail "subdirs: 08 accepted; the pages say it is an error"
grep -q "option 'subdirs': expected an integer" <<<"$out" || fail "subdirs: 08: $out"
rc=0; "$SLUICE" --describe no_such_plugin >/dev/null 2>&1 || rc=$?
[ "$rc" = 78 ] || fail "--describe of an unknown plugin: exit $rc, sluice(8) says 78"

python3 - "$WORK" <<'PY' || fail "man pages and the plugins disagree (above)"
import re, sys
work = sys.argv[1]
md = open(f"{work}/all.md").read()
want = {}
for sec in re.split(r"^## ", md, flags=re.M)[1:]:
    name, kind = re.match(r"(\S+) \((\w+)\)", sec).groups()
    opts = re.findall(r"^\| `([^`]+)` \|", sec, re.M)
    prov = re.search(r"^Provides: (.*)$", sec, re.M).group(1)
    want[name] = (kind, opts, re.findall(r"`([^`]+)`", prov))
if len(want) < 10:
    sys.exit(f"--describe-all found only {len(want)} plugins: {sorted(want)}")

page = open(f"{work}/yaml5.txt").read()
plug = page[page.index("\nPLUGINS\n"):]
plug = plug[:re.search(r"\n[A-Z][A-Z ]+\n", plug[1:]).start() + 1]
got = {}
for sec in re.split(r"^   (?=\S+ \((?:input|filter|output)\)$)", plug, flags=re.M)[1:]:
    name, kind = re.match(r"(\S+) \((\w+)\)", sec).groups()
    opts = re.findall(r"^       (\S+) \((?:string|integer|bool|size|duration|enum|list|map)\)$", sec, re.M)
    prov = re.search(r"Provides: (.*)", sec)
    got[name] = (kind, opts, prov.group(1).replace(",", " ").split() if prov else [])
bad = 0
for name, (kind, opts, prov) in want.items():
    if name not in got:
        print(f"sluice.yaml(5) lacks plugin {name}"); bad += 1; continue
    gk, go, gp = got[name]
    if gk != kind or go != opts:
        print(f"sluice.yaml(5) {name}: {gk} {go}, --describe-all: {kind} {opts}"); bad += 1
    missing = [f for f in prov if f not in gp]
    if missing:
        print(f"sluice.yaml(5) {name}: Provides lacks {missing}"); bad += 1
for name in got:
    if name not in want:
        print(f"sluice.yaml(5) has {name}, which --describe-all does not know"); bad += 1

man8 = open(f"{work}/sluice8.txt").read()
for name, (kind, _, _) in want.items():
    if not re.search(rf"^       {re.escape(name)}\s+\({kind}\)", man8, re.M):
        print(f"sluice(8) PLUGINS lacks {name} ({kind})"); bad += 1
helptext = open(f"{work}/help.txt").read()
for opt in sorted(set(re.findall(r"(--[a-z][a-z-]+)", helptext))):
    if opt not in man8:
        print(f"sluice(8) lacks {opt}, which --help shows"); bad += 1
status = man8[man8.index("\nEXIT STATUS\n"):]
status = status[:re.search(r"\n[A-Z][A-Z ]+\n", status[1:]).start() + 1]
codes = re.search(r"Exit status: ([^\n]*\n[^\n]*)", helptext).group(1)
for code in re.findall(r"\b(\d+) ", codes):
    if not re.search(rf"^       {code}\b", status, re.M):
        print(f"sluice(8) EXIT STATUS lacks {code}, which --help gives"); bad += 1
daemon = page[page.index("\n   daemon\n"):page.index("\n   instances\n")]
config = open(f"{work}/CONFIG.md").read()
config = config[config.index("## `daemon:`"):]
config = config[:config.index("\n## ", 1)]
keys = open(f"{work}/daemon-keys.txt").read().split()
for k in keys:
    if not re.search(rf"^       {k}\b", daemon, re.M):
        print(f"sluice.yaml(5) daemon section lacks key {k}"); bad += 1
    if f"| `{k}` |" not in config:
        print(f"docs/CONFIG.md daemon table lacks key {k}"); bad += 1
# sluice-plugin(3) names every member of the host table and the
# descriptor, and every option macro, that <sluice/plugin.h> declares.
hdr = open(f"{work}/plugin.h").read()
api = open(f"{work}/sluice-plugin.3.txt").read().replace("\u2010", "")
host = hdr[hdr.index("struct sl_host {"):]
host = host[:host.index("\n};")]
desc = hdr[hdr.index("struct sl_plugin {"):]
desc = desc[:desc.index("\n};")]
names = re.findall(r"\(\*(\w+)\)\(", host) + re.findall(r"\(\*(\w+)\)\(", desc)
names += re.findall(r"^\s+(?:enum|const|size_t|uint32_t)[^;(]*?\b(\w+);", desc, re.M)
names += re.findall(r"^#define (SL_OPT_(?:STR|INT|BOOL|SIZE|DURATION|ENUM|LIST|END))\b", hdr, re.M)
names += ["SL_HOST_HAS", "SL_PLUGIN_HEADER", "SLUICE_PLUGIN", "SL_REQUIRED", "SL_FIELD_DECL"]
for n in names:
    if not re.search(rf"\b{n}\b", api):
        print(f"sluice-plugin(3) does not mention {n} of <sluice/plugin.h>"); bad += 1
print(f"{len(want)} plugins, {sum(len(o) for _, o, _ in want.values())} options, "
      f"{len(keys)} daemon keys, {len(names)} API names checked")
sys.exit(1 if bad else 0)
PY
pass "3 pages render without warnings; every plugin and option is in sluice.yaml(5)"
