#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Checking a configuration takes time linear in its size.  `sluice -t`
# checks 100,000 named instances, and a stack of 10,000 elements, and the
# trees it prints are right.  No bound in milliseconds: on a busy machine
# (or under a sanitizer) a CPU second is worth less, so the only timing
# oracle is growth, independent of machine speed: four shapes are each
# checked at n and 4n elements, and 4n must take less than 6 times as long
# (quadratic: 16):
#   named  n named instances, in stacks of four
#   chain  one stack of n elements (generated names: s.decode, s.decode2...)
#   fan    n stacks sharing one three-element prefix (n siblings, one
#          instance in n stacks)
#   anon   n unnamed instances, in stacks of four that share nothing
# The trees are checked too: counts, names, the stacks of a shared instance.
. "$(dirname "$0")/lib.sh"
cd "$WORK"

# gen SHAPE N: a configuration of that shape with N instances (N/4 stacks).
gen() {
	awk -v shape="$1" -v n="$2" -v dir="$WORK" 'BEGIN {
	if (shape == "named") {
		print "instances:"
		for (i = 0; i < n / 4; i++)
			printf "  in%d: { plugin: nflog, group: %d }\n  d%d: { plugin: decode }\n" \
			       "  l%d: { plugin: logline }\n  o%d: { plugin: file, file: %s/o%d.log }\n",
			       i, i % 65536, i, i, i, dir, i
		print "stacks:"
		for (i = 0; i < n / 4; i++)
			printf "  s%d: [in%d, d%d, l%d, o%d]\n", i, i, i, i, i
	} else if (shape == "chain") {
		printf "stacks:\n  s: [{ plugin: nflog, group: 1 }"
		for (i = 0; i < n - 3; i++)
			printf ", decode"
		printf ", logline, { plugin: file, file: %s/o.log }]\n", dir
	} else if (shape == "fan") {
		print "instances:\n  fw: { plugin: nflog, group: 1 }\nstacks:"
		for (i = 0; i < n; i++)
			printf "  s%d: [fw, decode, logline, { plugin: file, file: %s/o%d.log }]\n",
			       i, dir, i
	} else if (shape == "anon") {
		print "stacks:"
		for (i = 0; i < n / 4; i++)
			printf "  s%d: [{ plugin: nflog, group: %d, qthreshold: %d }, decode, logline, " \
			       "{ plugin: file, file: %s/o%d.log }]\n", i, i % 65536, int(i / 65536) + 1, dir, i
	}
	}'
}

# check FILE: run `sluice -t` on FILE (tree in FILE.out); prints the CPU
# milliseconds it took (user + system: other load on the machine, which
# a wall clock would count, does not).
check() {
	local TIMEFORMAT='%3U %3S' rc=0
	# The old quadratic code took minutes: give up before ctest would (a
	# deadline against a hang, not a speed limit: the ratios below are).
	{ time timeout $((60 * TIME_FACTOR)) "$SLUICE" -t -c "$1" >"$1.out" 2>"$1.err" || rc=$?; } 2>"$1.time"
	[ "$rc" != 124 ] || fail "$1: sluice -t did not finish in $((60 * TIME_FACTOR)) s"
	[ "$rc" = 0 ] || fail "$1: sluice -t failed (exit $rc): $(head -c 500 "$1.err")"
	awk '{ printf "%d\n", ($1 + $2) * 1000 }' "$1.time"
}

# growth SHAPE: the fastest of three checks of SHAPE-1.yaml and of
# SHAPE-4.yaml, taken in turns (a change in the machine's load falls on
# both alike), as "T1 T4" in milliseconds.
growth() {
	local b1=999999999 b4=999999999 t i
	for i in 1 2 3; do
		t=$(check "$1-1.yaml")
		[ "$t" -lt "$b1" ] && b1=$t
		t=$(check "$1-4.yaml")
		[ "$t" -lt "$b4" ] && b4=$t
	done
	echo "$b1 $b4"
}

# expect_ok FILE INSTANCES STACKS
expect_ok() {
	grep -qx "$1: configuration OK ($2 instances, $3 stacks)" "$1.out" ||
		fail "$1: $(head -1 "$1.out")"
	[ ! -s "$1.err" ] || fail "$1: unexpected messages: $(head -c 500 "$1.err")"
}

report=""

# Growth: n and 4n of each shape (n small enough that the 24 checks
# finish well inside ctest's timeout on a busy machine); chain at n is a
# bound of the issue, a 10,000-element stack.
for spec in named:12500 chain:10000 fan:12500 anon:12500; do
	shape=${spec%:*} n=${spec#*:}
	gen "$shape" "$n" >"$shape-1.yaml"
	gen "$shape" $((4 * n)) >"$shape-4.yaml"
	read -r t1 t4 < <(growth "$shape")
	# Below 10 ms a run is mostly process start: count it as 10.
	[ "$t1" -ge 10 ] || t1=10
	[ $((t4 * 10)) -lt $((t1 * 60)) ] ||
		fail "$shape: $n elements took $t1 ms, $((4 * n)) took $t4 ms: ratio $((t4 * 10 / t1))/10, not under 6"
	report+="$shape $n/$((4 * n)): $t1/$t4 ms; "
done
# The other bound of the issue: 100k named instances (checked once; the
# growth above is what says it is linear).
gen named 100000 >named-100000.yaml
report+="named 100000: $(check named-100000.yaml) ms; "
expect_ok named-100000.yaml 100000 25000
[ "$(grep -c '^in[0-9]* (nflog group=' named-100000.yaml.out)" = 25000 ] || fail "named: not 25000 inputs"
grep -qx "      └─ o24999 (file file=$WORK/o24999.log)  \[s24999\]" named-100000.yaml.out ||
	fail "named: o24999 missing: $(tail -1 named-100000.yaml.out)"
expect_ok chain-1.yaml 10000 1
# Names as they always were: s.decode, then s.decode2 ... s.decode9997.
[ "$(grep -c ' s\.decode[0-9]* (decode)  \[s\]$' chain-1.yaml.out)" = 9997 ] ||
	fail "chain: not 9997 decode elements"
grep -q '└─ s\.decode (decode)  \[s\]$' chain-1.yaml.out || fail "chain: no s.decode"
grep -q '└─ s\.decode9997 (decode)  \[s\]$' chain-1.yaml.out || fail "chain: no s.decode9997"
grep -q "└─ s\.file (file file=$WORK/o.log)  \[s\]$" chain-1.yaml.out || fail "chain: no s.file"
expect_ok fan-4.yaml 50003 50000
# The shared prefix lists every stack, in order, once.
head -2 fan-4.yaml.out | tail -1 >fw.line
[ "$(grep -o ', s[0-9]*' fw.line | wc -l)" = 49999 ] || fail "fan: fw does not list 50000 stacks"
grep -q '^fw (nflog group=1)  \[s0, s1, s2, .*, s49998, s49999\]$' fw.line || fail "fan: fw line: $(head -c 200 fw.line)"
[ "$(grep -c '^      [├└]─ s[0-9]*\.file (file' fan-4.yaml.out)" = 50000 ] || fail "fan: not 50000 outputs"
expect_ok anon-4.yaml 50000 12500
# Checking creates no output file.
[ -z "$(find "$WORK" -name 'o*.log' | head -1)" ] || fail "sluice -t created output files"
pass "${report%; } (time factor $TIME_FACTOR)"
