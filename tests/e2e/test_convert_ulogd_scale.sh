#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `sluice convert ulogd` takes time linear in its input.  Independent of
# machine speed, two shapes are converted at n and 4n stacks, and 4n must
# take less than 8 times the CPU time of n (quadratic: 16; the converter
# that compared every name with every other took 20 times as long):
#   own    every stack its own NFLOG input (own group) and LOGEMU file
#   shared stacks whose inputs read 64 groups and 3 conntrack events (one sluice instance per group: the rest alias it), all
#          ending in one LOGEMU output
#   same   one stack line n times (the names IN_OUT, IN_OUT_2... each
#          stack's; the old converter searched them from _2 and gave up
#          at _999, writing duplicate keys)
# The results are checked too: `sluice -t` accepts them, with the counts.
. "$(dirname "$0")/lib.sh"
FACTOR=${SLUICE_TEST_TIME_FACTOR:-1}
[[ "$FACTOR" =~ ^[0-9]+$ ]] && [ "$FACTOR" -ge 1 ] ||
	fail "SLUICE_TEST_TIME_FACTOR must be a whole number >= 1, not '$FACTOR'"
cd "$WORK"

# gen SHAPE N: a ulogd.conf of that shape with N stacks.
gen() {
	awk -v shape="$1" -v n="$2" -v dir="$WORK" 'BEGIN {
	print "[global]"
	if (shape == "own") {
		for (i = 0; i < n; i++)
			printf "stack=log%d:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR," \
			       "print1:PRINTPKT,emu%d:LOGEMU\n", i, i
		for (i = 0; i < n; i++)
			printf "[log%d]\ngroup=%d\nnetlink_socket_buffer_size=217088\n" \
			       "[emu%d]\nfile=\"%s/emu%d.log\"\nsync=1\n", i, i, i, dir, i
	} else if (shape == "same") {
		for (i = 0; i < n; i++)
			print "stack=log1:NFLOG,base1:BASE,ifi1:IFINDEX,ip2str1:IP2STR,print1:PRINTPKT,emu1:LOGEMU"
		printf "[log1]\ngroup=1\n[emu1]\nfile=\"%s/emu.log\"\n", dir
	} else {
		for (i = 0; i < n; i++)
			if (i % 2)
				printf "stack=ct%d:NFCT,ip2str1:IP2STR,print1:PRINTFLOW,emu1:LOGEMU\n", i
			else
				printf "stack=log%d:NFLOG,base1:BASE,print1:PRINTPKT,emu1:LOGEMU\n", i
		for (i = 0; i < n; i++)
			if (i % 2)
				printf "[ct%d]\nhash_enable=0\nevent_mask=%d\n", i, 2 ^ (int(i / 2) % 3)
			else
				printf "[log%d]\ngroup=%d\n", i, int(i / 2) % 64
		printf "[emu1]\nfile=\"%s/emu.log\"\n", dir
	}
	}'
}

# conv FILE: convert FILE (YAML in FILE.yaml); prints the CPU milliseconds
# it took (user + system: other load, which a wall clock counts, does not).
conv() {
	local TIMEFORMAT='%3U %3S' rc=0
	# The quadratic converter took minutes on large files: give up long before ctest.
	{ time timeout $((60 * FACTOR)) "$SLUICE" convert ulogd "$1" >"$1.yaml" 2>"$1.err" || rc=$?; } 2>"$1.time"
	[ "$rc" != 124 ] || fail "$1: convert did not finish in $((60 * FACTOR)) s"
	[ "$rc" = 0 ] || fail "$1: convert failed (exit $rc): $(head -c 500 "$1.err")"
	awk '{ printf "%d\n", ($1 + $2) * 1000 }' "$1.time"
}

# best FILE: the fastest of three conversions, in milliseconds.
best() {
	local b=999999999 t i
	for i in 1 2 3; do
		t=$(conv "$1")
		[ "$t" -lt "$b" ] && b=$t
	done
	echo "$b"
}

report=""
n=2000
for shape in own shared same; do
	gen "$shape" "$n" >"$shape-1.conf"
	gen "$shape" $((4 * n)) >"$shape-4.conf"
	t1=$(best "$shape-1.conf")
	t4=$(best "$shape-4.conf")
	# Below 10 ms a run is mostly process start: count it as 10.
	[ "$t1" -ge 10 ] || t1=10
	[ $((t4 * 10)) -lt $((t1 * 80)) ] ||
		fail "$shape: $n stacks took $t1 ms, $((4 * n)) took $t4 ms: ratio $((t4 * 10 / t1))/10, not under 8"
	report+="$shape $n/$((4 * n)) stacks: $t1/$t4 ms; "
	"$SLUICE" -t -c "$shape-4.conf.yaml" >"$shape.t" 2>&1 || fail "$shape: sluice -t refused: $(head -c 500 "$shape.t")"
done
grep -qx "own-4.conf.yaml: configuration OK ($((4 * 4 * n)) instances, $((4 * n)) stacks)" own.t ||
	fail "own: $(head -1 own.t)"
# 64 NFLOG groups and 3 first readers of conntrack events (1 new, 2 update,
# 4 destroy) are the inputs; the rest read through them.
grep -qx "shared-4.conf.yaml: configuration OK (.* instances, $((4 * n)) stacks)" shared.t ||
	fail "shared: $(head -1 shared.t)"
[ "$(grep -c '^  log[0-9]*:$' shared-4.conf.yaml)" = 64 ] || fail "shared: not 64 NFLOG instances"
[ "$(grep -c '^  ct[0-9]*:$' shared-4.conf.yaml)" = 3 ] || fail "shared: not 3 NFCT instances"
[ "$(grep -c 'reads what \[' shared-4.conf.err)" = $((4 * n - 67)) ] || fail "shared: not $((4 * n - 67)) aliases"
grep -qx "same-4.conf.yaml: configuration OK (4 instances, $((4 * n)) stacks)" same.t ||
	fail "same: $(head -1 same.t)"
grep -q "^  log1_emu1_$((4 * n)): \[log1, decode, logline, emu1\]$" same-4.conf.yaml || fail "same: no stack log1_emu1_$((4 * n))"
pass "${report%; } (time factor $FACTOR)"
