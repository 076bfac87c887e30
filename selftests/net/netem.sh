#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# netem.sh - loss, reordering, duplication and corruption on the path
# (netem on the sender's veth): the transfer completes and the received
# bytes equal the roundtrip prediction exactly. Retransmitted segments are
# compressed again, on the same float grid. A corrupted frame fails the
# TCP checksum at the receiver and is counted under rx_drop_csum.

. "$(dirname "$0")/lib.sh"

ktap_header "netem: loss, reorder, duplicate, corrupt"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }

PRE=37
gen_floats "$TMP/f.bin" 100000 41 1e-1
gen_preamble "$TMP/pre.bin" $PRE
cat "$TMP/pre.bin" "$TMP/f.bin" >"$TMP/in.bin"
predict "$TMP/want" "$TMP/in.bin" $PRE inceptionn --bound 2^-10

run() { # name netem-args...
	local name=$1 st retrans
	shift
	nsx "$NS_A" tc qdisc replace dev va root netem "$@" ||
		{ fail "$name: tc qdisc netem $*"; return; }
	incctl "$NS_A" stats reset
	incctl "$NS_B" stats reset
	retrans=$(nsx "$NS_A" nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ { print $2 }')
	if ! xfer "$name" "$TMP/in.bin" -T 0x28 -m after -P $PRE; then
		fail "$name ($*): transfer completes"
		return
	fi
	retrans=$(($(nsx "$NS_A" nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ { print $2 }') - retrans))
	if st=$(same "$TMP/want" "$TMP/$name.out"); then
		ok "$name ($*): bytes as predicted, $retrans retransmissions"
	else
		fail "$name ($*): bytes as predicted ($retrans retransmissions)" "$st"
	fi
}

run loss loss 3%
run reorder delay 2ms reorder 25% 50%
run duplicate duplicate 5%
run mixed delay 1ms loss 2% duplicate 2% reorder 10%
run corrupt corrupt 2%
csum=$(counter "$NS_B" rx_drop_csum)
other=$(jnum "$(kstats "$NS_B")" rx_dropped)
if [ "$csum" -ge 1 ] && [ "$other" = "$csum" ]; then
	ok "corrupt: $csum frames dropped, all under rx_drop_csum"
else
	fail "corrupt: rx_drop_csum $csum (want >= 1), rx_dropped $other (want = rx_drop_csum)"
fi
nsx "$NS_A" tc qdisc del dev va root

ktap_finish
