#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lifecycle.sh - incnn under churn (the VM harness fails the run on any
# WARN, BUG or Oops in the kernel log, so these mostly prove the absence
# of a crash; transfers hit by a change may fail or deliver other bytes):
#  - configuration changes under traffic: rules added, replaced and
#    deleted, wire DSCP, tx and rx off and on, a tiny flow table, short
#    timeouts (flows expire under traffic), counter resets;
#  - network namespace deletion under traffic;
#  - module unload under traffic: refused while flows depend on the
#    module, done once they expired, and a reload;
#  - an unprivileged user cannot change the configuration but can read it;
#  - the configuration of one namespace does not affect another.
# After each disturbance a clean transfer must be exact again.

. "$(dirname "$0")/lib.sh"

ktap_header "config changes, netns deletion, rmmod under traffic; permissions; isolation"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }

gen_floats "$TMP/f.bin" 150000 81 1e-1
gen_floats "$TMP/big.bin" 1000000 82 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

clean_transfer() { # description
	local st
	if xfer clean "$TMP/f.bin" -T 0x28 && st=$(same "$TMP/want" "$TMP/clean.out"); then
		ok "$1: a clean transfer afterwards is exact"
	else
		fail "$1: a clean transfer afterwards is exact" "${st:-transfer failed}"
	fi
}

# background traffic: iperf3 (marked, random payload) and an incnn_xfer
# stream of floats
traffic_start() { # ns_client ns_server addr seconds
	local port
	next_port
	port=$PORT
	nsx "$2" iperf3 -s -1 -B "$3" -p "$port" >/dev/null 2>&1 &
	TPIDS=("$!")
	wait_listen "$2" "$port"
	nsx "$1" iperf3 -c "$3" -p "$port" --tos 0x28 -t "$4" >/dev/null 2>&1 &
	TPIDS+=("$!")
	next_port
	nsx "$2" "$XFER" recv -b "$3" -p "$PORT" /dev/null >/dev/null 2>&1 &
	TPIDS+=("$!")
	wait_listen "$2" "$PORT"
	nsx "$1" "$XFER" send -c "$3" -p "$PORT" -T 0x28 "$TMP/big.bin" >/dev/null 2>&1 &
	TPIDS+=("$!")
	CLEANUP_PIDS+=("${TPIDS[@]}")
}

traffic_stop() {
	local p
	for p in "${TPIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${TPIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
}

# --- configuration changes under traffic -------------------------------------
traffic_start "$NS_A" "$NS_B" "$ADDR_B" 8
errs=0
for cmd in \
	"rule add tos 0x28 codec ebq bound 2^-8" \
	"rule add tos 0x28 codec trunc bits 8" \
	"rule add tos 0x28 codec lz4" \
	"rule del tos 0x28" \
	"rule add tos 0x28 codec inceptionn bound 2^-12" \
	"set tx off" "set tx on" "set rx off" "set rx on" \
	"set wire-dscp 12" "set wire-dscp 11" \
	"set flow-max 1" "set flow-max 65536" \
	"set idle-timeout 1 close-timeout 1" \
	"stats reset"; do
	for ns in "$NS_A" "$NS_B"; do
		# shellcheck disable=SC2086 # words of the command
		incctl "$ns" $cmd || errs=$((errs + 1))
	done
	nap 0.05
done
nap 1.5 # let the flow GC run with a 1 s timeout under traffic
for ns in "$NS_A" "$NS_B"; do
	incctl "$ns" rule add tos 0x28 codec inceptionn bound 2^-10 &&
		incctl "$ns" set idle-timeout 300 close-timeout 10 || errs=$((errs + 1))
done
traffic_stop
if [ $errs = 0 ]; then
	ok "config changes under traffic: every incctl command succeeded"
else
	fail "config changes under traffic: $errs incctl commands failed"
fi
clean_transfer "config changes under traffic"

# --- namespace deletion under traffic ----------------------------------------
NS_C=incnn-$TAG-c
NS_D=incnn-$TAG-d
if new_ns "$NS_C" && new_ns "$NS_D" &&
	veth_pair "$NS_C" vc "10.69.$SUBNET.1/24" "$NS_D" vd "10.69.$SUBNET.2/24"; then
	traffic_start "$NS_C" "$NS_D" "10.69.$SUBNET.2" 10
	nap 1
	flows=$(jnum "$("$INCCTL" -n "$NS_C" -j show)" flow_count)
	ip netns del "$NS_D"
	ip netns del "$NS_C"
	kill "${NSPID[$NS_C]}" "${NSPID[$NS_D]}" 2>/dev/null
	traffic_stop
	nap 0.5
	ok "netns deletion under traffic ($flows flows in the sender's namespace)"
