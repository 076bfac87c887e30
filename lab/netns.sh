# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# netns.sh - the lab's network-namespace helpers, shared by the kernel
# datapath tests (selftests/net/lib.sh sources it and adds KTAP output) and
# the demo (scripts/demo/demo-*.sh).  Runs INSIDE the test VM only
# (lab/vm.sh), because it loads the module and creates network namespaces.
#
# Provides:
#   info MSG         a "# MSG" comment line
#   module           load_module, unload_module, module_loaded,
#                    test_rule NS (the tests' rule: incnn installs none;
#                    every namespace made by new_ns gets it, and a fresh
#                    load_module gives it to every existing one, unless
#                    NO_TEST_RULE=1)
#   namespaces       new_ns NAME, nsx NS CMD..., veth_pair NS1 DEV1 ADDR1
#                    NS2 DEV2 ADDR2 [ADDR6_1 ADDR6_2], setup_pair (sender
#                    $NS_A 10.66.x.1 and fd00:66:x::1 <-> receiver $NS_B
#                    10.66.x.2 and fd00:66:x::2), setup_routed NA NB (A,
#                    router $NS_R, B), wait_listen NS PORT,
#                    dev_stat NS DEV FIELD, py_tcp (Python: tcp(ADDR,
#                    TOS) of ADDR's family)
#   families         INCNN_FAMILY=4 (default) or 6: which of its two
#                    addresses setup_pair puts in ADDR_A and ADDR_B (the
#                    others are always in ADDR4_* and ADDR6_*), and
#                    hostport ADDR PORT writes ADDR:PORT or [ADDR]:PORT
#   data             gen_floats OUT COUNT [SEED [SCALE]], gen_preamble OUT N,
#                    predict OUT IN SKIP CODEC-ARGS... (the bytes a receiver
#                    must see: IN[0:SKIP] raw, then the roundtrip of the
#                    float part, then a raw tail of 0..3 bytes)
#   transfers        xfer NAME IN SENDER-ARGS... (incnn_xfer recv in $NS_B,
#                    send in $NS_A; the received file is $TMP/NAME.out)
#   counters         kstats NS (incctl -j stats), jnum JSON NAME,
#                    counter NS NAME, json_get FILE EXPR (python)
#   cleanup          everything created through these helpers is removed
#                    on exit (namespaces, background processes, $TMP)

set -u

if [ "${INCNN_IN_VM:-}" != 1 ]; then
	echo "# $(basename "$0"): runs only inside the test VM" \
		"(selftests/net/vm-check.sh or lab/vm.sh)"
	exit 4 # kselftest skip
fi

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=${VM_REPO:-$(cd "$LAB_DIR/.." && pwd)}
BUILD=${INCNN_BUILD:-$REPO/build}
KO=${INCNN_KO:-$REPO/incnn.ko}
INCCTL=$BUILD/rel/bin/incctl
CODEC=$BUILD/rel/bin/incnn-codec
XFER=$BUILD/net/incnn_xfer
# shellcheck disable=SC2034 # used by the scripts that source netns.sh
INJECT=$BUILD/net/incnn_inject
PYTHON=${PYTHON:-/usr/bin/python3}
TEST_NAME=$(basename "$0" .sh)

# a short unique tag for namespace names, port numbers and addresses
TAG=${TAG:-$$}
SUBNET=$((TAG % 200 + 20))
TMP=$(mktemp -d "/tmp/incnn-$TEST_NAME.XXXXXX")

info() { echo "# $*"; }

# --- cleanup ------------------------------------------------------------
CLEANUP_NS=()
CLEANUP_PIDS=()

cleanup() {
	local p n
	for p in "${CLEANUP_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${CLEANUP_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	for n in "${CLEANUP_NS[@]}"; do
		ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$TMP"
}
trap cleanup EXIT

bg() { # command...: run in the background, killed on exit; sets BG_PID
	"$@" &
	BG_PID=$!
	CLEANUP_PIDS+=("$BG_PID")
}

# --- module ---------------------------------------------------------------
module_loaded() { [ -d /sys/module/incnn ]; }

