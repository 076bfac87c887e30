#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Part of `make demo`, run inside the VM: a short run of the host's
# training configuration INCNN_DEMO_VM_CODEC at 2^-INCNN_DEMO_VM_K, through
# the real module: 4 hosts (namespaces on a bridge, links not limited),
# the rule set with incctl, incnn-train as one rank per host with
# --codec auto (the library reads the rule from the module). Rank 0's log
# goes to $VM_OUT/vm-train.log; scripts/demo.sh compares its losses with
# the host run's, bit for bit. The hosts' incctl stats go to
# $VM_OUT/vm-train-stats.json (the gradients really were compressed).
set -u
repo=${VM_REPO:?run inside the VM (scripts/demo.sh)}
out=${VM_OUT:?}
codec=${INCNN_DEMO_VM_CODEC:-inceptionn}
k=${INCNN_DEMO_VM_K:-10}
iters=${INCNN_DEMO_VM_ITERS:-10}

# shellcheck source=../selftests/net/lib.sh
. "$repo/selftests/net/lib.sh"
# shellcheck source=../selftests/net/lib_cluster.sh
. "$repo/selftests/net/lib_cluster.sh"

say() { printf 'demo: %s\n' "$*"; }

load_module || { say "cannot load incnn.ko"; exit 1; }
cluster_setup 4 || { say "cannot set up the cluster"; exit 1; }
cluster_rule codec "$codec" bound "2^-$k" || exit 1
say "training through the module: $iters iterations of HDC on MNIST, 4 hosts, rule $codec 2^-$k"
next_port
pids=()
start=$SECONDS
for i in 0 1 2 3; do
	log=()
	[ $i = 0 ] && log=(--log "$out/vm-train.log")
	MASTER_ADDR=${CL_ADDR[0]} MASTER_PORT=$PORT RANK=$i WORLD_SIZE=4 \
		INCNN_DATA_ADDR=${CL_ADDR[i]} \
		nsenter --net="/run/netns/${CL_NS[i]}" \
		"$BUILD/rel/bin/incnn-train" --data "$BUILD/mnist/mnist.bin" \
		--iters "$iters" --codec auto -q "${log[@]}" \
		2>"$TMP/train$i.err" &
	pids+=($!)
done
rc=0
for i in 0 1 2 3; do
	wait "${pids[i]}" || { rc=1; sed "s/^/demo:   rank $i: /" "$TMP/train$i.err"; }
done
for ns in "${CL_NS[@]}"; do
	kstats "$ns"
	echo
done | grep . >"$out/vm-train-stats.json"
say "training through the module: $((SECONDS - start)) s, exit $rc"
exit $rc
