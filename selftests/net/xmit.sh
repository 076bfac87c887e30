#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# xmit.sh - error paths on egress. An nftables chain on the sender after
# incnn's hook (postrouting, priority 300) drops every 7th framed packet,
# as a later hook or a full device queue may. incnn splits GSO skbs in
# its hook and sends each segment on through the rest of the hook chain:
# it must count the segments that did not leave (tx_xmit_errors) and let
# TCP know (a partly sent skb as local congestion, NET_XMIT_CN; a wholly
# refused one as the error), so that TCP recovers: the transfer
# completes and the bytes are exactly as predicted.

. "$(dirname "$0")/lib.sh"

ktap_header "egress error paths: segments refused after the hook"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
incctl "$NS_A" rule add tos 0x28 codec inceptionn bound 2^-10 ||
	fail "rule add tos 0x28 inceptionn 2^-10"
XFER_TIMEOUT=90

gen_floats "$TMP/f.bin" 250000 61 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10
check "sender: nft drops every 7th framed packet after incnn's hook" \
	nsx "$NS_A" nft -f - <<NFT
table ip incnn_xmit {
	chain post {
		type filter hook postrouting priority 300; policy accept;
		ip dscp 11 numgen inc mod 7 == 0 counter drop
	}
}
NFT
incctl "$NS_A" stats reset
if xfer drops "$TMP/f.bin" -T 0x28; then
	if st=$(same "$TMP/want" "$TMP/drops.out"); then
		ok "transfer with refused segments: bytes as predicted"
	else
		fail "transfer with refused segments: bytes as predicted" "$st"
	fi
else
	fail "transfer with refused segments: completes"
fi
s=$(kstats "$NS_A")
xe=$(jnum "$s" tx_xmit_errors)
gs=$(jnum "$s" tx_gso_split)
dropped=$(nsx "$NS_A" nft list chain ip incnn_xmit post | grep -o 'packets [0-9]*' | head -n 1)
info "nft dropped: $dropped"
if [ "${xe:-0}" -ge 1 ] && [ "${gs:-0}" -ge 1 ]; then
	ok "tx_xmit_errors $xe (of segments from $gs split GSO skbs)"
else
	fail "tx_xmit_errors ${xe:-missing} (want >= 1), tx_gso_split ${gs:-missing} (want >= 1)"
fi

ktap_finish
