#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Live packet benchmark (issue 5): NFLOG loggers on the same UDP traffic,
# inside two network namespaces this script creates and deletes.
#
#   sudo bench/run.sh            full run (3 rounds, both payload sizes, rate search)
#   sudo QUICK=1 bench/run.sh    one round, 1 s of traffic, no rate search
#
# Namespace A sends UDP with bench/gen/udpgen (sendmmsg, pinned to CPU 0) over
# a veth pair to namespace B, where `udp dport 9999 counter log group 42 drop`
# counts what the kernel logged and hands it to the logger under test (pinned
# to CPU 1).  Each logger runs alone on the same traffic, one after the other,
# in every round; a round is one comparison.  Results go into the live section
# of docs/BENCHMARKS.md (between <!-- live:begin --> and <!-- live:end -->);
# then bench/offline.sh and bench/conntrack.sh rewrite their own tables there
# (their offline-tables, offline-csum-tables and conntrack-tables blocks), so
# this one command regenerates every table of the document.
#
# Issue 9 (threads): sluice-fan4 / -fan4tcp have syslog on its own thread
# (the default), sluice-fan4nt is the same fan-out with `thread: false` on
# syslog (the old single-thread behaviour); both send UDP syslog across a
# second veth pair to namespace C (issue 20, see NC below), sluice-fan4lo
# the same as fan4 to a receiver on loopback; every sluice row also records
# each thread's CPU (/proc/PID/task/TID/schedstat; the core names a worker
# thread "sl:INSTANCE", the main thread is TID == PID), so the report has
# the input thread's CPU per packet.  sluice-stall: pcap + JSON + syslog/TCP
# on one input at full rate for STALL_SECS, the syslog receiver stopped
# (SIGSTOP) for 2 s of it; the row's output is the smaller of pcap and
# JSON, the detail has syslog's delivered and counted-dropped records.
# sluice-grp1 / -grp2: one NFLOG group on one input thread against the same
# traffic split over two groups (`numgen inc mod 2`) on two input threads,
# each nflog -> decode -> json -> file.
# sluice-json-rules (issue 22): sluice-json with `rules: true` on nflog,
# every record attributed to the bench's log rule (the detail counts the
# records naming it); the report compares its CPU per packet with
# sluice-json's (limit 1.05x).
# sluice-kafka (by name only, not in the default LOGGERS; bench/sinks.sh
# runs it): nflog -> decode -> json -> kafka into tests/kafka_mock (a
# librdkafka mock cluster in namespace B, on the generator's CPU); its
# output is the topic read back with kcat and counted, the detail has the
# kafka output's delivered counter, the topic's end offset and the mock's
# CPU seconds.
# sluice-otlp, sluice-nats, sluice-journal, sluice-cef (issue 21; by name
# only, bench/sinks.sh runs them): nflog -> decode -> json -> otlp (to
# bench/httpcount.py, which counts the log records in the requests),
# json -> nats (jetstream: true, to a nats-server with JetStream whose
# stream SL's state.messages is the count), logline -> journal (into a
# private systemd-journald in a mount namespace of its own, bench/
# journal_ns.sh, counted with journalctl -t sluice) and cef -> file
# (`thread: true`: the file output's default is no thread of its own;
# its lines counted).  Each output runs on its own thread (the network
# outputs' default), each receiver in namespace B on loopback, pinned to
# the generator's CPU (not real-time, like the kafka mock); the row's
# output is what the receiver holds after sluice stopped, the detail has
# the output's own counters (out, dropped, queue_dropped), the nflog
# input's lost and the receiver's CPU seconds (rx_cpu).  OUTPUT_OPTS adds
# options to their output (below).
#
# Environment: QUICK=1; RUNS, DUR (seconds of traffic at full rate), SEARCH
# (0/1), SIZES ("64 512"), LOGGERS (names, default all), BUILD (build dir),
# KEEP=1 (keep the work dir), NODOC=1 (do not touch docs/BENCHMARKS.md),
# PERF="sluice-fan4 ..." (perf record those loggers; with KEEP=1),
# OFFLINE=0 / CONNTRACK=0 / SINKS=0 / SQL=0 / OUTPUTS=0 / RULES=0 (skip
# bench/offline.sh / bench/conntrack.sh / bench/sinks.sh / bench/sql.sh /
# bench/outputs.sh / bench/rules.sh, which run after the live part and write their own
# tables; see bench/README.md), NOTE (words for the charts' titles),
# NOBUILD=1 (BUILD is built: no cmake), SAVE (where the copies of the
# results, the loggers' logs and the NODOC=1 charts go, default /tmp:
# SAVE/sluice-bench-results.tsv, SAVE/sluice-bench-logs/).
#
# Charts (issue 21): the results go to docs/charts/live.tsv (NODOC=1:
# /tmp/sluice-bench-charts/live.tsv) and bench/charts.sh draws the SVGs
# there from it and outputs.sh's outputs.tsv (CHARTS=0: not drawn).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build-bench}
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	RUNS=${RUNS:-1} DUR=${DUR:-1} SEARCH=${SEARCH:-0}
else
	RUNS=${RUNS:-3} DUR=${DUR:-2} SEARCH=${SEARCH:-1}
fi
SIZES=${SIZES:-"64 512"}
SEARCH_DUR=${SEARCH_DUR:-1}
SEARCH_STEPS=${SEARCH_STEPS:-4}
ALL_LOGGERS="drain sluice-pcap sluice-text sluice-json sluice-json-rules sluice-fan3 sluice-fan4 sluice-fan4lo sluice-fan4nt sluice-fan4tcp sluice-stall sluice-grp1 sluice-grp2 ulogd-pcap ulogd-text ulogd-json ulogd-fan4 tcpdump printk"
LOGGERS=${LOGGERS:-$ALL_LOGGERS}
GROUP=42 GROUP2=43 PORT=9999 SYSPORT=5514
STALL_SECS=${STALL_SECS:-4} # traffic of the stall scenario: the sink stops 0.5 s in, for 2 s
GEN_CPU=0 LOG_CPU=1
# The mock cluster keeps only the last ~5 MB of each partition (librdkafka's
# rdkafka_mock.c, not configurable): enough partitions that a full-rate run
# stays within what it keeps, so the topic can be read back whole.  A
# record without key goes to one partition for 10 ms (librdkafka's sticky
# partitioner), so batches stay as large as with one partition.  (The mock
# takes ~0.15 s per partition to start.)
KAFKA_PARTS=${KAFKA_PARTS:-48}
# The receivers of sluice-otlp and sluice-nats listen on namespace B's
# loopback (a namespace of the script's own: the ports are free).
OTLP_PORT=4318 NATS_PORT=4222
JOURNALD=/lib/systemd/systemd-journald
# OUTPUT_OPTS="queue: 1024, batch_size: 5000": more options of the output of
# those four rows, to try what a lossy row's output needs.
OUTPUT_OPTS=${OUTPUT_OPTS:+, $OUTPUT_OPTS}
# Every logger runs as ulogd2 2.0.8 runs itself: SCHED_RR priority 99.  On a
# shared machine that keeps other work off the logger's CPU for all of them
# alike (RT=" " to run them at normal priority).
RT=${RT:-chrt -r 99}
SETTLE=1.3 # the kernel sends a partly filled batch after 1 s (its default qtimeout)

