#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo-torch.sh BUILD_DIR RESULTS_DIR [STEPS]: make demo's PyTorch section
# on the host. DDP on 4 local ranks (python3 -m incnn.launch, gloo) trains
# a torchvision-style CNN, the paper's HDC MLP and a wide MLP (5.8 M
# parameters) on the MNIST digits of scripts/mnist-fetch.sh for STEPS
# steps (default INCNN_TORCH_STEPS, 80) under PyTorch's default
# allreduce, fp16_compress_hook, PowerSGD rank 1 and 4, incnn.torch with
# ebq, inceptionn and zebq (userspace emulation, bit-identical to the
# module; with and without scale="auto" and error feedback, where the
# library has them), THC, GradiVeQ and LGC, scoring the test accuracy
# every INCNN_TORCH_EVAL_EVERY (10) steps: time and bytes to a target
# accuracy. See scripts/demo-torch.py for what is measured and how.
# Writes to RESULTS_DIR: torch.json, torch.md (the report section),
# torch.png, torch.log, tta.json, tta-curves.json, tta.md, tta-MODEL.png.
# Needs make tools python, Debian's python3-torch, gnuplot.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: demo-torch.sh BUILD_DIR RESULTS_DIR [STEPS]" >&2
	exit 2
fi
build=$(cd "$1" && pwd)
res=$2
steps=${3:-${INCNN_TORCH_STEPS:-80}}
if ! [[ $steps =~ ^[1-9][0-9]*$ ]] || [ "$steps" -le 10 ]; then
	echo "demo-torch: STEPS must be an integer above 10, not '$steps'" >&2
	exit 2
fi
py=/usr/bin/python3
tool=$build/rel/bin/incnn-codec
[ -x "$tool" ] || { echo "demo-torch: $tool missing (make tools)" >&2; exit 1; }
[ -f "$build/python/incnn/torch.py" ] ||
	{ echo "demo-torch: $build/python missing (make python)" >&2; exit 1; }
"$py" -c 'import torch' 2>/dev/null ||
	{ echo "demo-torch: Debian's python3-torch missing (scripts/check/deps.sh torch)" >&2; exit 1; }
mkdir -p "$res"
res=$(cd "$res" && pwd)

data=$build/mnist/mnist.bin
"$src/scripts/demo/mnist-fetch.sh" "$build" >/dev/null 2>&1 ||
	echo "demo-torch: MNIST not available: a SYNTHETIC data set is used (labelled so)"
rm -f "$res/torch.jsonl" "$res"/tta.* "$res"/tta-*
echo "demo-torch: ${INCNN_TORCH_MODELS:-3 models} x ${INCNN_TORCH_CONFIGS:-13 configurations}, $steps steps each, 4 ranks"
PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH} "$py" -m incnn.launch \
	--nproc-per-node 4 --master-port "${INCNN_TORCH_PORT:-29640}" \
	"$src/scripts/demo/demo-torch.py" train "$res" "$data" "$tool" "$steps" \
	2>"$res/torch.log" || {
	tail -20 "$res/torch.log" >&2
	echo "demo-torch: training failed (log: $res/torch.log)" >&2
	exit 1
}
"$py" "$src/scripts/demo/demo-torch.py" report "$res"

gnuplot <<EOF
set terminal pngcairo size 1300,820 font ",10"
set output '$res/torch.png'
set multiplot layout 3,1 title "PyTorch DDP, 4 ranks on the host: PyTorch's hooks and incnn's (userspace codecs)"
set style fill solid 0.8 border -1
set boxwidth 0.7
set grid ytics
set xtics nomirror font ",8"
set bmargin 3.5
set ylabel "wire MB/iter/rank"
set logscale y
plot '$res/torch-plot.dat' using 0:3:xtic(1) with boxes lc rgb "#1f77b4" notitle, \
     '' using 0:3:(sprintf("%.3g", \$3)) with labels offset 0,0.7 font ",8" notitle
unset logscale y
set yrange [0:*]
set offsets 0, 0, graph 0.25, 0
set ylabel "ms/iter"
plot '$res/torch-plot.dat' using 0:2:xtic(1) with boxes lc rgb "#2ca02c" notitle, \
     '' using 0:2:(sprintf("%.0f ms\\n%.0f%% comm", \$2, \$5)) with labels offset 0,1.3 font ",8" notitle
set ylabel "test accuracy %"
set offsets 0, 0, 0, 0
set yrange [0:110]
plot '$res/torch-plot.dat' using 0:4:xtic(1) with boxes lc rgb "#ff7f0e" notitle, \
     '' using 0:4:(sprintf("%.1f", \$4)) with labels offset 0,0.7 font ",8" notitle
unset multiplot
EOF
if [ -f "$res/tta-plot.txt" ]; then
	"$src/scripts/demo/tta-plot.sh" "$res"
else
	echo "demo-torch: no time-to-accuracy table: it needs the default configuration's run"
fi
echo "demo-torch: $res/torch.json, $res/torch.md, $res/torch.png," \
	"$res/tta.json, $res/tta.md, $res/tta-*.png"
