#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Codec speed before/after: builds incnn-bench with the codecs of COMMIT
# (git archive into a temporary directory) and with those of the current
# tree, both from the current tree's incnn-bench.c (the same driver and
# timing on both sides; it needs only the codec API, which both have),
# runs the two alternately ROUNDS times on the same data, and prints, per
# codec, path, parameter and size, the median over the rounds of each
# side's throughput as a ratio to memcpy measured in the same run (the
# machine may be shared: only same-run ratios compare), and new/old.
#
#   scripts/bench/codec-ab.sh [-r ROUNDS] [-k] COMMIT [incnn-bench options]
#   make bench-ab BASE=COMMIT
#
# Default options: --sizes 1448,64K --dist laplace --scale 1e-3
# --repeats 3 --cpu-time. -k keeps the temporary directory.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
rounds=5
keep=0
usage() {
	echo "usage: codec-ab.sh [-r ROUNDS] [-k] COMMIT [incnn-bench options]" >&2
	exit 2
}
while getopts r:kh o; do
	case $o in
	r) rounds=$OPTARG ;;
	k) keep=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
base=$1
shift
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "codec-ab.sh: bad -r $rounds" >&2; exit 2; }
rev=$(git -C "$src" rev-parse --verify -q "$base^{commit}") ||
	{ echo "codec-ab.sh: $base: not a commit" >&2; exit 1; }
[ $# -gt 0 ] ||
	set -- --sizes 1448,64K --dist laplace --scale 1e-3 --repeats 3 --cpu-time

tmp=$(mktemp -d /tmp/codec-ab.XXXXXX)
[ $keep = 1 ] || trap 'rm -rf "$tmp"' EXIT
echo "# building incnn-bench: base ${rev:0:12} and the current tree" >&2
git -C "$src" archive "$rev" | tar -x -C "$tmp" -f - ||
	{ echo "codec-ab.sh: git archive $rev failed" >&2; exit 1; }
cp "$src/userspace/tools/incnn-bench.c" "$tmp/userspace/tools/incnn-bench.c"
old=$tmp/build/rel/bin/incnn-bench
new=$tmp/new/rel/bin/incnn-bench
make -s -C "$tmp" BUILD="$tmp/build" -j2 "$old" >"$tmp/build-old.log" 2>&1 ||
	{ tail -n 20 "$tmp/build-old.log" >&2; exit 1; }
make -s -C "$src" BUILD="$tmp/new" -j2 "$new" >"$tmp/build-new.log" 2>&1 ||
	{ tail -n 20 "$tmp/build-new.log" >&2; exit 1; }

for r in $(seq "$rounds"); do
	echo "# round $r/$rounds" >&2
	"$old" --json "$@" >"$tmp/old.$r.json" 2>/dev/null
	"$new" --json "$@" >"$tmp/new.$r.json" 2>/dev/null
done

python3 - "$tmp" "$rounds" "${rev:0:12}" "$*" <<'PY'
import json
import statistics
import sys

tmp, rounds, rev, opts = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
runs = {}
for side in ("old", "new"):
    for r in range(1, rounds + 1):
        with open("%s/%s.%d.json" % (tmp, side, r)) as f:
            for row in json.load(f):
                key = (row["codec"], row["path"], row["param"],
                       "%s:%g" % (row["dist"], row["scale"]), row["size"])
                d = runs.setdefault(key, {}).setdefault(side, ([], []))
                d[0].append(row["enc_vs_memcpy"])
                d[1].append(row["dec_vs_memcpy"])

print("# base %s vs the current tree, %d alternating rounds, options: %s"
      % (rev, rounds, opts))
print("# ratio = GB/s / memcpy GB/s of the same run; median of the rounds")
print("| codec | path | param | data | size | enc old | enc new | enc new/old"
      " | dec old | dec new | dec new/old |")
print("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|")
for key, d in runs.items():
    if key[0] == "memcpy" or "old" not in d or "new" not in d:
        continue
    eo, en = statistics.median(d["old"][0]), statistics.median(d["new"][0])
    do, dn = statistics.median(d["old"][1]), statistics.median(d["new"][1])
    print("| %s | %s | %s | %s | %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |"
          % (key + (eo, en, en / eo if eo else 0, do, dn,
                    dn / do if do else 0)))
PY
