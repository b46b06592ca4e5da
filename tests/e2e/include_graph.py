#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The include graph of core/ and plugins/, and its loops.

Usage: include_graph.py SRCDIR [--loops | --dot]

Every `#include "..."` line of a .c or .h file under core/ and plugins/
is an arrow from its file to the file it names, looked up as the compiler
does: beside the including file, then in the include directories
(core/include, core/src and each of core/src's folders for the core,
core/include and core/src for metrics_http, the same and plugins/common
for tail_fmt, core/include and plugins/common for plugins).  A .c and the .h of the same name in the same
folder are one module (foo.c includes foo.h without making a loop), and
so is foo_int.h, foo's private header; any other header is a module of
its own.

A loop is allowed only when it goes through an arrow of ALLOWED below:
each entry is one arrow that goes up a floor, and the loops it closes
are what its comment names.  It fails (exit 1) when
  - the graph without the ALLOWED arrows still has a loop (a new one: its
    arrows are printed; cut one, do not add it here),
  - an ALLOWED arrow is no longer in the graph, or every loop through it
    goes through another ALLOWED arrow as well (delete the entry: the list
    only ever shrinks),
  - a quoted include names no file of the tree.
The same holds one level up, between the core's folders (its floors,
core/src/base, config, graph, ...): folder A -> B when a file of A
includes one of B, and a loop of folders must go through an arrow of
FOLDERS_ALLOWED, each of which must still close one of its own.
--loops prints every set of modules that reach each other (strongly
connected, the ALLOWED arrows included), then every such set of core
folders, and --dot the module graph for
graphviz, instead of checking.
"""
import os
import re
import sys

# Arrows that close a loop, (from, to) as modules (paths without .c/.h).
# Issue 20 cuts them; delete an entry with the loop it closes.
ALLOWED = [
    # The configuration floor (issue 20 §2): config.c, options.c,
    # opt_groups.c, metrics_config.c reach each other; the option parser
    # reads the groups.
    ("core/src/config/config", "core/src/config/options"),
    ("core/src/config/options", "core/src/config/opt_groups"),
    ("core/src/config/metrics_config", "core/src/config/options"),
    # The core's keys are read on the graph's instances, which graph.c
    # builds calling inst_keys_parse().
    ("core/src/graph/inst_keys", "core/src/graph/graph"),
    # graph.c frees the guard's and strict mode's parts of an instance,
    # which take struct sl_instance from graph.h.
    ("core/src/graph/graph", "core/src/graph/guard"),
    ("core/src/graph/graph", "core/src/graph/strict"),
    # The reload (reload.c, reload_read.c) is daemon_reload()'s other half:
    # it reads struct daemon while daemon.c calls it.
    ("core/src/daemon/reload", "core/src/daemon/daemon"),
    # A natural pair: the expression parser (expr.c) drives its lexer
    # (expr_lex.c), which reads literals into the compiled form's types.
    ("plugins/common/expr_lex", "plugins/common/expr"),
    # A natural pair: reading a ruleset (nft_ruleset.c) computes which
    # hooks reach each log statement (nft_reach.c), which walks the
    # ruleset's own types.
    ("core/src/convert/nft_reach", "core/src/convert/nft_ruleset"),
]

# Arrows between the core's folders (its floors, docs/ARCHITECTURE.md)
# that close a loop of folders, (from, to): the same rules as ALLOWED, a
# folder arrow standing for every include from one folder into the other.
# Empty: every include between the core's folders goes down a floor.
FOLDERS_ALLOWED = [
]

# Headers the build generates (in the build tree, not the source): a leaf
# each, including nothing of the tree.
GENERATED = {
    "skbdrop.skel.h",  # bpftool gen skeleton of plugins/input/skbdrop.bpf.c
}

SCANNED = ("core", "plugins")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


# core/CMakeLists.txt's include directories: the core's files include
# each other by name, whatever their folder.
CORE_FOLDERS = ["core/src/" + f for f in
                ("base", "config", "graph", "runtime", "daemon", "convert", "cli")]


def include_dirs(rel):
    """The -I directories of the target that compiles file `rel`."""
    if rel.startswith("core/"):
        return ["core/include", "core/src"] + CORE_FOLDERS
    if rel == "plugins/service/metrics_http.c":
        return ["core/include", "core/src"]
    if rel == "plugins/service/tail_fmt.c":
        return ["core/include", "core/src", "plugins/common"]
    return ["core/include", "plugins/common"]


def module(rel):
    # foo_int.h is foo's private half (what foo.c shares with the files
    # that implement it with it: nffile_int.h, expr_int.h, reload_int.h)
    return re.sub(r"(_int)?\.[ch]$", "", rel)


def read_graph(src):
    files = []
    for top in SCANNED:
        for dirpath, _, names in os.walk(os.path.join(src, top)):
            for n in names:
                if n.endswith((".c", ".h")):
                    files.append(os.path.relpath(os.path.join(dirpath, n), src))
    files.sort()
    known = set(files)
    edges = {module(f): set() for f in files}
    errors = []
    for f in files:
        with open(os.path.join(src, f), encoding="utf-8") as fh:
            text = fh.read()
        for m in INCLUDE_RE.finditer(text):
            name = m.group(1)
            line = text.count("\n", 0, m.start()) + 1
            found = None
            for d in [os.path.dirname(f)] + include_dirs(f):
                cand = os.path.normpath(os.path.join(d, name))
                if cand in known:
                    found = cand
                    break
            if found is None and name in GENERATED:
                continue
            if found is None:
                errors.append(f'{f}:{line}: #include "{name}" names no file under core/ or plugins/')
                continue
            a, b = module(f), module(found)
            if a != b:
                edges[a].add(b)
    return edges, errors


def loops(edges):
    """Tarjan's strongly connected components of two or more modules."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        # Iterative, so a long chain of headers cannot hit the recursion limit.
        work = [(v, iter(sorted(edges[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == node:
                            break
                    if len(comp) > 1:
                        out.append(comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def describe(comp, edges):
    """The arrows inside a loop, so its message says what to cut."""
    arrows = [f"{a} -> {b}" for a in sorted(comp) for b in sorted(edges[a]) if b in comp]
    return "\n    ".join(arrows)


def folder(mod):
    """The core folder (floor) of a module, None outside core/src's folders."""
    parts = mod.split("/")
    if parts[:2] == ["core", "src"] and len(parts) == 4:
        return "/".join(parts[:3])
    return None


def folder_graph(edges):
    """Arrows between core folders, each with the module arrows behind it."""
    fedges, why = {}, {}
    for a, bs in edges.items():
        fa = folder(a)
        if fa is None:
            continue
        fedges.setdefault(fa, set())
        for b in bs:
            fb = folder(b)
            if fb is None or fb == fa:
                continue
            fedges.setdefault(fb, set())
            fedges[fa].add(fb)
            why.setdefault((fa, fb), []).append(f"{a} -> {b}")
    return fedges, why


def check(edges, allowed, what, why=None):
    """The errors of one graph against its list of allowed arrows."""
    errors = []

    def without(arrows):
        return {a: {b for b in bs if (a, b) not in arrows} for a, bs in edges.items()}

    for a, b in allowed:
        if b not in edges.get(a, ()):
            errors.append(f"{what} {a} -> {b} is not in the tree: delete its entry")
        elif not loops(without([x for x in allowed if x != (a, b)])):
            # Every loop through it goes through another allowed arrow too.
            errors.append(f"{what} {a} -> {b} closes no loop of its own any more: "
                          "delete its entry")
    rest = without(allowed)
    for comp in loops(rest):
        msg = describe(comp, rest)
        if why:
            # A folder arrow is cut by cutting the includes behind it.
            msg = "\n    ".join(
                f"{a} -> {b}  ({', '.join(why[(a, b)])})"
                for a in sorted(comp) for b in sorted(rest[a]) if b in comp)
        errors.append(f"include loop through no {what} (cut one of these):\n    " + msg)
    return errors


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    src = sys.argv[1]
    edges, errors = read_graph(src)
    if "--dot" in sys.argv[2:]:
        print("digraph includes {")
        for a in sorted(edges):
            for b in sorted(edges[a]):
                print(f'  "{a}" -> "{b}";')
        print("}")
        return 0
    found = loops(edges)
    fedges, why = folder_graph(edges)
    if "--loops" in sys.argv[2:]:
        for comp in found:
            print(" ".join(sorted(comp)))
        for comp in loops(fedges):
            print("folders: " + " ".join(sorted(comp)))
        return 0
    errors += check(edges, ALLOWED, "ALLOWED arrow")
    errors += check(fedges, FOLDERS_ALLOWED, "FOLDERS_ALLOWED arrow", why)
    nedges = sum(len(v) for v in edges.values())
    nfedges = sum(len(v) for v in fedges.values())
    print(f"{len(edges)} modules, {nedges} arrows, {len(found)} sets of modules on loops, "
          f"{len(ALLOWED)} allowed arrows; {len(fedges)} core folders, {nfedges} arrows, "
          f"{len(loops(fedges))} sets of folders on loops, {len(FOLDERS_ALLOWED)} allowed "
          f"arrows; {len(errors)} errors")
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
