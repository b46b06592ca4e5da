#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What the user docs show a command print is what it prints.  Blocks are
# marked `<!-- doc-test: NAME -->` (doc_blocks.py); this test runs them:
# - docs/OPERATIONS.md's daemon (its stats-config block, paths moved into
#   the test's folder) answers `sluice stats` with the documented table
#   (instances, plugins, stacks, columns and every counter name; numbers
#   and dates stand for any), `sluice stats --json` with the documented
#   keys in their order, `sluice reopen` and `sluice reload` (after the
#   documented stack is added, and again) with the documented lines, and
#   the raw protocol with the documented replies;
# - the daemon keys a reload refuses to change, found by changing each key
#   the daemon knows in a reload of a running daemon (reload.c's
#   check_fixed()), are the ones every `doc-test: fixed-keys` paragraph
#   lists (CONFIG.md, OPERATIONS.md, sluice(8), sluice.yaml(5));
# - "the network outputs (...)" wherever a page lists them are the outputs
#   `sluice --describe-all` says run on their own thread by default, and
#   the spool outputs OPERATIONS.md names are those with `spool_dir`;
# - CONFIG.md's two error examples are what sluice -t prints;
# - MIGRATING.md's conversion of Debian's ulogd.conf (YAML, warnings, the
#   counts of `sluice -t`) is what `sluice convert ulogd` prints.
# (MIGRATING.md's nft conversion needs nft: test_netns_docs_convert_nft.sh.)
. "$(dirname "$0")/lib.sh"
need_cmd python3
BLOCK="python3 $(dirname "$0")/doc_blocks.py"
OPS="$SRCDIR/docs/OPERATIONS.md"

# ---- the daemon of OPERATIONS.md ----
SOCK="$WORK/control"
$BLOCK "$OPS" stats-config >"$WORK/doc.yaml" || fail "OPERATIONS.md: no stats-config block"
sed -e "s|/run/sluice/control|$SOCK|; s|/var/log/sluice/|$WORK/|g" \
	-e "s|file: tests/data/|file: $SRCDIR/tests/data/|" "$WORK/doc.yaml" >"$WORK/sluice.yaml"
run_sluice_bg "$WORK/daemon.log" -c "$WORK/sluice.yaml"
wait_for 20 grep -qs "control socket $SOCK: listening" "$WORK/daemon.log" ||
	fail "the daemon of OPERATIONS.md did not start: $(cat "$WORK/daemon.log")"
wait_for 20 test -s "$WORK/txt.log" || fail "no records: $(cat "$WORK/daemon.log")"

# run_block NAME: run the `$ ` commands of OPERATIONS.md's block NAME and
# compare what they print; NAME's numbers stand for any when NUMBERS=1.
run_block() {
	$BLOCK "$OPS" "$1" >"$WORK/$1.block" || fail "OPERATIONS.md: no $1 block"
	python3 - "$SLUICE" "$SOCK" "$WORK/$1.block" "$1" "${NUMBERS:-0}" <<'PY' ||
import re, shlex, socket, subprocess, sys
sluice, sock, path, name, numbers = sys.argv[1:6]
steps, cur = [], None
for line in open(path).read().splitlines():
    if line.startswith("$ "):
        cur = (line[2:], [])
        steps.append(cur)
    elif cur is None:
        sys.exit(f"block {name}: output before the first '$ ' command")
    else:
        cur[1].append(line)

def ask(cmd):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sock)
    s.sendall(cmd.encode() + b"\n")
    got = b""
    while True:
        b = s.recv(65536)
        if not b:
            return got.decode()
        got += b

def run(cmd):
    m = re.fullmatch(r"printf '([^'\\]*)\\n' \| socat - UNIX-CONNECT:\S+( \| tail -n \+2)?", cmd)
    if m:
        out = ask(m.group(1))
        return out.split("\n", 1)[1] if m.group(2) else out
    argv = shlex.split(cmd)
    if argv[0] != "sluice" or argv[1] not in ("stats", "reload", "reopen"):
        sys.exit(f"block {name}: cannot run '{cmd}'")
    r = subprocess.run([sluice] + argv[1:] + ["--socket", sock], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"block {name}: '{cmd}' exited {r.returncode}: {r.stderr}")
    return r.stdout

def norm(line):
    if numbers == "1":
        line = re.sub(r"\d+", "N", line)
    return re.sub(r" +", " ", line.rstrip())

