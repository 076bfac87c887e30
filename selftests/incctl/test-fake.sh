#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# incctl against tests/fake_kernel.c, a userspace stand-in for the incnn
# module that answers per <linux/incnn.h> (u64 padding, nested rules,
# multi-part dumps, extended ACKs, errors): output formats, JSON validity,
# the requests incctl sends, and how kernel errors are reported.
#
# Usage: test-fake.sh PATH/TO/incctl-fake   (make incctl-asan: build/asan/test/incctl-fake)
# Output as test-cli.sh: "ok N - ..." lines and a "# Totals: ..." line.
set -u

bin=${1:?usage: test-fake.sh PATH/TO/incctl-fake}
if [ ! -x "$bin" ]; then
	echo "test-fake.sh: $bin is not an executable" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export INCCTL_FAKE_LOG=$tmp/log
have_python=false
command -v python3 >/dev/null && have_python=true

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
		sed 's/^/#   stdout: /' "$tmp/out" | head -n 20
	fi
	return 0
}

skipped() {
	n=$((n + 1))
	skip=$((skip + 1))
	echo "ok $n - $1 # SKIP $2"
}

run() { # SCENARIO ARGS...
	local sc=$1
	shift
	: >"$INCCTL_FAKE_LOG"
	INCCTL_FAKE=$sc "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
}

# expect DESC SCENARIO RC EXPECTED_STDOUT EXPECTED_STDERR ARGS...
expect() {
	local desc=$1 sc=$2 erc=$3 eout=$4 eerr=$5 why=''
	shift 5
	run "$sc" "$@"
	if [ "$rc" -ne "$erc" ]; then
		why="exit status $rc, expected $erc"
	elif [ "$(cat "$tmp/out")" != "$eout" ]; then
		why="stdout differs; expected:"$'\n'"$(sed 's/^/#   | /' <<<"$eout")"
	elif [ "$(cat "$tmp/err")" != "$eerr" ]; then
		why="stderr is not \"$eerr\""
	fi
	[ -z "$why" ]
	result $? "$desc" "$why"
}

# sent DESC EXPECTED_LOG_LINE ARGS...: the request incctl sent
sent() {
	local desc=$1 line=$2 why=''
	shift 2
	run ok "$@"
	if [ "$rc" -ne 0 ]; then
		why="exit status $rc"
	elif ! grep -qxF -- "$line" "$INCCTL_FAKE_LOG"; then
		why="request log lacks \"$line\": $(tr '\n' '|' <"$INCCTL_FAKE_LOG")"
	fi
	[ -z "$why" ]
	result $? "$desc" "$why"
}

# json DESC SCENARIO PYTHON_ASSERTION ARGS...: stdout is one JSON document
# (bound to "d") and the assertion holds
json() {
	local desc=$1 sc=$2 check=$3 why=''
	shift 3
	if ! $have_python; then
		skipped "$desc" "python3 not installed"
		return
	fi
	run "$sc" "$@"
	if ! python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
if not ('"$check"'):
    sys.exit("assertion failed: " + sys.argv[2])
' "$tmp/out" "$check" 2>"$tmp/py"; then
		why="$(tail -n 1 "$tmp/py")"
	fi
	[ -z "$why" ]
	result $? "$desc" "$why"
}

# --- output ----------------------------------------------------------------
expect "show" ok 0 "\
tx             on
rx             off
wire           dscp 11 (tos 0x2c)
flows          3 of max 65536
idle-timeout   300 s
close-timeout  10 s
rules          4
  dscp 10 (tos 0x28) codec ebq:2^-10
  dscp 12 (tos 0x30) codec lz4
  dscp 14 (tos 0x38) codec trunc:16
  dscp 20 (tos 0x50) codec zfuture param 3" "" show

expect "rule list (sorted, kernel codec names)" ok 0 "\
dscp 10 (tos 0x28) codec ebq:2^-10
dscp 12 (tos 0x30) codec lz4
dscp 14 (tos 0x38) codec trunc:16
dscp 20 (tos 0x50) codec zfuture param 3" "" rule list

