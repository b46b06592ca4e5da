#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# replay with loop: 0 (endless) over a small file, as fast as it can, must
# still serve signals: SIGUSR1 logs counters, SIGTERM flushes and exits 0.
. "$(dirname "$0")/lib.sh"
cat >"$WORK/c.yaml" <<CONF
stacks:
  s: [{ plugin: replay, file: "$SRCDIR/tests/data/nflog-mixed.pcap", loop: 0 },
      { plugin: pcap, file: "$WORK/out.pcap" }]
CONF
run_sluice_bg "$WORK/err" -c "$WORK/c.yaml"
# SIGUSR1 once the daemon handles it (before "started:" it would die of it).
wait_for 10 grep -q "started: " "$WORK/err" || fail "sluice did not start: $(tail -5 "$WORK/err")"
kill -USR1 "$SLUICE_PID"
wait_for 10 grep -q "counters: s.replay (replay): in=" "$WORK/err" || fail "SIGUSR1 not served while looping"
kill -TERM "$SLUICE_PID"
gone() { ! kill -0 "$SLUICE_PID" 2>/dev/null; }
wait_for 10 gone || fail "SIGTERM not served within $((10 * TIME_FACTOR)) s while looping"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(tail -5 "$WORK/err")"
n=$(grep "counters: s.pcap (pcap)" "$WORK/err" | tail -1 | sed -E 's/.* out=([0-9]+) .*/\1/')
[ "$n" -ge 400 ] || fail "only $n records in half a second"
pass "$n records before SIGTERM"
