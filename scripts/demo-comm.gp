# gnuplot -e "dat='comm-N.dat'; png='comm-N.png'; title='...'" demo-comm.gp
# The communication experiment's bar chart for one buffer size: rows of
# "label" seconds (scripts/demo-cluster-report.py writes them).
set terminal pngcairo size 1000,480 font ",10"
set output png
set title "4-host allreduce, ".title.": communication time (VM, tbf links)"
set ylabel "time (s)"
set style fill solid 0.8 border -1
set boxwidth 0.7
set grid ytics
set xtics rotate by -40 left nomirror
set yrange [0:*]
set offsets 0.5, 0.5, 0, 0
set key off
plot dat using 0:2:xtic(1) with boxes lc rgb "#3070b0", \
     '' using 0:2:(sprintf("%.2f", $2)) with labels offset 0,0.7 font ",8"