# The rule the tests mark with: ToS 0x28, inceptionn with bound 2^-10.
# incnn itself installs no rule (nothing lossy unless asked for).
NO_TEST_RULE=${NO_TEST_RULE:-0}
test_rule() { # ns
	[ "$NO_TEST_RULE" = 1 ] && return 0
	"$INCCTL" -n "$1" rule add tos 0x28 codec inceptionn bound 2^-10
}

load_module() {
	local n
	module_loaded && return 0
	modprobe lz4_compress && modprobe lz4_decompress &&
		modprobe nf_defrag_ipv4 && modprobe nf_defrag_ipv6 || return 1
	# simd=avx2: the tests run the AVX2 codecs wherever the CPU has them,
	# whichever path the load-time self-benchmark prefers (under TCG the
	# scalar one may win); INCNN_SIMD_PARAM=auto or none to change it
	# superframes (frame version 2) are on by default in every namespace;
	# INCNN_SUPERFRAMES=0 runs the scripts with version 1 only, and
	# INCNN_SUPERFRAMES=omit passes no superframes= at all (a module that
	# predates the parameter: scripts/bench/module-ab.sh's old side)
	local params=("simd=${INCNN_SIMD_PARAM:-avx2}")
	[ "${INCNN_SUPERFRAMES:-1}" = omit ] ||
		params+=("superframes=${INCNN_SUPERFRAMES:-1}")
	insmod "$KO" "${params[@]}" || return 1
	for n in "${CLEANUP_NS[@]}"; do
		if [ -e "/run/netns/$n" ]; then
			test_rule "$n" || return 1
		fi
	done
	return 0
}

# rmmod, retried for up to $1 seconds (default 60): flows that offered
# rx or compress hold the module until they expire, and the namespaces
# of a previous script may still be being dismantled
unload_module() {
	local _
	module_loaded || return 0
	for _ in $(seq 1 $((${1:-60} * 4))); do
		rmmod incnn 2>/dev/null && return 0
		sleep 0.25
	done
	rmmod incnn
}

# --- namespaces -----------------------------------------------------------
# Every exec is slow under TCG, "ip netns exec" (a mount namespace and a
# sysfs remount each time) the slowest: commands enter a namespace with
# nsenter --net, and a sleeping "pin" process per namespace gives access
# to its /proc/PID/net files (tcp, dev) from bash builtins.
declare -A NSPID

new_ns() { # name
	ip netns add "$1" || return 1
	CLEANUP_NS+=("$1")
	ip -n "$1" link set lo up || return 1
	if module_loaded; then
		test_rule "$1" || return 1
	fi
	nsenter --net="/run/netns/$1" sleep 100000 &
	NSPID[$1]=$!
	CLEANUP_PIDS+=("$!")
}

nsx() { # ns command...: run a command in a namespace
	local ns=$1
	shift
	nsenter --net="/run/netns/$ns" "$@"
}

# veth_pair ns1 dev1 addr1/len ns2 dev2 addr2/len [addr6_1/len addr6_2/len]:
# IPv6 addresses without duplicate address detection (usable at once;
# none on a kernel booted with ipv6.disable=1)
veth_pair() {
	ip link add "$2" netns "$1" type veth peer name "$5" netns "$4" &&
		ip -n "$1" addr add "$3" dev "$2" &&
		ip -n "$4" addr add "$6" dev "$5" || return 1
	if [ $# -ge 8 ] && [ -d /proc/sys/net/ipv6 ]; then
		ip -n "$1" -6 addr add "$7" dev "$2" nodad &&
			ip -n "$4" -6 addr add "$8" dev "$5" nodad || return 1
	fi
	ip -n "$1" link set "$2" up &&
		ip -n "$4" link set "$5" up
}

# The address family the scripts connect over: INCNN_FAMILY=4 or 6.
INCNN_FAMILY=${INCNN_FAMILY:-4}
case $INCNN_FAMILY in
4 | 6) ;;
*)
	echo "INCNN_FAMILY=$INCNN_FAMILY: 4 or 6" >&2
	exit 1
	;;
esac

# pick_family V4 V6: the one of INCNN_FAMILY
pick_family() {
	if [ "$INCNN_FAMILY" = 6 ]; then echo "$2"; else echo "$1"; fi
}

