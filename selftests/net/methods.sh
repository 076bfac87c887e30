#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# methods.sh - compression inside the collective (THC, GradiVeQ) through
# the real module: four hosts on a bridge (lab/cluster.sh), incnn loaded,
# a lossy rule (inceptionn 2^-10) for ToS 0x28 on every host, and
# incnn-allreduce as a 4-rank job (one rank per host).
#
# A THC or GradiVeQ communicator's payloads (b-bit indices and integer
# lanes; PCA coefficients) are not fp32 streams: its data connections are
# unmarked (ToS 0) whatever --tos says, so the module must never frame
# (re-quantise) them. For each method: --check passes (replicas
# bit-identical; GradiVeQ: the compressors too), the JSON reports tos 0,
# no host's module framed or decoded anything during the run (tx_framed and
# rx_frames stay 0 after a stats reset), and the result equals bit for bit
# the same job on host 0's loopback (the wire changed nothing); GradiVeQ
# also with its sampling calls quantised by an emulated ebq 2^-8. The
# control: the same job with method none (marked, ToS 0x28) is framed on
# every host.

. "$(dirname "$0")/lib.sh"
# shellcheck source=../../lab/cluster.sh
. "$(dirname "$0")/../../lab/cluster.sh"

ktap_header "THC and GradiVeQ through the module: never framed"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
cluster_setup 4 || { fail "4 hosts on a bridge"; ktap_finish; exit 1; }
cluster_rule codec inceptionn bound 2^-10 ||
	{ fail "incctl rule add tos 0x28 codec inceptionn bound 2^-10"; ktap_finish; exit 1; }

SIZE=${METHODS_SIZE:-256K}
COMMON=(-b "$SIZE" -e "$SIZE" -i 1 -w 2 --scale 1e-2 --seed 5 --tos 0x28)

# jget FILE KEY: KEY of the first result row of an incnn-allreduce JSON
jget() {
	local row
	row=$(grep -m1 '"bytes"' "$1") || return 1
	local re="\"$2\":\"?([^\",}]*)"
	[[ $row =~ $re ]] && echo "${BASH_REMATCH[1]}"
}

# framed: every host's tx_framed and rx_frames, "h0tx/h0rx ..."; *_SUM
framed() {
	local i tx rx
	FRAMED=
	FRAMED_SUM=0
	FRAMED_MIN_TX=0
	for i in "${!CL_NS[@]}"; do
		tx=$(counter "${CL_NS[i]}" tx_framed)
		rx=$(counter "${CL_NS[i]}" rx_frames)
		FRAMED+=" $tx/$rx"
		FRAMED_SUM=$((FRAMED_SUM + tx + rx))
		FRAMED_MIN_TX=$((i == 0 || tx < FRAMED_MIN_TX ? tx : FRAMED_MIN_TX))
	done
}

run_method() { # name method [codec bound: emulated, on both runs]
	local n=$1 m=$2 out=$TMP/$1.json d e tos id
	local wire=(--codec auto) lo=(--codec none)
	if [ $# -gt 2 ]; then
		wire=(--codec "$3" --bound "$4")
		lo=("${wire[@]}")
	fi
	if ! cluster_allreduce "$out" "${COMMON[@]}" --method "$m" \
		"${wire[@]}" --check; then
		fail "$n: 4-rank job through the module, --check" "$(cat "$out")"
		return
	fi
	framed
	tos=$(grep -o '"tos":[0-9]*' "$out")
	id=$(jget "$out" identical)
	if [ "$id" = true ] && [ "$tos" = '"tos":0' ]; then
		ok "$n: --check passes, replicas bit-identical, sockets unmarked ($tos)"
	else
		fail "$n: identical $id, $tos (want true, 0)"
	fi
	if [ "$m" = none ]; then
		return
	fi
	if [ "$FRAMED_SUM" = 0 ]; then
		ok "$n: the module framed nothing (tx_framed/rx_frames per host:$FRAMED)"
	else
		fail "$n: the module framed its payloads (tx_framed/rx_frames per host:$FRAMED)"
	fi
	cluster_emulate "$TMP/$n.lo.json" "${COMMON[@]}" --method "$m" \
		"${lo[@]}" || { fail "$n: the loopback run"; return; }
	d=$(jget "$out" digest)
	e=$(jget "$TMP/$n.lo.json" digest)
	if [ -n "$d" ] && [ "$d" = "$e" ]; then
		ok "$n: result = the same job on loopback, bit for bit ($d)"
	else
		fail "$n: result = the same job on loopback" "module path $d, loopback $e"
	fi
}

run_method thc thc
run_method gradiveq gradiveq
# GradiVeQ's sampling calls quantised by an emulated ebq 2^-8 (the
# paper's scalar quantisation of its uncompressed iterations): the same
# guarantees, another result than fp32 sampling's
run_method gradiveq-ebq gradiveq ebq 2^-8
if [ "$(jget "$TMP/gradiveq-ebq.json" digest)" != \
	"$(jget "$TMP/gradiveq.json" digest)" ]; then
	ok "gradiveq-ebq: quantised sampling gives another result"
else
	fail "gradiveq-ebq: quantised sampling gives another result"
fi
if [ "$(jget "$TMP/gradiveq.json" gvq_compressed_calls)" = 1 ]; then
	ok "gradiveq: the timed call was compressed"
else
	fail "gradiveq: the timed call was compressed" "$(cat "$TMP/gradiveq.json")"
fi

# the control: fp32 on marked sockets is framed by every host
if cluster_allreduce "$TMP/none.json" "${COMMON[@]}" --method none \
	--codec auto --check; then
	framed
	if [ "$FRAMED_MIN_TX" -gt 0 ] &&
		[ "$(grep -o '"tos":[0-9]*' "$TMP/none.json")" = '"tos":40' ]; then
		ok "none (control): marked, framed by every host (tx_framed/rx_frames:$FRAMED)"
	else
		fail "none (control): framed by every host (tx_framed/rx_frames:$FRAMED)"
	fi
else
	fail "none (control): 4-rank job through the module" "$(cat "$TMP/none.json")"
fi
cluster_norule

ktap_finish
