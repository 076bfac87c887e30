#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The VM part of `make demo` (scripts/demo/demo.sh boots the VM with it):
#   1. demo-iperf.sh       iperf3 over one rate-limited link, each codec
#   2. demo-cluster.sh     4-host allreduce: WA, WA+C, INC, INC+C
#   3. demo-vm-train.sh    a short training run through the module
#   4. demo-torch-vm.sh    PyTorch DDP through the module: 4 hosts, 7
#                          configurations (DDP default, fp16, PowerSGD 1/4, incnn)
# Results go to $VM_OUT. Every part runs even if an earlier one failed;
# the exit status says whether all of them succeeded.
set -u
dir=$(cd "$(dirname "$0")" && pwd)
# the module as a user loads it: the load-time self-benchmark picks the
# codecs' SIMD path (under TCG the scalar one wins), where the tests force
# AVX2 (lab/netns.sh) to keep exercising it
export INCNN_SIMD_PARAM=${INCNN_SIMD_PARAM:-auto}
rc=0
for part in demo-iperf.sh demo-cluster.sh demo-vm-train.sh demo-torch-vm.sh; do
	echo "demo: --- $part ($(date +%T), VM uptime $(cut -d' ' -f1 /proc/uptime) s)"
	"$dir/$part" || { echo "demo: $part failed"; rc=1; }
done
exit $rc