# hostport ADDR PORT: ADDR:PORT, an IPv6 address in brackets
hostport() {
	case $1 in
	*:*) echo "[$1]:$2" ;;
	*) echo "$1:$2" ;;
	esac
}

# Sender $NS_A (va, $ADDR_A) <-> receiver $NS_B (vb, $ADDR_B); both
# families are configured, ADDR_A and ADDR_B are INCNN_FAMILY's.
setup_pair() {
	NS_A=incnn-$TAG-a
	NS_B=incnn-$TAG-b
	ADDR4_A=10.66.$SUBNET.1
	ADDR4_B=10.66.$SUBNET.2
	ADDR6_A=fd00:66:$SUBNET::1
	ADDR6_B=fd00:66:$SUBNET::2
	# shellcheck disable=SC2034 # used by the scripts that source netns.sh
	ADDR_A=$(pick_family "$ADDR4_A" "$ADDR6_A")
	ADDR_B=$(pick_family "$ADDR4_B" "$ADDR6_B")
	new_ns "$NS_A" && new_ns "$NS_B" &&
		veth_pair "$NS_A" va "$ADDR4_A/24" "$NS_B" vb "$ADDR4_B/24" \
			"$ADDR6_A/64" "$ADDR6_B/64" &&
		wait_ping "$NS_A" "$ADDR_B"
}

# setup_routed NA NB: sender $NS_A (va) -> router $NS_R (ra, rb) ->
# receiver $NS_B (vb), forwarding both families: A 10.NA.x.1 and
# fd00:NA:x::1, R 10.NA.x.254 / fd00:NA:x::fe and 10.NB.x.254 /
# fd00:NB:x::fe, B 10.NB.x.2 and fd00:NB:x::2, default routes through R.
# ADDR_A, ADDR_RA, ADDR_RB, ADDR_B: INCNN_FAMILY's.
setup_routed() {
	local a4=10.$1.$SUBNET b4=10.$2.$SUBNET
	local a6=fd00:$1:$SUBNET: b6=fd00:$2:$SUBNET:
	NS_A=incnn-$TAG-a
	NS_R=incnn-$TAG-r
	NS_B=incnn-$TAG-b
	# shellcheck disable=SC2034 # used by the scripts that source netns.sh
	ADDR_A=$(pick_family "$a4.1" "$a6:1")
	# shellcheck disable=SC2034
	ADDR_RA=$(pick_family "$a4.254" "$a6:fe")
	# shellcheck disable=SC2034
	ADDR_RB=$(pick_family "$b4.254" "$b6:fe")
	ADDR_B=$(pick_family "$b4.2" "$b6:2")
	new_ns "$NS_A" && new_ns "$NS_R" && new_ns "$NS_B" &&
		veth_pair "$NS_A" va "$a4.1/24" "$NS_R" ra "$a4.254/24" \
			"$a6:1/64" "$a6:fe/64" &&
		veth_pair "$NS_R" rb "$b4.254/24" "$NS_B" vb "$b4.2/24" \
			"$b6:fe/64" "$b6:2/64" &&
		ip -n "$NS_A" route add default via "$a4.254" &&
		ip -n "$NS_B" route add default via "$b4.254" &&
		ip -n "$NS_A" -6 route add default via "$a6:fe" &&
		ip -n "$NS_B" -6 route add default via "$b6:fe" &&
		nsx "$NS_R" sysctl -qw net.ipv4.ip_forward=1 \
			net.ipv6.conf.all.forwarding=1 &&
		wait_ping "$NS_A" "$ADDR_B"
}

wait_ping() { # ns addr: until the address answers (neighbour resolved)
	local ping=(ping)
	command -v ping >/dev/null 2>&1 || ping=(busybox ping)
	nsx "$1" sh -c "for i in \$(seq 1 50); do
		${ping[*]} -c 1 -W 1 $2 >/dev/null 2>&1 && exit 0; sleep 0.1; done; exit 1"
}

incctl() { # ns args...
	local ns=$1
	shift
	"$INCCTL" -n "$ns" "$@"
}

# nap SECONDS: sleep without an exec
mkfifo "$TMP/.nap"
nap() {
	read -r -t "$1" <>"$TMP/.nap"
}

