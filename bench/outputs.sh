#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Records per CPU second of each output (issue 21, "Performance"): one
# capture through replay -> decode -> json|logline -> OUTPUT, the output
# sending to a receiver on loopback.
#
#   bench/outputs.sh [-n RECORDS] [-r RUNS] [-c CPU] [-C RXCPU] [-b BUILDDIR] [-o "NAME ..."] [-k]
#
# sluice is pinned to CPU (default 1), the receiver (and the Kafka mock or
# clickhouse-server, all their threads) to RXCPU (default 0), so the
# receiving half is not charged to sluice.  A gen_nflog capture of RECORDS
# records (default 1,000,000, -m mix) is replayed RUNS times (default 3)
# through each output of the OUTPUTS table below (-o: only those), the
# outputs interleaved within a run so each meets the same load.
# sluice's CPU is user + system of the whole process (rusage: every thread,
# the outputs' and libraries' own); the receiver's the growth of its
# /proc/PID/stat from before the run to when it has counted everything.
# A run counts what arrived: the receiver's count (lines of the file, the
# UDP datagrams or TCP lines sinkcount received, the topic's end offsets,
# count() of the table, the OTLP log records in the requests, the
# JetStream stream's messages, the journal's entries) against what the
# output says it sent (its `out` counter, or the counter the table names);
# a run that lost records is kept, and its row says how many.
#
# Adding an output is one line of OUTPUTS:
#   NAME | RECEIVER | EXPECT | the stack after `replay, decode, `
# RECEIVER is one of the rx_KIND functions below (none: the output writes a
# file under @OUT@; udp, tcp: bench/gen/sinkcount on @PORT@; http:
# bench/httpcount.py on @PORT@, answering 200 and counting requests; otlp:
# the same counting the OTLP log records in the requests' protobuf (or
# OTLP/JSON) bodies; kafka: the librdkafka mock cluster at @BOOTSTRAP@,
# topic sl; clickhouse: a private server at @CH_HTTP@, table packets;
# sqlite: @OUT@/out.db, table packets; nats: a nats-server with JetStream
# on @PORT@ (store in the work dir, started for each run), stream SL on
# subjects fw.>, counted by $JS.API.STREAM.INFO's state.messages
# (tests/e2e/nats_client.py); journal: a private systemd-journald for each
# run in a mount namespace of its own (bench/journal_ns.sh; volatile, no
# rate limit; root only), sluice run inside it, counted by journalctl -t
# sluice);
# EXPECT names the output's counter the receiver's count must equal
# (`out`: one record per message; ipfix: `messages`, one per datagram; an
# HTTP output: its counter of requests, e.g. clickhouse's `inserts`).
# OUTPUTS_EXTRA (lines of the same form) adds rows without editing the
# script, e.g. for an out-of-tree output.
# A new receiver kind is one rx_KIND function (start, count).  The syslog
# rows get `queue_size: 1GiB`: the replay formats faster than the UDP/TCP
# send path takes messages, and the output's own queue (4 MiB by default)
# drops what it cannot hold (counted, not delivered); with room for the
# whole capture the rate is of delivered records.
#
# Results: WORKDIR/outputs.tsv (one line per run: name, run, records
# replayed, EXPECT, records the output took, its EXPECT counter, received,
# sluice CPU s, wall s, receiver CPU s, bytes received or -; lines starting
# with # are notes: #note TEXT, #skipped NAME WHY), a markdown table on
# stdout and in docs/BENCHMARKS.md between <!-- outputs-tables:begin/end -->
# (DOC=path another copy, NODOC=1 none), the TSV copied to CHARTS
# (default docs/charts/outputs.tsv; NODOC=1: /tmp/sluice-bench-charts) and
# the charts redrawn there (bench/charts.sh; CHARTS=0 skips them).  NOTE
# (words, e.g. "smoke run") goes into the block's first line and the
# chart's title.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILDDIR:-${BUILD:-$TOP/build}}
N=1000000 RUNS=3 CPU=1 RXCPU=0 KEEP=0 ONLY=""
while getopts "n:r:c:C:b:o:k" o; do
	case $o in
	n) N=$OPTARG ;;
	r) RUNS=$OPTARG ;;
	c) CPU=$OPTARG ;;
	C) RXCPU=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	o) ONLY=$OPTARG ;;
	k) KEEP=1 ;;
	*) sed -n '8p' "$0" >&2; exit 64 ;;
	esac
done
# Absolute: the journal row runs sluice from inside a mount namespace's script.
BUILD=$(cd "$BUILD" && pwd) || exit 1

