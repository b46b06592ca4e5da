#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Records per CPU second into Kafka and ClickHouse (issue 11, "Performance").
#
#   bench/sinks.sh [-n RECORDS] [-r RUNS] [-c CPU] [-b BUILDDIR] [-k]     (root for the live part)
#
# 1. Replay: a gen_nflog capture of RECORDS records (default 1,000,000)
#    through, each RUNS times (default 5), sluice pinned to CPU (default 1):
#      replay -> decode -> json -> file        (/dev/shm: the reference)
#      replay -> decode -> json -> kafka       (mock cluster, 3 brokers, topic of 3 partitions)
#      replay -> decode -> clickhouse          (local clickhouse-server, conf/clickhouse/packets.sql)
#    sluice's CPU is user + system of the whole process (rusage, every
#    thread: librdkafka's and the output threads too); the sink's is the
#    growth of its /proc/PID/stat from before the run to 1 s after it
#    (ClickHouse merges parts later too: what falls outside is not counted).
#    Every run is checked: the kafka output's `delivered` counter and the
#    topic's end offsets, and count() of the table, must equal RECORDS.
# 2. Live (LIVE=0 skips it; needs root): bench/run.sh's rig with
#    LOGGERS="sluice-json sluice-kafka sluice-otlp sluice-nats
#    sluice-journal sluice-cef" (LIVE_LOGGERS: another list): nflog ->
#    decode -> json -> file, and the same into kafka, otlp, nats (JetStream),
#    the journal (logline) and cef -> file, each output on its own thread, at
#    the generator's full rate, 64-byte payloads, LIVE_RUNS rounds, default
#    3, of LIVE_DUR seconds, default 1 (the mock cluster keeps only ~5 MB
#    per partition): each stack's output is what its receiver holds, read
#    back after the run (run.sh says how), against the nft counter, with
#    the output's dropped counters and the receiver's CPU.
#    LIVE_ONLY=1 skips part 1 (and writes no document: the block has both).
#
# Results: markdown tables (bench/sinks_report.py) on stdout and in
# docs/BENCHMARKS.md between <!-- sinks-tables:begin/end --> (DOC=path
# another copy, NODOC=1 none).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILDDIR:-${BUILD:-$TOP/build}}
N=1000000 RUNS=5 CPU=1 KEEP=0
while getopts "n:r:c:b:k" o; do
	case $o in
	n) N=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	c) CPU=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	k) KEEP=1 ;;
	*) sed -n '6p' "$0" >&2; exit 64 ;;
	esac
done
LIVE=${LIVE:-1}
LIVE_RUNS=${LIVE_RUNS:-3}
LIVE_LOGGERS=${LIVE_LOGGERS:-sluice-json sluice-kafka sluice-otlp sluice-nats sluice-journal sluice-cef}
LIVE_ONLY=${LIVE_ONLY:-0}
[ "$LIVE_ONLY" = 1 ] && NODOC=1
SLUICE=$BUILD/core/sluice
export SLUICE_PLUGIN_PATH=$BUILD/plugins

die() { echo "sinks.sh: $*" >&2; exit 1; }
[ -x "$SLUICE" ] || die "no daemon at $SLUICE (build first, or -b BUILDDIR)"
if [ "$LIVE_ONLY" != 1 ]; then
	for c in taskset python3 kcat clickhouse-server clickhouse-client curl ${CC:-cc}; do
		command -v "$c" >/dev/null || die "needs $c"
	done
	[ -x "$BUILD/tests/kafka_mock" ] || die "no $BUILD/tests/kafka_mock (SLUICE_WITH_KAFKA=OFF?)"
	for p in kafka clickhouse; do [ -e "$SLUICE_PLUGIN_PATH/$p.so" ] || die "$p.so not built"; done
fi
if [ "$LIVE" = 1 ] && [ "$(id -u)" != 0 ]; then
	echo "sinks.sh: not root: skipping the live part" >&2
	LIVE=0
fi

