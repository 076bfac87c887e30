#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module's own cost before/after, in the QEMU test VM: builds incnn.ko
# from COMMIT (git archive under $INCNN_BUILD/module-ab/) and from the
# current tree, boots ONE VM and runs selftests/net/iperf3.sh ROUNDS times
# per variant, alternating (scripts/bench/module-ab-vm.sh): base (COMMIT,
# simd=avx2), new-v1 (simd=avx2, superframes=0: frame version 1, as the
# base sends if it predates superframes), new (simd=avx2, the default
# superframes) and new-none (simd=none). Prints each run's
# plain, plain-nogso and marked goodput (Mbit/s) and the medians of
# marked / plain-nogso per variant (same VM, same machine state: under TCG
# only such ratios compare).
#
#   scripts/bench/module-ab.sh [-r ROUNDS] COMMIT
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${INCNN_BUILD:-$src/build}
rounds=3
if [ "${1:-}" = -r ]; then
	rounds=$2
	shift 2
fi
[ $# = 1 ] || { echo "usage: module-ab.sh [-r ROUNDS] COMMIT" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "module-ab.sh: bad -r $rounds" >&2; exit 2; }
rev=$(git -C "$src" rev-parse --verify -q "$1^{commit}") ||
	{ echo "module-ab.sh: $1: not a commit" >&2; exit 1; }
abi=$("$src/scripts/check/kabi.sh")
kdir=/usr/src/linux-headers-$abi
base=$build/module-ab/base
rm -rf "$base"
mkdir -p "$base" "$build/logs"
git -C "$src" archive "$rev" | tar -x -C "$base" -f -
log=$build/logs/module-ab-build.log
echo "# module-ab: building incnn.ko of ${rev:0:12} and of the tree" >&2
{
	make -C "$kdir" M="$base" modules &&
		make -C "$kdir" M="$src" modules &&
		make -C "$src" BUILD="$build" tools python ksft &&
		make -C "$src/selftests/net" INCNN_BUILD="$build" OUT="$build/net"
} >"$log" 2>&1 || { tail -n 30 "$log" >&2; exit 1; }

# a base without the superframes parameter is loaded without it
base_sf=omit
grep -qs 'module_param(superframes' "$base"/kmod/*.c && base_sf=1
out=$build/logs/module-ab.out
"$src/lab/vm.sh" --out "$build/vm/module-ab" --timeout 3000 -- \
	scripts/bench/module-ab-vm.sh "$rounds" "base=$base/incnn.ko:avx2:$base_sf" \
	"new-v1=$src/incnn.ko:avx2:0" "new=$src/incnn.ko:avx2" \
	"new-none=$src/incnn.ko:none" 2>&1 |
	sed -u "s/\r$//" | tee "$out" | grep -E '^(ab:|# incnn)'
echo "# base ${rev:0:12}; marked / plain-nogso goodput, median of $rounds rounds:"
awk '/^ab:/ {
	for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	if (v["plain-nogso"] > 0 && v["marked"] != "?")
		r[$3] = r[$3] " " v["marked"] / v["plain-nogso"]
} END { for (k in r) print k, r[k] }' "$out" | while read -r name vals; do
	med=$(tr ' ' '\n' <<<"$vals" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
	echo "$name: $med (runs:$vals)"
done