# NAME | RECEIVER | EXPECT | stack after `replay, decode, ` (@OUT@ @PORT@ @BOOTSTRAP@ @CH_HTTP@)
OUTPUTS='
file-json    | none       | out      | json, { plugin: file, file: @OUT@/out.json }
file-logline | none       | out      | logline, { plugin: file, file: @OUT@/out.log }
syslog-udp   | udp        | out      | logline, { plugin: syslog, transport: udp, address: "127.0.0.1:@PORT@", queue_size: 1GiB }
syslog-tcp   | tcp        | out      | logline, { plugin: syslog, transport: tcp, framing: lf, address: "127.0.0.1:@PORT@", queue_size: 1GiB }
kafka        | kafka      | out      | json, { plugin: kafka, brokers: [@BOOTSTRAP@], topic: sl }
clickhouse   | clickhouse | out      | { plugin: clickhouse, url: "http://127.0.0.1:@CH_HTTP@", table: packets }
sql-sqlite   | sqlite     | out      | { plugin: sql, driver: sqlite, path: @OUT@/out.db, table: packets }
ipfix        | udp        | messages | { plugin: flow, max_flows: 262144 }, { plugin: ipfix, address: "127.0.0.1:@PORT@" }
otlp         | otlp       | out      | json, { plugin: otlp, url: "http://127.0.0.1:@PORT@/v1/logs" }
nats         | nats       | out      | json, { plugin: nats, servers: ["nats://127.0.0.1:@PORT@"], subject: "fw.{nflog_group}.{ip_proto}" }
journal      | journal    | out      | logline, { plugin: journal }
cef-file     | none       | out      | cef, { plugin: file, file: @OUT@/out.cef }
'

OUTPUTS="$OUTPUTS${OUTPUTS_EXTRA:+$'\n'$OUTPUTS_EXTRA}"

SLUICE=$BUILD/core/sluice
export SLUICE_PLUGIN_PATH=$BUILD/plugins
die() { echo "outputs.sh: $*" >&2; exit 1; }
for c in taskset python3 ${CC:-cc}; do command -v "$c" >/dev/null || die "needs $c"; done
[ -x "$SLUICE" ] || die "no daemon at $SLUICE (build first, or -b BUILDDIR)"
[ -x "$BUILD/bench/sinkcount" ] || die "no $BUILD/bench/sinkcount (build first)"

