#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# repeat.sh - run each host suite of make check N times in a row and count,
# per suite, the rounds with a failure: a flaky test shows up here before
# it shows up in CI. Needs make check's build (tools, tools-asan, ksft,
# the selftests binaries, python) in $INCNN_BUILD (default build/).
#
#   scripts/check/repeat.sh [-n ROUNDS] [SUITE...]
#	SUITE: codec collective train incctl python seeds docs wireshark
#	(default all). Logs of failed rounds: $INCNN_BUILD/logs/repeat/.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${INCNN_BUILD:-$src/build}
export INCNN_BUILD=$build
rounds=20
if [ "${1:-}" = -n ]; then
	rounds=${2:?-n needs a number}
	shift 2
fi
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "repeat.sh: bad -n $rounds" >&2; exit 2; }
suites=("$@")
[ ${#suites[@]} -gt 0 ] ||
	suites=(codec collective train incctl python seeds docs wireshark)
logs=$build/logs/repeat
mkdir -p "$logs"
py() { PYTHONPATH="$build/python" /usr/bin/python3 "$@"; }

# ksft DIR: the kselftest directory's tests through the runner
ksft() {
	mkdir -p "$build/$1"
	make -s -C "$src/$1" KSFT="$build/ksft" OUTPUT="$build/$1" \
		INCNN_BUILD="$build" run_tests 2>&1
}

# run_suite NAME: its output on stdout; fails when any of its tests fails
run_suite() {
	case $1 in
	codec | collective | train) ksft "selftests/$1" ;;
	incctl)
		"$src/selftests/incctl/test-cli.sh" "$build/asan/bin/incctl" &&
			"$src/selftests/incctl/test-fake.sh" "$build/asan/test/incctl-fake" &&
			"$build/asan/test/json-test" ;;
	python)
		py "$src/selftests/python/test_incnn_torch.py" &&
			py "$src/selftests/python/test_lgc.py" &&
			py "$src/selftests/python/test_gradiveq.py" ;;
	seeds)
		py "$src/selftests/seeds/test_seeds_report.py" &&
			py "$src/selftests/demo/test_tta_table.py" ;;
	docs)
		py "$src/selftests/docs/test_links.py" &&
			py "$src/scripts/check/links.py" ;;
	wireshark) py "$src/selftests/wireshark/test_incnn_lua.py" ;;
	*) echo "repeat.sh: no suite $1" >&2; return 2 ;;
	esac
}

# a run failed if it exited non-zero or printed a failed TAP/KTAP line
failed_run() { # rc log
	[ "$1" != 0 ] || grep -qE '^(# )?not ok |Totals: pass:[0-9]+ fail:[1-9]' "$2"
}

total_bad=0
for s in "${suites[@]}"; do
	bad=0 t0=$SECONDS
	for r in $(seq 1 "$rounds"); do
		log=$logs/$s.$r.log
		run_suite "$s" >"$log" 2>&1
		if failed_run $? "$log"; then
			bad=$((bad + 1))
			echo "repeat: $s round $r FAILED:" \
				"$(grep -m3 -E 'not ok' "$log" | tr '\n' ' ')" >&2
		else
			rm -f "$log"
		fi
	done
	echo "repeat: $s: $((rounds - bad)) of $rounds rounds passed" \
		"($((SECONDS - t0)) s)"
	total_bad=$((total_bad + bad))
done
[ "$total_bad" = 0 ]
