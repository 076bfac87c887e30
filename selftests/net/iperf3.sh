#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iperf3.sh - Debian's unmodified iperf3 as the application:
#   iperf3 -c B --tos 0x28 -F grads.bin -n BYTES   against
#   iperf3 -s -4 -1 -F out.bin
# out.bin must equal the roundtrip prediction of grads.bin. iperf3 sends
# its 37-byte cookie before it marks the data socket, so the float grid is
# anchored at stream byte 37 and the file's floats lie on it; the server
# does not write the cookie into out.bin. Also prints the throughput of
# plain and marked iperf3 runs, over INCNN_FAMILY's addresses.
#
# INCNN_IPERF_AB=N (not in make check): then N rounds more, each a marked run
# over IPv4 and one over IPv6 (alternating, in this one VM), and the ratio
# of the IPv6 goodput to the IPv4 one (medians), for docs/results.md.
#
# Two iperf3 -F properties are worked around (see the comments below):
#  - the client's data socket is non-blocking and iperf_tcp_send() resends
#    from the start of its buffer after a partial write, so the stream
#    holds repeated pieces of the file whenever the socket buffer fills
#    up: the test makes the send buffer larger than the whole transfer;
#  - the client ends the test as soon as write() took the last byte and
#    the server then stops writing out.bin, so the tail of the stream may
#    be missing: the client is paced (-b) to keep little in flight, and
#    out.bin must be an exact prefix of the prediction, at least 90% of it.

. "$(dirname "$0")/lib.sh"

ktap_header "iperf3"
command -v iperf3 >/dev/null || { skip "iperf3" "iperf3 not installed"; ktap_finish; exit 0; }
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
# iperf3 marks its data socket after connect(): its SYN must be marked for
# the receiver to be offered (mark_syns in lab/netns.sh)
mark_syns "$NS_A" 0x28 || { fail "nft: mark the sender's SYNs"; ktap_finish; exit 1; }

BYTES=1000000
gen_floats "$TMP/grads.bin" $((BYTES / 4)) 61 1e-1
predict "$TMP/want" "$TMP/grads.bin" 0 inceptionn --bound 2^-10
# a send buffer (SO_SNDBUF, doubled by the kernel) larger than the whole
# transfer: every write() of iperf3 is taken whole, none is partial
sysctl -qw net.core.wmem_max=16777216 net.core.rmem_max=16777216

# iperf name client-args...: run one test, server output in $TMP/name.*,
# to IPERF_TO (default $ADDR_B)
iperf() {
	local name=$1 to=${IPERF_TO:-$ADDR_B} spid rc fam=-4
	shift
	case $to in *:*) fam=-6 ;; esac
	next_port
	nsx "$NS_B" iperf3 -s "$fam" -1 -B "$to" -p "$PORT" "${SERVER_ARGS[@]}" \
		>"$TMP/$name.server" 2>&1 &
	spid=$!
	wait_listen "$NS_B" "$PORT" || { kill $spid; return 1; }
	nsx "$NS_A" iperf3 -c "$to" -p "$PORT" -f m "$@" >"$TMP/$name.client" 2>&1
	rc=$?
	wait $spid
	return $rc
}

rate() { # client output: the receiver's bitrate line
	awk '/receiver/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /bits\/sec/) { print $i " " $(i + 1); exit } }' "$1"
}

# --- throughput: unmarked and marked, 3 seconds each ---------------------------
SERVER_ARGS=()
mrate=
# plain-nogso: the same per-packet work without incnn (TSO and GSO off on
# va: the device path segments every skb into MSS-sized packets, as
# incnn's hook does for marked traffic)
for m in plain plain-nogso marked; do
	args=(-t 3)
	[ $m = marked ] && args+=(--tos 0x28 -F "$TMP/grads.bin")
	[ $m = plain-nogso ] && nsx "$NS_A" ethtool -K va tso off gso off >/dev/null
	[ $m = marked ] && nsx "$NS_A" ethtool -K va tso on gso on >/dev/null
	if iperf tput-$m "${args[@]}"; then
		r=$(rate "$TMP/tput-$m.client")
		ok "iperf3 $m run: ${r:-?}"
		[ $m = marked ] && mrate=${r%% *}
	else
		fail "iperf3 $m run" "$(tail -n 5 "$TMP/tput-$m.client")"
	fi
done

