# lines.gp: time per mask against vocabulary size, one line per series.
# Each series is a block (two blank lines apart) whose first line is its
# title; rows: vocabulary size (ids) median min max.
# The nmarks blocks after them are published figures of other machines (a
# title line, then rows x y): drawn as black marks of their own, no line.
# Variables: xlab, nseries, nmarks, synthnote (shown in the corner when not
# empty: the run has no synthetic vocabulary), first and last (the panel's
# series: at most twelve, each with a colour and a mark no other series of
# the panel has; the published marks are in every panel).
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
colors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #393b79 #ad494a"
marktypes = "7 5 9 11 13 15 4 6 8 10 1 2"
top = last < nseries - 1 ? last : nseries - 1
plot for [i=first:top] datafile index i using 1:2:3:4 with yerrorlines lw 2 lc rgb word(colors, i - first + 1) pt int(word(marktypes, i - first + 1)) title columnheader(1), \
     @marks
load plots.'/svg.gp'