# py_tcp: Python source, to prepend to a test's Python helper: tcp(ADDR,
# TOS=None), a TCP socket of ADDR's family (IPv6 if it has a ':')
# marked with TOS, set_tos(SOCK, TOS): IP_TOS or IPV6_TCLASS, and
# save_stream(SOCK, PATH): what SOCK receives until EOF, into PATH
py_tcp() {
	cat <<'EOF'
import socket as _socket


def set_tos(s, tos):
    if s.family == _socket.AF_INET6:
        s.setsockopt(_socket.IPPROTO_IPV6, _socket.IPV6_TCLASS, tos)
    else:
        s.setsockopt(_socket.IPPROTO_IP, _socket.IP_TOS, tos)


def tcp(addr, tos=None):
    fam = _socket.AF_INET6 if ":" in addr else _socket.AF_INET
    s = _socket.socket(fam, _socket.SOCK_STREAM)
    if tos is not None:
        set_tos(s, tos)
    return s


def save_stream(s, out):
    with open(out, "wb") as f:
        while True:
            b = s.recv(65536)
            if not b:
                break
            f.write(b)
EOF
}

# listening NS PORT: a TCP socket of the namespace listens on PORT
listening() {
	local hex loc st rest f
	printf -v hex ':%04X' "$2"
	for f in tcp tcp6; do
		while read -r _ loc _ st rest; do
			[ "$st" = 0A ] && [ "${loc: -5}" = "$hex" ] && return 0
		done <"/proc/${NSPID[$1]}/net/$f"
	done
	return 1
}

# mark_syns NS TOS: outgoing SYNs of NS leave with TOS's DSCP. A SYN
# offers to decode only when its DSCP has a rule (docs/wire-format.md);
# an application that marks its socket after connect() (Debian's iperf3
# marks its data socket after sending its 37-byte cookie) gets no
# compression unless its SYN is marked: this nft rule does that, at
# LOCAL_OUT, before incnn's egress hook sees the SYN; IPv4 and IPv6.
mark_syns() {
	nsx "$1" nft -f - <<EOF
table inet incnn_mark_syns {
	chain out {
		type filter hook output priority 0;
		meta nfproto ipv4 tcp flags & (syn | ack) == syn ip dscp set $(($2 >> 2))
		meta nfproto ipv6 tcp flags & (syn | ack) == syn ip6 dscp set $(($2 >> 2))
	}
}
EOF
}

wait_listen() { # ns port: up to 10 s, times $SLOW where lib.sh sets it
	local _
	for _ in $(seq 1 $((200 * ${SLOW:-1}))); do
		listening "$1" "$2" && return 0
		nap 0.05
	done
	return 1
}

# py_pair SECONDS RECV.py ARG... -- SEND.py ARG...: RECV.py in NS_B in the
# background; once a socket of NS_B listens on $PORT, SEND.py in NS_A;
# each under timeout SECONDS. Sets PAIR_SEND and PAIR_RECV to their exit
# codes (124: timed out; the sender runs even if nothing listened, and
# fails then).
py_pair() {
	local t=$1 rpid
	local -a r=()

	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		r+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	timeout "$t" nsenter --net="/run/netns/$NS_B" "$PYTHON" "${r[@]}" &
	rpid=$!
	wait_listen "$NS_B" "$PORT" || true
	timeout "$t" nsenter --net="/run/netns/$NS_A" "$PYTHON" "$@"
	# shellcheck disable=SC2034 # used by the scripts that source netns.sh
	PAIR_SEND=$?
	wait $rpid
	# shellcheck disable=SC2034
	PAIR_RECV=$?
}

# py_pause_pair: writes $TMP/pause-recv.py (ADDR PORT OUT [DEV]: accepts
# one connection, half-closes it at once, so that its flow is closing,
# and saves what arrives in OUT) and $TMP/pause-send.py (ADDR PORT FILE
# [DEV]: sends FILE marked 0x28, pausing 3 s half-way, longer than 1-s
# flow timeouts plus their GC); DEV: both bind to that device
py_pause_pair() {
	{ py_tcp; cat <<'PY'; } >"$TMP/pause-recv.py"
import socket, sys
addr, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ls = tcp(addr)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if len(sys.argv) > 4:
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, sys.argv[4].encode())
ls.bind((addr, port))
ls.listen(1)
s, _ = ls.accept()
s.shutdown(socket.SHUT_WR)
save_stream(s, out)
PY
	{ py_tcp; cat <<'PY'; } >"$TMP/pause-send.py"
