#!/bin/bash
# Part of `make demo`, run inside the VM by scripts/demo/demo-vm.sh: two hosts
# (network namespaces) joined by a rate-limited veth link, iperf3 sending
# a gradient-like fp32 file with the module off, then with each codec, and
# unmarked traffic with and without the module; then the same link without
# the rate limit, where the emulated CPUs are the limit. Writes
# $VM_OUT/demo.json, one row per run.
#
# iperf3 -n ends the test as soon as write() took the last byte, and the
# server then stops writing: what was still in the sender's socket buffer
# is lost. The client's socket buffers are therefore limited (-w), every
# row reports the fraction of the sent bytes the server wrote, and a row
# fails below INCNN_DEMO_FLOOR percent (default 95) or when any byte the
# server wrote is not in the prediction. The interface counters are read
# after the link has drained (queue empty, counters stable); the wire
# ratio is bytes received / bytes on the wire, so an uncompressed run is
# below 1.0 (a row fails otherwise). Exit status 1 when any row failed.
set -euo pipefail
repo=${VM_REPO:?run inside the VM (scripts/demo/demo.sh)}
build=${INCNN_BUILD:-$repo/build}
out=${VM_OUT:?}
rate=${INCNN_DEMO_RATE:-20mbit}
mb=${INCNN_DEMO_MB:-12}
floor=${INCNN_DEMO_FLOOR:-95}
window=${INCNN_DEMO_WINDOW:-128K}
incctl=$build/rel/bin/incctl
codec=$build/rel/bin/incnn-codec
cmp=$build/rel/bin/incnn-cmp
tmp=$(mktemp -d)
bytes=$((mb * 1048576))
failed=0

say() { printf 'demo: %s\n' "$*"; }

setup() {
	ip netns add h1
	ip netns add h2
	ip link add v1 netns h1 type veth peer name v2 netns h2
	ip -n h1 addr add 10.88.0.1/24 dev v1
	ip -n h2 addr add 10.88.0.2/24 dev v2
	for h in h1:v1 h2:v2; do
		ip -n "${h%%:*}" link set lo up
		ip -n "${h%%:*}" link set "${h#*:}" up
		tc -n "${h%%:*}" qdisc add dev "${h#*:}" root tbf rate "$rate" \
			burst 128kb latency 100ms
	done
}

txbytes() { ip netns exec h1 cat /sys/class/net/v1/statistics/tx_bytes; }
# v1's queued bytes and packets ("0b 0p" when it has no queue)
backlog() {
	tc -n h1 -s qdisc show dev v1 |
		awk '/backlog/ && !b { b = $2 " " $3 } END { print b ? b : "0b 0p" }'
}

# drained: the sender's tx_bytes once v1's queue is empty and the counter
# has not moved for a second (at most 60 s)
drained() {
	local a b _
	b=$(txbytes)
	for _ in $(seq 60); do
		sleep 1
		a=$b
		b=$(txbytes)
		[ "$a" = "$b" ] && [ "$(backlog)" = "0b 0p" ] && break
	done
	echo "$b"
}

# mark_syns TOS: h1's SYNs leave with TOS's DSCP (none for 0). A SYN
# offers to decode only when its DSCP has a rule (docs/wire-format.md),
# and iperf3 marks its data socket only after connect() and its cookie.
mark_syns() {
	ip netns exec h1 nft delete table ip incnn_mark_syns 2>/dev/null || true
	[ "$(($1))" -ne 0 ] || return 0
	ip netns exec h1 nft -f - <<EOF
table ip incnn_mark_syns {
	chain out {
		type filter hook output priority 0;
		tcp flags & (syn | ack) == syn ip dscp set $(($1 >> 2))
	}
}
EOF
}

