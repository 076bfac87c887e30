#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Part of `make seeds`, run inside the VM (lab/vm.sh): time per iteration
# of the C trainer's rows (scripts/seeds/seeds-lib.sh) on the 4-host
# cluster, every host link limited to INCNN_SEEDS_RATE each way (the
# demo's cluster rate), incnn.ko loaded. inceptionn/ebq rows: the rule
# `tos 0x28 codec C bound 2^-10` on every host and `incnn-train --codec
# auto`: the module compresses the marked gradient sockets. none, thc,
# gradiveq: no rule, unmarked sockets (THC and GradiVeQ compress inside
# the collective). INCNN_SEEDS_VM_ITERS iterations per row.
#
# Writes to $VM_OUT: vm-METHOD-BUCKETS.log (rank 0's log) and vm.jsonl,
# one object per row: method, buckets, iters, seconds, iter_ms,
# eth0_tx_bytes (the 4 hosts' interfaces over the run, headers included),
# wire_bytes_per_iter (that / 4 hosts / iters), rate, module_stats (the
# hosts' incctl stats JSON lines, rows with a rule), or "reason" when the
# row did not run.
set -u
repo=${VM_REPO:?run inside the VM (scripts/seeds/seeds.sh)}
out=${VM_OUT:?}
rate=${INCNN_SEEDS_RATE:-4mbit}
iters=${INCNN_SEEDS_VM_ITERS:-3}

# shellcheck source=../../lab/netns.sh
. "$repo/lab/netns.sh"
# shellcheck source=../../lab/cluster.sh
. "$repo/lab/cluster.sh"
TOOL=$BUILD/rel/bin/incnn-train
# shellcheck source=seeds-lib.sh
. "$repo/scripts/seeds/seeds-lib.sh"

say() { printf 'seeds-vm: %s (%d s)\n' "$*" "$SECONDS"; }

load_module || { say "cannot load incnn.ko"; exit 1; }
cluster_setup 4 "$rate" || { say "cannot set up the cluster"; exit 1; }
: >"$out/vm.jsonl"

row_json() { # method buckets log wire0 wire1 [reason]
	"$PYTHON" - "$@" "$rate" "$iters" "$TMP/stats.txt" <<'PY'
import json, re, sys
method, buckets, log, w0, w1, reason, rate, iters, stats = sys.argv[1:10]
r = {"method": method, "buckets": buckets, "rate": rate}
if reason:
    r["reason"] = reason
else:
    secs, summ = None, {}
    for line in open(log):
        m = re.match(r"(stop|done) iter[s]? (\d+) .*seconds ([0-9.]+)", line)
        if m:
            n, secs = int(m.group(2)), float(m.group(3))
        w = line.split()
        if w and w[0] == "summary":     # incnn-train's summary line
            summ = dict(zip(w[1::2], w[2::2]))
    tx = int(w1) - int(w0)
    # the trainer's own mean (training only) where it prints one
    ms = float(summ["iter_ms"]) if "iter_ms" in summ else secs / n * 1e3
    if "gvq_compressed_iters" in summ:
        r["gvq_compressed_iters"] = int(summ["gvq_compressed_iters"])
    r.update({"iters": n, "seconds": secs, "iter_ms": round(ms, 1),
              "eth0_tx_bytes": tx,
              "wire_bytes_per_iter": round(tx / 4 / n)})
    st = [json.loads(x) for x in open(stats) if x.strip()]
    if method in ("inceptionn", "ebq"):
        r["module_stats"] = st
print(json.dumps(r))
PY
}

n=0
total=$((${#SEEDS_METHODS[@]} * ${#SEEDS_BUCKETS[@]}))
rc=0
for m in "${SEEDS_METHODS[@]}"; do
	for b in "${SEEDS_BUCKETS[@]}"; do
		n=$((n + 1))
		: >"$TMP/stats.txt"
		if ! why=$(seeds_why "$m" "$b"); then
			say "[$n/$total] $m $b: $why"
			row_json "$m" "$b" - 0 0 "$why" >>"$out/vm.jsonl"
			continue
		fi
		seeds_args "$m" "$b" vm
		if [ "$m" = inceptionn ] || [ "$m" = ebq ]; then
			cluster_rule codec "$m" bound "2^-$SEEDS_BOUND" || exit 1
		else
			cluster_norule
		fi
		for ns in "${CL_NS[@]}"; do
			incctl "$ns" stats reset >/dev/null 2>&1
		done
		w0=0 w1=0
		for i in "${!CL_NS[@]}"; do
			w0=$((w0 + $(dev_stat "${CL_NS[i]}" eth0 tx_bytes)))
		done
		log=$out/vm-$m-$b.log
		t0=$SECONDS
		say "[$n/$total] $m $b: $iters iterations at $rate"
		if ! cluster_job env "${SEEDS_ENV[@]}" "$TOOL" \
			--data "${INCNN_SEEDS_DATA:-$BUILD/mnist/mnist.bin}" --iters "$iters" \
			"${SEEDS_ARGS[@]}" -q --log "$log"; then
			say "[$n/$total] $m $b: failed"
			row_json "$m" "$b" - 0 0 "failed in the VM: $(head -c 300 "$TMP/rank0.err" | tr '\n' ' ')" >>"$out/vm.jsonl"
			rc=1
			continue
		fi
		for i in "${!CL_NS[@]}"; do
			w1=$((w1 + $(dev_stat "${CL_NS[i]}" eth0 tx_bytes)))
		done
		[ "$m" = inceptionn ] || [ "$m" = ebq ] && cluster_stats | grep . >"$TMP/stats.txt"
		row_json "$m" "$b" "$log" "$w0" "$w1" "" >>"$out/vm.jsonl"
		say "[$n/$total] $m $b: done in $((SECONDS - t0)) s: $(tail -n 1 "$out/vm.jsonl" | cut -c1-160)"
	done
done
cluster_norule
exit $rc
