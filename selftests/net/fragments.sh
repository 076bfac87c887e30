#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fragments.sh - a framed segment fragmented on the path must be decoded
# whole, never reach TCP as a frame: incnn enables IPv4 defragmentation
# before its ingress hook in every namespace, with or without conntrack.
# The sender clears DF (net.ipv4.ip_no_pmtu_disc=1) and a router with a
# 300-byte MTU towards the receiver fragments every frame; the bytes must
# be exactly the prediction, every frame decoded.

. "$(dirname "$0")/lib.sh"

ktap_header "fragmented frames"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
NS_A=incnn-$TAG-a
NS_R=incnn-$TAG-r
NS_B=incnn-$TAG-b
ADDR_A=10.67.$SUBNET.1
ADDR_B=10.68.$SUBNET.2
if ! { new_ns "$NS_A" && new_ns "$NS_R" && new_ns "$NS_B" &&
	veth_pair "$NS_A" va "$ADDR_A/24" "$NS_R" ra "10.67.$SUBNET.254/24" &&
	veth_pair "$NS_R" rb "10.68.$SUBNET.254/24" "$NS_B" vb "$ADDR_B/24" &&
	ip -n "$NS_A" route add default via "10.67.$SUBNET.254" &&
	ip -n "$NS_B" route add default via "10.68.$SUBNET.254" &&
	nsx "$NS_R" sysctl -qw net.ipv4.ip_forward=1 &&
	nsx "$NS_A" sysctl -qw net.ipv4.ip_no_pmtu_disc=1 &&
	ip -n "$NS_R" link set rb mtu 300 &&
	wait_ping "$NS_A" "$ADDR_B"; }; then
	fail "namespaces, router and routes"
	ktap_finish
	exit 1
fi
gen_floats "$TMP/f.bin" 100000 131 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

frags() { nsx "$NS_R" nstat -az IpFragCreates | awk '/IpFragCreates/ { print $2 }'; }
before=$(frags)
if xfer frag "$TMP/f.bin" -T 0x28 && st=$(same "$TMP/want" "$TMP/frag.out"); then
	ok "fragmented frames: bytes as predicted"
else
	fail "fragmented frames: bytes as predicted" "${st:-transfer failed}"
fi
after=$(frags)
sa=$(kstats "$NS_A")
sb=$(kstats "$NS_B")
fr=$(jnum "$sa" tx_framed)
# a spurious retransmission is emptied, not decoded (rx_out_of_window)
rf=$(($(jnum "$sb" rx_frames) + $(jnum "$sb" rx_out_of_window)))
if [ $((after - before)) -ge "$fr" ] && [ "$fr" -ge 1 ] && [ "$rf" -ge "$fr" ]; then
	ok "every frame fragmented on the path and decoded (tx_framed $fr, rx_frames + rx_out_of_window $rf, fragments $((after - before)))"
else
	fail "every frame fragmented on the path and decoded" \
		"tx_framed $fr rx_frames + rx_out_of_window $rf fragments $((after - before))"
fi

ktap_finish
