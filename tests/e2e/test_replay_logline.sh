#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# replay -> decode -> logline -> file: one text line per packet of each test
# capture, the NFLOG one with its rule's prefix, and the network and
# transport part of the text (from SRC= on) the same whatever the link type
# the traffic was captured with.  Then the NFLOG capture with a hostile
# prefix in every record ("\nFAKE LINE", ESC sequences, backslash, tab,
# DEL, invalid UTF-8): still one line per packet, the prefix escaped as
# /dev/kmsg would show it, valid UTF-8 kept.
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
	timeout $((20 * TIME_FACTOR)) "$SLUICE" -c "$WORK/c.yaml" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "sluice failed on $f"; }
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
# "\nFAKE LINE \e[2J\e]0;pwned\a" + backslash, tab, DEL, U+00E9, \xff, \xc2\x9b (C1 CSI)
EVIL=$(printf 'x\nFAKE LINE \033[2J\033]0;pwned\007 a\\b\tc\177 \303\251\377\302\233 ' | od -An -tx1 | tr -d ' \n')
python3 "$SRCDIR/tests/e2e/nflog_prefix.py" "$DATA/nflog-mixed.pcap" "$WORK/evil.pcap" "$EVIL"
cat >"$WORK/evil.yaml" <<YAML
stacks:
  s1: [{plugin: replay, file: "$WORK/evil.pcap"}, decode, logline, {plugin: file, file: "$WORK/evil.txt"}]
YAML
timeout $((20 * TIME_FACTOR)) "$SLUICE" -c "$WORK/evil.yaml" >"$WORK/log" 2>&1 || { cat "$WORK/log"; fail "sluice failed on the hostile prefix"; }
n=$(grep -c '' "$WORK/evil.txt")
[ "$n" = 40 ] || { cat -A "$WORK/evil.txt" | head -4; fail "hostile prefix: $n lines for 40 packets"; }
want='x\x0aFAKE LINE \x1b[2J\x1b]0;pwned\x07 a\x5cb\x09c\x7f '$'\303\251''\xff\xc2\x9b IN='
[ "$(grep -cF "$want" "$WORK/evil.txt")" = 40 ] || { cat -A "$WORK/evil.txt" | head -2; fail "prefix not escaped"; }
# nothing but printable ASCII and valid UTF-8 (no C0, DEL or C1) in the file
python3 -c '
import sys
t = open(sys.argv[1], "rb").read().decode("utf-8")
bad = [c for c in t if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f]
sys.exit("control characters: %r" % bad[:5] if bad else 0)' "$WORK/evil.txt" || fail "control bytes in the output"
diff <(sed 's/.*SRC=/SRC=/' "$WORK/evil.txt") <(sed 's/.*SRC=/SRC=/' "$nf") >&2 || fail "hostile prefix changed the rest of the line"
grep -q "counters: s1.file (file): .* escaped=0" "$WORK/log" || { cat "$WORK/log"; fail "file had to escape logline's text"; }
echo "ok: hostile prefix: 40 lines, escaped"
pass "every capture"
