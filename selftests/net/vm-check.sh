#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-check.sh - host side of the incnn kernel datapath tests: builds the
# module (against the headers of Debian's linux-image-amd64 ABI, see
# scripts/check/kabi.sh), the userspace tools (make tools), the test helpers
# (build/net/), boots ONE VM (lab/vm.sh) running
# selftests/net/run.sh, and prints the TAP followed by a final
#   # Totals: pass:P fail:F xfail:0 xpass:0 skip:S error:0
# that sums every test case of every script (a script that died without
# its own Totals line counts as one failure; a kernel problem found by
# vm.sh - WARN/BUG/Oops in dmesg, exit 99 - or a VM failure counts as one
# more). Exits non-zero on any failure.
#
#   selftests/net/vm-check.sh [--no-build] [--append ARGS] [TEST.sh...]
#
# --append ARGS: extra kernel command line of the VM (lab/vm.sh --append;
# e.g. ipv6.disable=1 for noipv6.sh).
# Environment: INCNN_BUILD (default build/), VM_CHECK_OUT (the vm.sh
# --out dir, default $INCNN_BUILD/vm/net-out), VM_CHECK_TIMEOUT (s, 900).
# INCNN_FAMILY=6 runs the scripts over IPv6, INCNN_FAMILIES="4 6" once
# per family (selftests/net/run.sh; every INCNN_* variable reaches the VM).

set -u
SELF_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$SELF_DIR/../.." && pwd)
BUILD=${INCNN_BUILD:-$REPO/build}
OUT=${VM_CHECK_OUT:-$BUILD/vm/net-out}
build=1
append=()
while [ $# -gt 0 ]; do
	case $1 in
	--no-build) build=0; shift ;;
	--append) append+=(--append "${2:?--append needs arguments}"); shift 2 ;;
	*) break ;;
	esac
done

if [ $build = 1 ]; then
	abi=$("$REPO/scripts/check/kabi.sh") || exit 1
	kdir=/usr/src/linux-headers-$abi
	mkdir -p "$BUILD/logs"
	blog=$BUILD/logs/vm-check-build.log
	echo "# vm-check: building incnn.ko ($abi), tools, test helpers" >&2
	if ! {
		make -C "$kdir" M="$REPO" modules &&
			make -C "$REPO" BUILD="$BUILD" tools python ksft &&
			make -C "$SELF_DIR" INCNN_BUILD="$BUILD" OUT="$BUILD/net"
	} >"$blog" 2>&1; then
		tail -n 40 "$blog" >&2
		echo "not ok 1 - vm-check: build (log: $blog)"
		echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
		exit 1
	fi
fi

tap=$(mktemp)
trap 'rm -f "$tap"' EXIT
start=$(date +%s)
"$REPO/lab/vm.sh" --out "$OUT" --timeout "${VM_CHECK_TIMEOUT:-900}" \
	"${append[@]}" -- selftests/net/run.sh "$@" 2>&1 | sed -u "s/\r$//" | tee "$tap" |
	grep -E --line-buffered '^(TAP version|1\.\.|(not )?ok |#)'
vmrc=${PIPESTATUS[0]}
elapsed=$(($(date +%s) - start))

# sum the scripts' own Totals lines (prefixed "# " by the runner); a
# script without one counts as one failure
read -r pass fail skip < <(awk '
	/^# # Totals: pass:/ {
		match($0, /pass:[0-9]+/); p = substr($0, RSTART + 5, RLENGTH - 5)
		match($0, /fail:[0-9]+/); f = substr($0, RSTART + 5, RLENGTH - 5)
		match($0, /skip:[0-9]+/); s = substr($0, RSTART + 5, RLENGTH - 5)
		seen = 1; next
	}
	/^(not )?ok [0-9]+ selftests: / {
		bad = ($1 == "not")
		if (seen) { P += p; F += f; S += s; if (bad && f == 0) F++ }
		else if (bad) F++
		seen = 0
	}
	END { print P + 0, F + 0, S + 0 }' "$tap")
scripts=$(grep -c -E '^(not )?ok [0-9]+ selftests: ' "$tap")
if [ "$scripts" = 0 ] && [ "$vmrc" = 0 ]; then
	vmrc=125 # nothing ran
fi
# vm.sh reports kernel problems with exit 99 only when the command
# succeeded: look for its messages too
kproblems=$(grep -E 'vm.sh: FAIL: (kernel log problems|kernel tainted|guest kernel crashed)' "$tap")
if [ -n "$kproblems" ]; then
	fail=$((fail + 1))
	echo "not ok - vm-check: kernel problems (logs in $OUT)"
	grep -A 20 -E 'vm.sh: FAIL: (kernel log problems|kernel tainted|guest kernel crashed)' "$tap" |
		head -n 60 | sed 's/^/#   /'
fi
if [ "$vmrc" != 0 ] && { [ "$vmrc" != 99 ] || [ -z "$kproblems" ]; }; then
	case $vmrc in
	99) why="kernel log problems (WARN/BUG/Oops/...) or taint" ;;
	124) why="VM timeout" ;;
	125) why="VM crashed or reported no status" ;;
	*) why="run.sh exited $vmrc" ;;
	esac
	if [ "$vmrc" = 1 ] && [ "$fail" -gt 0 ]; then
		: # the failures are already counted
	else
		fail=$((fail + 1))
		echo "not ok - vm-check: $why (vm.sh exit $vmrc, logs in $OUT)"
	fi
fi
echo "# vm-check: $scripts scripts, ${elapsed} s wall time (VM boot included)"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ "$fail" = 0 ] && [ "$vmrc" = 0 ]
