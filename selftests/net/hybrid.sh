#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hybrid.sh - a float cut by a segment boundary must never reach the
# receiver as a mix of two copies (the original's bytes from one and the
# quantised value's from another). Every received float must be the
# prediction decode(encode(x)) or the original x; float_mix counts the
# others ("hybrids") and the test wants 0.
#
#  collapse: a TCP_NODELAY sender writes chunks of 4k+2 bytes (every other
#     write ends inside a float). Per round, with nft: B's ACKs are dropped,
#     chunk n (ending mid-float) reaches B, chunk n+1 (and its loss probe)
#     is dropped, the RTO retransmits n with n+1 collapsed into one segment
#     that carries the cut float whole (tcp_retrans_try_collapse), and B
#     takes the float's last bytes from it.
#  mss: MTU 1450 (1398-byte segments, every other boundary cuts a float);
#     a flight with every other segment lost and the ACKs lost, then the
#     route's MTU locked to 1300: without SACK the recovery resends
#     everything in 1248-byte segments, with other boundaries.
#
# The values are small (|x| mostly below the bound 2^-10, quantised to 0)
# so that a mix of the two copies is never equal to either.

. "$(dirname "$0")/lib.sh"

ktap_header "no float mixes bytes of two copies (cut floats)"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
command -v nft >/dev/null || { skip "hybrid" "no nft"; ktap_finish; exit 0; }

# sender: says "connected", then takes commands on stdin, one reply line
# each on stdout
#   w N   write the next N bytes (TCP_NODELAY)       -> ok
#   a T   wait up to T s until all is acknowledged   -> ok | timeout
#   rest  write the rest, shut down, wait for EOF   -> ok
cat >"$TMP/send.py" <<'EOF'
import fcntl, socket, struct, sys, time

SIOCOUTQ = 0x5411


def outq(s: socket.socket) -> int:
    buf = fcntl.ioctl(s.fileno(), SIOCOUTQ, b"\0" * 4)
    return struct.unpack("i", buf)[0]


def main() -> None:
    addr, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    data = open(path, "rb").read()
    if ":" in addr:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_TCLASS, 0x28)
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, 0x28)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.connect((addr, port))
    print("connected", flush=True)
    off = 0
    for line in sys.stdin:
        cmd = line.split()
        reply = "ok"
        if cmd[0] == "w":
            n = int(cmd[1])
            s.sendall(data[off:off + n])
            off += n
        elif cmd[0] == "a":
            end = time.monotonic() + float(cmd[1])
            while outq(s) and time.monotonic() < end:
                time.sleep(0.02)
            reply = "timeout" if outq(s) else "ok"
        elif cmd[0] == "rest":
            s.sendall(data[off:])
            s.shutdown(socket.SHUT_WR)
            while s.recv(65536):
                pass
        print(reply, flush=True)


main()
EOF

# nft tables of family inet, for both address families. The IP length
# matched: IPv4's total length or IPv6's payload length (40 bytes less:
# the same value mod 4, and on the same side of every bound used here).
IPLEN=$(pick_family ip ip6)
HOSTLEN=$(pick_family 32 128)

# nft: drop B's segments to A (ACKs) in A's input, A's data in B's input
nft_drop() { # ns table chain-hook match
	nsx "$1" nft -f - <<EOF
table inet $2 {
	chain c {
		type filter hook $3 priority 0;
		$4 counter drop
	}
}
EOF
}
nft_lift() { # ns table
	nsx "$1" nft delete table inet "$2"
}
nft_drops() { # ns table: packets dropped
	nsx "$1" nft list table inet "$2" | sed -n 's/.*counter packets \([0-9]*\).*/\1/p'
}

# what a flow that is not acknowledged is waiting for: the sender's TCP
# state (rto, backoff, unacked, retrans) and the datapath counters of
# both sides that are not 0
stuck_info() {
	local ns
	info "sender: $(nsx "$NS_A" ss -tinH "dport = :$PORT" | tr -s ' \n' ' ')"
	for ns in "$NS_A" "$NS_B"; do
		info "$ns counters: $(kstats "$ns" | tr ',{}' '\n\n\n' |
			grep -E '": *[1-9]' | tr -d ' \n')"
	done
}

