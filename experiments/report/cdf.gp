# cdf.gp: distributions as the share of samples slower than x, on log
# axes both ways, so that the tail (p99, p99.9) reads as well as the
# median.  The first nseries blocks (two blank lines apart) are measured
# series: a title line, then rows x share.  The next nmarks blocks are
# reference figures (published percentiles, another machine): a title
# line, then rows x share, drawn as marks without lines.
# Variables: xlab, nseries, nmarks.
load plots.'/common.gp'
set bmargin -1
set ylabel ylab
set xlabel xlab
set logscale xy
set grid xtics ytics lc rgb '#dddddd'
set format xy '%g'
if (nmarks > 0) {
    plot for [i=0:nseries-1] datafile index i using 1:2 with lines lw 2 dt 1+i%2 title columnheader(1), \
         for [i=nseries:nseries+nmarks-1] datafile index i using 1:2 with points pt (4 + 2 * (i - nseries)) ps 1.8 lw 2 lc rgb '#222222' title columnheader(1)
} else {
    plot for [i=0:nseries-1] datafile index i using 1:2 with lines lw 2 dt 1+i%2 title columnheader(1)
}
load plots.'/svg.gp'
