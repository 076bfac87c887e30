#!/bin/sh
# Print the ABI (e.g. 6.1.0-56-amd64) of the kernel that Debian's
# linux-image-amd64 metapackage installs. Never `uname -r`: the running
# kernel is not the one we build for or boot in the VM.
set -eu
dep=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null) || {
	echo "kabi.sh: linux-image-amd64 is not installed" >&2
	exit 1
}
abi=$(printf '%s\n' "$dep" | tr ',' '\n' | sed -n 's/^ *linux-image-\([^ ]*\).*/\1/p' | head -n 1)
[ -n "$abi" ] || { echo "kabi.sh: cannot resolve the ABI from '$dep'" >&2; exit 1; }
echo "$abi"
