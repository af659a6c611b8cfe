# pairs.gp: two bars per case side by side (the same work done two ways),
# each with min..max error bars, and a red mark over the first bar at the
# case's target where it has one.
# Data columns: label, first median min max, second median min max, target
# of the first ('?': none).
# The labels are tics of an empty plot, centred under each pair.  A panel
# draws the rows first..last (at most twelve cases; a plot of more panels
# gives each twelve slots); the report draws one file per panel.
# Variables: title1, title2 (the two bars' key entries), targets (1: some
# case has a target, so the key names the mark), logy, first, last.
load plots.'/common.gp'
set ylabel ylab
set xtics rotate by 45 right scale 0
set lmargin 18
set xrange [-0.6:last - first + 0.6]
set yrange [0:*]
if (logy) { set logscale y; set yrange [*:*] }
set boxwidth 0.36
mark = targets ? ", '' every ::first::last using ($0-0.19):8:(0.18) with xerrorbars lc rgb '#cc3311' lw 3 pt 0 title 'target'" : ""
plot datafile every ::first::last using ($0-0.19):2 with boxes lc rgb '#4477aa' title title1, \
     '' every ::first::last using ($0+0.19):5 with boxes lc rgb '#44aa99' title title2, \
     '' every ::first::last using ($0-0.19):2:3:4 with yerrorbars lc rgb 'black' pt 0 title 'min..max', \
     '' every ::first::last using ($0+0.19):5:6:7 with yerrorbars lc rgb 'black' pt 0 notitle, \
     '' every ::first::last using 0:(NaN):xtic(tic(strcol(1))) with points notitle @mark
load plots.'/svg.gp'