# run LABEL TOS PRED RTJSON: one iperf3 transfer of the file; PRED is what
# the receiver must get (the file itself, or incnn-codec's roundtrip of
# it), RTJSON that roundtrip's report. Appends a JSON line, with the
# row's verdict; counts failed rows.
run() {
	local label=$1 tos=$2 pred=$3 rt=$4 t0 t1 stats=null cmpj srv
	rm -f "$tmp/out.bin"
	[ -n "${loaded:-}" ] && ip netns exec h1 "$incctl" stats reset
	ip netns exec h2 iperf3 -s -1 -4 -B 10.88.0.2 -F "$tmp/out.bin" \
		>/dev/null 2>&1 &
	srv=$!
	sleep 0.5
	t0=$(drained)
	mark_syns "$tos"
	ip netns exec h1 iperf3 -c 10.88.0.2 --tos "$tos" -F "$out/grads.bin" \
		-n "$bytes" -w "$window" -J >"$tmp/iperf.json"
	wait "$srv" || true
	t1=$(drained)
	[ -n "${loaded:-}" ] && stats=$(ip netns exec h1 "$incctl" -j stats)
	# iperf3 -F sends pieces of the file that start at its 4-byte aligned
	# offsets (after a partial write of any length it resends its buffer
	# from the start): every received byte must be in such a piece of the
	# prediction
	cmpj=$("$cmp" --pieces --json "$pred" "$tmp/out.bin" || true)
	python3 - "$label" "$tos" "$((t1 - t0))" "$tmp/iperf.json" "$stats" \
		"$cmpj" "$rt" "$floor" >>"$out/demo.json" <<'PY'
import json, sys
label, tos, wire, ipf, stats, cmpj, rt, floor = sys.argv[1:]
r = json.load(open(ipf))
c = json.loads(cmpj)
row = {"label": label, "tos": tos, "wire_bytes": int(wire),
       "sent_bytes": r["end"]["sum_sent"]["bytes"],
       "received_bytes": c.get("got_bytes", 0),
       "goodput_mbps": r["end"]["sum_received"]["bits_per_second"] / 1e6,
       "cmp": c, "floor_pct": float(floor),
       "max_abs_err": json.load(open(rt))["max_abs_err"] if rt != "-" else 0}
s = json.loads(stats) if stats != "null" else None
if s:
    row["tx_bytes_orig"] = s["stats"].get("tx_bytes_orig", 0)
    row["tx_bytes_wire"] = s["stats"].get("tx_bytes_wire", 0)
    row["hist"] = [0, 0, 0, 0]
    for cs in s.get("codec_stats", []):
        for i, b in enumerate(("hist_0", "hist_8", "hist_16", "hist_32")):
            row["hist"][i] += cs.get(b, 0)
pct = 100 * row["received_bytes"] / row["sent_bytes"]
ratio = row["received_bytes"] / row["wire_bytes"] if row["wire_bytes"] else 0
row["received_pct"] = pct
row["wire_ratio"] = ratio
problems = []
if c.get("bytes_differ", 1):
    problems.append(f"{c.get('bytes_differ', '?')} bytes not in the prediction")
if pct < float(floor):
    problems.append(f"received {pct:.1f}% < {float(floor):g}%")
if (tos == "0x00" or label.startswith("no module")) and ratio > 1.0:
    problems.append(f"uncompressed wire ratio {ratio:.3f} > 1.0")
row["problems"] = problems
print(json.dumps(row))
PY
	tail -n 1 "$out/demo.json" >"$tmp/row.json"
	say "$label: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.1f Mbit/s, received %.1f%%, %d wire bytes, ratio %.2f%s" % (r["goodput_mbps"], r["received_pct"], r["wire_bytes"], r["wire_ratio"], "".join("; FAIL: " + p for p in r["problems"])))' "$tmp/row.json")"
	if ! grep -q '"problems": \[\]' "$tmp/row.json"; then
		failed=$((failed + 1))
		# what the server wrote, kept for a look (incnn-cmp --pieces)
		cp "$tmp/out.bin" "$out/failed-$failed.bin"
		cp "$pred" "$out/failed-$failed.pred"
	fi
}

rule() {	# codec k
	for h in h1 h2; do
		ip netns exec $h "$incctl" rule add tos 0x28 codec "$1" bound "2^-$2"
	done
}

say "link: veth with tbf $rate each way; file: $mb MiB of Laplace(1e-3) fp32; iperf3 -w $window; floor $floor% received"
"$codec" gen --dist laplace --scale 1e-3 --count $((bytes / 4)) --seed 1 \
	"$out/grads.bin" >/dev/null
: >"$out/demo.json"
setup
loaded=
say "[1/11] module not loaded: marked gradient stream"
run "no module" 0x28 "$out/grads.bin" -
say "[2/11] module not loaded: unmarked stream"
run "no module, unmarked" 0x00 "$out/grads.bin" -
modprobe lz4_compress
modprobe lz4_decompress
modprobe nf_defrag_ipv4 # incnn reassembles fragments before its rx hook
modprobe nf_defrag_ipv6
insmod "$repo/incnn.ko"
loaded=1
# incnn installs no rule: add the one the demo uses explicitly
say "[3/11] module loaded with rules: unmarked stream"
rule inceptionn 10
run "module loaded, unmarked" 0x00 "$out/grads.bin" -
n=4
for c in inceptionn ebq; do
	for k in 10 8 6; do
		say "[$n/11] $c:2^-$k"
		n=$((n + 1))
		# a rule applies to connections that start after it
		rule "$c" "$k"
		"$codec" roundtrip --codec "$c" --bound "2^-$k" --json \
			"$out/grads.bin" "$tmp/pred.bin" >"$tmp/rt.json"
		run "$c:2^-$k" 0x28 "$tmp/pred.bin" "$tmp/rt.json"
	done
done
# the same link without tbf: the emulated CPUs are the limit
for h in h1:v1 h2:v2; do
	tc -n "${h%%:*}" qdisc del dev "${h#*:}" root
done
say "[10/11] no rate limit: unmarked stream (module loaded)"
run "no rate limit, unmarked" 0x00 "$out/grads.bin" -
say "[11/11] no rate limit: inceptionn:2^-10"
rule inceptionn 10
"$codec" roundtrip --codec inceptionn --bound 2^-10 --json \
	"$out/grads.bin" "$tmp/pred.bin" >"$tmp/rt.json"
run "no rate limit, inceptionn:2^-10" 0x28 "$tmp/pred.bin" "$tmp/rt.json"
ip netns del h1
ip netns del h2
# flows that offered rx or compressed hold the module until their
# namespace is dismantled, which the kernel finishes asynchronously
for _ in $(seq 1 240); do
	rmmod incnn 2>/dev/null && break
	sleep 0.25
done
if grep -q '^incnn ' /proc/modules; then
	say "rmmod incnn: still in use after 60 s"
	failed=$((failed + 1))
fi
if [ "$failed" != 0 ]; then
	say "done: $failed row(s) failed (see above)"
	exit 1
fi
say "done"
