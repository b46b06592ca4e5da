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

# lock_netfilter: take the machine-wide netfilter lock, once per test.
# ctest's RESOURCE_LOCK serialises the netns tests of one run; this also
# serialises two checkouts' runs, which share the kernel's global
# netfilter sysctls (nf_log_all_netns, ...): a test that changes one must
# call this before it reads or writes it, or another run's test restores
# its own old value under it.  A helper process holds the lock for as
# long as this shell lives: daemons and tools the test starts in the
# background never inherit it, so one left behind by a test that was
# killed (a ctest timeout) cannot hold it for every later test.
lock_netfilter() {
	local shell=$$
	[ -z "${SLUICE_NETNS_LOCKED:-}" ] || return 0
	(
		exec 9>/tmp/sluice-netfilter.lock
		flock 9
		: >"$WORK/.locked"
		while kill -0 "$shell" 2>/dev/null; do sleep 0.2; done
	) </dev/null >/dev/null 2>&1 &
	at_exit "kill $!"
	until [ -e "$WORK/.locked" ]; do sleep 0.05; done
	SLUICE_NETNS_LOCKED=1
}

# make_netns NAME: a namespace with loopback up, deleted at exit; the
# first call takes the netfilter lock (lock_netfilter).
make_netns() {
	local ns="$1"
	lock_netfilter
	ip netns del "$ns" 2>/dev/null || true
	ip netns add "$ns" || skip "cannot create network namespaces"
	at_exit "ip netns del $ns"
	ip -n "$ns" link set lo up
}

# uninstalled CMD...: run CMD as on a machine where sluice is not
# installed.  The daemon always searches its built-in plugin directory
# last, and reads its default config without -c: where an installed
# sluice has put files there, CMD runs in a mount namespace of its own
# with an empty tmpfs over each of those directories (user namespace too
# when not root).  Where that cannot be done it fails (unshare's status,
# or 125): probe with `uninstalled true || skip ...` first.
uninstalled() {
	local d dirs=() ns=(--mount)
	for d in "${SLUICE_BUILTIN_PLUGIN_DIR:?run through ctest}" "$(dirname "${SLUICE_DEFAULT_CONFIG:?}")"; do
		[ ! -e "$d" ] || dirs+=("$d")
	done
	[ "${#dirs[@]}" != 0 ] || { "$@"; return; }
	[ "$(id -u)" = 0 ] || ns=(--user --map-root-user --mount)
	unshare "${ns[@]}" --propagation private -- bash -c '
		while [ "$1" != -- ]; do
			mount -t tmpfs -o mode=755 sluice-uninstalled "$1" || exit 125
			shift
		done
		shift
		exec "$@"' uninstalled "${dirs[@]}" -- "$@"
}

# with_log_dir CMD...: run CMD where /var/log/sluice exists and is empty,
# as the package (postinst) and the unit (LogsDirectory=) make it: a mount
# namespace of its own with a tmpfs over /var/log (user namespace too when
# not root), so `sluice -t` of a packaged configuration finds its output
# directory on any machine.  Fails (125) where that cannot be done.
with_log_dir() {
	local ns=(--mount)
	[ "$(id -u)" = 0 ] || ns=(--user --map-root-user --mount)
	unshare "${ns[@]}" --propagation private -- bash -c '
		mount -t tmpfs -o mode=755 sluice-logs /var/log && mkdir /var/log/sluice || exit 125
		exec "$@"' with_log_dir "$@"
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

# Sanitized builds run 2-5 times slower (run-all.sh and sanitizer-check.sh
# set this to 5): every deadline a test sets is multiplied by it.
TIME_FACTOR=${SLUICE_TEST_TIME_FACTOR:-1}
[[ "$TIME_FACTOR" =~ ^[1-9][0-9]*$ ]] ||
	fail "SLUICE_TEST_TIME_FACTOR must be a whole number >= 1, not '$TIME_FACTOR'"

# wait_for TIMEOUT_S CMD...: poll until CMD succeeds; give up after
# TIMEOUT_S seconds times TIME_FACTOR.  TIMEOUT_S is a deadline for an
# event, generous for a busy machine, never a time the test waits out.
wait_for() {
	local t="$1"; shift
	local end=$((SECONDS + t * TIME_FACTOR))
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.1
	done
}

# veth_pair NS_A NS_B N: a veth pair va (in NS_A) / vb (in NS_B), both up,
# with MACs 02:00:00:N:00:01/02, 10.N.0.1/2 and fdN::1/2, and permanent
# neighbour entries, so no ARP/ND traffic mixes with what a test sends.
veth_pair() {
	local a="$1" b="$2" n="$3"
	ip link add va netns "$a" type veth peer name vb netns "$b" || skip "cannot create veth"
	ip -n "$a" link set va address "02:00:00:$n:00:01"
	ip -n "$b" link set vb address "02:00:00:$n:00:02"
	ip -n "$a" addr add "10.$n.0.1/24" dev va
	ip -n "$b" addr add "10.$n.0.2/24" dev vb
	ip -n "$a" addr add "fd$n::1/64" dev va nodad
	ip -n "$b" addr add "fd$n::2/64" dev vb nodad
	ip -n "$a" link set va up
	ip -n "$b" link set vb up
	ip -n "$a" neigh add "10.$n.0.2" lladdr "02:00:00:$n:00:02" dev va nud permanent
	ip -n "$b" neigh add "10.$n.0.1" lladdr "02:00:00:$n:00:01" dev vb nud permanent
	ip -n "$a" neigh add "fd$n::2" lladdr "02:00:00:$n:00:02" dev va nud permanent
	ip -n "$b" neigh add "fd$n::1" lladdr "02:00:00:$n:00:01" dev vb nud permanent
}

# netns_pair PREFIX N: namespaces A (PREFIXa) and B (PREFIXb), their names
# set in A and B, joined by veth_pair N.
netns_pair() {
	A=$(unique_name "${1}a")
	B=$(unique_name "${1}b")
	make_netns "$A"
	make_netns "$B"
	veth_pair "$A" "$B" "$2"
}

# daemon_threads PID: how many threads the daemon runs, leaving out a
# reload's own reader and freeing threads (sl:reload, sl:reload-free),
# which end a moment after the reload's reply.
daemon_threads() {
	local c n=0 name
	for c in /proc/"$1"/task/*/comm; do
		name=$(cat "$c" 2>/dev/null) || continue
		case "$name" in sl:reload*) ;; *) n=$((n + 1)) ;; esac
	done
	echo "$n"
}

# nft_counter NS FAMILY TABLE NAME: the packets nft's named counter NAME of
# table FAMILY TABLE has counted in namespace NS (nothing if there is none).
nft_counter() {
	ip netns exec "$1" nft -j list counter "$2" "$3" "$4" |
		python3 -c 'import json, sys
for o in json.load(sys.stdin)["nftables"]:
    if "counter" in o: print(o["counter"]["packets"])'
}
