#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# incctl command-line tests that need no kernel module:
#  - every bad command line exits 2 with exactly one line on stderr
#    ("incctl: ...") and nothing on stdout;
#  - help / -h / --help print the usage on stdout and exit 0;
#  - with no incnn module, every valid command exits 1 and prints exactly
#    "incctl: kernel module not loaded (modprobe incnn)" (skipped when the
#    module is loaded or installed on this host).
#
# Usage: test-cli.sh PATH/TO/incctl
# Output: one "ok N - ..." / "not ok N - ..." line per case, then
# "# Totals: pass:P fail:F xfail:0 xpass:0 skip:S error:0". Exit status 1
# if any case failed.
set -u

bin=${1:?usage: test-cli.sh PATH/TO/incctl}
if [ ! -x "$bin" ]; then
	echo "test-cli.sh: $bin is not an executable" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

NOMOD='incctl: kernel module not loaded (modprobe incnn)'
# The "not loaded" cases need a host without the module. Where it is
# installed, the kernel could load it on the first family lookup (genl
# autoload), so those cases are skipped there as well.
no_module_why=
if [ -d /sys/module/incnn ]; then
	no_module_why="the incnn module is loaded"
elif command -v modinfo >/dev/null && modinfo incnn >/dev/null 2>&1; then
	no_module_why="the incnn module is installed (the kernel may autoload it)"
fi

n=0 pass=0 fail=0 skip=0
echo "TAP version 13"

result() { # RESULT(0 = ok) DESCRIPTION [WHY]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		pass=$((pass + 1))
		echo "ok $n - $2"
	else
		fail=$((fail + 1))
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && printf '# %s\n' "$3"
		sed 's/^/#   stderr: /' "$tmp/err"
		sed 's/^/#   stdout: /' "$tmp/out" | head -n 5
	fi
	return 0
}

skipped() { # DESCRIPTION REASON
	n=$((n + 1))
	skip=$((skip + 1))
	echo "ok $n - $1 # SKIP $2"
}

run() { # ARGS...: sets rc; output in $tmp/out, $tmp/err
	"$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
}

nlines() { grep -c '' "$1"; }

# usage DESCRIPTION [-m REGEX] ARGS...: exit 2, one "incctl: " line on
# stderr (matching REGEX), empty stdout.
usage() {
	local desc=$1 re='' why=''
	shift
	if [ "${1:-}" = -m ]; then
		re=$2
		shift 2
	fi
	run "$@"
	if [ "$rc" -ne 2 ]; then
		why="exit status $rc, expected 2"
	elif [ "$(nlines "$tmp/err")" -ne 1 ]; then
		why="$(nlines "$tmp/err") lines on stderr, expected 1"
	elif ! grep -q '^incctl: ' "$tmp/err"; then
		why="stderr does not start with \"incctl: \""
	elif [ -n "$re" ] && ! grep -qE -- "$re" "$tmp/err"; then
		why="stderr does not match /$re/"
	elif [ -s "$tmp/out" ]; then
		why="unexpected output on stdout"
	fi
	[ -z "$why" ]
	result $? "bad input: $desc" "$why"
}

# nomod DESCRIPTION ARGS...: the command line is valid, so it gets as far
# as the kernel: exit 1 and exactly the "not loaded" line.
nomod() {
	local desc=$1 why=''
	shift
	if [ -n "$no_module_why" ]; then
		skipped "no module: $desc" "$no_module_why"
		return
	fi
	run "$@"
	if [ "$rc" -ne 1 ]; then
		why="exit status $rc, expected 1"
	elif [ "$(cat "$tmp/err")" != "$NOMOD" ]; then
		why="stderr is not exactly \"$NOMOD\""
	elif [ -s "$tmp/out" ]; then
		why="unexpected output on stdout"
	fi
	[ -z "$why" ]
	result $? "no module: $desc" "$why"
}

# runtime DESCRIPTION REGEX ARGS...: exit 1, one line matching REGEX.
runtime() {
	local desc=$1 re=$2 why=''
	shift 2
	run "$@"
	if [ "$rc" -ne 1 ]; then
		why="exit status $rc, expected 1"
	elif [ "$(nlines "$tmp/err")" -ne 1 ]; then
		why="$(nlines "$tmp/err") lines on stderr, expected 1"
	elif ! grep -qE -- "$re" "$tmp/err"; then
		why="stderr does not match /$re/"
	elif [ -s "$tmp/out" ]; then
		why="unexpected output on stdout"
	fi
	[ -z "$why" ]
	result $? "$desc" "$why"
}

