#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A reload configures new json instances while a running one prints on its
# input's thread: json's protocol and family name tables are filled once
# and read-only after (they were refilled by every configure(), a data
# race ThreadSanitizer reports; labelled `threads`, so run-all.sh runs it
# on the TSan build).  Each added stack is new from its input on (its own
# `loop`), so its json instance is configured by the reload.  The running stack keeps printing protocol names
# through two reloads, and the added stacks print them too.
. "$(dirname "$0")/lib.sh"
CAP="$SRCDIR/tests/data/nflog-mixed.pcap"
T=30

conf() {	# conf N: stack a, plus stacks b1..bN added by a reload
	{
		cat <<YAML
stacks:
  a: [{ plugin: replay, file: "$CAP", loop: 0, pace: original, thread: true }, decode, json,
      { plugin: file, file: "$WORK/a.json" }]
YAML
		for i in $(seq 1 "$1"); do
			echo "  b$i: [{ plugin: replay, file: \"$CAP\", loop: $i }, decode, json, { plugin: file, file: \"$WORK/b$i.json\" }]"
		done
	} >"$WORK/c.yaml"
}
conf 0
L="$WORK/run.log"
run_sluice_bg "$L" -c "$WORK/c.yaml"
wait_for "$T" grep -q "started:" "$L" || fail "did not start: $(cat "$L")"
protos() { cat "$WORK/a.json" 2>/dev/null | grep -c '"proto":"\(tcp\|udp\|icmp\|ipv6-icmp\)"' || true; }
more_than() { [ "$(protos)" -gt "$1" ]; }
grows() { wait_for "$T" more_than "$(protos)"; }	# more records with a protocol name
grows || fail "no records with a protocol name: $(tail -3 "$L"; head -2 "$WORK/a.json")"
reloads_are() { [ "$(grep -c 'reload: [0-9]* kept, 4 added, 0 removed' "$L")" = "$1" ]; }
lines_are() { [ "$(cat "$1" 2>/dev/null | wc -l)" = "$2" ]; }
for n in 1 2; do
	conf "$n"
	kill -HUP "$SLUICE_PID"
	wait_for "$T" reloads_are "$n" ||
		fail "reload $n not done: $(tail -5 "$L")"
	grows || fail "no records after reload $n: $(tail -5 "$L")"
done
for i in 1 2; do
	wait_for "$T" lines_are "$WORK/b$i.json" $((40 * i)) ||
		fail "stack b$i wrote $(wc -l <"$WORK/b$i.json" 2>/dev/null) of $((40 * i)) records"
	grep -q '"proto":"tcp"' "$WORK/b$i.json" || fail "stack b$i prints no protocol name"
done
kill -TERM "$SLUICE_PID"
wait "$SLUICE_PID" || fail "sluice exited with $?: $(grep -A20 ThreadSanitizer "$L" | head -40; tail -5 "$L")"
grep -q "ThreadSanitizer" "$L" && fail "TSan: $(grep -A20 ThreadSanitizer "$L" | head -40)"
pass "json configured by two reloads beside a printing input thread"
