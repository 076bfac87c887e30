#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sframe-inject.sh - malformed version-2 frames (superframes), injected
# with incnn_inject -V on an established flow, are dropped and counted,
# and nothing of them reaches the socket: orig_len beyond an IPv4
# datagram (rx_drop_length), a range past the receive window
# (rx_drop_v2_window), a body that does not decode (rx_drop_body); and
# any version-2 frame to a receiver that did not offer version 2
# (rx_drop_version).

. "$(dirname "$0")/lib.sh"

ktap_header "sframe-inject: malformed version-2 frames"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }

gen_floats "$TMP/f.bin" 50000 43 1e-1
sf() { # ns on|off
	incctl "$1" set superframes "$2"
}
c() { # ns counter
	counter "$1" "$2"
}
sf "$NS_A" on && sf "$NS_B" on || fail "incctl set superframes on"

# B's receive window is kept small
# (16 KB) so that a 60000-byte range at the next sequence number ends
# past it.
inject_v2() { # name offered(0|1)
	local name=$1 st got want ok_all=1 detail=
	incctl "$NS_A" stats reset
	incctl "$NS_B" stats reset
	inject_xfer "$name" "$TMP/f.bin" -V "$2" || return
	if st=$(same "$TMP/want.f" "$TMP/$name.out"); then
		ok "$name: nothing injected reached the socket, bytes as predicted"
	else
		fail "$name: nothing injected reached the socket" "$st"
	fi
	for k in rx_drop_length rx_drop_body rx_drop_version rx_drop_v2_window \
		rx_drop_short rx_drop_codec rx_drop_param; do
		want=$(expected "$name" "$k")
		got=$(c "$NS_B" "$k")
		detail+="$k $got/$want "
		[ "$got" = "$want" ] || ok_all=0
	done
	[ $ok_all = 1 ] && ok "$name: dropped and counted ($detail)" ||
		fail "$name: dropped and counted" "$detail"
}
predict "$TMP/want.f" "$TMP/f.bin" 0 inceptionn --bound 2^-10
old_rmem=$(nsx "$NS_B" sysctl -n net.ipv4.tcp_rmem)
nsx "$NS_B" sysctl -qw net.ipv4.tcp_rmem="4096 16384 16384"
inject_v2 malformed-v2 1
sf "$NS_B" off
inject_v2 v2-not-offered 0
sf "$NS_B" on
nsx "$NS_B" sysctl -qw net.ipv4.tcp_rmem="$old_rmem"

ktap_finish
