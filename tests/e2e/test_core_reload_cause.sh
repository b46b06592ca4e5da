#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A failed reload's answer names the real cause.  The reply blamed "what
# 'X', which it would replace, holds" while the log said "No such file or
# directory".  `sluice reload` must exit non-zero and print the error the
# plugin met, with the path (control bytes escaped):
#  1. a new file output in a directory that does not exist (opened by start());
#  2. the running output replaced by one there: no talk of what the old
#     one holds (a file output holds nothing exclusive);
#  3. geoip (when built) with a database that does not exist (start());
#  4. syslog over TLS (when built) with a CA file that does not exist,
#     opened at configure time: the error with its file:line:column.
# Each time the running configuration stays and keeps writing.
. "$(dirname "$0")/lib.sh"
SOCK="$WORK/ctl"
L="$WORK/sluice.log"
D="$WORK/out"
ESC=$'\e'
mkdir "$D"
BASE="daemon: {control_socket: $SOCK}
instances:
  src: {plugin: replay, file: \"$SRCDIR/tests/data/raw-mixed.pcap\", pace: original, loop: 0}"
# conf OUTPUT_FILE [EXTRA...]: the configuration, stack a writing OUTPUT_FILE
conf() {
	local out="$1"
	shift
	{
		echo "$BASE"
		printf '%s\n' "$@" | grep -v '^  [a-z]*: \[' || true
		echo "stacks:"
		echo "  a: [src, decode, logline, {plugin: file, file: \"$out\", flush_interval: 50ms}]"
		printf '%s\n' "$@" | grep '^  [a-z]*: \[' || true
	} >"$WORK/s.yaml"
}
# reload_fails: `sluice reload` must fail; its stderr in ERRS
reload_fails() {
	local rc=0
	"$SLUICE" reload --socket "$SOCK" >"$WORK/r.out" 2>"$WORK/r.err" || rc=$?
	ERRS=$(cat "$WORK/r.err")
	echo "reload: exit $rc: $ERRS"
	[ "$rc" != 0 ] || fail "a reload that cannot start exited 0: $(cat "$WORK/r.out")"
	[[ "$ERRS" != *"$ESC"* ]] || fail "an ESC reached the terminal"
}
lines_grow() {
	local before=$1
	[ "$(wc -l <"$D/a.log")" -gt "$before" ]
}
still_running() {
	local n
	n=$(wc -l <"$D/a.log")
	wait_for 20 lines_grow "$n" || fail "the running configuration stopped writing"
}

conf "$D/a.log"
run_sluice_bg "$L" -c "$WORK/s.yaml"
wait_for 10 test -s "$D/a.log" || fail "no output: $(cat "$L")"

# 1. a new output where it cannot open its file
conf "$D/a.log" "  b: [src, decode, logline, {plugin: file, file: \"$WORK/no\\edir/b.log\"}]"
reload_fails
grep -qF "b.file could not start: cannot open $WORK/no\\x1bdir/b.log: No such file or directory" <<<"$ERRS" ||
	fail "1: the answer does not name the cause: $ERRS"
still_running

# 2. the running output replaced by one that cannot open its file
conf "$WORK/nodir/a.log"
reload_fails
grep -qF "a.file could not start: cannot open $WORK/nodir/a.log: No such file or directory" <<<"$ERRS" ||
	fail "2: the answer does not name the cause: $ERRS"
! grep -q "holds" <<<"$ERRS" || fail "2: the answer blames what the old output holds: $ERRS"
still_running

# 3. geoip with a database that is not there
if [ -e "$SLUICE_PLUGIN_PATH/geoip.so" ]; then
	conf "$D/a.log" "  geo: {plugin: geoip, databases: [\"$WORK/nodir/city.mmdb\"]}" \
		"  g: [src, decode, geo, json, {plugin: file, file: \"$D/g.log\"}]"
	reload_fails
	grep -qF "geo could not start: $WORK/nodir/city.mmdb: cannot open: No such file or directory" <<<"$ERRS" ||
		fail "3: the answer does not name the cause: $ERRS"
	still_running
else
	echo "geoip not built: part 3 not run"
fi

# 4. syslog over TLS with a CA file that is not there (read by configure())
if "$SLUICE" --describe syslog 2>/dev/null | grep -q tls_ca_file; then
	conf "$D/a.log" "  s: [src, decode, logline, {plugin: syslog, address: \"127.0.0.1:6514\", transport: tls, tls_ca_file: \"$WORK/nodir/ca.pem\"}]"
	reload_fails
	grep -qE "^$WORK/s.yaml:[0-9]+:[0-9]+: error: .*$WORK/nodir/ca.pem: No such file or directory" <<<"$ERRS" ||
		fail "4: the answer does not name the cause: $ERRS"
	still_running
else
	echo "syslog without TLS: part 4 not run"
fi
grep -q "No such file or directory" "$L" || fail "the log does not say it either"
pass "each failed reload names its cause"
