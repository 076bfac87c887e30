#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libincnn.so (make: build/rel/lib): the soname, the exported symbols (the
# public incnn_* API, all of collective.h and wfbp.h, nothing else), a
# program linked against it, and what make install-lib puts in DESTDIR
# (library, symlinks, headers, incnn.pc usable by pkg-config).
set -u
. "$(dirname "$0")/../ktap_lib.sh"
lib=$build/rel/lib
need_tool "$lib/libincnn.so.0.1.0" libincnn.so
hdrs="$top/userspace/collective/include/incnn/collective.h
$top/userspace/collective/include/incnn/wfbp.h"

soname() {
	readelf -d "$lib/libincnn.so.0.1.0" | grep -F '(SONAME)' |
		grep -qF '[libincnn.so.0]' &&
	[ "$(readlink "$lib/libincnn.so.0")" = libincnn.so.0.1.0 ] &&
	[ "$(readlink "$lib/libincnn.so")" = libincnn.so.0 ]
}

# the dynamic symbols the library defines
exported() {
	nm -D --defined-only "$lib/libincnn.so.0.1.0" | awk '{ print $3 }' |
		sort
}

only_incnn() {
	exported >"$tmp/syms" && [ -s "$tmp/syms" ] &&
	! grep -v '^incnn_' "$tmp/syms"
}

# every function the public headers declare
all_public() {
	local f missing=0
	exported >"$tmp/syms" || return 1
	# shellcheck disable=SC2086
	for f in $(sed -n 's/^[a-z].*[ *]\(incnn_[a-z0-9_]*\)(.*/\1/p' $hdrs); do
		grep -qx "$f" "$tmp/syms" || { echo "# not exported: $f"; missing=1; }
	done
	[ "$missing" = 0 ]
}

cat >"$tmp/use.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <incnn/collective.h>
#include <incnn/wfbp.h>

int main(void)
{
	struct incnn_comm_config cfg;

	incnn_comm_config_init(&cfg);
	if (incnn_sched_parse("mgwfbp") < 0 || !incnn_model_name(0))
		return 1;
	printf("%s\n", incnn_sched_name(incnn_sched_parse("mgwfbp")));
	return 0;
}
C

linked() {
	cc -std=c11 -Wall -Werror -I"$top/userspace/collective/include" \
		"$tmp/use.c" -L"$lib" -lincnn -o "$tmp/use" &&
	readelf -d "$tmp/use" | grep -F '(NEEDED)' | grep -qF '[libincnn.so.0]' &&
	[ "$(LD_LIBRARY_PATH=$lib "$tmp/use")" = mgwfbp ]
}

installed() {
	local d=$tmp/inst p
	make -s -C "$top" BUILD="$build" DESTDIR="$d" PREFIX=/usr \
		install-lib >/dev/null || return 1
	p=$d/usr
	[ -f "$p/lib/libincnn.so.0.1.0" ] &&
	[ "$(readlink "$p/lib/libincnn.so.0")" = libincnn.so.0.1.0 ] &&
	[ "$(readlink "$p/lib/libincnn.so")" = libincnn.so.0 ] &&
	cmp "$p/include/incnn/collective.h" \
		"$top/userspace/collective/include/incnn/collective.h" &&
	cmp "$p/include/incnn/wfbp.h" \
		"$top/userspace/collective/include/incnn/wfbp.h" &&
	grep -qx 'prefix=/usr' "$p/lib/pkgconfig/incnn.pc" &&
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Werror "$tmp/use.c" $(PKG_CONFIG_SYSROOT_DIR=$d \
		PKG_CONFIG_LIBDIR=$p/lib/pkgconfig pkg-config --cflags --libs \
		incnn) -o "$tmp/use2" &&
	[ "$(LD_LIBRARY_PATH=$p/lib "$tmp/use2")" = mgwfbp ]
}

check "soname libincnn.so.0, symlinks .so.0 and .so" soname
check "exports only incnn_* symbols" only_incnn
check "exports every function of collective.h and wfbp.h" all_public
check "a program linked with -lincnn runs" linked
check "make install-lib: library, symlinks, headers, incnn.pc" installed

echo "# Totals: pass:$((n - fail - skip)) fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail = 0 ]
