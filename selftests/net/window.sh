#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# window.sh - work before validation: valid frames the receiving socket
# would not take are not decoded. On an established flow that B offered
# rx to, incnn_inject -W sends, with the flow's addresses, ports and the
# frame option: a valid frame far in the past and one far beyond the
# receive window (counted as rx_out_of_window, emptied and handed to TCP,
# which answers them as any out-of-window segment; never decoded), and
# a valid frame at the next sequence number that would restore more than
# the MSS B advertised (rx_drop_length). The stream around them arrives
# exactly as predicted and no injected frame is decoded.

. "$(dirname "$0")/lib.sh"

ktap_header "frames outside the receive window or beyond the MSS"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
incctl "$NS_A" rule add tos 0x28 codec inceptionn bound 2^-10 ||
	fail "rule add tos 0x28 inceptionn 2^-10"

gen_floats "$TMP/f.bin" 100000 51 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10
incctl "$NS_A" stats reset
incctl "$NS_B" stats reset

# veth MTU 1500: B advertises MSS 1460 (IPv6: 1440)
if inject_xfer w "$TMP/f.bin" -W -M "$(pick_family 1460 1440)"; then
	ok "injection: $(expected w injected) valid frames"
fi
if st=$(same "$TMP/want" "$TMP/w.out"); then
	ok "stream around the injection: bytes as predicted"
else
	fail "stream around the injection: bytes as predicted" "$st"
fi

sb=$(kstats "$NS_B")
real=$(jnum "$(kstats "$NS_A")" tx_framed)
# a real frame that TCP would not take (a spurious retransmission) is
# emptied instead of decoded: count it with the decoded ones
real_oow=$(($(jnum "$sb" rx_out_of_window) - $(expected w rx_out_of_window)))
info "real frames outside the window (spurious retransmissions): $real_oow"
for name in rx_out_of_window rx_drop_length rx_frames; do
	want=$(expected w "$name")
	[ "$name" = rx_frames ] && want=$((want + real - real_oow))
	[ "$name" = rx_out_of_window ] && want=$((want + real_oow))
	got=$(jnum "$sb" "$name")
	if [ "$got" = "$want" ] && [ "$real_oow" -ge 0 ]; then
		ok "$name: $got"
	else
		fail "$name: ${got:-missing} (want $want)"
	fi
done

ktap_finish