expect "codecs" ok 0 "\
id  name         lossy  param                default
1   inceptionn   yes    bound 2^-1..2^-30    2^-10
2   ebq          yes    bound 2^-1..2^-30    2^-10
3   trunc        yes    bits 8,16,24         16
4   lz4          no     -                    -
9   zfuture      no     param 1..9           3" "" codecs

expect "codecs: the SIMD path and the self-benchmark" simd 0 "\
id  name         lossy  param                default
1   inceptionn   yes    bound 2^-1..2^-30    2^-10
2   ebq          yes    bound 2^-1..2^-30    2^-10
3   trunc        yes    bits 8,16,24         16
4   lz4          no     -                    -
9   zfuture      no     param 1..9           3
simd: avx2 (load-time self-test at 1448 B, MB/s enc/dec)
  inceptionn   avx2 1001/1101  none 1/101
  ebq          avx2 1002/1102  none 2/102" "" codecs

expect "stats" ok 0 "\
tx     segments 1000  framed 1002  bytes 1001
       orig 1003  wire 1004  ratio 1.00  saved -1 (-0.1%)
rx     frames 1013  wire 1014  orig 1015  dropped 12316
flows  created 1024  expired 1025

codec            frames       bytes in      bytes out  ratio   0 bit   8 bit  16 bit  32 bit
inceptionn           10          40000          10000   4.00  60.00%  30.00%   9.00%   1.00%
ebq                  20          40000          20000   2.00  60.00%  30.00%   9.00%   1.00%
trunc                30          40000          30000   1.33  60.00%  30.00%   9.00%   1.00%
lz4                  40          40000              0      -       -       -       -       -" \
	"" stats

run ok stats -s
grep -q '^  tx_segs  *1000$' "$tmp/out" &&
	grep -q '^  rx_drop_nomem  *1023$' "$tmp/out" &&
	grep -q '^  flows_expired  *1025$' "$tmp/out" &&
	grep -q '^  stat_[0-9][0-9]*  *77$' "$tmp/out" &&
	grep -q '^ebq  *6000  *3000  *900  *100$' "$tmp/out"
result $? "stats -s: every counter, unknown ones by index, raw histogram"

run ok stats
grep -q 'pad attributes' "$INCCTL_FAKE_LOG" &&
	! grep -q 'GET_STATS reply has 0 pad' "$INCCTL_FAKE_LOG"
result $? "the stats reply carried u64 padding (type 1, as stat 0's type)"

expect "flows" ok 0 "\
10.0.0.1:5001 -> 10.0.0.2:40000 dscp 10 codec ebq:2^-10 flags peer-rx,anchored anchor 1448 orig 4000000000 wire 1000000000 ratio 4.00 idle 0.000s
10.0.0.1:5001 -> 10.0.0.3:40001 dscp 10 codec none flags - anchor - orig 0 wire 0 ratio - idle 1.234s
10.0.0.1:5001 -> 10.0.0.4:40002 dscp 10 codec ebq:2^-10 flags peer-rx,anchored,toggled,closing,0x40 anchor 1448 orig 12000000000 wire 3000000000 ratio 4.00 idle 2.468s" \
	"" flows

