#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tta-plot.sh RESULTS_DIR: make demo's time-to-accuracy plots and table from
# what `scripts/demo/demo-torch.py report` wrote in RESULTS_DIR (tta.json,
# tta-curves.json, tta-plot.txt: a line "MODEL TARGET BLOCKS EVAL_EVERY" per
# model, tta-MODEL.dat: a block per configuration): tta-MODEL.png (test
# accuracy against training wall time and against wire bytes, the target
# as a dashed line) and tta.md (scripts/demo/tta-table.py). Needs gnuplot.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: tta-plot.sh RESULTS_DIR" >&2; exit 2; }
res=$1
[ -f "$res/tta-plot.txt" ] ||
	{ echo "tta-plot: $res/tta-plot.txt missing (demo-torch.py report)" >&2; exit 1; }
while read -r model target n every; do
	gnuplot <<EOF
set terminal pngcairo size 1300,560 font ",10" noenhanced
set output '$res/tta-$model.png'
f = '$res/tta-$model.dat'
set multiplot layout 1,2 title "$model: test accuracy (1,000 test digits, every $every steps) against training time and wire bytes; 4 ranks on the host, incnn codecs emulated"
set grid
set key bottom right font ",8"
set ylabel "test accuracy %"
set yrange [*:100]
set arrow 1 from graph 0, first $target to graph 1, first $target nohead dt 2 lc rgb "black"
set label 1 "target $target %" at graph 0.02, first $target offset 0,0.6 font ",8"
set xlabel "training wall time (s, evaluation not counted)"
plot for [i=0:$n-1] f index i using 2:4 with linespoints lc (i % 8 + 1) pt (i / 8 * 4 + 7) ps 0.4 title columnheader(2)
set xlabel "wire MB sent per rank (log scale)"
set logscale x
plot for [i=0:$n-1] f index i using 3:4 with linespoints lc (i % 8 + 1) pt (i / 8 * 4 + 7) ps 0.4 title columnheader(2)
unset multiplot
EOF
done <"$res/tta-plot.txt"
/usr/bin/python3 "$src/scripts/demo/tta-table.py" "$res/tta.json" "$res/tta-curves.json" \
	>"$res/tta.md"
