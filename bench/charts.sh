#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Draws the benchmark charts (issue 21) from the result files the
# benchmarks keep, without running anything:
#
#   bench/charts.sh [DIR]        (default docs/charts)
#
# DIR/live.tsv (bench/run.sh's results, copied there when it writes
# docs/BENCHMARKS.md) gives loss-vs-rate.svg and cpu-per-packet.svg,
# DIR/outputs.tsv (bench/outputs.sh's) gives outputs.svg; each into DIR.
# bench/charts_data.py turns the results into gnuplot's data with the
# tables' arithmetic, bench/charts.gp draws.  Needs gnuplot (Debian
# gnuplot-nox) and python3.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-$TOP/docs/charts}
command -v gnuplot >/dev/null || { echo "charts.sh: needs gnuplot (apt-get install gnuplot-nox)" >&2; exit 1; }
[ -e "$DIR/live.tsv" ] || [ -e "$DIR/outputs.tsv" ] || { echo "charts.sh: no live.tsv or outputs.tsv in $DIR" >&2; exit 1; }
T=$(mktemp -d /tmp/sluice-charts.XXXXXX)
trap 'rm -rf "$T"' EXIT
python3 "$TOP/bench/charts_data.py" "$DIR" "$T"
gnuplot -e "D='$T'; O='$DIR'" "$TOP/bench/charts.gp"
for f in loss-vs-rate cpu-per-packet outputs; do
	[ "$DIR/$f.svg" -nt "$T" ] && echo "charts.sh: $DIR/$f.svg" >&2
done
exit 0
