#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# zebq.sh - zebq through the module, and what an older peer gets. A
# sends a known fp32 stream (Laplace 1e-3: 98 % of the values quantise to
# zero at 2^-8) on a marked socket to B, with the rule zebq 2^-8:
#  - B offers every codec: A frames with zebq; B receives exactly
#    incnn-codec's roundtrip prediction, the wire carries more than 16x
#    fewer payload bytes (ebq's cap), and only zebq counts frames.
#  - B offers no zebq (module parameter rx_codecs without bit 5, as a
#    module from before zebq): A frames with ebq, whose values are zebq's
#    bit for bit: the same bytes arrive, only ebq counts frames, the flow
#    shows codec ebq.
#  - B offers neither zebq nor ebq: nothing is framed (tx_raw_peer_codec),
#    the values are quantised in place: the same bytes arrive.

. "$(dirname "$0")/lib.sh"

ktap_header "zebq: exact transfers, wire ratio past 16x, older peers"
load_module || { fail "load incnn.ko"; ktap_finish; exit 1; }
setup_pair || { fail "namespaces and veth"; ktap_finish; exit 1; }
PARAM=/sys/module/incnn/parameters/rx_codecs
XFER_TIMEOUT=60
[ -w $PARAM ] || { fail "module parameter rx_codecs" "$PARAM missing"; ktap_finish; exit 1; }
incctl "$NS_A" set close-timeout 3600
ip netns exec "$NS_B" sh -c 'echo 1 >/sys/class/net/vb/queues/rx-0/rps_cpus'

# the module's codec dump has zebq, a bound codec (codecs.sh: the whole dump)
got=$(codec_dump "$NS_A")
want='{"id":5,"name":"zebq","lossy":true,"param_min":1,"param_max":30,"param_default":10,"param_kind":"bound"}'
if [[ $got == *"$want"* ]]; then
	ok "codec dump: zebq, id 5, bound 2^-1..2^-30, default 2^-10"
else
	fail "codec dump: zebq" "$got"
fi

N=100000
gen_floats "$TMP/s.bin" $N 51 1e-3
predict "$TMP/want" "$TMP/s.bin" 0 zebq --bound 2^-8
predict "$TMP/want-ebq" "$TMP/s.bin" 0 ebq --bound 2^-8
if cmp -s "$TMP/want" "$TMP/want-ebq"; then
	ok "prediction: zebq 2^-8 decodes to ebq 2^-8's values"
else
	fail "prediction: zebq 2^-8 decodes to ebq 2^-8's values"
fi
incctl "$NS_A" rule add tos 0x28 codec zebq bound 2^-8 ||
	fail "rule add tos 0x28 codec zebq bound 2^-8"

# frames: the frames A's codec stats count for zebq and for ebq (one
# python start: slow under TCG)
frames() {
	"$INCCTL" -n "$NS_A" -j stats | json_get - \
		"' '.join(str(sum(c['frames'] for c in d['codec_stats'] if c['codec'] == n)) for n in ('zebq', 'ebq'))"
}

# zcase NAME MASK CODEC: B offers MASK; A frames with CODEC (- for none)
zcase() {
	local name=$1 mask=$2 codec=$3 b0 p0 b p wire st s framed pc drops want
	echo "$mask" >$PARAM
	incctl "$NS_A" stats reset
	incctl "$NS_B" stats reset
	b0=$(dev_stat "$NS_A" va tx_bytes)
	p0=$(dev_stat "$NS_A" va tx_packets)
	if ! xfer "$name" "$TMP/s.bin" -T 0x28; then
		echo 65535 >$PARAM
		fail "$name: transfer completes"
		return
	fi
	echo 65535 >$PARAM
	b=$(dev_stat "$NS_A" va tx_bytes)
	p=$(dev_stat "$NS_A" va tx_packets)
	# Ethernet, IP and TCP with timestamps: 66 bytes per packet
	wire=$(((b - b0) - (p - p0) * 66))
	WIRE_RATIO=$(ratio "$((4 * N))" "$wire")
	if st=$(same "$TMP/want" "$TMP/$name.out"); then
		ok "$name: received bytes = roundtrip prediction (wire ratio $WIRE_RATIO)"
	else
		fail "$name: received bytes = roundtrip prediction" "$st"
	fi
	s=$(kstats "$NS_A")
	framed=$(jnum "$s" tx_framed)
	pc=$(jnum "$s" tx_raw_peer_codec)
	drops=$(jnum "$(kstats "$NS_B")" rx_dropped)
	if [ "$codec" = - ]; then
		if [ "$framed" = 0 ] && [ "$pc" -ge 1 ] && [ "$drops" = 0 ]; then
			ok "$name: nothing framed (tx_raw_peer_codec $pc), receiver dropped nothing"
		else
			fail "$name: nothing framed, receiver dropped nothing" \
				"tx_framed $framed tx_raw_peer_codec $pc rx_dropped $drops"
		fi
		return
	fi
	local fz fe
	read -r fz fe < <(frames)
	[ "$codec" = zebq ] && want="$framed 0" || want="0 $framed"
	if [ "$framed" -ge 1 ] && [ "$fz $fe" = "$want" ] &&
		[ "$pc" = 0 ] && [ "$drops" = 0 ]; then
		ok "$name: all $framed frames $codec, receiver dropped nothing"
	else
		fail "$name: all frames $codec" \
			"tx_framed $framed zebq $fz ebq $fe tx_raw_peer_codec $pc rx_dropped $drops"
	fi
}

zcase zebq-all 65535 zebq
if fcmp "$WIRE_RATIO" ">" 16; then
	ok "zebq: wire ratio $WIRE_RATIO, past ebq's 16x"
else
	fail "zebq: wire ratio $WIRE_RATIO, want > 16"
fi
zebq_ratio=$WIRE_RATIO
# an older peer: every codec but zebq (id 5)
zcase zebq-old-peer $((0xffff & ~(1 << 5))) ebq
if fcmp "$WIRE_RATIO" "<" 16 && fcmp "$zebq_ratio" ">" "$WIRE_RATIO"; then
	ok "older peer: ebq's wire ratio $WIRE_RATIO, under 16x and zebq's $zebq_ratio"
else
	fail "older peer: ebq's wire ratio $WIRE_RATIO, want < 16 and < zebq's $zebq_ratio"
fi
flowc=$("$INCCTL" -n "$NS_A" -j flows | json_get - \
	"sorted(set(f['codec'] for f in d if 'anchored' in f['flags']))" 2>&1)
if [ "$flowc" = '["ebq", "zebq"]' ]; then
	ok "flows: the older peer's flow shows codec ebq, the other zebq"
else
	fail "flows: codecs ebq and zebq" "got $flowc"
fi
# neither zebq nor ebq (id 2)
zcase zebq-no-ebq $((0xffff & ~(1 << 5) & ~(1 << 2))) -

ktap_finish
