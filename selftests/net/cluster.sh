#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cluster.sh - the collective library through the real module: four hosts
# (namespaces) on a bridge, incnn loaded, rules set with incctl, and
# incnn-allreduce run as a 4-rank job (one rank per host, env rendezvous).
#
# Correctness, on unlimited links: for the ring and the worker-aggregator
# (PS) algorithms, with and without a lossy rule, every replica is
# bit-identical, within the error budget, and EQUAL BIT FOR BIT to the
# same job run with the library's userspace emulation of the codec on
# unmarked loopback sockets (the kernel path and the emulation agree);
# with a rule the module really framed the traffic (fewer wire bytes,
# tx_framed on every host, nothing dropped).
#
# Then, on tbf-limited links, the structure of the INCEPTIONN paper's
# Fig. 12: communication time of WA (worker-aggregator), WA+C, INC (ring)
# and INC+C, printed as a table in the log. Times are reported, not
# asserted (performance goals live in benchmarks, see scripts/demo/demo.sh).

. "$(dirname "$0")/lib.sh"
# shellcheck source=../../lab/cluster.sh
. "$(dirname "$0")/../../lab/cluster.sh"

ktap_header "4-host allreduce through the module"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
cluster_setup 4 || { fail "4 hosts on a bridge"; ktap_finish; exit 1; }

SIZE=${CLUSTER_SIZE:-512K}
COMMON=(-b "$SIZE" -e "$SIZE" -i 1 -w 0 --scale 1e-2 --seed 7)

# jget FILE KEY: KEY of the first result row of an incnn-allreduce JSON
jget() {
	local row
	row=$(grep -m1 '"bytes"' "$1") || return 1
	local re="\"$2\":\"?([^\",}]*)"
	[[ $row =~ $re ]] && echo "${BASH_REMATCH[1]}"
}

# case NAME ALGO RULE-ARGS|- EMU-CODEC-ARGS...
run_case() {
	local name=$1 algo=$2 rule=$3 d e id within framed drops i f bad want
	shift 3
	if [ "$rule" = - ]; then
		cluster_norule
	else
		# shellcheck disable=SC2086 # the rule's words
		cluster_rule $rule || { fail "$name: incctl rule add $rule"; return; }
	fi
	if ! cluster_allreduce "$TMP/$name.json" "${COMMON[@]}" --algo "$algo" \
		--codec auto --check; then
		fail "$name: 4-rank job through the module" "$(cat "$TMP/$name.json")"
		return
	fi
	id=$(jget "$TMP/$name.json" identical)
	within=$(jget "$TMP/$name.json" within_budget)
	if [ "$id" = true ] && [ "$within" = true ]; then
		ok "$name: replicas bit-identical, within the error budget"
	else
		fail "$name: replicas identical ($id), within budget ($within)"
	fi
	cluster_emulate "$TMP/$name.emu.json" "${COMMON[@]}" --algo "$algo" "$@" ||
		{ fail "$name: emulation run"; return; }
	d=$(jget "$TMP/$name.json" digest)
	e=$(jget "$TMP/$name.emu.json" digest)
	if [ -n "$d" ] && [ "$d" = "$e" ]; then
		ok "$name: result = userspace emulation ($*) bit for bit ($d)"
	else
		fail "$name: result = userspace emulation ($*) bit for bit" \
			"module path $d, emulation $e"
	fi
	[ "$rule" = - ] && return
	# every sender of gradients framed them: all hosts in the ring, the
	# workers in PS (the aggregator's down leg is unmarked)
	framed=
	drops=0
	bad=
	for i in "${!CL_NS[@]}"; do
		f=$(counter "${CL_NS[i]}" tx_framed)
		framed+=" $f"
		drops=$((drops + $(counter "${CL_NS[i]}" rx_dropped)))
		if [ "$algo" = ps ] && [ "$i" = 0 ]; then
			[ "$f" = 0 ] || bad=1
		else
			[ "$f" -gt 0 ] || bad=1
		fi
	done
	want="> 0 on every host"
	[ "$algo" = ps ] && want="0 on the aggregator, > 0 on the workers"
	if [ -z "$bad" ] && [ "$drops" = 0 ]; then
		ok "$name: tx_framed$framed ($want), nothing dropped"
	else
		fail "$name: tx_framed$framed (want $want), rx_dropped $drops (want 0)"
	fi
}

run_case ring-plain ring - --codec none
run_case ring-ebq8 ring "codec ebq bound 2^-8" --codec ebq --bound 2^-8
run_case ring-inc10 ring "codec inceptionn bound 2^-10" --codec inceptionn --bound 2^-10
run_case ps-plain ps - --codec none
run_case ps-ebq8 ps "codec ebq bound 2^-8" --codec ebq --bound 2^-8

# the wire: a lossy rule must shrink the job's bytes
cluster_norule
cluster_allreduce "$TMP/w0.json" "${COMMON[@]}" --codec auto
w_plain=$CL_WIRE
cluster_rule codec ebq bound 2^-8
cluster_allreduce "$TMP/w1.json" "${COMMON[@]}" --codec auto
w_ebq=$CL_WIRE
r=$(ratio "$w_plain" "$w_ebq")
if fcmp "$r" ">" 2; then
	ok "wire bytes of a ring job: $w_plain plain, $w_ebq with ebq 2^-8 (ratio $r)"
else
	fail "wire bytes of a ring job: $w_plain plain, $w_ebq with ebq 2^-8 (ratio $r, want > 2)"
fi

# --- Fig. 12 structure on limited links ------------------------------------
# as in make demo: slow enough that the emulated CPUs keep up with a
# compressed flow (about 9 Mbit/s of gradients per host under TCG)
RATE=${CLUSTER_RATE:-4mbit}
TSIZE=${CLUSTER_TSIZE:-512K}
cluster_limit "$RATE" || fail "tbf $RATE on every host link"
info "communication time, 4 hosts, tbf $RATE per link and direction, $TSIZE of Laplace(1e-2) fp32 per rank"
info "$(printf '%-8s %-16s %10s %12s %8s' config codec 'time(ms)' 'wire(B)' speedup)"
base=
allok=1
for cfg in "WA ps -" "WA+C ps ebq" "INC ring -" "INC+C ring ebq"; do
	read -r label algo c <<<"$cfg"
	if [ "$c" = - ]; then
		cluster_norule
		cname=none
	else
		cluster_rule codec ebq bound 2^-8
		cname="ebq:2^-8"
	fi
	if cluster_allreduce "$TMP/t.json" -b "$TSIZE" -e "$TSIZE" -i 1 -w 0 \
		--scale 1e-2 --algo "$algo" --codec auto --check; then
		t=$(jget "$TMP/t.json" time_us)
		t=$(awk -v t="$t" 'BEGIN { printf "%.0f", t / 1000 }')
		[ -n "$base" ] || base=$t
		info "$(printf '%-8s %-16s %10s %12s %8s' "$label" "$cname" "$t" \
			"$CL_WIRE" "$(ratio "$base" "$t")")"
	else
		allok=
		info "$label: job failed"
	fi
done
if [ -n "$allok" ]; then
	ok "WA, WA+C, INC, INC+C jobs on $RATE links: all bit-identical and within budget"
else
	fail "WA, WA+C, INC, INC+C jobs on $RATE links"
fi
cluster_norule

ktap_finish
