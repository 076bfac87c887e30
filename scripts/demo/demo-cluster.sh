#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Part of `make demo`, run inside the VM: the communication experiment of
# the INCEPTIONN paper (Fig. 12 structure) on a 4-host cluster. Hosts are
# network namespaces on a bridge, every host link limited by tbf to
# INCNN_DEMO_CLUSTER_RATE each way, incnn loaded and configured with
# incctl only. For each buffer size, one allreduce of Laplace(1e-3)
# gradients per rank for
#	WA	worker-aggregator (rank 0 aggregates), no rule
#	WA+C	the same with a rule: the workers' gradients compressed
#	INC	INCEPTIONN's ring (Algorithm 1), no rule
#	INC+C	the ring with a rule: every leg compressed
# with inceptionn and ebq at 2^-10, 2^-8, 2^-6 (the larger size: 2^-10
# only). Appends one JSON object per run to $VM_OUT/cluster.json.
set -u
repo=${VM_REPO:?run inside the VM (scripts/demo/demo.sh)}
out=${VM_OUT:?}
rate=${INCNN_DEMO_CLUSTER_RATE:-4mbit}
sizes=${INCNN_DEMO_CLUSTER_SIZES:-2560K 8M}

# lab/netns.sh: namespaces, counters, cleanup; lab/cluster.sh: the cluster
# shellcheck source=../../lab/netns.sh
. "$repo/lab/netns.sh"
# shellcheck source=../../lab/cluster.sh
. "$repo/lab/cluster.sh"

say() { printf 'demo: %s\n' "$*"; }

load_module || { say "cannot load incnn.ko"; exit 1; }
cluster_setup 4 "$rate" || { say "cannot set up the cluster"; exit 1; }
: >"$out/cluster.json"

# the runs: "config algo codec k"
plan=()
first=1
for size in $sizes; do
	for a in "WA ps" "INC ring"; do
		read -r cfg algo <<<"$a"
		plan+=("$size $cfg $algo none 0")
		for c in inceptionn ebq; do
			for k in 10 8 6; do
				[ -z "$first" ] && [ "$k" != 10 ] && continue
				plan+=("$size $cfg+C $algo $c $k")
			done
		done
	done
	first=
done

start=$SECONDS
n=0
for p in "${plan[@]}"; do
	read -r size cfg algo codec k <<<"$p"
	n=$((n + 1))
	label=$cfg
	if [ "$codec" = none ]; then
		cluster_norule
	else
		label="$cfg $codec:2^-$k"
		cluster_rule codec "$codec" bound "2^-$k" || exit 1
	fi
	eta=
	if [ "$n" -gt 1 ]; then
		eta=", about $(((SECONDS - start) * (${#plan[@]} - n + 1) / (n - 1))) s left"
	fi
	say "cluster [$n/${#plan[@]}] $size, $label$eta"
	if ! cluster_allreduce "$TMP/run.json" -b "$size" -e "$size" -i 1 -w 0 \
		--algo "$algo" --codec auto --check --timeout 120000; then
		say "  failed: $(cat "$TMP/rank0.err")"
		continue
	fi
	"$PYTHON" - "$TMP/run.json" "$cfg" "$codec" "$k" "$CL_WIRE" \
		"$CL_HIST" "$rate" >>"$out/cluster.json" <<'PY'
import json, sys
run, cfg, codec, k, wire, hist, rate = sys.argv[1:]
d = json.load(open(run))
r = d["results"][0]
print(json.dumps({"config": cfg, "algo": d["algo"], "codec": codec,
                  "k": int(k), "bytes": r["bytes"], "rate": rate,
                  "time_s": r["time_us"] / 1e6, "wire_bytes": int(wire),
                  "hist": [int(x) for x in hist.split()],
                  "identical": r["identical"],
                  "within_budget": r["within_budget"],
                  "max_abs_err": r["max_abs_err"], "digest": r["digest"]}))
PY
	say "  $(tail -n 1 "$out/cluster.json" | "$PYTHON" -c '
import json, sys
r = json.load(sys.stdin)
print("%.2f s, %.2f MB on the wire, replicas identical: %s"
      % (r["time_s"], r["wire_bytes"] / 1e6, r["identical"]))')"
done
cluster_norule
say "cluster experiment: $((SECONDS - start)) s"
