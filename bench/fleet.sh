#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A fleet on one box (issue 11 §6): N sluice processes into one ClickHouse
# server and one mock Kafka cluster on loopback.
#
#   bench/fleet.sh [-N "1 2 4 8"] [-R "TOTAL RATES"] [-t SECONDS] [-p PARTITIONS] [-b BUILDDIR] [-k]
#
# For each N and each total rate (records/s of the whole fleet, default
# "5000 20000 50000 100000 200000 400000 800000"; each process gets TOTAL / N), every
# process replays a gen_nflog capture of SECONDS (default 8) records
# spaced exactly 1/(TOTAL/N) apart (`pace: original`) through two stacks:
#   replay -> decode -> json (host: hI) -> kafka (one topic, PARTITIONS, default 8)
#   replay -> decode -> clickhouse (table packets_hI, conf/clickhouse/packets.sql)
# The host tag: json's `host` option in Kafka; the clickhouse output has no
# constant column, so each process inserts into its own table and
# `packets_all` (ENGINE Merge) reads them all, its `_table` naming the host.
# bench/fleet_lag.py polls both sinks every 0.5 s and derives the ingest lag
# (seconds from a record's scheduled time to visible: records are evenly
# spaced, so a count is a time).  Measured per run: end-to-end records/s per
# sink, CPU per record of sluice (all N processes, rusage), clickhouse-server
# and the mock cluster (/proc/PID/stat from start to all visible), lag.
# For each N the rate is raised until a sink saturates (not every record
# visible within 3 s of the last one's time, or the lag grows by over 1 s
# in the run's second half; measured twice, both must say so); higher
# rates for that N are skipped.  A replay input waits while an output's
# queue is full, so a slow ClickHouse holds back the Kafka stack of the
# same process too; the highest queue depth of each output (of 64
# batches, from the exit counters) is reported (the clickhouse output's
# fills up to it while a POST is in flight even at low rates: a full
# queue alone is not saturation).
# Every run's records are checked at the end: each table has its process's
# records, the topic's end offsets grew by N * records.
#
# Results: a markdown table on stdout and in docs/BENCHMARKS.md between
# <!-- fleet-tables:begin/end --> (DOC=path another copy, NODOC=1 none).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILDDIR:-${BUILD:-$TOP/build}}
NS="1 2 4 8" TOTALS="5000 20000 50000 100000 200000 400000 800000" SECS=8 PARTS=8 KEEP=0
while getopts "N:R:t:p:b:k" o; do
	case $o in
	N) NS=$OPTARG ;;
	R) TOTALS=$OPTARG ;;
	t) SECS=$OPTARG ;;
	p) PARTS=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	k) KEEP=1 ;;
	*) sed -n '7p' "$0" >&2; exit 64 ;;
	esac
done
SLUICE=$BUILD/core/sluice
export SLUICE_PLUGIN_PATH=$BUILD/plugins
DRAIN=10

die() { echo "fleet.sh: $*" >&2; exit 1; }
for c in python3 kcat clickhouse-server clickhouse-client curl ${CC:-cc}; do
	command -v "$c" >/dev/null || die "needs $c"
done
[ -x "$SLUICE" ] || die "no daemon at $SLUICE (build first, or -b BUILDDIR)"
[ -x "$BUILD/tests/kafka_mock" ] || die "no $BUILD/tests/kafka_mock (SLUICE_WITH_KAFKA=OFF?)"
for p in kafka clickhouse; do [ -e "$SLUICE_PLUGIN_PATH/$p.so" ] || die "$p.so not built"; done

W=$(mktemp -d /tmp/sluice-bench-fleet.XXXXXX)
# shellcheck source=bench/sinks_lib.sh
. "$TOP/bench/sinks_lib.sh"
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
	sinks_stop
	if [ "$KEEP" = 1 ]; then echo "work dir kept: $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
