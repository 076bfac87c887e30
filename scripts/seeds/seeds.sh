#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make seeds: the seed methods compared (issues 13 and 14) on our jobs.
#   1. the C trainer (HDC MLP on MNIST, incnn-train), 4 local ranks on the
#      host, every row (scripts/seeds/seeds-lib.sh: none, inceptionn and
#      ebq 2^-10 emulated in userspace, thc (ring), thc-wa (THC's
#      worker-aggregator: bytes up and down), gradiveq; buckets single
#      and mgwfbp) for the same INCNN_SEEDS_EPOCHS: test accuracy
#   2. the same rows in one VM boot (lab/vm.sh, scripts/seeds/seeds-vm.sh):
#      4 hosts, links at INCNN_SEEDS_RATE (the demo's cluster rate),
#      incnn.ko; INCNN_SEEDS_VM_ITERS iterations per row: time per
#      iteration and the bytes on the hosts' interfaces
#   3. the PyTorch CNN on MNIST (scripts/seeds/seeds-torch.py), 4 local
#      ranks: PyTorch's default allreduce, incnn none, inceptionn/ebq
#      2^-10, thc, thc-wa, gradiveq, lgc for INCNN_SEEDS_TORCH_STEPS steps
#   4. the report (scripts/seeds/seeds-report.py, seeds.gp):
#      build/seeds/results.json, results.md, seeds-*.png
# Environment: INCNN_SEEDS_EPOCHS (C trainer epochs, 10),
# INCNN_SEEDS_VM_ITERS (iterations per VM row, 3), INCNN_SEEDS_RATE
# (VM link rate, INCNN_DEMO_CLUSTER_RATE or 4mbit), INCNN_SEEDS_TORCH_STEPS
# (300), INCNN_SEEDS_LGC_T1 / _T2 (LGC stage lengths, 20 / 40),
# INCNN_SEEDS_LGC_ALPHA / _CODEC / _FEEDBACK / _STRIDE / _AE_STEPS /
# _MEASURE / _DENSE_MOMENTUM (LGC's settings, scripts/seeds/seeds-torch.py),
# INCNN_SEEDS_GVQ_TORCH_WARMUP / _TS (GradiVeQ's warm-up and T_s in the
# PyTorch job, 30 / 30), INCNN_SEEDS_GVQ_TORCH_EPS (its loss threshold,
# 0.01, or off), INCNN_SEEDS_GVQ_TORCH_CODEC / INCNN_SEEDS_GVQ_CODEC
# (the codec of GradiVeQ's uncompressed iterations, PyTorch / C rows:
# ebq:2^-8, or none),
# INCNN_SEEDS_VM=0 and INCNN_SEEDS_TORCH=0 skip parts 2 and 3 (their
# columns become null with the reason); INCNN_SEEDS_METHODS="m ..." runs
# the C trainer's rows of those methods only (host, and the VM into
# build/seeds/vm-partial/, whose rows replace vm/'s in the report) and
# keeps the other rows' results of the previous run. Progress on stderr.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${INCNN_BUILD:-$src/build}
export INCNN_BUILD=$build
res=$build/seeds
epochs=${INCNN_SEEDS_EPOCHS:-10}
export INCNN_SEEDS_VM_ITERS=${INCNN_SEEDS_VM_ITERS:-3}
export INCNN_SEEDS_RATE=${INCNN_SEEDS_RATE:-${INCNN_DEMO_CLUSTER_RATE:-4mbit}}
steps=${INCNN_SEEDS_TORCH_STEPS:-300}
py=/usr/bin/python3
start=$(date +%s)
for v in "$epochs" "$INCNN_SEEDS_VM_ITERS" "$steps"; do
	[[ $v =~ ^[1-9][0-9]*$ ]] ||
		{ echo "seeds: '$v' is not a positive integer" >&2; exit 2; }
done

say() { echo "seeds: $* ($(( $(date +%s) - start )) s)" >&2; }

say "[1/5] Debian packages, tools, incnn.ko, MNIST"
"$src/scripts/check/deps.sh" host kmod vm train torch >&2
make -s -C "$src" BUILD="$build" tools python >/dev/null
kdir=/usr/src/linux-headers-$("$src/scripts/check/kabi.sh")
make -s -C "$kdir" M="$src" modules >/dev/null
mkdir -p "$res/c"
data=$build/mnist/mnist.bin
if ! "$src/scripts/demo/mnist-fetch.sh" "$build" >&2; then
	say "MNIST not available: the C trainer uses --data synth (labelled so)"
	data=synth
fi
export INCNN_SEEDS_DATA=$data
echo "$data" >"$res/data.txt"

