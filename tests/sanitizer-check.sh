#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs one test of a sanitizer build (-DSLUICE_SANITIZE=...): ctest puts it
# before every test command there.  Every process the test starts writes
# its sanitizer reports into a fresh directory, and any report fails the
# test whatever the test concluded: a daemon run in the background, or
# killed by its test, may report while the test only looks at its output.
# Reports are fatal (halt_on_error, -fno-sanitize-recover), leaks included.
set -u
dir=$(mktemp -d /tmp/sluice-san.XXXXXX) || exit 1
# A daemon that switched to daemon.user must still be able to write its report.
chmod 1777 "$dir"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=86:detect_leaks=1:print_stacktrace=1:log_path=$dir/asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=86:print_stacktrace=1:log_path=$dir/ubsan${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export LSAN_OPTIONS="exitcode=86${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
# The ThreadSanitizer build (build-tsan/, run-all.sh's third run): a data
# race or lock misuse anywhere is a report, as fatal as an ASan one.
export TSAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=86:second_deadlock_stack=1:log_path=$dir/tsan${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
# Tests that bound a time scale it by this (sanitized code runs 2-5 times slower).
export SLUICE_TEST_TIME_FACTOR="${SLUICE_TEST_TIME_FACTOR:-5}"
# gcc's libubsan ignores log_path when it runs beside libasan: its reports
# go to the stderr of the process, which -fno-sanitize-recover then ends
# with status 86.  So the test's own output is searched for them too (the
# unit tests and corpus replays run the parsers in the test's process).
# LeakSanitizer's own tracer (the thread that stops the world to scan for
# leaks) sometimes crashes on a loaded machine ("Tracer caught signal 11 ...
# LeakSanitizer has encountered a fatal error"): no finding about the code,
# and no leak check done.  A test whose only reports are such crashes runs
# once more, and then counts as any other run.  That second run leaves
# thread-local storage out of the roots (use_tls=0): the crash that repeats
# is the tracer reading a dynamic TLS block of a dlopen()ed library
# ("DTLS 7 at 0x00000000011e-..."), seen with every plugin on the path
# loaded (test_config_semantics, gcc 12's libsanitizer).  The leak check
# still runs; a block only thread-local storage points to would then be
# reported as a leak (a failure to look at, never a leak hidden); the
# list of built-in suppressions it then uses (__tls_get_addr) is not printed.
lsan_crash_only() {
	local f
	for f in "$dir"/*; do
		[ -e "$f" ] || return 1
		grep -q 'LeakSanitizer has encountered a fatal error' "$f" || return 1
		! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer: detected)' "$f" || return 1
	done
	! grep -qE ': runtime error: |WARNING: ThreadSanitizer' "$dir.out"
}
for attempt in 1 2; do
	"$@" 2>&1 | tee "$dir.out"
	rc=${PIPESTATUS[0]}
	[ "$attempt" = 1 ] && lsan_crash_only || break
	echo "sanitizer-check: LeakSanitizer's tracer crashed (not a report about the code); running the test again without TLS roots" >&2
	rm -f "$dir"/*
	export LSAN_OPTIONS="$LSAN_OPTIONS:use_tls=0:print_suppressions=0"
done
reports=("$dir"/*)
if [ -e "${reports[0]}" ] || grep -qE ': runtime error: |WARNING: ThreadSanitizer' "$dir.out"; then
	echo "FAIL: sanitizer reports from the test (exit status $rc):" >&2
	grep -A20 -E ': runtime error: |WARNING: ThreadSanitizer' "$dir.out" >&2
	for f in "${reports[@]}"; do
		[ -e "$f" ] || continue
		echo "==== $f" >&2
		cat "$f" >&2
	done
	rc=1
fi
rm -f "$dir.out"
rm -rf "$dir"
exit "$rc"
