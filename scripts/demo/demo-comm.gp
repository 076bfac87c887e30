# gnuplot -e "dat='demo-comm-X.dat'; png='demo-comm-X.png'; title='...'" demo-comm.gp
# The communication experiment's bar chart for one buffer size; rows of
# "label" seconds group wire-ratio (scripts/demo/demo-cluster-report.py writes
# them): group 0 WA, 1 WA+C, 2 INC, 3 INC+C, each its own colour; above
# each bar its time and wire ratio.
set terminal pngcairo size 1100,560 font ",10"
set output png
set title "4-host allreduce, ".title.": communication time (VM, tbf links)"
set ylabel "time (s), lower is better"
set xlabel "codec and error bound 2^{-k} (none: no compression); above each bar: time, wire ratio (WA's or INC's wire bytes / this run's)"
set style fill solid 0.85 border -1
set boxwidth 0.75
set grid ytics
set xtics rotate by -35 left nomirror
stats dat using 2 nooutput
set xrange [-0.6:STATS_records - 0.4]
set yrange [0:STATS_max * 1.45]
set key top right box opaque title "configuration"
set linetype 11 lc rgb "#7f7f7f"
set linetype 12 lc rgb "#bcbd22"
set linetype 13 lc rgb "#1f77b4"
set linetype 14 lc rgb "#2ca02c"
plot dat using 0:2:($3 + 11):xtic(1) with boxes lc variable notitle, \
     '' using 0:2:(sprintf("%.2f s\n%.2fx", $2, $4)) with labels offset 0,1.2 font ",8" notitle, \
     NaN with boxes lt 11 title "WA: workers -> aggregator -> workers", \
     NaN with boxes lt 12 title "WA+C: WA, gradients (up leg) compressed", \
     NaN with boxes lt 13 title "INC: ring allreduce (Algorithm 1)", \
     NaN with boxes lt 14 title "INC+C: ring, every leg compressed"