W=$(mktemp -d /tmp/sluice-bench-outputs.XXXXXX)
OUT=/dev/shm/sluice-bench-outputs.$$
mkdir -p "$OUT"
# shellcheck source=bench/sinks_lib.sh
. "$TOP/bench/sinks_lib.sh"
RX_PID="" JNS_PID=""
cleanup() {
	[ -n "$RX_PID" ] && kill "$RX_PID" 2>/dev/null
	[ -n "$JNS_PID" ] && kill "$JNS_PID" 2>/dev/null
	sinks_stop
	rm -rf "$OUT"
	if [ "$KEEP" = 1 ]; then echo "work dir kept: $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# rx_stop: the receiver started for this run (and the journal's namespace) ended.
rx_stop() {
	local p
	for p in $RX_PID $JNS_PID; do kill -TERM "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	RX_PID="" JNS_PID=""
}

# pin PID: the process and all its threads (later ones inherit it) to RXCPU.
pin() { taskset -a -p -c "$RXCPU" "$1" >/dev/null; }

# Receivers: rx_KIND start|count.  start readies it for one run (and sets
# RX_CPU_PID to the process whose CPU is the receiver's, or "", and may set
# RX_WRAP, a command that execs sluice where the receiver is); count
# waits until everything sent has arrived and sets RX_GOT (records
# received) and RX_BYTES (their bytes, "-" when unknown), and RX_CPU1 when
# it ends the receiver (else the caller reads RX_CPU_PID's CPU after it).
# Servers that cost seconds to start stay up until the end (sinks_stop).
rx_none() {
	RX_CPU_PID=""
	case $1 in
	count)
		local f
		RX_GOT=0 RX_BYTES=-
		for f in "$OUT"/out.*; do
			[ -f "$f" ] && RX_GOT=$(wc -l <"$f") RX_BYTES=$(stat -c %s "$f")
		done ;;
	esac
}
rx_sink() { # rx_sink udp|tcp start|count|stop: bench/gen/sinkcount
	case $2 in
	start)
		PORT=$(free_port)
		taskset -c "$RXCPU" "$BUILD/bench/sinkcount" "$1:$PORT" >"$W/sink.out" 2>&1 &
		RX_PID=$! RX_CPU_PID=$!
		sleep 0.2 ;;
	count)
		# datagrams still in flight when sluice exited: wait until the count
		# no longer grows (sinkcount only prints at the end, so watch its CPU)
		local a b
		b=$(proc_cpu "$RX_PID")
		while :; do sleep 0.3; a=$b b=$(proc_cpu "$RX_PID"); [ "$a" = "$b" ] && break; done
		RX_CPU1=$b
		kill -TERM "$RX_PID"
		wait "$RX_PID" 2>/dev/null
		RX_PID=""
		read -r _ RX_GOT _ RX_BYTES <"$W/sink.out"
		RX_BYTES=${RX_BYTES:--} ;;
	esac
}
rx_udp() { rx_sink udp "$1"; }
rx_tcp() { rx_sink tcp "$1"; }
rx_httpcount() { # rx_httpcount ""|otlp start|count: bench/httpcount.py, answering 200
	case $2 in
	start)
		PORT=$(free_port)
		taskset -c "$RXCPU" python3 "$TOP/bench/httpcount.py" "$PORT" ${1:+"$1"} >"$W/http.out" 2>&1 &
		RX_PID=$! RX_CPU_PID=$!
		for _ in $(seq 100); do grep -qx ready "$W/http.out" && return 0; sleep 0.1; done
		return 1 ;;
	count)
		local a b req bytes recs bad
		b=$(proc_cpu "$RX_PID")
		while :; do sleep 0.3; a=$b b=$(proc_cpu "$RX_PID"); [ "$a" = "$b" ] && break; done
		RX_CPU1=$b
		kill -TERM "$RX_PID"
		wait "$RX_PID" 2>/dev/null
		RX_PID=""
		read -r _ req _ bytes _ recs _ bad < <(grep '^requests ' "$W/http.out")
		RX_BYTES=${bytes:--}
		if [ "$1" = otlp ]; then
			RX_GOT=${recs:-0}
			[ "${bad:-0}" = 0 ] || echo "  httpcount: $bad requests were not OTLP" >&2
		else
			RX_GOT=${req:-0}
		fi ;;
	esac
}
rx_http() { rx_httpcount "" "$1"; }	# RX_GOT: requests
rx_otlp() { rx_httpcount otlp "$1"; }	# RX_GOT: the OTLP log records in the requests
rx_nats() { # a nats-server with JetStream per run, its store in $W; RX_GOT: the stream's messages
	local d=$W/nats
	case $1 in
	start)
		command -v nats-server >/dev/null || { echo "no nats-server"; return 1; }
		PORT=$(free_port)
		rm -rf "$d" && mkdir -p "$d/store" || return 1
		printf 'listen: 127.0.0.1:%s\njetstream { store_dir: "%s" }\n' "$PORT" "$d/store" >"$d/conf"
		taskset -c "$RXCPU" nats-server -c "$d/conf" >"$d/log" 2>&1 &
		RX_PID=$! RX_CPU_PID=$!
		for _ in $(seq 100); do nats_cli ready 2>/dev/null && break; sleep 0.1; done
		nats_cli create SL "fw.>" 1 120 >/dev/null && return 0
		cat "$d/log"
		rx_stop
		return 1 ;;
	count)
		# "published" counts acknowledged messages: all are stored when sluice ends
		RX_GOT=$(nats_cli count SL) RX_BYTES=-
		RX_GOT=${RX_GOT:-0}
		RX_CPU1=$(proc_cpu "$RX_PID")
		rx_stop
		rm -rf "$d" ;;
	esac
}
nats_cli() { python3 "$TOP/tests/e2e/nats_client.py" "127.0.0.1:$PORT" "$@"; }
# journal: a systemd-journald of its own per run, in a private mount
# namespace (bench/journal_ns.sh: volatile storage, no rate limit), sluice
# run in that namespace (RX_WRAP); RX_GOT: journalctl's entries of sluice.
JOURNALD=/lib/systemd/systemd-journald
rx_journal() {
	local d=$W/journal a b
	case $1 in
	start)
		[ "$(id -u)" = 0 ] || { echo "needs root (a mount namespace)"; return 1; }
		[ -x "$JOURNALD" ] || { echo "no $JOURNALD"; return 1; }
		for a in journalctl unshare nsenter; do command -v $a >/dev/null || { echo "no $a"; return 1; }; done
		rm -rf "$d" && mkdir -p "$d" || return 1
		printf '%s\n' "[Journal]" Storage=volatile RateLimitIntervalSec=0 RateLimitBurst=0 \
			RuntimeMaxUse=16G RuntimeKeepFree=0 ReadKMsg=no Audit=no ForwardToSyslog=no \
			ForwardToKMsg=no ForwardToConsole=no ForwardToWall=no >"$d/journald.conf"
		# its own network namespace too, with the datagram queue systemd gives a host (journal_ns.sh)
		JNS_DGRAM_QLEN=512 unshare --mount --net --propagation private -- "$TOP/bench/journal_ns.sh" "$d/ready" "$d/journald.conf" \
			>"$d/ns.log" 2>&1 &
		JNS_PID=$!
		for _ in $(seq 100); do [ -s "$d/ready" ] && break; sleep 0.1; done
		[ -s "$d/ready" ] || { cat "$d/ns.log"; return 1; }
		RX_WRAP=(nsenter -t "$JNS_PID" -m -n --)	# execs: $! below is journald's
		"${RX_WRAP[@]}" taskset -c "$RXCPU" "$JOURNALD" >"$d/journald.log" 2>&1 &
		RX_PID=$! RX_CPU_PID=$!
		for _ in $(seq 100); do
			"${RX_WRAP[@]}" test -S /run/systemd/journal/socket -a -d /run/log/journal && return 0
			sleep 0.1
		done
		cat "$d/journald.log"
		rx_stop
		return 1 ;;
	count)
		# datagrams journald has yet to read: wait until it stops working
		b=$(proc_cpu "$RX_PID")
		while :; do sleep 0.3; a=$b b=$(proc_cpu "$RX_PID"); [ "$a" = "$b" ] && break; done
		RX_CPU1=$b
		RX_GOT=$("${RX_WRAP[@]}" journalctl -D /run/log/journal -t sluice -o cat | wc -l) RX_BYTES=-
		rx_stop
		rm -rf "$d" ;;
	esac
}
rx_kafka() {
	case $1 in
	start)
		if [ -z "$MOCK_PID" ]; then
			[ -x "$BUILD/tests/kafka_mock" ] || return 1
			mock_start -p 3 sl || return 1
			pin "$MOCK_PID"
		fi
		RX_CPU_PID=$MOCK_PID KAFKA_E0=$(topic_end sl 3) ;;
	count)
		sleep 0.5
		RX_GOT=$(($(topic_end sl 3) - KAFKA_E0)) RX_BYTES=- ;;
	esac
}
rx_clickhouse() {
	case $1 in
	start)
		if [ -z "$CH_PID" ]; then
			command -v clickhouse-server >/dev/null || return 1
			ch_start || return 1
			pin "$CH_PID"
		fi
		RX_CPU_PID=$CH_PID
		ch_packets_table packets ;;
	count)
		sleep 1 # the server's background work on the insert, as sinks.sh counts it
		RX_GOT=$(ch_query "SELECT count() FROM packets") RX_BYTES=- ;;
	esac
}
rx_sqlite() { # in sluice's own process: no receiver CPU
	RX_CPU_PID=""
	case $1 in
	start)
		command -v sqlite3 >/dev/null || return 1
		rm -f "$OUT/out.db"*
		sqlite3 "$OUT/out.db" <"$TOP/conf/sql/packets-sqlite.sql" ;;
	count) RX_GOT=$(sqlite3 "$OUT/out.db" "SELECT count(*) FROM packets") RX_BYTES=- ;;
	esac
}

