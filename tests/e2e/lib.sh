# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for the end-to-end tests.  Source it: . "$(dirname "$0")/lib.sh"
set -euo pipefail

: "${SLUICE:?run through ctest (SLUICE is the daemon under test)}"
: "${SRCDIR:?}" "${BUILDDIR:?}"
export SLUICE_PLUGIN_PATH

TEST_NAME=$(basename "$0" .sh)
WORK=$(mktemp -d "/tmp/sluice-${TEST_NAME}.XXXXXX")
CLEANUP=()

cleanup() {
	local i
	for ((i = ${#CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${CLEANUP[i]}" >/dev/null 2>&1 || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
# at_exit CMD: run CMD at exit, last registered first.
at_exit() { CLEANUP+=("$*"); }

skip() { echo "SKIP: $TEST_NAME: $*"; exit 77; }
fail() { echo "FAIL: $TEST_NAME: $*" >&2; exit 1; }
pass() { echo "PASS: $TEST_NAME${1:+: $1}"; exit 0; }

need_root() { [ "$(id -u)" = 0 ] || skip "needs root (network namespaces, nftables)"; }
# need_cmd CMD...: skip unless each command exists (the test command installs them).
need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "needs '$c' (not installed)"
	done
}

# make_netns NAME: a namespace with loopback up, deleted at exit.
make_netns() {
	local ns="$1"
	ip netns del "$ns" 2>/dev/null || true
	ip netns add "$ns" || skip "cannot create network namespaces"
	at_exit "ip netns del $ns"
	ip -n "$ns" link set lo up
}

# unique_name PREFIX: a short name unlikely to collide with a parallel run.
unique_name() { echo "$1$$" | cut -c1-12; }

# run_sluice_bg LOG ARGS...: start the daemon in the background; PID in SLUICE_PID.
run_sluice_bg() {
	local log="$1"; shift
	"$SLUICE" "$@" >"$log" 2>&1 &
	SLUICE_PID=$!
	at_exit "kill $SLUICE_PID"
}

# wait_for TIMEOUT_S CMD...: poll until CMD succeeds.
wait_for() {
	local t="$1"; shift
	local end=$((SECONDS + t))
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}