die() { echo "run.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (network namespaces, nftables)"
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs (generator and logger pinned apart)"
for c in ip nft taskset python3 cmake; do command -v $c >/dev/null || die "needs $c"; done
HAVE_ULOGD=1 HAVE_TCPDUMP=1
command -v ulogd >/dev/null || HAVE_ULOGD=0
command -v tcpdump >/dev/null || HAVE_TCPDUMP=0
ULOGD_LIB=$(dirname "$(ls /usr/lib/*/ulogd/ulogd_inppkt_NFLOG.so 2>/dev/null | head -1)" 2>/dev/null)
[ -n "$ULOGD_LIB" ] || HAVE_ULOGD=0

if [ "${NOBUILD:-0}" = 1 ]; then # a test's: the build is done, and not this script's to touch
	[ -x "$BUILD/core/sluice" ] || die "NOBUILD=1 and no $BUILD/core/sluice"
else
	echo "== build ($BUILD)"
	{ cmake -S "$TOP" -B "$BUILD" >/dev/null && cmake --build "$BUILD" -j2 >/dev/null; } || die "build failed"
fi
SAVE=${SAVE:-/tmp}
SLUICE=$BUILD/core/sluice
export SLUICE_PLUGIN_PATH=$BUILD/plugins
G=$BUILD/bench

T=$(mktemp -d /tmp/sluice-bench.XXXXXX)
NA=slbA$$ NB=slbB$$ NC=slbC$$
PRINTK_OLD= # nf_log_all_netns before the printk measurement set it
LOGGER_PID=
cleanup() {
	[ -n "$LOGGER_PID" ] && kill -KILL "$LOGGER_PID" 2>/dev/null
	[ -n "${SINK_PID:-}" ] && kill -KILL "$SINK_PID" 2>/dev/null
	[ -n "${JNS_PID:-}" ] && kill -KILL "$JNS_PID" 2>/dev/null
	ip netns del $NA 2>/dev/null
	ip netns del $NB 2>/dev/null
	ip netns del $NC 2>/dev/null
	[ -n "$PRINTK_OLD" ] && sysctl -qw net.netfilter.nf_log_all_netns="$PRINTK_OLD" 2>/dev/null
	[ "${KEEP:-0}" = 1 ] && echo "work dir kept: $T" || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ip netns add $NA && ip netns add $NB || die "cannot create namespaces"
ip link add va netns $NA type veth peer name vb netns $NB || die "cannot create veth"
ip -n $NA addr add 10.198.0.1/24 dev va
ip -n $NB addr add 10.198.0.2/24 dev vb
for n in $NA $NB; do ip -n $n link set lo up; done
ip -n $NA link set va up
ip -n $NB link set vb up
ip netns exec $NB nft add table inet slbench
ip netns exec $NB nft add chain inet slbench input '{ type filter hook input priority 0; policy accept; }'
ip netns exec $NA ping -c 1 -W 2 10.198.0.2 >/dev/null || die "veth pair does not pass traffic"
# Namespace C holds the UDP syslog receiver of sluice-fan4 / -fan4nt: across
# a second veth pair (vs in B, vr in C), like a syslog server on another
# host, so sluice's CPU is what a deployment pays for a datagram: the UDP/IP
# send path and the device's transmit.  veth hands each packet to its peer
# with netif_rx(), and RPS (Documentation/networking/scaling.rst) on vr's
# receive queue queues it to the backlog of GEN_CPU, so the receiver's half
# (IP/UDP receive, the socket's wake-up) runs there, where the receiver is
# pinned, and not in a softirq on sluice's CPU.  On 127.0.0.1 (sluice-fan4lo,
# the figure before issue 20) loopback runs the receiver's half on the
# sender's CPU in the same call: that row is kept to compare.
ip netns add $NC || die "cannot create namespace C"
ip link add vs netns $NB type veth peer name vr netns $NC || die "cannot create veth vs/vr"
ip -n $NB addr add 10.197.0.1/24 dev vs
ip -n $NC addr add 10.197.0.2/24 dev vr
ip -n $NC link set lo up
ip -n $NB link set vs up
ip -n $NC link set vr up
ip netns exec $NC sh -c "printf '%x' $((1 << GEN_CPU)) >/sys/class/net/vr/queues/rx-0/rps_cpus" ||
	die "cannot steer vr's receive processing to CPU $GEN_CPU (RPS)"
ip netns exec $NB ping -c 1 -W 2 10.197.0.2 >/dev/null || die "veth pair vs/vr does not pass traffic"

# rule nflog|printk: what the kernel does with the benchmark's packets.
rule() {
	ip netns exec $NB nft flush chain inet slbench input
	if [ "$1" = printk ]; then
		ip netns exec $NB nft add rule inet slbench input udp dport $PORT counter log prefix '"slbench: "' drop
	elif [ "$1" = split ]; then # every other packet to the second group
		ip netns exec $NB nft add rule inet slbench input udp dport $PORT numgen inc mod 2 0 counter log group $GROUP drop
		ip netns exec $NB nft add rule inet slbench input udp dport $PORT counter log group $GROUP2 drop
	else
		ip netns exec $NB nft add rule inet slbench input udp dport $PORT counter log group $GROUP drop
	fi
}
nft_count() {
	ip netns exec $NB nft list chain inet slbench input |
		awk '{ for (i = 1; i < NF; i++) if ($i == "packets") n += $(i + 1) } END { print n + 0 }'
}
# CPU time of a process (its main thread: see thread_ns for the others) in
# ns: schedstat's run time (ns resolution), else utime + stime from stat
# (clock ticks).
if [ -r /proc/self/schedstat ]; then
	cpu_ns() { awk '{ print $1 }' /proc/"$1"/schedstat 2>/dev/null || echo 0; }
else
	cpu_ns() { awk -v t="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%d", ($12 + $13) * 1e9 / t }' /proc/"$1"/stat 2>/dev/null || echo 0; }
fi
# thread_ns PID: "TID NAME NS" per thread (NAME "main" for TID == PID, else
# the thread's comm: the core names its workers "sl:INSTANCE").
thread_ns() {
	local t tid name
	for t in /proc/"$1"/task/*; do
		tid=${t##*/}
		name=main
		[ "$tid" = "$1" ] || name=$(tr -d ' ' <"$t/comm" 2>/dev/null)
		echo "$tid ${name:-?} $(cpu_ns "$1/task/$tid")"
	done
}
# thread_cpu BEFORE AFTER: "name=seconds;..." of each thread between the two
# thread_ns snapshots (threads started in between count from 0).
thread_cpu() {
	awk 'NR == FNR { b[$1] = $3; next } { printf "%s%s=%.4f", (n++ ? ";" : ""), $2, ($3 - b[$1]) / 1e9 }
		END { if (!n) printf "-" }' "$1" "$2"
}

sluice_conf() { # sluice_conf KIND DIR
	local d=$2
	echo "instances:"
	if [ "$1" = json-rules ]; then # issue 22: each record attributed to the log rule
		echo "  fw: { plugin: nflog, group: $GROUP, rules: true }"
	else
		echo "  fw: { plugin: nflog, group: $GROUP }"
	fi
	echo "stacks:"
	case $1 in
	pcap) echo "  pcap: [fw, { plugin: pcap, file: $d/out.pcap }]" ;;
	text) echo "  text: [fw, decode, logline, { plugin: file, file: $d/out.log }]" ;;
	json | json-rules) echo "  json: [fw, decode, json, { plugin: file, file: $d/out.json }]" ;;
	kafka) echo "  kafka: [fw, decode, json, { plugin: kafka, brokers: [$BOOTSTRAP], topic: sl }]" ;;
	otlp) echo "  otlp: [fw, decode, json, { plugin: otlp, url: \"http://127.0.0.1:$OTLP_PORT/v1/logs\"$OUTPUT_OPTS }]" ;;
	nats) echo "  nats: [fw, decode, json, { plugin: nats, servers: [\"nats://127.0.0.1:$NATS_PORT\"], subject: \"fw.{nflog_group}.{ip_proto}\", jetstream: true$OUTPUT_OPTS }]" ;;
	journal) echo "  journal: [fw, decode, logline, { plugin: journal$OUTPUT_OPTS }]" ;;
	cef) echo "  cef: [fw, decode, cef, { plugin: file, file: $d/out.cef, thread: true$OUTPUT_OPTS }]" ;;
	fan3) # the fan-out without syslog: what the UDP sends cost, by difference
		echo "  pcap: [fw, { plugin: pcap, file: $d/out.pcap }]"
		echo "  text: [fw, decode, logline, { plugin: file, file: $d/out.log }]"
		echo "  json: [fw, decode, json, { plugin: file, file: $d/out.json }]" ;;
	fan4 | fan4lo | fan4nt | fan4tcp)
		echo "  pcap: [fw, { plugin: pcap, file: $d/out.pcap }]"
		echo "  text: [fw, decode, logline, { plugin: file, file: $d/out.log }]"
		echo "  json: [fw, decode, json, { plugin: file, file: $d/out.json }]"
		if [ "$1" = fan4 ]; then # syslog on its own thread: the default for network outputs
			echo "  sys: [fw, decode, logline, { plugin: syslog, transport: udp, address: \"10.197.0.2:$SYSPORT\", queue_size: 16MiB }]"
		elif [ "$1" = fan4lo ]; then # the same to a receiver on loopback (issue 9's figure)
			echo "  sys: [fw, decode, logline, { plugin: syslog, transport: udp, address: \"127.0.0.1:$SYSPORT\", queue_size: 16MiB }]"
		elif [ "$1" = fan4nt ]; then # the old behaviour: syslog on the input's thread
			echo "  sys: [fw, decode, logline, { plugin: syslog, transport: udp, address: \"10.197.0.2:$SYSPORT\", queue_size: 16MiB, thread: false }]"
		else
			echo "  sys: [fw, decode, logline, { plugin: syslog, transport: tcp, framing: lf, address: \"127.0.0.1:$SYSPORT\", queue_size: 16MiB }]"
		fi ;;
	stall) # the syslog receiver stops reading for 2 s: the other two must not notice
		echo "  pcap: [fw, { plugin: pcap, file: $d/out.pcap }]"
		echo "  json: [fw, decode, json, { plugin: file, file: $d/out.json }]"
		echo "  sys: [fw, decode, logline, { plugin: syslog, transport: tcp, framing: lf, address: \"127.0.0.1:$SYSPORT\" }]" ;;
	esac
}