${CC:-cc} -O2 -Wall -Wextra -o "$W/gen_nflog" "$TOP/bench/gen_nflog.c" || die "cannot build gen_nflog"
# rusage.py OUT CMD...: runs CMD, writes its user and system CPU seconds
# (rusage: every thread) to OUT; SIGTERM is passed on to CMD.
cat >"$W/rusage.py" <<'PY'
import os, signal, subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)
signal.signal(signal.SIGTERM, lambda *_: p.terminate())
_, status, ru = os.wait4(p.pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(f"{ru.ru_utime:.3f} {ru.ru_stime:.3f}\n")
sys.exit(os.waitstatus_to_exitcode(status))
PY
mock_start -p "$PARTS" fleet || die "kafka_mock did not start"
ch_start || die "clickhouse-server did not start"
CH_URL=http://127.0.0.1:$CH_HTTP
MAXN=0
for n in $NS; do [ "$n" -gt "$MAXN" ] && MAXN=$n; done
for ((i = 1; i <= MAXN; i++)); do ch_packets_table "packets_h$i" || die "cannot create packets_h$i"; done
ch_query "CREATE TABLE packets_all AS packets_h1 ENGINE = Merge(currentDatabase(), '^packets_h')" ||
	die "cannot create packets_all"

RESULTS=$W/results.tsv
: >"$RESULTS"
# run N TOTAL: one measurement; appends a row to RESULTS, exit 1 when saturated.
run() {
	local n=$1 total=$2 rate per cap i t0 k0 c0 m0 c1 m1 cpu=0 got want bad=0 lagout qc=0 qk=0 q
	rate=$((total / n))
	per=$((rate * SECS))
	cap=$W/cap-$rate.pcap
	"$W/gen_nflog" -o "$cap" -n "$per" -m mix -r "$rate" 2>/dev/null || die "gen_nflog failed"
	for ((i = 1; i <= n; i++)); do
		ch_query "TRUNCATE TABLE packets_h$i" || die "cannot truncate packets_h$i"
		cat >"$W/h$i.yaml" <<EOF
instances:
  in: { plugin: replay, file: $cap, pace: original }
stacks:
  k: [in, decode, { plugin: json, host: h$i }, { plugin: kafka, brokers: [$BOOTSTRAP], topic: fleet }]
  c: [in, decode, { plugin: clickhouse, url: "$CH_URL", table: packets_h$i }]
EOF
	done
	k0=$(topic_end fleet "$PARTS")
	c0=$(proc_cpu "$CH_PID") m0=$(proc_cpu "$MOCK_PID")
	PIDS=()
	t0=$(python3 -c 'import time; print(f"{time.time():.6f}")')
	for ((i = 1; i <= n; i++)); do
		python3 "$W/rusage.py" "$W/cpu.$i" "$SLUICE" -c "$W/h$i.yaml" 2>"$W/log.$i" &
		PIDS+=($!)
	done
	# the Kafka count is relative to k0: the sampler sees the topic's growth
	lagout=$(python3 "$TOP/bench/fleet_lag.py" --t0 "$t0" --secs "$SECS" --rate "$total" \
		--expect $((per * n)) --drain $DRAIN --ch-url "$CH_URL" --ch-table packets_all \
		--bootstrap "$BOOTSTRAP" --topic fleet --parts "$PARTS" --kafka-base "$k0" \
		--trace "$W/trace-$n-$total.tsv")
	c1=$(proc_cpu "$CH_PID") m1=$(proc_cpu "$MOCK_PID")
	for p in "${PIDS[@]}"; do wait "$p" || bad=1; done
	PIDS=()
	for ((i = 1; i <= n; i++)); do
		cpu=$(awk -v s="$cpu" '{ printf "%.3f", s + $1 + $2 }' "$W/cpu.$i")
		got=$(ch_query "SELECT count() FROM packets_h$i")
		[ "$got" = "$per" ] || { echo "  h$i: $got of $per rows in ClickHouse" >&2; bad=1; }
		got=$(counter "$W/log.$i" k.kafka delivered)
		[ "$got" = "$per" ] || { echo "  h$i: kafka delivered $got of $per" >&2; bad=1; }
		# the fullest each output's queue got (64 batches: full, the replay waited for it)
		q=$(counter "$W/log.$i" c.clickhouse queue_high); [ "${q:-0}" -gt "$qc" ] && qc=$q
		q=$(counter "$W/log.$i" k.kafka queue_high); [ "${q:-0}" -gt "$qk" ] && qk=$q
	done
	want=$((k0 + per * n))
	got=$(topic_end fleet "$PARTS")
	[ "$got" = "$want" ] || { echo "  topic end $got, expected $want" >&2; bad=1; }
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$total" "$per" "$cpu" \
		"$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.3f", b - a }')" \
		"$(awk -v a="$m0" -v b="$m1" 'BEGIN { printf "%.3f", b - a }')" "$bad" \
		"$(echo "$lagout" | sed -n 1p)" "$(echo "$lagout" | sed -n 2p)" >>"$RESULTS"
	sed -i "\$ s/\$/\t$qc\t$qk/" "$RESULTS"
	python3 - "$RESULTS" <<'PY' >&2
import json, sys
r = open(sys.argv[1]).read().splitlines()[-1].split("\t")
n, tot, per, cpu, chc, mk, bad = r[:7]
ch, kf = json.loads(r[7]), json.loads(r[8])
f = lambda x: "-" if x is None else f"{x:.2f}"
print(f"  N={n} total {int(tot):>7}/s: sluice {float(cpu) / (int(per) * int(n)) * 1e6:.2f} us/rec, "
      f"clickhouse {f(ch['lag_mid'])}/{f(ch['lag_end'])} s lag, drain {f(ch['drain'])}{' SAT' if ch['saturated'] else ''}, "
      f"kafka {f(kf['lag_mid'])}/{f(kf['lag_end'])} s, drain {f(kf['drain'])}{' SAT' if kf['saturated'] else ''}"
      f", queue high ch {r[9]} kafka {r[10]}{' CHECK FAILED' if bad != '0' else ''}")
sys.exit(1 if ch["saturated"] or kf["saturated"] else 0)
PY
}

START=$SECONDS
for n in $NS; do
	echo "== N=$n" >&2
	for total in $TOTALS; do
		# a saturated run is measured again (the machine is shared): the
		# rate counts as saturating only when both runs say so
		run "$n" "$total" || run "$n" "$total" || break
	done
	rm -f "$W"/cap-*.pcap
done
ELAPSED=$((SECONDS - START))
# compression of what ClickHouse stored (every table of the last runs)
ch_query "OPTIMIZE TABLE packets_h1 FINAL" >/dev/null 2>&1
ch_query "SELECT sum(data_compressed_bytes), sum(data_uncompressed_bytes), sum(rows) FROM system.parts
	WHERE active AND database = currentDatabase() AND table LIKE 'packets_h%'" | tr '\t' ' ' >"$W/parts"
ch_query "SELECT name, sum(data_compressed_bytes), sum(data_uncompressed_bytes) FROM system.columns
	WHERE database = currentDatabase() AND table LIKE 'packets_h%' GROUP BY name
	ORDER BY sum(data_compressed_bytes) DESC" >"$W/columns"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$RESULTS" "$W/parts" "$W/columns" "$SECS" <<'PY' | tee "$W/results.md"
import json, sys
f = lambda x, d=2: "–" if x is None else f"{x:.{d}f}"
print("| N | total rate offered /s | per process /s | sluice CPU µs/record (cores, all N) | clickhouse-server µs/row (cores) | "
      "mock Kafka µs/record | ClickHouse: end-to-end rows/s, lag median / end / drain s | "
      "Kafka: end-to-end records/s, lag median / end / drain s | saturated (highest queue depth: clickhouse/kafka output, of 64) | checked |")
print("|---:|---:|---:|---:|---:|---:|---|---|---|---|")
secs = float(sys.argv[4])
for line in open(sys.argv[1]):
    r = line.rstrip("\n").split("\t")
    n, tot, per, cpu, chc, mk, bad = int(r[0]), int(r[1]), int(r[2]), float(r[3]), float(r[4]), float(r[5]), r[6]
    ch, kf = json.loads(r[7]), json.loads(r[8])
    recs = per * n
    sat = {(True, True): "both", (True, False): "ClickHouse",
           (False, True): "Kafka", (False, False): "no"}[(ch["saturated"], kf["saturated"])]
    sat += f" (queues {r[9]}/{r[10]})"
    print(f"| {n} | {tot:,} | {tot // n:,} | {cpu / recs * 1e6:.2f} ({cpu / secs:.2f}) | "
          f"{chc / recs * 1e6:.2f} ({chc / secs:.2f}) | {mk / recs * 1e6:.2f} | "
          f"{ch['rate']:,.0f}; {f(ch['lag_mid'])} / {f(ch['lag_end'])} / {f(ch['drain'])} | "
          f"{kf['rate']:,.0f}; {f(kf['lag_mid'])} / {f(kf['lag_end'])} / {f(kf['drain'])} | {sat} | "
          f"{'all records' if bad == '0' else '**records missing**'} |")
try:
    comp, unc, rows = (int(x) for x in open(sys.argv[2]).read().split())
    print()
    print(f"ClickHouse's storage of the last runs' {rows:,} rows (`system.parts`, active parts, "
          f"packets_h1 merged with OPTIMIZE FINAL): {comp / rows:.1f} bytes/row compressed (LZ4, the "
          f"server's default), {unc / rows:.1f} uncompressed, {unc / comp:.1f}×. Largest columns "
          f"(`system.columns`, compressed / uncompressed bytes per row):", end=" ")
    cols = [l.split("\t") for l in open(sys.argv[3]) if l.strip()]
    print(", ".join(f"`{c}` {int(a) / rows:.1f} / {int(b) / rows:.1f}" for c, a, b in cols[:6]) + ".")
except (OSError, ValueError, ZeroDivisionError):
    pass
PY
if [ "${NODOC:-0}" != 1 ]; then
	DOC=${DOC:-$TOP/docs/BENCHMARKS.md}
	python3 "$TOP/bench/benchdoc.py" "$DOC" fleet-tables \
		--by "bench/fleet.sh -N \"$NS\" -R \"$TOTALS\" -t $SECS -p $PARTS" \
		--extra "Load average before / after: $LOAD_BEFORE / $LOAD_AFTER; measured in ${ELAPSED}s." \
		<"$W/results.md" || die "tables not written into $DOC"
fi
