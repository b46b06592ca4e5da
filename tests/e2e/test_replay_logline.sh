#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# replay -> decode -> logline -> file: one text line per packet of each test
# capture, the NFLOG one with its rule's prefix, and the network and
# transport part of the text (from SRC= on) the same whatever the link type
# the traffic was captured with.
. "$(dirname "$0")/lib.sh"

DATA="$SRCDIR/tests/data"
for p in replay decode logline file; do
	[ -f "$SLUICE_PLUGIN_PATH/$p.so" ] || skip "plugin $p not built"
done

ref=""
while read -r f n; do
	cat >"$WORK/c.yaml" <<YAML
stacks:
  s1:
    - {plugin: replay, file: "$DATA/$f"}
    - decode
    - logline
    - {plugin: file, file: "$WORK/$f.txt"}
YAML
	timeout 20 "$SLUICE" -c "$WORK/c.yaml" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "sluice failed on $f"; }
	lines=$(wc -l <"$WORK/$f.txt")
	[ "$lines" = "$n" ] || { cat "$WORK/log"; fail "$f: $lines lines, expected $n"; }
	sed 's/.*SRC=/SRC=/' "$WORK/$f.txt" >"$WORK/$f.l3"
	if [ -z "$ref" ]; then
		ref="$WORK/$f.l3"
	else
		diff -u "$ref" "$WORK/$f.l3" >&2 || fail "$f: text differs from $(basename "$ref" .l3)'s"
	fi
	echo "ok: $f: $lines lines"
done <"$DATA/counts.txt"

nf="$WORK/nflog-mixed.pcap.txt"
[ "$(grep -c '^sluice-test IN=' "$nf")" -gt 0 ] || fail "no input-hook line with the prefix"
[ "$(grep -c '^sluice-test-out IN= OUT=' "$nf")" -gt 0 ] || fail "no output-hook line with the prefix"
[ "$(grep -vc '^sluice-test' "$nf")" = 0 ] || fail "lines without the prefix"
grep -q 'PROTO=ICMPv6 TYPE=128' "$nf" || fail "no ICMPv6 echo request"
grep -q 'PROTO=TCP .*SYN' "$nf" || fail "no TCP SYN"
grep -q 'PROTO=UDP .*DPT=9999' "$nf" || fail "no UDP to port 9999"
pass "every capture"
