#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# md5.sh - TCP-MD5 (RFC 2385, option kind 19: BGP sessions) through the
# module. The signature covers the TCP header length and the payload, so
# incnn must never add, change or strip an option of a segment that
# carries kind 19, nor frame or quantise it. A and B sign with the same
# key (incnn_xfer -K), both with rx and tx on:
#  - with the tests' rule (ToS 0x28, inceptionn) and a marked sender: the
#    connection establishes, B receives the original bytes, A frames
#    nothing and counts its marked signed segments (tx_raw_signed); on the
#    wire (nft counters at each device's ingress, before any IP hook)
#    the SYN carries kind 19 and neither SYN nor SYN-ACK kind 253;
#  - with no rule at all: the same bytes;
#  - the same marked transfer without a key is framed (the setup can
#    compress, so the first case is not vacuous).

. "$(dirname "$0")/lib.sh"

ktap_header "md5: TCP-MD5 connections are never touched"
command -v nft >/dev/null || { skip "md5" "no nft"; ktap_finish; exit 0; }
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
XFER_TIMEOUT=30
KEY=incnn-md5-test-key
for ns in "$NS_A" "$NS_B"; do
	incctl "$ns" set rx on
	incctl "$ns" set tx on
done
gen_floats "$TMP/f.bin" 50000 43 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

# SYNs (and SYN-ACKs) with kind 19 / kind 253 arriving at each device
for d in "$NS_A:va" "$NS_B:vb"; do
	syn_counters "${d%%:*}" "${d#*:}" md5t "k19=tcp option @19,0,8 19" \
		"k253=tcp option @253,0,8 253" || fail "nft counters in ${d%%:*}"
done
nft_read() { # ns counter
	nft_packets "$1" md5t "$2"
}

# md5xfer NAME [send options]: B receives with the key, A sends with it
md5xfer() {
	local name=$1 rpid rc rrc
	shift
	next_port
	timeout "$XFER_TIMEOUT" nsenter --net="/run/netns/$NS_B" \
		"$XFER" recv -b "$ADDR_B" -p "$PORT" -K "$KEY" \
		"$TMP/$name.out" &
	rpid=$!
	wait_listen "$NS_B" "$PORT" || { kill $rpid; return 1; }
	timeout "$XFER_TIMEOUT" nsenter --net="/run/netns/$NS_A" \
		"$XFER" send -c "$ADDR_B" -p "$PORT" -K "$KEY" "$@" "$TMP/f.bin"
	rc=$?
	wait $rpid
	rrc=$?
	[ $rc -ne 0 ] || rc=$rrc
	return $rc
}

# --- 1. matching rule, marked sender -----------------------------------------
incctl "$NS_A" stats reset
incctl "$NS_B" stats reset
if md5xfer rule -T 0x28 && st=$(same "$TMP/f.bin" "$TMP/rule.out"); then
	ok "md5, matching rule: connection established, original bytes"
else
	fail "md5, matching rule: connection established, original bytes" \
		"${st:-transfer failed or timed out}"
fi
s=$(kstats "$NS_A")
if [ "$(jnum "$s" tx_framed)" = 0 ] && [ "$(jnum "$s" tx_raw_signed || echo 0)" -ge 1 ]; then
	ok "md5, matching rule: nothing framed (tx_raw_signed $(jnum "$s" tx_raw_signed))"
else
	fail "md5, matching rule: nothing framed" \
		"tx_framed $(jnum "$s" tx_framed) tx_raw_signed $(jnum "$s" tx_raw_signed)"
fi
k19=$(nft_read "$NS_B" k19)
k253=$(($(nft_read "$NS_B" k253) + $(nft_read "$NS_A" k253)))
if [ "${k19:-0}" -ge 1 ] && [ "$k253" = 0 ]; then
	ok "md5, matching rule: SYN signed ($k19 with kind 19), no kind 253 on SYN or SYN-ACK"
else
	fail "md5, matching rule: SYN signed, no kind 253" \
		"SYNs with kind 19 at B: ${k19:-none}, SYN/SYN-ACKs with kind 253: $k253"
fi

# --- 2. no rule at all ---------------------------------------------------------
incctl "$NS_A" rule del tos 0x28
incctl "$NS_B" rule del tos 0x28
if md5xfer norule -T 0x28 && st=$(same "$TMP/f.bin" "$TMP/norule.out"); then
	ok "md5, no rule: connection established, original bytes"
else
	fail "md5, no rule: connection established, original bytes" \
		"${st:-transfer failed or timed out}"
fi

# --- 3. control: the same marked transfer without a key is compressed -------
incctl "$NS_A" rule add tos 0x28 codec inceptionn bound 2^-10
incctl "$NS_B" rule add tos 0x28 codec inceptionn bound 2^-10
incctl "$NS_A" stats reset
if xfer plain "$TMP/f.bin" -T 0x28 && st=$(same "$TMP/want" "$TMP/plain.out") &&
	[ "$(counter "$NS_A" tx_framed)" -ge 1 ]; then
	ok "control, no key: framed, bytes as predicted"
else
	fail "control, no key: framed, bytes as predicted" \
		"${st:-transfer failed} tx_framed $(counter "$NS_A" tx_framed)"
fi

ktap_finish