# --- exactness with -F ----------------------------------------------------
# The client counts a byte as sent when write() takes it and ends the test
# (-n) right after the last write; the server then stops reading and
# out.bin misses what was still in flight. Pace the client (-b) at half
# the marked rate just measured, in small blocks (-l), so that little is
# in flight at the end; then out.bin must be an exact prefix of the
# prediction, at least 90% of it. At most 4 Mbit/s: the server's -F
# writes sustain about 13 Mbit/s under TCG, and the short measurement
# above can come out far higher than that (a truncated, still exact,
# out.bin failed the 90% check at 17-21 Mbit/s).
# At least 0.1 Mbit/s: the debug kernel under load measured 0.51 (a 1 Mbit/s
# floor there left out.bin at 30 %, exact but short).
bw=$(awk -v r="${mrate:-4}" 'BEGIN { b = r / 2; if (b > 4) b = 4; if (b < 0.1) b = 0.1; printf "%.1fM", b }')
SERVER_ARGS=(-F "$TMP/out.bin")
incctl "$NS_A" stats reset
# the flow is listed after the transfer: it must outlive the checks before
# (the default 10 s close-timeout did not on the debug kernel)
incctl "$NS_A" set close-timeout $((120 * SLOW))
if iperf exact --tos 0x28 -F "$TMP/grads.bin" -n $BYTES -w 8M -l 16K -b "$bw"; then
	size=$(stat -c %s "$TMP/out.bin")
	cmp -s -n "$size" "$TMP/want" "$TMP/out.bin"
	same_prefix=$?
	pct=$((size * 100 / BYTES))
	if [ $same_prefix = 0 ] && [ $pct -ge 90 ]; then
		ok "iperf3 -F -b $bw: out.bin ($size bytes, $pct%) is an exact prefix of the prediction"
	else
		fail "iperf3 -F -b $bw: out.bin ($size bytes, $pct%) is an exact prefix of the prediction (>= 90%)" \
			"$(cmp -n "$size" "$TMP/want" "$TMP/out.bin" 2>&1)"
	fi
	info "iperf3 -F marked, paced at $bw: $(rate "$TMP/exact.client")"
	fr=$(counter "$NS_A" tx_framed)
	if [ "$fr" -ge 1 ]; then
		ok "iperf3 -F: tx_framed $fr"
	else
		fail "iperf3 -F: tx_framed $fr (want >= 1)"
	fi
	anchor=$("$INCCTL" -n "$NS_A" -j -p flows | json_get - \
		"[f['anchor'] for f in d if 'anchored' in f['flags']][-1]" 2>&1)
	if [ "$anchor" = 37 ]; then
		ok "iperf3 -F: anchored after the 37-byte cookie"
	else
		fail "iperf3 -F: anchored after the 37-byte cookie" "anchor: $anchor"
	fi
else
	fail "iperf3 -F transfer" "$(tail -n 5 "$TMP/exact.client")"
	skip "iperf3 -F: tx_framed" "no transfer"
	skip "iperf3 -F: anchor" "no transfer"
fi

# --- INCNN_IPERF_AB: marked goodput, IPv6 against IPv4 -----------------------------
if [ "${INCNN_IPERF_AB:-0}" -gt 0 ]; then
	SERVER_ARGS=()
	r4=() r6=()
	for i in $(seq 1 "$INCNN_IPERF_AB"); do
		for fam in 4 6; do
			to=$ADDR4_B
			[ $fam = 6 ] && to=$ADDR6_B
			if IPERF_TO=$to iperf "ab$fam-$i" -t 3 --tos 0x28 -F "$TMP/grads.bin"; then
				r=$(rate "$TMP/ab$fam-$i.client")
				info "INCNN_IPERF_AB round $i IPv$fam marked: ${r:-?}"
				[ $fam = 4 ] && r4+=("${r%% *}") || r6+=("${r%% *}")
			else
				fail "INCNN_IPERF_AB round $i IPv$fam run" "$(tail -n 5 "$TMP/ab$fam-$i.client")"
			fi
		done
	done
	med() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
	m4=$(med "${r4[@]}")
	m6=$(med "${r6[@]}")
	ok "INCNN_IPERF_AB: marked goodput, median of ${#r4[@]}/${#r6[@]} rounds: IPv4 $m4 Mbit/s, IPv6 $m6 Mbit/s, IPv6/IPv4 $(awk -v a="$m6" -v b="$m4" 'BEGIN { printf "%.3f", b ? a / b : 0 }')"
fi

ktap_finish
