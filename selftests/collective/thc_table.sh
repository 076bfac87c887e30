#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# THC's lookup table generator, scripts/gen/thc-table.py: its dynamic
# programme gives the optimum of the paper's exhaustive stars-and-bars
# enumeration (Algorithm 4) on small (b, g, p); the committed reference
# tables (thc_tables.h, which thc_test compares with the library's own
# tables) are exactly its output; the default table is the one expected;
# the library's tables (incnn-thc table) equal the generator's for more
# (b, g, p); bad parameters get a one-line error from both.
set -u
. "$(dirname "$0")/../ktap_lib.sh"
py=/usr/bin/python3
gen=$top/scripts/gen/thc-table.py
tool=${INCNN_THC:-$build/asan/bin/incnn-thc}

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

# library = generator, by the tool, over a sweep of (b, g, p)
library_tables() {
	local b g p want got
	for b in 1 2 4 8; do
		for g in 15 16 30 31 36 51 100 255; do
			[ "$g" -ge $(((1 << b) - 1)) ] || continue
			for p in 0.5 0.03125 0.001953125 1e-6; do
				want=$("$py" "$gen" -b $b -g $g -p $p | sed -n 2p) &&
				got=$("$tool" table -b $b -g $g -p $p) || return 1
				[ "$want" = "$got" ] ||
					{ echo "b=$b g=$g p=$p: $want != $got"; return 1; }
			done
		done
	done
}

tool_errors() {
	one_error 2 incnn-thc "$tool" table -b 3 &&
	one_error 2 incnn-thc "$tool" table -g 256 &&
	one_error 2 incnn-thc "$tool" table -p 0.9 &&
	one_error 2 incnn-thc "$tool" bench -N 100000000 &&
	one_error 2 incnn-thc "$tool" bench -n 0 &&
	one_error 2 incnn-thc "$tool" frob
}

bench_smoke() {
	"$tool" bench -n 100000 -N 8 -t 0.01 >"$tmp/bench.txt" &&
	cat "$tmp/bench.txt" &&
	[ "$(grep -c '^  ' "$tmp/bench.txt")" = 6 ]
}

check "dynamic programme = exhaustive enumeration" "$py" "$gen" --verify
check "committed thc_tables.h = generator output" regenerate
check "default b=4 g=30 p=1/32 table" default_table
check "bits 3: one-line error" bad_bits
check "granularity 14 for b=4: one-line error" bad_gran
if [ -x "$tool" ]; then
	check "library tables = generator tables (incnn-thc table)" library_tables
	check "incnn-thc: one-line errors" tool_errors
	check "incnn-thc bench runs" bench_smoke
else
	skip_test "incnn-thc not built (make tools-asan)"
fi

echo "# Totals: pass:$((n - fail - skip)) fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail = 0 ]
