#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# offload.sh - segmentation offloads on the sender (ethtool -K va tso/gso
# on|off) and GRO on the receiver (ethtool -K vb gro on|off; veth uses
# NAPI GRO for packets from a peer without TSO): the received bytes equal
# the roundtrip prediction exactly, every frame is decoded and none is
# dropped. TCP hands GSO skbs to POST_ROUTING whatever the device
# offers, so incnn segments them in both cases (tx_gso_split); frames are
# never merged by GRO (their sequence numbers leave gaps for the bytes
# the frame saves), which rx_frames = tx_framed shows (plus
# rx_out_of_window: a spurious retransmission is emptied, not decoded).

. "$(dirname "$0")/lib.sh"

ktap_header "TSO/GSO and GRO"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }

PRE=37
gen_floats "$TMP/f.bin" 160000 31 1e-1
gen_preamble "$TMP/pre.bin" $PRE
cat "$TMP/pre.bin" "$TMP/f.bin" >"$TMP/in.bin"
predict "$TMP/want" "$TMP/in.bin" $PRE inceptionn --bound 2^-10

for gso in on off; do
	for gro in off on; do
		name=gso-$gso-gro-$gro
		nsx "$NS_A" ethtool -K va tso $gso gso $gso >/dev/null 2>&1
		nsx "$NS_B" ethtool -K vb gro $gro >/dev/null 2>&1
		incctl "$NS_A" stats reset
		incctl "$NS_B" stats reset
		if ! xfer "$name" "$TMP/in.bin" -T 0x28 -m after -P $PRE; then
			fail "$name: transfer"
			continue
		fi
		if st=$(same "$TMP/want" "$TMP/$name.out"); then
			ok "$name: bytes as predicted"
		else
			fail "$name: bytes as predicted" "$st"
		fi
		sa=$(kstats "$NS_A")
		sb=$(kstats "$NS_B")
		split=$(jnum "$sa" tx_gso_split)
		drops=$(rx_bad_drops "$sb")
		# TCP always builds GSO skbs (the device segments them, or
		# not, after POST_ROUTING): incnn splits them in both cases
		good=1
		frame_balance "$sa" "$sb" && [ "$split" -ge 1 ] &&
			[ "$FB_TX" -ge 1 ] && [ "$drops" = 0 ] || good=0
		if [ $good = 1 ]; then
			ok "$name: tx_gso_split $split, $FB_TEXT, no bad frame"
		else
			fail "$name: tx_gso_split $split (want >= 1), $FB_TEXT (want equal), bad frames dropped $drops (want 0)" \
				"$(incctl "$NS_B" stats -s | grep drop)"
		fi
	done
done

# An MTU whose MSS (1501 - 52 = 1449) is not a multiple of 4: TCP's
# segment boundaries cut floats, and incnn moves them to the float grid
# (docs/design.md, "Cut floats"), so every float arrives quantised (a
# float cut by the end of a write would arrive original). With loss,
# retransmissions must not mix the two: no float may arrive with bytes of
# both (a "hybrid"). IPv6: MTU 1521, the same MSS.
nsx "$NS_A" ethtool -K va tso on gso on >/dev/null 2>&1
ip -n "$NS_A" link set va mtu "$(pick_family 1501 1521)"
ip -n "$NS_B" link set vb mtu "$(pick_family 1501 1521)"
nsx "$NS_A" tc qdisc replace dev va root netem loss 2%
incctl "$NS_A" stats reset
if xfer mss1449 "$TMP/in.bin" -T 0x28 -m after -P $PRE; then
	if mix=$(float_mix "$TMP/want" "$TMP/in.bin" "$TMP/mss1449.out" $PRE); then
		read -r orig hyb <<<"$mix"
		orig=$((orig - hyb))
		segs=$(counter "$NS_A" tx_framed)
		if [ "$hyb" = 0 ]; then
			ok "MSS 1449 with 2% loss: every float quantised or original ($orig arrived original, $segs frames), none mixed"
		else
			fail "MSS 1449 with 2% loss: every float quantised or original" \
				"$orig original, $hyb hybrid (want 0), $segs frames"
		fi
	else
		fail "MSS 1449 with 2% loss: received size" "$(stat -c %s "$TMP/mss1449.out")"
	fi
else
	s=$(kstats "$NS_A")
	fail "MSS 1449 with 2% loss: transfer" \
		"tx_aligned $(jnum "$s" tx_aligned) tx_cut_raw $(jnum "$s" tx_cut_raw) tx_drop_cut $(jnum "$s" tx_drop_cut) tx_errors $(jnum "$s" tx_errors) tx_segs $(jnum "$s" tx_segs) tx_framed $(jnum "$s" tx_framed) not_smaller $(jnum "$s" tx_raw_not_smaller)" \
		"$(nsx "$NS_A" ss -tin | tail -n 2)"
fi
nsx "$NS_A" tc qdisc del dev va root

ktap_finish
