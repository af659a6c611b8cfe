# bars.gp: one bar per row, min..max error bars, an optional reference line.
# Data columns: label median min max colour(0xRRGGBB).
# Variables: hline (NaN: none), hlabel, logy (1: log scale, for figures that
# span orders of magnitude).
load plots.'/common.gp'
set ylabel ylab
set xtics rotate by 30 right scale 0
set offsets 0.6, 0.6, 0, 0
set yrange [0:*]
if (logy) { set logscale y; set yrange [*:*] }
set boxwidth 0.6
ref = (hline == hline) ? sprintf(", %g with lines dt 2 lw 2 lc rgb '#cc3311' title hlabel", hline) : ""
plot datafile using 0:2:5:xtic(tic(strcol(1))) with boxes lc rgb variable notitle, \
     '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt 0 title 'min..max of the repetitions' @ref
load plots.'/svg.gp'
