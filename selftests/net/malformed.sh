#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# malformed.sh - crafted frames injected with a raw socket (incnn_inject)
# into an established flow that the receiver offered rx to, with the
# flow's own addresses, ports and next sequence number, the wire ToS and
# the frame option: short, bad version/flags, unknown codec, bad
# parameter, inconsistent lengths (orig_len beyond the receiver's MSS
# included), bad bodies, random frames and payloads, and a valid frame
# with a bad TCP checksum. Every one is dropped and counted under the
# drop reason the userspace decoder gives it (with the receiver's MSS,
# 1448 on this veth: MTU 1500 less 40 bytes of headers and the 12 of
# the timestamp option, which TCP takes off its advertised MSS; over
# IPv6 1428, its header being 20 bytes longer). The stream around the
# injection arrives exactly as
# predicted, and the sender's flow is not disturbed by the raw packets it
# sent. (Valid frames outside the receive window: window.sh.)

. "$(dirname "$0")/lib.sh"

ktap_header "malformed frames"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }

incctl "$NS_A" rule add tos 0x28 codec inceptionn bound 2^-10 ||
	fail "rule add tos 0x28 inceptionn 2^-10"
gen_floats "$TMP/f.bin" 100000 71 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10
incctl "$NS_A" stats reset
incctl "$NS_B" stats reset

MSS=$(pick_family 1448 1428)
if inject_xfer inj "$TMP/f.bin" -n 150 -s "$TAG" -M "$MSS"; then
	ok "injection on an established flow: $(expected inj injected) segments"
fi
if st=$(same "$TMP/want" "$TMP/inj.out"); then
	ok "stream around the injection: bytes as predicted"
else
	fail "stream around the injection: bytes as predicted" "$st"
fi

sb=$(kstats "$NS_B")
sa=$(kstats "$NS_A")
real_frames=$(jnum "$sa" tx_framed)
# a real frame that TCP would not take (a spurious retransmission) is
# emptied instead of decoded: count it with the decoded ones
real_oow=$(($(jnum "$sb" rx_out_of_window) - $(expected inj rx_out_of_window)))
while read -r name want; do
	case $name in
	rx_*) ;;
	*) continue ;;
	esac
	got=$(jnum "$sb" "$name")
	# rx_frames also counts the stream's real frames
	[ "$name" = rx_frames ] && want=$((want + real_frames - real_oow))
	[ "$name" = rx_out_of_window ] && want=$((want + real_oow))
	if [ "$got" = "$want" ] && [ "$real_oow" -ge 0 ]; then
		ok "$name: $got"
	else
		fail "$name: $got (want $want)"
	fi
done <"$TMP/inj.expect"
nomem=$(jnum "$sb" rx_drop_nomem)
if [ "$nomem" = 0 ]; then
	ok "rx_drop_nomem: 0"
else
	fail "rx_drop_nomem: $nomem (want 0)"
fi

# the raw socket's packets are not the TCP socket's: the sender's flow
# must not have learned from them (no toggle, everything framed)
tog=$(jnum "$sa" tx_raw_mark_toggled)
raw=$(( $(jnum "$sa" tx_segs) - real_frames ))
if [ "$tog" = 0 ] && [ "$raw" = 0 ]; then
	ok "sender: raw-socket packets ignored (tx_raw_mark_toggled 0, every segment framed)"
else
	fail "sender: raw-socket packets ignored" \
		"tx_raw_mark_toggled $tog, $raw marked segments not framed"
fi

ktap_finish