# pair_start NAME LIFE: B receives into $TMP/NAME.out, A runs send.py on
# $TMP/NAME.in (commands on fd 3, replies on fd 4), both killed after LIFE
# seconds; returns once connected. pair_end NAME: the rest, both exit.
pair_start() {
	next_port
	timeout "$2" nsenter --net="/run/netns/$NS_B" \
		"$XFER" recv -b "$ADDR_B" -p "$PORT" "$TMP/$1.out" &
	rpid=$!
	wait_listen "$NS_B" "$PORT" || fail "$1: receiver listens"
	timeout "$2" nsenter --net="/run/netns/$NS_A" "$PYTHON" "$TMP/send.py" \
		"$ADDR_B" "$PORT" "$TMP/$1.in" <"$TMP/cmd" >"$TMP/rep" 2>"$TMP/send.err" &
	spid=$!
	exec 3>"$TMP/cmd" 4<"$TMP/rep"
	read -r _ <&4	# connected: the handshake is over
}
pair_end() {
	say rest >/dev/null
	exec 3>&- 4<&-
	wait $spid || fail "$1: sender" "$(cat "$TMP/send.err")"
	wait $rpid || fail "$1: receiver"
}

retrans_segs() { # TCP segments A has retransmitted so far
	nsx "$NS_A" nstat -az TcpRetransSegs | awk '/TcpRetransSegs/ { print $2 }'
}

say() { # command: (sender $spid on fds 3, 4) send it to the sender, print its reply
	local r
	kill -0 $spid 2>/dev/null && echo "$*" >&3 && read -r r <&4 && echo "$r"
}

# result NAME SKIP: compare $TMP/NAME.out with the prediction
result() {
	local name=$1 mix orig hyb n
	n=$(($(stat -c %s "$TMP/$name.in") / 4))
	if ! mix=$(float_mix "$TMP/$name.want" "$TMP/$name.in" "$TMP/$name.out" "$2"); then
		fail "$name: received $(stat -c %s "$TMP/$name.out" 2>/dev/null) bytes (want $(stat -c %s "$TMP/$name.in"))"
		return
	fi
	read -r orig hyb <<<"$mix"
	orig=$((orig - hyb))
	if [ "$hyb" = 0 ]; then
		ok "$name: $n floats, $orig original, 0 hybrid"
	else
		fail "$name: $n floats, $orig original, $hyb hybrid (want 0)"
	fi
}

# --- MSS: MTU 1450 (1398-byte segments), re-segmented at 1248 -------------
# A flight of 8 segments, every other one lost, ACKs lost: B holds floats
# cut by the old boundaries up to their middle. The MTU then drops to
# 1300, and without SACK the recovery resends everything from snd_una in
# 1248-byte segments, which carry those floats whole.
ip -n "$NS_A" link set va mtu 1450
ip -n "$NS_B" link set vb mtu 1450
nsx "$NS_A" sysctl -qw net.ipv4.tcp_sack=0
gen_floats "$TMP/mss.in" 5000 73 1e-4
predict "$TMP/mss.want" "$TMP/mss.in" 0 inceptionn --bound 2^-10
incctl "$NS_A" stats reset
mkfifo "$TMP/cmd" "$TMP/rep"
pair_start mss $((120 * SLOW))
nft_drop "$NS_A" hyb_ack input "tcp sport $PORT"
nft_drop "$NS_B" hyb_alt input "tcp dport $PORT numgen inc mod 2 1"
say w $((8 * 1398)) >/dev/null
nap 0.5
info "mss: $(nft_drops "$NS_B" hyb_alt) of the first flight dropped"
nft_lift "$NS_B" hyb_alt
ip -n "$NS_A" route replace "$ADDR_B/$HOSTLEN" dev va mtu lock 1300
nap 1.5
nft_lift "$NS_A" hyb_ack
[ "$(say a $((30 * SLOW)))" = ok ] ||
	info "mss: not acknowledged in $((30 * SLOW)) s"
