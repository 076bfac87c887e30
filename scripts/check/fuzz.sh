#!/bin/sh
# Run libFuzzer harnesses: first over the seed corpus, then for SECONDS.
# Usage: fuzz.sh BUILD_DIR SECONDS FUZZER...
# New inputs go to BUILD_DIR/fuzz/corpus/NAME (not into the repository).
set -eu
build=$1 secs=$2
shift 2
bin=$build/fuzz/bin
corpus=$build/fuzz/corpus
[ -d "$corpus/fuzz_frame" ] && [ -d "$corpus/fuzz_tcpopt" ] ||
	"$bin/gen_corpus" "$corpus"
for name in "$@"; do
	mkdir -p "$corpus/$name" "$build/fuzz/crashes"
	echo "fuzz: $name for $secs s"
	"$bin/$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 \
		-artifact_prefix="$build/fuzz/crashes/$name-" \
		"$corpus/$name"
done
