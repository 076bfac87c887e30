# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# lib.sh - common code of the incnn kernel datapath tests (selftests/net):
# the lab's namespace/module/data helpers (lab/netns.sh, sourced here) plus
# the tests' KTAP output: ktap_header, ok / fail / skip / check,
# ktap_finish.  Sourced by every test script; runs INSIDE the test VM only
# (lab/vm.sh).

# shellcheck source=../../lab/netns.sh
. "$(cd "$(dirname "${BASH_SOURCE[0]}")/../../lab" && pwd)/netns.sh"

# SLOW: how many times longer than usual the scripts may take here
# (INCNN_TEST_TIMEOUT over selftests/net/settings' timeout, at least 1:
# make check-debug's kernel gets 5). For a script's own bounds on how
# long its processes live and how long it waits for TCP to recover, not
# for the waits that must stay short (before an RTO backs off).
SLOW=$(sed -n 's/^timeout=//p' "$(dirname "${BASH_SOURCE[0]}")/settings" 2>/dev/null)
SLOW=$(( ${INCNN_TEST_TIMEOUT:-${SLOW:-600}} / ${SLOW:-600} ))
[ "$SLOW" -ge 1 ] || SLOW=1

# veth queues each packet on the sending CPU's backlog: 1000 packets by
# default, and one dropped there after the sender framed it is a frame
# the receiver never counts (frame_balance). Every script gets the deep
# backlog, whichever scripts ran before it (the setting is not per
# namespace).
[ "${INCNN_IN_VM:-}" != 1 ] || sysctl -qw net.core.netdev_max_backlog=10000

# --- KTAP -------------------------------------------------------------
KT_N=0
KT_PASS=0
KT_FAIL=0
KT_SKIP=0

ktap_header() {
	echo "TAP version 13"
	echo "# $TEST_NAME: $*$([ "$INCNN_FAMILY" = 6 ] && echo " [IPv6]")"
}

ok() { # description
	KT_N=$((KT_N + 1))
	KT_PASS=$((KT_PASS + 1))
	echo "ok $KT_N - $*"
}

