# svg.gp: the same plot again as SVG (loaded last by every template).  With
# `mouse`, a click on a key entry hides its series, and the file names its
# plot area (gnuplot_svg.plot_xmin ...), which the report's tests read to
# check that every point is drawn inside it and outside the key.
set terminal svg size 1000,height font 'sans,10' noenhanced dynamic mouse standalone
set output svg
replot
unset output
