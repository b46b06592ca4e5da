#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""One naming dialect per floor (issue 20), read from the sources.

    dialect.py SRCDIR

plugins/common, the helpers every plugin links:
  * every function or variable a .c file defines without `static` is
    sl_<object>_<verb>;
  * its public headers (all but the module-private *_int.h and expr_lex.h)
    define sl_ static inline functions, struct/enum/union sl_ tags and SL_
    (or sl_) macros, but for the include guards and EXTERNAL_MACROS.
core/src/<folder>/<module>.c:
  * every function or variable defined without `static` starts with
    `<module>_`; a module split over several files shares one prefix, so
    `<family>_` is accepted too, where the family is the module's name less
    its last `_part` and is a module of the same folder or the stem of two
    or more files there (reload_read.c: reload_; nft_rewrite.c: nft_);
  * CORE_ALLOWED names the documented exceptions.
The public ABI (core/include/sluice/) is sl_* and stays as it is.
tools/dev/rename_dialect.py renamed what broke this; it prints each name
that breaks it and exits 1.
"""
import os
import re
import sys

# core/src/<folder>/<file>.c -> names it may export whatever its prefix.
CORE_ALLOWED = {
    # the daemon's entry point
    "cli/main.c": {"main"},
    # interposes glibc's allocator to count the calls inside process()
    "graph/strict_malloc.c": {"malloc", "calloc", "realloc"},
}
# Macros of plugins/common's public headers that are another project's name:
# libpcap's link types, defined only where an older libpcap lacks them.
EXTERNAL_MACROS = {"DLT_IPV4", "DLT_IPV6", "DLT_NFLOG", "DLT_LINUX_SLL2"}
PRIVATE_HEADERS = re.compile(r"(_int|^expr_lex)\.h$")

LEX = re.compile(r"""
    (?P<skip> /\*.*?\*/ | //[^\n]* | "(?:\\.|[^"\\\n])*" | '(?:\\.|[^'\\\n])*'
            | ^[ \t]*\#(?:[^\n]*\\\n)*[^\n]* )
  | (?P<tok> [A-Za-z_]\w* | . )
""", re.S | re.M | re.X)
NOT_NAMES = {"__attribute__", "__typeof__", "typeof", "const", "volatile"}


def tokens(text):
    """The C tokens of a file, comments, literals and preprocessor lines out."""
    return [m.group("tok") for m in LEX.finditer(text)
            if m.group("tok") and not m.group("tok").isspace()]


def exported(text):
    """(name, kind) of each function or variable defined at file scope
    without static or extern."""
    toks = tokens(text)
    out = []
    i, n = 0, len(toks)
    chunk = []
    while i < n:
        t = toks[i]
        if t == "{":
            kinds = set(chunk)
            if "=" in chunk or kinds & {"struct", "enum", "union", "typedef"} and "(" not in chunk:
                # an initializer or a type: its braces, then on to the ';'
                i = skip_braces(toks, i)
                continue
            if "(" in chunk:
                name = decl_name(chunk)
                if name and "static" not in chunk and "extern" not in chunk:
                    out.append((name, "function"))
                i = skip_braces(toks, i)
                chunk = []
                continue
            i = skip_braces(toks, i)
            continue
        if t == ";":
            head = chunk[:chunk.index("=")] if "=" in chunk else chunk
            if chunk and "(" not in head:  # a prototype has its '(' here
                if not set(chunk) & {"static", "extern", "typedef"} and \
                        not (chunk[0] in ("struct", "enum", "union") and len(chunk) <= 2):
                    name = var_name(chunk)
                    if name:
                        out.append((name, "variable"))
            chunk = []
            i += 1
            continue
        chunk.append(t)
        i += 1
    return out


def skip_braces(toks, i):
    depth = 0
    while i < len(toks):
        if toks[i] == "{":
            depth += 1
        elif toks[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def decl_name(chunk):
    """The declarator's name: the identifier before the first '(' at
    parenthesis depth 0 that is not an attribute."""
    depth = 0
    for k, t in enumerate(chunk):
        if t == "(":
            if depth == 0 and k > 0 and re.match(r"[A-Za-z_]", chunk[k - 1]) and \
                    chunk[k - 1] not in NOT_NAMES:
                return chunk[k - 1]
            depth += 1
        elif t == ")":
            depth -= 1
    return None


def var_name(chunk):
    end = chunk.index("=") if "=" in chunk else len(chunk)
    head = chunk[:end]
    while head and head[-1] == "]":  # arrays: the name before the [...]
        head = head[:head.index("[")] if "[" in head else []
    for t in reversed(head):
        if re.match(r"[A-Za-z_]\w*$", t) and t not in NOT_NAMES:
            return t
    return None


def header_names(text):
    """(name, kind) of what a header defines: macros, tags, static inlines."""
    out = []
    guard = None
    for m in re.finditer(r"^[ \t]*#[ \t]*(ifndef|define)[ \t]+(\w+)", text, re.M):
        if m.group(1) == "ifndef":
            guard = guard or m.group(2)
        elif m.group(2) != guard:
            out.append((m.group(2), "macro"))
    toks = tokens(text)
    for k, t in enumerate(toks):
        # a definition or a forward declaration: the header's own types
        if t in ("struct", "enum", "union") and k + 2 < len(toks) and toks[k + 2] in ("{", ";") \
                and re.match(r"[A-Za-z_]", toks[k + 1]):
            out.append((toks[k + 1], "tag"))
    i = 0
    while i < len(toks):
        if toks[i] == "static" and "inline" in toks[i + 1:i + 3]:
            j = i
            chunk = []
            while j < len(toks) and toks[j] not in ("{", ";"):
                chunk.append(toks[j])
                j += 1
            name = decl_name(chunk)
            if name:
                out.append((name, "static inline function"))
            i = j
        i += 1
    return out


def check(src):
    bad = []
    common = os.path.join(src, "plugins", "common")
    for f in sorted(os.listdir(common)):
        path = os.path.join(common, f)
        text = open(path, encoding="utf-8").read()
        if f.endswith(".c"):
            for name, kind in exported(text):
                if not name.startswith("sl_"):
                    bad.append(f"plugins/common/{f}: {kind} {name} is not sl_*")
        elif f.endswith(".h") and not PRIVATE_HEADERS.search(f):
            for name, kind in header_names(text):
                if kind == "macro":
                    ok = name.startswith(("SL_", "sl_")) or name in EXTERNAL_MACROS
                else:
                    ok = name.startswith("sl_")
                if not ok:
                    want = "SL_*" if kind == "macro" else "sl_*"
                    bad.append(f"plugins/common/{f}: {kind} {name} is not {want}")
    core = os.path.join(src, "core", "src")
    for folder in sorted(os.listdir(core)):
        d = os.path.join(core, folder)
        if not os.path.isdir(d):
            continue
        stems = [f[:-2] for f in os.listdir(d) if f.endswith(".c")]
        for stem in sorted(stems):
            prefixes = [stem]
            family = stem.rsplit("_", 1)[0] if "_" in stem else None
            if family and (family in stems or
                           sum(s.startswith(family + "_") for s in stems) >= 2):
                prefixes.append(family)
            allowed = CORE_ALLOWED.get(f"{folder}/{stem}.c", set())
            text = open(os.path.join(d, stem + ".c"), encoding="utf-8").read()
            for name, kind in exported(text):
                if name in allowed or any(name == p or name.startswith(p + "_")
                                          for p in prefixes):
                    continue
                want = " or ".join(p + "_*" for p in prefixes)
                bad.append(f"core/src/{folder}/{stem}.c: {kind} {name} is not {want}")
    return bad


def main(argv):
    if len(argv) != 2:
        sys.exit(f"usage: {argv[0]} SRCDIR")
    bad = check(argv[1])
    for b in bad:
        print(b)
    if bad:
        print(f"dialect: {len(bad)} names break the naming dialect "
              "(tools/dev/rename_dialect.py renames the known ones)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
