#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sframe-bench.sh - superframes against per-packet frames (issue 20's
# goals), not part of make check: run it alone,
#   selftests/net/vm-check.sh sframe-bench.sh
# For zeros and for Laplace gradients (scale 1e-3) under ebq 2^-10, on an
# unlimited veth, alternating A/B rounds of three transfers of the same
# INCNN_SFB_MB MiB (default 32): unmarked, marked per-packet (superframes off),
# marked with superframes. Reports the sender's va tx bytes and packets,
# the wire ratio (unmarked bytes / marked bytes) against the codec's own
# ratio (incnn-codec roundtrip), and goodput (MB/s, the receiver's
# completion) marked / unmarked. Medians over INCNN_SFB_ROUNDS (default 3).
# INCNN_SFB_CODEC: the rule's codec and bound (default "ebq 2^-10", e.g.
# "zebq 2^-10"); INCNN_SFB_REAL: a file of real gradients (fp32, e.g. a
# bucket dump of the demo's trainer, on a path the VM sees) sent as a third
# data set, its first INCNN_SFB_MB MiB. INCNN_SFB_MIN_TSO_SEGS: the
# sender's net.ipv4.tcp_min_tso_segs (default: the kernel's, 2): TCP sizes
# its GSO skbs from the pacing rate, so the VM's slow emulated CPUs get
# skbs of a few segments where a real host gets 64 KB; 44 gives the
# superframes 64 KB skbs to compress, as a fast host would.

. "$(dirname "$0")/lib.sh"

ktap_header "sframe-bench: superframes vs per-packet (A/B)"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
MB=${INCNN_SFB_MB:-32}
ROUNDS=${INCNN_SFB_ROUNDS:-3}
XFER_TIMEOUT=600
read -r CODEC_NAME CODEC_BOUND <<<"${INCNN_SFB_CODEC:-ebq 2^-10}"
for ns in "$NS_A" "$NS_B"; do
	incctl "$ns" rule add tos 0x28 codec "$CODEC_NAME" bound "$CODEC_BOUND"
done

head -c $((MB << 20)) /dev/zero >"$TMP/zeros.bin"
gen_floats "$TMP/grads.bin" $((MB << 18)) 5 1e-3
SETS="zeros grads"
if [ -n "${INCNN_SFB_REAL:-}" ]; then
	head -c $((MB << 20)) "$INCNN_SFB_REAL" >"$TMP/real.bin" ||
		{ fail "INCNN_SFB_REAL: cannot read $INCNN_SFB_REAL"; ktap_finish; exit 1; }
	SETS="$SETS real"
fi
if [ -n "${INCNN_SFB_MIN_TSO_SEGS:-}" ]; then
	nsx "$NS_A" sysctl -qw net.ipv4.tcp_min_tso_segs="$INCNN_SFB_MIN_TSO_SEGS" ||
		{ fail "sysctl net.ipv4.tcp_min_tso_segs=$INCNN_SFB_MIN_TSO_SEGS"; ktap_finish; exit 1; }
fi
info "codec $CODEC_NAME:$CODEC_BOUND, $MB MiB per transfer, $ROUNDS rounds," \
	"tcp_min_tso_segs $(nsx "$NS_A" sysctl -n net.ipv4.tcp_min_tso_segs)"

# one MODE DATA: a transfer; prints "bytes packets nanoseconds"
one() {
	local mode=$1 data=$2 b0 p0 t0 t1 sw tos=()
	case $mode in
	unmarked) ;;
	v1 | v2)
		sw=off
		[ "$mode" = v2 ] && sw=on
		incctl "$NS_A" set superframes $sw >/dev/null &&
			incctl "$NS_B" set superframes $sw >/dev/null
		tos=(-T 0x28)
		;;
	esac
	b0=$(dev_stat "$NS_A" va tx_bytes)
	p0=$(dev_stat "$NS_A" va tx_packets)
	t0=$(date +%s%N)
	xfer "bench" "$TMP/$data.bin" "${tos[@]}" >/dev/null 2>&1 || { echo "0 0 0"; return; }
	t1=$(date +%s%N)
	echo "$(($(dev_stat "$NS_A" va tx_bytes) - b0)) $(($(dev_stat "$NS_A" va tx_packets) - p0)) $((t1 - t0))"
}

declare -A mb mp mt
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for data in $SETS; do
	rt=$("$CODEC" roundtrip --codec "$CODEC_NAME" --bound "$CODEC_BOUND" --json "$TMP/$data.bin" /dev/null)
	codec_ratio=$(jnum "$rt" ratio)
	declare -A B=() P=() T=()
	for r in $(seq 1 "$ROUNDS"); do
		for mode in unmarked v1 v2; do
			read -r b p t <<<"$(one $mode $data)"
			B[$mode]+="$b "
			P[$mode]+="$p "
			T[$mode]+="$t "
			info "$data round $r $mode: $b bytes, $p packets, $((t / 1000000)) ms"
		done
	done
	for mode in unmarked v1 v2; do
		mb[$mode]=$(tr ' ' '\n' <<<"${B[$mode]}" | grep . | median)
		mp[$mode]=$(tr ' ' '\n' <<<"${P[$mode]}" | grep . | median)
		mt[$mode]=$(tr ' ' '\n' <<<"${T[$mode]}" | grep . | median)
	done
	for mode in v1 v2; do
		wr=$(ratio "${mb[unmarked]}" "${mb[$mode]}")
		gp=$(awk -v a="${mt[unmarked]}" -v b="${mt[$mode]}" 'BEGIN { printf "%.2f", b ? a / b : 0 }')
		mbs=$(awk -v n=$((MB << 20)) -v t="${mt[$mode]}" 'BEGIN { printf "%.1f", t ? n / t * 1000 : 0 }')
		pps=$(awk -v p="${mp[$mode]}" -v t="${mt[$mode]}" 'BEGIN { printf "%.0f", t ? p / t * 1e9 : 0 }')
		ok "$data $mode: wire ratio $wr (codec $codec_ratio, $(awk -v w="$wr" -v c="$codec_ratio" 'BEGIN { printf "%.2f", w / c }')x of it), ${mb[$mode]} bytes ${mp[$mode]} packets, goodput $mbs MB/s = ${gp}x unmarked, $pps packets/s"
	done
	ok "$data unmarked: ${mb[unmarked]} bytes ${mp[unmarked]} packets, $(awk -v n=$((MB << 20)) -v t="${mt[unmarked]}" 'BEGIN { printf "%.1f", t ? n / t * 1000 : 0 }') MB/s"
done

ktap_finish
