#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Conntrack event benchmark (issue 5): destroy events of many short TCP
# connections, received by sluice (nfct -> flowfile, nfct -> logline -> file),
# ulogd2 (NFCT -> IP2STR -> PRINTFLOW -> LOGEMU) and `conntrack -E`, at
# rising connection rates.  Run as root:
#
#   bench/conntrack.sh [-r "RATES"] [-t SECONDS] [-l "LOGGERS"] [-B BYTES] [-b BUILDDIR] [-k]
#
# Two network namespaces joined by a veth pair: A runs bench/ctgen.c's
# client (CPU 0), opening TCP connections to B and closing each with a RST
# at once; B runs ctgen's server and the logger under test (CPU 1).  Only B
# tracks connections (an nft rule on `ct state new`, whose counter is the
# number of connections the kernel tracked: the truth each logger is held
# to), with accounting and timestamps on and the CLOSE timeout cut to 1 s,
# so every connection's destroy event follows within a second or two.
#
# Each logger gets the same netlink receive buffer (-B, default 8 MiB) and
# only destroy events.  A run lasts SECONDS (default 3) of connections at one rate
# (RATES, default "5000 20000 0"; 0: as fast as the client can), then waits
# until B's conntrack table is empty (at most 20 s, then flushes it), then stops the logger and counts what
# it wrote: flows in the flow files, lines of the text logs.  Reported:
# destroy events received per second of traffic, connections lost, and
# ENOBUFS (overruns) the logger counted or reported.  sluice's nfct resyncs
# after an overrun (a table dump) and reports the destroys it missed
# (`recovered`): the target is no connection lost.
#
# Results: a markdown table on stdout and in WORKDIR/results.md, and in
# docs/BENCHMARKS.md between <!-- conntrack-tables:begin/end --> (DOC=path
# writes another copy of the document, NODOC=1 none).
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILDDIR:-${BUILD:-$SRC/build}}
RATES="5000 20000 0"
DUR=3
GC_WAIT=20
LOGGERS="sluice-flowfile sluice-logline ulogd2 conntrack-E"
KEEP=0
BUF=8388608
while getopts "r:t:l:B:b:k" o; do
	case $o in
	r) RATES=$OPTARG ;;
	t) DUR=$OPTARG ;;
	l) LOGGERS=$OPTARG ;;
	B) BUF=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	k) KEEP=1 ;;
	*) sed -n '9p' "$0" >&2; exit 64 ;;
	esac
done
SLUICE=${SLUICE:-$BUILD/core/sluice}
export SLUICE_PLUGIN_PATH=${SLUICE_PLUGIN_PATH:-$BUILD/plugins}

