#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every example in conf/ must pass `sluice -t` (exit 0).
set -u
: "${SLUICE:?run through ctest}" "${SRCDIR:?}"
cd "$SRCDIR" || exit 1
pass=0 fail=0
for conf in conf/*.yaml; do
	if out=$("$SLUICE" -t -c "$conf" 2>&1); then
		pass=$((pass + 1))
	else
		echo "FAIL: $conf:"; echo "$out" | sed 's/^/    /'; fail=$((fail + 1))
	fi
done
echo "example configs: $pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
