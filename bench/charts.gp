# SPDX-License-Identifier: GPL-2.0-or-later
# The benchmark charts (issue 21), drawn from bench/charts_data.py's files:
#
#   gnuplot -e "D='TMP'; O='OUTDIR'" bench/charts.gp
#
# O/loss-vs-rate.svg    loss against offered rate, every logger of the live
#                       table, one panel per payload size (live.tsv)
# O/cpu-per-packet.svg  CPU µs per packet at the generator's full rate,
#                       the loggers side by side (live.tsv)
# O/outputs.svg         records per sluice CPU second of each output,
#                       against Vector's sizing figure and 10x it (outputs.tsv)
# A chart whose data is missing is not drawn (and an old one stays).
load D.'/vars.gp'

set terminal svg size 1100,680 dynamic font "sans,12" background "white"
set encoding utf8
set termoption noenhanced
set grid ytics lc rgb "#dddddd"
set border 3
set tics nomirror
set key outside right top Left reverse samplen 2 spacing 1.1 font "sans,10"

# Seventeen loggers: eight colours, then the same colours dashed.
set linetype 1 lc rgb "#1b9e77" pt 7
set linetype 2 lc rgb "#d95f02" pt 5
set linetype 3 lc rgb "#7570b3" pt 9
set linetype 4 lc rgb "#e7298a" pt 11
set linetype 5 lc rgb "#66a61e" pt 13
set linetype 6 lc rgb "#e6ab02" pt 6
set linetype 7 lc rgb "#a6761d" pt 4
set linetype 8 lc rgb "#444444" pt 8
set linetype cycle 8

nsizes = words(SIZES)
if (nsizes > 0) {
	set output O.'/loss-vs-rate.svg'
	# the panels above, one legend for all of them below
	set multiplot layout 1, nsizes margins 0.07, 0.98, 0.42, 0.83 spacing 0.07, 0 \
		title "Loss against offered rate\n(".LIVE_NOTE.")" font "sans,13"
	do for [k = 1:nsizes] {
		s = word(SIZES, k)
		set title s."-byte payloads"
		set xlabel "offered packets/s (thousands)"
		set ylabel "loss % (kernel's count − output's) ÷ kernel's"
		set yrange [-2:100]
		set xrange [0:*]
		if (k == 1) { set key at screen 0.5, 0.31 center top vertical maxrows 9 width 2 font "sans,11" } else { unset key }
		# block i is LOGGERS[i + 1] in every panel; the legend (first panel)
		# comes from NaN plots, so it names loggers the panel has no data of
		plot for [i = 0:NLOGGERS - 1] D.'/loss-'.s.'.dat' index i using ($1 / 1000):2 \
			with linespoints lt (i + 1) dt 1 + (i >= 8) + (i >= 16) lw 1.5 ps 0.8 notitle, \
			for [i = 1:(k == 1 ? NLOGGERS : 0)] NaN with linespoints lt i dt 1 + (i > 8) + (i > 16) lw 1.5 ps 0.8 title LOGGERS[i]
	}
	unset multiplot
	unset title
	set xrange [*:*]
	set yrange [*:*]

	set output O.'/cpu-per-packet.svg'
	set title "CPU µs per packet at the generator's full rate, median of rounds\n(".LIVE_NOTE.")" font "sans,13"
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.85 border -1
	set boxwidth 0.9
	set logscale y
	set yrange [0.05:*]
	set ylabel "CPU µs per packet (log scale)"
	unset xlabel
	set xtics rotate by -40 left font "sans,10"
	set key inside left top
	set bmargin 12
	set rmargin 16
	plot for [c = 2:nsizes + 1] D.'/cpu.dat' using c:xtic(1) title columnheader(c) lt (c == 2 ? 1 : 2)
	unset logscale y
	set yrange [*:*]
	set bmargin
	set rmargin
	set xtics norotate
	unset title
}

if (OUTPUTS_N > 0) {
	set output O.'/outputs.svg'
	set title "Records per sluice CPU second, replay → decode → output\n(".OUTPUTS_NOTE.")" font "sans,13"
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.85 border -1
	set boxwidth 0.8
	set logscale y
	stats D.'/outputs.dat' using 2 nooutput
	set yrange [VECTOR_EPS / 2:STATS_max * 6]	# room for the legend above the bars
	set ylabel "records per CPU second (log scale)"
	set format y "%.0s%c"
	unset xlabel
	set xtics rotate by -30 left font "sans,11"
	set key inside left top
	set bmargin 7
	set rmargin 8
	set xrange [-0.6:OUTPUTS_N - 0.4]
	plot D.'/outputs.dat' using 2:xtic(1) title "sluice, one core" lt 1, \
		VECTOR_EPS with lines lt 2 lw 2 dt 2 title sprintf("Vector's sizing figure: %.0f events/s per vCPU (10 MiB/s of 256-byte events)", VECTOR_EPS), \
		TARGET * VECTOR_EPS with lines lt 8 lw 2 title sprintf("target: %d× that", TARGET)
}
