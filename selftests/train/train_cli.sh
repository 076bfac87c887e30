#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# incnn-train end to end (ASan/UBSan build, 127.0.0.1, the synthetic
# dataset unless the MNIST file is there): determinism, ring = ps for two
# ranks, one rank with batch 2B against two ranks with batch B, identical
# replicas under codec emulation, --method and --buckets (summary line),
# --method gradiveq with and without --gvq-fc, THC single-bucket convergence,
# the environment rendezvous giving the
# same losses as -n, --iters, a run that learns, scripts/demo/train-compare.sh,
# and one-line errors for bad input.
set -u
. "$(dirname "$0")/../ktap_lib.sh"
tool=${INCNN_TRAIN:-$build/asan/bin/incnn-train}
cmp=$top/scripts/demo/train-compare.sh
mnist=${INCNN_MNIST:-$build/mnist/mnist.bin}
need_tool "$tool" incnn-train

# a small, fast configuration on the synthetic data
small=(--data synth --hidden 32,16 -q)

# field VALUE of KEY on the LINE-th line starting with WORD
field() {	# file word key [line]
	awk -v w="$2" -v k="$3" -v l="${4:-1}" '
		$1 == w && ++c == l { for (i = 1; i < NF; i++) if ($i == k) { print $(i + 1); exit } }' "$1"
}

deterministic() {
	"$tool" "${small[@]}" -n 2 --epochs 2 --log "$tmp/a.log" &&
	"$tool" "${small[@]}" -n 2 --epochs 2 --log "$tmp/b.log" &&
	"$cmp" "$tmp/a.log" "$tmp/b.log" 80 &&
	[ "$(grep -c '^iter ' "$tmp/a.log")" = 80 ] &&
	# everything but the timings is the same
	diff <(sed 's/ seconds .*//; s/ iter_ms .*//' "$tmp/a.log") \
	     <(sed 's/ seconds .*//; s/ iter_ms .*//' "$tmp/b.log") &&
	# another seed: other losses
	"$tool" "${small[@]}" -n 2 --iters 3 --seed 2 --log "$tmp/c.log" &&
	! "$cmp" "$tmp/a.log" "$tmp/c.log" 3
}

learns() {
	local acc l1 lN
	"$tool" "${small[@]}" -n 2 --epochs 2 --log "$tmp/l.log" || return 1
	acc=$(field "$tmp/l.log" epoch test_acc 2)
	l1=$(awk '$1 == "iter" && $2 == 1 { print $7 }' "$tmp/l.log")
	lN=$(awk '$1 == "epoch" && $2 == 2 { print $7 }' "$tmp/l.log")
	echo "test accuracy $acc, loss $l1 -> $lN"
	awk -v a="$acc" -v l1="$l1" -v ln="$lN" \
		'BEGIN { exit !(a >= 0.9 && ln < l1 / 10 && l1 > 1.5 && l1 < 3) }' &&
	[ "$(field "$tmp/l.log" epoch identical 2)" = 2 ] &&
	grep -q '^# incnn-train: 2 ranks (local processes), algo ring, codec none, arch 784-32-16-10 (25818 parameters), batch 25 per rank (50 global), lr 0.1, momentum 0.9, weight decay 5e-05, seed 1$' "$tmp/l.log" &&
	grep -q '^done iters 80 epochs 2 digest [0-9a-f]\{16\} seconds ' "$tmp/l.log"
}

ring_is_ps_for_2() {
	"$tool" "${small[@]}" -n 2 --iters 30 --log "$tmp/r.log" &&
	"$tool" "${small[@]}" -n 2 --iters 30 --algo ps --log "$tmp/p.log" &&
	"$cmp" "$tmp/r.log" "$tmp/p.log" 30
}