import socket, sys, time
addr, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(path, "rb").read()
half = len(data) // 2 // 4 * 4
s = tcp(addr, 0x28)
if len(sys.argv) > 4:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, sys.argv[4].encode())
s.connect((addr, port))
s.sendall(data[:half])
time.sleep(3)
s.sendall(data[half:])
s.shutdown(socket.SHUT_WR)
s.recv(1)
PY
}

# dev_stat NS DEV FIELD: rx_bytes rx_packets tx_bytes tx_packets
dev_stat() {
	local line name
	local -a f
	while IFS= read -r line; do
		name=${line%%:*}
		name=${name// /}
		[ "$name" = "$2" ] || continue
		read -r -a f <<<"${line#*:}"
		case $3 in
		rx_bytes) echo "${f[0]}" ;;
		rx_packets) echo "${f[1]}" ;;
		tx_bytes) echo "${f[8]}" ;;
		tx_packets) echo "${f[9]}" ;;
		esac
		return 0
	done <"/proc/${NSPID[$1]}/net/dev"
	return 1
}

# --- data -----------------------------------------------------------------
gen_floats() { # out count [seed [scale]]
	"$CODEC" gen --dist laplace --scale "${4:-1e-3}" --count "$2" \
		--seed "${3:-1}" "$1" >/dev/null
}

gen_preamble() { # out nbytes
	head -c "$2" /dev/urandom >"$1"
}

# predict OUT IN SKIP CODEC-ARGS...: what the receiver must see when the
# first SKIP bytes of IN are sent unmarked (or before the float grid) and
# the rest marked with a rule of CODEC-ARGS (incnn-codec syntax). For lz4
# (lossless) the prediction is IN itself.
predict() {
	local out=$1 in=$2 skip=$3 size body tail
	shift 3
	size=$(stat -c %s "$in")
	body=$(((size - skip) / 4 * 4))
	tail=$((size - skip - body))
	if [ "$1" = lz4 ]; then
		cp "$in" "$out"
		return
	fi
	{
		head -c "$skip" "$in"
		tail -c +$((skip + 1)) "$in" | head -c "$body" >"$TMP/.pred.in"
		"$CODEC" roundtrip --codec "$@" --chunk 1448 "$TMP/.pred.in" - \
			2>/dev/null
		[ "$tail" -eq 0 ] || tail -c "$tail" "$in"
	} >"$out"
}

# roundtrip_json IN CODEC-ARGS...: the roundtrip report (ratio, hist)
roundtrip_json() {
	local in=$1
	shift
	"$CODEC" roundtrip --codec "$@" --chunk 1448 --json "$in" /dev/null
}

# first_diff A B: "offset" of the first differing byte, or "size"
first_diff() {
	cmp "$1" "$2" 2>&1 | head -n 1
}

# same FILE1 FILE2: byte-identical; prints where they differ otherwise
same() {
	if cmp -s "$1" "$2"; then
		return 0
	fi
	echo "$(basename "$2") ($(stat -c %s "$2") bytes) differs from" \
		"$(basename "$1") ($(stat -c %s "$1") bytes): $(first_diff "$1" "$2")"
	return 1
}

# float_mix WANT ORIG OUT SKIP: compare OUT with the prediction WANT and
# the original ORIG float by float (after SKIP raw bytes). Prints
# "ORIGINAL HYBRID": floats that arrived as the original instead of the
# quantised value, and floats that are neither (bytes of both, or
# garbage). Fails if the sizes differ.
float_mix() {
	local n
	n=$(stat -c %s "$1")
	[ "$n" = "$(stat -c %s "$2")" ] && [ "$n" = "$(stat -c %s "$3")" ] || return 1
	awk -v skip="$4" '
		{ f = int(($1 - 1 - skip) / 4) }
		FILENAME == ARGV[1] { q[f] = 1; next }
		(f in q) { h[f] = 1 }
		END { printf "%d %d\n", length(q), length(h) }' \
		<(cmp -l "$3" "$1") <(cmp -l "$3" "$2")
}

