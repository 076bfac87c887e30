#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# handshake.sh - what the capability option may and may not change.
#  - Spoofed SYN-ACKs: receiver B does not offer rx (rx off: a peer
#    without incnn). While A's marked connection to B is established,
#    incnn_inject sprays SYN-ACKs "from B" carrying the option at it (one
#    acknowledging A's SYN, others random). A must not believe them: B
#    receives the original bytes, A frames nothing. Valid frames injected
#    toward B with the frame option are dropped: B did not offer rx.
#  - SYN cookies and a reused tuple: B serves a marked stream to A, who
#    fetches it from one fixed local port, first with a normal handshake
#    (compressed, as predicted), then with net.ipv4.tcp_syncookies=2 on B
#    (every SYN-ACK from a cookie, which incnn's egress hook never sees),
#    three times on the same tuple right after the previous connection
#    (B holds it in TIME_WAIT). The new incarnations must not inherit the
#    old ISN, anchor or rule: they go raw (original bytes), nothing framed
#    or counted as pre-anchor, and B counts the resets (flows_reset).
#  - One-sided upgrade: B offers a codec set without the rule's codec
#    (module parameter rx_codecs). A never frames with it: lz4 data
#    arrives as sent, inceptionn data quantised in place as predicted, no
#    stall, B drops nothing.

. "$(dirname "$0")/lib.sh"

ktap_header "handshake: spoofed SYN-ACKs, SYN cookies, codec sets"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
XFER_TIMEOUT=40
PARAM=/sys/module/incnn/parameters/rx_codecs
RULE=(rule add tos 0x28 codec inceptionn bound 2^-10)
incctl "$NS_A" "${RULE[@]}" || fail "A: ${RULE[*]}"
incctl "$NS_B" "${RULE[@]}" || fail "B: ${RULE[*]}"
gen_floats "$TMP/f.bin" 100000 41 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

# --- 1. spoofed SYN-ACKs at an established flow -----------------------------
incctl "$NS_B" set rx off
incctl "$NS_A" stats reset
incctl "$NS_B" stats reset
if inject_xfer spoof "$TMP/f.bin" -S 50 -s "$TAG"; then
	ok "spoofed SYN-ACKs: $(expected spoof injected) injected, transfer completes"
fi
if st=$(same "$TMP/f.bin" "$TMP/spoof.out"); then
	ok "spoofed SYN-ACKs: the peer without rx received the original bytes"
else
	fail "spoofed SYN-ACKs: the peer without rx received the original bytes" "$st"
fi
s=$(kstats "$NS_A")
if [ "$(jnum "$s" tx_framed)" = 0 ] && [ "$(jnum "$s" tx_raw_no_peer)" -ge 1 ]; then
	ok "spoofed SYN-ACKs: sender framed nothing (tx_raw_no_peer $(jnum "$s" tx_raw_no_peer))"
else
	fail "spoofed SYN-ACKs: sender framed nothing" \
		"tx_framed $(jnum "$s" tx_framed) tx_raw_no_peer $(jnum "$s" tx_raw_no_peer)"
fi
nof=$(counter "$NS_B" rx_drop_not_offered)
want=$(expected spoof rx_drop_not_offered)
if [ "$nof" = "$want" ]; then
	ok "frames to the peer that did not offer rx: dropped (rx_drop_not_offered $nof)"
else
	fail "frames to the peer that did not offer rx: rx_drop_not_offered ${nof:-missing} (want $want)"
fi
incctl "$NS_B" set rx on

# --- 2. SYN cookies on a reused tuple ---------------------------------------
REUSE=3
next_port
SPORT=$PORT
next_port
LPORT=$PORT
nsx "$NS_B" sysctl -qw net.ipv4.tcp_syncookies=1
bg nsx "$NS_B" "$XFER" serve -b "$ADDR_B" -p "$SPORT" -T 0x28 \
	-n $((REUSE + 1)) "$TMP/f.bin"
spid=$BG_PID
wait_listen "$NS_B" "$SPORT" || fail "server listens"
# B's flow of each closed connection must outlive the next round, the
# first one's included (a flow that expired is created anew, not reset):
# a loaded host can take longer than the default close-timeout (10 s)
# between two rounds
incctl "$NS_B" set close-timeout 600
fetch() { # name
	timeout "$XFER_TIMEOUT" nsenter --net="/run/netns/$NS_A" \
		"$XFER" fetch -c "$ADDR_B" -p "$SPORT" -B "$LPORT" -T 0x28 \
		"$TMP/$1.out"
}
if fetch cookie0 && st=$(same "$TMP/want" "$TMP/cookie0.out"); then
	ok "normal handshake: received bytes = roundtrip prediction"
