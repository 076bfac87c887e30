#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# torch.sh - PyTorch DDP through the real module (issue 12, test 5): a
# DDP job of INCNN_TORCH_HOSTS ranks (default 2: importing torch takes
# over a minute per process under TCG; 4 hosts took 218 s of the runner's
# 300 s once), one per host of the VM cluster
# (lab/cluster.sh), incnn loaded with "codec ebq bound 2^-10" for ToS
# 0x28. Every rank (selftests/python/ddp_worker.py vm) runs the same
# three DDP steps and one 1 MiB allreduce twice: through
# incnn.torch.State(codec="auto") (marked sockets: the module's rule,
# read over genetlink, the module compresses) and through
# State(codec="ebq:2^-10", tos=0) (unmarked: the library's userspace
# emulation only). The gradients, parameters and sums must be equal bit
# for bit, on every rank, and the module must have framed the traffic.
#
# Needs Debian's python3-torch (seen through the host's root file system)
# and the package built in build/python (make).

. "$(dirname "$0")/lib.sh"
# shellcheck source=../../lab/cluster.sh
. "$(dirname "$0")/../../lab/cluster.sh"

N=${INCNN_TORCH_HOSTS:-2}
ktap_header "PyTorch DDP (incnn.torch) through the module, $N hosts"
if [ ! -r /usr/lib/python3/dist-packages/torch/__init__.py ] ||
	[ ! -r "$BUILD/python/incnn/torch.py" ]; then
	skip "DDP job through the module" \
		"needs python3-torch (scripts/check/deps.sh torch) and make python"
	ktap_finish
	exit 4
fi
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
cluster_setup "$N" || { fail "$N hosts on a bridge"; ktap_finish; exit 1; }
cluster_rule codec ebq bound 2^-10 || fail "incctl rule add tos 0x28 codec ebq bound 2^-10"
for ns in "${CL_NS[@]}"; do
	incctl "$ns" stats reset >/dev/null 2>&1
done

# jstr FILE KEY: the string value (or list of strings, comma-separated,
# quotes removed) of KEY in a one-line JSON file
jstr() {
	local re="\"$2\": (\"[^\"]*\"|\\[[^]]*\\]|[-0-9.e]+)"
	[[ $(cat "$1") =~ $re ]] || return 1
	local v=${BASH_REMATCH[1]//\"/}
	v=${v#[}
	echo "${v%]}"
}

mkdir -p "$TMP/out"
if cluster_job env PYTHONPATH="$BUILD/python" GLOO_SOCKET_IFNAME=eth0 \
	"$PYTHON" "$REPO/selftests/python/ddp_worker.py" vm "$TMP/out" \
	ebq:2^-10; then
	ok "$N-rank DDP job: codec auto through the module, then the emulation"
else
	fail "$N-rank DDP job: codec auto through the module, then the emulation"
	ktap_finish
	exit 1
fi

first=
diff=
for ((i = 0; i < N; i++)); do
	f=$TMP/out/rank$i.json
	codec=$(jstr "$f" mod_codec)
	if [ "$codec" = "ebq:2^-10" ]; then
		ok "rank $i: codec auto = the module's rule ($codec)"
	else
		fail "rank $i: codec auto = the module's rule" "got '$codec'"
	fi
	bad=
	for k in grad0 params allreduce; do
		IFS=, read -r m e <<<"$(jstr "$f" "$k")"
		m=${m// /}
		e=${e// /}
		[ -n "$m" ] && [ "$m" = "$e" ] || bad+=" $k: module $m, emulation $e"
	done
	if [ -z "$bad" ]; then
		ok "rank $i: gradients, parameters and sums = userspace emulation bit for bit"
	else
		fail "rank $i: gradients, parameters and sums = userspace emulation bit for bit" "$bad"
	fi
	all=$(jstr "$f" grad0)$(jstr "$f" params)$(jstr "$f" allreduce)
	[ -n "$first" ] || first=$all
	[ "$all" = "$first" ] || diff=1
	err=$(jstr "$f" max_err)
done
if [ -z "$diff" ]; then
	ok "replicas bit-identical on all $N ranks"
else
	fail "replicas bit-identical on all $N ranks"
fi
# the codec really changed the values, within the ring's budget N * 2^-10
budget=$(awk -v n="$N" 'BEGIN { printf "%.8f", n / 1024 + 1e-5 }')
if fcmp "$err" ">" 0.0001 && fcmp "$err" "<=" "$budget"; then
	ok "allreduce error vs gloo's sum: $err (quantised, budget $budget)"
else
	fail "allreduce error vs gloo's sum: $err (want > 0.0001 and <= $budget)"
fi
framed=
drops=0
badf=
for ns in "${CL_NS[@]}"; do
	f=$(counter "$ns" tx_framed)
	framed+=" $f"
	[ "$f" -gt 0 ] || badf=1
	drops=$((drops + $(counter "$ns" rx_dropped)))
done
if [ -z "$badf" ] && [ "$drops" = 0 ]; then
	ok "the module framed the job's gradients: tx_framed$framed, nothing dropped"
else
	fail "the module framed the job's gradients: tx_framed$framed (want > 0 each), rx_dropped $drops"
fi
cluster_norule
ktap_finish
