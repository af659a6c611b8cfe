# position.gp: a figure against the position in one long document, one
# line per case, so that a figure growing with the position shows as a
# line that climbs.  Each case is a block (two blank lines apart) whose
# first line is its title; rows: position (MiB) value.
# Variables: xlab, nseries, logy, first and last (the panel's series: at
# most twelve, each with a colour and a mark no other series of the
# panel has).
# the key below the plot, one line per series: case labels run long, and
# beside the plot they would leave it a third of the width
height = 760
load plots.'/common.gp'
top = last < nseries - 1 ? last : nseries - 1
set key outside center bottom vertical Left reverse
set bmargin top - first + 5
set ylabel ylab
set xlabel xlab
set xrange [0:*]
set yrange [0:*]
if (logy) { set logscale y; set yrange [*:*]; set format y '%g' }
set grid xtics ytics lc rgb '#dddddd'
colors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #393b79 #ad494a"
marktypes = "7 5 9 11 13 15 4 6 8 10 1 2"
plot for [i=first:top] datafile index i using 1:2 with linespoints lw 2 ps 0.7 lc rgb word(colors, i - first + 1) pt int(word(marktypes, i - first + 1)) title columnheader(1)
load plots.'/svg.gp'
