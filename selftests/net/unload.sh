#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# unload.sh - unloading incnn must never let a frame reach TCP undecoded:
#  - rmmod during a marked transfer is refused ("in use": the flows that
#    offered rx, and those that compress, hold the module), and the
#    received bytes are exactly the prediction;
#  - `incctl set rx off` on the receiver during a transfer stops new
#    offers only: the running transfer is still decoded, bytes exact;
#  - once the connections are closed and their flows expired
#    (close-timeout), rmmod succeeds.

. "$(dirname "$0")/lib.sh"

ktap_header "rmmod refused while flows depend on the module; rx off drains"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
gen_floats "$TMP/f.bin" 500000 111 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10
# a slow link, so that the transfer lasts a few seconds
nsx "$NS_A" tc qdisc add dev va root netem rate 4mbit limit 1000

# bg_xfer NAME: start xfer in the background; BX_PID
bg_xfer() {
	xfer "$1" "$TMP/f.bin" -T 0x28 >"$TMP/$1.log" 2>&1 &
	BX_PID=$!
	CLEANUP_PIDS+=("$BX_PID")
}

# running NAME: has the receiver got some bytes already?
running() {
	local _
	for _ in $(seq 1 100); do
		[ -s "$TMP/$1.out" ] && return 0
		nap 0.1
	done
	return 1
}

# --- rmmod during a transfer ----------------------------------------------
incctl "$NS_A" stats reset
incctl "$NS_B" stats reset
bg_xfer busy
running busy
refs=$(cat /sys/module/incnn/refcnt 2>/dev/null)
out=$(rmmod incnn 2>&1)
rc=$?
if [ $rc != 0 ] && module_loaded; then
	ok "rmmod during a marked transfer refused (exit $rc: ${out:-no message}; refcnt $refs)"
else
	fail "rmmod during a marked transfer refused" "rmmod exit $rc: $out"
fi
wait "$BX_PID"
xrc=$?
if [ $xrc = 0 ] && st=$(same "$TMP/want" "$TMP/busy.out"); then
	ok "rmmod during a marked transfer: bytes as predicted"
else
	fail "rmmod during a marked transfer: bytes as predicted" \
		"xfer exit $xrc $(cat "$TMP/busy.log")" "${st:-}"
fi
if module_loaded; then
	if frame_balance "$(kstats "$NS_A")" "$(kstats "$NS_B")" &&
		[ "$FB_TX" -ge 1 ]; then
		ok "rmmod during a marked transfer: every frame accounted for ($FB_TEXT)"
	else
		fail "rmmod during a marked transfer: every frame accounted for" \
			"$FB_TEXT"
	fi
else
	load_module
	fail "rmmod during a marked transfer: every frame decoded" "module gone"
fi

# --- rx off on the receiver during a transfer ------------------------------
incctl "$NS_A" stats reset
incctl "$NS_B" stats reset
bg_xfer drain
running drain
incctl "$NS_B" set rx off
wait "$BX_PID"
xrc=$?
frame_balance "$(kstats "$NS_A")" "$(kstats "$NS_B")"
fb=$?
if [ $xrc = 0 ] && st=$(same "$TMP/want" "$TMP/drain.out") &&
	[ $fb = 0 ] && [ "$FB_TX" -ge 1 ]; then
	ok "rx off during a transfer: still decoded, bytes as predicted ($FB_TEXT)"
else
	fail "rx off during a transfer: still decoded, bytes as predicted" \
		"xfer exit $xrc, $FB_TEXT" "${st:-}"
fi
# a new connection is not offered any more: raw, byte-identical
incctl "$NS_A" stats reset
if xfer after "$TMP/f.bin" -T 0x28 && st=$(same "$TMP/f.bin" "$TMP/after.out") &&
	[ "$(counter "$NS_A" tx_framed)" = 0 ]; then
	ok "rx off: a new connection is not offered (raw, byte-identical)"
else
	fail "rx off: a new connection is not offered" "${st:-}" \
		"tx_framed $(counter "$NS_A" tx_framed)"
fi

# --- the drain completes ----------------------------------------------------
for ns in "$NS_A" "$NS_B"; do
	incctl "$ns" set idle-timeout 1 close-timeout 1
done
start=$SECONDS
if unload_module 30; then
	ok "connections closed, flows expired: rmmod succeeds ($((SECONDS - start)) s)"
else
	fail "connections closed, flows expired: rmmod succeeds" \
		"refcnt $(cat /sys/module/incnn/refcnt)" "$(incctl "$NS_A" flows)" \
		"$(incctl "$NS_B" flows)"
fi

ktap_finish
