#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Inside the test VM (scripts/bench/module-ab.sh starts it): ROUNDS
# rounds of selftests/net/iperf3.sh, each round once per VARIANT in
# turn (alternating, same VM, same machine state), and one line per run:
#   ab: ROUND VARIANT plain=R plain-nogso=R marked=R   (Mbit/s)
# A variant is NAME=KO:SIMD[:SF] (the module file, its simd= parameter and
# INCNN_SUPERFRAMES for lab/netns.sh: 0, 1 (default) or omit, for a module
# without the superframes parameter).
#
#   module-ab-vm.sh ROUNDS NAME=KO:SIMD[:SF]...
set -u
rounds=$1
shift
NET=$(cd "$(dirname "$0")/../../selftests/net" && pwd)
for r in $(seq "$rounds"); do
	for v in "$@"; do
		name=${v%%=*} spec=${v#*=}
		for _ in $(seq 240); do
			grep -q '^incnn ' /proc/modules || break
			rmmod incnn 2>/dev/null || sleep 0.25
		done
		IFS=: read -r ko simd sf <<<"$spec"
		out=$(cd "$NET" && INCNN_KO=$ko INCNN_SIMD_PARAM=$simd \
			INCNN_SUPERFRAMES=${sf:-1} timeout 300 ./iperf3.sh 2>&1)
		line="ab: $r $name"
		for m in plain plain-nogso marked; do
			rate=$(sed -n "s/^ok [0-9]* - iperf3 $m run: \([0-9.]*\) .*/\1/p" <<<"$out")
			line+=" $m=${rate:-?}"
		done
		echo "$line"
		dmesg | grep -E 'incnn: codec ' | tail -n 3 | sed 's/^/# /'
		grep -E '^not ok' <<<"$out" | sed 's/^/# /'
	done
done
