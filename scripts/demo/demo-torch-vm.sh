#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Part of `make demo`, run inside the VM (scripts/demo-vm.sh): the timing
# part of the PyTorch section through the real module. 2 hosts of the
# lib_cluster.sh cluster (importing torch takes over a minute per rank
# under TCG), links limited to INCNN_TORCH_VM_RATE (default 10mbit, tbf
# both ways), incnn.ko's rule "tos 0x28 codec ebq bound 2^-10". One DDP
# job, a rank per host (scripts/demo-torch.py vm): the HDC MLP for
# INCNN_TORCH_VM_STEPS steps (default 6, the first 2 not timed) with the
# default gloo allreduce, then with incnn.torch codec "auto" (marked
# sockets, the module compresses). Each rank counts its eth0 tx bytes
# over the timed steps. Rank 0's results: $VM_OUT/torch-vm.jsonl; the
# hosts' incctl stats: $VM_OUT/torch-vm-stats.json.
#
# Why 10mbit: the default allreduce of the MLP's 4.6 MB of gradients
# moves 4.6 MB per rank per step, 3.7 s at 10 Mbit/s, while a step's
# compute under TCG takes about a second, and TCP over the VM's veth
# runs far above 10 Mbit/s (demo-iperf.sh measures 20mbit links
# without loss): the link is the bottleneck, not the emulated CPUs.
set -u
repo=${VM_REPO:?run inside the VM (scripts/demo/demo.sh)}
out=${VM_OUT:?}
rate=${INCNN_TORCH_VM_RATE:-10mbit}
steps=${INCNN_TORCH_VM_STEPS:-6}

# shellcheck source=../../lab/netns.sh
. "$repo/lab/netns.sh"
# shellcheck source=../../lab/cluster.sh
. "$repo/lab/cluster.sh"

say() { printf 'demo: %s\n' "$*"; }

if [ ! -r /usr/lib/python3/dist-packages/torch/__init__.py ] ||
	[ ! -r "$BUILD/python/incnn/torch.py" ]; then
	say "PyTorch part skipped: needs python3-torch and make python"
	exit 1
fi
load_module || { say "cannot load incnn.ko"; exit 1; }
cluster_setup 2 "$rate" || { say "cannot set up the cluster"; exit 1; }
cluster_rule codec ebq bound 2^-10 || exit 1
for ns in "${CL_NS[@]}"; do
	incctl "$ns" stats reset >/dev/null 2>&1
done
rm -f "$out/torch-vm.jsonl"
say "PyTorch DDP through the module: 2 hosts, $rate links, HDC MLP, $steps steps, default then incnn (rule ebq 2^-10)"
start=$SECONDS
rc=0
cluster_job env PYTHONPATH="$BUILD/python" GLOO_SOCKET_IFNAME=eth0 \
	INCNN_TORCH_VM_RATE="$rate" \
	"$PYTHON" "$repo/scripts/demo/demo-torch.py" vm "$out" \
	"$BUILD/mnist/mnist.bin" "$steps" || rc=1
cat "$TMP/rank0.out"
cluster_stats | grep . >"$out/torch-vm-stats.json"
cluster_norule
say "PyTorch DDP through the module: $((SECONDS - start)) s, exit $rc"
exit $rc
