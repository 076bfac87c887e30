#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# exthdr.sh - IPv6 extension headers (INCNN_FAMILY=6 only; skipped over
# IPv4): incnn handles none. A sender whose socket puts extension headers
# on every segment, its SYN included (sticky IPV6_HOPOPTS / IPV6_RTHDR
# set before connect), marked with the rule's ToS:
#  - a hop-by-hop header (PadN option), a segment routing header (one
#    segment, the receiver, segments left 0; the receiver accepts SRv6),
#    and both: the receiver gets the ORIGINAL bytes exactly, nothing is
#    framed, and tx_raw_exthdr counts the marked segments left raw;
#  - the same pair without extension headers still frames, bytes as
#    predicted (the control: the rule and the peers are in order);
#  - frames behind extension headers at the receiver: on a compressed
#    flow B offered rx to, incnn_inject -X sends valid frames with the
#    flow's tuple and next sequence number behind a hop-by-hop or a
#    destination options header. No incnn sender frames such a segment:
#    B drops each (rx_drop_exthdr, exactly as many as injected) and the
#    application receives the stream as predicted, nothing foreign.

. "$(dirname "$0")/lib.sh"

ktap_header "IPv6 extension headers"
if [ "$INCNN_FAMILY" != 6 ]; then
	skip "extension headers" "IPv6 only (INCNN_FAMILY=6)"
	ktap_finish
	exit 0
fi
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
nsx "$NS_B" sysctl -qw net.ipv6.conf.all.seg6_enabled=1 \
	net.ipv6.conf.vb.seg6_enabled=1 || fail "B: accept SRv6"
gen_floats "$TMP/f.bin" 100000 151 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

for e in hbh srh both; do
	incctl "$NS_A" stats reset
	if xfer "$e" "$TMP/f.bin" -T 0x28 -E "$e" &&
		st=$(same "$TMP/f.bin" "$TMP/$e.out"); then
		ok "extension headers $e: the original bytes, exactly"
	else
		fail "extension headers $e: the original bytes, exactly" \
			"${st:-transfer failed}"
	fi
	s=$(kstats "$NS_A")
	raw=$(jnum "$s" tx_raw_exthdr)
	fr=$(jnum "$s" tx_framed)
	if [ "${raw:-0}" -ge 1 ] && [ "$fr" = 0 ]; then
		ok "extension headers $e: tx_raw_exthdr $raw, tx_framed 0"
	else
		fail "extension headers $e: tx_raw_exthdr ${raw:-?} (want >= 1), tx_framed $fr (want 0)"
	fi
done

incctl "$NS_A" stats reset
if xfer plain "$TMP/f.bin" -T 0x28 && st=$(same "$TMP/want" "$TMP/plain.out") &&
	[ "$(counter "$NS_A" tx_framed)" -ge 1 ] &&
	[ "$(counter "$NS_A" tx_raw_exthdr)" = 0 ]; then
	ok "no extension headers: framed, bytes as predicted, tx_raw_exthdr 0"
else
	fail "no extension headers: framed, bytes as predicted, tx_raw_exthdr 0" "${st:-}"
fi

incctl "$NS_A" stats reset
incctl "$NS_B" stats reset
if inject_xfer inj "$TMP/f.bin" -X 6; then
	if st=$(same "$TMP/want" "$TMP/inj.out"); then
		ok "frames behind extension headers injected: the stream as predicted, nothing foreign"
	else
		fail "frames behind extension headers injected: the stream as predicted" "$st"
	fi
fi
want=$(expected inj rx_drop_exthdr)
got=$(counter "$NS_B" rx_drop_exthdr)
fr=$(counter "$NS_A" tx_framed)
if [ "${want:-0}" -ge 1 ] && [ "$got" = "$want" ] && [ "$fr" -ge 1 ]; then
	ok "frames behind extension headers: rx_drop_exthdr $got of $want injected (the flow compressed: tx_framed $fr)"
else
	fail "frames behind extension headers: rx_drop_exthdr ${got:-?} (want ${want:-?}), tx_framed ${fr:-?}"
fi

ktap_finish