# help DESCRIPTION ARGS...: exit 0, usage on stdout, nothing on stderr.
help() {
	local desc=$1 why='' word
	shift
	run "$@"
	if [ "$rc" -ne 0 ]; then
		why="exit status $rc, expected 0"
	elif [ -s "$tmp/err" ]; then
		why="unexpected output on stderr"
	elif ! grep -q '^Usage: incctl' "$tmp/out"; then
		why="no \"Usage: incctl\" on stdout"
	else
		for word in show set 'rule add' 'rule del' 'rule list' \
			    'stats \[-s\]' 'stats reset' flows codecs -j -p -n; do
			grep -q -- "$word" "$tmp/out" || why="usage lacks \"$word\""
		done
	fi
	[ -z "$why" ]
	result $? "help: $desc" "$why"
}

# --- help ------------------------------------------------------------------
help "incctl help" help
help "incctl -h" -h
help "incctl --help" --help
help "help ignores -j" -j help

# --- global options and commands -----------------------------------------
usage "no command" -m 'incctl help'
usage "unknown command" -m 'unknown command "frobnicate".*incctl help' \
	frobnicate
usage "unknown command after options" -m 'incctl help' -j -p frobnicate
usage "unknown short option" -m 'unknown option "-x"' -x show
usage "unknown long option" -m 'unknown option "--frob"' --frob show
usage "long option with a value it does not take" --json=1 show
usage "-n without a value" -m '"-n" needs a value' -n
usage "--netns without a value" --netns
usage "-n with an empty name" -m 'network namespace' -n '' show
usage "-n .." -n .. show
usage "options after the command" show -j
usage "show takes no arguments" show extra
usage "flows takes no arguments" flows extra
usage "codecs takes no arguments" codecs all
usage "bad input is found before the netns is entered" \
	-n incctl-test-no-such-netns rule add dscp 64 codec lz4

# --- rule ------------------------------------------------------------------
usage "rule without subcommand" -m 'add, del, list' rule
usage "rule with unknown subcommand" -m 'unknown subcommand' rule frob
usage "rule add without arguments" -m 'required' rule add
usage "rule add without codec" -m 'codec is required' rule add dscp 10
usage "rule add without dscp/tos" -m 'dscp N or tos 0xNN is required' \
	rule add codec lz4
usage "rule add dscp without value" -m 'missing value after "dscp"' \
	rule add codec lz4 dscp
usage "rule add codec without value" rule add dscp 10 codec
usage "rule add bound without value" rule add dscp 10 codec ebq bound
usage "rule add dscp 64" -m 'out of range' rule add dscp 64 codec lz4
usage "rule add dscp 255" rule add dscp 255 codec lz4
usage "rule add dscp -1" rule add dscp -1 codec lz4
usage "rule add dscp +1" rule add dscp +1 codec lz4
usage "rule add dscp ' 1'" rule add dscp ' 1' codec lz4
usage "rule add dscp 1x" rule add dscp 1x codec lz4
usage "rule add dscp empty" rule add dscp '' codec lz4
usage "rule add dscp 0x28 (hex is a ToS)" -m 'use "tos"' \
	rule add dscp 0x28 codec lz4
usage "rule add dscp 99999999999999999999999" \
	rule add dscp 99999999999999999999999 codec lz4
usage "rule add tos 0x29 (ECN)" -m 'ECN bits must be zero' \
	rule add tos 0x29 codec lz4
usage "rule add tos 0x2a (ECN)" -m 'ECN bits must be zero' \
	rule add tos 0x2a codec lz4
usage "rule add tos 3 (ECN)" -m 'ECN bits must be zero' \
	rule add tos 3 codec lz4
usage "rule add tos 256" -m 'out of range' rule add tos 256 codec lz4
usage "rule add tos 0x100" -m 'out of range' rule add tos 0x100 codec lz4
usage "rule add tos 0x" rule add tos 0x codec lz4
usage "rule add tos zz" rule add tos zz codec lz4
usage "rule add dscp and tos" -m 'twice' rule add dscp 10 tos 0x28 codec lz4
usage "rule add dscp twice" -m 'twice' rule add dscp 10 dscp 11 codec lz4
usage "rule add unknown codec" -m 'unknown codec "foo"' \
	rule add dscp 10 codec foo
usage "rule add codec names are lower case" rule add dscp 10 codec EBQ
usage "rule add codec none" rule add dscp 10 codec none
usage "rule add codec twice" -m 'twice' rule add dscp 10 codec ebq codec lz4
usage "rule add bound 2^-31" -m 'out of range' \
	rule add dscp 10 codec ebq bound '2^-31'
