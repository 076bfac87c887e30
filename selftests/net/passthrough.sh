#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# passthrough.sh - traffic incnn must leave alone arrives byte-identical:
#  - unmarked traffic, and traffic marked with a ToS that has no rule;
#  - marked traffic on an untracked flow: the connection was established
#    before the module was loaded (the handshake was never seen), and
#    marked only afterwards (tx_raw_untracked);
#  - negotiation: the receiver does not offer rx (incctl set rx off before
#    the connection): marked traffic goes raw and unquantised
#    (tx_raw_no_peer).

. "$(dirname "$0")/lib.sh"

ktap_header "traffic that must pass unchanged"

unload_module || { fail "rmmod incnn"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
gen_floats "$TMP/f.bin" 100000 21 1e-1

# --- untracked: connected before insmod, marked after --------------------
# python3 sender: connect, send 64 KiB unmarked, wait for $TMP/go, mark
# the socket with ToS 0x28, send the rest, wait for the receiver to close.
cat >"$TMP/late.py" <<'EOF'
import os, socket, sys, time
addr, port, path, go = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
data = open(path, "rb").read()
s = socket.create_connection((addr, port))
s.sendall(data[:65536])
open(go + ".connected", "w").close()
for _ in range(30000):  # insmod: seconds on the debug kernel
    if os.path.exists(go):
        break
    time.sleep(0.01)
else:
    sys.exit("no go")
if s.family == socket.AF_INET6:
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, 0x28)
else:
    s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0x28)
s.sendall(data[65536:])
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
EOF
next_port
timeout $((400 * SLOW)) nsenter --net="/run/netns/$NS_B" \
	"$XFER" recv -b "$ADDR_B" -p "$PORT" "$TMP/late.out" &
rpid=$!
if wait_listen "$NS_B" "$PORT"; then
	timeout $((400 * SLOW)) nsenter --net="/run/netns/$NS_A" \
		"$PYTHON" "$TMP/late.py" "$ADDR_B" "$PORT" "$TMP/f.bin" "$TMP/go" &
	spid=$!
	# Python starts in seconds under TCG, more on the debug kernel
	for _ in $(seq 1 $((400 * SLOW))); do
		[ -e "$TMP/go.connected" ] && break
		nap 0.05
	done
	[ -e "$TMP/go.connected" ] ||
		fail "untracked flow: the sender connected before insmod (waited $((20 * SLOW)) s)"
	load_module || fail "insmod incnn.ko"
	: >"$TMP/go"
	wait $spid
	src=$?
	wait $rpid
	rrc=$?
	if [ $src = 0 ] && [ $rrc = 0 ] && st=$(same "$TMP/f.bin" "$TMP/late.out"); then
		ok "untracked flow (connected before insmod, marked after): byte-identical"
	else
		fail "untracked flow: byte-identical" "sender $src receiver $rrc" "${st:-}"
	fi
	s=$(kstats "$NS_A")
	u=$(jnum "$s" tx_raw_untracked)
	fr=$(jnum "$s" tx_framed)
	if [ "${u:-0}" -ge 1 ] && [ "$fr" = 0 ]; then
		ok "untracked flow: tx_raw_untracked $u, tx_framed 0"
	else
		fail "untracked flow: tx_raw_untracked $u (want >= 1), tx_framed $fr (want 0)"
	fi
else
	kill $rpid
	fail "untracked flow: receiver did not listen"
	load_module
fi

# --- unmarked and no-rule markings ------------------------------------------
incctl "$NS_A" stats reset
if xfer plain "$TMP/f.bin" && st=$(same "$TMP/f.bin" "$TMP/plain.out"); then
	ok "unmarked traffic: byte-identical"
else
	fail "unmarked traffic: byte-identical" "${st:-transfer failed}"
fi
if xfer norule "$TMP/f.bin" -T 0x30 &&
	st=$(same "$TMP/f.bin" "$TMP/norule.out"); then
	ok "ToS 0x30 (no rule): byte-identical"
else
	fail "ToS 0x30 (no rule): byte-identical" "${st:-transfer failed}"
fi
segs=$(counter "$NS_A" tx_segs)
if [ "$segs" = 0 ]; then
	ok "unmarked and no-rule traffic: tx_segs 0"
else
	fail "unmarked and no-rule traffic: tx_segs $segs (want 0)"
fi

# --- negotiation: the receiver does not offer rx ------------------------------
incctl "$NS_B" set rx off
incctl "$NS_A" stats reset
if xfer nopeer "$TMP/f.bin" -T 0x28 &&
	st=$(same "$TMP/f.bin" "$TMP/nopeer.out"); then
	ok "receiver rx off: marked traffic byte-identical (uncompressed)"
else
	fail "receiver rx off: marked traffic byte-identical" "${st:-transfer failed}"
fi
s=$(kstats "$NS_A")
np=$(jnum "$s" tx_raw_no_peer)
fr=$(jnum "$s" tx_framed)
if [ "${np:-0}" -ge 1 ] && [ "$fr" = 0 ]; then
	ok "receiver rx off: tx_raw_no_peer $np, tx_framed 0"
else
	fail "receiver rx off: tx_raw_no_peer $np (want >= 1), tx_framed $fr (want 0)"
fi
incctl "$NS_B" set rx on

# and with rx back on, the same pair compresses again
incctl "$NS_A" stats reset
predict "$TMP/again.want" "$TMP/f.bin" 0 inceptionn --bound 2^-10
if xfer again "$TMP/f.bin" -T 0x28 &&
	st=$(same "$TMP/again.want" "$TMP/again.out") &&
	[ "$(counter "$NS_A" tx_framed)" -ge 1 ]; then
	ok "receiver rx on again: framed, bytes as predicted"
else
	fail "receiver rx on again: framed, bytes as predicted" "${st:-}"
fi

ktap_finish