# counter LOG INSTANCE NAME is sinks_lib.sh's; the output is the stack's last instance.
last_plugin() { sed 's/.*plugin: *\([a-z_0-9]*\).*/\1/' <<<"$1"; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
${CC:-cc} -O2 -Wall -Wextra -o "$W/gen_nflog" "$TOP/bench/gen_nflog.c" || die "cannot build gen_nflog"
"$W/gen_nflog" -o "$W/in.pcap" -n "$N" -m mix 2>/dev/null || die "gen_nflog failed"
cat "$W/in.pcap" >/dev/null # in the page cache before the first run

RESULTS=$W/outputs.tsv
printf '#note\t%s\n' "bench/outputs.sh -n $N -r $RUNS, $(date -u '+%Y-%m-%d %H:%M UTC'), sluice at $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo ?)${NOTE:+, $NOTE}" >"$RESULTS"
REPLAY="{ plugin: replay, file: $W/in.pcap }"
declare -A SKIPPED=()

# one_run NAME RX EXPECT STACK RUN: one timed run, a line of RESULTS.
one_run() {
	local name=$1 rx=$2 expect=$3 stack=$4 run=$5 inst t r0=0 r1=0 took sent
	rm -f "$OUT"/out.*
	RX_WRAP=()
	if ! "rx_$rx" start >"$W/rx.err" 2>&1; then
		SKIPPED[$name]="receiver $rx did not start: $(head -c 200 "$W/rx.err" | tr '\n' ' ')"
		echo "  $name: skipped (${SKIPPED[$name]})" >&2
		return 0
	fi
	stack=${stack//@OUT@/$OUT}
	stack=${stack//@PORT@/${PORT:-0}}
	stack=${stack//@BOOTSTRAP@/${BOOTSTRAP:-}}
	stack=${stack//@CH_HTTP@/${CH_HTTP:-0}}
	inst=b.$(last_plugin "$stack")
	printf 'stacks:\n  b: [%s, { plugin: decode, ifnames: false }, %s]\n' "$REPLAY" "$stack" >"$W/conf.yaml"
	[ -n "$RX_CPU_PID" ] && r0=$(proc_cpu "$RX_CPU_PID")
	t=$(python3 - "$W/log" "${RX_WRAP[@]}" taskset -c "$CPU" "$SLUICE" -c "$W/conf.yaml" <<'PY'
import os, subprocess, sys, time
t = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=open(sys.argv[1], "w"))
_, status, ru = os.wait4(p.pid, 0)
print(f"{ru.ru_utime + ru.ru_stime:.4f}\t{time.monotonic() - t:.4f}")
sys.exit(os.waitstatus_to_exitcode(status))
PY
) || { tail -5 "$W/log" >&2; die "$name: sluice failed"; }
	RX_GOT=0 RX_BYTES=- RX_CPU1=""
	"rx_$rx" count
	[ -n "$RX_CPU_PID" ] && r1=${RX_CPU1:-$(proc_cpu "$RX_CPU_PID")}
	took=$(counter "$W/log" "$inst" in) sent=$(counter "$W/log" "$inst" "$expect")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$run" "$N" "$expect" "${took:-0}" "${sent:-0}" "$RX_GOT" \
		"$t" "$(awk -v a="$r0" -v b="$r1" 'BEGIN { printf "%.3f", b - a }')" "$RX_BYTES" >>"$RESULTS"
	printf '  %-13s took %s, %s=%s, received %s; sluice cpu/wall %s s\n' "$name" "${took:-?}" "$expect" \
		"${sent:-?}" "$RX_GOT" "$(tail -1 "$RESULTS" | cut -f8,9 | tr '\t' /)" >&2
}

echo "== outputs: $N records, $RUNS runs, sluice on CPU $CPU, receivers on CPU $RXCPU" >&2
for ((i = 1; i <= RUNS; i++)); do
	while IFS='|' read -r name rx expect stack; do
		read -r name <<<"$name"; read -r rx <<<"$rx"; read -r expect <<<"$expect" # trimmed
		[ -n "$name" ] || continue
		[ -z "$ONLY" ] || [[ " $ONLY " == *" $name "* ]] || continue
		[ -n "${SKIPPED[$name]:-}" ] && continue
		one_run "$name" "$rx" "$expect" "${stack# }" "$i"
	done <<<"$OUTPUTS"
done
for name in "${!SKIPPED[@]}"; do printf '#skipped\t%s\t%s\n' "$name" "${SKIPPED[$name]}" >>"$RESULTS"; done
sinks_stop
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

python3 "$TOP/bench/outputs_report.py" "$RESULTS" | tee "$W/results.md"
if [ "${NODOC:-0}" != 1 ]; then
	DOC=${DOC:-$TOP/docs/BENCHMARKS.md}
	python3 "$TOP/bench/benchdoc.py" "$DOC" outputs-tables --by "bench/outputs.sh -n $N -r $RUNS" \
		--extra "${NOTE:+$NOTE. }Load average before / after: $LOAD_BEFORE / $LOAD_AFTER." \
		<"$W/results.md" || die "tables not written into $DOC"
	CHARTS_DIR=${CHARTS_DIR:-$TOP/docs/charts}
else
	CHARTS_DIR=${CHARTS_DIR:-/tmp/sluice-bench-charts}
fi
mkdir -p "$CHARTS_DIR"
cp "$RESULTS" "$CHARTS_DIR/outputs.tsv"
if [ "${CHARTS:-1}" = 1 ]; then
	"$TOP/bench/charts.sh" "$CHARTS_DIR" || echo "outputs.sh: charts not drawn" >&2
fi
