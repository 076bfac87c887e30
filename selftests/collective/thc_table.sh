#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# THC's lookup table generator, scripts/thc-table.py: its dynamic
# programme gives the optimum of the paper's exhaustive stars-and-bars
# enumeration (Algorithm 4) on small (b, g, p); the committed reference
# tables (thc_tables.h, which thc_test compares with the library's own
# tables) are exactly its output; the default table is the one expected;
# bad parameters get a one-line error.
set -u
. "$(dirname "$0")/../ktap_lib.sh"
py=/usr/bin/python3
gen=$top/scripts/thc-table.py

regenerate() {
	"$py" "$gen" --header >"$tmp/thc_tables.h" &&
	diff -u "$top/selftests/collective/thc_tables.h" "$tmp/thc_tables.h"
}

default_table() {
	"$py" "$gen" >"$tmp/def.txt" && cat "$tmp/def.txt" &&
	[ "$(sed -n 2p "$tmp/def.txt")" = "0 3 5 7 9 11 13 14 15 17 19 21 23 25 27 30" ]
}

bad_bits() {
	one_error 2 thc-table "$py" "$gen" -b 3
}

bad_gran() {
	one_error 2 thc-table "$py" "$gen" -b 4 -g 14
}

check "dynamic programme = exhaustive enumeration" "$py" "$gen" --verify
check "committed thc_tables.h = generator output" regenerate
check "default b=4 g=30 p=1/32 table" default_table
check "bits 3: one-line error" bad_bits
check "granularity 14 for b=4: one-line error" bad_gran

echo "# Totals: pass:$((n - fail - skip)) fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail = 0 ]
