#!/bin/sh
# smoke.sh - proves the VM test environment; run it INSIDE the VM:
#
#   lab/vm.sh -- lab/smoke.sh
#
# Checks: kernel version, modprobe from the 9p root (veth, sch_netem, sch_tbf,
# nf_conntrack, nf_nat, nft_masq, iptable_nat), two network namespaces joined
# by a veth pair (10.77.0.1/24 <-> 10.77.0.2/24, addresses exist only inside
# the VM's namespaces), ping, netem/tbf qdiscs, an nft masquerade rule, and an
# iperf3 TCP run between the namespaces.  Writes smoke.txt to $VM_OUT.
# ping is iputils-ping or, if absent, busybox ping.
# Exits 0 only if everything worked.

set -u

if [ "${INCNN_IN_VM:-}" != 1 ]; then
	echo "smoke.sh: refusing to run outside the test VM (use lab/vm.sh -- $0)" >&2
	exit 2
fi

fails=0
step() { # description command...
	desc=$1
	shift
	if out=$("$@" 2>&1); then
		echo "ok   - $desc"
	else
		echo "FAIL - $desc: $out"
		fails=$((fails + 1))
	fi
}

# iputils-ping is optional on the host: fall back to busybox's ping
nsping() { # netns ping-args...
	ns=$1
	shift
	if command -v ping >/dev/null 2>&1; then
		ip netns exec "$ns" ping "$@"
	else
		ip netns exec "$ns" busybox ping "$@"
	fi
}

A=incnn-smoke-a
B=incnn-smoke-b

echo "kernel: $(uname -r)  cpus: $(nproc)  VM_REPO=${VM_REPO:-?}  VM_OUT=${VM_OUT:-?}"

for m in veth sch_netem sch_tbf nf_conntrack nf_nat nft_masq iptable_nat; do
	step "modprobe $m" modprobe "$m"
done

step "netns add $A" ip netns add "$A"
step "netns add $B" ip netns add "$B"
step "veth pair" ip link add va netns "$A" type veth peer name vb netns "$B"
step "addr 10.77.0.1/24 in $A" ip -n "$A" addr add 10.77.0.1/24 dev va
step "addr 10.77.0.2/24 in $B" ip -n "$B" addr add 10.77.0.2/24 dev vb
step "links up in $A" sh -c "ip -n $A link set lo up && ip -n $A link set va up"
step "links up in $B" sh -c "ip -n $B link set lo up && ip -n $B link set vb up"
step "ping $A -> $B" nsping "$A" -c 1 -W 5 10.77.0.2
step "iperf3 server in $B" ip netns exec "$B" iperf3 -s -1 -D -B 10.77.0.2 -p 5201
i=0
while [ "$i" -lt 50 ] && ! ip netns exec "$B" ss -Hltn 'sport = :5201' | grep -q 5201; do
	sleep 0.2
	i=$((i + 1))
done
json=${TMPDIR:-/tmp}/iperf3.json
if ip netns exec "$A" iperf3 -c 10.77.0.2 -p 5201 -t 3 -J >"$json" 2>&1; then
	bps=$(grep -A12 '"sum_received"' "$json" | sed -n 's/.*"bits_per_second":[[:space:]]*\([0-9.e+]*\).*/\1/p' | head -n1)
	if [ -n "$bps" ]; then
		mbps=$(awk -v b="$bps" 'BEGIN { printf "%.0f", b / 1e6 }')
		echo "ok   - iperf3 $A -> $B: $mbps Mbit/s (3 s, TCP over veth)"
	else
		echo "FAIL - iperf3: no throughput in output"
		cat "$json"
		fails=$((fails + 1))
	fi
else
	echo "FAIL - iperf3 client"
	cat "$json"
	fails=$((fails + 1))
fi

step "netem qdisc in $A" ip netns exec "$A" tc qdisc add dev va root netem delay 1ms
step "tbf qdisc in $B" ip netns exec "$B" tc qdisc add dev vb root tbf rate 1gbit burst 1mb latency 50ms
step "tc qdisc show" sh -c "ip netns exec $A tc qdisc show dev va | grep -q netem"
step "nft masquerade rule in $A" ip netns exec "$A" nft -f - <<'EOF'
table ip smoke {
	chain post {
		type nat hook postrouting priority srcnat; policy accept;
		oifname "va" masquerade
	}
}
EOF
step "iptables (nat table) in $B" ip netns exec "$B" iptables -t nat -L -n
step "ping after qdiscs/nat" nsping "$A" -c 1 -W 5 10.77.0.2

step "netns del" sh -c "ip netns del $A && ip netns del $B"

{
	echo "kernel=$(uname -r)"
	echo "iperf3_mbps=${mbps:-0}"
	echo "failures=$fails"
} >"${VM_OUT:-/tmp}/smoke.txt"

if [ "$fails" -ne 0 ]; then
	echo "smoke: $fails check(s) FAILED"
	exit 1
fi
echo "smoke: all checks passed"
