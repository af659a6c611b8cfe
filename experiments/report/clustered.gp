# clustered.gp: groups of bars.  The data's first line is a header: a
# title for the label column, then one title per series; '?' is a value
# the run does not have (drawn as nothing, never as zero).
# Variables: ncols (columns, the label's included), logy.
load plots.'/common.gp'
set ylabel ylab
set style data histograms
set style histogram clustered gap 1
set xtics rotate by 30 right scale 0
set yrange [0:*]
if (logy) { set logscale y; set yrange [*:*] }
set key top left autotitle columnheader
plot for [i=2:ncols] datafile using i:xtic(tic(strcol(1)))
load plots.'/svg.gp'
