# gnuplot -e "res='build/seeds'" seeds.gp
# make seeds' plots from what scripts/seeds/seeds-report.py wrote:
#   seeds-acc.dat   blocks "hdc" and "cnn": "method" ratio accuracy%
#   seeds-time.dat  the C trainer's VM rows: "method\nbuckets" seconds ratio
# seeds-accuracy.png: test accuracy vs compression ratio per method, one
# colour per job; seeds-time.png: time per iteration in the VM, bars.
set terminal pngcairo size 900,560 font ",10"
set output res.'/seeds-accuracy.png'
set title "Seed methods: final test accuracy vs compression ratio (4 ranks, MNIST)"
set xlabel "compression ratio (original / wire bytes), log scale"
set ylabel "test accuracy (%)"
set logscale x
set xrange [0.7:300]
set offsets 0, 0, 0.5, 0.5
set grid xtics ytics
set key bottom left box opaque
plot res.'/seeds-acc.dat' index 0 using 2:3 with points pt 7 ps 1.3 lc rgb "#1f77b4" title "HDC MLP (C trainer, VM wire bytes)", \
     '' index 0 using 2:3:1 with labels offset 0,1 font ",8" notitle, \
     '' index 1 using 2:3 with points pt 5 ps 1.3 lc rgb "#d62728" title "CNN (PyTorch DDP, payload bytes)", \
     '' index 1 using 2:3:1 with labels offset 0,-1 font ",8" notitle
unset logscale x

set terminal pngcairo size 900,520 font ",10"
set output res.'/seeds-time.png'
set title "HDC MLP: time per iteration on the 4-host VM cluster (tbf links, QEMU/TCG)"
set ylabel "seconds per iteration, lower is better"
set xlabel "method and buckets; above each bar: time, wire ratio (mgwfbp: none, see results.md)" offset 0,-0.5
unset key
set bmargin 5
set style fill solid 0.85 border -1
set boxwidth 0.7
set grid ytics
set grid noxtics ytics
set xtics nomirror
stats res.'/seeds-time.dat' using 2 nooutput
set xrange [-0.6:STATS_records - 0.4]
set yrange [0:STATS_max * 1.3]
plot res.'/seeds-time.dat' using 0:2:xtic(1) with boxes lc rgb "#2ca02c" notitle, \
     '' using 0:2:($3 > 0 ? sprintf("%.2f s\n%.2fx", $2, $3) : sprintf("%.2f s", $2)) with labels offset 0,1.2 font ",8" notitle
