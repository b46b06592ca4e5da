#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Signals: SIGHUP reopens output files (logrotate moved the file away),
# SIGUSR1 logs every instance's counters, SIGTERM flushes and exits 0.
. "$(dirname "$0")/lib.sh"
export SLUICE_PLUGIN_PATH="$SLUICE_PLUGIN_PATH:$SLUICE_TEST_PLUGIN_DIR"

cat >"$WORK/c.yaml" <<CONF
stacks:
  s: [{ plugin: gen, count: -1, per_tick: 10, interval: 10ms },
      { plugin: file, file: $WORK/out.log, flush_interval: 50ms }]
CONF
run_sluice_bg "$WORK/err" -c "$WORK/c.yaml"
wait_for 10 test -s "$WORK/out.log" || fail "nothing written"
mv "$WORK/out.log" "$WORK/out.log.1"
kill -HUP "$SLUICE_PID"
wait_for 10 test -s "$WORK/out.log" || fail "SIGHUP did not reopen the file"
kill -USR1 "$SLUICE_PID"
wait_for 10 grep -q "counters: s.file (file): in=" "$WORK/err" || fail "SIGUSR1 logged no counters"
kill -TERM "$SLUICE_PID"
rc=0; wait "$SLUICE_PID" || rc=$?
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM: $(cat "$WORK/err")"
# Every record the output took in is in one of the two files.
out=$(grep "counters: s.file (file)" "$WORK/err" | tail -1 | sed -E 's/.* out=([0-9]+) .*/\1/')
lines=$(cat "$WORK/out.log.1" "$WORK/out.log" | wc -l)
[ "$out" = "$lines" ] || fail "output counted $out records, files hold $lines"
# No record lost or repeated across the reopen.
[ "$(cat "$WORK/out.log.1" "$WORK/out.log")" = "$(seq 0 $((lines - 1)) | sed 's/^/record /')" ] ||
	fail "records lost or repeated across SIGHUP"
pass "$lines records across a reopen"
