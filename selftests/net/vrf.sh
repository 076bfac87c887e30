#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vrf.sh - flows of sockets bound to a device must live as long as their
# sockets: the flow GC looks sockets up with the device they are bound
# to. Short timeouts (idle 1 s, close 1 s) on both ends, the receiver
# half-closes at once and the sender pauses 3 s mid-stream; the bytes
# must be exactly the prediction, every frame decoded:
#  - both sockets bound with SO_BINDTODEVICE to their veth;
#  - the receiver's veth enslaved to a VRF, the listener bound to the VRF
#    (and the sender bound to its veth);
#  - then the sender's veth enslaved to a VRF too, with a qdisc on that
#    VRF device that drops 2% (netem): each segment runs LOCAL_OUT twice,
#    for the VRF device in tcp_transmit_skb() (socket locked) and for the
#    veth from vrf_xmit() after the qdisc (socket not locked). The align
#    hook must act on the first pass only: a function trace of
#    incnn_flow_lookup() (tracefs) must show no call from the align hook
#    below vrf_xmit().

. "$(dirname "$0")/lib.sh"

ktap_header "SO_BINDTODEVICE and VRF sockets keep their flows"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
# enslaving a device to a VRF takes it down and up: keep its IPv6
# addresses (IPv4 ones are kept anyway)
for ns in "$NS_A" "$NS_B"; do
	nsx "$ns" sysctl -qw net.ipv6.conf.all.keep_addr_on_down=1
done
gen_floats "$TMP/f.bin" 100000 121 1e-1
predict "$TMP/want" "$TMP/f.bin" 0 inceptionn --bound 2^-10

py_pause_pair

# bound_xfer NAME RECV_DEV SEND_DEV
bound_xfer() {
	local name=$1 src rrc sa sb st
	incctl "$NS_A" stats reset
	incctl "$NS_B" stats reset
	next_port
	py_pair $((180 * SLOW)) "$TMP/pause-recv.py" "$ADDR_B" "$PORT" "$TMP/$name.out" "$2" -- \
		"$TMP/pause-send.py" "$ADDR_B" "$PORT" "$TMP/f.bin" "$3"
	src=$PAIR_SEND
	rrc=$PAIR_RECV
	if [ $src = 0 ] && [ $rrc = 0 ] && st=$(same "$TMP/want" "$TMP/$name.out"); then
		ok "$name: idle 3 s > timeouts mid-stream, bytes as predicted"
	else
		fail "$name: idle 3 s > timeouts mid-stream, bytes as predicted" \
			"sender $src receiver $rrc" "${st:-}"
	fi
	sa=$(kstats "$NS_A")
	sb=$(kstats "$NS_B")
	# every frame is accounted for (the loss is before the framing)
	if frame_balance "$sa" "$sb" && [ "$FB_TX" -ge 1 ] &&
		[ "$(jnum "$sa" tx_raw_untracked)" = 0 ]; then
		ok "$name: every segment framed and accounted for ($FB_TEXT)"
	else
		fail "$name: every segment framed and accounted for" "$FB_TEXT" \
			"tx_raw_untracked $(jnum "$sa" tx_raw_untracked)"
		info "sender: $sa"
		info "receiver: $sb"
		# veth counts a drop into a full backlog as the sender's TX dropped
		info "sender va: $(ip -n "$NS_A" -s link show va | tr -s ' \n' ' ')"
		info "receiver vb: $(ip -n "$NS_B" -s link show vb | tr -s ' \n' ' ')"
		info "softnet drops per CPU (all namespaces): $(nsx "$NS_B" cat /proc/net/softnet_stat | awk '{ print $2 }' | tr '\n' ' ')"
	fi
}

for ns in "$NS_A" "$NS_B"; do
	incctl "$ns" set idle-timeout 1 close-timeout 1
done

bound_xfer bindtodevice vb va

if ip -n "$NS_B" link add vrf-b type vrf table 10 &&
	ip -n "$NS_B" link set vrf-b up &&
	ip -n "$NS_B" link set vb master vrf-b &&
	wait_ping "$NS_A" "$ADDR_B"; then
	bound_xfer vrf vrf-b va
else
	fail "vrf: setup (CONFIG_NET_VRF?)"
fi

# trace_start / trace_stop: calls of incnn_flow_lookup() made by the align
# hook below vrf_xmit() (the unlocked second pass); "skip" without tracefs
TRACE=/sys/kernel/tracing
trace_start() {
	[ -e $TRACE/trace ] || mount -t tracefs nodev $TRACE 2>/dev/null
	[ -w $TRACE/set_ftrace_filter ] &&
		echo incnn_flow_lookup >$TRACE/set_ftrace_filter 2>/dev/null &&
		echo 1 >$TRACE/options/func_stack_trace &&
		echo function >$TRACE/current_tracer && echo >$TRACE/trace
}
trace_stop() {
	local n
	if ! [ -w $TRACE/set_ftrace_filter ] ||
		[ "$(cat $TRACE/current_tracer)" != function ]; then
		echo skip
		return
	fi
	# read before switching the tracer: that empties the buffer
	echo 0 >$TRACE/tracing_on
	# frames run from the innermost out: the align hook, then vrf_xmit
	# with no softirq between them (a softirq run on that stack, e.g.
	# from vrf_xmit's local_bh_enable(), processes an ACK under
	# bh_lock_sock() and may send from there: a locked first pass)
	n=$(awk '/<stack trace>/ { if (a && v) n++; a = v = q = 0; next }
		/=> (incnn_tx_align_hook|align_hook)( |$)/ { a = 1 }
		a && !v && /=> (__do_softirq|net_rx_action|do_softirq)/ { q = 1 }
		a && !q && /=> vrf_xmit/ { v = 1 }
		END { if (a && v) n++; print n + 0 }' $TRACE/trace)
	info "trace: $(grep -c "<stack trace>" $TRACE/trace) calls of incnn_flow_lookup()" >&2
	echo nop >$TRACE/current_tracer
	echo 1 >$TRACE/tracing_on
	echo 0 >$TRACE/options/func_stack_trace
	echo >$TRACE/set_ftrace_filter
	echo "$n"
}

if ip -n "$NS_A" link add vrf-a type vrf table 20 &&
	ip -n "$NS_A" link set vrf-a up &&
	ip -n "$NS_A" link set va master vrf-a &&
	nsx "$NS_A" tc qdisc add dev vrf-a root netem loss 2%; then
	nap 1
	trace_start
	bound_xfer vrf-qdisc vrf-b vrf-a
	n=$(trace_stop)
	if [ "$n" = skip ]; then
		skip "vrf-qdisc: no align pass below vrf_xmit()" "no tracefs"
	elif [ "$n" = 0 ]; then
		ok "vrf-qdisc: no align pass below vrf_xmit()"
	else
		fail "vrf-qdisc: no align pass below vrf_xmit()" \
			"$n calls of incnn_flow_lookup() from the align hook below vrf_xmit()"
	fi
else
	fail "vrf-qdisc: setup (CONFIG_NET_VRF? netem?)"
fi

# once the sockets are gone, the flows expire
nap 3
left_a=$(jnum "$("$INCCTL" -n "$NS_A" -j show)" flow_count)
left_b=$(jnum "$("$INCCTL" -n "$NS_B" -j show)" flow_count)
if [ "$left_a" = 0 ] && [ "$left_b" = 0 ]; then
	ok "flows expire once their sockets are gone"
else
	fail "flows expire once their sockets are gone" "flow_count $left_a / $left_b"
fi

ktap_finish
