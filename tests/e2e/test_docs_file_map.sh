#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/ARCHITECTURE.md's file map ("## Where things are") is the map of the
# tree: every .c and .h under core/ and plugins/ is named in a row's path
# cell (a .h by itself, or by the .c of its name in its folder, whose
# header it is), and every path the cells name exists.  A cell holds backquoted
# paths; `a/b.{c,h}` is a/b.c and a/b.h; a bare name (`strict_malloc.c`)
# is in the folder of the path before it; a path ending in / is a folder;
# a glob (`plugins/{input,filter,output}/*.c`) must match something but
# names no file (each file has a row of its own).
. "$(dirname "$0")/lib.sh"
need_cmd python3
python3 - "$SRCDIR" <<'PY' || fail "docs/ARCHITECTURE.md's file map and the tree disagree (above)"
import glob, os, re, sys

src = sys.argv[1]
doc = open(os.path.join(src, "docs/ARCHITECTURE.md"), encoding="utf-8").read()
m = re.search(r"^## Where things are\n(.*?)^## ", doc, re.M | re.S)
if not m:
    sys.exit("docs/ARCHITECTURE.md: no '## Where things are' section")
bad = 0
def err(msg):
    global bad
    print(f"docs/ARCHITECTURE.md: {msg}")
    bad += 1

def braces(p):
    b = re.search(r"\{([^{}]*)\}", p)
    if not b:
        return [p]
    return [q for alt in b.group(1).split(",")
            for q in braces(p[:b.start()] + alt + p[b.end():])]

mapped, rows = {}, 0
for line in m.group(1).splitlines():
    if not line.startswith("| `"):
        continue
    rows += 1
    cell = line.split(" | ")[0]
    folder = None
    for token in re.findall(r"`([^`]+)`", cell):
        if "/" not in token and folder is not None:
            token = folder + token
        folder = token[:token.rfind("/") + 1] if "/" in token else None
        for p in braces(token):
            if "*" in p:
                if not glob.glob(os.path.join(src, p)):
                    err(f"'{p}' matches no file")
            elif p.endswith("/"):
                if not os.path.isdir(os.path.join(src, p)):
                    err(f"'{p}' is no folder")
            elif not os.path.exists(os.path.join(src, p)):
                err(f"'{p}' names no file")
            elif p in mapped:
                err(f"'{p}' has two rows ({mapped[p]!r} and {cell!r})")
            else:
                mapped[p] = cell
sources = 0
for top in ("core", "plugins"):
    for dirpath, _, names in os.walk(os.path.join(src, top)):
        for n in sorted(names):
            if n.endswith((".c", ".h")):
                sources += 1
                p = os.path.relpath(os.path.join(dirpath, n), src)
                own_c = p[:-2] + ".c" if p.endswith(".h") else None
                if p not in mapped and own_c not in mapped:
                    err(f"'{p}' is in no row of the file map")
print(f"{rows} rows, {sources} source files, {bad} differences")
sys.exit(1 if bad else 0)
PY
pass "every source file of core/ and plugins/ has its row, every row's path exists"
