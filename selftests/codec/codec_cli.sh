#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# incnn-codec end to end (ASan/UBSan build): roundtrip equals encode then
# decode, lossless codecs are exact, the reported figures match the data,
# and every bad input gets one line on stderr and a non-zero exit.
set -u
. "$(dirname "$0")/../ktap_lib.sh"
codec=$build/asan/bin/incnn-codec

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

"$codec" gen --dist laplace --scale 1e-3 --count 300001 --seed 7 \
	"$tmp/g.bin" >/dev/null || { echo "not ok 1 gen"; exit 1; }
head -c 123457 "$tmp/g.bin" >"$tmp/odd.bin"

check "inceptionn 2^-10 roundtrip == encode+decode" \
	roundtrip_is_encode_decode --codec inceptionn --bound 2^-10
check "ebq 2^-6 roundtrip == encode+decode" \
	roundtrip_is_encode_decode --codec ebq --bound 2^-6
check "trunc 16 roundtrip == encode+decode" \
	roundtrip_is_encode_decode --codec trunc --bits 16
check "lz4 is exact" sh -c "'$codec' roundtrip --codec lz4 '$tmp/odd.bin' \
	'$tmp/l.bin' >/dev/null && cmp -s '$tmp/odd.bin' '$tmp/l.bin'"
check "ebq --json: max error within 2^-8, none over bound" ebq_json_agrees
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


# incnn-cmp (the demo's byte comparison): exit 0 when equal, 3 when not,
# a difference in a trailing partial value included
cmp_tool=$build/asan/bin/incnn-cmp
cmp_exact() {	# STATUS DIFFER FILE1 FILE2
	local out rc
	out=$("$cmp_tool" "$3" "$4")
	rc=$?
	echo "$out"
	[ "$rc" = "$1" ] && [ "$out" = "compared 6 bytes (expected 6, got 6): $2 values differ, max abs err 0, mean 0" ]
}
printf 'AAAAAB' >"$tmp/c1"
printf 'AAAAAC' >"$tmp/c2"
check "incnn-cmp: equal files" cmp_exact 0 0 "$tmp/c1" "$tmp/c1"
check "incnn-cmp: a trailing partial value differs" cmp_exact 3 1 "$tmp/c1" "$tmp/c2"

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
