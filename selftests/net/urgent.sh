#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# urgent.sh - urgent data (send(MSG_OOB)) on a marked lossy flow (ebq,
# bound 2^-10): the sender writes 131071 bytes of floats, then "U" with
# MSG_OOB, then the rest, so that the urgent byte is the last byte of a
# float and the segment that carries it starts inside that float (align.c
# moves it back 3 bytes: the urgent pointer must move with it). The float
# that holds the urgent byte travels raw (a receiver without SO_OOBINLINE
# takes the byte out of the stream); every other float is quantised.
#  - receiver with SO_OOBINLINE: the stream is the prediction, "U" in it;
#  - receiver without: the prediction less the urgent byte, and
#    recv(MSG_OOB) returns "U".

. "$(dirname "$0")/lib.sh"

ktap_header "urgent data on a lossy flow"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
incctl "$NS_A" rule add tos 0x28 codec ebq bound 2^-10

URG=131071	# the urgent byte's offset: the last byte of float 32767

# the sender waits until all but the last 1-3 bytes of the first write
# are acknowledged (its segments end on the float grid, the cut float
# waits for its last byte), so that the urgent byte leaves in a segment
# of its own that starts inside that float
{ py_tcp; cat <<'EOF'; } >"$TMP/send.py"
import fcntl, socket, struct, sys, time

SIOCOUTQ = 0x5411
addr, port, path, urg = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
data = open(path, "rb").read()
s = tcp(addr, 0x28)
s.connect((addr, port))
s.sendall(data[:urg])
end = time.monotonic() + 30
while time.monotonic() < end:
    if struct.unpack("i", fcntl.ioctl(s.fileno(), SIOCOUTQ, b"\0" * 4))[0] <= urg % 4:
        break
    time.sleep(0.001)
s.send(data[urg:urg + 1], socket.MSG_OOB)
s.sendall(data[urg + 1:])
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
EOF

# receiver: the stream to OUT, then the urgent byte (hex) or "none" to
# OUT.oob. Without SO_OOBINLINE the urgent byte must be read when the
# stream is at its mark (reading past the mark forgets it), so the
# receiver waits in select() and looks at the mark before each recv().
{ py_tcp; cat <<'EOF'; } >"$TMP/recv.py"
import fcntl, select, socket, struct, sys, time

SIOCATMARK = 0x8905
addr, port, out, inline = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
ls = tcp(addr)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_OOBINLINE, int(inline))
ls.bind((addr, port))
ls.listen(1)
s, _ = ls.accept()
oob = "none"
with open(out, "wb") as f:
    while True:
        # never recv() at the mark before the urgent byte is read: a
        # blocked recv() skips it when it arrives
        select.select([s], [], [s], 5)
        at = struct.unpack("i", fcntl.ioctl(s.fileno(), SIOCATMARK, b"\0" * 4))[0]
        if at and not inline and oob == "none":
            try:
                oob = s.recv(1, socket.MSG_OOB).hex()
            except BlockingIOError:
                time.sleep(0.01)  # the urgent byte is not here yet
            continue
        b = s.recv(65536)
        if not b:
            break
        f.write(b)
with open(out + ".oob", "w") as f:
    f.write(oob + "\n")
EOF

# the stream: floats with the urgent byte "U" at URG; the prediction:
# quantised, except the urgent byte's float
gen_floats "$TMP/f.bin" 65536 41 1e-2
{
	head -c $URG "$TMP/f.bin"
	printf U
	tail -c +$((URG + 2)) "$TMP/f.bin"
} >"$TMP/in"
predict "$TMP/q" "$TMP/in" 0 ebq --bound 2^-10
fl=$((URG / 4 * 4))
{
	head -c $fl "$TMP/q"
	tail -c +$((fl + 1)) "$TMP/in" | head -c 4
	tail -c +$((fl + 5)) "$TMP/q"
} >"$TMP/want"
{
	head -c $URG "$TMP/want"
	tail -c +$((URG + 2)) "$TMP/want"
} >"$TMP/want.noinline"

for inline in 1 0; do
	name=oobinline-$inline
	want=$TMP/want
	[ $inline = 1 ] || want=$TMP/want.noinline
	incctl "$NS_A" stats reset
	next_port
	timeout $((300 * SLOW)) nsenter --net="/run/netns/$NS_B" "$PYTHON" "$TMP/recv.py" \
		"$ADDR_B" "$PORT" "$TMP/$name.out" $inline &
	rpid=$!
	wait_listen "$NS_B" "$PORT" || fail "$name: receiver listens"
	timeout $((300 * SLOW)) nsenter --net="/run/netns/$NS_A" "$PYTHON" "$TMP/send.py" \
		"$ADDR_B" "$PORT" "$TMP/in" $URG 2>"$TMP/send.err"
	src=$?
	wait $rpid
	rrc=$?
	s=$(kstats "$NS_A")
	info "$name: tx_framed $(jnum "$s" tx_framed) tx_aligned $(jnum "$s" tx_aligned)" \
		"tx_cut_raw $(jnum "$s" tx_cut_raw) tx_drop_cut $(jnum "$s" tx_drop_cut)"
	if [ $src = 0 ] && [ $rrc = 0 ] && st=$(same "$want" "$TMP/$name.out"); then
		ok "$name: bytes as predicted"
	else
		fail "$name: bytes as predicted" "sender $src receiver $rrc" "${st:-}"
	fi
	if [ $inline = 0 ]; then
		oob=$(cat "$TMP/$name.out.oob" 2>/dev/null)
		if [ "$oob" = 55 ]; then
			ok "$name: the urgent byte is U"
		else
			fail "$name: the urgent byte is U" "got: ${oob:-nothing}"
		fi
	fi
done

ktap_finish