json "-j show" ok 'd["tx_enabled"] is True and d["rx_enabled"] is False and d["wire_dscp"] == 11 and d["wire_tos"] == 0x2c and d["flow_max"] == 65536 and d["flow_idle_timeout"] == 300 and d["flow_close_timeout"] == 10 and d["flow_count"] == 3 and [r["dscp"] for r in d["rules"]] == [10, 12, 14, 20] and d["rules"][0] == {"dscp": 10, "tos": 40, "codec": "ebq", "codec_id": 2, "param": 10, "label": "ebq:2^-10"}' -j show
json "-j -p show" ok 'd["rules"][3]["codec"] == "zfuture" and d["rules"][3]["label"] == "zfuture param 3"' -j -p show
run ok -j -p show
[ "$(grep -c '' "$tmp/out")" -gt 10 ] && grep -q '^  "rules": \[$' "$tmp/out"
result $? "-p indents"
run ok -j show
[ "$(grep -c '' "$tmp/out")" -eq 1 ]
result $? "-j without -p is one line"
json "-j rule list" ok 'len(d) == 4 and d[2] == {"dscp": 14, "tos": 56, "codec": "trunc", "codec_id": 3, "param": 16, "label": "trunc:16"} and d[1]["label"] == "lz4"' -j rule list
json "-j codecs" ok 'd[0] == {"id": 1, "name": "inceptionn", "lossy": True, "param_min": 1, "param_max": 30, "param_default": 10, "param_kind": "bound"} and len(d) == 5 and [c["param_kind"] for c in d[1:]] == ["bound", "bits", "none", "unknown"]' -j codecs
json "-j codecs: simd and figures" simd 'd[1]["simd"] == "avx2" and d[1]["mbps"] == {"none": {"enc": 2, "dec": 102}, "avx2": {"enc": 1002, "dec": 1102}} and d[2]["simd"] == "none" and "mbps" not in d[2]' -j codecs
json "-j stats" ok 'd["stats"]["tx_segs"] == 1000 and [k for k in d["stats"] if k.startswith("stat_")] == ["stat_%d" % (len(d["stats"]) - 1)] and d["stats"]["stat_%d" % (len(d["stats"]) - 1)] == 77 and d["stats"]["tx_wire_v2"] == 1037 and d["rx_dropped"] == 12316 and d["tx_bytes_saved"] == -1 and d["codec_stats"][1]["codec"] == "ebq" and d["codec_stats"][1]["hist_0_pct"] == 60 and d["codec_stats"][3]["ratio"] is None' -j stats
json "-j flows" ok 'len(d) == 3 and d[2]["bytes_orig"] == 12000000000 and d[2]["flags"] == ["peer_rx", "anchored", "toggled", "closing", "0x40"] and d[0]["saddr"] == "10.0.0.1" and d[0]["dport"] == 40000 and d[1]["flags"] == [] and d[1]["ratio"] is None and [f["label"] for f in d] == ["ebq:2^-10", "none", "ebq:2^-10"]' -j flows
json "-j flows with no flows is []" empty 'd == []' -j flows
expect "flows: an IPv6 flow as [addr]:port" v6 0 "\
10.0.0.1:5001 -> 10.0.0.2:40000 dscp 10 codec ebq:2^-10 flags peer-rx,anchored anchor 1448 orig 4000000000 wire 1000000000 ratio 4.00 idle 0.000s
[fd00:66:1::1]:5001 -> [fd00:66:1::3]:40001 dscp 10 codec none flags - anchor - orig 0 wire 0 ratio - idle 1.234s
10.0.0.1:5001 -> 10.0.0.4:40002 dscp 10 codec ebq:2^-10 flags peer-rx,anchored,toggled,closing,0x40 anchor 1448 orig 12000000000 wire 3000000000 ratio 4.00 idle 2.468s" \
	"" flows
json "-j flows: families and IPv6 addresses" v6 'd[1]["family"] == 6 and d[1]["saddr"] == "fd00:66:1::1" and d[1]["daddr"] == "fd00:66:1::3" and d[1]["dport"] == 40001 and d[0]["family"] == 4 and d[0]["daddr"] == "10.0.0.2"' -j flows
json "-j rule list with no rules is []" empty 'd == []' -j rule list
expect "show with no rules" empty 0 "\
tx             on
rx             off
wire           dscp 11 (tos 0x2c)
flows          3 of max 65536
idle-timeout   300 s
close-timeout  10 s
rules          none" "" show

# --- requests ----------------------------------------------------------------
sent "rule add tos 0x28 codec ebq bound 2^-12" \
	"ADD_RULE ack v1 10{ 1=10 2=2 3=12 }" rule add tos 0x28 codec ebq bound '2^-12'
sent "rule add, plain K" "ADD_RULE ack v1 10{ 1=10 2=1 3=7 }" \
	rule add dscp 10 codec inceptionn bound 7
