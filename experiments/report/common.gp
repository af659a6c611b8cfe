# common.gp: what every report plot shares.  tokbench report runs each
# template as `gnuplot -e "datafile='...'; png='...'; svg='...'; ..."
# TEMPLATE` with the data written next to the plot; a template loads this
# file first and svg.gp last, so one gnuplot process draws both files.
# Every template gets plots (this folder), datafile, png, svg, ptitle,
# caption (the run: machine, commit), csource (where the figures come
# from) and ylab; logy (1: log y axis) is optional.
# Labels hold vocabulary and layout names with underscores: no enhanced text.
if (!exists("height")) height = 600
set terminal pngcairo size 1000,height font 'sans,10' noenhanced
set output png
set termoption noenhanced
set datafile missing '?'
set datafile separator whitespace
set grid ytics lc rgb '#dddddd'
set border 3
set tics nomirror
# the key outside the plot area, right of it: it never hides a point
set key outside right top vertical
set bmargin 11
set lmargin 14
if (!exists("csource2")) csource2 = ''
set title ptitle."\n".caption."\n".csource.(strlen(csource2) ? "\n".csource2 : '') font 'sans,10'
if (!exists("logy")) logy = 0
set style fill solid 0.85 border -1
# A tic label of at most 32 characters: regex patterns and lexer spec paths
# run long and would push the plot off the page; the tables keep them whole.
set encoding utf8
tic(s) = strlen(s) > 32 ? s[1:30].'..' : s
