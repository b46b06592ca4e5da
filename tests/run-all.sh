#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Install what is missing, build, and run every test (ctest, in parallel
# where tests allow it; network-namespace tests take a lock and run one at
# a time).  As root every test runs; otherwise root-only tests SKIP.
#
# Three runs, one after the other (tests share /tmp and the netfilter lock):
#   main       build/: every test, the libFuzzer runs of fuzz/ included
#              (FUZZ_SECONDS each, default 40)
#   sanitizer  build-asan/, -DSLUICE_SANITIZE=address,undefined (gcc): the
#              whole suite again, live tests included, where any ASan,
#              LeakSanitizer or UBSan report fails the test
#              (tests/sanitizer-check.sh); tests/sanitizer-excluded.txt
#              names the few that cannot run there, and why.
#              SLUICE_TEST_SANITIZE= (empty) skips this run.
#   threads    build-tsan/, -DSLUICE_SANITIZE=thread (gcc's TSan, whose
#              shared runtime the plugins link, so -Wl,--no-undefined
#              holds): the tests labelled `threads` in tests/CMakeLists.txt
#              (the queue's unit test and the live tests with outputs and
#              inputs on threads), where any ThreadSanitizer report fails
#              the test.  About 2 minutes (build ~1 min, tests ~1 min).
#              SLUICE_TEST_TSAN= (empty) skips it.
# The exit status is non-zero if any run failed; the last lines give
# ctest's summary of each run.  Arguments go to every ctest run.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
# Test tools: real readers and peers the tests check sluice against.
SETUP_PACKAGES="tcpdump tshark wireshark-common nftables iproute2 rsyslog conntrack python3 iputils-ping nfdump
	kmod procps clang libclang-rt-14-dev valgrind logrotate groff-base man-db libmicrohttpd-dev prometheus curl
	dpkg-dev debhelper fakeroot lintian rsyslog-gnutls rsyslog-relp openssl ca-certificates kcat clickhouse-server clickhouse-client mmdb-bin libmaxmind-db-writer-perl
	psad fail2ban logwatch tzdata nfacct iptables ulogd2 ulogd2-json postgresql sqlite3 python3-yaml g++
	gnuplot-nox nodejs systemd nats-server"
# The otlp tests decode with node and an npm package.  Debian's npm conflicts
# with a nodejs that ships its own npm (nodesource's): only when none is there.
command -v npm >/dev/null 2>&1 || SETUP_PACKAGES+=" npm"
. "$TOP/tests/setup.sh"
SANITIZE=${SLUICE_TEST_SANITIZE-address,undefined}
SAN_BUILD="${SLUICE_SAN_BUILD_DIR:-$TOP/build-asan}"
if [ -n "$SANITIZE" ]; then
	build_tree "$SAN_BUILD" -DSLUICE_SANITIZE="$SANITIZE"
fi
TSAN=${SLUICE_TEST_TSAN-thread}
TSAN_BUILD="${SLUICE_TSAN_BUILD_DIR:-$TOP/build-tsan}"
if [ -n "$TSAN" ]; then
	# Without skbdrop: gcc 12's TSan runtime cannot map its shadow
	# ("failed to allocate 0x1ec2000003000 bytes", ENOMEM) once libbpf
	# and libelf are loaded beside every other plugin's libraries
	# (--list-plugins, the man pages); skbdrop runs no threads of its own
	# and its test runs in the main and ASan runs.
	build_tree "$TSAN_BUILD" -DSLUICE_SANITIZE="$TSAN" -DSLUICE_WITH_BPF=OFF
fi

LOGS=$(mktemp -d /tmp/sluice-run-all.XXXXXX)
trap 'rm -rf "$LOGS"' EXIT
SUMMARY=()

# run_ctest LABEL DIR [ENV=VALUE...] -- ARGS...: one ctest run; records its summary line.
run_ctest() {
	local label="$1" dir="$2" rc line
	shift 2
	local envs=()
	while [ "$1" != "--" ]; do envs+=("$1"); shift; done
	shift
	echo "==== run-all: $label ($dir)"
	set +e
	(cd "$dir" && env "${envs[@]}" ctest -j"$(nproc)" --output-on-failure --timeout 600 "$@") 2>&1 |
		tee "$LOGS/$label.log"
	rc=${PIPESTATUS[0]}
	set -e
	line=$(grep -E '^[0-9]+% tests passed' "$LOGS/$label.log" | tail -1)
	SUMMARY+=("run-all: $label run: ${line:-no ctest summary} (exit $rc)")
	return "$rc"
}

status=0
run_ctest main "$BUILD" -- "$@" || status=1
if [ -n "$SANITIZE" ]; then
	# Sanitized code runs slower: tests that bound a time scale it by this.
	run_ctest sanitizer "$SAN_BUILD" "SLUICE_TEST_TIME_FACTOR=${SLUICE_TEST_TIME_FACTOR:-5}" \
		-- "$@" || status=1
fi
if [ -n "$TSAN" ]; then
	run_ctest threads "$TSAN_BUILD" "SLUICE_TEST_TIME_FACTOR=${SLUICE_TEST_TIME_FACTOR:-5}" \
		-- -L threads "$@" || status=1
fi
printf '%s\n' "${SUMMARY[@]}"
exit "$status"
