#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/outputs.sh works (issue 21): a small capture through the outputs
# whose receivers need no server (file, syslog over UDP and TCP to
# bench/gen/sinkcount, SQLite, IPFIX, cef to a file, otlp to
# bench/httpcount.py counting the log records in the requests; and, given
# as OUTPUTS_EXTRA, the clickhouse output to httpcount.py counting
# requests), and where they can run here nats into a nats-server with
# JetStream and the journal output into a private journald (root, a mount
# namespace), each run counted at its receiver: every record the output
# took arrives (IPFIX: every message it sent), the table has a row per
# output with nothing lost, and outputs.tsv the runs.
# No figure is checked: the rates are the benchmark's, not a test's.
. "$(dirname "$0")/lib.sh"
need_cmd python3 taskset cc sqlite3
[ -x "$BUILDDIR/bench/sinkcount" ] || skip "no $BUILDDIR/bench/sinkcount"

only="file-json file-logline syslog-udp syslog-tcp sql-sqlite ipfix"
[ -e "$BUILDDIR/plugins/cef.so" ] && only="$only cef-file"
[ -e "$BUILDDIR/plugins/otlp.so" ] && only="$only otlp"
[ -e "$BUILDDIR/plugins/nats.so" ] && command -v nats-server >/dev/null && only="$only nats"
[ -e "$BUILDDIR/plugins/journal.so" ] && [ "$(id -u)" = 0 ] && [ -x /lib/systemd/systemd-journald ] &&
	command -v journalctl >/dev/null && command -v nsenter >/dev/null &&
	unshare --mount --propagation private true 2>/dev/null && only="$only journal"
extra=""
if [ -e "$BUILDDIR/plugins/clickhouse.so" ]; then # an HTTP output, its requests counted
	only="$only ch-http"
	extra='ch-http | http | inserts | { plugin: clickhouse, url: "http://127.0.0.1:@PORT@", table: packets, batch_size: 1000 }'
fi
OUTPUTS_EXTRA=$extra NODOC=1 CHARTS_DIR="$WORK/charts" NOTE="test" \
	"$SRCDIR/bench/outputs.sh" -b "$BUILDDIR" -n 20000 -r 2 -c 0 -C 0 -o "$only" \
	>"$WORK/table.md" 2>"$WORK/err" || { cat "$WORK/err" >&2; fail "outputs.sh failed"; }
cat "$WORK/table.md"

tsv=$WORK/charts/outputs.tsv
[ -s "$tsv" ] || fail "no outputs.tsv in CHARTS_DIR"
grep -q $'^#note\tbench/outputs.sh -n 20000 -r 2, .*, test$' "$tsv" || fail "outputs.tsv's #note line: $(head -1 "$tsv")"
for name in $only; do
	[ "$(awk -F'\t' -v n="$name" '$1 == n' "$tsv" | wc -l)" = 2 ] || fail "$name: not two runs in outputs.tsv"
done
# name run records expect took sent received ...: every record the output
# took arrived (ipfix: every message it sent)
bad=$(awk -F'\t' '!/^#/ && ($7 != $6 || ($4 == "out" && ($5 != 20000 || $7 != $5)) || $6 == 0)' "$tsv")
[ -z "$bad" ] || fail "runs where the receiver did not get everything: $bad"
# ipfix: flow records from the packets, several to a datagram
awk -F'\t' '$1 == "ipfix" && !($5 > 0 && $5 < 20000 && $6 > 0 && $6 < $5) { exit 1 }' "$tsv" ||
	fail "ipfix: flows and messages do not look like flow export: $(grep ^ipfix "$tsv")"
# ch-http: one request per 1000 rows
[ -z "$extra" ] || awk -F'\t' '$1 == "ch-http" && !($6 >= 20 && $6 == $7) { exit 1 }' "$tsv" ||
	fail "ch-http: not one request per 1000 rows: $(grep ^ch-http "$tsv")"
rows=$(grep -c '^| [a-z].* | 2 | [0-9,]* (' "$WORK/table.md")
[ "$rows" = "$(wc -w <<<"$only")" ] || fail "$rows rows of two runs in the table, want $(wc -w <<<"$only")"
grep '^| ' "$WORK/table.md" | tail -n +3 | awk -F' \\| ' '$NF != "0 |" { print; n++ } END { exit n > 0 }' ||
	fail "the table shows lost records (above)"
pass "$only: every record arrived"
