#!/bin/bash
# make demo: install what is missing, build, boot the VM, run
# scripts/demo-vm.sh there, and print the results table (also written to
# build/demo/results.md).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${INCNN_BUILD:-$src/build}
export INCNN_BUILD=$build
start=$(date +%s)

echo "demo: checking Debian packages"
"$src/scripts/deps.sh" host kmod vm
echo "demo: building tools and incnn.ko"
make -s -C "$src" BUILD="$build" tools >/dev/null
kdir=/usr/src/linux-headers-$("$src/scripts/kabi.sh")
make -s -C "$kdir" M="$src" modules >/dev/null
mkdir -p "$build/demo"
echo "demo: booting the VM (QEMU/TCG, Debian $("$src/scripts/kabi.sh"))"
"$src/selftests/vm/vm.sh" --out "$build/demo" --timeout 1500 \
	-- "$src/scripts/demo-vm.sh"
python3 "$src/scripts/demo-table.py" "$build/demo/demo.json" \
	"${INCNN_DEMO_RATE:-20mbit}" | tee "$build/demo/results.md"
echo "demo: took $(( $(date +%s) - start )) s; results in $build/demo/results.md"
