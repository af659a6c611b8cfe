# svg.gp: the same plot again as SVG (loaded last by every template).
set terminal svg size 1000,600 font 'sans,10' noenhanced dynamic
set output svg
replot
unset output
