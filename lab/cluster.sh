# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# cluster.sh - the lab's small training cluster in the test VM, for the
# collective tests (selftests/net/cluster.sh, torch.sh) and the demo
# (scripts/demo/demo-cluster.sh).
# Source it after netns.sh (or selftests/net/lib.sh, which sources it).
#
#   cluster_setup N [RATE]   N hosts (namespaces CL_NS[i], addresses
#                            CL_ADDR4[i] 10.77.x.i+1 and CL_ADDR6[i]
#                            fd00:77:x::i+1, CL_ADDR[i] the one of
#                            INCNN_FAMILY, device eth0) plugged into a
#                            bridge in namespace CL_SW (ports p0..pN-1);
#                            with RATE, cluster_limit RATE
#   cluster_limit RATE       limit every host link to RATE (tc syntax,
#                            e.g. 8mbit) in each direction: tbf on eth0
#                            and on the switch port
#   cluster_rule ARGS...     incctl rule add tos 0x28 ARGS on every host
#                            (replacing the rule there was)
#   cluster_norule           delete the tos 0x28 rule on every host
#   cluster_job CMD...       CMD as a job of N ranks, rank i on host i
#                            (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE,
#                            INCNN_DATA_ADDR; rendezvous through host 0);
#                            rank i's output in $TMP/rank$i.out and .err;
#                            fails (printing the failed ranks' stderr) if
#                            any rank fails
#   cluster_stats            every host's incctl -j stats, a line each
#   cluster_allreduce OUT ARGS...
#                            one incnn-allreduce job, rank i on host i
#                            (env rendezvous through host 0); rank 0's JSON
#                            in OUT, the run's wire bytes (sum of the
#                            hosts' eth0 tx bytes) in CL_WIRE and its
#                            Table III histogram (sum of the hosts'
#                            incctl stats) in CL_HIST
#   cluster_emulate OUT ARGS...
#                            the same job as N local ranks on host 0's
#                            loopback with unmarked sockets (--tos 0): the
#                            module never touches it, ARGS must name the
#                            codec (userspace emulation only); JSON in OUT

CL_NS=()
CL_ADDR=()
CL_ADDR4=()
CL_ADDR6=()
CL_SW=
CL_WIRE=0
CL_HIST="0 0 0 0"
ALLREDUCE=$BUILD/rel/bin/incnn-allreduce

cluster_setup() { # n [rate]
	local n=$1 rate=${2:-} i ns
	CL_SW=incnn-$TAG-sw
	new_ns "$CL_SW" || return 1
	ip -n "$CL_SW" link add br0 type bridge || return 1
	ip -n "$CL_SW" link set br0 up || return 1
	for ((i = 0; i < n; i++)); do
		ns=incnn-$TAG-h$i
		CL_NS[i]=$ns
		CL_ADDR4[i]=10.77.$SUBNET.$((i + 1))
		CL_ADDR6[i]=fd00:77:$SUBNET::$((i + 1))
		CL_ADDR[i]=$(pick_family "${CL_ADDR4[i]}" "${CL_ADDR6[i]}")
		new_ns "$ns" &&
			ip link add eth0 netns "$ns" type veth peer name "p$i" \
				netns "$CL_SW" &&
			ip -n "$ns" addr add "${CL_ADDR4[i]}/24" dev eth0 &&
			ip -n "$ns" -6 addr add "${CL_ADDR6[i]}/64" dev eth0 nodad &&
			ip -n "$ns" link set eth0 up &&
			ip -n "$CL_SW" link set "p$i" master br0 &&
			ip -n "$CL_SW" link set "p$i" up || return 1
	done
	[ -z "$rate" ] || cluster_limit "$rate" || return 1
	# the library asks for 4 MiB socket buffers
	sysctl -qw net.core.wmem_max=16777216 net.core.rmem_max=16777216
	for ((i = 1; i < n; i++)); do
		wait_ping "${CL_NS[i]}" "${CL_ADDR[0]}" || return 1
	done
}

cluster_limit() { # rate
	local i
	for i in "${!CL_NS[@]}"; do
		# a burst of a few full-size packets; latency bounds the queue
		tc -n "${CL_NS[i]}" qdisc add dev eth0 root tbf rate "$1" \
			burst 32kb latency 400ms &&
			tc -n "$CL_SW" qdisc add dev "p$i" root tbf rate "$1" \
				burst 32kb latency 400ms || return 1
	done
}

cluster_rule() { # incctl rule arguments after "tos 0x28"
	local ns
	cluster_norule
	for ns in "${CL_NS[@]}"; do
		incctl "$ns" rule add tos 0x28 "$@" || return 1
	done
}

cluster_norule() {
	local ns
	for ns in "${CL_NS[@]}"; do
		incctl "$ns" rule del tos 0x28 >/dev/null 2>&1
	done
	return 0
}

cluster_stats() {
	local ns
	for ns in "${CL_NS[@]}"; do
		kstats "$ns"
		echo
	done
}

# _cluster_hist: the sum of the hosts' per-codec histograms
_cluster_hist() {
	cluster_stats | "$PYTHON" -c '
import json, sys
h = [0, 0, 0, 0]
for line in sys.stdin:
    if not line.strip():
        continue
    for c in json.loads(line).get("codec_stats", []):
        for i, k in enumerate(("hist_0", "hist_8", "hist_16", "hist_32")):
            h[i] += c.get(k, 0)
print(*h)'
}

cluster_job() { # command...
	local i rc=0 n=${#CL_NS[@]}
	local -a pids=()
	next_port
	for ((i = 0; i < n; i++)); do
		MASTER_ADDR=${CL_ADDR[0]} MASTER_PORT=$PORT RANK=$i \
			WORLD_SIZE=$n INCNN_DATA_ADDR=${CL_ADDR[i]} \
			nsenter --net="/run/netns/${CL_NS[i]}" "$@" \
			>"$TMP/rank$i.out" 2>"$TMP/rank$i.err" &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[i]}" || { rc=1; sed "s/^/#   rank $i: /" "$TMP/rank$i.err"; }
	done
	return $rc
}

cluster_allreduce() { # out args...
	local out=$1 i rc=0 w0=0 w1=0 n=${#CL_NS[@]}
	shift
	for ((i = 0; i < n; i++)); do
		incctl "${CL_NS[i]}" stats reset >/dev/null 2>&1
		w0=$((w0 + $(dev_stat "${CL_NS[i]}" eth0 tx_bytes)))
	done
	cluster_job "$ALLREDUCE" -j "$@" || rc=1
	for ((i = 0; i < n; i++)); do
		w1=$((w1 + $(dev_stat "${CL_NS[i]}" eth0 tx_bytes)))
	done
	CL_WIRE=$((w1 - w0))
	module_loaded && CL_HIST=$(_cluster_hist)
	cp "$TMP/rank0.out" "$out"
	return $rc
}

cluster_emulate() { # out args...
	local out=$1
	shift
	nsx "${CL_NS[0]}" "$ALLREDUCE" -n "${#CL_NS[@]}" -j --tos 0 "$@" >"$out"
}
