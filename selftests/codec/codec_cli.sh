#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# incnn-codec end to end (ASan/UBSan build): roundtrip equals encode then
# decode, lossless codecs are exact, the reported figures match the data,
# and every bad input gets one line on stderr and a non-zero exit.
set -u
. "$(dirname "$0")/../ktap_lib.sh"
codec=$build/asan/bin/incnn-codec
bench=$build/asan/bin/incnn-bench
cmptool=$build/asan/bin/incnn-cmp

# expect_error STATUS ARGS...: exactly one stderr line, that status,
# nothing on stdout
expect_error() {
	local want=$1
	shift
	one_error "$want" incnn-codec "$codec" "$@"
}

roundtrip_is_encode_decode() {	# codec-args...
	"$codec" roundtrip "$@" "$tmp/g.bin" "$tmp/rt.bin" >/dev/null &&
	"$codec" encode "$@" "$tmp/g.bin" "$tmp/c.inc" >/dev/null &&
	"$codec" decode "$tmp/c.inc" "$tmp/d.bin" >/dev/null &&
	cmp -s "$tmp/rt.bin" "$tmp/d.bin"
}

json_field() {	# file key -> value
	sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1"
}

ebq_json_agrees() {
	local maxerr over
	"$codec" roundtrip --codec ebq --bound 2^-8 --json "$tmp/g.bin" \
		"$tmp/rt.bin" >"$tmp/j" || return 1
	maxerr=$(json_field "$tmp/j" max_abs_err)
	over=$(json_field "$tmp/j" over_bound)
	[ "$over" = 0 ] && awk -v e="$maxerr" 'BEGIN { exit !(e > 0 && e <= 2^-8) }'
}

zebq_is_ebq() {
	"$codec" roundtrip --codec ebq --bound 2^-8 "$tmp/g.bin" "$tmp/e.bin" \
		>/dev/null &&
	"$codec" roundtrip --codec zebq --bound 2^-8 "$tmp/g.bin" "$tmp/z.bin" \
		>/dev/null &&
	cmp -s "$tmp/e.bin" "$tmp/z.bin"
}

# the bodies of the seed-7 data, 64 KiB chunks: ebq 81028 bytes, zebq
# 21907 (97.99 % of the values are 0 bits; hist the same)
zebq_ratio() {
	"$codec" roundtrip --codec ebq --bound 2^-8 --json "$tmp/g.bin" \
		"$tmp/e.bin" >"$tmp/je" &&
	"$codec" roundtrip --codec zebq --bound 2^-8 --json "$tmp/g.bin" \
		"$tmp/z.bin" >"$tmp/jz" &&
	[ "$(json_field "$tmp/je" out_bytes)" = 81028 ] &&
	[ "$(json_field "$tmp/jz" out_bytes)" = 21907 ] &&
	[ "$(json_field "$tmp/jz" hist)" = "$(json_field "$tmp/je" hist)" ]
}

"$codec" gen --dist laplace --scale 1e-3 --count 300001 --seed 7 \
	"$tmp/g.bin" >/dev/null || { echo "not ok 1 gen"; exit 1; }
head -c 123457 "$tmp/g.bin" >"$tmp/odd.bin"
head -c 4003 "$tmp/g.bin" >"$tmp/odd3.bin"

check "inceptionn 2^-10 roundtrip == encode+decode" \
	roundtrip_is_encode_decode --codec inceptionn --bound 2^-10
check "ebq 2^-6 roundtrip == encode+decode" \
	roundtrip_is_encode_decode --codec ebq --bound 2^-6
check "trunc 16 roundtrip == encode+decode" \
	roundtrip_is_encode_decode --codec trunc --bits 16
check "lz4 is exact" sh -c "'$codec' roundtrip --codec lz4 '$tmp/odd.bin' \
	'$tmp/l.bin' >/dev/null && cmp -s '$tmp/odd.bin' '$tmp/l.bin'"
check "ebq --json: max error within 2^-8, none over bound" ebq_json_agrees
check "zebq 2^-8 roundtrip == encode+decode" \
	roundtrip_is_encode_decode --codec zebq --bound 2^-8
check "zebq decodes to ebq's values, bit for bit" zebq_is_ebq
check "zebq: 98 % zeros at 2^-8, 3.7x smaller than ebq" zebq_ratio
report_codec() {	# LABEL codec-args...: the report's codec row is LABEL
	local want=$1
	shift
	head -c 4000 "$tmp/g.bin" >"$tmp/small.bin" &&
		"$codec" roundtrip "$@" "$tmp/small.bin" "$tmp/r.bin" >"$tmp/r.txt" &&
		[ "$(sed -n 's/^codec  *//p' "$tmp/r.txt")" = "$want" ]
}
check "report: codec ebq:2^-8 (incnn_codec_label())" \
	report_codec 'ebq:2^-8' --codec ebq --bound 2^-8
