#!/bin/sh
# Extract the kselftest framework (lib.mk, kselftest_harness.h,
# kselftest.h, the runner) from Debian's linux-source-6.1 into DIR.
# Usage: ksft-extract.sh DIR
set -eu
dest=${1:?usage: ksft-extract.sh DIR}
tarball=$(ls /usr/src/linux-source-6.1.tar.* 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
	echo "ksft-extract: /usr/src/linux-source-6.1.tar.* not found (apt-get install linux-source-6.1)" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
top=linux-source-6.1/tools/testing/selftests
tar -C "$tmp" -xf "$tarball" \
	"$top/lib.mk" "$top/kselftest_harness.h" "$top/kselftest.h" \
	"$top/kselftest" "$top/run_kselftest.sh"
mkdir -p "$dest"
cp -r "$tmp/$top/." "$dest/"
echo "ksft-extract: kselftest framework from $(basename "$tarball") in $dest"
