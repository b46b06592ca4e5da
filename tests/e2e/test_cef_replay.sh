#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cef on recorded captures (tests/data): replay -> decode -> cef, cef with
# format: leef, and json, each into a file, read back by cef_check.py (the
# parser written from the standard; see test_netns_cef.sh).  The NFLOG
# capture gets a hostile prefix (nflog_prefix.py: pipe, backslash, '=',
# LF, CR, TAB, controls, DEL, valid and invalid UTF-8, a C1 control) on
# every record; the Ethernet capture has no prefix at all (signature and
# name "-"), and through flow its flow records.  IPv4 and IPv6, inbound
# and outbound, TCP, UDP and ICMP.
. "$(dirname "$0")/lib.sh"
need_cmd python3
DATA="$SRCDIR/tests/data"
[ -f "$DATA/nflog-mixed.pcap" ] || skip "no captures in tests/data"

# run_cef CAPTURE PREFIX_HEX...: the three stacks on CAPTURE, checked;
# $MID: elements between decode and the converter (flow).
MID=
run_cef() {
	local cap="$1"
	shift
	rm -f "$WORK"/out.*
	cat >"$WORK/c.yaml" <<YAML
instances:
  in: {plugin: replay, file: "$cap"}
stacks:
  cef: [in, decode, $MID cef, {plugin: file, file: "$WORK/out.cef"}]
  leef: [in, decode, $MID {plugin: cef, format: leef}, {plugin: file, file: "$WORK/out.leef"}]
  json: [in, decode, $MID json, {plugin: file, file: "$WORK/out.json"}]
YAML
	"$SLUICE" -c "$WORK/c.yaml" >"$WORK/s.log" 2>&1 || { cat "$WORK/s.log"; fail "sluice failed on $cap"; }
	python3 "$SRCDIR/tests/e2e/cef_check.py" "$WORK/out.cef" "$WORK/out.leef" "$WORK/out.json" "$@" ||
		fail "CEF/LEEF lines of $cap do not read back"
}

P=$(printf 'a|b\\c=d\ne\rCEF:0|x|y\tg\001\033[31m\177\303\251\377\302\233\342\202 end ' | od -An -tx1 | tr -d ' \n')
python3 "$SRCDIR/tests/e2e/nflog_prefix.py" "$DATA/nflog-mixed.pcap" "$WORK/hostile.pcap" "$P"
run_cef "$WORK/hostile.pcap" "$P"
run_cef "$DATA/eth-mixed.pcap"
# flow records: their tuple, start and end, bytes
MID="flow,"
run_cef "$DATA/eth-mixed.pcap"
grep -q 'start=[0-9]* end=[0-9]* src=10.99.0.1 dst=10.99.0.2 proto=ICMP in=' "$WORK/out.cef" ||
	fail "no flow record as CEF: $(head -3 "$WORK/out.cef")"
pass "NFLOG with a hostile prefix, Ethernet captures and flows read back"