# sluice_grp_conf KIND DIR: one group on one input thread, or two on two
sluice_grp_conf() {
	local d=$2
	echo "instances:"
	echo "  g0: { plugin: nflog, group: $GROUP, thread: true }"
	[ "$1" = grp2 ] && echo "  g1: { plugin: nflog, group: $GROUP2, thread: true }"
	echo "stacks:"
	echo "  j0: [g0, decode, json, { plugin: file, file: $d/out.json }]"
	[ "$1" = grp2 ] && echo "  j1: [g1, decode, json, { plugin: file, file: $d/out1.json }]"
	true
}

ulogd_conf() { # ulogd_conf KIND DIR: plugin defaults (sync=0), the same 8 MiB socket buffer as sluice
# (ulogd 2.0.8 sets netlink_socket_buffer_size only when it is below _maxsize:
# equal values leave the kernel's default buffer, as bench/conntrack.sh found)
	local d=$2 p
	echo "[global]"
	echo "logfile=\"$d/ulogd.log\""
	echo "loglevel=5"
	for p in inppkt_NFLOG raw2packet_BASE filter_IFINDEX filter_IP2STR filter_PRINTPKT \
		output_LOGEMU output_PCAP output_JSON output_SYSLOG; do
		echo "plugin=\"$ULOGD_LIB/ulogd_$p.so\""
	done
	case $1 in
	pcap) echo "stack=log1:NFLOG,base1:BASE,pcap1:PCAP" ;;
	text) echo "stack=log1:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,print1:PRINTPKT,emu1:LOGEMU" ;;
	json) echo "stack=log1:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,json1:JSON" ;;
	fan4)
		echo "stack=log1:NFLOG,base1:BASE,pcap1:PCAP"
		echo "stack=log1:NFLOG,base2:BASE,ifi2:IFINDEX,ip2str2:IP2STR,print2:PRINTPKT,emu1:LOGEMU"
		echo "stack=log1:NFLOG,base3:BASE,ifi3:IFINDEX,ip2str3:IP2STR,json1:JSON"
		echo "stack=log1:NFLOG,base4:BASE,ifi4:IFINDEX,ip2str4:IP2STR,print4:PRINTPKT,sys1:SYSLOG" ;;
	esac
	cat <<EOF
