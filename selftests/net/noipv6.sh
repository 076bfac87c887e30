#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# noipv6.sh - the module on a kernel booted with ipv6.disable=1 (IPv6
# built in but administratively off; nf_defrag_ipv6 still loads): incnn
# loads, says once that it works on IPv4 alone (no IPv6 hooks, no IPv6
# defrag), and IPv4 is unchanged: a marked transfer is framed, decoded
# and arrives as predicted; the module unloads cleanly. Skipped on a
# kernel with IPv6 enabled; run it with
#   selftests/net/vm-check.sh --append ipv6.disable=1 noipv6.sh

. "$(dirname "$0")/lib.sh"

ktap_header "ipv6.disable=1: IPv4 alone"
if [ -d /proc/sys/net/ipv6 ] || [ "$INCNN_FAMILY" = 6 ]; then
	skip "ipv6.disable=1" "needs a kernel booted with ipv6.disable=1 and INCNN_FAMILY=4 (vm-check.sh --append ipv6.disable=1)"
	ktap_finish
	exit 0
fi
unload_module
if load_module; then
	ok "module loads with IPv6 disabled"
else
	fail "module loads with IPv6 disabled" "$(dmesg | tail -n 5)"
	ktap_finish
	exit 1
fi
line=$(dmesg | grep -c 'incnn: IPv6 disabled (ipv6.disable=1): IPv4 only')
if [ "$line" = 1 ]; then
	ok "said once: IPv6 disabled, IPv4 only"
else
	fail "said once: IPv6 disabled, IPv4 only" "$line such lines in dmesg"
fi
setup_pair || { fail "namespaces and veth (IPv4)"; ktap_finish; exit 1; }
gen_floats "$TMP/f.bin" 100000 61 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10
if xfer v4 "$TMP/f.bin" -T 0x28 && st=$(same "$TMP/want" "$TMP/v4.out"); then
	ok "IPv4 marked transfer: bytes as predicted"
else
	fail "IPv4 marked transfer: bytes as predicted" "${st:-transfer failed}"
fi
fr=$(counter "$NS_A" tx_framed)
rf=$(counter "$NS_B" rx_frames)
if [ "$fr" -ge 1 ] && [ "$rf" -ge 1 ]; then
	ok "IPv4 marked transfer: framed and decoded (tx_framed $fr, rx_frames $rf)"
else
	fail "IPv4 marked transfer: framed and decoded" "tx_framed $fr rx_frames $rf"
fi
for n in "$NS_A" "$NS_B"; do
	incctl "$n" set idle-timeout 1 close-timeout 1
done
if unload_module 60; then
	ok "module unloads"
else
	fail "module unloads"
fi
ktap_finish
