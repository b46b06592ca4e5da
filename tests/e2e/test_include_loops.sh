#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# No new include loop between the modules of core/ and plugins/ (a .c with
# its own .h is one module): every loop goes through an arrow
# include_graph.py's ALLOWED list names, and every arrow there still
# closes a loop of its own, so the list only shrinks (include_graph.py
# says how the graph is read; `include_graph.py SRCDIR --loops` lists the
# modules on loops).
. "$(dirname "$0")/lib.sh"
need_cmd python3
python3 "$(dirname "$0")/include_graph.py" "$SRCDIR" ||
	fail "the include graph has a loop ALLOWED does not name, or ALLOWED names one that is gone (above)"
pass "every include loop is one ALLOWED names, and each ALLOWED arrow still closes one"
