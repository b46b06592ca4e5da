#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A short fuzzing run of each libFuzzer target (fuzz/) from its corpus:
# malformed configurations and NFLOG events must never crash, read out of
# bounds or leak.  Longer runs: see fuzz/CMakeLists.txt.
. "$(dirname "$0")/lib.sh"
need_cmd clang cmake
SECONDS_EACH=${FUZZ_SECONDS:-20}
CC=clang cmake -S "$SRCDIR" -B "$WORK/build" -DSLUICE_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
	>"$WORK/log" 2>&1 || fail "configure failed: $(tail -20 "$WORK/log")"
cmake --build "$WORK/build" -j2 --target fuzz_config fuzz_packet >>"$WORK/log" 2>&1 ||
	fail "fuzzer build failed: $(grep -E 'error' "$WORK/log" | head)"
for t in config packet; do
	mkdir -p "$WORK/corpus-$t"
	"$WORK/build/fuzz/fuzz_$t" -close_fd_mask=2 -max_total_time="$SECONDS_EACH" \
		-artifact_prefix="$WORK/" "$WORK/corpus-$t" "$SRCDIR/fuzz/corpus/$t" >"$WORK/$t.log" 2>&1 ||
		fail "fuzz_$t found a crash: $(grep -A20 -E 'ERROR|SUMMARY' "$WORK/$t.log" | head -40)"
	echo "fuzz_$t: $(grep -E '^Done' "$WORK/$t.log")"
done
pass