else
	fail "netns deletion under traffic: setup"
fi
clean_transfer "netns deletion under traffic"

# --- module unload under traffic ---------------------------------------------
# refused while flows that offered rx or compress are alive ("in use");
# once the traffic stopped and the flows expired, rmmod succeeds (a hook
# still running when its namespace state is freed shows up here: several
# rounds, as the window is small)
for cycle in 1 2 3; do
	traffic_start "$NS_A" "$NS_B" "$ADDR_B" 10
	# until a flow holds the module: the clients connect in the
	# background, later than any fixed pause on a loaded host
	for _ in $(seq 1 80); do
		[ "$(cat /sys/module/incnn/refcnt)" -gt 0 ] && break
		nap 0.25
	done
	# what the module had just before, should rmmod succeed
	seen=("refcnt $(cat /sys/module/incnn/refcnt)"
		"A: $(incctl "$NS_A" -j show) $(incctl "$NS_A" rule list)"
		"B: $(incctl "$NS_B" -j show) $(incctl "$NS_B" rule list)")
	if rmmod incnn 2>/dev/null; then
		fail "rmmod under traffic refused (round $cycle)" "${seen[@]}"
	else
		ok "rmmod under traffic refused (round $cycle)"
	fi
	for ns in "$NS_A" "$NS_B"; do
		incctl "$ns" set idle-timeout 1 close-timeout 1
	done
	traffic_stop
	if unload_module 30; then
		ok "rmmod once the flows expired (round $cycle)"
	else
		fail "rmmod once the flows expired (round $cycle)" \
			"refcnt $(cat /sys/module/incnn/refcnt)"
	fi
	if load_module; then
		ok "insmod again (round $cycle)"
	else
		fail "insmod again (round $cycle)"
	fi
done
clean_transfer "rmmod under traffic"

# --- permissions -----------------------------------------------------------------
# as uid/gid 65534 (nobody) without groups or capabilities
for cmd in "rule add tos 0x30 codec lz4" "rule del tos 0x28" "set tx off" \
	"stats reset"; do
	# shellcheck disable=SC2086 # words of the command
	out=$(nsx "$NS_A" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$INCCTL" $cmd 2>&1)
	rc=$?
	if [ $rc = 1 ] && [[ $out == *"permission denied"* ]]; then
		ok "unprivileged: incctl $cmd refused (exit 1, permission denied)"
	else
		fail "unprivileged: incctl $cmd refused" "exit $rc: $out"
	fi
done
for cmd in show "rule list" stats flows codecs; do
	# shellcheck disable=SC2086 # words of the command
	if out=$(nsx "$NS_A" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$INCCTL" $cmd 2>&1); then
		ok "unprivileged: incctl $cmd works"
	else
		fail "unprivileged: incctl $cmd works" "$out"
	fi
done
if incctl "$NS_A" rule list | grep -q "dscp 10 (tos 0x28) codec inceptionn" &&
	! incctl "$NS_A" rule list | grep -q "tos 0x30"; then
	ok "unprivileged: configuration unchanged"
else
	fail "unprivileged: configuration unchanged" "$(incctl "$NS_A" rule list)"
fi

# --- isolation ---------------------------------------------------------------------
# B's configuration (its flow count is not: a closed flow of B may expire
# meanwhile, 10 s after its FIN, on a slow VM)
config_of() {
	"$INCCTL" -n "$1" -j show | sed 's/"flow_count":[0-9]*,//'
}
before=$(config_of "$NS_B")
bstats=$(jnum "$(kstats "$NS_B")" rx_frames)
incctl "$NS_A" rule add tos 0x30 codec trunc bits 8 &&
	incctl "$NS_A" set wire-dscp 20 tx off flow-max 7 &&
	incctl "$NS_A" stats reset
after=$(config_of "$NS_B")
astats=$(jnum "$(kstats "$NS_B")" rx_frames)
if [ "$before" = "$after" ] && [ "$bstats" = "$astats" ]; then
	ok "isolation: changes and a counter reset in A leave B alone"
else
	fail "isolation: changes in A leave B alone" "before: $before" "after:  $after" \
		"rx_frames $bstats -> $astats"
fi
if "$INCCTL" -n "$NS_A" -j show | grep -q '"wire_dscp":20'; then
	ok "isolation: A has its new configuration"
else
	fail "isolation: A has its new configuration" "$("$INCCTL" -n "$NS_A" -j show)"
fi
incctl "$NS_A" rule del tos 0x30
incctl "$NS_A" set wire-dscp 11 tx on flow-max 65536
clean_transfer "isolation"

ktap_finish
