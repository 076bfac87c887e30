#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# wireshark.sh - a capture of the real module for the Wireshark
# dissector's test: tcpdump on the receiver's veth records a marked
# transfer (ToS 0x28, rule inceptionn 2^-10) whose bytes must arrive as
# predicted, with no packet dropped by the capture. The capture and what
# the host needs to check it go to $VM_OUT/wireshark/ (cap.pcap, and
# info: port, file size, the sender's tx_framed); make check then runs
# tshark with contrib/wireshark/incnn.lua on it on the host
# (selftests/wireshark/capture.sh): tshark's start-up takes minutes
# under TCG.

. "$(dirname "$0")/lib.sh"

ktap_header "a marked transfer captured for the Wireshark dissector's test"
out=${VM_OUT:-/tmp/out}/wireshark
rm -rf "$out"
if ! command -v tcpdump >/dev/null; then
	fail "tcpdump is installed (scripts/check/deps.sh vm)"
	ktap_finish
	exit 1
fi
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }

size=$((24000 * 4 + 2))
gen_floats "$TMP/f.bin" 24000 7 1e-3
printf 'xy' >>"$TMP/f.bin"
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

# nsenter execs tcpdump: $! is tcpdump itself, which prints its counts
# on SIGTERM (a background job ignores SIGINT)
nsenter --net="/run/netns/$NS_B" tcpdump -i vb -n -U --immediate-mode -s 0 -B 8192 \
	-w "$TMP/cap.pcap" tcp 2>"$TMP/tcpdump.err" &
tcpdump_pid=$!
CLEANUP_PIDS+=("$tcpdump_pid")
for _ in $(seq 1 200); do
	grep -q 'listening on' "$TMP/tcpdump.err" && break
	sleep 0.1
done
if xfer cap "$TMP/f.bin" -T 0x28 && st=$(same "$TMP/want" "$TMP/cap.out"); then
	ok "marked transfer: bytes as predicted"
else
	fail "marked transfer: bytes as predicted" "${st:-}"
fi
framed=$(counter "$NS_A" tx_framed)
# --immediate-mode: no packet waits in a ring block that SIGTERM would
# leave unread (seen: 0 captured, 102 received by filter, under TCG)
nap 2
kill -TERM "$tcpdump_pid"
wait "$tcpdump_pid" 2>/dev/null
info "tcpdump: $(tr '\n' ' ' <"$TMP/tcpdump.err")"
captured=$(sed -n 's/^\([0-9]*\) packets* captured.*/\1/p' "$TMP/tcpdump.err")
drops=$(sed -n 's/^\([0-9]*\) packets* dropped by kernel.*/\1/p' "$TMP/tcpdump.err")
if [ "${captured:-0}" -gt 10 ] && [ "${drops:-1}" = 0 ] && [ "$framed" -ge 1 ]; then
	ok "captured $captured packets, none dropped; $framed frames sent"
else
	fail "capture complete" "captured ${captured:-?}, dropped ${drops:-?}, tx_framed $framed"
fi

if mkdir -p "$out" && cp "$TMP/cap.pcap" "$out/" &&
	printf 'port %s\nsize %s\ntx_framed %s\n' "$PORT" "$size" "$framed" >"$out/info"; then
	ok "capture saved for the host ($out)"
else
	fail "capture saved for the host ($out)"
fi

ktap_finish