else
	fail "normal handshake: received bytes = roundtrip prediction" "${st:-transfer failed}"
fi
s=$(kstats "$NS_B")
framed0=$(jnum "$s" tx_framed)
pre0=$(jnum "$s" tx_raw_pre_anchor)
reset0=$(jnum "$s" flows_reset)
[ "$framed0" -ge 1 ] || fail "normal handshake: server framed ($framed0)"
nsx "$NS_B" sysctl -qw net.ipv4.tcp_syncookies=2
bad=0
for i in $(seq 1 $REUSE); do
	nap 0.2
	if ! fetch "cookie$i"; then
		bad=$((bad + 1))
		info "cookie$i: transfer failed"
	elif ! st=$(same "$TMP/f.bin" "$TMP/cookie$i.out"); then
		bad=$((bad + 1))
		info "cookie$i: $st"
	fi
done
nsx "$NS_B" sysctl -qw net.ipv4.tcp_syncookies=1
incctl "$NS_B" set close-timeout 10
if [ $bad = 0 ]; then
	ok "syncookies=2, tuple reused $REUSE times: original bytes each time (raw)"
else
	fail "syncookies=2, tuple reused $REUSE times: original bytes each time" \
		"$bad of $REUSE transfers wrong"
fi
s=$(kstats "$NS_B")
framed=$(($(jnum "$s" tx_framed) - framed0))
pre=$(($(jnum "$s" tx_raw_pre_anchor) - pre0))
resets=$(($(jnum "$s" flows_reset) - reset0))
if [ "$framed" = 0 ] && [ "$pre" = 0 ] && [ "$resets" -ge $REUSE ]; then
	ok "syncookies=2: no stale anchor (framed 0, pre-anchor 0), flows_reset $resets"
else
	fail "syncookies=2: no stale anchor" \
		"tx_framed +$framed tx_raw_pre_anchor +$pre flows_reset +$resets (want 0 0 >= $REUSE)"
fi
wait $spid 2>/dev/null

# --- 3. a one-sided upgrade: the peer's codec set lacks the rule's codec ----
if [ ! -w $PARAM ]; then
	fail "module parameter rx_codecs" "$PARAM missing"
	ktap_finish
	exit 1
fi
gen_floats "$TMP/z0.bin" 100000 42 1e-2
"$CODEC" roundtrip --codec ebq --bound 2^-6 "$TMP/z0.bin" "$TMP/z.bin" >/dev/null
upgrade() { # name mask file want rule-args...
	local name=$1 mask=$2 in=$3 want=$4 s st
	shift 4
	incctl "$NS_A" rule add tos 0x28 "$@"
	echo "$mask" >$PARAM
	incctl "$NS_A" stats reset
	incctl "$NS_B" stats reset
	if xfer "$name" "$in" -T 0x28; then
		if st=$(same "$want" "$TMP/$name.out"); then
			ok "$name: received bytes as predicted, no stall"
		else
			fail "$name: received bytes as predicted" "$st"
		fi
	else
		fail "$name: transfer completes (no stall)"
	fi
	echo 65535 >$PARAM
	s=$(kstats "$NS_A")
	if [ "$(jnum "$s" tx_framed)" = 0 ] &&
		[ "$(jnum "$s" tx_raw_peer_codec)" -ge 1 ] &&
		[ "$(jnum "$(kstats "$NS_B")" rx_dropped)" = 0 ]; then
		ok "$name: nothing framed (tx_raw_peer_codec $(jnum "$s" tx_raw_peer_codec)), receiver dropped nothing"
	else
		fail "$name: nothing framed, receiver dropped nothing" \
			"tx_framed $(jnum "$s" tx_framed) tx_raw_peer_codec $(jnum "$s" tx_raw_peer_codec) rx_dropped $(jnum "$(kstats "$NS_B")" rx_dropped)"
	fi
}
# lz4 is codec 4, inceptionn codec 1: offer everything but that one
upgrade upgrade-lz4 $((0xffff & ~(1 << 4))) "$TMP/z.bin" "$TMP/z.bin" codec lz4
upgrade upgrade-inceptionn $((0xffff & ~(1 << 1))) "$TMP/f.bin" "$TMP/want" \
	codec inceptionn bound 2^-10

ktap_finish
