#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bigstream.sh - one marked connection carries more than 4 GiB (5 GiB of
# zeros by default, INCNN_BIG_BYTES to change): stream offsets are 64-bit, so
# the segments between anchor + 2 GiB and anchor + 4 GiB are framed like
# all the others (tx_raw_pre_anchor stays 0), and the receiver gets
# exactly the prediction (for zeros: zeros), checked as the bytes arrive
# (incnn_xfer recv -Z 1) instead of with a 5 GiB file. To keep the run
# short under TCG (where the per-segment cost dominates: ~4.6 MiB/s with
# 1448-byte segments), the link has a 65000-byte MTU and the rule is
# lz4 (zeros: ~32 MiB/s, 5 GiB in under 3 minutes); which bytes go raw
# does not depend on the codec.

. "$(dirname "$0")/lib.sh"

INCNN_BIG_BYTES=${INCNN_BIG_BYTES:-$((5 << 30))}
ktap_header "a marked stream of $INCNN_BIG_BYTES bytes"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
if ! { ip -n "$NS_A" link set va mtu 65000 &&
	ip -n "$NS_B" link set vb mtu 65000 &&
	incctl "$NS_A" rule add tos 0x28 codec lz4; }; then
	fail "jumbo MTU and lz4 rule"
	ktap_finish
	exit 1
fi

next_port
timeout $((1500 * SLOW)) nsenter --net="/run/netns/$NS_B" \
	"$XFER" recv -b "$ADDR_B" -p "$PORT" -Z 1 "$TMP/zeros.txt" &
rpid=$!
wait_listen "$NS_B" "$PORT"
start=$SECONDS
timeout $((1500 * SLOW)) nsenter --net="/run/netns/$NS_A" \
	"$XFER" send -c "$ADDR_B" -p "$PORT" -T 0x28 -Z "$INCNN_BIG_BYTES" -
src=$?
wait $rpid
rrc=$?
secs=$((SECONDS - start))
got=$(cat "$TMP/zeros.txt" 2>/dev/null)
if [ $src = 0 ] && [ $rrc = 0 ] && [ "$got" = "bytes $INCNN_BIG_BYTES nonzero 0" ]; then
	ok "$INCNN_BIG_BYTES zero bytes received as zeros ($secs s, $((INCNN_BIG_BYTES / 1048576 / (secs ? secs : 1))) MiB/s)"
else
	fail "$INCNN_BIG_BYTES zero bytes received as zeros" "sender $src receiver $rrc: $got"
fi
s=$(kstats "$NS_A")
pre=$(jnum "$s" tx_raw_pre_anchor)
orig=$(jnum "$s" tx_bytes_orig)
if [ "$pre" = 0 ] && [ "$orig" -ge $((INCNN_BIG_BYTES - (1 << 20))) ]; then
	ok "tx_raw_pre_anchor 0, tx_bytes_orig $orig: every segment framed"
else
	fail "tx_raw_pre_anchor 0 and every segment framed" \
		"tx_raw_pre_anchor $pre tx_bytes_orig $orig tx_bytes $(jnum "$s" tx_bytes)"
fi
info "sender: $s"

ktap_finish
