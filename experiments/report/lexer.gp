# lexer.gp: the walks under the lexer, two panels that share the x axis:
# time per mask above, nanoseconds per visited node below, one bar per
# case with min..max error bars and a red mark at the case's target where
# it has one.  The case labels are written under the lower panel only.
# Data columns: label, us median min max, ns/node median min max, target
# us, target ns/node ('?': none), colour of each bar (0xRRGGBB).
# Variables: logy and logy2 (the time panel, the per-node panel on a log
# scale), ylab2 (the per-node panel's axis).  Two panels are a multiplot,
# which replot cannot redraw: this template draws the PNG and the SVG
# itself instead of loading svg.gp.
load plots.'/common.gp'
unset title
set offsets 0.6, 0.6, 0, 0
set autoscale xfix   # both panels span the cases alone, not the next tic
set boxwidth 0.6
set key top left opaque
do for [term = 1:2] {
    if (term == 1) {
        set terminal pngcairo size 1100,900 font 'sans,10' noenhanced
        set output png
    } else {
        set terminal svg size 1100,900 font 'sans,10' noenhanced dynamic
        set output svg
    }
    set multiplot layout 2, 1 title ptitle."\n".caption."\n".csource font 'sans,10' \
        margins 0.11, 0.97, 0.18, 0.9 spacing 0, 0.03
    set ylabel ylab
    unset logscale y
    set yrange [0:*]
    if (logy) { set logscale y; set yrange [*:*] }
    set xtics scale 0 format ''
    plot datafile using 0:2:10 with boxes lc rgb variable notitle, \
         '' using 0:2:3:4 with yerrorbars lc rgb 'black' pt 0 title 'min..max', \
         '' using 0:8:(0.4) with xerrorbars lc rgb '#cc3311' lw 3 pt 0 title 'target'
    set ylabel ylab2
    unset logscale y
    set yrange [0:*]
    if (logy2) { set logscale y; set yrange [*:*] }
    set xtics rotate by 30 right scale 0 format '% h'
    plot datafile using 0:5:11:xtic(tic(strcol(1))) with boxes lc rgb variable notitle, \
         '' using 0:5:6:7 with yerrorbars lc rgb 'black' pt 0 notitle, \
         '' using 0:9:(0.4) with xerrorbars lc rgb '#cc3311' lw 3 pt 0 notitle
    unset multiplot
}
unset output
