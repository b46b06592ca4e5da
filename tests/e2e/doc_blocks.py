#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The blocks of a document that the docs tests compare with the program.

A fenced block is marked by `<!-- doc-test: NAME -->` on a line before its
opening fence (blank lines aside), indented as the fence may be (inside a
list item).  `doc_blocks.py FILE NAME` prints the block, its indentation
removed; exit 1 when FILE has no block of that name or has it twice.
As a module: block(path, name) -> (line of the first line, text).
"""
import re
import sys

MARK = re.compile(r"\s*<!-- doc-test: (\S+) -->\s*")


def blocks(path):
    """Every marked fenced block of path: {name: [(line, text), ...]}."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found = {}
    for i, line in enumerate(lines):
        m = MARK.fullmatch(line)
        if not m:
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j == len(lines) or not lines[j].lstrip().startswith("```"):
            continue        # a mark on prose (fixed-keys, spool-outputs): the tests read it
        indent = len(lines[j]) - len(lines[j].lstrip())
        k = j + 1
        while k < len(lines) and lines[k].strip() != "```":
            k += 1
        body = [x[indent:] if not x[:indent].strip() else x for x in lines[j + 1:k]]
        found.setdefault(m.group(1), []).append((j + 2, "\n".join(body) + "\n"))
    return found


def block(path, name):
    got = blocks(path).get(name, [])
    if len(got) != 1:
        sys.exit(f"{path}: {len(got)} fenced blocks marked <!-- doc-test: {name} -->, expected 1")
    return got[0]


if __name__ == "__main__":
    sys.stdout.write(block(sys.argv[1], sys.argv[2])[1])
