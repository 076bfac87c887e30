#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# netem.sh - loss, reordering, duplication and corruption on the path
# (netem on the sender's veth): the transfer completes and the received
# bytes equal the roundtrip prediction exactly. Retransmitted segments are
# compressed again, on the same float grid. A corrupted frame fails the
# TCP checksum at the receiver and is counted under rx_drop_csum.
#
# netem draws its faults at random, unseeded, so the corrupt case sends
# enough that a frame is corrupted in practice always: 1.6 MB at 5 %
# (40-63 frames dropped for their checksum in 12 runs; none has a chance
# near e^-40), not 400 kB at 2 % (0-11 in 26 runs: none once). The bytes
# are checked against the first law (as_predicted): a float that a
# retransmitted 1-3 byte tail cut goes out original.

. "$(dirname "$0")/lib.sh"

ktap_header "netem: loss, reorder, duplicate, corrupt"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }

PRE=37
gen_preamble "$TMP/pre.bin" $PRE
for n in 100000 400000; do
	gen_floats "$TMP/f$n.bin" $n 41 1e-1
	cat "$TMP/pre.bin" "$TMP/f$n.bin" >"$TMP/in$n.bin"
	predict "$TMP/want$n" "$TMP/in$n.bin" $PRE inceptionn --bound 2^-10
done

run() { # name floats netem-args...
	local name=$1 n=$2 st retrans
	shift 2
	nsx "$NS_A" tc qdisc replace dev va root netem "$@" ||
		{ fail "$name: tc qdisc netem $*"; return; }
	incctl "$NS_A" stats reset
	incctl "$NS_B" stats reset
	retrans=$(nsx "$NS_A" nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ { print $2 }')
	if ! xfer "$name" "$TMP/in$n.bin" -T 0x28 -m after -P $PRE; then
		fail "$name ($*): transfer completes" \
			"sender: $(kstats "$NS_A")" "receiver: $(kstats "$NS_B")"
		return
	fi
	retrans=$(($(nsx "$NS_A" nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ { print $2 }') - retrans))
	if st=$(as_predicted "$TMP/want$n" "$TMP/in$n.bin" "$TMP/$name.out" $PRE "$NS_A"); then
		ok "$name ($*): bytes as predicted ($st), $retrans retransmissions"
	else
		fail "$name ($*): bytes as predicted ($retrans retransmissions)" "$st" \
			"sender: $(kstats "$NS_A")" "receiver: $(kstats "$NS_B")"
	fi
}

run loss 100000 loss 3%
run reorder 100000 delay 2ms reorder 25% 50%
run duplicate 100000 duplicate 5%
run mixed 100000 delay 1ms loss 2% duplicate 2% reorder 10%
run corrupt 400000 corrupt 5%
# every frame dropped as bad was dropped for its checksum
s=$(kstats "$NS_B")
csum=$(jnum "$s" rx_drop_csum)
bad=$(rx_bad_drops "$s")
if [ "$csum" -ge 1 ] && [ "$bad" = "$csum" ]; then
	ok "corrupt: $csum frames dropped, all under rx_drop_csum"
else
	fail "corrupt: rx_drop_csum $csum (want >= 1), bad frames dropped $bad (want = rx_drop_csum)" \
		"receiver: $s"
fi
nsx "$NS_A" tc qdisc del dev va root

ktap_finish