die() { echo "conntrack.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (network namespaces, nftables, sysctls)"
for c in ip nft conntrack taskset python3 ${CC:-cc}; do
	command -v "$c" >/dev/null || die "needs $c"
done
[ -x "$SLUICE" ] || die "no daemon at $SLUICE (build first, or -b BUILDDIR)"
ULOGD_LIB=$(dirname "$(ls /usr/lib/*/ulogd/ulogd_inpflow_NFCT.so 2>/dev/null | head -1)" 2>/dev/null)
if ! command -v ulogd >/dev/null || [ -z "$ULOGD_LIB" ] || [ "$ULOGD_LIB" = . ]; then
	echo "conntrack.sh: ulogd2 not installed (apt-get install ulogd2): skipping it" >&2
	LOGGERS=${LOGGERS//ulogd2/}
fi

WORK=$(mktemp -d /tmp/sluice-bench-ct.XXXXXX)
NSA=sbctA$$
NSB=sbctB$$
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	[ "$KEEP" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

${CC:-cc} -O2 -Wall -Wextra -o "$WORK/ctgen" "$SRC/bench/ctgen.c" || die "cannot build ctgen"

# ---- the namespaces ----
ip netns add "$NSA" && ip netns add "$NSB" || die "cannot create network namespaces"
ip link add sbctA$$ netns "$NSA" type veth peer name sbctB$$ netns "$NSB" || die "no veth"
ip -n "$NSA" link set lo up
ip -n "$NSB" link set lo up
ip -n "$NSA" addr add 10.77.0.1/24 dev sbctA$$
ip -n "$NSB" addr add 10.77.0.2/24 dev sbctB$$
ip -n "$NSA" link set sbctA$$ up
ip -n "$NSB" link set sbctB$$ up
ip netns exec "$NSA" sysctl -qw net.ipv4.ip_local_port_range="1024 65000"
ip netns exec "$NSB" sysctl -qw net.netfilter.nf_conntrack_acct=1 \
	net.netfilter.nf_conntrack_timestamp=1 \
	net.netfilter.nf_conntrack_tcp_timeout_close=1 ||
	die "conntrack sysctls unavailable in a namespace"
NPORTS=32
PORT=7000
ip netns exec "$NSB" taskset -c 0 "$WORK/ctgen" -l $PORT -n $NPORTS 2>"$WORK/server.err" &
PIDS+=($!)
sleep 0.3

# The rule that makes B track connections; its counter counts them.
nft_table() {
	ip netns exec "$NSB" nft delete table inet sbct 2>/dev/null
	ip netns exec "$NSB" nft -f - <<NFT
table inet sbct {
	chain in { type filter hook input priority 0; ct state new tcp dport $PORT-$((PORT + NPORTS - 1)) counter; }
}
NFT
}
tracked() {
	ip netns exec "$NSB" nft list chain inet sbct in | sed -nE 's/.*counter packets ([0-9]+).*/\1/p'
}
ct_count() { ip netns exec "$NSB" conntrack -C 2>/dev/null || echo 0; }

# ---- loggers: start_LOGGER OUTDIR; count_LOGGER OUTDIR -> "received enobufs recovered" ----
start_logger() {
	local name="$1" d="$2"
	mkdir -p "$d"
	case $name in
	sluice-flowfile)
		cat >"$d/conf.yaml" <<EOF
stacks:
  ct: [{ plugin: nfct, netlink_buffer: $BUF }, { plugin: flowfile, dir: $d/flows, rotate_interval: 1h }]
EOF
		mkdir -p "$d/flows"
		;;
	sluice-logline)
		cat >"$d/conf.yaml" <<EOF
stacks:
  ct: [{ plugin: nfct, netlink_buffer: $BUF }, logline, { plugin: file, file: $d/ct.log }]
EOF
		;;
	esac
	case $name in
	sluice-*)
		ip netns exec "$NSB" taskset -c 1 "$SLUICE" -c "$d/conf.yaml" >"$d/daemon.log" 2>&1 &
		;;
	ulogd2)
		cat >"$d/ulogd.conf" <<EOF
[global]
logfile="$d/daemon.log"
loglevel=3
plugin="$ULOGD_LIB/ulogd_inpflow_NFCT.so"
plugin="$ULOGD_LIB/ulogd_filter_IP2STR.so"
plugin="$ULOGD_LIB/ulogd_filter_PRINTFLOW.so"
plugin="$ULOGD_LIB/ulogd_output_LOGEMU.so"
stack=ct1:NFCT,ip2str1:IP2STR,print1:PRINTFLOW,emu1:LOGEMU

[ct1]
hash_enable=0
event_mask=0x00000004
netlink_socket_buffer_size=$BUF
# must be larger, or NFCT refuses the size (and would grow it on ENOBUFS)
netlink_socket_buffer_maxsize=$((BUF + 1))

[emu1]
file="$d/ct.log"
sync=0
EOF
		ip netns exec "$NSB" taskset -c 1 ulogd -c "$d/ulogd.conf" -p "$d/ulogd.pid" \
			>"$d/stdout.log" 2>&1 &
		;;
	conntrack-E)
		ip netns exec "$NSB" taskset -c 1 conntrack -E -e DESTROY -b "$BUF" \
			>"$d/ct.log" 2>"$d/daemon.log" &
		;;
	esac
	LOGGER_PID=$!
	PIDS+=("$LOGGER_PID")
	sleep 1	# bound and dumped the (empty) table
}

# uniq_ports: "LINES UNIQUE" of the connections (source, destination port)
# named by the lines on stdin: the first port pair of each line is the
# original direction.  ctgen gives every connection its own pair.
uniq_ports() {
	python3 -c '
import re, sys
pat = re.compile(r"(?:SPT=|sport=)(\d+) (?:DPT=|dport=)(\d+)|^[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,(\d+),(\d+),")
n, seen = 0, set()
for l in sys.stdin:
    m = pat.search(l)
    if m:
        n += 1
        seen.add(m.group(1, 2) if m.group(1) else m.group(3, 4))
print(n, len(seen))'
}

