#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sframe.sh - superframes (frame version 2, docs/design.md "Superframes"):
# with `incctl set superframes on` at both ends a marked stream's GSO skbs
# travel as version-2 frames restoring many segments each, and the
# receiver gets exactly the bytes predicted (as_predicted; an odd MSS,
# with and without netem; MSS 1449 with loss; netem loss, reordering,
# duplication, corruption; a receive window smaller than one burst); a
# version-1-only peer gets and sends version-1 frames; after a long run
# every socket of the receiver is freed and the host's TCP memory
# (/proc/net/sockstat) is back. Malformed version-2 frames:
# sframe-inject.sh.
#
# Every other guarantee script runs with version 2 negotiated (the
# default), or with version 1 only under INCNN_SUPERFRAMES=0 (lab/netns.sh
# loads the module with superframes=0).

. "$(dirname "$0")/lib.sh"

ktap_header "sframe: superframes (frame version 2)"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }

PRE=37
gen_floats "$TMP/f.bin" 50000 41 1e-1
gen_preamble "$TMP/pre.bin" $PRE
cat "$TMP/pre.bin" "$TMP/f.bin" >"$TMP/in.bin"
predict "$TMP/want" "$TMP/in.bin" $PRE inceptionn --bound 2^-10

sf() { # ns on|off
	incctl "$1" set superframes "$2"
}

# sockstat NS FIELD: one field of the TCP line of the namespace's
# /proc/net/sockstat ("inuse" is per namespace; "mem" is the whole host's
# and cached per CPU, up to net.core.mem_pcpu_rsv pages each, so it is no
# measure of one test's sockets)
sockstat() {
	awk -v f="$2" '/^TCP:/ { for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' \
		"/proc/${NSPID[$1]}/net/sockstat"
}

# c NS NAME: one counter
c() {
	counter "$1" "$2"
}

# xfer_case NAME [xfer send args]: transfer in.bin, bytes as predicted
xfer_case() {
	local name=$1 st
	shift
	incctl "$NS_A" stats reset
	incctl "$NS_B" stats reset
	if ! xfer "$name" "$TMP/in.bin" -T 0x28 -m after -P $PRE "$@"; then
		fail "$name: transfer completes" "sender: $(kstats "$NS_A")" \
			"receiver: $(kstats "$NS_B")" \
			"received $(stat -c %s "$TMP/$name.out" 2>/dev/null) of $(stat -c %s "$TMP/in.bin") bytes"
		return 1
	fi
	if st=$(as_predicted "$TMP/want" "$TMP/in.bin" "$TMP/$name.out" $PRE "$NS_A"); then
		ok "$name: bytes as predicted ($st)"
	else
		fail "$name: bytes as predicted" "$st" \
			"sender: $(kstats "$NS_A")" "receiver: $(kstats "$NS_B")"
		[ -d "${VM_OUT:-}" ] && cp "$TMP/$name.out" "$VM_OUT/sframe-$name.out"
		return 1
	fi
}

# v2_used NAME [MEAN]: superframes went out and were restored, restoring
# more than MEAN bytes each on average (default 0: how many segments TCP
# puts in a GSO skb depends on its pacing rate, i.e. on the machine's
# speed; the long run of zeros checks that one wire packet restores
# several segments)
v2_used() {
	local sent rcvd orig drops mean
	sent=$(c "$NS_A" tx_wire_v2)
	rcvd=$(c "$NS_B" rx_frames_v2)
	orig=$(c "$NS_B" rx_v2_bytes_orig)
	drops=$(jnum "$(kstats "$NS_B")" rx_dropped)
	mean=$((rcvd > 0 ? orig / rcvd : 0))
	if [ "$(c "$NS_A" tx_superframes)" -ge 1 ] && [ "$sent" -ge 1 ] &&
		[ "$rcvd" -ge 1 ] && [ "$mean" -gt "${2:-0}" ]; then
		ok "$1: $sent version-2 wire packets sent, $rcvd restored, mean $mean bytes each"
	else
		fail "$1: superframes used" "tx_superframes $(c "$NS_A" tx_superframes) tx_wire_v2 $sent rx_frames_v2 $rcvd rx_v2_bytes_orig $orig rx_dropped $drops"
	fi
}

