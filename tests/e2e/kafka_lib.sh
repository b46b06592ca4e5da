# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers for the kafka output's tests: a librdkafka mock cluster
# (tests/kafka_mock.c) per test, commands to it, reading a topic back with
# kcat.  Source after lib.sh.  The mock is in-memory and single-process:
# what it proves is the protocol and our accounting, not a real cluster's
# durability or failover.
MOCK="$BUILDDIR/tests/kafka_mock"
[ -x "$MOCK" ] || skip "kafka_mock not built (SLUICE_WITH_KAFKA=OFF?)"
[ -e "$SLUICE_PLUGIN_PATH/kafka.so" ] || skip "kafka.so not built"
need_cmd kcat python3
TF=${SLUICE_TEST_TIME_FACTOR:-1}

# With MOCK_NETNS set, the mock and kcat run in that network namespace.
in_ns() { if [ -n "${MOCK_NETNS:-}" ]; then ip netns exec "$MOCK_NETNS" "$@"; else "$@"; fi; }

# start_mock ARGS...: run kafka_mock ARGS (e.g. TOPIC:3 ...) with its stdin
# on fd 7 (when this shell ends, however, the mock sees EOF and exits); BOOTSTRAP and, for each partition, LEADER_<topic>_<p> are set.
start_mock() {
	mkfifo "$WORK/mock.in"
	local pre=()
	[ -z "${MOCK_NETNS:-}" ] || pre=(ip netns exec "$MOCK_NETNS")	# it execs: $! is the mock
	"${pre[@]}" "$MOCK" "$@" <"$WORK/mock.in" >"$WORK/mock.out" 2>"$WORK/mock.err" &
	MOCK_PID=$!
	at_exit "kill $MOCK_PID"
	exec 7>"$WORK/mock.in"
	wait_for 10 grep -qx ready "$WORK/mock.out" ||
		{ cat "$WORK/mock.err"; fail "kafka_mock did not start"; }
	BOOTSTRAP=$(awk '$1 == "bootstrap" { print $2 }' "$WORK/mock.out")
	eval "$(awk '$1 == "leader" { gsub(/[^A-Za-z0-9_]/, "_", $2); print "LEADER_" $2 "_" $3 "=" $4 }' \
		"$WORK/mock.out")"
	MOCK_OKS=0
}

# mock_cmd LINE: send a command, wait for its "ok".
mock_cmd() {
	echo "$1" >&7
	MOCK_OKS=$((MOCK_OKS + 1))
	mock_answered() { [ "$(grep -c '^ok$' "$WORK/mock.out")" -ge "$MOCK_OKS" ]; }
	wait_for 5 mock_answered || { cat "$WORK/mock.out"; fail "mock: '$1' not ok"; }
}

# read_topic TOPIC OUT: every message now on TOPIC, as "partition<TAB>key<TAB>
# timestamp<TAB>value" lines.
read_topic() {
	in_ns timeout $((30 * TF)) kcat -C -q -b "$BOOTSTRAP" -t "$1" -e -f '%p\t%k\t%T\t%s\n' >"$2" ||
		fail "kcat could not read topic $1"
}

# counter LOG INSTANCE NAME: a counter from the daemon's last "counters:" line.
counter() {
	sed -n "s/^sluice: counters: $2 ([a-z]*):.* $3=\([0-9]*\).*/\1/p" "$1" | tail -n 1
}
