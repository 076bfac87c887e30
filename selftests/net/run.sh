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
#   lab/vm.sh -- selftests/net/run.sh [TEST.sh...]
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
	sframe-inject.sh wireshark.sh)
[ $# -eq 0 ] || TESTS=("$@")

# The runner wants BASE_DIR/kselftest/ (its helpers) and the test
# directory below BASE_DIR (for its settings file): build that layout in
# the VM's tmpfs with symlinks.
base=$(mktemp -d /tmp/incnn-ksft.XXXXXX)
trap 'rm -rf "$base"' EXIT
ln -s "$NET_DIR" "$base/net"
paths=()
for t in "${TESTS[@]}"; do
	paths+=("$base/net/$(basename "$t")")
done

log=$base/tap.log
start=$(date +%s)
if [ -r "$KSFT/kselftest/runner.sh" ] && [ -z "${INCNN_TEST_TIMEOUT:-}" ]; then
	ln -s "$KSFT/kselftest" "$base/kselftest"
	(
		cd "$base/net" || exit 1
		set +u # the runner is not written for nounset
		export BASE_DIR=$base
		# shellcheck source=/dev/null
		. "$base/kselftest/runner.sh"
		run_many "${paths[@]}"
	) 2>&1 | tee "$log"
else
	echo "TAP version 13"
	echo "1..${#paths[@]}"
	n=0
	# the runner's limit per script: selftests/net/settings, or
	# INCNN_TEST_TIMEOUT (seconds; make check-debug's slower kernel)
	limit=${INCNN_TEST_TIMEOUT:-$(sed -n 's/^timeout=//p' "$NET_DIR/settings" 2>/dev/null)}
	limit=${limit:-600}
	for p in "${paths[@]}"; do
		n=$((n + 1))
		echo "# selftests: net: $(basename "$p")"
		if (cd "$base/net" && timeout "$limit" "$p") 2>&1 | sed 's/^/# /'; [ "${PIPESTATUS[0]}" = 0 ]; then
			echo "ok $n selftests: net: $(basename "$p")"
		else
			echo "not ok $n selftests: net: $(basename "$p")"
		fi
	done 2>&1 | tee "$log"
fi
echo "# run.sh: $(($(date +%s) - start)) s"
[ "$(grep -c -E '^ok [0-9]+ selftests: ' "$log")" = "${#paths[@]}" ]
