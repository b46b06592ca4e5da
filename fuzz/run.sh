#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# libFuzzer runs for ctest (see fuzz/CMakeLists.txt):
#   run.sh build NAME...   build the targets into <build>/fuzz-clang (clang)
#   run.sh run NAME        fuzz fuzz_NAME from fuzz/corpus/NAME for
#                          FUZZ_SECONDS (default 40, as in CI; set it lower
#                          for a quick local run)
# A crash, leak or timeout fails the test; the input that caused it is kept
# in <build>/fuzz-artifacts/ to be added to the corpus with its fix.
. "$SRCDIR/tests/e2e/lib.sh"
TEST_NAME="fuzz/${1:-}${2:+_$2}"	# for PASS/FAIL/SKIP lines
FUZZ_BUILD="$BUILDDIR/fuzz-clang"
ARTIFACTS="$BUILDDIR/fuzz-artifacts"

case "${1:-}" in
build)
	shift
	need_cmd clang cmake
	targets=()
	for t in "$@"; do targets+=("fuzz_$t"); done
	CC=clang cmake -S "$SRCDIR" -B "$FUZZ_BUILD" -DSLUICE_FUZZ=ON \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo >"$WORK/log" 2>&1 ||
		fail "configure failed: $(tail -20 "$WORK/log")"
	cmake --build "$FUZZ_BUILD" -j2 --target "${targets[@]}" >>"$WORK/log" 2>&1 ||
		fail "fuzzer build failed: $(grep -E 'error' "$WORK/log" | head)"
	pass "${targets[*]}"
	;;
run)
	t="$2"
	bin="$FUZZ_BUILD/fuzz/fuzz_$t"
	[ -x "$bin" ] || skip "no $bin (fuzz/build did not run or clang is missing)"
	secs=${FUZZ_SECONDS:-40}
	mkdir -p "$WORK/new" "$ARTIFACTS"
	# New inputs go to a scratch directory; the committed corpus is only read.
	# -close_fd_mask=2: the config target prints errors for every input
	# (libFuzzer keeps its own and the sanitizers' reports).
	"$bin" -close_fd_mask=2 -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$ARTIFACTS/$t-" -print_final_stats=1 \
		"$WORK/new" "$SRCDIR/fuzz/corpus/$t" >"$WORK/log" 2>&1 ||
		fail "fuzz_$t failed: $(grep -A30 -E '^==[0-9]+==|ERROR|SUMMARY|Test unit written' "$WORK/log" | head -60)"
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/log")
	cov=$(grep -E '^Done|#[0-9]+.*DONE' "$WORK/log" | tail -1)
	pass "fuzz_$t: ${secs} s, $runs inputs, $(ls "$WORK/new" | wc -l) new; $cov"
	;;
*)
	echo "usage: run.sh build NAME... | run NAME" >&2
	exit 2
	;;
esac
