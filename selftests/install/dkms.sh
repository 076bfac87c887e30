#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The module through DKMS, as `make dkms-install` does it, but in a
# scratch tree (dkms --sourcetree/--dkmstree) and for Debian's headers
# (scripts/check/kabi.sh): `make dkms-src` copies exactly the module's
# tracked sources, `dkms add` and `dkms build` succeed and the built
# incnn.ko is for that kernel. Nothing is installed or loaded. KTAP.
#
#   selftests/install/dkms.sh
set -u
. "$(dirname "$0")/../ktap_lib.sh"

abi=$("$top/scripts/check/kabi.sh") || exit 1
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
trees=(--sourcetree "$tmp/src" --dkmstree "$tmp/tree")
echo "KTAP version 1"
echo "1..5"
if ! command -v dkms >/dev/null; then
	echo "not ok 1 dkms is not installed (scripts/check/deps.sh kmod)"
	echo "# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0"
	exit 1
fi
mkdir -p "$tmp/src" "$tmp/tree"
check "make dkms-src" make -s -C "$top" DKMS_SRC="$tmp/src/incnn-$ver" dkms-src

# the copy is the tracked sources, no build products (when this is a git
# checkout; a tarball has nothing else to compare with)
same_sources() {
	(cd "$tmp/src/incnn-$ver" && find . -type f | sed 's|^\./||' | sort) >"$tmp/got"
	git -C "$top" ls-files Kbuild dkms.conf kmod uapi | sort >"$tmp/want"
	diff -u "$tmp/want" "$tmp/got"
}
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	check "DKMS source tree is the module's tracked files" same_sources
else
	skip_test "not a git checkout: DKMS source tree not compared"
fi
check "dkms add" dkms add -m incnn -v "$ver" "${trees[@]}"
check "dkms build -k $abi" dkms build -m incnn -v "$ver" -k "$abi" "${trees[@]}" \
	--kernelsourcedir "/usr/src/linux-headers-$abi"
ko=$tmp/tree/incnn/$ver/$abi/$(uname -m)/module/incnn.ko
vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null)
check "built incnn.ko is for $abi" [ "${vermagic%% *}" = "$abi" ]
[ "${vermagic%% *}" = "$abi" ] || echo "# $ko: vermagic '$vermagic'"

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ "$fail" -eq 0 ]
