#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh - make check-debug: the VM suite (selftests/net) on a
# debug kernel. Builds, once, a kernel from Debian's linux-source-6.1 with
# `make tinyconfig` + lab/debug-kernel.config (KASAN, PROVE_LOCKING,
# DEBUG_ATOMIC_SLEEP, KFENCE; everything the VM needs built in), incnn.ko
# against it, and runs selftests/net/vm-check.sh on it (lab/vm.sh with
# INCNN_VM_KERNEL; the stock lane is unchanged). vm.sh boots every kernel
# with panic_on_warn=1: any splat fails the run.
#
#   scripts/check/debug-kernel.sh [build|run|all] [TEST.sh...]
#	build: the kernel (cached: rebuilt only when the fragment or the
#	       source changes) and incnn.ko; run: the suite; all: both.
#
# Environment: INCNN_BUILD (default build/); INCNN_DEBUG_KSRC, an
# extracted linux-source-6.1 tree (default: extracted once into
# $INCNN_BUILD/debug-kernel/src from /usr/src/linux-source-6.1.tar.xz);
# JOBS (make -j, default 2); VM_CHECK_TIMEOUT (s, default 10800);
# INCNN_TEST_TIMEOUT (s per script, default 3000: 5x selftests/net/settings,
# KASAN and lockdep under TCG run the scripts 5-10x slower).
# Kernel objects go to $INCNN_BUILD/debug-kernel/obj, its modules tree to
# .../mods, incnn.ko to .../incnn. Needs bc, bison, flex, libelf-dev.

set -eu
SELF_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$SELF_DIR/../.." && pwd)
BUILD=${INCNN_BUILD:-$REPO/build}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
DK=$BUILD/debug-kernel
OBJ=$DK/obj
FRAG=$REPO/lab/debug-kernel.config
TARBALL=/usr/src/linux-source-6.1.tar.xz
JOBS=${JOBS:-2}
what=${1:-all}
[ $# -eq 0 ] || shift

die() {
	echo "debug-kernel: $*" >&2
	exit 1
}

ksrc() {
	local d
	if [ -n "${INCNN_DEBUG_KSRC:-}" ]; then
		echo "$INCNN_DEBUG_KSRC"
		return
	fi
	d=$(ls -d "$DK"/src/linux-source-* 2>/dev/null | head -n1)
	if [ -z "$d" ]; then
		[ -r "$TARBALL" ] || die "$TARBALL missing (apt-get install linux-source-6.1)"
		mkdir -p "$DK/src"
		echo "debug-kernel: extracting $TARBALL" >&2
		tar -xJf "$TARBALL" -C "$DK/src"
		d=$(ls -d "$DK"/src/linux-source-* | head -n1)
	fi
	echo "$d"
}

# the options of the fragment that the final .config lacks
config_missing() {
	local line
	grep -E '^CONFIG_' "$FRAG" | while IFS= read -r line; do
		case $line in
		*=n) grep -qx "# ${line%=n} is not set" "$OBJ/.config" ||
			grep -qx "${line%=n}=n" "$OBJ/.config" || echo "$line" ;;
		*) grep -qxF "$line" "$OBJ/.config" || echo "$line" ;;
		esac
	done
}

build_kernel() {
	local src stamp
	for t in bc bison flex; do
		command -v $t >/dev/null || die "$t missing (apt-get install $t)"
	done
	[ -r /usr/include/gelf.h ] || die "libelf-dev missing (apt-get install libelf-dev)"
	src=$(ksrc)
	stamp=$( { sha256sum "$FRAG"; echo "$src"; } | sha256sum | cut -d' ' -f1)
	mkdir -p "$OBJ"
	if [ "$(cat "$OBJ/.incnn-stamp" 2>/dev/null)" != "$stamp" ]; then
		make -s -C "$src" O="$OBJ" tinyconfig
		(cd "$src" && scripts/kconfig/merge_config.sh -m -O "$OBJ" \
			"$OBJ/.config" "$FRAG") >/dev/null
		make -s -C "$src" O="$OBJ" olddefconfig
		missing=$(config_missing)
		[ -z "$missing" ] || echo "debug-kernel: not set as asked:" $missing >&2
		echo "$stamp" >"$OBJ/.incnn-stamp"
	fi
	echo "debug-kernel: building $(make -s -C "$src" O="$OBJ" kernelrelease) in $OBJ" >&2
	make -C "$src" O="$OBJ" -j"$JOBS" bzImage modules
	rm -rf "$DK/mods"
	make -s -C "$src" O="$OBJ" INSTALL_MOD_PATH="$DK/mods" modules_install
}

# incnn.ko against the debug kernel, from a copy of the sources (the
# stock incnn.ko in the repo stays as it is)
build_module() {
	rm -rf "$DK/incnn"
	mkdir -p "$DK/incnn"
	cp -a "$REPO/Kbuild" "$REPO/kmod" "$REPO/uapi" "$DK/incnn/"
	find "$DK/incnn" -name '*.o' -o -name '*.cmd' | xargs -r rm -f
	make -C "$OBJ" M="$DK/incnn" -j"$JOBS" modules
}

run_suite() {
	local rel
	[ -r "$OBJ/arch/x86/boot/bzImage" ] && [ -r "$DK/incnn/incnn.ko" ] ||
		die "no debug kernel yet: $0 build"
	rel=$(cat "$OBJ/include/config/kernel.release")
	make -s -C "$REPO" BUILD="$BUILD" tools python ksft
	make -s -C "$REPO/selftests/net" INCNN_BUILD="$BUILD" OUT="$BUILD/net"
	INCNN_VM_KERNEL=$OBJ/arch/x86/boot/bzImage INCNN_VM_ABI=$rel \
		INCNN_VM_MODROOT=$DK/mods INCNN_KO=$DK/incnn/incnn.ko \
		VM_CHECK_OUT=${VM_CHECK_OUT:-$BUILD/vm/debug-out} \
		VM_CHECK_TIMEOUT=${VM_CHECK_TIMEOUT:-10800} \
		INCNN_TEST_TIMEOUT=${INCNN_TEST_TIMEOUT:-3000} \
		"$REPO/selftests/net/vm-check.sh" --no-build "$@"
}

case $what in
build) build_kernel && build_module ;;
run) run_suite "$@" ;;
all) build_kernel && build_module && run_suite "$@" ;;
*) die "usage: $0 [build|run|all] [TEST.sh...]" ;;
esac
