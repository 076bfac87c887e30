#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Part of `make demo`, run inside the VM: a short run of the host's
# training configuration INCNN_DEMO_VM_CODEC at 2^-INCNN_DEMO_VM_K, through
# the real module: 4 hosts (namespaces on a bridge, links not limited),
# the rule set with incctl, incnn-train as one rank per host with
# --codec auto (the library reads the rule from the module). Rank 0's log
# goes to $VM_OUT/vm-train.log; scripts/demo/demo.sh compares its losses with
# the host run's, bit for bit. The hosts' incctl stats go to
# $VM_OUT/vm-train-stats.json (the gradients really were compressed).
set -u
repo=${VM_REPO:?run inside the VM (scripts/demo/demo.sh)}
out=${VM_OUT:?}
codec=${INCNN_DEMO_VM_CODEC:-inceptionn}
k=${INCNN_DEMO_VM_K:-10}
iters=${INCNN_DEMO_VM_ITERS:-10}

# shellcheck source=../../lab/netns.sh
. "$repo/lab/netns.sh"
# shellcheck source=../../lab/cluster.sh
. "$repo/lab/cluster.sh"

say() { printf 'demo: %s\n' "$*"; }

load_module || { say "cannot load incnn.ko"; exit 1; }
cluster_setup 4 || { say "cannot set up the cluster"; exit 1; }
cluster_rule codec "$codec" bound "2^-$k" || exit 1
say "training through the module: $iters iterations of HDC on MNIST, 4 hosts, rule $codec:2^-$k"
start=$SECONDS
rc=0
# every rank gets --log; incnn-train writes it on rank 0 only
cluster_job "$BUILD/rel/bin/incnn-train" --data "$BUILD/mnist/mnist.bin" \
	--iters "$iters" --codec auto -q --log "$out/vm-train.log" || rc=1
cluster_stats | grep . >"$out/vm-train-stats.json"
say "training through the module: $((SECONDS - start)) s, exit $rc"
exit $rc