sf "$NS_A" on && sf "$NS_B" on || fail "incctl set superframes on"

# 1. both ends on: version 2 in use, exact bytes, no drop
if xfer_case basic; then
	v2_used basic
	drops=$(jnum "$(kstats "$NS_B")" rx_dropped)
	[ "$drops" = 0 ] && [ "$(c "$NS_A" tx_wire_v1)" -le "$(c "$NS_A" tx_framed)" ] &&
		ok "basic: nothing dropped" || fail "basic: nothing dropped" "rx_dropped $drops"
fi

# 2. an odd MSS (MTU 1333 at both ends): per-packet, then superframes
ip -n "$NS_A" link set va mtu 1333 && ip -n "$NS_B" link set vb mtu 1333
sf "$NS_A" off
xfer_case odd-mss-v1
sf "$NS_A" on
xfer_case odd-mss && v2_used odd-mss
# the same under netem: floats cut by a 1-3 byte tail that TCP resends
# alone (tail loss probe) go raw, never hybrid (as_predicted)
nsx "$NS_A" tc qdisc replace dev va root netem delay 1ms loss 2% reorder 10%
xfer_case odd-mss-netem
# MSS 1449 (MTU 1501) with loss: the receivers' ACKs at chunk ends
# leave TCP retransmitting from inside floats, moved back to the float:
# such a segment must still fit the peer's advmss (a v1 frame restoring
# 1452 bytes was dropped as too long, rx_drop_length, until the
# connection stalled: 4 stalls in 6 runs)
ip -n "$NS_A" link set va mtu 1501 && ip -n "$NS_B" link set vb mtu 1501
nsx "$NS_A" tc qdisc replace dev va root netem loss 2%
for r in 1 2; do
	xfer_case mss1449-loss-$r &&
		{ [ "$(c "$NS_B" rx_drop_length)" = 0 ] &&
			ok "mss1449-loss-$r: no frame too long for the receiver" ||
			fail "mss1449-loss-$r: no frame too long for the receiver" \
				"rx_drop_length $(c "$NS_B" rx_drop_length)"; }
done
nsx "$NS_A" tc qdisc del dev va root
ip -n "$NS_A" link set va mtu 1500 && ip -n "$NS_B" link set vb mtu 1500

# 3. netem on the wire packets: retransmissions compressed again
for args in "loss 3%" "delay 1ms loss 2% duplicate 2% reorder 10% corrupt 1%"; do
	name=netem-${args%% *}
	[ "${args#*reorder 10}" != "$args" ] && name=netem-mixed
	# shellcheck disable=SC2086
	nsx "$NS_A" tc qdisc replace dev va root netem $args ||
		{ fail "$name: tc qdisc netem $args"; continue; }
	xfer_case "$name" && v2_used "$name ($args)"
done
nsx "$NS_A" tc qdisc del dev va root

# 4. a receive window smaller than one burst (64 KB GSO skbs)
old_rmem=$(nsx "$NS_B" sysctl -n net.ipv4.tcp_rmem)
nsx "$NS_B" sysctl -qw net.ipv4.tcp_rmem="4096 16384 16384"
xfer_case small-window && v2_used small-window
nsx "$NS_B" sysctl -qw net.ipv4.tcp_rmem="$old_rmem"