pair_end mss
info "mss: $(nsx "$NS_A" nstat -az TcpRetransSegs TcpExtTCPTimeouts | awk '/Tcp/ { printf "%s %s ", $1, $2 }')"
s=$(kstats "$NS_A")
info "sender: tx_segs $(jnum "$s" tx_segs) tx_framed $(jnum "$s" tx_framed)" \
	"tx_aligned $(jnum "$s" tx_aligned) tx_cut_raw $(jnum "$s" tx_cut_raw)" \
	"tx_drop_cut $(jnum "$s" tx_drop_cut) tx_errors $(jnum "$s" tx_errors)"
result mss 0

# back to MTU 1500 and SACK for the collapse rounds
ip -n "$NS_A" route del "$ADDR_B/$HOSTLEN" dev va
ip -n "$NS_A" link set va mtu 1500
ip -n "$NS_B" link set vb mtu 1500
nsx "$NS_A" sysctl -qw net.ipv4.tcp_sack=1

# --- tail: an RTO resending a write that ends inside a float -------------
# One write of 502 bytes (125 floats and 2 bytes of the next) with B's
# ACKs dropped: the first transmission holds the cut float back (bytes
# 0..500, the next write completes it), and TCP resends the whole write.
# That retransmission must carry the 2 bytes too (the float goes raw):
# held back again, B acknowledges 500 of TCP's 502, and TCP in loss
# recovery resends the 2 bytes only on its next, backed-off RTO (CI's
# stalls of the collapse rounds below). B counts what arrives (decoded;
# headers are whole 32-bit words): 500-byte segments (IP length 0 mod 4)
# and 502-byte ones (2 mod 4).
gen_floats "$TMP/tail.in" 126 79 1e-4
head -c 502 "$TMP/tail.in" >"$TMP/tail.502" && mv "$TMP/tail.502" "$TMP/tail.in"
predict "$TMP/tail.want" "$TMP/tail.in" 0 inceptionn --bound 2^-10
incctl "$NS_A" stats reset
pair_start tail $((200 * SLOW))
nsx "$NS_B" nft -f - <<EOF
table inet hyb_tail {
	chain c {
		type filter hook input priority -10;
		tcp dport $PORT $IPLEN length > 100 $IPLEN length & 3 == 0 counter
		tcp dport $PORT $IPLEN length > 100 $IPLEN length & 3 == 2 counter
	}
}
EOF
retrans0=$(retrans_segs)
nft_drop "$NS_A" hyb_ack input "tcp sport $PORT"
say w 502 >/dev/null
# two retransmissions (TLP or RTO) of the write, 30 s at most
end=$((SECONDS + 30))
while [ $SECONDS -lt $end ]; do
	r=$(retrans_segs)
	[ $((r - retrans0)) -ge 2 ] && break
	nap 0.25
done
nft_lift "$NS_A" hyb_ack
ack=$(say a $((60 * SLOW)))
read -r short whole < <(nsx "$NS_B" nft list table inet hyb_tail |
	sed -n 's/.*counter packets \([0-9]*\).*/\1/p' | tr '\n' ' ')
info "tail: $((r - retrans0)) retransmissions before the ACKs came back;" \
	"B got $short segments of 500 bytes, $whole of 502; $ack"
if [ "${short:-0}" = 1 ] && [ "${whole:-0}" -ge 1 ] && [ "$ack" = ok ]; then
	ok "tail: only the first transmission held the cut float back"
else
	fail "tail: a retransmission held the cut float back" \
		"($short short, $whole whole; acknowledged: $ack)"
	stuck_info
fi
nsx "$NS_B" nft delete table inet hyb_tail
pair_end tail
result tail 0

