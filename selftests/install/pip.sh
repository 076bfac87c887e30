#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# pip install ./userspace/python (pyproject.toml, the system's setuptools,
# --no-build-isolation, no network) into a scratch prefix: the package's
# files and metadata, and the installed package loading an installed
# libincnn.so.0 (make install-lib into a scratch root) through the
# dynamic linker. KTAP output.
#
#   selftests/install/pip.sh        (after make tools)
set -u
. "$(dirname "$0")/../ktap_lib.sh"

py=/usr/bin/python3
echo "KTAP version 1"
echo "1..5"

# a copy, so that the in-place build leaves the source tree as it is; the
# host's pip configuration (index, find-links) is not read
cp -r "$top/userspace/python" "$tmp/pkg"
check "pip install --no-build-isolation --no-index" env PIP_CONFIG_FILE=/dev/null \
	"$py" -m pip install --no-build-isolation --no-deps --no-index \
	--disable-pip-version-check --prefix "$tmp/pip" "$tmp/pkg"

init=$(find "$tmp/pip" -path '*/incnn/__init__.py' | head -n 1)
site=${init%/incnn/__init__.py}
files() {
	(cd "$top/userspace/python/incnn" && ls ./*.py) >"$tmp/want"
	(cd "$site/incnn" && ls ./*.py) >"$tmp/got"
	diff -u "$tmp/want" "$tmp/got"
}
check "the package's modules installed" files

version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$top/userspace/python/incnn/__init__.py")
meta() {
	local m
	m=$(ls "$site"/incnn-*.dist-info/METADATA) || return 1
	grep -qx 'Name: incnn' "$m" && grep -qx "Version: $version" "$m"
}
check "metadata: incnn $version" meta

check "make install-lib DESTDIR=... PREFIX=/usr" make -s -C "$top" BUILD="$build" \
	DESTDIR="$tmp/root" PREFIX=/usr install-lib

# which libincnn the installed package mapped: the installed one, found
# by the dynamic linker (nothing else names it)
got=$(env -u INCNN_LIBRARY PYTHONPATH="$site" LD_LIBRARY_PATH="$tmp/root/usr/lib" \
	"$py" -c '
import incnn._lib
for line in open("/proc/self/maps"):
    if "libincnn.so" in line:
        print(line.split()[-1])
        break' 2>&1)
check "installed incnn loads the installed libincnn.so.0" \
	[ "$got" = "$tmp/root/usr/lib/libincnn.so.0.1.0" ]
[ "$got" = "$tmp/root/usr/lib/libincnn.so.0.1.0" ] || echo "# got: $got"

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
