# lines.gp: time per mask against vocabulary size, one line per series.
# Each series is a block (two blank lines apart) whose first line is its
# title; rows: vocabulary size (ids) median min max.
# The nmarks blocks after them are published figures of other machines (a
# title line, then rows x y): drawn as black marks of their own, no line.
# Variables: xlab, nseries, nmarks, synthnote (shown in the corner when not
# empty: the run has no synthetic vocabulary).
# a key of one line per series, outside the plot: a taller canvas holds it
height = 860
load plots.'/common.gp'
set bmargin -1
set ylabel ylab
set xlabel xlab
set logscale xy
set xrange [*:1600000]
set xtics ("4k" 4000, "8k" 8000, "16k" 16000, "32k" 32000, "64k" 64000, "128k" 128000, "262k" 262144, "512k" 524288, "1M" 1048576)
if (!exists("synthnote")) synthnote = ""
if (strlen(synthnote) > 0) set label 1 synthnote at graph 0.98, graph 0.05 right textcolor rgb '#777777'
if (!exists("nmarks")) nmarks = 0
marks = nmarks > 0 ? "for [i=nseries:nseries+nmarks-1] datafile index i using 1:2 with points pt 12 ps 2.5 lw 2 lc rgb '#000000' title columnheader(1)" : "1/0 notitle"
plot for [i=0:nseries-1] datafile index i using 1:2:3:4 with yerrorlines lw 2 lt (1 + i % 8) pt (7 - 2 * (i / 8)) dt i/8+1 title columnheader(1), \
     @marks
load plots.'/svg.gp'