count_logger() {
	local name="$1" d="$2" rx enobufs recovered=0
	case $name in
	sluice-flowfile)
		rx=$(nfdump -R "$d/flows" -o csv -q 2>/dev/null | uniq_ports)
		;;
	*)
		rx=$(uniq_ports <"$d/ct.log")
		;;
	esac
	case $name in
	sluice-*)
		enobufs=$(grep "counters: ct.nfct" "$d/daemon.log" | tail -1 | sed -nE 's/.* enobufs=([0-9]+).*/\1/p')
		recovered=$(grep "counters: ct.nfct" "$d/daemon.log" | tail -1 | sed -nE 's/.* recovered=([0-9]+).*/\1/p')
		;;
	ulogd2)
		enobufs=$(grep -ciE "losing events|buffer size.*reached|ENOBUFS" "$d/daemon.log")
		;;
	conntrack-E)
		enobufs=$(grep -c "ENOBUFS" "$d/daemon.log")
		;;
	esac
	echo "${rx:-0 0} ${enobufs:-0} ${recovered:-0}"
}

RESULTS=$WORK/results.tsv
: >"$RESULTS"
for rate in $RATES; do
	for L in $LOGGERS; do
		d=$WORK/$L-$rate
		ip netns exec "$NSB" conntrack -F >/dev/null 2>&1
		nft_table || die "nftables with conntrack unavailable"
		start_logger "$L" "$d"
		ip netns exec "$NSA" taskset -c 0 "$WORK/ctgen" -c 10.77.0.2 -p $PORT -n $NPORTS \
			-r "$rate" -t "$DUR" >"$d/gen.out" || die "ctgen failed"
		secs=$(sed -n 's/^seconds //p' "$d/gen.out")
		# Every connection destroyed: CLOSE times out after 1 s, then
		# conntrack's garbage collector reaps the entries, in bursts, at
		# intervals it adapts (seconds to a minute).  What it has not
		# reaped after GC_WAIT seconds is flushed (conntrack -F: one burst).
		flushed=0
		for ((i = 0; i < GC_WAIT * 2; i++)); do
			[ "$(ct_count)" = 0 ] && break
			sleep 0.5
		done
		if [ "$(ct_count)" != 0 ]; then
			flushed=$(ct_count)
			ip netns exec "$NSB" conntrack -F >/dev/null 2>&1
		fi
		sleep 1.5	# the last events read and written
		kill -TERM "$LOGGER_PID" 2>/dev/null
		wait "$LOGGER_PID" 2>/dev/null
		n=$(tracked)
		read -r rx uniq enobufs recovered < <(count_logger "$L" "$d")
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rate" "$L" "$n" "$secs" "$rx" "$uniq" \
			"$enobufs" "$recovered" "$flushed" >>"$RESULTS"
		printf '  rate %-6s %-16s tracked %-7s lines %-7s connections %-7s enobufs %-4s recovered %-6s flushed %s\n' \
			"$rate" "$L" "$n" "$rx" "$uniq" "$enobufs" "$recovered" "$flushed" >&2
	done
done

python3 - "$RESULTS" <<'PY' | tee "$WORK/results.md"
import sys
print("| offered rate (made) | logger | connections | destroys received /s | lost | duplicates | ENOBUFS | recovered by resync | flushed |")
print("|---|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    rate, name, n, secs, rx, uniq, enobufs, rec, flushed = line.rstrip("\n").split("\t")
    n, rx, uniq, secs = int(n or 0), int(rx), int(uniq), float(secs or 1)
    offered = "max" if rate == "0" else f"{int(rate):,}/s"
    print(f"| {offered} ({n / secs:,.0f}/s) | {name} | {n:,} | {uniq / secs:,.0f} | "
          f"{max(n - uniq, 0):,} | {rx - uniq:,} | {enobufs} | "
          f"{rec if name.startswith('sluice') else '–'} | {int(flushed):,} |")
PY
DOC=${DOC:-$SRC/docs/BENCHMARKS.md}
if [ "${NODOC:-0}" != 1 ]; then
	BY="bench/conntrack.sh -r \"$RATES\" -t $DUR -B $BUF"
	[ "$LOGGERS" = "sluice-flowfile sluice-logline ulogd2 conntrack-E" ] || BY="$BY -l \"$(echo $LOGGERS)\""
	EXTRA="ulogd2 $(dpkg-query -W -f '${Version}' ulogd2 2>/dev/null || echo none), $(conntrack --version 2>/dev/null | head -1)."
	python3 "$SRC/bench/benchdoc.py" "$DOC" conntrack-tables --by "$BY" --extra "$EXTRA" <"$WORK/results.md" ||
		die "tables not written into $DOC"
fi
