#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# inband.sh - frames are recognised by their TCP option, never by DSCP.
# Sender A -> router R -> receiver B; R rewrites DSCP with nftables (as a
# router, vSwitch or tc action at a domain boundary may, RFC 2474):
#  - R bleaches every forwarded packet to DSCP 0: the marked transfer
#    still arrives exactly as the roundtrip predicts (B decoded frames);
#  - R leaves DSCP alone, B uses another wire DSCP than A: the same;
#  - R re-marks unmarked traffic to A's and B's wire DSCP: the unmarked
#    transfer arrives as sent, nothing is parsed or dropped, no stall;
#  - both hosts' wire DSCPs are changed while a marked transfer runs:
#    harmless.
# R runs incnn too (the module is global): it leaves forwarded frames
# alone. Every transfer is killed after $XFER_TIMEOUT seconds (a stall
# fails the test).

. "$(dirname "$0")/lib.sh"

ktap_header "in-band framing: DSCP rewritten on the path"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }

if ! setup_routed 69 70; then
	fail "namespaces, veth, routes"
	ktap_finish
	exit 1
fi
XFER_TIMEOUT=40

# the rule this test needs, whatever the module installed at load
incctl "$NS_A" rule add tos 0x28 codec inceptionn bound 2^-10 ||
	fail "rule add tos 0x28 inceptionn 2^-10"
gen_floats "$TMP/f.bin" 100000 31 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

# router_dscp NFT-RULE: R's forward chain is this one rule ("" for none);
# $NFT: the nft family and header of INCNN_FAMILY (ip or ip6)
NFT=$(pick_family ip ip6)
router_dscp() {
	nsx "$NS_R" nft delete table "$NFT" incnn_dscp 2>/dev/null
	[ -n "$1" ] || return 0
	nsx "$NS_R" nft -f - <<EOF
table $NFT incnn_dscp {
	chain pathmark {
		type filter hook forward priority filter; policy accept;
		$1
	}
}
EOF
}

# marked NAME: a marked transfer A -> B, bytes as predicted, B decoded
marked() {
	local name=$1 st fr dr
	incctl "$NS_B" stats reset
	if ! xfer "$name" "$TMP/f.bin" -T 0x28; then
		fail "$name: transfer completes"
		return
	fi
	if st=$(same "$TMP/want" "$TMP/$name.out"); then
		ok "$name: received bytes = roundtrip prediction"
	else
		fail "$name: received bytes = roundtrip prediction" "$st"
	fi
	fr=$(counter "$NS_B" rx_frames)
	dr=$(jnum "$(kstats "$NS_B")" rx_dropped)
	if [ "$fr" -ge 1 ] && [ "$dr" = 0 ]; then
		ok "$name: receiver decoded $fr frames, dropped nothing"
	else
		fail "$name: receiver rx_frames $fr (want >= 1), rx_dropped $dr (want 0)"
	fi
}

# 1. DSCP bleached to 0 on the path
if router_dscp "$NFT dscp set 0 counter"; then
	marked bleached
	n=$(nsx "$NS_R" nft list chain "$NFT" incnn_dscp pathmark | grep -o 'packets [0-9]*' | head -n 1)
	info "router rewrote: $n"
else
	fail "router: nft $NFT dscp set 0"
fi
router_dscp ""
rf=$(counter "$NS_R" rx_frames)
rd=$(jnum "$(kstats "$NS_R")" rx_dropped)
if [ "$rf" = 0 ] && [ "$rd" = 0 ]; then
	ok "router: forwarded frames left alone (rx_frames 0, rx_dropped 0)"
else
	fail "router: forwarded frames left alone" "rx_frames $rf rx_dropped $rd"
fi

# 2. different wire DSCPs on the two hosts
if incctl "$NS_B" set wire-dscp 12; then
	marked wire-dscp-differs
else
	fail "receiver: set wire-dscp 12"
fi
incctl "$NS_B" set wire-dscp 11

# 3. unmarked traffic re-marked to the wire DSCP (11) on the path
if router_dscp "$NFT dscp 0 $NFT dscp set 11 counter"; then
	incctl "$NS_B" stats reset
	if xfer remarked "$TMP/f.bin"; then
		if st=$(same "$TMP/f.bin" "$TMP/remarked.out"); then
			ok "re-marked unmarked traffic: received bytes = original, no stall"
		else
			fail "re-marked unmarked traffic: received bytes = original" "$st"
		fi
	else
		fail "re-marked unmarked traffic: transfer completes (no stall)"
	fi
	s=$(kstats "$NS_B")
	if [ "$(jnum "$s" rx_frames)" = 0 ] && [ "$(jnum "$s" rx_dropped)" = 0 ]; then
		ok "re-marked unmarked traffic: nothing parsed, nothing dropped"
	else
		fail "re-marked unmarked traffic: nothing parsed, nothing dropped" \
			"rx_frames $(jnum "$s" rx_frames) rx_dropped $(jnum "$s" rx_dropped)"
	fi
else
	fail "router: nft $NFT dscp set 11"
fi
router_dscp ""

# 4. both hosts' wire DSCPs changed during a transfer (R's link to B
# limited to 8 Mbit/s: the transfer takes about 2 s)
nsx "$NS_R" tc qdisc add dev rb root netem rate 8mbit limit 1000 ||
	fail "router: netem rate 8mbit"
gen_floats "$TMP/big.bin" 400000 32 1e-1
predict "$TMP/want-big" "$TMP/big.bin" 0 inceptionn --bound 2^-10
(
	nap 0.5
	incctl "$NS_B" set wire-dscp 30
	nap 0.5
	incctl "$NS_A" set wire-dscp 20
) &
live=$!
if xfer live-dscp "$TMP/big.bin" -T 0x28; then
	if st=$(same "$TMP/want-big" "$TMP/live-dscp.out"); then
		ok "wire DSCPs changed during a transfer: bytes as predicted"
	else
		fail "wire DSCPs changed during a transfer: bytes as predicted" "$st"
	fi
else
	fail "wire DSCPs changed during a transfer: transfer completes"
fi
wait $live
info "wire DSCPs now: A $(incctl "$NS_A" -j show | grep -o '"wire_dscp": *[0-9]*')," \
	"B $(incctl "$NS_B" -j show | grep -o '"wire_dscp": *[0-9]*')"

ktap_finish
