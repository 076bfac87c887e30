#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make install DESTDIR=<scratch> PREFIX=/usr/local, against Debian's
# headers (scripts/check/kabi.sh): the tree it writes, file by file, with
# modes, symlinks, the pkg-config file, the library's soname, the
# module's vermagic, and the installed Python package loading the
# installed library. Never touches the host's own tree. KTAP output.
#
#   selftests/install/install-tree.sh        (after make tools; builds the module)
set -u
. "$(dirname "$0")/../ktap_lib.sh"

abi=$("$top/scripts/check/kabi.sh") || exit 1
kdir=/usr/src/linux-headers-$abi
dest=$tmp/root
pre=usr/local
pysite=$pre/lib/$(/usr/bin/python3 -c \
	'import sys; print("python%d.%d" % sys.version_info[:2])')/dist-packages
echo "KTAP version 1"
echo "1..8"
check "make install DESTDIR=... PREFIX=/$pre" make -s -C "$top" BUILD="$build" \
	DESTDIR="$dest" PREFIX=/$pre KDIR="$kdir" install

# what it must write: derived from the sources, so a new tool or header
# needs no change here
{
	echo "lib/modules/$abi/extra/incnn.ko"
	for f in "$top"/userspace/tools/incnn-*.c; do
		t=${f##*/}
		echo "$pre/bin/${t%.c}"
	done
	for f in "$top"/userspace/collective/include/incnn/*.h; do
		echo "$pre/include/incnn/${f##*/}"
	done
	printf '%s\n' "$pre/lib/libincnn.so" "$pre/lib/libincnn.so.0" \
		"$pre/lib/libincnn.so.0.1.0" "$pre/lib/pkgconfig/incnn.pc" \
		"$pre/sbin/incctl" "$pre/share/man/man8/incctl.8"
	for f in "$top"/userspace/python/incnn/*.py; do
		echo "$pysite/incnn/${f##*/}"
	done
} | sort >"$tmp/want"
(cd "$dest" && find . ! -type d | sed 's|^\./||' | sort) >"$tmp/got"
check "exactly the expected files" diff -u "$tmp/want" "$tmp/got"

modes() {
	local f want bad=0
	while read -r f; do
		case "$f" in
		*/bin/*|*/sbin/*|*.so.*) want=755 ;;
		*) want=644 ;;
		esac
		[ "$(stat -c %a "$dest/$f")" = "$want" ] && continue
		echo "$f: $(stat -c %a "$dest/$f"), want $want"
		bad=1
	done < <(cd "$dest" && find . -type f | sed 's|^\./||')
	return $bad
}
check "file modes (programs and library 0755, the rest 0644)" modes

links="$(readlink "$dest/$pre/lib/libincnn.so") $(readlink "$dest/$pre/lib/libincnn.so.0")"
check "library symlinks" [ "$links" = "libincnn.so.0 libincnn.so.0.1.0" ]

# shellcheck disable=SC2016 # ${prefix} is literal pkg-config syntax
printf '%s\n' "prefix=/$pre" 'libdir=${prefix}/lib' \
	'includedir=${prefix}/include' >"$tmp/pc"
head -n 3 "$dest/$pre/lib/pkgconfig/incnn.pc" >"$tmp/pc.got"
check "incnn.pc prefix" diff -u "$tmp/pc" "$tmp/pc.got"

soname=$(readelf -d "$dest/$pre/lib/libincnn.so.0.1.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
check "soname libincnn.so.0" [ "$soname" = libincnn.so.0 ]

vermagic=$(modinfo -F vermagic "$dest/lib/modules/$abi/extra/incnn.ko" 2>/dev/null)
check "incnn.ko built for $abi" [ "${vermagic%% *}" = "$abi" ]

# the installed package finds the installed library (PREFIX/lib) by itself
got=$(env -u INCNN_LIBRARY PYTHONPATH="$dest/$pysite" /usr/bin/python3 -c \
	'import incnn._lib as l; print(l.lib._name)' 2>&1)
check "installed incnn loads $pre/lib/libincnn.so.0" \
	[ "$got" = "$dest/$pre/lib/libincnn.so.0" ]
[ "$got" = "$dest/$pre/lib/libincnn.so.0" ] || echo "# got: $got"

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
[ "$fail" -eq 0 ]
