#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/PLUGINS.md against the plugins' own tables (--describe-all
# --format=markdown): every plugin has its `## name (kind)` section, whose
# option table lists exactly the plugin's options, each with the type
# (range included) and default the table declares; rows written "as for
# `other`" must match that plugin's options; every field the plugin needs
# or provides is named in its section.  The "meaning" column is free text.
# Only this build's plugins count: an installed plugin directory is hidden
# (lib.sh's uninstalled).
. "$(dirname "$0")/lib.sh"
need_cmd python3 unshare
uninstalled true || skip "cannot hide the installed sluice (no mount namespace)"

uninstalled "$SLUICE" --describe-all --format=markdown >"$WORK/all.md"
python3 - "$WORK/all.md" "$SRCDIR/docs/PLUGINS.md" <<'PY' || fail "docs/PLUGINS.md and --describe-all disagree (above)"
import re, sys

def sections(text):
    out = {}
    for sec in re.split(r"^## ", text, flags=re.M)[1:]:
        m = re.match(r"(\S+) \((input|filter|output)\)", sec)
        if m:
            out[m.group(1)] = (m.group(2), sec)
    return out

def cells(line):
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]

def options(sec):
    """Rows of the `| option | type | default | meaning |` table."""
    rows, inside = [], False
    for line in sec.splitlines():
        if line.startswith("| option | type | default |"):
            inside = True
            continue
        if inside and line.startswith("|---"):
            continue
        if inside and line.startswith("|"):
            rows.append(cells(line))
        elif inside:
            break
    return rows

gen = sections(open(sys.argv[1]).read())
doc = sections(open(sys.argv[2]).read())
want = {}
for name, (kind, sec) in gen.items():
    want[name] = {r[0].strip("`"): (r[1], r[2]) for r in options(sec)}
bad = checked = 0
def err(msg):
    global bad
    print(f"docs/PLUGINS.md: {msg}")
    bad += 1

for name, (kind, sec) in gen.items():
    if name not in doc:
        err(f"no section '## {name} ({kind})'")
        continue
    dkind, dsec = doc[name]
    if dkind != kind:
        err(f"{name} is an {kind} plugin, the heading says {dkind}")
    seen = set()
    for row in options(dsec):
        if len(row) < 4:
            err(f"{name}: malformed row {row}")
            continue
        names = re.findall(r"`([^`]+)`", row[0])
        for o in names:
            checked += 1
            if o not in want[name]:
                err(f"{name}: documents option '{o}', which the plugin does not have")
                continue
            seen.add(o)
            typ, default = want[name][o]
            ref = re.match(r"as for `([^`]+)`", row[3])
            if not row[1] and not row[2] and ref:
                other = want.get(ref.group(1), {}).get(o)
                if other != (typ, default):
                    err(f"{name}: '{o}' is 'as for {ref.group(1)}' but is {typ}, {default} "
                        f"there {other}")
                continue
            if len(names) > 1:
                err(f"{name}: row {names} gives one type and default for several options")
            if row[1] != typ:
                err(f"{name}: '{o}' type is '{row[1]}', the plugin says '{typ}'")
            # The default may be followed by a remark: `0` (never).
            if row[2] != default and not row[2].startswith(default + " ("):
                err(f"{name}: '{o}' default is '{row[2]}', the plugin says '{default}'")
    for o in want[name]:
        if o not in seen:
            err(f"{name}: option '{o}' is not in the option table")
    m = re.search(r"^Needs: (.*)  \nProvides: (.*)$", sec, re.M)
    for field in re.findall(r"`([^`]+)`", m.group(1) + m.group(2)):
        checked += 1
        if f"`{field}`" not in dsec:
            err(f"{name}: field '{field}' (needed or provided) is not named in the section")
for name in doc:
    if name not in gen:
        err(f"section '{name}' is no plugin --describe-all knows")
print(f"{len(gen)} plugins, {checked} options and fields checked, {bad} differences")
sys.exit(1 if bad else 0)
PY
pass "every option, type, range, default and field of every plugin"
