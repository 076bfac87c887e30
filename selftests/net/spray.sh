#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# spray.sh - the flow table under a SYN spray: 100,000 spoofed SYNs with
# incnn's capability option (incnn_inject -Y) to a listener of the
# receiver (flow-max 8192). Flows whose handshake never completes are
# bounded (an eighth of flow-max) and evicted oldest first, so:
#  - the receiver's flow count stays bounded during and after the spray;
#  - a legitimate marked connection opened during the spray, once the
#    spray has filled that bound, is still compressed (framed, decoded,
#    bytes as predicted);
#  - flow-max above the default needs CAP_NET_ADMIN in the initial user
#    namespace: root of a new user namespace cannot raise it (skipped
#    where user namespaces cannot be created, as in the test VM's chroot).

. "$(dirname "$0")/lib.sh"

SYNS=${SYNS:-100000}
ktap_header "SYN spray of $SYNS: bounded embryonic flows"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
gen_floats "$TMP/f.bin" 100000 151 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10
MAX=8192
incctl "$NS_B" set flow-max $MAX
# the receiver's SYN-ACKs to the spoofed sources (incnn_inject -Y: in
# 10.99.0.0/16, over IPv6 in fd00:99::/64) go to A, which drops them
ip -n "$NS_B" route add "$(pick_family 10.99.0.0/16 fd00:99::/64)" via "$ADDR_A"

next_port
SPORT=$PORT
bg nsenter --net="/run/netns/$NS_B" "$PYTHON" -c "$(py_tcp)
import time
s = tcp('$ADDR_B')
s.bind(('$ADDR_B', $SPORT))
s.listen(16)
time.sleep(100000)"
wait_listen "$NS_B" "$SPORT" || fail "spray listener"

flow_count() { jnum "$("$INCCTL" -n "$1" -j show)" flow_count; }

start=$SECONDS
bg nsenter --net="/run/netns/$NS_A" "$INJECT" -Y "$SYNS" -c "$ADDR_B" -p "$SPORT"
spid=$BG_PID
# wait until the receiver has seen twice flow-max SYNs (the table
# would be full without the bound)
for _ in $(seq 1 600); do
	s=$(kstats "$NS_B")
	[ $(($(jnum "$s" flows_created) + $(jnum "$s" tx_raw_table_full))) -ge \
		$((2 * MAX)) ] && break
	nap 0.1
done
during=$(flow_count "$NS_B")
alive=0
kill -0 "$spid" 2>/dev/null && alive=1
incctl "$NS_A" stats reset
if xfer legit "$TMP/f.bin" -T 0x28 && st=$(same "$TMP/want" "$TMP/legit.out"); then
	ok "legitimate connection during the spray: bytes as predicted"
else
	fail "legitimate connection during the spray: bytes as predicted" "${st:-transfer failed}"
fi
fr=$(counter "$NS_A" tx_framed)
np=$(counter "$NS_A" tx_raw_no_peer)
if [ "$fr" -ge 1 ] && [ "$np" = 0 ]; then
	ok "legitimate connection during the spray: compressed (tx_framed $fr, spray running: $alive)"
else
	fail "legitimate connection during the spray: compressed" \
		"tx_framed $fr tx_raw_no_peer $np (spray running: $alive)"
fi
wait "$spid"
src=$?
secs=$((SECONDS - start))
after=$(flow_count "$NS_B")
created=$(counter "$NS_B" flows_created)
if [ $src = 0 ] && [ "$during" -le $((MAX / 8 + 64)) ] &&
	[ "$after" -le $((MAX / 8 + 64)) ] && [ "$created" -ge $((SYNS / 2)) ]; then
	ok "receiver's flows bounded: $during during, $after after $created created ($SYNS SYNs, $secs s)"
else
	fail "receiver's flows bounded by flow-max/8" \
		"inject exit $src; flow_count $during during, $after after; flows_created $created"
fi
info "receiver slab: $(grep -E '^kmalloc-(cg-)?(192|256) ' /proc/slabinfo | awk '{ printf "%s %s objs; ", $1, $2 }')"

# --- flow-max in a user namespace -------------------------------------------
# (the VM runs the tests in a chroot, where unshare(CLONE_NEWUSER) fails)
uns() { unshare -Urn "$INCCTL" "$@" 2>&1; }
if ! unshare -Urn true 2>/dev/null; then
	skip "user namespace root: flow-max above the default refused" \
		"no user namespaces here (chroot)"
elif out=$(uns set flow-max 100000); then
	fail "user namespace root: flow-max 100000 refused" "accepted: $out"
elif ! out2=$(uns set flow-max 1000); then
	fail "user namespace root: flow-max 1000 accepted" "$out2"
else
	ok "user namespace root: flow-max 100000 refused (${out:0:120}), 1000 accepted"
fi

incctl "$NS_B" set idle-timeout 1 close-timeout 1
ktap_finish
