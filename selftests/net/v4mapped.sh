#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# v4mapped.sh - dual-stack sockets: an AF_INET6 socket that talks to an
# IPv4 peer through an IPv4-mapped address (::ffff:a.b.c.d) sends and
# receives IPv4, so incnn treats it as the IPv4 flow it is. The sender
# is an AF_INET6 socket marked with IP_TOS (what marks a mapped
# connection; IPV6_TCLASS does not), connected to ::ffff:ADDR_B; the
# receiver an AF_INET6 listener on :: (dual-stack). The bytes arrive as
# predicted, framed on the way and decoded (the socket lookups of both
# hooks find the IPv6 sockets of an IPv4 flow, as TCP's do).

. "$(dirname "$0")/lib.sh"

ktap_header "IPv4-mapped addresses on dual-stack sockets"
if [ "$INCNN_FAMILY" = 6 ]; then
	skip "IPv4-mapped" "an IPv4 flow: run with INCNN_FAMILY=4"
	ktap_finish
	exit 0
fi
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }

gen_floats "$TMP/f.bin" 100000 62 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

cat >"$TMP/send.py" <<'EOF'
import socket, sys
addr, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0x28)
s.connect(("::ffff:" + addr, port))
s.sendall(open(path, "rb").read())
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
EOF
{ py_tcp; cat <<'EOF'; } >"$TMP/recv.py"
import socket, sys
port, out = int(sys.argv[1]), sys.argv[2]
ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("::", port))
ls.listen(1)
s, peer = ls.accept()
assert peer[0].startswith("::ffff:"), peer
save_stream(s, out)
s.close()
EOF

next_port
py_pair $((60 * SLOW)) "$TMP/recv.py" "$PORT" "$TMP/out.bin" -- \
	"$TMP/send.py" "$ADDR_B" "$PORT" "$TMP/f.bin" 2>"$TMP/pair.err"
src=$PAIR_SEND
rrc=$PAIR_RECV
if [ $src = 0 ] && [ $rrc = 0 ] && st=$(same "$TMP/want" "$TMP/out.bin"); then
	ok "mapped IPv4 transfer: bytes as predicted"
else
	fail "mapped IPv4 transfer: bytes as predicted" \
		"${st:-sender $src receiver $rrc: $(tail -n 4 "$TMP/pair.err")}"
fi
fr=$(counter "$NS_A" tx_framed)
rf=$(counter "$NS_B" rx_frames)
if [ "${fr:-0}" -ge 1 ] && [ "${rf:-0}" -ge 1 ]; then
	ok "mapped IPv4 transfer: framed and decoded (tx_framed $fr, rx_frames $rf)"
else
	fail "mapped IPv4 transfer: framed and decoded" "tx_framed $fr rx_frames $rf"
fi
ktap_finish
