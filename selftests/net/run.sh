#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh - the in-VM entry point of the incnn kernel datapath tests: runs
# every test script of selftests/net through the kernel's kselftest runner
# (build/ksft/kselftest/runner.sh, from `make ksft`), or through a small
# equivalent if the runner is missing or INCNN_TEST_TIMEOUT sets another
# limit per script, and prints TAP. Exits non-zero if
# any test failed.
#
#   lab/vm.sh -- selftests/net/run.sh [[4:|6:]TEST.sh...]
#
# INCNN_FAMILIES="4 6" runs each script once per address family (see
# INCNN_FAMILY in lab/netns.sh); without it and without arguments, the
# default list over IPv4 and then TESTS_V6 over IPv6.
#
# The host side is selftests/net/vm-check.sh (builds, boots one VM, sums).

set -u
if [ "${INCNN_IN_VM:-}" != 1 ]; then
	echo "run.sh: runs only inside the test VM (selftests/net/vm-check.sh)" >&2
	exit 4
fi
NET_DIR=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$NET_DIR/../.." && pwd)
BUILD=${INCNN_BUILD:-$REPO/build}
KSFT=$BUILD/ksft

TESTS=(codecs.sh passthrough.sh offload.sh netem.sh nat.sh iperf3.sh
	malformed.sh stats.sh flowstate.sh lifecycle.sh cluster.sh
	inband.sh handshake.sh window.sh xmit.sh hybrid.sh toggle.sh
	mtu.sh urgent.sh
	unload.sh bigstream.sh vrf.sh fragments.sh defaults.sh spray.sh
	torch.sh methods.sh lgc.sh md5.sh synopt.sh zebq.sh sframe.sh
	sframe-inject.sh wireshark.sh v4mapped.sh)
# The IPv6 pass of the default run (make check): the short scripts that
# check the guarantees (exact bytes, handshake, faults, superframes,
# fragments, extension headers, malformed and out-of-window frames,
# urgent data, TCP-MD5) once more with INCNN_FAMILY=6.
TESTS_V6=(passthrough.sh codecs.sh handshake.sh netem.sh sframe.sh
	fragments.sh exthdr.sh malformed.sh window.sh urgent.sh md5.sh)
# INCNN_FAMILIES="4 6": every script named (or of the default list) once
# per family, IPv4 first; unset: the default list over IPv4 and TESTS_V6
# over IPv6, or the scripts named over INCNN_FAMILY (default 4). A name
# 4:NAME.sh or 6:NAME.sh runs over that family only.
if [ $# -gt 0 ]; then
	TESTS=()
	TESTS_V6=()
	only4=()
	only6=()
	for a in "$@"; do
		case $a in
		4:*) only4+=("${a#4:}") ;;
		6:*) only6+=("${a#6:}") ;;
		*) TESTS+=("$a") ;;
		esac
	done
fi
if [ -n "${INCNN_FAMILIES:-}" ]; then
	TESTS_V6=()
	for f in $INCNN_FAMILIES; do
		case $f in
		4) ;;
		6) TESTS_V6=("${TESTS[@]}") ;;
		*) echo "run.sh: INCNN_FAMILIES: 4 and/or 6, not $f" >&2; exit 1 ;;
		esac
	done
	case " $INCNN_FAMILIES " in *" 4 "*) ;; *) TESTS=() ;; esac
elif [ "${INCNN_FAMILY:-4}" = 6 ]; then
	TESTS_V6=("${TESTS[@]}")
	TESTS=()
fi
if [ $# -gt 0 ]; then
	TESTS+=("${only4[@]}")
	TESTS_V6+=("${only6[@]}")
fi

# The runner wants BASE_DIR/kselftest/ (its helpers) and the test
# directory below BASE_DIR (for its settings file): build that layout in
# the VM's tmpfs with symlinks. The IPv6 pass runs from BASE_DIR/net6:
# wrappers that run each script with INCNN_FAMILY=6 (its TAP lines say
# "selftests: net6: NAME.sh").
base=$(mktemp -d /tmp/incnn-ksft.XXXXXX)
trap 'rm -rf "$base"' EXIT
ln -s "$NET_DIR" "$base/net"
mkdir "$base/net6"
cp "$NET_DIR/settings" "$base/net6/" 2>/dev/null
paths=()
for t in "${TESTS[@]}"; do
	paths+=("$base/net/$(basename "$t")")
done
paths6=()
for t in "${TESTS_V6[@]}"; do
	t=$(basename "$t")
	printf '#!/bin/sh\nINCNN_FAMILY=6 exec %q/%q "$@"\n' "$NET_DIR" "$t" \
		>"$base/net6/$t"
	chmod +x "$base/net6/$t"
	paths6+=("$base/net6/$t")
done

# run_dir DIR PATH...: the scripts, from DIR, through the runner or its
# small equivalent
run_dir() {
	local dir=$1 n=0 limit p
	shift
	[ $# -gt 0 ] || return 0
	if [ -r "$KSFT/kselftest/runner.sh" ] && [ -z "${INCNN_TEST_TIMEOUT:-}" ]; then
		[ -e "$base/kselftest" ] || ln -s "$KSFT/kselftest" "$base/kselftest"
		(
			cd "$base/$dir" || exit 1
			set +u # the runner is not written for nounset
			export BASE_DIR=$base
			# shellcheck source=/dev/null
			. "$base/kselftest/runner.sh"
			run_many "$@"
		)
		return
	fi
	echo "TAP version 13"
	echo "1..$#"
	# the runner's limit per script: selftests/net/settings, or
	# INCNN_TEST_TIMEOUT (seconds; make check-debug's slower kernel)
	limit=${INCNN_TEST_TIMEOUT:-$(sed -n 's/^timeout=//p' "$NET_DIR/settings" 2>/dev/null)}
	limit=${limit:-600}
	for p in "$@"; do
		n=$((n + 1))
		echo "# selftests: $dir: $(basename "$p")"
		if (cd "$base/$dir" && timeout "$limit" "$p") 2>&1 | sed 's/^/# /'; [ "${PIPESTATUS[0]}" = 0 ]; then
			echo "ok $n selftests: $dir: $(basename "$p")"
		else
			echo "not ok $n selftests: $dir: $(basename "$p")"
		fi
	done
}

log=$base/tap.log
start=$(date +%s)
{
	INCNN_FAMILY=4 run_dir net "${paths[@]}"
	INCNN_FAMILY=6 run_dir net6 "${paths6[@]}"
} 2>&1 | tee "$log"
echo "# run.sh: $(($(date +%s) - start)) s"
[ "$(grep -c -E '^ok [0-9]+ selftests: ' "$log")" = "$((${#paths[@]} + ${#paths6[@]}))" ]