[log1]
group=$GROUP
unbind=0
netlink_socket_buffer_size=8388608
netlink_socket_buffer_maxsize=8388609
[pcap1]
file="$d/out.pcap"
sync=0
[emu1]
file="$d/out.log"
sync=0
[json1]
file="$d/out.json"
sync=0
[sys1]
facility=LOG_LOCAL4
level=LOG_INFO
EOF
}

# start_mock DIR: the Kafka mock cluster for sluice-kafka in namespace B
# (SINK_PID; BOOTSTRAP); KAFKA_DIR says stop_logger to read its topic back.
start_mock() {
	local i
	if ! [ -x "$BUILD/tests/kafka_mock" ] || ! command -v kcat >/dev/null; then
		echo "   sluice-kafka: needs $BUILD/tests/kafka_mock and kcat" >"$1/log"
		return 1
	fi
	ip netns exec $NB taskset -c $GEN_CPU "$BUILD/tests/kafka_mock" -f -p "$KAFKA_PARTS" sl </dev/null >"$1/mock.out" 2>&1 &
	SINK_PID=$!
	for i in $(seq 300); do grep -qx ready "$1/mock.out" && break; sleep 0.1; done
	BOOTSTRAP=$(awk '$1 == "bootstrap" { print $2 }' "$1/mock.out")
	KAFKA_DIR=$1
}

# kafka_readback DIR: while the mock still runs, the records on its topic
# (read back with kcat: distinct partition:offset pairs), the sums of the
# partitions' end and start offsets (start > 0: the mock dropped the
# oldest) and the mock's CPU seconds.
kafka_readback() {
	local p q=() s=()
	for ((p = 0; p < KAFKA_PARTS; p++)); do q+=(-t "sl:$p:-1"); s+=(-t "sl:$p:-2"); done
	ip netns exec $NB kcat -Q -b "$BOOTSTRAP" "${q[@]}" 2>/dev/null | awk '{ n += $NF } END { print n + 0 }' >"$1/topic.end"
	ip netns exec $NB kcat -Q -b "$BOOTSTRAP" "${s[@]}" 2>/dev/null | awk '{ n += $NF } END { print n + 0 }' >"$1/topic.start"
	ip netns exec $NB timeout 120 kcat -C -q -b "$BOOTSTRAP" -t sl -e -f '%p:%o\n' 2>"$1/kcat.err" |
		sort -u | wc -l >"$1/topic.count"
	awk -v t="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.3f\n", ($12 + $13) / t }' \
		/proc/"$SINK_PID"/stat >"$1/mock.cpu" 2>/dev/null
}

# The receivers of sluice-otlp, -nats and -journal: rx_start KIND DIR starts
# one in namespace B on GEN_CPU (SINK_PID; journal: JNS_PID, the mount
# namespace's holder, and LOGGER_WRAP, what puts sluice in it) and sets
# RX_KIND, DIR/rx.err says why one did not start; rx_readback, once sluice
# has stopped, writes the records it holds to DIR/rx.count (otlp: the
# receiver prints them when stop_logger ends it) and its CPU seconds (every
# thread) to DIR/rx.cpu.
proc_cpu() { awk -v t="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "%.3f\n", ($12 + $13) / t }' /proc/"$1"/stat 2>/dev/null; }
nats_cli() { ip netns exec $NB python3 "$TOP/tests/e2e/nats_client.py" "127.0.0.1:$NATS_PORT" "$@"; }
rx_start() {
	local kind=$1 d=$2 i
	RX_KIND=$kind RX_DIR=$d
	case $kind in
	otlp)
		ip netns exec $NB taskset -c $GEN_CPU python3 "$TOP/bench/httpcount.py" $OTLP_PORT otlp >"$d/http.out" 2>"$d/rx.err" &
		SINK_PID=$!
		for i in $(seq 100); do grep -qx ready "$d/http.out" && return 0; sleep 0.1; done ;;
	nats)
		command -v nats-server >/dev/null || { echo "no nats-server" >"$d/rx.err"; return 1; }
		mkdir -p "$d/nats"
		printf 'listen: 127.0.0.1:%s\njetstream { store_dir: "%s" }\n' $NATS_PORT "$d/nats" >"$d/nats.conf"
		ip netns exec $NB taskset -c $GEN_CPU nats-server -c "$d/nats.conf" >"$d/rx.err" 2>&1 &
		SINK_PID=$!
		for i in $(seq 100); do nats_cli ready 2>/dev/null && break; sleep 0.1; done
		# the stream of outputs.sh's nats receiver: one replica, file storage
		nats_cli create SL "fw.>" 1 120 >>"$d/rx.err" 2>&1 && return 0 ;;
	journal)
		[ -x "$JOURNALD" ] && command -v journalctl >/dev/null && command -v nsenter >/dev/null ||
			{ echo "needs $JOURNALD, journalctl and nsenter" >"$d/rx.err"; return 1; }
		printf '%s\n' "[Journal]" Storage=volatile RateLimitIntervalSec=0 RateLimitBurst=0 \
			RuntimeMaxUse=16G RuntimeKeepFree=0 ReadKMsg=no Audit=no ForwardToSyslog=no \
			ForwardToKMsg=no ForwardToConsole=no ForwardToWall=no >"$d/journald.conf"
		# unshare and the script exec: $! is the holder.  Not under `ip
		# netns exec`, whose mount namespace has a sysfs without the cgroup
		# mount journald needs; namespace B is entered by nsenter, which
		# opens /run/netns/B before it enters the mount namespace (whose /run
		# is journal_ns.sh's tmpfs), and execs.
		# namespace B's datagram queue as systemd sets a host's (journal_ns.sh)
		ip netns exec $NB sysctl -qw net.unix.max_dgram_qlen=512
		unshare --mount --propagation private -- "$TOP/bench/journal_ns.sh" \
			"$d/jns.ready" "$d/journald.conf" >"$d/rx.err" 2>&1 &
		JNS_PID=$!
		for i in $(seq 100); do [ -s "$d/jns.ready" ] && break; sleep 0.1; done
		[ -s "$d/jns.ready" ] || return 1
		LOGGER_WRAP=(nsenter -t "$JNS_PID" -m --net="/run/netns/$NB" --)
		"${LOGGER_WRAP[@]}" taskset -c $GEN_CPU "$JOURNALD" >>"$d/rx.err" 2>&1 &
		SINK_PID=$!
		for i in $(seq 100); do
			nsenter -t "$JNS_PID" -m -- test -S /run/systemd/journal/socket -a -d /run/log/journal && return 0
			sleep 0.1
		done ;;
	esac
	return 1
}
rx_readback() {
	local d=$RX_DIR a b
	case $RX_KIND in
	nats) nats_cli count SL >"$d/rx.count" 2>>"$d/rx.err" ;;
	journal)
		# datagrams journald has yet to read: wait until it stops working
		b=$(proc_cpu "$SINK_PID")
		for _ in $(seq 200); do sleep 0.3; a=$b b=$(proc_cpu "$SINK_PID"); [ "$a" = "$b" ] && break; done
		nsenter -t "$JNS_PID" -m -- journalctl -D /run/log/journal -t sluice -o cat 2>>"$d/rx.err" |
			wc -l >"$d/rx.count" ;;
	esac
	proc_cpu "$SINK_PID" >"$d/rx.cpu"
}