bad = 0
for cmd, want in steps:
    got = run(cmd).splitlines()
    if "..." in want:                     # the rest left out
        want = want[:want.index("...")]
        got = got[:len(want)]
    if [norm(l) for l in want] != [norm(l) for l in got]:
        print(f"'{cmd}': the docs show\n  " + "\n  ".join(want) + "\nit prints\n  " + "\n  ".join(got))
        bad += 1
sys.exit(1 if bad else 0)
PY
	fail "OPERATIONS.md's $1 block and the program disagree (above)"
}

NUMBERS=1 run_block stats
"$SLUICE" stats --json --socket "$SOCK" >"$WORK/stats.json" || fail "sluice stats --json failed"
$BLOCK "$OPS" stats-json >"$WORK/doc.json" || fail "OPERATIONS.md: no stats-json block"
python3 - "$WORK/doc.json" "$WORK/stats.json" <<'PY' || fail "OPERATIONS.md's stats --json and the program's disagree (above)"
import json, sys
# Keys in order, strings as they are (names, plugins, kinds, stacks), any number.
def shape(v, key=""):
    if isinstance(v, list) and v and isinstance(v[0], tuple):
        return [(k, shape(x, k)) for k, x in v]
    if isinstance(v, list):
        return [shape(x) for x in v]
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return "<number>"
    return "<version>" if key == "version" else v
doc, got = (shape(json.load(open(f), object_pairs_hook=lambda p: p)) for f in sys.argv[1:3])
if doc != got:
    d, g = dict(doc), dict(got)
    if [k for k, _ in doc] != [k for k, _ in got]:
        print(f"keys: the docs show {[k for k, _ in doc]}, it prints {[k for k, _ in got]}")
    for a, b in zip(d.get("instances", []), g.get("instances", [])):
        if a != b:
            print(f"the docs show\n  {a}\nit prints\n  {b}")
    if len(d.get("instances", [])) != len(g.get("instances", [])):
        print(f"{len(d.get('instances', []))} instances shown, {len(g.get('instances', []))} printed")
    sys.exit(1)
PY
run_block reopen
$BLOCK "$OPS" reload-added >>"$WORK/sluice.yaml" || fail "OPERATIONS.md: no reload-added block"
sed -i "s|/var/log/sluice/|$WORK/|g" "$WORK/sluice.yaml"
run_block reload
NUMBERS=1 run_block protocol

# ---- the daemon keys a reload cannot change ----
printf 'daemon:\n  no_such_key: 1\nstacks:\n  a: [nflog, file]\n' >"$WORK/keys.yaml"
"$SLUICE" -t -c "$WORK/keys.yaml" >"$WORK/keys.out" 2>&1 || true
keys=$(sed -n "s/.*unknown key 'daemon.no_such_key' (expected \(.*\))$/\1/p" "$WORK/keys.out" |
	sed 's/,/ /g; s/ or / /')
[ -n "$keys" ] || fail "sluice no longer lists the daemon keys for an unknown one: $(cat "$WORK/keys.out")"
cp "$WORK/sluice.yaml" "$WORK/running.yaml"
fixed=()
for key in $keys; do
	case $key in
	plugin_path) value="[$WORK]" ;;
	log_level) value=debug ;;
	batch_size) value=128 ;;
	threads) value=1 ;;
	user) value=nobody ;;
	control_socket) value="$WORK/other.sock" ;;
	metrics) value='{listen: "127.0.0.1:9561"}' ;;
	stop_timeout) value=3s ;;
	strict_plugins) value=true ;;
	*) fail "daemon.$key is new: give it a changed value in $TEST_NAME.sh" ;;
	esac
	# The running file with this one key added (or changed).
	awk -v k="$key" -v v="$value" 'BEGIN { done = 0 }
		/^daemon:/ { print; print "  " k ": " v; done = 1; next }
		done == 1 && $1 == k ":" { next } { print }' "$WORK/running.yaml" >"$WORK/sluice.yaml"
	rc=0
	"$SLUICE" reload --socket "$SOCK" >"$WORK/reload.out" 2>&1 || rc=$?
	if [ "$rc" = 0 ]; then
		echo "daemon.$key: a reload changes it"
	elif grep -q "$key" "$WORK/reload.out"; then
		echo "daemon.$key: a reload that changes it is refused"
		fixed+=("$key")
	else
		fail "a reload with daemon.$key: $value failed for another reason: $(cat "$WORK/reload.out")"
	fi
	cp "$WORK/running.yaml" "$WORK/sluice.yaml"
	"$SLUICE" reload --socket "$SOCK" >"$WORK/reload.out" 2>&1 ||
		fail "reloading the first file again failed: $(cat "$WORK/reload.out")"
