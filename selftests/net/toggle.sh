#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# toggle.sh - a lossy flow that stops compressing mid-stream never delivers
# a hybrid float and never stalls. Three toggles, each with a forced
# retransmission across it: `incctl rule del`, `incctl set tx off`, and the
# application changing IP_TOS. MTU 1450 (MSS 1398, a segment boundary
# inside a float), per toggle:
#   1. the sender writes 2100 bytes: two segments, [0,1396) and
#      [1396,2100) once aligned; every copy of the first is dropped at B,
#      the second arrives and is held out of order;
#   2. the toggle; B stops dropping: TCP's RTO resends from snd_una;
#   3. the toggle back on (rule added again, tx on, IP_TOS back), the
#      sender writes the rest and closes.
# Every byte below the highest one sent at the toggle (2100) keeps its
# value (quantised), everything after is raw: the received bytes must be
# exactly that prediction. Before the fix the RTO resent [0,1398) raw
# and float 1396 arrived with 2 raw and 2 quantised bytes.
# "The first" is every packet that starts at the first data byte (the
# TCP sequence number of the first data packet B sees), whatever its
# length: with superframes (the default) the 2100 bytes leave as
# one shorter wire packet restoring [0,2100), which is dropped; TCP's
# loss probe resends its last segment, held out of order, and the same
# RTO from snd_una crosses the toggle. With the old behaviour (toggled
# retransmissions neither aligned nor quantised) every round delivers
# 350 floats not as predicted, 1 hybrid, per-packet and with superframes.

. "$(dirname "$0")/lib.sh"

ktap_header "mid-stream toggles: no hybrid float, no stall"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
command -v nft >/dev/null || { skip "toggle" "no nft"; ktap_finish; exit 0; }

FIRST=2100	# two segments of MSS 1398, on the float grid
# (IPv6: MTU 1470 for the same MSS; nft matches ip6's payload length,
# 40 bytes less than ip's total length: on the same side of 100 here)
ip -n "$NS_A" link set va mtu "$(pick_family 1450 1470)"
ip -n "$NS_B" link set vb mtu "$(pick_family 1450 1470)"
NFT=$(pick_family ip ip6)

# sender: says "connected", then takes commands on stdin, one reply line
# each on stdout
#   w N    write the next N bytes                    -> ok
#   tos T  set IP_TOS to T                           -> ok
#   a T    wait up to T s until all is acknowledged  -> ok | timeout
#   rest   write the rest, shut down, wait for EOF   -> ok
{ py_tcp; cat <<'EOF'; } >"$TMP/send.py"
import fcntl, socket, struct, sys, time

SIOCOUTQ = 0x5411


def outq(s: socket.socket) -> int:
    buf = fcntl.ioctl(s.fileno(), SIOCOUTQ, b"\0" * 4)
    return struct.unpack("i", buf)[0]


def main() -> None:
    addr, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    data = open(path, "rb").read()
    s = tcp(addr, 0x28)
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
        elif cmd[0] == "tos":
            set_tos(s, int(cmd[1], 0))
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

say() { # command: send it to the sender ($spid, fds 3 and 4), print its reply
	local r
	kill -0 $spid 2>/dev/null && echo "$*" >&3 && read -r r <&4 && echo "$r"
}

nft_b() { # table priority rule: a chain in B's input (after incnn decoded)
	nsx "$NS_B" nft -f - <<EOF
table $NFT $1 {
	chain c {
		type filter hook input priority $2;
		tcp dport $PORT $NFT length > 100 $3
	}
}
EOF
}

# drop_first TABLE: drop at B every data packet that starts where the
# first one B sees starts (its TCP sequence number, kept in a set of one
# element: adding to it once full ends the rule), whatever its length
drop_first() {
	nsx "$NS_B" nft -f - <<EOF
table $NFT $1 {
	set first {
		typeof tcp sequence
		size 1
		flags dynamic
	}
	chain c {
		type filter hook input priority 0;
		tcp dport $PORT $NFT length > 100 add @first { tcp sequence }
		tcp dport $PORT $NFT length > 100 tcp sequence @first counter drop
	}
}
EOF
}

nft_count() { # table: packets its counter saw
	nsx "$NS_B" nft list table "$NFT" "$1" | sed -n 's/.*counter packets \([0-9]*\).*/\1/p'
}

