#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mtu.sh - a framed segment never exceeds the route's MTU. With an MSS
# that is not a multiple of 4, align.c moves a one-segment skb that starts
# inside a float back to the float (up to 3 bytes longer than the MSS);
# framed, it is shorter, unless the frame saves fewer bytes than that:
# then it must go out unframed (quantised in place, cut to the MTU) like
# any unframed segment, never 1-2 bytes over the MTU with DF set (a local
# EMSGSIZE that TCP would meet again on every retransmission).
#
# The sender sends one-segment skbs only (pacing rate 1 MB/s,
# tcp_min_tso_segs 1, tcp_tso_rtt_log 0), and the data is made so that
# every lengthened segment (350 floats, 1400 bytes) frames to exactly
# MSS + 1 bytes with its option, for each lossy codec (inceptionn, ebq,
# bound 2^-10) and two MTUs:
#   MTU 1450: MSS 1398, every other segment lengthened by 2 bytes;
#   MTU 1449: MSS 1397, every fourth segment lengthened by 3 bytes.
# (Over IPv6 both MTUs are 20 bytes larger, for the same MSS.)
# The frame of 350 floats is 8 (header) + 88 (tags) + the payload bytes:
# 4 for 1000.5, 2 for 0.25, 1 for 2^-7, 0 for 0 in both codecs. The
# bytes must be exactly the roundtrip prediction.

. "$(dirname "$0")/lib.sh"

ktap_header "framed segments fit the route MTU"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
nsx "$NS_A" sysctl -qw net.ipv4.tcp_min_tso_segs=1 net.ipv4.tcp_tso_rtt_log=0

# gen OUT PERIOD START PAYLOAD: 40 periods of PERIOD floats; floats
# [START, START + 350) of each period take PAYLOAD bytes in a frame,
# the others are incompressible
cat >"$TMP/gen.py" <<'EOF'
import struct, sys

out, period, start, payload = sys.argv[1], *map(int, sys.argv[2:5])
a, rest = divmod(payload, 4)       # 4-byte values, then 2 and 1
win = [1000.5] * a + [0.25] * (rest // 2) + [2.0 ** -7] * (rest % 2)
win += [0.0] * (350 - len(win))
one = [1000.5] * period
one[start:start + 350] = win
with open(out, "wb") as f:
    f.write(struct.pack("<%df" % period, *one) * 40)
EOF

{ py_tcp; cat <<'EOF'; } >"$TMP/send.py"
import socket, sys

addr, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(path, "rb").read()
s = tcp(addr, 0x28)
s.setsockopt(socket.SOL_SOCKET, 47, 1000000)  # SO_MAX_PACING_RATE, B/s
s.connect((addr, port))
s.sendall(data)
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
EOF

# case CODEC MTU PERIOD START PAYLOAD
mtu_case() {
	local codec=$1 mtu=$2 name=$1-$2 rpid src rrc s st
	ip -n "$NS_A" link set va mtu "$mtu"
	ip -n "$NS_B" link set vb mtu "$mtu"
	incctl "$NS_A" rule add tos 0x28 codec "$codec" bound 2^-10
	"$PYTHON" "$TMP/gen.py" "$TMP/$name.in" "$3" "$4" "$5"
	predict "$TMP/$name.want" "$TMP/$name.in" 0 "$codec" --bound 2^-10
	incctl "$NS_A" stats reset
	next_port
	timeout $((300 * SLOW)) nsenter --net="/run/netns/$NS_B" \
		"$XFER" recv -b "$ADDR_B" -p "$PORT" "$TMP/$name.out" &
	rpid=$!
	wait_listen "$NS_B" "$PORT" || fail "$name: receiver listens"
	timeout $((300 * SLOW)) nsenter --net="/run/netns/$NS_A" "$PYTHON" "$TMP/send.py" \
		"$ADDR_B" "$PORT" "$TMP/$name.in" 2>"$TMP/send.err"
	src=$?
	wait $rpid
	rrc=$?
	s=$(kstats "$NS_A")
	info "$name: tx_framed $(jnum "$s" tx_framed) tx_aligned $(jnum "$s" tx_aligned)" \
		"tx_raw_no_room $(jnum "$s" tx_raw_no_room) tx_gso_split $(jnum "$s" tx_gso_split)" \
		"$(nsx "$NS_A" nstat -az TcpRetransSegs IpFragFails Ip6FragFails Icmp6OutPktTooBigs IcmpOutDestUnreachs TcpExtTCPSpuriousRTOs | awk '!/^#/ { printf "%s %s ", $1, $2 }')"
	if [ $src = 0 ] && [ $rrc = 0 ] && st=$(same "$TMP/$name.want" "$TMP/$name.out"); then
		ok "$name: bytes as predicted"
	else
		fail "$name: bytes as predicted" "sender $src receiver $rrc" "${st:-}" \
			"$(cat "$TMP/send.err")"
	fi
	if [ "$(jnum "$s" tx_raw_no_room)" -ge 1 ]; then
		ok "$name: segments too long once framed went out unframed"
	else
		fail "$name: segments too long once framed went out unframed" \
			"tx_raw_no_room $(jnum "$s" tx_raw_no_room) (want >= 1)"
	fi
}

V6=$(pick_family 0 20) # IPv6's header is 20 bytes longer
for codec in inceptionn ebq; do
	# MSS 1398: lengthened segments at floats 349 + 699 k; 1399 bytes
	mtu_case "$codec" $((1450 + V6)) 699 349 1299
	# MSS 1397: lengthened segments at floats 1047 + 1397 k; 1398 bytes
	mtu_case "$codec" $((1449 + V6)) 1397 1047 1298
done

ktap_finish