done
[ ${#fixed[@]} -gt 0 ] || fail "no daemon key is refused by a reload: the test lost its reach"
kill -0 "$SLUICE_PID" 2>/dev/null || fail "the daemon died: $(tail -5 "$WORK/daemon.log")"

"$SLUICE" --describe-all >"$WORK/all.txt" || fail "--describe-all failed"
python3 - "$SRCDIR" "$WORK/all.txt" "$keys" "${fixed[*]}" <<'PY' || fail "the docs and the program disagree (above)"
import glob, os, re, sys
src, alltxt, keys, fixed = sys.argv[1], sys.argv[2], sys.argv[3].split(), set(sys.argv[4].split())
files = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md"))) \
    + sorted(glob.glob(os.path.join(src, "docs", "*.in")))
rel = lambda p: os.path.relpath(p, src)
text = {p: open(p, encoding="utf-8").read() for p in files}
bad = 0

# Keys a reload refuses: each marked paragraph lists them before "cannot change".
mark = re.compile(r"<!-- doc-test: fixed-keys -->|\.\\\" doc-test: fixed-keys")
marked = set()
for p, t in text.items():
    for m in mark.finditer(t):
        end = t.find("cannot change", m.end())
        if end < 0:
            print(f"{rel(p)}: a fixed-keys mark without 'cannot change' after it"); bad += 1
            continue
        listed = [w for w in re.findall(r"[a-z_]+", t[m.end():end]) if w in keys]
        marked.add(rel(p))
        if set(listed) != fixed:
            print(f"{rel(p)}:{t.count(chr(10), 0, m.start()) + 1}: lists {sorted(set(listed))} as keys "
                  f"a reload cannot change; the daemon refuses {sorted(fixed)}"); bad += 1
    # Every "cannot change" after two or more daemon keys is a marked list.
    for m in re.finditer(r"cannot change", t):
        para = t.rfind("\n\n", 0, m.start())      # the paragraph, with a mark above it
        before = t[max(0, para, m.start() - 1500):m.start()]
        if len({w for w in re.findall(r"[a-z_]+", before) if w in keys}) >= 2 and not mark.search(before):
            print(f"{rel(p)}:{t.count(chr(10), 0, m.start()) + 1}: a list of daemon keys that "
                  "cannot change without a doc-test: fixed-keys mark"); bad += 1
for need in ("docs/CONFIG.md", "docs/OPERATIONS.md", "docs/sluice.8.in", "docs/sluice.yaml.5.in"):
    if need not in marked:
        print(f"{need}: no doc-test: fixed-keys paragraph (the keys a reload cannot change)"); bad += 1

# Plugins from --describe-all: which run on their own thread by default, which spool.
desc = open(alltxt).read()
threaded, spooling = set(), set()
for sec in re.split(r"\n(?=\S+ \(\w+ plugin\): )", desc):
    name = sec.split(" ", 1)[0]
    if re.search(r"^thread: own thread by default", sec, re.M):
        threaded.add(name)
    if re.search(r"^  spool_dir \(", sec, re.M):
        spooling.add(name)
plugins = set(re.findall(r"^(\S+) \(\w+ plugin\): ", desc, re.M))
if not threaded:
    print("--describe-all names no output that runs on its own thread by default"); bad += 1
lists = {}
for p, t in text.items():
    flat = re.sub(r"\s+", " ", t)
    for m in re.finditer(r"\b[Tt]he network outputs[ :(]+((?:[a-z]+, )+(?:and )?[a-z]+)", flat):
        got = set(re.split(r", (?:and )?", m.group(1)))
        lists.setdefault(rel(p), []).append(got)
        if got != threaded:
            print(f"{rel(p)}: 'the network outputs ({m.group(1)})'; --describe-all says "
                  f"{', '.join(sorted(threaded))} run on their own thread by default"); bad += 1
for need in ("docs/CONFIG.md", "docs/sluice.yaml.5.in", "docs/ARCHITECTURE.md"):
    if need not in lists:
        print(f"{need}: no list of 'the network outputs (...)' found"); bad += 1
ops = text[os.path.join(src, "docs", "OPERATIONS.md")]
m = re.search(r"<!-- doc-test: spool-outputs -->(.*?)take\s+`spool_dir`", ops, re.S)
if not m:
    print("docs/OPERATIONS.md: no doc-test: spool-outputs paragraph"); bad += 1
else:
    named = {w for w in re.findall(r"`([a-z]+)`", m.group(1)) if w in plugins}
    if named != spooling:
        print(f"docs/OPERATIONS.md: {sorted(named)} take spool_dir; --describe-all: {sorted(spooling)}"); bad += 1
print(f"{len(fixed)} fixed daemon keys in {len(marked)} pages; default-threaded outputs "
      f"{sorted(threaded)} in {len(lists)} pages; spool outputs {sorted(spooling)}")
sys.exit(1 if bad else 0)
PY

# ---- CONFIG.md's error examples ----
CONF="$SRCDIR/docs/CONFIG.md"
cd "$WORK"
cat >sluice.yaml <<'YAML'
instances:
  fw: { plugin: nflog, group: 5 }
stacks:
  a: [fw, decode, logline, { plugin: file, file: /var/log/sluice/a.log }]
  b: [{ plugin: nflog, group: 5 }, decode, logline, { plugin: file, file: /var/log/sluice/b.log }]
YAML
"$SLUICE" -t -c sluice.yaml >err.out 2>&1 && fail "two instances of group 5 accepted"
want=$($BLOCK "$CONF" error-exclusive) || fail "CONFIG.md: no error-exclusive block"
grep -qxF "$want" err.out || fail "CONFIG.md shows '$want'; sluice -t prints: $(cat err.out)"
cat >sluice.yaml <<'YAML'
instances:
  fw: { plugin: nflog, group: 5 }
stacks:
  a: [fw,  { plugin: file, file: /var/log/sluice/a.log }]
YAML
"$SLUICE" -t -c sluice.yaml >err.out 2>&1 && fail "a file output without text accepted"
want=$($BLOCK "$CONF" error-needs-field) || fail "CONFIG.md: no error-needs-field block"
grep -qxF "$want" err.out || fail "CONFIG.md shows '$want'; sluice -t prints: $(cat err.out)"

# ---- MIGRATING.md: Debian's ulogd.conf ----
MIG="$SRCDIR/docs/MIGRATING.md"
if ! "$SLUICE" --describe file | grep -q '^  line_header ' ||
	! "$SLUICE" --describe sql >/dev/null 2>&1 || ! "$SLUICE" --describe nfacct >/dev/null 2>&1; then
	pass "OPERATIONS.md's commands, the fixed keys, the threaded and spool outputs and CONFIG.md's errors; MIGRATING.md's ulogd conversion not compared: this build lacks sql, nfacct or file's line_header"
fi
# The bundled file is Debian's with two comment lines on top.
tail -n +3 "$SRCDIR/tests/data/ulogd/debian-ulogd.conf" | sed 's/^#stack=/stack=/' >ulogd.conf
"$SLUICE" convert ulogd ulogd.conf >ulogd.yaml 2>ulogd.err || fail "convert ulogd failed: $(cat ulogd.err)"
$BLOCK "$MIG" convert-ulogd-yaml >doc-ulogd.yaml || fail "MIGRATING.md: no convert-ulogd-yaml block"
$BLOCK "$MIG" convert-ulogd-warnings >doc-ulogd.err || fail "MIGRATING.md: no convert-ulogd-warnings block"
diff -u doc-ulogd.yaml ulogd.yaml >&2 || fail "MIGRATING.md's converted ulogd.conf is not what convert ulogd prints (diff above)"
diff -u doc-ulogd.err ulogd.err >&2 || fail "MIGRATING.md's warnings are not what convert ulogd prints (diff above)"
"$SLUICE" -t -c ulogd.yaml >ulogd.t 2>&1 || fail "sluice -t refuses the converted file: $(cat ulogd.t)"
counts=$(sed -n '1s/.*(\([0-9]*\) instances, \([0-9]*\) stacks)$/\1 \2/p' ulogd.t)
doc=$(tr '\n' ' ' <"$MIG" | sed -n 's/.*`sluice -t` accepts it: \([0-9]*\) instances .*, \([0-9]*\) stacks;.*/\1 \2/p')
[ -n "$counts" ] && [ "$counts" = "$doc" ] ||
	fail "MIGRATING.md says sluice -t finds '$doc' instances and stacks; it says: $(head -1 ulogd.t)"
pass "OPERATIONS.md's stats, reload, reopen and protocol; the fixed keys; threaded and spool outputs; CONFIG.md's errors; MIGRATING.md's ulogd conversion"