# start_logger NAME DIR: starts it in namespace B on LOG_CPU, sets LOGGER_PID
# (the logger's own pid: every wrapper execs) and SINK_PID (syslog receiver).
start_logger() {
	local name=$1 d=$2
	SINK_PID='' RX_KIND='' LOGGER_WRAP=()
	case $name in
	drain)
		ip netns exec $NB $RT taskset -c $LOG_CPU "$G/nflog_drain" -g $GROUP >"$d/drain.out" 2>"$d/log" &
		LOGGER_PID=$! ;;
	sluice-*)
		[ "$name" = sluice-kafka ] && { start_mock "$d" || return; }
		case $name in
		sluice-otlp | sluice-nats | sluice-journal)
			rx_start "${name#sluice-}" "$d" || { echo "   $name: receiver did not start: $(head -c 300 "$d/rx.err")" >"$d/log"; return; } ;;
		esac
		case $name in
		sluice-grp*) sluice_grp_conf "${name#sluice-}" "$d" >"$d/sluice.yaml" ;;
		*) sluice_conf "${name#sluice-}" "$d" >"$d/sluice.yaml" ;;
		esac
		if [[ $name == sluice-fan4* || $name == sluice-stall ]]; then
			local proto=udp
			[[ $name == sluice-fan4tcp || $name == sluice-stall ]] && proto=tcp
			local sinkns=$NB # fan4 and fan4nt: the receiver across vs/vr (see NC above)
			[[ $name == sluice-fan4 || $name == sluice-fan4nt ]] && sinkns=$NC
			ip netns exec $sinkns taskset -c $GEN_CPU $RT "$G/sinkcount" $proto:$SYSPORT >"$d/sink.out" 2>&1 &
			SINK_PID=$!
			sleep 0.1
		fi
		if [ ${#LOGGER_WRAP[@]} -gt 0 ]; then # in the journal's mount namespace (and B)
			"${LOGGER_WRAP[@]}" $RT taskset -c $LOG_CPU "$SLUICE" -c "$d/sluice.yaml" >"$d/log" 2>&1 &
		else
			ip netns exec $NB $RT taskset -c $LOG_CPU "$SLUICE" -c "$d/sluice.yaml" >"$d/log" 2>&1 &
		fi
		LOGGER_PID=$! ;;
	ulogd-*)
		ulogd_conf "${name#ulogd-}" "$d" >"$d/ulogd.conf"
		if [ "$name" = ulogd-fan4 ]; then
			# ulogd's SYSLOG output is libc syslog(): give it a /dev/log of
			# its own (a private /dev in a private mount namespace).
			mkdir "$d/dev"
			for f in null zero random urandom; do touch "$d/dev/$f"; done
			$RT taskset -c $GEN_CPU "$G/sinkcount" unix:"$d/dev/log" >"$d/sink.out" 2>&1 &
			SINK_PID=$!
			sleep 0.1
			ip netns exec $NB unshare -m --propagation private sh -c "
				for f in null zero random urandom; do mount --bind /dev/\$f '$d/dev/'\$f; done
				mount --rbind '$d/dev' /dev &&
				exec $RT taskset -c $LOG_CPU ulogd -c '$d/ulogd.conf'" >"$d/log" 2>&1 &
		else
			ip netns exec $NB $RT taskset -c $LOG_CPU ulogd -c "$d/ulogd.conf" >"$d/log" 2>&1 &
		fi
		LOGGER_PID=$! ;;
	tcpdump)
		ip netns exec $NB $RT taskset -c $LOG_CPU tcpdump -q -B 8192 -i nflog:$GROUP -w "$d/out.pcap" >"$d/log" 2>&1 &
		LOGGER_PID=$! ;;
	printk)
		PRINTK_OLD=$(sysctl -n net.netfilter.nf_log_all_netns)
		sysctl -qw net.netfilter.nf_log_all_netns=1
		$RT taskset -c $LOG_CPU "$G/kmsgcount" "slbench: " >"$d/kmsg.out" 2>"$d/log" &
		LOGGER_PID=$! ;;
	esac
	sleep 0.6
}

stop_logger() {
	local i
	kill -TERM "$LOGGER_PID" 2>/dev/null
	for i in $(seq 100); do kill -0 "$LOGGER_PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$LOGGER_PID" 2>/dev/null
	wait "$LOGGER_PID" 2>/dev/null
	LOGGER_PID=
	if [ -n "${KAFKA_DIR:-}" ]; then
		kafka_readback "$KAFKA_DIR"
		KAFKA_DIR=
	fi
	[ -n "$RX_KIND" ] && [ -n "$SINK_PID" ] && rx_readback
	RX_KIND=
	if [ -n "$SINK_PID" ]; then
		sleep 0.2
		kill -TERM "$SINK_PID" 2>/dev/null
		wait "$SINK_PID" 2>/dev/null
		SINK_PID=
	fi
	if [ -n "${JNS_PID:-}" ]; then
		kill -TERM "$JNS_PID" 2>/dev/null
		wait "$JNS_PID" 2>/dev/null
		JNS_PID=
	fi
	if [ -n "$PRINTK_OLD" ]; then
		sysctl -qw net.netfilter.nf_log_all_netns="$PRINTK_OLD"
		PRINTK_OLD=
	fi
}

