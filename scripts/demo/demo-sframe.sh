#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Superframes against per-packet frames on make demo's 4-host cluster
# (issue 20's demo rows), run inside the VM:
#
#   lab/vm.sh --out build/demo/sframe -- scripts/demo/demo-sframe.sh
#
# The cluster of demo-cluster.sh (4 hosts on a bridge, tbf on every link at
# INCNN_DEMO_CLUSTER_RATE, default 4mbit; "none": no limit), one allreduce
# of INCNN_DEMO_CLUSTER_SIZES (default 2560K) of Laplace(1e-3) gradients
# per rank for INC (the ring, no rule) and INC+C with inceptionn and ebq
# at 2^-10. Each INC+C run is done twice in a row, per-packet frames
# (superframes off on every host) and superframes (on), in alternating
# order, INCNN_SFD_ROUNDS times (default 3): A/B in the same VM. Prints a
# line per run and appends one JSON object per run to $VM_OUT/sframe.json
# (config, codec, frames "v1"/"v2", time_s, wire_bytes, wire packets,
# superframes sent, replicas identical).
set -u
repo=${VM_REPO:?run inside the VM (lab/vm.sh)}
out=${VM_OUT:?}
rate=${INCNN_DEMO_CLUSTER_RATE:-4mbit}
sizes=${INCNN_DEMO_CLUSTER_SIZES:-2560K}
rounds=${INCNN_SFD_ROUNDS:-3}

# shellcheck source=../../lab/netns.sh
. "$repo/lab/netns.sh"
# shellcheck source=../../lab/cluster.sh
. "$repo/lab/cluster.sh"

say() { printf 'demo-sframe: %s\n' "$*"; }

frames() { # v1|v2
	local ns sw=off
	[ "$1" = v2 ] && sw=on
	for ns in "${CL_NS[@]}"; do
		incctl "$ns" set superframes $sw >/dev/null || return 1
	done
}

# the hosts' eth0 tx packets, summed
packets() {
	local ns p=0
	for ns in "${CL_NS[@]}"; do
		p=$((p + $(dev_stat "$ns" eth0 tx_packets)))
	done
	echo "$p"
}

# the hosts' tx_superframes, summed (cluster_allreduce resets the counters
# when it starts: this is the run's)
superframes() {
	local ns s=0
	for ns in "${CL_NS[@]}"; do
		s=$((s + $(counter "$ns" tx_superframes)))
	done
	echo "$s"
}

one() { # size config algo codec k frames
	local size=$1 cfg=$2 algo=$3 codec=$4 k=$5 fr=$6 p0 p1
	if [ "$codec" = none ]; then
		cluster_norule
	else
		cluster_rule codec "$codec" bound "2^-$k" || return 1
	fi
	frames "$fr" || return 1
	p0=$(packets)
	if ! cluster_allreduce "$TMP/run.json" -b "$size" -e "$size" -i 1 \
		-w 0 --algo "$algo" --codec auto --check --timeout 300000; then
		say "  failed: $(cat "$TMP/rank0.err")"
		return 1
	fi
	p1=$(packets)
	"$PYTHON" - "$TMP/run.json" "$cfg" "$codec" "$k" "$fr" "$CL_WIRE" \
		"$((p1 - p0))" "$(superframes)" "$rate" <<'PY' | tee -a "$out/sframe.json"
import json, sys
run, cfg, codec, k, fr, wire, pkts, sf, rate = sys.argv[1:]
r = json.load(open(run))["results"][0]
print(json.dumps({"config": cfg, "codec": codec, "k": int(k),
                  "frames": fr, "bytes": r["bytes"], "rate": rate,
                  "time_s": r["time_us"] / 1e6, "wire_bytes": int(wire),
                  "wire_packets": int(pkts), "superframes": int(sf),
                  "identical": r["identical"]}))
PY
}

load_module || { say "cannot load incnn.ko"; exit 1; }
[ "$rate" = none ] && rate=
cluster_setup 4 "$rate" || { say "cannot set up the cluster"; exit 1; }
: >"$out/sframe.json"
start=$SECONDS
for size in $sizes; do
	for ((r = 1; r <= rounds; r++)); do
		say "round $r/$rounds, $size, $((SECONDS - start)) s so far"
		one "$size" INC ring none 0 v1 || exit 1
		for c in ebq inceptionn; do
			order="v1 v2"
			[ $((r % 2)) = 0 ] && order="v2 v1"
			for fr in $order; do
				one "$size" INC+C ring "$c" 10 "$fr" || exit 1
			done
		done
	done
done
cluster_norule
say "done in $((SECONDS - start)) s: $out/sframe.json"
