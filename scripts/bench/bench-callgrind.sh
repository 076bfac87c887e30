#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Instructions per float of the inceptionn, ebq and zebq codecs, encode and
# decode, scalar and SIMD, from valgrind --tool=callgrind: a count that,
# unlike GB/s, does not depend on how busy the machine is. Laplace
# gradients (scale 1e-3 and 1e-2), k = 6, 8, 10, calls of 1448 and 65536
# bytes, 1 MiB of input per row (or the fp32 files given, each repeated to
# 1 MiB, instead of the Laplace data). Needs `make`
# (build/rel/lib/libincnn-codec.a).
#
#   scripts/bench/bench-callgrind.sh [FILE...]
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${INCNN_BUILD:-$src/build}
out=$build/callgrind
lib=$build/rel/lib/libincnn-codec.a
[ -f "$lib" ] || { echo "bench-callgrind.sh: $lib missing: run make" >&2; exit 1; }
command -v valgrind >/dev/null ||
	{ echo "bench-callgrind.sh: valgrind not installed" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
cc -std=c11 -O2 -Wall -Wextra -Werror -I"$src/uapi" -I"$src/kmod/codec" \
	-I"$src/userspace/include" "$src/scripts/bench/bench-callgrind.c" "$lib" \
	-llz4 -lm -o "$out/bench-callgrind"
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" \
	"$out/bench-callgrind" "$@" 2>"$out/valgrind.log"
printf '%-10s %-6s %-5s %-14s %6s %9s %9s\n' codec path param dist size \
	"enc i/f" "dec i/f"
for f in "$out"/cg.out.*; do
	awk '/^desc: Trigger: Client Request: /{ sub(/.*Client Request: /, ""); t = $0 }
	     /^summary:|^totals:/{ s = $2 } END { print t, s }' "$f"
done | sort -t/ -k1,1 -k2,2r -k4,4 -k3,3V -k5,5n | awk '
	{ split($1, a, "/"); split(a[7], f, "=")
	  key = a[1] " " a[2] " " a[3] " " a[4] " " a[5]
	  v[key, a[6]] = $2 / f[2]; if (!(key in seen)) { seen[key] = 1; order[n++] = key } }
	END { for (i = 0; i < n; i++) { split(order[i], k, " ")
	  printf "%-10s %-6s %-5s %-14s %6s %9.2f %9.2f\n", k[1], k[2], k[3], k[4], k[5],
		 v[order[i], "enc"], v[order[i], "dec"] } }'
