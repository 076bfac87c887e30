#!/bin/bash
# make check: install what is missing, build everything, run every test
# that exists, and end with the line "N passed, N failed".
#
# Test counts: each kselftest harness case, each case of a shell test, and
# each fuzzer smoke run counts as one test.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
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

# must NAME CMD...: a build step; when it fails, show its log and stop.
must() {
	local log=$logs/$1.log
	shift
	if ! "$@" >"$log" 2>&1; then
		cat "$log"
		failed=$((failed + 1))
		finish
	fi
}

# ksft_dir DIR TARGET...: make a kselftest directory of the repo (lib.mk),
# its binaries in $build/DIR.
ksft_dir() {
	local dir=$1
	shift
	mkdir -p "$build/$dir"
	make -s -C "$src/$dir" KSFT="$build/ksft" OUTPUT="$build/$dir" \
		INCNN_BUILD="$build" "$@"
}

# ksft_run DIR LOGNAME: run its tests with the kselftest runner and count.
ksft_run() {
	local log=$logs/$2.log
	ksft_dir "$1" run_tests >"$log" 2>&1
	grep -E '^(not )?ok ' "$log" | sed 's/^/   /'
	count_tap "$log"
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
if ! "$src/scripts/check/deps.sh" host kmod vm torch; then
	failed=$((failed + 1))
	finish
fi

note "build (userspace, ASan/UBSan, kselftest framework)"
must build make -s -C "$src" BUILD="$build" tools tools-asan ksft fuzzers
must codec-build ksft_dir selftests/codec all
must collective-build ksft_dir selftests/collective all
must train-build ksft_dir selftests/train all

note "host selftests (kselftest runner, ASan/UBSan)"
ksft_run selftests/codec codec

note "collective library (ring allreduce on 127.0.0.1, ASan/UBSan)"
ksft_run selftests/collective collective

note "trainer (incnn-train: MLP gradient check, determinism, replicas; ASan/UBSan)"
ksft_run selftests/train train

note "incctl (no kernel: argument checks; fake kernel: netlink and output)"
for t in test-cli:bin/incctl test-fake:test/incctl-fake; do
	"$src/selftests/incctl/${t%%:*}.sh" "$build/asan/${t#*:}" \
		>"$logs/${t%%:*}.log" 2>&1
	count_ktap "$logs/${t%%:*}.log"
done
"$build/asan/test/json-test" >"$logs/json-test.log" 2>&1
count_ktap "$logs/json-test.log"

note "fuzz smoke (libFuzzer, seed corpus + ${FUZZ_SMOKE_SECONDS:-10} s each)"
for f in "$build"/fuzz/bin/fuzz_*; do
	name=$(basename "$f")
	step "$name" "$src/scripts/check/fuzz.sh" "$build" \
		"${FUZZ_SMOKE_SECONDS:-10}" "$name"
done

note "python package (incnn.torch: DDP hook on 4 local ranks, gloo; incnn.launch)"
must python-build make -s -C "$src" BUILD="$build" python
PYTHONPATH="$build/python" /usr/bin/python3 \
	"$src/selftests/python/test_incnn_torch.py" >"$logs/python.log" 2>&1
grep -E '^(not )?ok ' "$logs/python.log" | sed 's/^/   /'
count_ktap "$logs/python.log"
PYTHONPATH="$build/python" /usr/bin/python3 \
	"$src/selftests/python/test_lgc.py" >"$logs/python-lgc.log" 2>&1
grep -E '^(not )?ok ' "$logs/python-lgc.log" | sed 's/^/   /'
count_ktap "$logs/python-lgc.log"
PYTHONPATH="$build/python" /usr/bin/python3 \
	"$src/selftests/python/test_gradiveq.py" >"$logs/python-gvq.log" 2>&1
grep -E '^(not )?ok ' "$logs/python-gvq.log" | sed 's/^/   /'
count_ktap "$logs/python-gvq.log"

note "make seeds' report generator (fixed sample input, exact table lines)"
/usr/bin/python3 "$src/selftests/seeds/test_seeds_report.py" \
	>"$logs/seeds-report.log" 2>&1
grep -E '^(not )?ok ' "$logs/seeds-report.log" | sed 's/^/   /'
count_ktap "$logs/seeds-report.log"

note "make demo's time-to-accuracy table (fixed tta.json, exact table lines)"
/usr/bin/python3 "$src/selftests/demo/test_tta_table.py" \
	>"$logs/tta-table.log" 2>&1
grep -E '^(not )?ok ' "$logs/tta-table.log" | sed 's/^/   /'
count_ktap "$logs/tta-table.log"

note "documentation links (every relative link and #anchor of the tracked *.md)"
/usr/bin/python3 "$src/selftests/docs/test_links.py" >"$logs/links-test.log" 2>&1
grep -E '^(not )?ok ' "$logs/links-test.log" | sed 's/^/   /'
count_ktap "$logs/links-test.log"
step links /usr/bin/python3 "$src/scripts/check/links.py"

note "Wireshark dissector (contrib/wireshark/incnn.lua: tshark on a written pcap)"
/usr/bin/python3 "$src/selftests/wireshark/test_incnn_lua.py" >"$logs/wireshark.log" 2>&1
grep -E '^(not )?ok ' "$logs/wireshark.log" | sed 's/^/   /'
count_ktap "$logs/wireshark.log"

note "benchmark smoke (incnn-bench --quick)"
step bench-quick "$build/rel/bin/incnn-bench" --quick

note "kernel module ($("$src/scripts/check/kabi.sh"))"
step module-build make -C "/usr/src/linux-headers-$("$src/scripts/check/kabi.sh")" \
	M="$src" modules
step checkpatch "$src/scripts/check/kernel-lint.sh" checkpatch
step sparse "$src/scripts/check/kernel-lint.sh" sparse

note "packaging (make install DESTDIR=, dkms build, pip install; scratch trees, nothing loaded)"
for t in install-tree dkms pip; do
	"$src/selftests/install/$t.sh" >"$logs/install-$t.log" 2>&1
	grep -E '^(not )?ok ' "$logs/install-$t.log" | sed 's/^/   /'
	count_ktap "$logs/install-$t.log"
done

note "datapath tests in the VM (QEMU/TCG, one boot)"
rm -rf "$build/vm/net-out/wireshark"
VM_CHECK_TIMEOUT=${VM_CHECK_TIMEOUT:-2400} "$src/selftests/net/vm-check.sh" >"$logs/vm-check.log" 2>&1
grep -E '^(not )?ok ' "$logs/vm-check.log" | sed 's/^/   /' | tail -n 60
count_ktap "$logs/vm-check.log"

note "Wireshark dissector on the VM's capture of the module (selftests/net/wireshark.sh)"
"$src/selftests/wireshark/capture.sh" "$build/vm/net-out/wireshark" \
	>"$logs/wireshark-capture.log" 2>&1
grep -E '^(not )?ok ' "$logs/wireshark-capture.log" | sed 's/^/   /'
count_ktap "$logs/wireshark-capture.log"

finish