# --- collapse: RTO retransmission merging two small writes -----------------
ROUNDS=3
CHUNK=502	# 4 * 125 + 2
# Each round waits at most 10 s for the retransmission and 60 s for the
# acknowledgement (x SLOW: the debug kernel's RTO backs off further while
# each nft command takes seconds); the sender and receiver outlive the sum
# (a process killed by timeout fails the test).
ACK_WAIT=$((60 * SLOW))
LIFE=$(((ROUNDS * (20 + ACK_WAIT)) + 60 * SLOW))
gen_floats "$TMP/collapse.in" 20000 71 1e-4
predict "$TMP/collapse.want" "$TMP/collapse.in" 0 inceptionn --bound 2^-10
incctl "$NS_A" stats reset
pair_start collapse $LIFE
retrans0=$(retrans_segs)
# segments of both chunks (1004 bytes of payload, decoded) reaching B
nsx "$NS_B" nft -f - <<EOF
table inet hyb_seen {
	chain c {
		type filter hook input priority -10;
		tcp dport $PORT $IPLEN length > 1000 counter
	}
}
EOF
seen=0
for r in $(seq 1 $ROUNDS); do
	nft_drop "$NS_A" hyb_ack input "tcp sport $PORT"
	say w $CHUNK >/dev/null	# chunk n: its last float cut, reaches B
	nap 0.2
	# B drops segments of one chunk (after decoding: 502 bytes of payload)
	nft_drop "$NS_B" hyb_data input "tcp dport $PORT $IPLEN length < 1000"
	say w $CHUNK >/dev/null	# chunk n + 1 (and its loss probe): dropped
	# the RTO retransmits n with n + 1 collapsed into it: B takes n + 1
	# from it; its ACK does not reach A. Stop at the first RTO
	# retransmission of one chunk (n + 1, its loss probe, then that: no
	# collapse this time), before the RTO backs off far: a bound in time,
	# not in polls (each poll runs nft, slow on a loaded host, while the
	# RTO doubles with every retransmission that B does not acknowledge).
	end=$((SECONDS + 10))
	while [ $SECONDS -lt $end ]; do
		[ "$(nft_drops "$NS_B" hyb_seen)" -gt "$seen" ] && break
		[ "$(nft_drops "$NS_B" hyb_data)" -ge 3 ] && break
		nap 0.25
	done
	[ "$(nft_drops "$NS_B" hyb_seen)" -gt "$seen" ] ||
		info "round $r: no segment of both chunks reached B"
	seen=$(nft_drops "$NS_B" hyb_seen)
	info "round $r: $(nft_drops "$NS_B" hyb_data) segments of one chunk dropped"
	nft_lift "$NS_B" hyb_data
	nft_lift "$NS_A" hyb_ack
	[ "$(say a $ACK_WAIT)" = ok ] || {
		info "round $r: not acknowledged in $ACK_WAIT s"
		stuck_info
	}
done
retrans=$(($(retrans_segs) - retrans0))
pair_end collapse
info "collapse: $retrans retransmissions, $seen of both chunks reached B;" \
	"$(nsx "$NS_A" nstat -az TcpExtTCPLossProbes TcpExtTCPTimeouts | awk '/Tcp/ { printf "%s %s ", $1, $2 }')"
s=$(kstats "$NS_A")
info "sender: tx_segs $(jnum "$s" tx_segs) tx_framed $(jnum "$s" tx_framed)" \
	"tx_aligned $(jnum "$s" tx_aligned) tx_cut_raw $(jnum "$s" tx_cut_raw)" \
	"tx_drop_cut $(jnum "$s" tx_drop_cut) tx_errors $(jnum "$s" tx_errors)"
incctl "$NS_A" stats reset
if [ "$seen" -ge 1 ]; then
	result collapse 0
else
	# Debian's 6.1 under TCG did not collapse these retransmissions
	skip "collapse: $(stat -c %s "$TMP/collapse.out") bytes" \
		"no retransmission of both chunks reached B"
fi

ktap_finish