sent "rule add lz4 sends no parameter" "ADD_RULE ack v1 10{ 1=12 2=4 }" \
	rule add tos 0x30 codec lz4
sent "rule add without bound leaves the default to the kernel" \
	"ADD_RULE ack v1 10{ 1=10 2=2 }" rule add dscp 10 codec ebq
sent "rule add trunc bits 24" "ADD_RULE ack v1 10{ 1=63 2=3 3=24 }" \
	rule add codec trunc bits 24 dscp 63
sent "rule add tos 0x28 codec ebq:2^-12" "ADD_RULE ack v1 10{ 1=10 2=2 3=12 }" \
	rule add tos 0x28 codec 'ebq:2^-12'
sent "rule add codec inceptionn:7 (plain K)" "ADD_RULE ack v1 10{ 1=10 2=1 3=7 }" \
	rule add codec inceptionn:7 dscp 10
sent "rule add codec trunc:24" "ADD_RULE ack v1 10{ 1=63 2=3 3=24 }" \
	rule add dscp 63 codec trunc:24
sent "rule del tos 0x30" "DEL_RULE ack v1 10{ 1=12 }" rule del tos 0x30
sent "rule del dscp 10" "DEL_RULE ack v1 10{ 1=10 }" rule del dscp 10
sent "set, every key" "SET_CONFIG ack v1 2=0 3=1 4=11 5=100 6=60 7=5" \
	set tx off rx on wire-tos 0x2c flow-max 100 idle-timeout 60 close-timeout 5
sent "set wire-dscp only" "SET_CONFIG ack v1 4=12" set wire-dscp 12
sent "set superframes on" "SET_CONFIG ack v1 17=1" set superframes on
sent "set superframes off" "SET_CONFIG ack v1 17=0" set superframes off
sent "stats reset" "RESET_STATS ack v1" stats reset
sent "flows is a dump" "GET_FLOWS dump v1" flows
sent "show asks for the config" "GET_CONFIG ack v1" show

# --- kernel errors -----------------------------------------------------------
NOMOD='incctl: kernel module not loaded (modprobe incnn)'
expect "no family: module not loaded" nomod 1 "" "$NOMOD" show
expect "no family, -j: nothing on stdout" nomod 1 "" "$NOMOD" -j flows
expect "EPERM" eperm 1 "" "incctl: permission denied (need CAP_NET_ADMIN)" \
	rule add dscp 10 codec lz4
expect "EPERM on set" eperm 1 "" \
	"incctl: permission denied (need CAP_NET_ADMIN)" set tx on
expect "extack message (uncapped ACK)" extack 1 "" \
	"incctl: codec ebq: bound 2^-31 out of range" rule add dscp 10 codec ebq
expect "no extack: strerror" noext 1 "" "incctl: Numerical result out of range" \
	stats reset
expect "extack warning on success" warn 0 "" "incctl: warning: nothing changed" \
	rule del dscp 10
expect "malformed reply" malformed 1 "" \
	"incctl: malformed reply from the kernel" show
run dumperr flows
[ "$rc" -eq 1 ] && [ "$(cat "$tmp/err")" = "incctl: flow table changed too fast" ] &&
	[ "$(grep -c '' "$tmp/out")" -eq 3 ]
result $? "dump error after some flows: extack from NLMSG_DONE, exit 1"
json "dump error: -j output is still valid JSON" dumperr 'len(d) == 3' -j flows
run intr flows
[ "$rc" -eq 0 ] && grep -q 'warning: the dump was interrupted' "$tmp/err" &&
	[ "$(grep -c '' "$tmp/out")" -eq 3 ]
result $? "NLM_F_DUMP_INTR is a warning"
expect "no GET_CODECS: static names" nocodecs 0 "\
dscp 10 (tos 0x28) codec ebq:2^-10
dscp 12 (tos 0x30) codec lz4
dscp 14 (tos 0x38) codec trunc:16
dscp 20 (tos 0x50) codec 9 param 3" "" rule list
json "no GET_CODECS: -j rule list labels the unknown codec by number" nocodecs \
	'd[3]["label"] == "9 param 3" and "codec" not in d[3] and d[3]["codec_id"] == 9' \
	-j rule list