lines() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
num() { [ -f "$1" ] && awk '$1 ~ /^[0-9]+$/ { n = $1 } END { print n + 0 }' "$1" || echo 0; } # a count a receiver wrote
pcapn() { [ -f "$1" ] && "$G/pcapcount" "$1" 2>/dev/null || echo 0; }

# out_detail DIR INSTANCE: "out=N,dropped=N,queue_dropped=N,queue_high=N,nflog_lost=N"
# from the output's last counters line (the core's out, dropped, which also
# counts the output's own drops, and its queue's drops and deepest backlog
# in batches) and the nflog input's `lost`.
out_detail() {
	local log=$1/log o dr q h l
	read -r o dr < <(sed -n "s/.*counters: $2 ([a-z_0-9]*): in=[0-9]* out=\([0-9]*\) dropped=\([0-9]*\) .*/\1 \2/p" "$log" | tail -1)
	read -r q h < <(sed -n "s/.*counters: $2 ([a-z_0-9]*):.* queue_dropped=\([0-9]*\) .* queue_high=\([0-9]*\).*/\1 \2/p" "$log" | tail -1)
	l=$(sed -n "s/.*counters: fw (nflog):.* lost=\([0-9]*\).*/\1/p" "$log" | tail -1)
	echo "out=${o:-?},dropped=${dr:-?},queue_dropped=${q:-?},queue_high=${h:-?},nflog_lost=${l:-?}"
}

# outputs NAME DIR: "count detail" — records in the logger's output(s); for
# the fan-outs the smallest of the four, with each one in the detail.
outputs() {
	local name=$1 d=$2 p t j s
	case $name in
	drain) echo "$(awk '{print $2}' "$d/drain.out" 2>/dev/null || echo 0) -" ;;
	*-pcap | tcpdump) echo "$(pcapn "$d/out.pcap") -" ;;
	*-text) echo "$(lines "$d/out.log") -" ;;
	*-json) echo "$(lines "$d/out.json") -" ;;
	*-json-rules) # and how many records name the rule
		echo "$(lines "$d/out.json") attributed=$(grep -c '"rule_handle"' "$d/out.json" 2>/dev/null || true)" ;;
	*-fan3)
		p=$(pcapn "$d/out.pcap") t=$(lines "$d/out.log") j=$(lines "$d/out.json")
		echo "$(printf '%s\n' "$p" "$t" "$j" | sort -n | head -1) pcap=$p,text=$t,json=$j" ;;
	*-stall) # the other stacks' smallest; syslog's delivered and counted drops
		p=$(pcapn "$d/out.pcap") j=$(lines "$d/out.json")
		s=$(awk '{print $2}' "$d/sink.out" 2>/dev/null); s=${s:-0}
		local dr=$(sed -n 's/.*counters: sys\.syslog (syslog):.* dropped=\([0-9]*\).*/\1/p' "$d/log" | tail -1)
		echo "$(printf '%s\n' "$p" "$j" | sort -n | head -1) pcap=$p,json=$j,syslog=$s,syslog_dropped=${dr:-?}" ;;
	*-grp1) echo "$(lines "$d/out.json") -" ;;
	*-kafka)
		local dl=$(sed -n 's/.*counters: kafka\.kafka (kafka):.* delivered=\([0-9]*\).*/\1/p' "$d/log" | tail -1)
		echo "$(cat "$d/topic.count" 2>/dev/null || echo 0) delivered=${dl:-?},topic_end=$(cat "$d/topic.end" 2>/dev/null),mock_trimmed=$(cat "$d/topic.start" 2>/dev/null),mock_cpu=$(cat "$d/mock.cpu" 2>/dev/null)" ;;
	*-otlp) # httpcount.py's "requests R bytes B records N bad X"
		local rq rc bad
		read -r _ rq _ _ _ rc _ bad < <(grep '^requests ' "$d/http.out" 2>/dev/null)
		echo "${rc:-0} $(out_detail "$d" otlp.otlp),requests=${rq:-?},bad=${bad:-?},rx_cpu=$(cat "$d/rx.cpu" 2>/dev/null)" ;;
	*-nats) echo "$(num "$d/rx.count") $(out_detail "$d" nats.nats),rx_cpu=$(cat "$d/rx.cpu" 2>/dev/null)" ;;
	*-journal) echo "$(num "$d/rx.count") $(out_detail "$d" journal.journal),rx_cpu=$(cat "$d/rx.cpu" 2>/dev/null)" ;;
	*-cef) echo "$(lines "$d/out.cef") $(out_detail "$d" cef.file)" ;;
	*-grp2)
		p=$(lines "$d/out.json") t=$(lines "$d/out1.json")
		echo "$((p + t)) g0=$p,g1=$t" ;;
	*-fan4 | *-fan4lo | *-fan4nt | *-fan4tcp)
		p=$(pcapn "$d/out.pcap") t=$(lines "$d/out.log") j=$(lines "$d/out.json")
		s=$(awk '{print $2}' "$d/sink.out" 2>/dev/null); s=${s:-0}
		echo "$(printf '%s\n' "$p" "$t" "$j" "$s" | sort -n | head -1) pcap=$p,text=$t,json=$j,syslog=$s" ;;
	printk) echo "$(awk '{print $2}' "$d/kmsg.out" 2>/dev/null || echo 0) ringlost=$(awk '{print $4}' "$d/kmsg.out" 2>/dev/null)" ;;
	esac
}

