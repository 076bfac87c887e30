#!/bin/bash
# Part of `make demo`, run inside the VM by scripts/demo-vm.sh: two hosts
# (network namespaces) joined by a rate-limited veth link, iperf3 sending
# a gradient-like fp32 file with the module off, then with each codec, and
# unmarked traffic with and without the module. Writes $VM_OUT/demo.json.
set -euo pipefail
repo=${VM_REPO:?run inside the VM (scripts/demo.sh)}
build=${INCNN_BUILD:-$repo/build}
out=${VM_OUT:?}
rate=${INCNN_DEMO_RATE:-20mbit}
mb=${INCNN_DEMO_MB:-12}
incctl=$build/rel/bin/incctl
codec=$build/rel/bin/incnn-codec
cmp=$build/rel/bin/incnn-cmp
tmp=$(mktemp -d)
bytes=$((mb * 1048576))

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

# run LABEL TOS PRED RTJSON: one iperf3 transfer of the file; PRED is what
# the receiver must get (the file itself, or incnn-codec's roundtrip of
# it), RTJSON that roundtrip's report. Appends a JSON line.
run() {
	local label=$1 tos=$2 pred=$3 rt=$4 t0 t1 stats=null cmpj
	rm -f "$tmp/out.bin"
	[ -n "${loaded:-}" ] && ip netns exec h1 "$incctl" stats reset
	ip netns exec h2 iperf3 -s -1 -4 -B 10.88.0.2 -F "$tmp/out.bin" \
		>/dev/null 2>&1 &
	local srv=$!
	sleep 0.5
	t0=$(txbytes)
	ip netns exec h1 iperf3 -c 10.88.0.2 --tos "$tos" -F "$out/grads.bin" \
		-n "$bytes" -J >"$tmp/iperf.json"
	t1=$(txbytes)
	wait "$srv" || true
	[ -n "${loaded:-}" ] && stats=$(ip netns exec h1 "$incctl" -j stats)
	# iperf3 -F sends 4-byte aligned pieces of the file (out of order
	# after partial writes): every received byte must be in such a piece
	# of the prediction
	cmpj=$("$cmp" --pieces --json "$pred" "$tmp/out.bin" || true)
	python3 - "$label" "$tos" "$((t1 - t0))" "$tmp/iperf.json" "$stats" \
		"$cmpj" "$rt" >>"$out/demo.json" <<'PY'
import json, sys
label, tos, wire, ipf, stats, cmpj, rt = sys.argv[1:]
r = json.load(open(ipf))
row = {"label": label, "tos": tos, "wire_bytes": int(wire),
       "sent_bytes": r["end"]["sum_sent"]["bytes"],
       "goodput_mbps": r["end"]["sum_received"]["bits_per_second"] / 1e6,
       "cmp": json.loads(cmpj),
       "max_abs_err": json.load(open(rt))["max_abs_err"] if rt != "-" else 0}
s = json.loads(stats) if stats != "null" else None
if s:
    row["tx_bytes_orig"] = s["stats"].get("tx_bytes_orig", 0)
    row["tx_bytes_wire"] = s["stats"].get("tx_bytes_wire", 0)
    row["hist"] = [0, 0, 0, 0]
    for c in s.get("codec_stats", []):
        for i, b in enumerate(("hist_0", "hist_8", "hist_16", "hist_32")):
            row["hist"][i] += c.get(b, 0)
print(json.dumps(row))
PY
	say "$label: $(tail -n 1 "$out/demo.json" | python3 -c 'import json,sys; r=json.load(sys.stdin); print("%.1f Mbit/s, %d wire bytes" % (r["goodput_mbps"], r["wire_bytes"]))')"
}

rule() {	# codec k
	for h in h1 h2; do
		ip netns exec $h "$incctl" rule add tos 0x28 codec "$1" bound "2^-$2"
	done
}

say "link: veth with tbf $rate each way; file: $mb MiB of Laplace(1e-3) fp32"
"$codec" gen --dist laplace --scale 1e-3 --count $((bytes / 4)) --seed 1 \
	"$out/grads.bin" >/dev/null
: >"$out/demo.json"
setup
loaded=
say "[1/9] module not loaded: marked gradient stream"
run "no module" 0x28 "$out/grads.bin" -
say "[2/9] module not loaded: unmarked stream"
run "no module, unmarked" 0x00 "$out/grads.bin" -
modprobe lz4_compress
modprobe lz4_decompress
insmod "$repo/incnn.ko"
loaded=1
say "[3/9] module loaded with rules: unmarked stream"
rule inceptionn 10
run "module loaded, unmarked" 0x00 "$out/grads.bin" -
n=4
for c in inceptionn ebq; do
	for k in 10 8 6; do
		say "[$n/9] $c 2^-$k"
		n=$((n + 1))
		# a rule applies to connections that start after it
		rule "$c" "$k"
		"$codec" roundtrip --codec "$c" --bound "2^-$k" --json \
			"$out/grads.bin" "$tmp/pred.bin" >"$tmp/rt.json"
		run "$c 2^-$k" 0x28 "$tmp/pred.bin" "$tmp/rt.json"
	done
done
ip netns del h1
ip netns del h2
rmmod incnn
say "done"