# 1 rank x 50 samples = 2 ranks x 25 up to float rounding (the gradient
# sum is grouped differently): losses within 1e-5 relative over 30 steps
one_vs_two() {
	"$tool" "${small[@]}" -n 1 --batch 50 --iters 30 --log "$tmp/1.log" &&
	"$tool" "${small[@]}" -n 2 --batch 25 --iters 30 --log "$tmp/2.log" &&
	paste <(awk '$1 == "iter" { print $7 }' "$tmp/1.log") \
	      <(awk '$1 == "iter" { print $7 }' "$tmp/2.log") |
	awk '{ d = $1 - $2; if (d < 0) d = -d; r = d / $1; if (r > m) m = r; c++ }
	     END { printf "30 iterations, largest relative difference %g\n", m;
		   exit !(c == 30 && m < 1e-5) }'
}

codec_replicas() {	# codec bound
	"$tool" "${small[@]}" -n 4 --epochs 1 --codec "$1" --bound "$2" \
		--log "$tmp/c.log" || return 1
	grep -q "^# incnn-train: 4 ranks (local processes), algo ring, codec $1:$2," "$tmp/c.log" &&
	[ "$(field "$tmp/c.log" epoch identical)" = 4 ] &&
	"$tool" "${small[@]}" -n 4 --epochs 1 --codec none --log "$tmp/n.log" &&
	# the codec changed the training (but not iteration 1's loss)
	"$cmp" "$tmp/c.log" "$tmp/n.log" 1 &&
	! "$cmp" "$tmp/c.log" "$tmp/n.log" 20 &&
	# the emulation is deterministic too
	"$tool" "${small[@]}" -n 4 --epochs 1 --codec "$1" --bound "$2" \
		--algo ring --log "$tmp/c2.log" &&
	"$cmp" "$tmp/c.log" "$tmp/c2.log" 20
}

env_rendezvous() {
	local port pids=() r rc=0
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	for r in 0 1; do
		MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=$r WORLD_SIZE=2 \
			"$tool" "${small[@]}" --iters 12 --codec ebq --bound 2^-8 \
			--log "$tmp/env$r.log" &
		pids+=($!)
	done
	for r in "${pids[@]}"; do
		wait "$r" || rc=1
	done
	[ $rc = 0 ] && [ -s "$tmp/env0.log" ] && [ ! -e "$tmp/env1.log" ] &&
	grep -q '^# incnn-train: 2 ranks (env)' "$tmp/env0.log" &&
	"$tool" "${small[@]}" -n 2 --iters 12 --codec ebq --bound 2^-8 \
		--log "$tmp/loc.log" &&
	"$cmp" "$tmp/env0.log" "$tmp/loc.log" 12 | tee /dev/stderr |
		grep -q '12 iterations bit-identical (and 1 weight digest)'
}

iters_stop() {
	"$tool" "${small[@]}" -n 2 --iters 5 --log "$tmp/s.log" &&
	[ "$(grep -c '^iter ' "$tmp/s.log")" = 5 ] &&
	grep -q '^stop iter 5 epoch 1 digest [0-9a-f]\{16\} identical 2 ' "$tmp/s.log" &&
	! grep -q '^epoch ' "$tmp/s.log"
}

# the run's summary: method, buckets, iterations, accuracy and wire bytes
summary_line() {	# log method buckets iters
	grep -q "^summary method $2 buckets $3 nbuckets [1-9][0-9]* iters $4 test_acc [01]\.[0-9]\{4\} iter_ms [0-9.]* wire_bytes_per_iter [1-9][0-9]*\$" "$1" &&
	grep -q "^# method $2 buckets $3\$" "$1"
}