check "report: codec trunc:24" report_codec trunc:24 --codec trunc --bits 24
check "report: codec lz4" report_codec lz4 --codec lz4
check "zebq --bits refused" expect_error 2 roundtrip --codec zebq --bits 8 "$tmp/g.bin" "$tmp/x"
check "unknown codec" expect_error 2 roundtrip --codec zip "$tmp/g.bin" "$tmp/x"
check "bound out of range" expect_error 2 roundtrip --codec ebq --bound 2^-31 "$tmp/g.bin" "$tmp/x"
check "bound not a power of two" expect_error 2 roundtrip --codec ebq --bound 0.3 "$tmp/g.bin" "$tmp/x"
check "bits invalid" expect_error 2 roundtrip --codec trunc --bits 12 "$tmp/g.bin" "$tmp/x"
check "bound for lz4" expect_error 2 encode --codec lz4 --bound 2^-8 "$tmp/g.bin" "$tmp/x"
check "missing input file" expect_error 1 roundtrip --codec ebq "$tmp/nope" "$tmp/x"
check "float codec on odd length" expect_error 1 roundtrip --codec ebq "$tmp/odd.bin" "$tmp/x"
check "missing arguments" expect_error 2 roundtrip --codec ebq
check "truncated container" sh -c "'$codec' encode --codec ebq '$tmp/g.bin' \
	'$tmp/c' >/dev/null && head -c 1000 '$tmp/c' >'$tmp/t' && \
	! '$codec' decode '$tmp/t' '$tmp/x' 2>/dev/null"

# incnn-bench --file: the file is checked before anything is measured
check "incnn-bench: missing --file, nothing measured" \
	one_error 1 incnn-bench "$bench" --quick --file "$tmp/nope"
check "incnn-bench: --file not whole fp32 values, nothing measured" \
	one_error 1 incnn-bench "$bench" --quick --file "$tmp/odd3.bin"

# incnn-cmp: documented exit statuses (0 same, 3 differ, 2 usage, 1 I/O)
cmp_help() {
	"$cmptool" --help >"$tmp/h" &&
	grep -q '^exit status:' "$tmp/h" && grep -q -- '-r, --pieces' "$tmp/h" &&
	grep -q '^  3  the values differ' "$tmp/h"
}
cmp_status() {	# want expected got
	local rc
	"$cmptool" "$2" "$3"
	rc=$?
	[ "$rc" = "$1" ] || { echo "exit $rc, want $1"; return 1; }
}
cp "$tmp/odd.bin" "$tmp/odd2.bin"
printf '\x01' | dd of="$tmp/odd2.bin" bs=1 seek=4000 conv=notrunc 2>/dev/null
# same length, only the last byte (of a partial value) differs
cp "$tmp/odd.bin" "$tmp/odd4.bin"
last=$(tail -c 1 "$tmp/odd.bin" | od -An -tu1)
printf "\\$(printf %03o $(((last + 1) % 256)))" |
	dd of="$tmp/odd4.bin" bs=1 seek=123456 conv=notrunc 2>/dev/null
check "incnn-cmp --help: options and exit statuses" cmp_help
check "incnn-cmp: identical files exit 0" cmp_status 0 "$tmp/odd.bin" "$tmp/odd.bin"
check "incnn-cmp: one value differs, exit 3" cmp_status 3 "$tmp/odd.bin" "$tmp/odd2.bin"
check "incnn-cmp: the trailing partial value differs, exit 3" \
	cmp_status 3 "$tmp/odd.bin" "$tmp/odd4.bin"
# --pieces on what iperf3 -F delivers: after partial writes it sends
# pieces of its blocks shorter than incnn-cmp's 32-byte window, from the
# start or the end of a block; the server cuts the stream anywhere
pieces_case() {	# want-differ want-short python-expression-of-E
	python3 -c "import sys; E = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write($3)" "$tmp/g.bin" "$tmp/p.bin" &&
	"$cmptool" --pieces --json "$tmp/g.bin" "$tmp/p.bin" >"$tmp/p.json"
	cat "$tmp/p.json"
	grep -q "\"short_pieces\":$2,\"bytes_differ\":$1}" "$tmp/p.json"
}
check "incnn-cmp --pieces: short pieces, a cut tail: none differ" \
	pieces_case 0 1 "E[:1024] + E[1024:1036] + E[1024:2048] + E[131048:131072] + E[2048:3072] + E[3072:3079]"
check "incnn-cmp --pieces: a short tail" \
	pieces_case 0 1 "E[:1024] + E[4096:5120] + E[4096:4101]"
check "incnn-cmp --pieces: 4 foreign bytes between pieces differ" \
	pieces_case 4 0 "E[:1024] + b'\\xff\\xfe\\xfd\\xfc' + E[1024:2048]"
check "incnn-cmp --pieces: a piece one byte off: its bytes before an aligned value differ" \
	pieces_case 3 0 "E[:1024] + E[1025:2049]"
check "incnn-cmp --pieces: a partial write of 1022 bytes, then the block again" \
	pieces_case 0 0 "E[:1022] + E[:2048] + E[2048:2049] + E[4096:5120]"
check "incnn-cmp --pieces: a piece shifted in GOT after 3 foreign bytes" \
	pieces_case 3 0 "E[:1024] + b'\\x01\\x02\\x03' + E[1024:2048]"
check "incnn-cmp --pieces: a short piece not in EXPECTED differs" \
	pieces_case 8 0 "E[:1024] + b'\\x00\\x00\\xc0\\x7f' * 2 + E[4096:5120]"
check "incnn-cmp: missing file, exit 1" \
	one_error 1 incnn-cmp "$cmptool" "$tmp/odd.bin" "$tmp/nope"
check "incnn-cmp: one argument, exit 2" one_error 2 incnn-cmp "$cmptool" "$tmp/odd.bin"

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
