#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fragments.sh - a framed segment fragmented on the path must be decoded
# whole, never reach TCP as a frame: incnn enables IPv4 defragmentation
# before its ingress hook in every namespace, with or without conntrack.
# The sender clears DF (net.ipv4.ip_no_pmtu_disc=1) and a router with a
# 300-byte MTU towards the receiver fragments every frame; the bytes must
# be exactly the prediction, every frame decoded.
# IPv6 (INCNN_FAMILY=6; routers never fragment it): the sender's route to
# the receiver has the allfrag feature (RTAX_FEATURE_ALLFRAG, set through
# rtnetlink: iproute2 has no keyword for it) and its socket IPV6_MTU 1280,
# so the sender fragments every packet, each frame into one or more
# fragments (Ip6FragCreates), which nf_defrag_ipv6 reassembles at the
# receiver before incnn's ingress hook.

. "$(dirname "$0")/lib.sh"

ktap_header "fragmented frames"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }

# allfrag_route NS DEV ADDR6: a /128 route to ADDR6 through DEV, every
# packet sent on it fragmented (RTA_METRICS: RTAX_FEATURES ALLFRAG)
allfrag_route() {
	nsx "$1" "$PYTHON" - "$2" "$3" <<'PY'
import socket, struct, sys
dev, addr = sys.argv[1], sys.argv[2]
def rta(t, v):
    n = 4 + len(v)
    return struct.pack("HH", n, t) + v + b"\0" * (-n % 4)
metrics = rta(12, struct.pack("I", 8))        # RTAX_FEATURES: ALLFRAG
body = struct.pack("BBBBBBBBI", socket.AF_INET6, 128, 0, 0, 254, 3, 0, 1, 0)
body += rta(1, socket.inet_pton(socket.AF_INET6, addr))  # RTA_DST
body += rta(4, struct.pack("I", socket.if_nametoindex(dev)))  # RTA_OIF
body += rta(8, metrics)                       # RTA_METRICS
# RTM_NEWROUTE, NLM_F_REQUEST | ACK | REPLACE | CREATE
msg = struct.pack("IHHII", 16 + len(body), 24, 0x1 | 0x4 | 0x100 | 0x400, 1, 0) + body
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.send(msg)
err = struct.unpack("i", s.recv(4096)[16:20])[0]
sys.exit("RTM_NEWROUTE: error %d" % err if err else 0)
PY
}

if [ "$INCNN_FAMILY" = 6 ]; then
	if ! { setup_pair && allfrag_route "$NS_A" va "$ADDR_B" &&
		nsx "$NS_A" ethtool -K va tso off gso off >/dev/null; }; then
		fail "namespaces and the allfrag route"
		ktap_finish
		exit 1
	fi
	XFER_ARGS=(-M 1280)
	frags() { nsx "$NS_A" nstat -az Ip6FragCreates | awk '/Ip6FragCreates/ { print $2 }'; }
else
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
	XFER_ARGS=()
	frags() { nsx "$NS_R" nstat -az IpFragCreates | awk '/IpFragCreates/ { print $2 }'; }
fi
gen_floats "$TMP/f.bin" 100000 131 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

before=$(frags)
if xfer frag "$TMP/f.bin" -T 0x28 "${XFER_ARGS[@]}" && st=$(same "$TMP/want" "$TMP/frag.out"); then
	ok "fragmented frames: bytes as predicted"
else
	fail "fragmented frames: bytes as predicted" "${st:-transfer failed}"
fi
after=$(frags)
sa=$(kstats "$NS_A")
sb=$(kstats "$NS_B")
frame_balance "$sa" "$sb"
fr=$FB_TX
if [ $((after - before)) -ge "$fr" ] && [ "$fr" -ge 1 ] && [ "$FB_RX" -ge "$fr" ]; then
	ok "every frame fragmented on the path and accounted for ($FB_TEXT, fragments $((after - before)))"
else
	fail "every frame fragmented on the path and accounted for" \
		"$FB_TEXT, fragments $((after - before))"
fi

ktap_finish
