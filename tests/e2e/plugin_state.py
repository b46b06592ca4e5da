#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every plugin's state comes from sl_state_new() (plugins/common/plugin_state.h).

Usage: plugin_state.py SRCDIR

A plugin is a .c file under plugins/ whose plugin table names its
configure() (`.configure = NAME,`).  In the body of NAME (from its
definition to the `}` that closes it in column 0), the variable handed
out as `*state = VAR;` must be assigned only from sl_state_new() or
sl_outfile_state_new() (outfile.h's, the same allocation for an output
whose state also begins with its outfile): then the state begins with
SL_STATE_HEAD (the macros fail to compile otherwise), holds no copies of
its host, instance and options of its own, and a failed allocation is
the one configuration error.

ALLOWED names the plugins that still allocate by hand.  It fails (exit 1)
when a plugin not in ALLOWED allocates its state another way, when its
configure() or its `*state =` is not found (the check cannot read it: say
how it allocates, do not add it here), or when an ALLOWED plugin uses
sl_state_new() now (delete its entry: the list only ever shrinks).
"""
import os
import re
import sys

# Plugins whose configure() still allocates its state by hand: issue 20
# moves each onto sl_state_new(); delete an entry when it does.
ALLOWED = [
]

ALLOCATORS = ("sl_state_new", "sl_outfile_state_new", "sl_sink_state_new")
CONFIGURE_RE = re.compile(r"^\s*\.configure\s*=\s*(\w+)\s*,", re.M)
STATE_RE = re.compile(r"^\s*\*state\s*=\s*(\w+)\s*;", re.M)


def body(text, name):
    """The definition of function `name`: (its first line, its text), or None."""
    m = re.search(r"^(?:static\s+)?int\s+" + re.escape(name) + r"\s*\(", text, re.M)
    if not m:
        return None
    end = re.compile(r"^}", re.M).search(text, m.end())
    if not end:
        return None
    return text.count("\n", 0, m.start()) + 1, text[m.start():end.end()]


def check_file(rel, text):
    """None when the plugin's state comes from sl_state_new(), else why not."""
    conf = CONFIGURE_RE.search(text)
    found = body(text, conf.group(1))
    if not found:
        return f"{rel}: the definition of {conf.group(1)}() is not found"
    line, fn = found
    handed = STATE_RE.findall(fn)
    if not handed:
        return f"{rel}:{line}: {conf.group(1)}() has no `*state = VAR;`"
    for var in sorted(set(handed)):
        assigned = re.findall(r"\b" + re.escape(var) + r"\s*=(?!=)\s*(\w+)", fn)
        if not assigned:
            return f"{rel}:{line}: {conf.group(1)}() never assigns {var}, which it hands out"
        other = [a for a in assigned if a not in ALLOCATORS]
        if other:
            return (f"{rel}:{line}: {conf.group(1)}() assigns its state {var} from "
                    f"{', '.join(sorted(set(other)))}, not sl_state_new()")
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    src = sys.argv[1]
    plugins = {}
    for dirpath, _, names in os.walk(os.path.join(src, "plugins")):
        for n in names:
            if n.endswith(".c"):
                path = os.path.join(dirpath, n)
                with open(path, encoding="utf-8") as fh:
                    text = fh.read()
                if CONFIGURE_RE.search(text):
                    plugins[os.path.relpath(path, src)] = text
    errors = []
    by_hand = []
    new = 0
    for rel in sorted(plugins):
        why = check_file(rel, plugins[rel])
        new += why is None
        if why is None and rel in ALLOWED:
            errors.append(f"{rel} uses sl_state_new() now: delete its ALLOWED entry")
        elif why is not None and rel not in ALLOWED:
            errors.append(why)
        elif why is not None:
            by_hand.append(rel)
    for rel in ALLOWED:
        if rel not in plugins:
            errors.append(f"{rel} of ALLOWED is no plugin of the tree: delete its entry")
    print(f"{len(plugins)} plugins, {new} with sl_state_new(), "
          f"{len(by_hand)} allowed by hand; {len(errors)} errors")
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