# 5. a version-1-only peer (superframes off at B): version 1 both ways
# v1_only NAME WHO: after a transfer from NS_A to NS_B, no version 2
# anywhere and version-1 frames received; WHO: which end is the old peer
v1_only() {
	local v1 v2s v2r
	v1=$(c "$NS_B" rx_frames_v1)
	v2s=$(c "$NS_A" tx_wire_v2)
	v2r=$(c "$NS_B" rx_frames_v2)
	if [ "$v2s" = 0 ] && [ "$v2r" = 0 ] && [ "$v1" -ge 1 ]; then
		ok "$1: the version-1-only peer $2 version-1 frames only ($v1)"
	else
		fail "$1: the version-1-only peer $2 version-1 frames only" \
			"tx_wire_v2 $v2s rx_frames_v1 $v1 rx_frames_v2 $v2r"
	fi
}
sf "$NS_B" off
xfer_case v1-peer-ab && v1_only v1-peer-ab receives
# the other way: the version-1-only host sends
read -r NS_A NS_B ADDR_A ADDR_B <<<"$NS_B $NS_A $ADDR_B $ADDR_A"
xfer_case v1-peer-ba && v1_only v1-peer-ba sends
read -r NS_A NS_B ADDR_A ADDR_B <<<"$NS_B $NS_A $ADDR_B $ADDR_A"
sf "$NS_B" on
# the sender's switch off: version 1 although the peer offers version 2
sf "$NS_A" off
if xfer_case sender-off; then
	[ "$(c "$NS_A" tx_wire_v2)" = 0 ] && [ "$(c "$NS_B" rx_frames_v1)" -ge 1 ] &&
		ok "sender off: version-1 frames only" ||
		fail "sender off: version-1 frames only" "tx_wire_v2 $(c "$NS_A" tx_wire_v2)"
fi
sf "$NS_A" on

# 6. a long run (16 MiB of zeros: the largest restored skbs), then every
# socket of the receiver freed and the host's TCP memory back. A restored
# skb left charged to a socket trips the WARN_ONs of inet_sock_destruct()
# (vm.sh fails the run on any WARN). sockstat's "mem" is the whole host's,
# and each CPU caches up to net.core.mem_pcpu_rsv pages of it (either
# sign), so two readings of the same true figure may differ by
# 2 * CPUs * rsv pages; the long run's skbs, had they leaked, would hold
# 4096 pages or more.
# The sender's GSO skbs are what superframes coalesce: TCP sizes them
# from its pacing rate, which on a slow (debug, loaded) VM is low enough
# for 2-segment skbs (tcp_min_tso_segs), so the mean checked below would
# measure the VM's speed; 8 segments at least, whatever the rate.
nsx "$NS_A" sysctl -qw net.ipv4.tcp_min_tso_segs=8
mem0=$(sockstat "$NS_B" mem)
slack=$((2 * $(nproc) * $(cat /proc/sys/net/core/mem_pcpu_rsv)))
head -c $((16 << 20)) /dev/zero >"$TMP/zero.bin"
incctl "$NS_A" stats reset
incctl "$NS_B" stats reset
if XFER_TIMEOUT=300 xfer long "$TMP/zero.bin" -T 0x28 -m after &&
	st=$(same "$TMP/zero.bin" "$TMP/long.out"); then
	v2_used "long (16 MiB of zeros)" 2896
else
	fail "long: 16 MiB of zeros exact" "${st:-transfer failed}" \
		"sender: $(kstats "$NS_A")" "receiver: $(kstats "$NS_B")"
fi
rm -f "$TMP/zero.bin" "$TMP/long.out"
inuse=
for _ in $(seq 1 100); do
	inuse=$(sockstat "$NS_B" inuse)
	[ "$inuse" = 0 ] && break
	nap 0.1
done
[ "$inuse" = 0 ] && ok "sockstat: every TCP socket of the receiver freed" ||
	fail "sockstat: every TCP socket of the receiver freed" \
		"inuse $inuse: $(nsx "$NS_B" ss -tan | tail -n +2 | head -n 5)"
mem1=$(sockstat "$NS_B" mem)
[ "$mem1" -le $((mem0 + slack)) ] &&
	ok "sockstat: TCP memory $mem0 -> $mem1 pages (per-CPU caches: up to $slack)" ||
	fail "sockstat: TCP memory back to $mem0 pages (+ $slack cached per CPU)" "now $mem1"

ktap_finish