RESULTS=$T/results.tsv
# the first line names the run for the charts' titles (readers skip '#' lines)
RUN_NOTE="bench/run.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), sluice at $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null || echo ?), $RUNS round(s) of ${DUR} s"
[ "$QUICK" = 1 ] && RUN_NOTE="$RUN_NOTE; QUICK=1: a smoke run, not a measurement"
printf '#note\t%s\n' "$RUN_NOTE${NOTE:+; $NOTE}" >"$RESULTS"
# measure ROUND MODE SIZE NAME RATE SECS: one logger on one load; appends a
# row: round mode size logger target_pps sent secs kernel_logged output cpu_s detail
measure() {
	local round=$1 mode=$2 size=$3 name=$4 rate=$5 secs=$6
	local d=$T/m sent gsecs c0 c1 k0 k1 out detail cpu
	rm -rf "$d"; mkdir -p "$d"
	case $name in
	printk) rule printk ;;
	sluice-grp2) rule split ;;
	*) rule nflog ;;
	esac
	[ "$name" = sluice-stall ] && [ "$mode" = full ] && secs=$STALL_SECS
	start_logger "$name" "$d"
	if ! kill -0 "$LOGGER_PID" 2>/dev/null; then
		echo "   $name did not start: $(head -c 300 "$d/log")" >&2
		LOGGER_PID=; stop_logger 2>/dev/null
		printf '%s\t%s\t%s\t%s\t%s\t0\t0\t0\t0\t0\tfailed-to-start\n' "$round" "$mode" "$size" "$name" "$rate" >>"$RESULTS"
		return
	fi
	local perf_pid=
	if [ -n "${PERF:-}" ] && [[ " $PERF " == *" $name "* ]]; then
		# PERF="names": profile those loggers while the traffic runs
		perf record -q -g -p "$LOGGER_PID" -o "$T/perf-$round-$size-$name.data" >/dev/null 2>&1 &
		perf_pid=$!
		sleep 0.3
	fi
	local stall_pid=
	if [ "$name" = sluice-stall ] && [ -n "$SINK_PID" ]; then
		# the receiver stops reading 0.5 s into the traffic, for 2 s
		(sleep 0.5; kill -STOP "$SINK_PID"; sleep 2; kill -CONT "$SINK_PID") &
		stall_pid=$!
	fi
	[[ $name == sluice-* ]] && thread_ns "$LOGGER_PID" >"$T/thr0"
	k0=$(nft_count); c0=$(cpu_ns "$LOGGER_PID")
	read -r _ sent _ gsecs _ < <(timeout $((${secs%.*} + 10)) ip netns exec $NA \
		"$G/udpgen" -d 10.198.0.2 -p $PORT -s "$size" -r "$rate" -t "$secs" -c $GEN_CPU)
	sleep $SETTLE
	c1=$(cpu_ns "$LOGGER_PID"); k1=$(nft_count)
	local threads=-
	if [[ $name == sluice-* ]]; then
		thread_ns "$LOGGER_PID" >"$T/thr1"
		threads=$(thread_cpu "$T/thr0" "$T/thr1")
	fi
	[ -n "$stall_pid" ] && { wait "$stall_pid"; kill -CONT "$SINK_PID" 2>/dev/null; }
	[ -n "$perf_pid" ] && { kill -INT "$perf_pid"; wait "$perf_pid"; }
	stop_logger
	read -r out detail < <(outputs "$name" "$d")
	cpu=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.4f", (b - a) / 1e9 }')
	# /proc/PID/schedstat is the main thread's alone: a threaded logger's
	# CPU is the sum over its threads
	[ "$threads" != - ] && cpu=$(echo "$threads" | tr ';' '\n' |
		awk -F= '{ s += $2 } END { printf "%.4f", s }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$mode" "$size" "$name" "$rate" \
		"${sent:-0}" "${gsecs:-0}" "$((k1 - k0))" "${out:-0}" "$cpu" "${detail:--}" "$threads" >>"$RESULTS"
	awk -F'\t' 'END { k = $8; o = $9; printf "   %-14s %5s B  rate %-7s sent %-8s logged %-8s out %-8s loss %6.2f%%  cpu %ss %s\n",
		$4, $3, ($5 == 0 ? "full" : $5), $6, k, o, (k > 0 ? 100 * (k - o) / k : 0), $10, $11 " " $12 }' "$RESULTS"
	mkdir -p "$T/logs" && cp "$d/log" "$T/logs/$round-$mode-$size-$name-$rate.log" 2>/dev/null
	rm -rf "$d"
}

# measure_ok ARGS: measure, and once more when the generator stalled (it
# sent under half of the paced target, or under 20k pps at full rate: now
# and then sendmmsg blocks for seconds on this rig); the stalled row is
# kept in the log, marked, and not used.
STALLS=0
measure_ok() {
	local try
	for try in 1 2; do
		measure "$@"
		awk -F'\t' -v r="$5" -v s="$6" 'END { p = ($7 > 0 ? $6 / $7 : 0);
			exit !(r > 0 ? p < 0.5 * r : p < 20000) }' "$RESULTS" || return 0
		[ $try = 2 ] && return 0
		echo "   (generator stalled: measuring again)" >&2
		STALLS=$((STALLS + 1))
		sed -i '$ s/^/#stalled /' "$RESULTS"
	done
}

loss_of() { # loss (fraction) of the last row
	awk -F'\t' 'END { k = $8; o = $9; print (k > 0 ? (k - o) / k : 1) }' "$RESULTS"
}
pps_of() { awk -F'\t' 'END { printf "%d", ($7 > 0 ? $6 / $7 : 0) }' "$RESULTS"; }

# search ROUND SIZE NAME FULLPPS: bisect the paced rate between 0 and the
# full rate for the highest one with under 1% loss.
search() {
	local round=$1 size=$2 name=$3 hi=$4 lo=0 got=0 mid i
	for i in $(seq "$SEARCH_STEPS"); do
		mid=$(((lo + hi) / 2))
		measure_ok "$round" probe "$size" "$name" "$mid" "$SEARCH_DUR"
		# a pass counts at the rate really sent (a starved generator sends less)
		if awk -v l="$(loss_of)" 'BEGIN { exit !(l < 0.01) }'; then
			lo=$mid got=$(pps_of)
			[ "$got" -gt "$mid" ] && got=$mid
		else
			hi=$mid
		fi
	done
	printf '%s\tsearch\t%s\t%s\t%s\t0\t0\t0\t0\t0\tupper=%s\n' "$round" "$size" "$name" "$got" "$hi" >>"$RESULTS"
}

