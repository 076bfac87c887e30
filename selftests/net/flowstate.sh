#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# flowstate.sh - the two ends must agree on a flow for as long as it
# carries frames; a receiver that no longer tracks a flow it offered rx to
# hands the peer's frames to TCP undecoded (corrupt data):
#  - the receiver's flow table is full at the handshake: it must not offer
#    rx (the sender then sends raw: tx_raw_no_peer), and the data arrives
#    byte-identical;
#  - the receiver's idle and close timeouts (1 s) pass while the
#    connection lives (the receiver half-closed its side at once, the
#    sender pauses 3 s in the middle of the stream): the receiver keeps
#    the flow as long as its socket lives, and the data arrives exactly
#    as predicted.

. "$(dirname "$0")/lib.sh"

ktap_header "flow state agreement between the ends"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
gen_floats "$TMP/f.bin" 100000 101 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

# --- receiver table full ----------------------------------------------------
incctl "$NS_B" set flow-max 1
# leaves one (closing) flow in B's table, kept past the next handshake (the
# default close-timeout, 10 s, passed before it on the debug kernel)
incctl "$NS_B" set close-timeout $((60 * SLOW))
xfer first "$TMP/f.bin" -T 0x28
incctl "$NS_A" stats reset
incctl "$NS_B" stats reset
if xfer full "$TMP/f.bin" -T 0x28 && st=$(same "$TMP/f.bin" "$TMP/full.out"); then
	ok "receiver table full: data byte-identical (sent raw)"
else
	fail "receiver table full: data byte-identical (sent raw)" "${st:-transfer failed}"
fi
np=$(counter "$NS_A" tx_raw_no_peer)
fr=$(counter "$NS_A" tx_framed)
tf=$(counter "$NS_B" tx_raw_table_full)
if [ "$np" -ge 1 ] && [ "$fr" = 0 ] && [ "$tf" -ge 1 ]; then
	ok "receiver table full: not offered (sender tx_raw_no_peer $np, tx_framed 0; receiver table_full $tf)"
else
	fail "receiver table full: not offered" \
		"sender tx_raw_no_peer $np tx_framed $fr, receiver tx_raw_table_full $tf"
fi
incctl "$NS_B" set flow-max 65536 close-timeout 10

# --- receiver timeouts pass while the connection lives -------------------------
py_pause_pair
incctl "$NS_B" set idle-timeout 1 close-timeout 1
incctl "$NS_A" stats reset
incctl "$NS_B" stats reset
next_port
py_pair $((60 * SLOW)) "$TMP/pause-recv.py" "$ADDR_B" "$PORT" "$TMP/idle.out" -- \
	"$TMP/pause-send.py" "$ADDR_B" "$PORT" "$TMP/f.bin"
src=$PAIR_SEND
rrc=$PAIR_RECV
if [ $src = 0 ] && [ $rrc = 0 ] && st=$(same "$TMP/want" "$TMP/idle.out"); then
	ok "receiver timeouts pass mid-stream (half-closed, idle 3 s): bytes as predicted"
else
	fail "receiver timeouts pass mid-stream: bytes as predicted" \
		"sender $src receiver $rrc" "${st:-}"
fi
sa=$(kstats "$NS_A")
sb=$(kstats "$NS_B")
if frame_balance "$sa" "$sb" && [ "$FB_TX" -ge 1 ]; then
	ok "receiver timeouts pass mid-stream: every frame accounted for ($FB_TEXT)"
else
	fail "receiver timeouts pass mid-stream: every frame accounted for" "$FB_TEXT"
fi
# once the sockets are gone, the flows expire
nap 3
left=$(jnum "$("$INCCTL" -n "$NS_B" -j show)" flow_count)
if [ "$left" = 0 ]; then
	ok "receiver: flows expire once their sockets are gone"
else
	fail "receiver: flows expire once their sockets are gone" "flow_count $left" \
		"$(incctl "$NS_B" flows)"
fi
incctl "$NS_B" set idle-timeout 300 close-timeout 10

ktap_finish