TOOL=$build/rel/bin/incnn-train
# shellcheck source=seeds-lib.sh
. "$src/scripts/seeds/seeds-lib.sh"

say "[2/5] C trainer on the host: ${#SEEDS_METHODS[@]} methods x ${#SEEDS_BUCKETS[@]} schedules, $epochs epochs each, 4 ranks"
n=0
total=$((${#SEEDS_METHODS[@]} * ${#SEEDS_BUCKETS[@]}))
for m in "${SEEDS_METHODS[@]}"; do
	for b in "${SEEDS_BUCKETS[@]}"; do
		n=$((n + 1))
		log=$res/c/host-$m-$b.log
		rm -f "$log" "$log.why"
		if ! why=$(seeds_why "$m" "$b"); then
			echo "$why" >"$log.why"
			say "  [$n/$total] $m $b: $why"
			continue
		fi
		seeds_args "$m" "$b" host
		t0=$(date +%s)
		if ! env "${SEEDS_ENV[@]}" nice -n 10 "$TOOL" -n 4 --data "$data" \
			--epochs "$epochs" "${SEEDS_ARGS[@]}" -q --log "$log" \
			2>"$log.err"; then
			echo "failed on the host: $(head -c 300 "$log.err" | tr '\n' ' ')" >"$log.why"
			rm -f "$log"
			say "  [$n/$total] $m $b: FAILED ($(cat "$log.why"))"
			continue
		fi
		say "  [$n/$total] $m $b: $(awk '$1 == "epoch" { a = $12 } END { printf "test accuracy %s", a }' "$log") in $(( $(date +%s) - t0 )) s"
	done
done

vmout=$res/vm
if [ -n "${INCNN_SEEDS_METHODS:-}" ]; then
	vmout=$res/vm-partial	# vm.sh empties its --out directory
else
	rm -rf "$res/vm-partial"
fi
if [ "${INCNN_SEEDS_VM:-1}" = 1 ]; then
	say "[3/5] VM (QEMU/TCG, one boot): the same rows, $INCNN_SEEDS_VM_ITERS iterations each, links at $INCNN_SEEDS_RATE"
	vmrc=0
	# the host's load: the VM's CPU-bound rows depend on it
	echo "start $(cut -d' ' -f1-3 /proc/loadavg)" >"$res/vm-load.txt"
	"$src/lab/vm.sh" --out "$vmout" --timeout 2400 \
		-- "$src/scripts/seeds/seeds-vm.sh" 2>&1 |
		sed -u 's/^/seeds:   /' >&2 || vmrc=$?
	echo "end $(cut -d' ' -f1-3 /proc/loadavg)" >>"$res/vm-load.txt"
	[ "$vmrc" = 0 ] || say "  the VM part failed (status $vmrc); its rows say so"
else
	say "[3/5] VM part skipped (INCNN_SEEDS_VM=0)"
	[ -n "${INCNN_SEEDS_METHODS:-}" ] || rm -rf "$vmout"
fi

tres=$res/torch
mkdir -p "$tres"
if [ "${INCNN_SEEDS_TORCH:-1}" = 1 ]; then
	rm -f "$tres/torch.jsonl"
	say "[4/5] PyTorch CNN on the host: 8 configurations, $steps steps each, 4 ranks"
	PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH} nice -n 10 "$py" \
		-m incnn.launch --nproc-per-node 4 \
		--master-port "${INCNN_SEEDS_TORCH_PORT:-29740}" \
		"$src/scripts/seeds/seeds-torch.py" "$tres" "$data" \
		"$build/rel/bin/incnn-codec" "$steps" 2>"$tres/torch.log" |
		sed -u 's/^/seeds:   /' >&2 ||
		{ tail -20 "$tres/torch.log" >&2; say "  the PyTorch part failed (log: $tres/torch.log)"; }
else
	say "[4/5] PyTorch part skipped (INCNN_SEEDS_TORCH=0; earlier results, if any, are kept)"
fi

say "[5/5] report"
"$py" "$src/scripts/seeds/seeds-report.py" "$res" \
	--epochs "$epochs" --vm-iters "$INCNN_SEEDS_VM_ITERS" \
	--rate "$INCNN_SEEDS_RATE" --torch-steps "$steps" \
	--compare "$src/scripts/demo/train-compare.sh"
gnuplot -e "res='$res'" "$src/scripts/seeds/seeds.gp"
echo >>"$res/results.md"
echo "\`make seeds\` took $(( $(date +%s) - start )) s on $(date -u +%Y-%m-%d)." >>"$res/results.md"
cat "$res/results.md"
say "done: $res/results.md, results.json, seeds-*.png"