wanted() {
	case $1 in
	ulogd-*) [ $HAVE_ULOGD = 1 ] ;;
	tcpdump) [ $HAVE_TCPDUMP = 1 ] ;;
	*) true ;;
	esac
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
START=$SECONDS
for round in $(seq "$RUNS"); do
	for size in $SIZES; do
		echo "== round $round/$RUNS, ${size}-byte payloads, full rate (${DUR}s)"
		declare -A FULLPPS=() FULLLOSS=()
		for name in $LOGGERS; do
			wanted "$name" || continue
			measure_ok "$round" full "$size" "$name" 0 "$DUR"
			FULLPPS[$name]=$(pps_of) FULLLOSS[$name]=$(loss_of)
		done
		[ "$SEARCH" = 1 ] || continue
		echo "== round $round/$RUNS, ${size}-byte payloads, highest rate with <1% loss"
		for name in $LOGGERS; do
			wanted "$name" || continue
			# the stall scenario is a full-rate test only
			[ "$name" = sluice-stall ] && continue
			if awk -v l="${FULLLOSS[$name]}" 'BEGIN { exit !(l < 0.01) }'; then
				# no search needed: the full rate itself loses under 1%
				printf '%s\tsearch\t%s\t%s\t%s\t0\t0\t0\t0\t0\tfull\n' "$round" "$size" "$name" "${FULLPPS[$name]}" >>"$RESULTS"
			else
				search "$round" "$size" "$name" "${FULLPPS[$name]}"
			fi
		done
	done
done
ELAPSED=$((SECONDS - START))
rm -rf "$SAVE/sluice-bench-logs" && cp -r "$T/logs" "$SAVE/sluice-bench-logs" # each logger's own log
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
echo "== measured in ${ELAPSED}s"

# The offline and conntrack benchmarks: their own scripts, which write their
# own tables into docs/BENCHMARKS.md (nested markers inside their sections;
# the prose around them stays).  NODOC=1 passes on.
DOC=$TOP/docs/BENCHMARKS.md
export DOC NODOC=${NODOC:-0}
if [ "${OFFLINE:-1}" = 1 ]; then
	echo "== bench/offline.sh"
	if [ "$QUICK" = 1 ]; then
		"$TOP/bench/offline.sh" -b "$BUILD" -n 1000000 -r 1 || echo "run.sh: offline.sh failed" >&2
	else
		"$TOP/bench/offline.sh" -b "$BUILD" || echo "run.sh: offline.sh failed" >&2
	fi
fi
if [ "${SINKS:-1}" = 1 ]; then
	echo "== bench/sinks.sh"
	if [ "$QUICK" = 1 ]; then
		LIVE_RUNS=1 LIVE_DUR=1 "$TOP/bench/sinks.sh" -b "$BUILD" -n 200000 -r 1 || echo "run.sh: sinks.sh failed" >&2
	else
		"$TOP/bench/sinks.sh" -b "$BUILD" || echo "run.sh: sinks.sh failed" >&2
	fi
fi
if [ "${SQL:-1}" = 1 ]; then
	echo "== bench/sql.sh"
	if [ "$QUICK" = 1 ]; then
		"$TOP/bench/sql.sh" -b "$BUILD" -n 10000 -N 100000 -r 1 || echo "run.sh: sql.sh failed" >&2
	else
		"$TOP/bench/sql.sh" -b "$BUILD" || echo "run.sh: sql.sh failed" >&2
	fi
fi
if [ "${OUTPUTS:-1}" = 1 ]; then
	echo "== bench/outputs.sh"
	if [ "$QUICK" = 1 ]; then
		CHARTS=0 NOTE="QUICK=1: a smoke run, not a measurement${NOTE:+; $NOTE}" \
			"$TOP/bench/outputs.sh" -b "$BUILD" -n 200000 -r 1 || echo "run.sh: outputs.sh failed" >&2
	else
		CHARTS=0 "$TOP/bench/outputs.sh" -b "$BUILD" || echo "run.sh: outputs.sh failed" >&2
	fi
fi
if [ "${CONNTRACK:-1}" = 1 ]; then
	echo "== bench/conntrack.sh"
	if [ "$QUICK" = 1 ]; then
		"$TOP/bench/conntrack.sh" -b "$BUILD" -r 5000 -t 2 || echo "run.sh: conntrack.sh failed" >&2
	else
		"$TOP/bench/conntrack.sh" -b "$BUILD" || echo "run.sh: conntrack.sh failed" >&2
	fi
fi
if [ "${RULES:-1}" = 1 ]; then
	echo "== bench/rules.sh"
	if [ "$QUICK" = 1 ]; then
		"$TOP/bench/rules.sh" -b "$BUILD" -r 3 || echo "run.sh: rules.sh failed" >&2
	else
		"$TOP/bench/rules.sh" -b "$BUILD" || echo "run.sh: rules.sh failed" >&2
	fi
fi

# issue 19: say whether nflog -> pcap is within 1.3x the drain's CPU per packet
python3 "$TOP/bench/live_report.py" --pcap-target "$RESULTS" || echo "run.sh: no pcap target computed" >&2
# issue 22: what `rules: true` costs per packet (sluice-json-rules against sluice-json)
python3 "$TOP/bench/live_report.py" --rules-target "$RESULTS" || echo "run.sh: no rules figure computed" >&2
# issue 20: the UDP syslog thread's CPU per message (fan4: across veth; fan4lo: loopback)
python3 "$TOP/bench/live_report.py" --syslog-target "$RESULTS" || echo "run.sh: no syslog figure computed" >&2
# charts: the results beside outputs.sh's, drawn from both (bench/charts.sh)
CHARTS_DIR=$TOP/docs/charts
[ "${NODOC:-0}" = 1 ] && CHARTS_DIR=$SAVE/sluice-bench-charts
mkdir -p "$CHARTS_DIR" && cp "$RESULTS" "$CHARTS_DIR/live.tsv"
if [ "${CHARTS:-1}" = 1 ]; then
	"$TOP/bench/charts.sh" "$CHARTS_DIR" || echo "run.sh: charts not drawn" >&2
fi
[ "${NODOC:-0}" = 1 ] && { cp "$RESULTS" "$SAVE/sluice-bench-results.tsv"; echo "results: $SAVE/sluice-bench-results.tsv"; exit 0; }
cp "$RESULTS" "$SAVE/sluice-bench-results.tsv"
python3 "$TOP/bench/live_report.py" "$RESULTS" "$TOP/docs/BENCHMARKS.md" \
	--quick "$QUICK" --runs "$RUNS" --dur "$DUR" --elapsed "$ELAPSED" --search-steps "$SEARCH_STEPS" \
	--notes "$TOP/bench/live-notes.md" --load "$LOAD_BEFORE / $LOAD_AFTER" --stalls "$STALLS" \
	--ulogd "$(dpkg-query -W -f '${Version}' ulogd2 2>/dev/null || echo none)" \
	--tcpdump "$(tcpdump --version 2>/dev/null | head -1)"
echo "== docs/BENCHMARKS.md updated (live section; the offline and conntrack tables by their scripts above)"