W=$(mktemp -d /tmp/sluice-bench-sinks.XXXXXX)
OUT=/dev/shm/sluice-bench-sinks.$$
mkdir -p "$OUT"
# shellcheck source=bench/sinks_lib.sh
. "$TOP/bench/sinks_lib.sh"
cleanup() {
	sinks_stop
	rm -rf "$OUT"
	if [ "$KEEP" = 1 ]; then echo "work dir kept: $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
if [ "$LIVE_ONLY" != 1 ]; then
	${CC:-cc} -O2 -Wall -Wextra -o "$W/gen_nflog" "$TOP/bench/gen_nflog.c" || die "cannot build gen_nflog"
	"$W/gen_nflog" -o "$W/in.pcap" -n "$N" -m mix 2>/dev/null || die "gen_nflog failed"
	mock_start -p 3 sl || die "kafka_mock did not start"
	ch_start || die "clickhouse-server did not start"
fi

RESULTS=$W/results.tsv
: >"$RESULTS"
REPLAY="{ plugin: replay, file: $W/in.pcap }"
# one_run PIPE: one timed run; appends "pipe sluice_cpu wall sink_cpu" to RESULTS.
one_run() {
	local pipe=$1 stack sink_pid="" s0=0 s1=0 e0=0 t r
	case $pipe in
	file)
		rm -f "$OUT/out.json"
		stack="$REPLAY, decode, json, { plugin: file, file: $OUT/out.json }" ;;
	kafka)
		sink_pid=$MOCK_PID e0=$(topic_end sl 3)
		stack="$REPLAY, decode, json, { plugin: kafka, brokers: [$BOOTSTRAP], topic: sl }" ;;
	clickhouse)
		sink_pid=$CH_PID
		ch_packets_table packets || die "cannot create the packets table"
		stack="$REPLAY, decode, { plugin: clickhouse, url: \"http://127.0.0.1:$CH_HTTP\", table: packets }" ;;
	esac
	printf 'stacks:\n  b: [%s]\n' "$stack" >"$W/conf.yaml"
	[ -n "$sink_pid" ] && s0=$(proc_cpu "$sink_pid")
	t=$(python3 - "$W/log" taskset -c "$CPU" "$SLUICE" -c "$W/conf.yaml" <<'PY'
import os, subprocess, sys, time
t = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"))
_, status, ru = os.wait4(p.pid, 0)
print(f"{ru.ru_utime + ru.ru_stime:.4f} {time.monotonic() - t:.4f}")
sys.exit(os.waitstatus_to_exitcode(status))
PY
) || { tail -5 "$W/log" >&2; die "$pipe: sluice failed"; }
	sleep 1
	[ -n "$sink_pid" ] && s1=$(proc_cpu "$sink_pid")
	# every record arrived, or the run does not count
	case $pipe in
	file) r=$(wc -l <"$OUT/out.json") ;;
	kafka)
		r=$(counter "$W/log" b.kafka delivered)
		[ "$r" = "$N" ] && r=$(($(topic_end sl 3) - e0)) ;;
	clickhouse) r=$(ch_query "SELECT count() FROM packets") ;;
	esac
	[ "$r" = "$N" ] || { grep counters "$W/log" >&2; die "$pipe: $r of $N records arrived"; }
	printf '%s\t%s\t%s\n' "$pipe" "$t" "$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.3f", b - a }')" |
		tr ' ' '\t' >>"$RESULTS"
	printf '  %-10s sluice cpu/wall %s s, sink cpu %s s\n' "$pipe" "$t" "$(tail -1 "$RESULTS" | cut -f4)" >&2
}

if [ "$LIVE_ONLY" != 1 ]; then
	echo "== replay: $N records, $RUNS runs, sluice on CPU $CPU" >&2
	for ((i = 1; i <= RUNS; i++)); do
		for pipe in file kafka clickhouse; do one_run "$pipe"; done
	done
	# what ClickHouse stores per row: the last run's table
	ch_query "SELECT sum(data_compressed_bytes), sum(data_uncompressed_bytes), sum(rows) FROM system.parts
		WHERE active AND table = 'packets' AND database = currentDatabase()" | tr '\t' ' ' >"$W/parts"
	sinks_stop
fi

# ---- 2. live ----
LIVE_TSV=$W/live.tsv
: >"$LIVE_TSV"
if [ "$LIVE" = 1 ]; then
	echo "== live: bench/run.sh LOGGERS=\"$LIVE_LOGGERS\" RUNS=$LIVE_RUNS" >&2
	BUILD=$BUILD LOGGERS="$LIVE_LOGGERS" RUNS=$LIVE_RUNS DUR=${LIVE_DUR:-1} SIZES=64 SEARCH=0 \
		QUICK=0 NODOC=1 OFFLINE=0 CONNTRACK=0 SINKS=0 SQL=0 OUTPUTS=0 CHARTS=0 "$TOP/bench/run.sh" >&2 ||
		echo "sinks.sh: the live part failed" >&2
	grep -v '^#' /tmp/sluice-bench-results.tsv >"$LIVE_TSV" 2>/dev/null
fi
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 "$TOP/bench/sinks_report.py" "$RESULTS" "$N" "$W/parts" "$LIVE_TSV" | tee "$W/results.md"
if [ "${NODOC:-0}" != 1 ]; then
	DOC=${DOC:-$TOP/docs/BENCHMARKS.md}
	python3 "$TOP/bench/benchdoc.py" "$DOC" sinks-tables --by "bench/sinks.sh -n $N -r $RUNS" \
		--extra "Load average before / after: $LOAD_BEFORE / $LOAD_AFTER. librdkafka $(pkg-config --modversion rdkafka 2>/dev/null || echo ?), clickhouse-server $(dpkg-query -W -f '${Version}' clickhouse-server 2>/dev/null || echo ?)." \
		<"$W/results.md" || die "tables not written into $DOC"
fi
