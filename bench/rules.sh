#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The ruleset re-read of nflog's `rules: true` (issue 22: 10,000 rules in
# under 100 ms), in a network namespace of its own.
#
#   sudo bench/rules.sh [-n "1000 10000"] [-r READS] [-c CPU] [-b BUILDDIR]
#
# For each size N, loads a ruleset of N rules with `log group` statements
# (distinct prefixes), counters and comments, half of them ending in a
# verdict, spread over the input and output base chains and a regular chain
# both jump to, with a named verdict map, and has bench/rules_read.c (pinned
# to CPU, default 1) read it READS times (default 11) the way nflog does
# (the kernel's netlink dump, plugins/common/rule_dump.c) and the way it did
# before (libnftables' JSON listing, read by rule_index_json.c): the medians
# of the whole re-read and of its parts (the kernel's dump or libnftables'
# listing; sluice's parsing and index).  rules_read -c also checks that both
# ways built the same index (the script fails if not).  `nft -j list
# ruleset` timed as a command is the reference.
# Results: a markdown table on stdout and in docs/BENCHMARKS.md between its
# rules-tables markers (DOC=path for another copy, NODOC=1 none).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILDDIR:-${BUILD:-$SRC/build}}
SIZES="1000 10000"
READS=11
CPU=1
while getopts "n:r:c:b:" o; do
	case $o in
	n) SIZES=$OPTARG ;;
	r) READS=$OPTARG ;;
	c) CPU=$OPTARG ;;
	b) BUILD=$OPTARG ;;
	*) sed -n '7p' "$0" >&2; exit 64 ;;
	esac
done
die() { echo "rules.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (a network namespace, nft)"
command -v nft >/dev/null || die "needs nft"
READER=$BUILD/bench/rules_read
[ -x "$READER" ] || die "no $READER (cmake --build $BUILD --target rules_read)"

NS=sbrules$$
WORK=$(mktemp -d /tmp/sluice-bench-rules.XXXXXX)
cleanup() {
	ip netns del "$NS" 2>/dev/null || true
	rm -rf "$WORK"
}
trap cleanup EXIT
ip netns add "$NS" || die "cannot create a network namespace"

# N rules: a third in input, a third in output, a third in the regular
# chain `common` both jump to; rule i logs group 7 prefix "r<i> " (a key of
# its own), has a counter and a comment, and every other one ends in a verdict.
ruleset() {
	awk -v n="$1" 'BEGIN {
		print "table inet sbrules {"
		print "\tmap ports { type inet_service : verdict; elements = { 22 : jump common, 80 : accept } }"
		split("input output common", chains, " ")
		for (c = 1; c <= 3; c++) {
			print "\tchain " chains[c] " {"
			if (c < 3) {
				print "\t\ttype filter hook " chains[c] " priority 0; policy accept;"
				print "\t\ttcp dport vmap @ports"
				print "\t\tudp dport 53 jump common"
			}
			for (i = c; i <= n; i += 3) {
				v = i % 2 ? " accept" : ""
				printf "\t\tip saddr 10.%d.%d.%d tcp dport %d counter log group 7 prefix \"r%d \"%s comment \"rule %d\"\n",
					int(i / 65536) % 256, int(i / 256) % 256, i % 256, 1024 + i % 60000, i, v, i
			}
			print "\t}"
		}
		print "}"
	}'
}

RESULTS=$WORK/results.tsv
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
for n in $SIZES; do
	ruleset "$n" >"$WORK/rules.nft"
	ip netns exec "$NS" nft flush ruleset
	ip netns exec "$NS" nft -f "$WORK/rules.nft" || die "nft -f of $n rules failed"
	# the reference: nft's own JSON listing, as a command
	t0=$(date +%s%N)
	ip netns exec "$NS" nft -j list ruleset >/dev/null
	nft_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	out=$(ip netns exec "$NS" taskset -c "$CPU" "$READER" -n "$READS" -c) ||
		die "rules_read failed on $n rules (the two readers disagree, or a read failed)"
	echo "rules.sh: $n rules: $out"
	case " $out " in *" log_rules=$n "*) ;; *) die "want $n rules with a log statement read: $out" ;; esac
	echo "$n $nft_ms $out" >>"$RESULTS"
done

BY="bench/rules.sh -n '$SIZES' -r $READS"
{
	echo "| rules | netlink re-read, wall (kernel dump + sluice) | netlink re-read, CPU | JSON re-read, wall (libnftables listing + sluice) | \`nft -j list ruleset\` | dump size |"
	echo "|---:|---:|---:|---:|---:|---:|"
	awk '{
		for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
		printf "| %s | **%.1f ms** (%.1f + %.1f) | %.1f ms | %.1f ms (%.1f + %.1f) | %d ms | %.0f KiB |\n",
			v["log_rules"], v["netlink_ms"], v["netlink_kernel_ms"], v["netlink_parse_ms"], v["netlink_cpu_ms"],
			v["json_ms"], v["json_list_ms"], v["json_parse_ms"], $2, v["netlink_bytes"] / 1024
	}' "$RESULTS"
	echo
	echo "Medians of $READS reads each; both readers built the same index (rules_read -c). CPU: the reading thread's (CLOCK_THREAD_CPUTIME_ID), the kernel's work for its requests included; wall time is what a loaded machine adds. Load average before the run: $LOAD."
} >"$WORK/results.md"
cat "$WORK/results.md"
DOC=${DOC:-$SRC/docs/BENCHMARKS.md}
[ "${NODOC:-0}" = 1 ] && DOC=
if [ -n "$DOC" ]; then
	python3 "$SRC/bench/benchdoc.py" "$DOC" rules-tables --by "$BY" \
		--extra "nft $(nft --version 2>/dev/null | awk '{print $2}')." <"$WORK/results.md" ||
		echo "rules.sh: $DOC not updated" >&2
fi