fail() { # description [detail...]
	local d=$1
	shift
	KT_N=$((KT_N + 1))
	KT_FAIL=$((KT_FAIL + 1))
	echo "not ok $KT_N - $d"
	[ $# -eq 0 ] || printf '#   %s\n' "$@"
}

skip() { # description reason
	KT_N=$((KT_N + 1))
	KT_SKIP=$((KT_SKIP + 1))
	echo "ok $KT_N - $1 # SKIP $2"
}

check() { # description command... : ok if the command succeeds
	local d=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$d"
	else
		fail "$d" "command: $*" "${out:0:2000}"
	fi
}

# unless INCNN_SUPERFRAMES=0: how much the script's namespaces still
# alive at its end used version 2 (a script may have reset their counters)
sframe_summary() {
	local n s tx=0 rx=0
	module_loaded || return 0
	for n in "${CLEANUP_NS[@]}"; do
		[ -e "/run/netns/$n" ] || continue
		s=$(kstats "$n") || continue
		tx=$((tx + $(jnum "$s" tx_superframes || echo 0)))
		rx=$((rx + $(jnum "$s" rx_frames_v2 || echo 0)))
	done
	info "superframes: tx_superframes $tx rx_frames_v2 $rx" \
		"(namespaces alive at the end)"
}

ktap_finish() {
	[ "${INCNN_SUPERFRAMES:-1}" = 0 ] || sframe_summary
	info "$TEST_NAME: ${SECONDS} s"
	echo "1..$KT_N"
	echo "# Totals: pass:$KT_PASS fail:$KT_FAIL xfail:0 xpass:0 skip:$KT_SKIP error:0"
	[ "$KT_FAIL" -eq 0 ]
}


# codec_dump NS: incctl -j codecs without the self-benchmark's keys
# ("simd", "mbps"), compact: the codecs' names, kinds, ranges, defaults
codec_dump() {
	"$INCCTL" -n "$1" -j codecs 2>&1 | "$PYTHON" -c '
import json, sys
d = json.load(sys.stdin)
for c in d:
    c.pop("simd", None)
    c.pop("mbps", None)
print(json.dumps(d, separators=(",", ":")))' 2>&1
}

# --- injection -------------------------------------------------------
# inject_xfer NAME IN INJECT-ARGS...: incnn_xfer recv in $NS_B into
# $TMP/NAME.out, and incnn_inject -c $ADDR_B -p PORT INJECT-ARGS IN in
# $NS_A: its expected counters in $TMP/NAME.expect, its errors in
# $TMP/NAME.err. Fails (one case, with both exit statuses) unless both
# succeed.
inject_xfer() {
	local name=$1 in=$2 rpid irc rrc
	shift 2
	next_port
	timeout $((60 * SLOW)) nsenter --net="/run/netns/$NS_B" \
		"$XFER" recv -b "$ADDR_B" -p "$PORT" "$TMP/$name.out" &
	rpid=$!
	wait_listen "$NS_B" "$PORT" || fail "$name: receiver listens"
	timeout $((60 * SLOW)) nsenter --net="/run/netns/$NS_A" \
		"$INJECT" -c "$ADDR_B" -p "$PORT" "$@" "$in" \
		>"$TMP/$name.expect" 2>"$TMP/$name.err"
	irc=$?
	wait $rpid
	rrc=$?
	[ $irc = 0 ] && [ $rrc = 0 ] && return 0
	fail "$name: injection" "injector $irc receiver $rrc" "$(cat "$TMP/$name.err")"
	return 1
}

# expected NAME COUNTER: what inject_xfer NAME's injector expects of it
# (0 if it said nothing: inject_xfer failed then)
expected() {
	local v
	v=$(sed -n "s/^$2 //p" "$TMP/$1.expect" 2>/dev/null)
	echo "${v:-0}"
}

# --- frame accounting -------------------------------------------------
# frame_balance SA SB: does the receiver account for every frame the
# sender put on the wire? SA, SB: the sender's and the receiver's
# `incctl -j stats` (kstats). A frame (one wire packet, a superframe's
# too) is decoded (rx_frames), emptied as a spurious retransmission TCP
# will not take (rx_out_of_window), or, a superframe's packet that would
# restore bytes past the window the receiver advertised, dropped and
# counted (rx_drop_v2_window; TCP resends it). Sets FB_TX (tx_framed),
# FB_RX (the receiver's sum) and FB_TEXT (both, spelled out); true if
# they are equal.
# shellcheck disable=SC2034 # FB_*: for the scripts that source this
frame_balance() {
	local rf ow v2w
	FB_TX=$(jnum "$1" tx_framed)
	rf=$(jnum "$2" rx_frames)
	ow=$(jnum "$2" rx_out_of_window)
	v2w=$(jnum "$2" rx_drop_v2_window)
	FB_RX=$((rf + ow + v2w))
	FB_TEXT="tx_framed $FB_TX, rx_frames $rf + rx_out_of_window $ow + rx_drop_v2_window $v2w"
	[ "$FB_TX" = "$FB_RX" ]
}

# rx_bad_drops SB: the frames the receiver dropped as bad, from its
# `incctl -j stats` SB: every rx_drop_* (rx_dropped) but a superframe's
# packet past the window (rx_drop_v2_window, no fault of the frame)
rx_bad_drops() {
	echo $(($(jnum "$1" rx_dropped) - $(jnum "$1" rx_drop_v2_window)))
}

# --- TCP options on the wire ------------------------------------------
# syn_counters NS DEV TABLE NAME=MATCH...: named nft counters, at DEV's
# ingress (netdev family: before any IP hook, so before incnn strips
# anything), of the SYNs and SYN-ACKs that also match each nft MATCH
syn_counters() {
	local ns=$1 dev=$2 table=$3 decl="" rules="" kv
	shift 3
	for kv in "$@"; do
		decl+="	counter ${kv%%=*} {}"$'\n'
		rules+="		tcp flags syn ${kv#*=} counter name \"${kv%%=*}\""$'\n'
	done
	nsx "$ns" nft -f - <<EOF
table netdev $table {
$decl	chain in {
		type filter hook ingress device $dev priority -10;
$rules	}
}
EOF
}

# nft_packets NS TABLE COUNTER: the packets a named netdev counter saw
nft_packets() {
	nsx "$1" nft list counter netdev "$2" "$3" |
		sed -n 's/.*packets \([0-9]*\).*/\1/p'
}