toggle() { # name off|on
	case $1-$2 in
	ruledel-off) incctl "$NS_A" rule del tos 0x28 ;;
	ruledel-on) incctl "$NS_A" rule add tos 0x28 codec inceptionn bound 2^-10 ;;
	txoff-off) incctl "$NS_A" set tx off ;;
	txoff-on) incctl "$NS_A" set tx on ;;
	tos-off) say tos 0 >/dev/null ;;
	tos-on) say tos 0x28 >/dev/null ;;
	esac
}

gen_floats "$TMP/in" 5000 97 1e-4
# quantised below FIRST, raw from there on
predict "$TMP/q" "$TMP/in" 0 inceptionn --bound 2^-10
{
	head -c $FIRST "$TMP/q"
	tail -c +$((FIRST + 1)) "$TMP/in"
} >"$TMP/want"
mkfifo "$TMP/cmd" "$TMP/rep"

# INCNN_TOGGLES: the toggles to run (all three by default)
for t in ${INCNN_TOGGLES:-ruledel txoff tos}; do
	incctl "$NS_A" stats reset
	next_port
	timeout $((400 * SLOW)) nsenter --net="/run/netns/$NS_B" \
		"$XFER" recv -b "$ADDR_B" -p "$PORT" "$TMP/$t.out" &
	rpid=$!
	wait_listen "$NS_B" "$PORT" || fail "$t: receiver listens"
	timeout $((400 * SLOW)) nsenter --net="/run/netns/$NS_A" "$PYTHON" "$TMP/send.py" \
		"$ADDR_B" "$PORT" "$TMP/in" <"$TMP/cmd" >"$TMP/rep" 2>"$TMP/send.err" &
	spid=$!
	exec 3>"$TMP/cmd" 4<"$TMP/rep"
	read -r _ <&4
	# 1: every copy of [0,1396) (with superframes: of [0,2100)) is lost,
	# what follows it held out of order
	nft_b tg_seen -10 "counter"
	drop_first tg_first
	say w $FIRST >/dev/null
	for _ in $(seq 1 100); do
		[ "$(nft_count tg_seen)" -ge 2 ] && break
		nap 0.1
	done
	info "$t: $(nft_count tg_seen) data segments reached B, $(nft_count tg_first) dropped"
	# 2: the toggle, then the retransmission from snd_una
	toggle "$t" off
	nsx "$NS_B" nft delete table "$NFT" tg_first
	if [ "$(say a 120)" != ok ]; then
		info "$t: not acknowledged in 120 s"
		nsx "$NS_A" ss -tinoe "dport = :$PORT" | sed 's/^/# A: /'
		nsx "$NS_A" nstat -az | awk '$2 != 0 && /Tcp/ { print "# A: " $1, $2 }'
		incctl "$NS_A" stats | awk '$2 != 0 { print "# A stats: " $0 }'
		nsx "$NS_B" nft list ruleset | sed 's/^/# B nft: /'
		nsx "$NS_B" ss -tinoe "sport = :$PORT" | sed 's/^/# B: /'
	fi
	# 3: back on, the rest
	toggle "$t" on
	say rest >/dev/null
	exec 3>&- 4<&-
	wait $spid || fail "$t: sender" "$(cat "$TMP/send.err")"
	wait $rpid || fail "$t: receiver"
	nsx "$NS_B" nft delete table "$NFT" tg_seen
	s=$(kstats "$NS_A")
	info "$t: tx_framed $(jnum "$s" tx_framed) tx_aligned $(jnum "$s" tx_aligned)" \
		"tx_raw_mark_toggled $(jnum "$s" tx_raw_mark_toggled)" \
		"tx_drop_cut $(jnum "$s" tx_drop_cut)" \
		"tx_superframes $(jnum "$s" tx_superframes)" \
		"$(nsx "$NS_A" nstat -az TcpRetransSegs | awk '/Tcp/ { printf "%s %s", $1, $2 }')"
	if st=$(same "$TMP/want" "$TMP/$t.out"); then
		ok "$t: bytes as predicted (quantised below $FIRST, raw after)"
	else
		mix=$(float_mix "$TMP/want" "$TMP/in" "$TMP/$t.out" 0) || mix="- -"
		read -r orig hyb <<<"$mix"
		fail "$t: bytes as predicted (quantised below $FIRST, raw after)" \
			"$st" "floats not as predicted: $orig, hybrid: $hyb"
	fi
	# the next round starts with the rule and tx on again
	incctl "$NS_A" rule add tos 0x28 codec inceptionn bound 2^-10
	incctl "$NS_A" set tx on
done

ktap_finish