# as_predicted WANT ORIG OUT SKIP NS: OUT is what the first law allows
# and the sender NS accounts for: every float the prediction WANT or the
# original ORIG (after SKIP raw bytes), none a mix of both, and no more
# originals than floats NS sent raw because a segment cut them
# (tx_cut_raw: with an MSS that is not a multiple of 4, a 1-3 byte tail
# that TCP sends alone before the rest of its float is written out, see
# docs/design.md "Cut floats"). Prints why not, or how many originals.
as_predicted() {
	local mix orig hyb cut
	if cmp -s "$1" "$3"; then
		echo "exact"
		return 0
	fi
	if ! mix=$(float_mix "$1" "$2" "$3" "$4"); then
		same "$1" "$3"
		return 1
	fi
	read -r orig hyb <<<"$mix"
	cut=$(counter "$5" tx_cut_raw)
	if [ "$hyb" = 0 ] && [ "$orig" -le "${cut:-0}" ]; then
		echo "$orig floats original (tx_cut_raw $cut)"
		return 0
	fi
	echo "$(same "$1" "$3"); $orig floats original (tx_cut_raw $cut), $hyb neither"
	return 1
}

# --- transfers --------------------------------------------------------------
PORT_BASE=$((10000 + TAG % 20000))
PORT_NEXT=$PORT_BASE

next_port() {
	PORT_NEXT=$((PORT_NEXT + 1))
	PORT=$PORT_NEXT
}

# xfer NAME IN [incnn_xfer send options...]: receive into $TMP/NAME.out in
# $NS_B, send IN from $NS_A; returns the sender's status (the receiver's
# on its own failure). A transfer that stalls is killed after
# $XFER_TIMEOUT seconds, times $SLOW where selftests/net/lib.sh sets it
# (the debug kernel's processes start and run several times slower).
XFER_TIMEOUT=${XFER_TIMEOUT:-60}
xfer() {
	local name=$1 in=$2 rpid rc rrc t=$((XFER_TIMEOUT * ${SLOW:-1}))
	shift 2
	next_port
	timeout "$t" nsenter --net="/run/netns/$NS_B" \
		"$XFER" recv -b "$ADDR_B" -p "$PORT" "$TMP/$name.out" &
	rpid=$!
	wait_listen "$NS_B" "$PORT" || { kill $rpid; return 1; }
	timeout "$t" nsenter --net="/run/netns/$NS_A" \
		"$XFER" send -c "$ADDR_B" -p "$PORT" "$@" "$in"
	rc=$?
	wait $rpid
	rrc=$?
	[ $rc -ne 0 ] || rc=$rrc
	return $rc
}

# --- counters -------------------------------------------------------------
# kstats NS: the namespace's counters as one line of JSON (incctl -j stats)
kstats() {
	"$INCCTL" -n "$1" -j stats
}

# jnum JSON NAME: the first number (or null) under "NAME" in a JSON text
jnum() {
	local re="\"$2\":[[:space:]]*(-?[0-9][0-9.eE+-]*|null)"
	[[ $1 =~ $re ]] || return 1
	echo "${BASH_REMATCH[1]}"
}

# counter NS NAME: one datapath counter of the namespace
counter() {
	jnum "$(kstats "$1")" "$2"
}

# json_get FILE|- EXPR: evaluate a Python expression on the document d
# (slow under TCG: python takes a second to start)
json_get() {
	"$PYTHON" -c '
import json, sys
f = sys.argv[1]
d = json.load(sys.stdin if f == "-" else open(f))
v = eval(sys.argv[2])
print(json.dumps(v) if isinstance(v, (dict, list, bool)) or v is None else v)
' "$1" "$2"
}

# int_ratio A B: A / B with two decimals
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "inf"; else printf "%.2f", a / b }'
}

# fcmp A OP B: floating point comparison (awk)
fcmp() {
	awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
		if (op == "<") r = a < b; else if (op == "<=") r = a <= b;
		else if (op == ">") r = a > b; else if (op == ">=") r = a >= b;
		else r = 0; exit !r }'
}