# --method and --buckets: the summary line, identical replicas; THC sends
# less than a quarter of fp32's bytes; with 2 ranks a ring sum is a + b
# whatever the buckets, so mgwfbp gives single's losses bit for bit
methods_buckets() {
	local m b w
	for m in none thc; do
		for b in single mgwfbp; do
			"$tool" "${small[@]}" -n 4 --epochs 1 --method "$m" \
				--buckets "$b" --log "$tmp/$m-$b.log" || return 1
			summary_line "$tmp/$m-$b.log" "$m" "$b" 20 &&
			[ "$(field "$tmp/$m-$b.log" epoch identical)" = 4 ] ||
				return 1
		done
	done
	grep -q '^# buckets mgwfbp: backward [0-9.]* s (rank 0), cost a ' "$tmp/thc-mgwfbp.log" &&
	# (fp32: the ring sends 2 (N-1)/N of the 25818 floats per iteration)
	[ "$(field "$tmp/none-single.log" summary wire_bytes_per_iter)" = 154908 ] &&
	w=$(field "$tmp/thc-single.log" summary wire_bytes_per_iter) &&
	echo "wire bytes per iteration: none 154908, thc $w" &&
	[ $((w * 4)) -lt 154908 ] &&
	"$tool" "${small[@]}" -n 2 --iters 20 --buckets single --log "$tmp/s2.log" &&
	"$tool" "${small[@]}" -n 2 --iters 20 --buckets mgwfbp --log "$tmp/m2.log" &&
	"$cmp" "$tmp/s2.log" "$tmp/m2.log" 20 &&
	# not quiet: the same summary on stderr
	"$tool" --data synth --hidden 32,16 -n 2 --iters 3 --method thc 2>&1 |
		grep -q '^incnn-train: summary method thc buckets single nbuckets 1 iters 3 test_acc '
}

# --algo ps: the summary adds what a worker sends up and what rank 0
# sends down to each worker (THC: 4-bit indices and 8-bit lane sums of
# the 26624 padded coordinates of the 25818 floats; rank 0 sends 3 x
# down); the ring's summary has neither
thc_ps_updown() {
	"$tool" "${small[@]}" -n 4 --iters 3 --method thc --algo ps \
		--log "$tmp/ps.log" &&
	grep -q ' wire_bytes_per_iter 79872 up_bytes_per_iter 13312 down_bytes_per_iter 26624$' "$tmp/ps.log" &&
	"$tool" "${small[@]}" -n 4 --iters 3 --method thc --log "$tmp/r.log" &&
	grep -q ' wire_bytes_per_iter [0-9]*$' "$tmp/r.log"
}

# THC, one bucket, 6 epochs: keeps converging after the loss is near 0
# (gradients down to 1e-5 and below), every epoch's train loss a finite
# number, the last under 1e-3, accuracy 1, replicas identical
thc_converges() {
	local e l
	"$tool" "${small[@]}" -n 4 --epochs 6 --method thc --buckets single \
		--log "$tmp/tc.log" || return 1
	for e in 1 2 3 4 5 6; do
		l=$(awk -v e="$e" '$1 == "epoch" && $2 == e { print $7 }' "$tmp/tc.log")
		echo "epoch $e train loss $l"
		[[ $l =~ ^[0-9][0-9.e+-]*$ ]] || return 1
	done
	awk -v l="$l" 'BEGIN { exit !(l < 1e-3) }' &&
	[ "$(field "$tmp/tc.log" epoch test_acc 6)" = 1.0000 ] &&
	[ "$(field "$tmp/tc.log" epoch identical 6)" = 4 ]
}

