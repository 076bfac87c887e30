#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fn-length.sh [-n N] [PATH...]: the N (default 10) longest C functions
# under PATH (default userspace/), as "LINES FILE:START FUNCTION", longest
# first. Lengths come from universal-ctags' end: field (first line of the
# definition to its closing brace, inclusive).
set -eu
n=10
if [ "${1:-}" = -n ]; then
	n=$2
	shift 2
fi
[ $# -gt 0 ] || set -- userspace
git ls-files -- "$@" | grep '\.c$' |
	xargs ctags --kinds-C=f --fields=+ne --output-format=u-ctags -f - |
	awk -F'\t' '{
		s = e = 0
		for (i = 4; i <= NF; i++) {
			if ($i ~ /^line:/) s = substr($i, 6)
			if ($i ~ /^end:/) e = substr($i, 5)
		}
		if (s && e) printf "%d %s:%d %s\n", e - s + 1, $2, s, $1
	}' | sort -k1,1nr -k2 | head -n "$n"
