# bars.gp: one bar per row, min..max error bars, an optional reference line.
# Data columns: label median min max colour(0xRRGGBB).  A panel draws the
# rows first..last (at most twelve; a plot of more panels gives each
# twelve slots); the report draws one file per panel.
# Variables: btitle (the bars' key entry), hline (NaN: none), hlabel, logy (1: log scale, for figures that
# span orders of magnitude), first, last.
load plots.'/common.gp'
set ylabel ylab
set xtics rotate by 45 right scale 0
set lmargin 18
set xrange [-0.6:last - first + 0.6]
set yrange [0:*]
if (logy) { set logscale y; set yrange [*:*] }
set boxwidth 0.6
ref = (hline == hline) ? sprintf(", %g with lines dt 2 lw 2 lc rgb '#cc3311' title hlabel", hline) : ""
plot datafile every ::first::last using 0:2:5:xtic(tic(strcol(1))) with boxes lc rgb variable title btitle, \
     '' every ::first::last using 0:2:3:4 with yerrorbars lc rgb 'black' pt 0 title 'min..max of the repetitions' @ref
load plots.'/svg.gp'
