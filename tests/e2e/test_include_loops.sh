#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No new include loop between the modules of core/ and plugins/ (a .c with
# its own .h is one module): every loop goes through an arrow
# include_graph.py's ALLOWED list names, and every arrow there still
# closes a loop of its own, so the list only shrinks (include_graph.py
# says how the graph is read; `include_graph.py SRCDIR --loops` lists the
# modules on loops).  The same one level up: no loop between the core's
# folders (core/src/base, config, graph, ...) at all: FOLDERS_ALLOWED is
# empty and stays so; a copy of the tree with a made-up one shows the
# check sees it.
. "$(dirname "$0")/lib.sh"
need_cmd python3
graph="$(dirname "$0")/include_graph.py"
python3 "$graph" "$SRCDIR" ||
	fail "the include graph has a loop ALLOWED does not name, or ALLOWED names one that is gone (above)"
folders=$(python3 "$graph" "$SRCDIR" --loops | grep '^folders: ') &&
	fail "the core's folders include each other in a loop, even if FOLDERS_ALLOWED names it: $folders"

# base/ is the lowest floor: log.c including the daemon's header makes
# base -> daemon, and daemon already includes log.h.
mkdir -p "$WORK/tree"
cp -r "$SRCDIR/core" "$SRCDIR/plugins" "$WORK/tree/"
sed -i 's/^#include "log.h"$/#include "log.h"\n#include "daemon.h"/' "$WORK/tree/core/src/base/log.c"
grep -q '^#include "daemon.h"$' "$WORK/tree/core/src/base/log.c" || fail "could not make up the loop"
python3 "$graph" "$WORK/tree" >"$WORK/cycle.out" && fail "a loop between core/src/base and core/src/daemon passed"
grep -q '^    core/src/base -> core/src/daemon  (core/src/base/log -> core/src/daemon/daemon)$' "$WORK/cycle.out" ||
	fail "the made-up folder loop is not reported as one: $(cat "$WORK/cycle.out")"
pass "every include loop is one ALLOWED names, each ALLOWED arrow still closes one, and no core folders include each other in a loop"
