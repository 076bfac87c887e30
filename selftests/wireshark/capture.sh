#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The Wireshark dissector (contrib/wireshark/incnn.lua) on a capture of
# the real module: the directory selftests/net/wireshark.sh writes in the
# VM's out directory (cap.pcap, info). One tshark run must show
#  - the capability option on the SYN and the SYN-ACK (frame version 1
#    and codecs 1-4, inceptionn ebq trunc lz4, offered);
#  - every framed segment's header: version 1 (or 2, a superframe, when
#    superframes are on, the default), inceptionn:2^-10, the
#    original DSCP 10, orig_len larger than what the wire carried;
#  - each frame's place in the stream, from its tcp.seq, with framed and
#    raw segments covering every byte of the file sent, exactly;
#  - at least one frame and no more than the sender's tx_framed.
# KTAP output.
#
#   selftests/wireshark/capture.sh [DIR]   (default build/vm/net-out/wireshark)
set -u
. "$(dirname "$0")/../ktap_lib.sh"

dir=${1:-$build/vm/net-out/wireshark}
lua=$top/contrib/wireshark/incnn.lua
echo "KTAP version 1"
echo "1..5"
if [ ! -r "$dir/cap.pcap" ] || [ ! -r "$dir/info" ]; then
	echo "not ok 1 no capture in $dir (selftests/net/wireshark.sh writes it in the VM)"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	exit 1
fi
port=$(sed -n 's/^port //p' "$dir/info")
size=$(sed -n 's/^size //p' "$dir/info")
tx_framed=$(sed -n 's/^tx_framed //p' "$dir/info")

fields() {
	HOME=$tmp tshark -n -X "lua_script:$lua" -r "$dir/cap.pcap" \
		-Y "tcp.port == $port" -T fields -E occurrence=f \
		-e frame.number -e tcp.flags.syn -e tcp.seq -e tcp.len \
		-e incnn.cap.versions -e incnn.cap.codecs -e incnn.frame_option \
		-e incnn.version -e incnn.setting -e incnn.dscp -e incnn.orig_len \
		-e incnn.stream.seq -e incnn.stream.nxtseq >"$tmp/fields" &&
		[ -s "$tmp/fields" ]
}
check "tshark with the dissector reads the capture (port $port)" fields

# the capability option of both SYNs: version 1 (bit 1) and codecs 1-4
caps() {
	local v c n=0
	while read -r v c; do
		[ $((v & 2)) != 0 ] && [ $((c & 0x1e)) = $((0x1e)) ] || return 1
		n=$((n + 1))
	done < <(awk -F'\t' '$2 == 1 && $5 != "" { print $5, $6 }' "$tmp/fields")
	[ $n = 2 ]
}
check "capability option on SYN and SYN-ACK: version 1, codecs 1-4" caps

# every frame: header fields, its stream range from its tcp.seq
frames() {
	awk -F'\t' '$7 != "" {
		n++
		if (!(($8 == 1 || $8 == 2) && $9 == "inceptionn:2^-10" && $10 == 10 &&
		      $11 + 0 > $4 + 0 && $12 == $3 && $13 == $3 + $11)) {
			print "bad frame: " $0; bad = 1
		}
	} END { print n + 0 " frames"; exit bad }' "$tmp/fields" >"$tmp/frames"
}
check "frames: v1 or v2, inceptionn:2^-10, DSCP 10, stream range from tcp.seq" frames
sed 's/^/# /' "$tmp/frames" | tail -n 3
nframes=$(sed -n 's/ frames$//p' "$tmp/frames")
count() { [ "${nframes:-0}" -ge 1 ] && [ "${nframes:-0}" -le "$tx_framed" ]; }
check "$nframes frames captured, between 1 and tx_framed ($tx_framed)" count

# stream bytes 1..size (relative seq) are each in a framed segment's
# range or a raw segment's payload
cover() {
	awk -F'\t' -v size="$size" '$2 == 0 && $4 > 0 {
		end = ($7 != "") ? $13 : $3 + $4
		print $3, end
	}' "$tmp/fields" | sort -n -k1,1 | awk -v size="$size" '
		{ if ($1 > pos + 0 && pos) { print "gap at " pos; exit 1 }
		  if (!pos) { if ($1 != 1) { print "starts at " $1; exit 1 } pos = 1 }
		  if ($2 > pos) pos = $2 }
		END { if (pos != size + 1) { print "ends at " pos " of " size + 1; exit 1 } }'
}
check "framed and raw segments cover stream bytes 1..$size" cover

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