# --method gradiveq: without --gvq-fc the MLP (no conv layer) goes plain,
# with a one-line note, the fp32 bytes; with it (and a short schedule:
# warm-up 2, T_s 4, loss monitor off) the layers are compressed after
# iteration 6, replicas identical, fewer bytes; mgwfbp buckets too; with
# --codec ebq the uncompressed iterations are quantised
gradiveq() {
	local w
	"$tool" --data synth --hidden 32,16 -n 4 --iters 20 --method gradiveq \
		--log "$tmp/g0.log" 2>"$tmp/g0.err" || return 1
	grep -q '^incnn: rank 0: gradiveq: no layer to compress (layer 0: fully connected' "$tmp/g0.err" &&
	grep -q ' wire_bytes_per_iter 154908 gvq_compressed_iters 0 gvq_refreshes 0 gvq_fits 0 gvq_layers 0$' "$tmp/g0.log" &&
	"$tool" "${small[@]}" -n 2 --iters 12 --method gradiveq \
		--log "$tmp/g2.log" &&
	"$tool" "${small[@]}" -n 2 --iters 12 --log "$tmp/n2.log" &&
	"$cmp" "$tmp/g2.log" "$tmp/n2.log" 12 || return 1
	for b in single mgwfbp; do
		INCNN_GVQ_WARMUP=2 INCNN_GVQ_TS=4 INCNN_GVQ_EPS=off INCNN_GVQ_D=64 \
		INCNN_GVQ_K=8 "$tool" "${small[@]}" -n 4 --epochs 1 \
			--method gradiveq --gvq-fc --buckets "$b" \
			--log "$tmp/g-$b.log" || return 1
		grep -q "^summary method gradiveq buckets $b nbuckets [1-9][0-9]* iters 20 test_acc [01]\.[0-9]\{4\} iter_ms [0-9.]* wire_bytes_per_iter [1-9][0-9]* gvq_compressed_iters 14 gvq_refreshes 0 gvq_fits 1 gvq_layers 3\$" "$tmp/g-$b.log" &&
		[ "$(field "$tmp/g-$b.log" epoch identical)" = 4 ] || return 1
	done
	w=$(field "$tmp/g-single.log" summary wire_bytes_per_iter) &&
	echo "wire bytes per iteration: none 154908, gradiveq (14 of 20 compressed) $w" &&
	[ "$w" -lt 80000 ] &&
	bad 1 --data synth --hidden 8 -n 2 -q --method gradiveq --algo ps &&
	# an emulated codec quantises warm-up and sampling (the paper's
	# QSGD): the same schedule, identical replicas, another trajectory
	INCNN_GVQ_WARMUP=2 INCNN_GVQ_TS=4 INCNN_GVQ_EPS=off INCNN_GVQ_D=64 \
	INCNN_GVQ_K=8 "$tool" "${small[@]}" -n 4 --epochs 1 \
		--method gradiveq --gvq-fc --codec ebq --bound 2^-8 \
		--log "$tmp/gq.log" &&
	grep -q " gvq_compressed_iters 14 gvq_refreshes 0 gvq_fits 1 gvq_layers 3\$" "$tmp/gq.log" &&
	[ "$(field "$tmp/gq.log" epoch identical)" = 4 ] &&
	[ "$(field "$tmp/gq.log" epoch digest)" != \
	  "$(field "$tmp/g-single.log" epoch digest)" ]
}

compare_script() {
	local rc
	"$tool" "${small[@]}" -n 1 --iters 4 --log "$tmp/x.log" || return 1
	"$cmp" "$tmp/x.log" "$tmp/x.log" 4 || return 1
	sed '3,$s/^iter 3 \(.*\) loss 0x1/iter 3 \1 loss 0x2/' "$tmp/x.log" >"$tmp/y.log"
	"$cmp" "$tmp/x.log" "$tmp/y.log" 2 || return 1
	"$cmp" "$tmp/x.log" "$tmp/y.log" 4; rc=$?
	[ $rc = 1 ] || return 1
	"$cmp" "$tmp/x.log" "$tmp/y.log" 4 | grep -q '^train-compare: iteration 3 differs: ' &&
	{ "$cmp" "$tmp/x.log" "$tmp/x.log" 5; [ $? = 1 ]; } &&
	{ "$cmp" "$tmp/x.log" "$tmp/x.log" 0 2>/dev/null; [ $? = 2 ]; }
}

# bad input: status 2 (usage) or 1 (runtime), exactly one line on stderr
bad() {		# status, args...
	local want=$1
	shift
	one_error "$want" incnn-train "$tool" "$@"
}

