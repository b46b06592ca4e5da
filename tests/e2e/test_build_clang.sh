#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tree builds warning-free (-Werror) with clang as well as gcc.
. "$(dirname "$0")/lib.sh"
need_cmd clang cmake
CC=clang cmake -S "$SRCDIR" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DSLUICE_WERROR=ON \
	>"$WORK/log" 2>&1 || fail "configure failed: $(tail -20 "$WORK/log")"
cmake --build "$WORK/build" -j2 >>"$WORK/log" 2>&1 || fail "clang build failed: $(grep -E 'error|warning' "$WORK/log" | head -20)"
pass "$(clang --version | head -1)"
