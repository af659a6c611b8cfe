# grouped.gp: one group of bars per case on x, one bar (and one colour) per
# series in every group, and reference marks across a group: the figure
# a bar is compared with (a target, a published figure of another machine)
# drawn as a black or red bar across the group, never as a bar of its own.
# The data's first line is a header: the label column's title, the nser
# series' titles, then the nmarks marks' titles.  Each further line is a
# group: its label, then one value per column, '?' where the run has none
# (drawn as nothing, never as zero).  A panel draws the groups first..last
# (0-based rows of the data, at most twelve; a plot of more panels gives
# the last one the same twelve slots, so that bars keep their width); the
# report draws one file per panel.  The key is outside the plot area, where it hides nothing.
# Variables: nser, nmarks, first, last, markcolours (one colour per mark,
# space-separated), hline and hlabel (a reference line across the plot:
# NaN for none), logy.
load plots.'/common.gp'
set ylabel ylab
set key autotitle columnheader
set xrange [-0.6:last - first + 0.6]
# steep enough that a long first label stays on the canvas
set xtics rotate by 45 right scale 0
set lmargin 18
set yrange [0:*]
if (logy) { set logscale y; set yrange [*:*]; set format y '%g' }
if (!exists("hline")) hline = NaN
if (!exists("markcolours")) markcolours = '#000000'
colours = '#4477aa #ee6677 #228833 #ccbb44 #66ccee #aa3377 #bbbbbb #222255'
w = 0.8 / nser
set boxwidth 0.92 * w absolute
ref = (hline == hline) ? sprintf(", %g with lines dt 2 lw 2 lc rgb '#000000' title hlabel", hline) : ""
plot for [i=1:nser] datafile every ::first::last using ($0 + (i - 1 - (nser - 1) / 2.0) * w):(column(i + 1)) \
         with boxes lc rgb word(colours, 1 + (i - 1) % 8) title columnheader(i + 1), \
     for [k=1:nmarks] datafile every ::first::last using 0:(column(nser + 1 + k)):(0.45) \
         with xerrorbars pt 0 lw 3 lc rgb word(markcolours, 1 + (k - 1) % words(markcolours)) \
         title columnheader(nser + 1 + k), \
     datafile every ::first::last using 0:(NaN):xtic(tic(strcol(1))) notitle @ref
load plots.'/svg.gp'
