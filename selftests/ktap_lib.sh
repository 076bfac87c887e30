# SPDX-License-Identifier: GPL-2.0
#
# Shell helpers of the selftests' test scripts (codec/codec_cli.sh,
# collective/allreduce_tool.sh, collective/wfbp_tool.sh,
# train/train_cli.sh). Sourced, after `set -u`:
#
#	. "$(dirname "$0")/../ktap_lib.sh"
#
# Sets top (the repository), build ($INCNN_BUILD, default $top/build),
# tmp (a scratch directory, removed on exit) and the counters n, pass,
# fail and skip; the script prints its own totals line.

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${INCNN_BUILD:-$top/build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 pass=0 fail=0 skip=0

# check DESC COMMAND...: run COMMAND; print "ok N DESC", or "not ok N DESC"
# and the last lines COMMAND wrote (stdout and stderr) as comments
check() {
	local desc=$1
	shift
	n=$((n + 1))
	if "$@" >"$tmp/check.log" 2>&1; then
		pass=$((pass + 1))
		echo "ok $n $desc"
	else
		fail=$((fail + 1))
		echo "not ok $n $desc"
		sed 's/^/# /' "$tmp/check.log" | tail -n 15
	fi
}

# skip_test DESC: "ok N # SKIP DESC"
skip_test() {
	n=$((n + 1)) skip=$((skip + 1))
	echo "ok $n # SKIP $1"
}

# need_tool PATH NAME: unless PATH is an executable, print "not ok 1" and
# exit 1; else name it in a comment
need_tool() {
	if [ -z "$1" ] || [ ! -x "$1" ]; then
		echo "not ok 1 $2 not built (make tools-asan)"
		exit 1
	fi
	echo "# $1"
}

# one_error STATUS NAME COMMAND...: COMMAND exits with STATUS, writes
# nothing on stdout and exactly one line on stderr, "NAME: ..." (echoed)
one_error() {
	local want=$1 name=$2 rc
	shift 2
	"$@" >"$tmp/one_error.out" 2>"$tmp/one_error.err"
	rc=$?
	cat "$tmp/one_error.err"
	[ "$rc" = "$want" ] && [ "$(wc -l <"$tmp/one_error.err")" = 1 ] &&
	[ ! -s "$tmp/one_error.out" ] && grep -q "^$name: " "$tmp/one_error.err"
}

# each_line COMMAND...: COMMAND with the words of each line of stdin
# appended; stop at the first failure, naming its line
each_line() {
	local args
	while IFS= read -r args; do
		# shellcheck disable=SC2086
		"$@" $args || { echo "# for: $args"; return 1; }
	done
}

# json_check FILE PYTHON-EXPR: FILE parses as JSON and EXPR holds, with d
# the document and S its "schedules" by name; else print the document
# (without "layer_table", at most 3000 characters)
json_check() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
S = {s["schedule"]: s for s in d.get("schedules", [])}
ok = eval("(" + sys.argv[2] + ")")
if not ok:
	print(json.dumps({k: v for k, v in d.items() if k != "layer_table"}, indent=1)[:3000])
sys.exit(0 if ok else 1)' "$1" "$2"
}
