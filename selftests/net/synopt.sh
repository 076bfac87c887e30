#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# synopt.sh - when the capability option (kind 253) is on the wire, and
# what a retransmitted SYN offers. nft counters at each device's ingress
# (before any IP hook, so before incnn strips the option) count SYNs and
# SYN-ACKs that carry kind 253:
#  - no rule in either namespace, marked and unmarked: none;
#  - a rule for another DSCP only (ToS 0x30), marked 0x28: none;
#  - the matching rule, unmarked sender: none;
#  - the matching rule, marked sender: the SYN offers, the SYN-ACK answers,
#    the bytes are the roundtrip prediction;
#  - the matching rule, sender with rx off: its SYN offers nothing and the
#    SYN-ACK answers nothing.
# Retransmitted SYN: A fetches a marked ebq stream from B. A's first SYN
# offers inceptionn only (module parameter rx_codecs) and is dropped at B;
# rx_codecs then changes to ebq only before TCP retransmits the SYN. The
# retransmission must offer what the first did (what A's flow decodes):
# no SYN listing ebq reaches B, B does not frame ebq (it quantises in
# place), A drops nothing and receives the ebq roundtrip prediction.

. "$(dirname "$0")/lib.sh"

ktap_header "synopt: when SYNs carry the capability option"
command -v nft >/dev/null || { skip "synopt" "no nft"; ktap_finish; exit 0; }
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
XFER_TIMEOUT=30
PARAM=/sys/module/incnn/parameters/rx_codecs
RULE=(codec inceptionn bound 2^-10)
for ns in "$NS_A" "$NS_B"; do
	incctl "$ns" set rx on
	incctl "$ns" set tx on
done
gen_floats "$TMP/f.bin" 30000 47 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

# counters of SYNs / SYN-ACKs with kind 253 (any), and with a codec set
# of exactly inceptionn (0x0002) or ebq (0x0004)
for d in "$NS_A:va" "$NS_B:vb"; do
	syn_counters "${d%%:*}" "${d#*:}" synopt "k253=tcp option @253,0,8 253" \
		"inc=tcp option @253,48,16 0x0002" \
		"ebq=tcp option @253,48,16 0x0004" || fail "nft counters in ${d%%:*}"
done
nft_read() { # ns counter
	nft_packets "$1" synopt "$2"
}
syn0=0
ack0=0
# case NAME WANT_SYN WANT_SYNACK [send options]: one transfer; counts the
# SYNs with kind 253 at B and SYN-ACKs with it at A (0 or "some")
case_() {
	local name=$1 wsyn=$2 wack=$3 syn ack st
	shift 3
	if xfer "$name" "$TMP/f.bin" "$@"; then
		syn=$(($(nft_read "$NS_B" k253) - syn0))
		ack=$(($(nft_read "$NS_A" k253) - ack0))
		syn0=$((syn0 + syn))
		ack0=$((ack0 + ack))
		if { [ "$wsyn" = 0 ] && [ $syn = 0 ]; } ||
			{ [ "$wsyn" = some ] && [ $syn -ge 1 ]; }; then
			if { [ "$wack" = 0 ] && [ $ack = 0 ]; } ||
				{ [ "$wack" = some ] && [ $ack -ge 1 ]; }; then
				ok "$name: SYN with option $syn (want $wsyn), SYN-ACK $ack (want $wack)"
				return 0
			fi
		fi
		fail "$name: SYN with option $syn (want $wsyn), SYN-ACK $ack (want $wack)"
	else
		fail "$name: transfer"
	fi
	return 1
}

# --- no rule ----------------------------------------------------------------
incctl "$NS_A" rule del tos 0x28
incctl "$NS_B" rule del tos 0x28
case_ "no rule, marked" 0 0 -T 0x28 &&
	check "no rule, marked: original bytes" same "$TMP/f.bin" "$TMP/no rule, marked.out"
case_ "no rule, unmarked" 0 0

# --- a rule for another DSCP --------------------------------------------------
incctl "$NS_A" rule add tos 0x30 "${RULE[@]}"
incctl "$NS_B" rule add tos 0x30 "${RULE[@]}"
case_ "rule for ToS 0x30, marked 0x28" 0 0 -T 0x28
incctl "$NS_A" rule del tos 0x30
incctl "$NS_B" rule del tos 0x30

# --- the matching rule ----------------------------------------------------------
incctl "$NS_A" rule add tos 0x28 "${RULE[@]}"
incctl "$NS_B" rule add tos 0x28 "${RULE[@]}"
case_ "matching rule, unmarked" 0 0
if case_ "matching rule, marked" some some -T 0x28; then
	check "matching rule, marked: bytes as predicted" \
		same "$TMP/want" "$TMP/matching rule, marked.out"
fi
incctl "$NS_A" set rx off
case_ "matching rule, marked, sender rx off" 0 0 -T 0x28
incctl "$NS_A" set rx on

# --- a retransmitted SYN offers what the first did ---------------------------------
incctl "$NS_B" rule add tos 0x28 codec ebq bound 2^-10
predict "$TMP/wantq" "$TMP/f.bin" 0 ebq --bound 2^-10
echo 2 >$PARAM
next_port
SPORT=$PORT
next_port
LPORT=$PORT
nsx "$NS_B" nft -f - <<EOF
table netdev syndrop {
	counter n {}
	chain in {
		type filter hook ingress device vb priority 0;
		tcp dport $SPORT tcp flags syn counter name "n" drop
	}
}
EOF
inc0=$(nft_read "$NS_B" inc)
ebq0=$(nft_read "$NS_B" ebq)
incctl "$NS_A" stats reset
bg nsx "$NS_B" "$XFER" serve -b "$ADDR_B" -p "$SPORT" -T 0x28 "$TMP/f.bin"
spid=$BG_PID
wait_listen "$NS_B" "$SPORT" || fail "server listens"
timeout "$XFER_TIMEOUT" nsenter --net="/run/netns/$NS_A" \
	"$XFER" fetch -c "$ADDR_B" -p "$SPORT" -B "$LPORT" -T 0x28 \
	"$TMP/retx.out" &
fpid=$!
for _ in $(seq 1 100); do
	n=$(nft_packets "$NS_B" syndrop n)
	[ "${n:-0}" -ge 1 ] && break
	nap 0.05
done
# the first SYN is gone: change the codec set, then let the next one pass
echo 4 >$PARAM
nsx "$NS_B" nft delete table netdev syndrop
wait $fpid
frc=$?
echo 65535 >$PARAM
wait $spid 2>/dev/null
inc=$(($(nft_read "$NS_B" inc) - inc0))
ebq=$(($(nft_read "$NS_B" ebq) - ebq0))
if [ $frc = 0 ] && st=$(same "$TMP/wantq" "$TMP/retx.out"); then
	ok "retransmitted SYN: transfer completes, bytes as predicted"
else
	fail "retransmitted SYN: transfer completes, bytes as predicted" \
		"${st:-fetch exit $frc}"
fi
if [ "$inc" -ge 2 ] && [ "$ebq" = 0 ] &&
	[ "$(counter "$NS_A" rx_drop_codec)" = 0 ]; then
	ok "retransmitted SYN: offers what the first did (inceptionn $inc, ebq $ebq), nothing dropped"
else
	fail "retransmitted SYN: offers what the first did" \
		"SYNs offering inceptionn $inc, ebq $ebq; rx_drop_codec $(counter "$NS_A" rx_drop_codec)"
fi

ktap_finish
