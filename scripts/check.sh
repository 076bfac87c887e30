#!/bin/bash
# make check: install what is missing, build everything, run every test
# that exists, and end with the line "N passed, N failed".
#
# Test counts: each kselftest harness case, each case of a shell test, and
# each fuzzer smoke run counts as one test.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
build=${INCNN_BUILD:-$src/build}
logs=$build/logs
export INCNN_BUILD=$build
mkdir -p "$logs"
cd "$src" || exit 1

passed=0
failed=0
note() { printf '== %s\n' "$*"; }

# count_tap LOG: add the results of a kselftest runner log.
count_tap() {
	local p f
	read -r p f < <(awk '
		/Totals: pass:/ {
			match($0, /pass:[0-9]+/); cp = substr($0, RSTART + 5, RLENGTH - 5)
			match($0, /fail:[0-9]+/); cf = substr($0, RSTART + 5, RLENGTH - 5)
			seen = 1; next
		}
		/^(not )?ok [0-9]+ selftests:/ {
			bad = ($1 == "not")
			if (seen) { P += cp; F += cf; if (bad && cf == 0) F++ }
			else if (bad) F++; else P++
			seen = 0
		}
		END { print P + 0, F + 0 }' "$1")
	passed=$((passed + p))
	failed=$((failed + f))
	printf '   %d passed, %d failed (%s)\n' "$p" "$f" "$1"
}

# count_ktap LOG: add the "# Totals:" line of one test program's log.
count_ktap() {
	local p f
	read -r p f < <(sed -n 's/.*Totals: pass:\([0-9]*\) fail:\([0-9]*\).*/\1 \2/p' "$1" | tail -n 1)
	if [ -z "${p:-}" ]; then
		p=0 f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	printf '   %d passed, %d failed (%s)\n' "$p" "$f" "$1"
}

# step NAME CMD...: one test that passes when CMD exits 0.
step() {
	local name=$1 log=$logs/$1.log
	shift
	if "$@" >"$log" 2>&1; then
		passed=$((passed + 1))
		printf '   ok   %s\n' "$name"
	else
		failed=$((failed + 1))
		printf '   FAIL %s (log: %s)\n' "$name" "$log"
		tail -n 20 "$log" | sed 's/^/   | /'
	fi
}

finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

note "dependencies"
if ! "$src/scripts/deps.sh" host kmod vm; then
	failed=$((failed + 1))
	finish
fi

note "build (userspace, ASan/UBSan, kselftest framework)"
if ! make -s -C "$src" BUILD="$build" tools tools-asan ksft fuzzers \
		>"$logs/build.log" 2>&1; then
	cat "$logs/build.log"
	failed=$((failed + 1))
	finish
fi
mkdir -p "$build/selftests"
if ! make -s -C "$src/selftests" KSFT="$build/ksft" \
		OUTPUT="$build/selftests" INCNN_BUILD="$build" all \
		>"$logs/selftests-build.log" 2>&1; then
	cat "$logs/selftests-build.log"
	failed=$((failed + 1))
	finish
fi

mkdir -p "$build/selftests/collective"
if ! make -s -C "$src/selftests/collective" KSFT="$build/ksft" \
		OUTPUT="$build/selftests/collective" INCNN_BUILD="$build" all \
		>"$logs/collective-build.log" 2>&1; then
	cat "$logs/collective-build.log"
	failed=$((failed + 1))
	finish
fi

note "host selftests (kselftest runner, ASan/UBSan)"
make -s -C "$src/selftests" KSFT="$build/ksft" OUTPUT="$build/selftests" \
	INCNN_BUILD="$build" run_tests >"$logs/selftests.log" 2>&1
grep -E '^(not )?ok ' "$logs/selftests.log" | sed 's/^/   /'
count_tap "$logs/selftests.log"

note "collective library (ring allreduce on 127.0.0.1, ASan/UBSan)"
make -s -C "$src/selftests/collective" KSFT="$build/ksft" \
	OUTPUT="$build/selftests/collective" INCNN_BUILD="$build" run_tests \
	>"$logs/collective.log" 2>&1
grep -E '^(not )?ok ' "$logs/collective.log" | sed 's/^/   /'
count_tap "$logs/collective.log"

note "incctl (no kernel: argument checks; fake kernel: netlink and output)"
for t in test-cli:incctl test-fake:incctl-fake; do
	"$src/userspace/incctl/${t%%:*}.sh" "$build/asan/incctl/${t#*:}" \
		>"$logs/${t%%:*}.log" 2>&1
	count_ktap "$logs/${t%%:*}.log"
done
"$build/asan/incctl/json-test" >"$logs/json-test.log" 2>&1
count_ktap "$logs/json-test.log"

note "fuzz smoke (libFuzzer, seed corpus + ${FUZZ_SMOKE_SECONDS:-10} s each)"
for f in "$build"/fuzz/bin/fuzz_*; do
	name=$(basename "$f")
	step "$name" "$src/scripts/fuzz.sh" "$build" \
		"${FUZZ_SMOKE_SECONDS:-10}" "$name"
done

note "benchmark smoke (incnn-bench --quick)"
step bench-quick "$build/rel/bin/incnn-bench" --quick

note "kernel module ($("$src/scripts/kabi.sh"))"
step module-build make -C "/usr/src/linux-headers-$("$src/scripts/kabi.sh")" \
	M="$src" modules
step checkpatch "$src/scripts/kernel-lint.sh" checkpatch
step sparse "$src/scripts/kernel-lint.sh" sparse

note "datapath tests in the VM (QEMU/TCG, one boot)"
"$src/selftests/net/vm-check.sh" >"$logs/vm-check.log" 2>&1
grep -E '^(not )?ok ' "$logs/vm-check.log" | sed 's/^/   /' | tail -n 60
count_ktap "$logs/vm-check.log"

finish
