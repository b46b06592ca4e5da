#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Instances no stack uses get one warning per plugin, with a count, not
# one per instance: a generated file with 527,980 of them made a reload
# log 527,980 lines.  `sluice -t` of 20,000 unused logline instances, 3
# unused decode instances and one unused json instance prints three
# warnings, at each plugin's first unused instance, and still passes.
. "$(dirname "$0")/lib.sh"
cd "$WORK"
N=20000
awk -v n=$N -v dir="$WORK" 'BEGIN {
	print "instances:"
	print "  src: {plugin: nflog, group: 7}"
	for (i = 0; i < n; i++)
		printf "  l%d: {plugin: logline}\n", i
	print "  d0: {plugin: decode}\n  d1: {plugin: decode}\n  d2: {plugin: decode}"
	print "  j: {plugin: json}"
	printf "stacks:\n  a: [src, decode, logline, {plugin: file, file: %s/o.log}]\n", dir
}' >s.yaml
"$SLUICE" -t -c s.yaml >out 2>err || fail "sluice -t failed: $(tail -5 err)"
grep "not used" err >warnings || true
[ "$(wc -l <warnings)" = 3 ] ||
	fail "expected 3 warnings, got $(wc -l <warnings): $(head -5 warnings)"
grep -qxF "s.yaml:3:3: warning: $N instances of plugin 'logline' are not used by any stack ('l0', 'l1', 'l2', ...)" warnings ||
	fail "no counted logline warning: $(cat warnings)"
grep -qxF "s.yaml:$((N + 3)):3: warning: 3 instances of plugin 'decode' are not used by any stack ('d0', 'd1', 'd2')" warnings ||
	fail "no counted decode warning: $(cat warnings)"
grep -qxF "s.yaml:$((N + 6)):3: warning: instance 'j' is not used by any stack" warnings ||
	fail "no warning for the one json instance: $(cat warnings)"
pass "one warning per plugin for $((N + 4)) unused instances"
