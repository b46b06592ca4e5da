#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# End to end on a shipped capture: replay tests/data/nflog-mixed.pcap (an
# NFLOG capture of ICMP, TCP and UDP over IPv4 and IPv6) through decode and
# logline into a file, and compare with the expected kernel-format lines in
# tests/data/nflog-mixed.log.  Interface names are left out (ifnames:
# false): this machine's ifindexes are not the capture's.
. "$(dirname "$0")/lib.sh"
cat >"$WORK/c.yaml" <<CONF
instances:
  cap: { plugin: replay, file: "$SRCDIR/tests/data/nflog-mixed.pcap" }
stacks:
  text: [cap, { plugin: decode, ifnames: false }, logline, { plugin: file, file: "$WORK/out.log" }]
CONF
"$SLUICE" -c "$WORK/c.yaml" 2>"$WORK/err" || fail "sluice failed: $(cat "$WORK/err")"
diff -u "$SRCDIR/tests/data/nflog-mixed.log" "$WORK/out.log" >"$WORK/diff" ||
	fail "output differs from tests/data/nflog-mixed.log:
$(head -40 "$WORK/diff")"
grep -q "counters: text.file (file): in=40 out=40 dropped=0 errors=0" "$WORK/err" ||
	fail "unexpected counters: $(cat "$WORK/err")"
pass "40 records as expected"
