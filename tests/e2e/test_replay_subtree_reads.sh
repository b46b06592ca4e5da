#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# ABI 1.3 subtree_reads(): an NFLOG input parses only the attributes its
# stacks read.  What the outputs see must not change: a pcap stack alone
# (only the payload and timestamp parsed, for the raw link type) writes
# the same bytes as the same stack beside a JSON stack (everything parsed),
# for each link type; that JSON is the one JSON alone writes; and a
# filter's fields (`where` on prefix and mark) are parsed for it although
# the pcap below it does not read them.
. "$(dirname "$0")/lib.sh"
need_cmd python3
CAP="$SRCDIR/tests/data/nflog-mixed.pcap"

run() { # run NAME STACKS...: one configuration, the capture replayed once
	local name=$1
	shift
	{
		echo "instances:"
		echo "  cap: { plugin: replay, file: \"$CAP\" }"
		echo "stacks:"
		printf '  %s\n' "$@"
	} >"$WORK/$name.yaml"
	"$SLUICE" -c "$WORK/$name.yaml" 2>"$WORK/$name.err" ||
		fail "$name: sluice failed: $(cat "$WORK/$name.err")"
}
pcap() { echo "{ plugin: pcap, file: \"$WORK/$1.pcap\", linktype: $2 }"; }
json='{ plugin: decode, ifnames: false }, json'

for lt in raw ethernet nflog; do
	run "alone-$lt" "p: [cap, $(pcap "alone-$lt" $lt)]"
	run "beside-$lt" "p: [cap, $(pcap "beside-$lt" $lt)]" \
		"j: [cap, $json, { plugin: file, file: \"$WORK/beside-$lt.json\" }]"
	[ -s "$WORK/alone-$lt.pcap" ] || fail "$lt: no pcap written"
	cmp "$WORK/alone-$lt.pcap" "$WORK/beside-$lt.pcap" ||
		fail "$lt: the pcap of a stack alone differs from the same stack beside JSON"
done
run json-alone "j: [cap, $json, { plugin: file, file: \"$WORK/json-alone.json\" }]"
cmp "$WORK/json-alone.json" "$WORK/beside-raw.json" || fail "JSON beside pcap differs from JSON alone"
grep -q '"prefix":"sluice-test-out "' "$WORK/json-alone.json" || fail "no prefix in the JSON"

# where reads prefix and mark (need_field), the pcap below it neither
want=$(grep -c '^sluice-test-out ' "$SRCDIR/tests/data/nflog-mixed.log")
[ "$want" -gt 0 ] || fail "no sluice-test-out line in nflog-mixed.log"
run where "w: [cap, { plugin: where, expr: 'prefix == \"sluice-test-out \" and not mark == 77' }, $(pcap where raw)]"
got=$(python3 - "$WORK/where.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
o, n = 24, 0
while o + 16 <= len(d):
	o += 16 + struct.unpack("<I", d[o + 8:o + 12])[0]
	n += 1
print(n)
PY
)
[ "$got" = "$want" ] || fail "where on prefix kept $got records, the capture has $want"
pass "pcap alone = pcap beside JSON (raw, ethernet, nflog); JSON unchanged; where kept $got of 40"