bad_input() {
	printf 'INCNNMN1garbage' >"$tmp/bad.bin"
	bad 2 &&
	bad 2 --data synth -n 0 &&
	bad 2 --data synth -n 65 &&
	bad 2 --data synth --epochs 0 &&
	bad 2 --data synth --iters -1 &&
	bad 2 --data synth --algo tree &&
	bad 2 --data synth --codec lz4 &&
	bad 2 --data synth --codec trunc &&
	bad 2 --data synth --codec zip &&
	bad 2 --data synth --bound 2^-8 &&
	bad 2 --data synth --codec ebq --bound 2^-31 &&
	bad 2 --data synth --codec ebq --bound 0.3 &&
	bad 2 --data synth --hidden 10,,10 &&
	bad 2 --data synth --hidden 1,2,3,4,5,6,7,8 &&
	bad 2 --data synth --hidden 0 &&
	bad 2 --data synth --batch 0 &&
	bad 2 --data synth --lr 0 &&
	bad 2 --data synth --lr abc &&
	bad 2 --data synth --momentum 1 &&
	bad 2 --data synth --wd -1 &&
	bad 2 --data synth --tos 256 &&
	bad 2 --data synth --seed x &&
	bad 2 --data synth --method zip &&
	bad 2 --data synth --method &&
	bad 2 --data synth --buckets fixed &&
	bad 2 --data synth --buckets &&
	bad 2 --data synth --frobnicate &&
	bad 2 --data synth --epochs &&
	bad 2 --data synth extra &&
	bad 1 --data "$tmp/none.bin" -n 1 &&
	bad 1 --data "$tmp/bad.bin" -n 1 &&
	bad 1 --data synth --hidden 8 -n 1 -q --batch 4096 &&
	bad 1 --data synth --hidden 8 -n 1 -q --log "$tmp/no/such/dir/log" &&
	"$tool" --help | grep -q '^usage: incnn-train'
}

mnist_run() {
	"$tool" --data "$mnist" -n 2 --iters 3 --codec inceptionn --bound 2^-10 \
		-q --log "$tmp/m.log" &&
	grep -q 'arch 784-500-500-500-500-10 (1149010 parameters)' "$tmp/m.log" &&
	grep -q "^# data $mnist: 8000 train, 2000 test" "$tmp/m.log" &&
	awk '$1 == "iter" && $2 == 1 { exit !($7 > 2 && $7 < 3) }' "$tmp/m.log" &&
	grep -q '^stop iter 3 epoch 1 .* identical 2 ' "$tmp/m.log"
}

check "two runs give identical logs" deterministic
check "training on synthetic data learns (accuracy >= 0.9)" learns
check "2 ranks: ring and ps give bit-identical losses" ring_is_ps_for_2
check "1 rank x batch 50 = 2 ranks x batch 25 (relative 1e-5)" one_vs_two
check "ebq 2^-6 emulation: 4 identical replicas, deterministic" codec_replicas ebq 2^-6
check "inceptionn 2^-8 emulation: 4 identical replicas, deterministic" codec_replicas inceptionn 2^-8
check "env rendezvous (MASTER_ADDR...) = -n, bit for bit" env_rendezvous
check "--iters stops mid-epoch with a digest" iters_stop
check "--method none|thc x --buckets single|mgwfbp: summary, replicas" methods_buckets
check "--method thc, single bucket: converges over 6 epochs, finite losses" thc_converges
check "--algo ps: the summary's bytes up and down (THC: 13312, 26624)" thc_ps_updown
check "--method gradiveq: plain without --gvq-fc, compressed with it" gradiveq
check "train-compare.sh finds the first difference" compare_script
check "bad input: one-line error, exit status 2 or 1" bad_input
if [ -f "$mnist" ]; then
	check "MNIST: 3 iterations of the HDC network, 2 ranks" mnist_run
else
	skip_test "MNIST: no $mnist (scripts/demo/mnist-fetch.sh)"
fi

echo "# Totals: pass:$((n - fail - skip)) fail:$fail xfail:0 xpass:0 skip:$skip error:0"
[ $fail = 0 ]
