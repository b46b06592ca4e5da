#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/sinks.sh's live table (bench/sinks_report.py, issue 21) from
# hand-made bench/run.sh results whose answers are known: one row per
# stack of the full-rate rounds (probe and '#' lines left out), in the
# table's order; delivered is the receiver's count (kafka's plus what the
# mock trimmed, said under the table), lost and loss % from the nft
# counter, the output's dropped (queue_dropped) and the nflog input's lost
# summed over the rounds ('?' when a round's log had no counters line),
# the median CPU per packet of sluice and its input thread, and of the
# receiver (rx_cpu, kafka's mock_cpu; '–' without one) per record it holds.  No replay runs: the
# replay table is left out, not made of nothing.
. "$(dirname "$0")/lib.sh"
need_cmd python3

tab() { tr ' ' '\t'; }
# round mode size logger target_pps sent secs kernel_logged output cpu_s detail threads
tab >"$WORK/live.tsv" <<'EOF'
#note sinks-report-test
1 full 64 sluice-json 0 200000 1.000 200000 200000 0.0800 - main=0.0800
1 full 64 sluice-cef 0 200000 1.000 200000 200000 0.1000 out=200000,dropped=0,queue_dropped=0,nflog_lost=0 main=0.0600;sl:cef.file=0.0400
1 full 64 sluice-otlp 0 250000 1.000 250000 250000 0.2500 out=250000,dropped=0,queue_dropped=0,nflog_lost=0,requests=250,bad=0,rx_cpu=0.500 main=0.1000;sl:otlp.otlp=0.1500
2 full 64 sluice-otlp 0 230000 1.000 230000 226000 0.2300 out=226000,dropped=3000,queue_dropped=2000,nflog_lost=1000,requests=226,bad=0,rx_cpu=0.460 main=0.0920;sl:otlp.otlp=0.1380
1 probe 64 sluice-otlp 100000 100000 1.000 100000 1 0.1000 out=1,dropped=0,queue_dropped=0,nflog_lost=0,rx_cpu=9 main=0.1
1 full 64 sluice-journal 0 100000 1.000 100000 40000 0.3000 out=?,dropped=?,queue_dropped=?,nflog_lost=?,rx_cpu=1.000 main=0.0500
1 full 64 sluice-kafka 0 240000 1.000 240000 239500 0.2400 delivered=240000,topic_end=240000,mock_trimmed=500,mock_cpu=0.120 main=0.0720
EOF
: >"$WORK/replay.tsv"
python3 "$SRCDIR/bench/sinks_report.py" "$WORK/replay.tsv" 1000000 "$WORK/no-parts" "$WORK/live.tsv" \
	>"$WORK/table.md" || fail "sinks_report.py failed"
cat "$WORK/table.md"
want() { grep -qxF "$1" "$WORK/table.md" || fail "no row: $1"; }
want "| nflog → decode → json → file | 1 | 200,000 | 200,000 | 200,000 | 0 | 0.00 | – | – | 0.400 | 0.400 | – |"
want "| nflog → decode → json → kafka (the topic read back with kcat) | 1 | 240,000 | 240,000 | 240,000 | 0 | 0.00 | – | – | 1.000 | 0.300 | 0.50 |"
want "| nflog → decode → json → otlp (log records counted by bench/httpcount.py) | 2 | 240,000 | 480,000 | 476,000 | 4,000 | 0.83 | 3,000 (2,000) | 1,000 | 1.000 | 0.400 | 2.02 |"
want "| nflog → decode → logline → journal (private journald, journalctl's entries) | 1 | 100,000 | 100,000 | 40,000 | 60,000 | 60.00 | ? (?) | ? | 3.000 | 0.500 | 25.00 |"
want "| nflog → decode → cef → file, \`thread: true\` (its lines) | 1 | 200,000 | 200,000 | 200,000 | 0 | 0.00 | 0 (0) | 0 | 0.500 | 0.300 | – |"
want "kafka: 500 of the delivered records had been trimmed by the mock (its partitions keep ~5 MB) before kcat read the topic; they count by their offsets."
# the rows in the table's order, no nats row (no rounds), no replay table
[ "$(grep -c '^| nflog' "$WORK/table.md")" = 5 ] || fail "not five live rows"
grep '^| nflog' "$WORK/table.md" | sed 's/^| nflog → decode → \([a-z]*\) → \([a-z]*\).*/\1-\2/' | tr '\n' ' ' |
	grep -qx 'json-file json-kafka json-otlp logline-journal cef-file ' || fail "rows out of order"
! grep -q 'replay →' "$WORK/table.md" || fail "a replay table without replay runs"
pass "the live rows of bench/sinks.sh's table from hand-made results"