usage "rule add bound 2^-0" -m 'out of range' \
	rule add dscp 10 codec ebq bound '2^-0'
usage "rule add bound 0" -m 'out of range' rule add dscp 10 codec ebq bound 0
usage "rule add bound 31" -m 'out of range' \
	rule add dscp 10 codec inceptionn bound 31
usage "rule add bound 2^10" -m 'invalid bound' \
	rule add dscp 10 codec ebq bound '2^10'
usage "rule add bound 2^-" rule add dscp 10 codec ebq bound '2^-'
usage "rule add bound 2^-1.5" rule add dscp 10 codec ebq bound '2^-1.5'
usage "rule add bound -3" rule add dscp 10 codec ebq bound -3
usage "rule add bound abc" rule add dscp 10 codec ebq bound abc
usage "rule add bound twice" -m 'twice' \
	rule add dscp 10 codec ebq bound 3 bound 4
usage "rule add bits 12" -m 'expected 8, 16 or 24' \
	rule add dscp 12 codec trunc bits 12
usage "rule add bits 32" rule add dscp 12 codec trunc bits 32
usage "rule add bits 0" rule add dscp 12 codec trunc bits 0
usage "rule add bits 8x" rule add dscp 12 codec trunc bits 8x
usage "rule add bound with lz4" -m 'takes no bound' \
	rule add tos 0x30 codec lz4 bound 10
usage "rule add bound with trunc" -m 'takes no bound' \
	rule add tos 0x30 codec trunc bound 10
usage "rule add bits with ebq" -m 'takes no bits' \
	rule add dscp 10 codec ebq bits 16
usage "rule add bits with lz4" -m 'takes no bits' \
	rule add dscp 10 codec lz4 bits 8
usage "rule add ebq:2^-31" -m 'out of range \(2\^-1\.\.2\^-30\)' \
	rule add dscp 10 codec 'ebq:2^-31'
usage "rule add ebq:abc" -m 'invalid bound "abc"' rule add dscp 10 codec ebq:abc
usage "rule add ebq: (empty setting)" -m 'invalid bound ""' \
	rule add dscp 10 codec ebq:
usage "rule add trunc:12" -m 'invalid bits "12" \(expected 8, 16 or 24\)' \
	rule add dscp 12 codec trunc:12
usage "rule add trunc:2^-3" -m 'invalid bits' rule add dscp 12 codec 'trunc:2^-3'
usage "rule add lz4:3" -m 'codec lz4 takes no setting \("lz4:3"\)' \
	rule add dscp 12 codec lz4:3
usage "rule add lz4:0" -m 'takes no setting' rule add dscp 12 codec lz4:0
usage "rule add foo:2^-10" -m 'unknown codec "foo" \(' \
	rule add dscp 10 codec 'foo:2^-10'
usage "rule add :10 (no name)" -m 'unknown codec ":10"' rule add dscp 10 codec :10
usage "rule add EBQ:2^-10 (names are lower case)" -m 'unknown codec "EBQ"' \
	rule add dscp 10 codec 'EBQ:2^-10'
usage "rule add ebq:2^-10 bound 2^-8" -m 'codec ebq:2\^-10 and bound: give the setting once' \
	rule add dscp 10 codec 'ebq:2^-10' bound '2^-8'
usage "rule add trunc:16 bits 8" -m 'give the setting once' \
	rule add dscp 12 bits 8 codec trunc:16
usage "rule add unknown keyword" -m 'unexpected argument "level"' \
	rule add dscp 10 codec lz4 level 3
usage "a newline in an argument still gives one line" \
	rule add dscp 10 codec $'foo\nbar'
usage "rule del without key" -m 'required' rule del
usage "rule del extra argument" rule del dscp 10 extra
usage "rule del dscp and tos" -m 'twice' rule del dscp 10 tos 0x28
usage "rule del dscp 99" -m 'out of range' rule del dscp 99
usage "rule del tos 0x2b" -m 'ECN bits must be zero' rule del tos 0x2b
usage "rule list extra argument" rule list all

