#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Part of `make demo`, run inside the VM (scripts/demo/demo-vm.sh): the
# timing part of the PyTorch section through the real module. The 4 hosts
# of the lib_cluster.sh cluster, links limited to INCNN_TORCH_VM_RATE
# (default 10mbit, tbf both ways), incnn.ko's rules from
# `demo-torch.py vm-rules` (tos 0x28 ebq 2^-10, 0x30 inceptionn 2^-10,
# 0x34 zebq 2^-10, 0x38 ebq 2^-8, 0x3c zebq 2^-4, 0x24 and 0x20 zebq
# 2^-5; a codec the module lacks is left out). One DDP job, a rank per
# host, in one process per host (scripts/demo/demo-torch.py vm: importing torch takes minutes under
# TCG, so it is imported once): the HDC MLP (INCNN_TORCH_VM_MODELS) for
# INCNN_TORCH_VM_STEPS steps (default 5, the first 2 not timed; 32 digits
# per rank, INCNN_TORCH_VM_BATCH, as on the host) under each
# configuration (INCNN_TORCH_VM_CONFIGS: some only): DDP's default
# allreduce (gloo), fp16_compress_hook, PowerSGD rank 1 and 4,
# incnn.torch with no codec (unmarked), and codec "auto" on sockets
# marked for each rule, compressed by the module (with scale="auto" and
# error feedback for the "-scale-ef" names, where the library has them),
# and the seeds: THC ring and worker-aggregator, GradiVeQ, LGC (its codec
# calls marked for the ebq 2^-8 rule); GradiVeQ and LGC run 8 steps,
# their schedules shortened so that each phase is timed (demo-torch.py's
# VM_SEED_SCHEDULE).
# Each rank counts its eth0 tx bytes over the timed steps. Rank 0's
# results: $VM_OUT/torch-vm.jsonl (progress is printed as it goes); the
# hosts' incctl stats: $VM_OUT/torch-vm-stats.json.
#
# Why 10mbit: the default allreduce of the MLP's 4.6 MB of gradients
# sends 2 (N-1)/N x 4.6 = 6.9 MB per host per step with 4 hosts, 5.5 s at
# 10 Mbit/s, while a step's compute (4 ranks of 8 digits on the VM's 2
# emulated CPUs) takes a few seconds, and TCP over the VM's veth runs far above
# 10 Mbit/s (demo-iperf.sh measures 20mbit links without loss): the
# links are the bottleneck, not the emulated CPUs (the table's comm %
# and the compressed rows' times say how far).
set -u
repo=${VM_REPO:?run inside the VM (scripts/demo/demo.sh)}
out=${VM_OUT:?}
rate=${INCNN_TORCH_VM_RATE:-10mbit}
steps=${INCNN_TORCH_VM_STEPS:-5}
hosts=${INCNN_TORCH_VM_HOSTS:-4}

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
cluster_setup "$hosts" "$rate" || { say "cannot set up the cluster"; exit 1; }
# the rules of the incnn configurations (demo-torch.py vm-rules): "TOS
# CODEC BOUND"; a codec this module lacks is left out (its configurations
# are skipped: the library does not know it either)
mapfile -t rules < <("$PYTHON" "$repo/scripts/demo/demo-torch.py" vm-rules)
[ "${#rules[@]}" -gt 0 ] || { say "no rules from demo-torch.py vm-rules"; exit 1; }
refused=""
for ns in "${CL_NS[@]}"; do
	for r in "${rules[@]}"; do
		read -r tos codec bound <<<"$r"
		incctl "$ns" rule add tos "$tos" codec "$codec" bound "$bound" \
			>/dev/null 2>&1 && continue
		case " $refused " in *" $tos "*) continue ;; esac
		say "rule tos $tos codec $codec bound $bound refused ($ns): its configurations are skipped"
		refused="$refused $tos"
	done
	incctl "$ns" stats reset >/dev/null 2>&1
done
rm -f "$out/torch-vm.jsonl"
say "PyTorch DDP through the module: $hosts hosts, $rate links, ${INCNN_TORCH_VM_MODELS:-hdc-mlp}, $steps steps per configuration: ${INCNN_TORCH_VM_CONFIGS:-default, fp16, PowerSGD r1 and r4, incnn none and its codecs (rules: ${rules[*]})}; importing torch first takes minutes"
start=$SECONDS
rc=0
cluster_job env PYTHONPATH="$BUILD/python" GLOO_SOCKET_IFNAME=eth0 \
	INCNN_TORCH_VM_RATE="$rate" \
	INCNN_TORCH_VM_CONFIGS="${INCNN_TORCH_VM_CONFIGS:-}" \
	INCNN_TORCH_VM_MODELS="${INCNN_TORCH_VM_MODELS:-hdc-mlp}" \
	INCNN_TORCH_VM_BATCH="${INCNN_TORCH_VM_BATCH:-32}" \
	INCNN_TORCH_VM_REFUSED="$refused" \
	"$PYTHON" "$repo/scripts/demo/demo-torch.py" vm "$out" \
	"$BUILD/mnist/mnist.bin" "$steps" &
job=$!
# rank 0's progress lines as they come
tail -n +1 -F --pid="$job" "$TMP/rank0.out" 2>/dev/null | sed 's/^/  /' &
tailer=$!
wait "$job" || rc=1
wait "$tailer"
cluster_stats | grep . >"$out/torch-vm-stats.json"
for ns in "${CL_NS[@]}"; do
	for r in "${rules[@]}"; do
		incctl "$ns" rule del tos "${r%% *}" >/dev/null 2>&1
	done
done
say "PyTorch DDP through the module: $((SECONDS - start)) s, exit $rc"
exit $rc
