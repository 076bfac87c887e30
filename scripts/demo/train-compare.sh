#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# train-compare.sh LOG_A LOG_B N: whether two incnn-train logs have
# bit-identical training losses for iterations 1..N (the hex float of each
# "iter" line), and, where both logs give the weight digest at the same
# iteration ("epoch", "stop" lines) within 1..N, the same digest.
#
# Exit 0: identical ("train-compare: N iterations bit-identical");
# 1: a difference (the first one is printed) or a log with fewer than N
# iterations; 2: usage.
set -u

if [ $# -ne 3 ] || ! [[ $3 =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: train-compare.sh LOG_A LOG_B N (N >= 1)" >&2
	exit 2
fi
for f in "$1" "$2"; do
	[ -r "$f" ] && [ -s "$f" ] ||
		{ echo "train-compare: cannot read $f, or it is empty" >&2; exit 1; }
done

awk -v n="$3" -v A="$1" -v B="$2" '
FNR == 1 { file++ }
$1 == "iter" && $2 <= n { loss[file, $2] = $6; dec[file, $2] = $7; cnt[file]++ }
$1 == "epoch" && $4 + 0 <= n {
	for (i = 1; i < NF; i++) if ($i == "digest") dig[file, $4] = $(i + 1)
}
$1 == "stop" && $3 + 0 <= n {
	for (i = 1; i < NF; i++) if ($i == "digest") dig[file, $3] = $(i + 1)
}
END {
	for (f = 1; f <= 2; f++)
		if (cnt[f] < n) {
			printf "train-compare: %s has %d of the %d iterations\n",
				f == 1 ? A : B, cnt[f] + 0, n
			exit 1
		}
	for (i = 1; i <= n; i++) {
		if (loss[1, i] != loss[2, i]) {
			printf "train-compare: iteration %d differs: %s (%s) vs %s (%s)\n",
				i, loss[1, i], dec[1, i], loss[2, i], dec[2, i]
			exit 1
		}
		if ((1, i) in dig && (2, i) in dig && dig[1, i] != dig[2, i]) {
			printf "train-compare: weights after iteration %d differ: digest %s vs %s\n",
				i, dig[1, i], dig[2, i]
			exit 1
		}
		if ((1, i) in dig && (2, i) in dig)
			ndig++
	}
	printf "train-compare: %d iterations bit-identical", n
	if (ndig)
		printf " (and %d weight digest%s)", ndig, (ndig > 1 ? "s" : "")
	printf "\n"
}' "$1" "$2"
