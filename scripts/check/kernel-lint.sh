#!/bin/bash
# Kernel code checks: checkpatch.pl --strict (from Debian's
# linux-source-6.1, extracted into BUILD/checkpatch) on kmod/ and uapi/,
# and sparse (make C=2) on the module. Prints the findings; exits non-zero
# on any.
# Usage: kernel-lint.sh checkpatch|sparse
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${INCNN_BUILD:-$src/build}

case "${1:-}" in
checkpatch)
	cp=$build/checkpatch/scripts/checkpatch.pl
	if [ ! -x "$cp" ]; then
		mkdir -p "$build/checkpatch"
		tar -C "$build/checkpatch" --strip-components=1 \
			-xf /usr/src/linux-source-6.1.tar.xz \
			linux-source-6.1/scripts/checkpatch.pl \
			linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch
	fi
	cd "$src"
	out=$(perl "$cp" --strict --no-tree --terse --show-types -f \
		kmod/*.c kmod/*.h kmod/codec/*.c kmod/codec/*.h \
		uapi/linux/incnn.h 2>&1 | grep -v '^total: 0 errors, 0 warnings, 0 checks' || true)
	rm -f "$src/.checkpatch-camelcase.git."
	if [ -n "$out" ]; then
		echo "$out"
		exit 1
	fi
	echo "checkpatch --strict: clean"
	;;
sparse)
	kdir=/usr/src/linux-headers-$("$src/scripts/check/kabi.sh")
	out=$(make -C "$kdir" M="$src" C=2 modules 2>&1 |
		grep -E 'warning:|error:' || true)
	if [ -n "$out" ]; then
		echo "$out"
		exit 1
	fi
	echo "sparse: clean"
	;;
*)
	echo "usage: kernel-lint.sh checkpatch|sparse" >&2
	exit 2
	;;
esac