expect "no GET_CODECS: codecs fails" nocodecs 1 "" \
	"incctl: Operation not supported" codecs

# --- codec names, kinds and ranges come from the kernel ---------------------
sent "rule add: a codec only the kernel knows" "ADD_RULE ack v1 10{ 1=20 2=9 }" \
	rule add dscp 20 codec zfuture
expect "rule add: unknown to the kernel, its names listed" ok 2 "" \
	'incctl: unknown codec "foo" (inceptionn, ebq, trunc, lz4, zfuture)' \
	rule add dscp 10 codec foo
expect "rule add: a kind incctl does not know takes no bound" ok 2 "" \
	"incctl: rule add: codec zfuture takes no bound (only inceptionn and ebq do)" \
	rule add dscp 20 codec zfuture bound 3
run newcodec rule add dscp 20 codec zfuture bound 2^-5
[ "$rc" -eq 0 ] && grep -qxF "ADD_RULE ack v1 10{ 1=20 2=9 3=5 }" "$INCCTL_FAKE_LOG"
result $? "rule add: the kernel's bound codec and its range"
run newcodec rule add dscp 20 codec 'zfuture:2^-5'
[ "$rc" -eq 0 ] && grep -qxF "ADD_RULE ack v1 10{ 1=20 2=9 3=5 }" "$INCCTL_FAKE_LOG"
result $? "rule add zfuture:2^-5: the kernel's codec, its own spelling"
expect "rule add: zfuture:2^-10 outside the kernel's range" newcodec 2 "" \
	"incctl: bound 2^-10 out of range (2^-1..2^-9)" \
	rule add dscp 20 codec 'zfuture:2^-10'
expect "rule add: a kind incctl does not know takes no setting" ok 2 "" \
	'incctl: rule add: codec zfuture takes no setting ("zfuture:3")' \
	rule add dscp 20 codec zfuture:3
expect "rule add: outside the kernel's range" newcodec 2 "" \
	"incctl: bound 2^-10 out of range (2^-1..2^-9)" \
	rule add dscp 20 codec zfuture bound 2^-10
expect "rule add: bound codecs listed from the kernel" newcodec 2 "" \
	"incctl: rule add: codec trunc takes no bound (only inceptionn, ebq and zfuture do)" \
	rule add dscp 20 codec trunc bound 3
expect "rule list: the kernel's kind spells the setting" newcodec 0 "\
dscp 10 (tos 0x28) codec ebq:2^-10
dscp 12 (tos 0x30) codec lz4
dscp 14 (tos 0x38) codec trunc:16
dscp 20 (tos 0x50) codec zfuture:2^-3" "" rule list
expect "codecs: kinds of an older kernel from the built-in codecs" oldcodecs 0 "\
id  name         lossy  param                default
1   inceptionn   yes    bound 2^-1..2^-30    2^-10
2   ebq          yes    bound 2^-1..2^-30    2^-10
3   trunc        yes    bits 8,16,24         16
4   lz4          no     -                    -
9   zfuture      no     param 1..9           3" "" codecs
run oldcodecs rule add dscp 14 codec trunc bits 24
[ "$rc" -eq 0 ] && grep -qxF "ADD_RULE ack v1 10{ 1=14 2=3 3=24 }" "$INCCTL_FAKE_LOG"
result $? "rule add with an older kernel: built-in kinds"
expect "no GET_CODECS: built-in names for rule add" nocodecs 2 "" \
	'incctl: unknown codec "zfuture" (inceptionn, ebq, trunc, lz4, zebq)' \
	rule add dscp 20 codec zfuture
run nocodecs rule add dscp 20 codec zebq bound 2^-8
[ "$rc" -eq 0 ] && grep -qxF "ADD_RULE ack v1 10{ 1=20 2=5 3=8 }" "$INCCTL_FAKE_LOG"
result $? "rule add zebq with the built-in codecs"

echo "1..$n"
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ "$fail" -eq 0 ]
