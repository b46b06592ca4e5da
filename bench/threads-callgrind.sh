#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# By hand (not part of run.sh): instructions per record of the INPUT
# thread (the main thread, which runs the input and every thread-less
# output) for `replay -> decode -> json -> file` alone and for the
# four-stack fan-out (pcap, logline -> file, json -> file, logline -> UDP
# syslog on its own thread), counted by callgrind with one output file per
# thread.  The replay stands in for nflog (what nflog itself costs is the
# same in both).  Like bench/callgrind.sh: each runs with the capture once
# and three times; the difference over twice the records is the cost per
# record.  TOP functions of the input thread's three-pass run are listed.
#   bench/threads-callgrind.sh [-n RECORDS] [-b BUILDDIR] [-t TOP]
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$SRC/build N=20000 TOP=15 PORT=${PORT:-35514}
while getopts "n:b:t:" o; do
	case $o in
	n) N=$OPTARG ;; b) BUILD=$OPTARG ;; t) TOP=$OPTARG ;;
	*) sed -n '12p' "$0" >&2; exit 64 ;;
	esac
done
W=$(mktemp -d /tmp/sluice-thrcg.XXXXXX)
trap 'kill $SINK 2>/dev/null; rm -rf "$W"' EXIT
export SLUICE_PLUGIN_PATH=$BUILD/plugins
${CC:-cc} -O2 -Wall -o "$W/gen_nflog" "$SRC/bench/gen_nflog.c"
"$W/gen_nflog" -o "$W/mix.pcap" -n "$N" -m mix 2>/dev/null
python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
s.bind(("127.0.0.1", int(sys.argv[1])))
while True: s.recv(65536)' "$PORT" &
SINK=$!
sleep 0.3
conf() { # conf KIND LOOPS
	local r="{ plugin: replay, file: $W/mix.pcap, loop: $2 }" d="{ plugin: decode, ifnames: false }"
	echo "instances:"
	echo "  in: $r"
	echo "  dec: $d"
	echo "stacks:"
	echo "  json: [in, dec, json, { plugin: file, file: $W/out.json }]"
	[ "$1" = json ] && return
	echo "  pcap: [in, { plugin: pcap, file: $W/out.pcap }]"
	echo "  text: [in, dec, logline, { plugin: file, file: $W/out.log }]"
	echo "  sys: [in, dec, logline, { plugin: syslog, transport: udp, address: \"127.0.0.1:$PORT\" }]"
}
main_ir() { # main_ir KIND LOOPS: Ir of the main thread
	conf "$1" "$2" >"$W/c.yaml"
	rm -f "$W"/cg.$1.$2* "$W"/out.*
	valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$W/cg.$1.$2" \
		"$BUILD/core/sluice" -c "$W/c.yaml" >"$W/log" 2>&1 || { tail -5 "$W/log" >&2; exit 1; }
	sed -n 's/^summary: //p' "$W/cg.$1.$2-01"
}
for k in json fan4; do
	a=$(main_ir $k 1) b=$(main_ir $k 3)
	awk -v k=$k -v a="$a" -v b="$b" -v n="$N" \
		'BEGIN { printf "%-5s input thread: %6.0f instructions per record\n", k, (b - a) / (2 * n) }'
	callgrind_annotate --threshold=100 "$W/cg.$k.3-01" 2>/dev/null |
		awk -v n=$((3 * N)) -v top="$TOP" '
			/^-+$/ { sep++; next }
			sep >= 5 && $1 ~ /^[0-9,]+$/ && shown < top {
				ir = $1; gsub(",", "", ir); f = $0
				sub(/^[^)]*\) +/, "", f); sub(/ \[.*$/, "", f); sub(/^.*\//, "", f)
				printf "    %7.1f  %s\n", ir / n, f; shown++ }'
done