# --- set -------------------------------------------------------------------
usage "set without arguments" -m 'nothing to set' set
usage "set unknown key" -m 'unknown key "foo"' set foo 1
usage "set tx without value" -m 'missing value' set tx
usage "set tx maybe" -m 'expected on or off' set tx maybe
usage "set superframes maybe" -m 'expected on or off' set superframes maybe
usage "set superframes twice" -m 'given twice' set superframes on superframes off
usage "set tx 1" set tx 1
usage "set rx yes" set rx yes
usage "set tx twice" -m 'twice' set tx on tx off
usage "set wire-dscp 64" -m 'out of range' set wire-dscp 64
usage "set wire-dscp 0x2c (hex is a ToS)" -m 'wire-tos' set wire-dscp 0x2c
usage "set wire-tos 0x2d (ECN)" -m 'ECN bits must be zero' set wire-tos 0x2d
usage "set wire-tos 0x100" -m 'out of range' set wire-tos 0x100
usage "set wire-dscp and wire-tos" -m 'twice' set wire-dscp 10 wire-tos 0x28
usage "set flow-max 0" -m 'out of range' set flow-max 0
usage "set flow-max 1048577" -m 'out of range' set flow-max 1048577
usage "set flow-max -1" set flow-max -1
usage "set flow-max 10k" set flow-max 10k
usage "set flow-max 18446744073709551616" set flow-max 18446744073709551616
usage "set idle-timeout 0" -m 'out of range' set idle-timeout 0
usage "set idle-timeout 86401" -m 'out of range' set idle-timeout 86401
usage "set close-timeout 0" -m 'out of range' set close-timeout 0
usage "set close-timeout 3601" -m 'out of range' set close-timeout 3601
usage "set a bad pair after good ones" set tx on rx on flow-max x

# --- stats -----------------------------------------------------------------
usage "stats with unknown argument" -m 'unexpected argument' stats bogus
usage "stats reset extra argument" stats reset now
usage "stats -x" stats -x

# --- valid command lines reach the kernel --------------------------------
nomod "show" show
nomod "-j show" -j show
nomod "-j -p show" -j -p show
nomod "--json --pretty show" --json --pretty show
nomod "rule list" rule list
nomod "rule show" rule show
nomod "rule add dscp 10 codec ebq bound 2^-10" \
	rule add dscp 10 codec ebq bound '2^-10'
nomod "rule add tos 0x28 codec inceptionn bound 12" \
	rule add tos 0x28 codec inceptionn bound 12
nomod "rule add (any order) bound 2^-1 codec ebq dscp 0" \
	rule add bound '2^-1' codec ebq dscp 0
nomod "rule add bound 2^-30" rule add dscp 63 codec ebq bound '2^-30'
nomod "rule add without bound (kernel default)" rule add dscp 10 codec ebq
nomod "rule add tos 0x30 codec lz4" rule add tos 0x30 codec lz4
nomod "rule add tos 0xfc" rule add tos 0xfc codec lz4
nomod "rule add tos 252 (decimal)" rule add tos 252 codec lz4
nomod "rule add tos 0" rule add tos 0 codec lz4
nomod "rule add dscp 12 codec trunc bits 16" rule add dscp 12 codec trunc bits 16
nomod "rule add bits 8" rule add dscp 12 codec trunc bits 8
nomod "rule add bits 24" rule add dscp 12 codec trunc bits 24
nomod "rule add codec ebq:2^-10" rule add dscp 10 codec 'ebq:2^-10'
nomod "rule add codec inceptionn:12 (K)" rule add tos 0x28 codec inceptionn:12
nomod "rule add codec zebq:0.0009765625" rule add tos 0x28 codec zebq:0.0009765625
nomod "rule add codec trunc:16" rule add dscp 12 codec trunc:16
nomod "rule del dscp 10" rule del dscp 10
nomod "rule del tos 0x28" rule del tos 0x28
nomod "set wire-dscp 11" set wire-dscp 11
nomod "set wire-tos 0x2c" set wire-tos 0x2c
nomod "set tx on" set tx on
nomod "set rx off" set rx off
nomod "set every key at once" set tx off rx on wire-tos 0x2c flow-max 1 \
	idle-timeout 1 close-timeout 1
nomod "set upper limits" set flow-max 1048576 idle-timeout 86400 \
	close-timeout 3600
nomod "stats" stats
nomod "stats -s" stats -s
nomod "-s stats" -s stats
nomod "-j stats" -j stats
nomod "stats reset" stats reset
nomod "flows" flows
nomod "-j flows" -j flows
nomod "codecs" codecs
nomod "-j codecs" -j codecs

# --- network namespaces ----------------------------------------------------
runtime "-n with a missing namespace" \
	'cannot open network namespace "incctl-test-no-such-netns"' \
	-n incctl-test-no-such-netns show
runtime "-n with a missing path" 'cannot open network namespace' \
	-n /nonexistent/incctl-test show

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ "$fail" -eq 0 ]
