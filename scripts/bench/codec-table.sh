#!/bin/bash
# Print the inceptionn vs ebq comparison of docs/codecs.md: compression
# ratio and max abs error per distribution and bound, measured with
# incnn-codec roundtrip on 1M generated values (64 KiB packets).
# Usage: scripts/bench/codec-table.sh [BUILD_DIR]
set -eu
build=${1:-build}
codec=$build/rel/bin/incnn-codec
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { sed -n "s/.*\"$2\":\([^,}]*\).*/\1/p" "$1"; }

echo "| data | k | inceptionn ratio | inceptionn max err | ebq ratio | ebq max err | 2^-k |"
echo "|---|---|---|---|---|---|---|"
for spec in laplace:1e-3 laplace:1e-2 normal:1e-2 normal:1e-1 uniform:1e-2 loguniform:1; do
	dist=${spec%%:*} scale=${spec#*:}
	"$codec" gen --dist "$dist" --scale "$scale" --count 1000000 --seed 1 \
		"$tmp/g.bin" >/dev/null
	for k in 6 8 10; do
		row="| $dist $scale | $k"
		for c in inceptionn ebq; do
			"$codec" roundtrip --codec $c --bound "2^-$k" --json \
				"$tmp/g.bin" "$tmp/o.bin" >"$tmp/j"
			row="$row | $(printf %.3f "$(field "$tmp/j" ratio)") | $(printf %.3e "$(field "$tmp/j" max_abs_err)")"
		done
		echo "$row | $(awk -v k=$k 'BEGIN { printf "%.3e", 2^-k }') |"
	done
done
