#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# incnn-wfbp (ASan/UBSan build): the planner/simulator CLI. Exact numbers
# for a hand-checkable configuration, JSON consistency for every model,
# MG-WFBP never worse than the other schedules, deterministic output,
# --list-layers, and one-line errors with exit status 2 for bad input.
set -u
. "$(dirname "$0")/../ktap_lib.sh"
tool=${INCNN_WFBP:-$build/asan/bin/incnn-wfbp}
need_tool "$tool" incnn-wfbp

# AlexNet, 4 workers, 10 Gbit/s, 50 us: a = 6 * 50 us = 300 us,
# b = 1.5 / 1.25e9 = 1.2 ns/B; one bucket after 100 ms of backward:
# 100 + 0.3 + 1.2e-6 * 244,403,360 B = 393.584032 ms
alexnet_exact() {
	"$tool" --model alexnet --workers 4 --bandwidth 10Gbit --latency 50us \
		--backward-ms 100 --json >"$tmp/a.json" &&
	json_check "$tmp/a.json" '
d["params"] == 61100840 and d["layers"] == 8 and
abs(d["alpha_s"] - 300e-6) < 1e-15 and abs(d["beta_s_per_byte"] - 1.2e-9) < 1e-21 and
[s["schedule"] for s in d["schedules"]] == ["wfbp", "single", "fixed", "mgwfbp"] and
S["wfbp"]["buckets"] == 8 and S["single"]["buckets"] == 1 and
abs(S["single"]["iter_ms"] - 393.584032) < 1e-6 and
abs(S["single"]["comm_ms"] - 293.584032) < 1e-6 and
abs(S["single"]["exposed_ms"] - 293.584032) < 1e-6 and
S["single"]["bucket_list"][0]["bytes"] == 244403360 and
S["single"]["bucket_list"][0]["first_layer"] == "classifier.6" and
S["single"]["bucket_list"][0]["last_layer"] == "features.0" and
abs(S["wfbp"]["comm_ms"] - (8 * 0.3 + 1.2e-6 * 244403360)) < 1e-6'
}

# every model: buckets cover the model in order, times consistent, MG-WFBP
# no worse than any other schedule nor than the paper's one-pass rule,
# which is no worse than WFBP (JSON numbers have 10 significant digits)
consistent() {	# extra args...
	local m
	for m in alexnet vgg16 resnet50 googlenet; do
		"$tool" --model "$m" "$@" --json >"$tmp/c.json" || return 1
		json_check "$tmp/c.json" '
all(sum(b["bytes"] for b in s["bucket_list"]) == 4 * d["params"] and
    len(s["bucket_list"]) == s["buckets"] and
    [b["first"] for b in s["bucket_list"]] ==
        [sum(x["layers"] for x in s["bucket_list"][:i]) for i in range(s["buckets"])] and
    all(b["end_ms"] >= b["start_ms"] for b in s["bucket_list"]) and
    abs(s["iter_ms"] - d["forward_ms"] - max(d["backward_ms"], s["bucket_list"][-1]["end_ms"])) <= 1e-8 * s["iter_ms"] and
    s["iter_ms"] >= s["compute_ms"]
    for s in d["schedules"]) and
all(S["mgwfbp"]["iter_ms"] <= s["iter_ms"] * (1 + 1e-9) for s in d["schedules"]) and
S["mgwfbp"]["iter_ms"] <= d["mgwfbp_pairwise"]["iter_ms"] * (1 + 1e-9) and
d["mgwfbp_pairwise"]["iter_ms"] <= S["wfbp"]["iter_ms"] * (1 + 1e-9)' ||
			{ echo "# model $m $*"; return 1; }
	done
}

# a slow link with a long latency: MG-WFBP merges (fewer buckets than WFBP)
# and beats WFBP
merges() {
	"$tool" --model resnet50 --workers 8 --bandwidth 1Gbit --latency 1ms \
		--json >"$tmp/m.json" &&
	json_check "$tmp/m.json" '
S["mgwfbp"]["buckets"] < S["wfbp"]["buckets"] == 107 and
S["mgwfbp"]["iter_ms"] < S["wfbp"]["iter_ms"] and
abs(d["alpha_s"] - 14e-3) < 1e-12'
}

# --ratio divides b; --alpha/--beta are taken as given
ratio_alpha() {
	"$tool" --model vgg16 --alpha 1ms --beta 8e-10 --ratio 4 \
		--schedule single --backward-ms 0 --json >"$tmp/r.json" &&
	json_check "$tmp/r.json" '
d["alpha_s"] == 1e-3 and abs(d["beta_s_per_byte"] - 2e-10) < 1e-24 and
d["bandwidth_Bps"] is None and len(d["schedules"]) == 1 and
abs(S["single"]["iter_ms"] - (1 + 2e-7 * 4 * 138357544)) < 1e-6'
}

# text output: the same twice (deterministic), four schedules, the
# MG-WFBP bucket list, --list-layers with one row per layer
text_output() {
	"$tool" --model googlenet --list-layers >"$tmp/t1" &&
	"$tool" --model googlenet --list-layers >"$tmp/t2" &&
	cmp "$tmp/t1" "$tmp/t2" &&
	[ "$(grep -cE '^  (wfbp|single|fixed|mgwfbp) ' "$tmp/t1")" = 4 ] &&
	grep -q '^# mgwfbp buckets' "$tmp/t1" &&
	[ "$(grep -cE '^  +[0-9]+ inception|^  +[0-9]+ conv|^  +[0-9]+ fc ' "$tmp/t1")" -ge 115 ] &&
	grep -q '^# incnn-wfbp: googlenet, 115 layers, 6624904 parameters' "$tmp/t1"
}

expect_usage() {	# ARGS...: exit 2, one line on stderr, nothing on stdout
	one_error 2 incnn-wfbp "$tool" "$@"
}

bad_args() {
	each_line expect_usage <<-EOF
		--workers 4
		--model lenet
		--model alexnet --workers 0
		--model alexnet --workers 4097
		--model alexnet --workers 2.5
		--model alexnet --bandwidth 10
		--model alexnet --bandwidth 10Gbps
		--model alexnet --bandwidth 0Gbit
		--model alexnet --bandwidth -1Gbit
		--model alexnet --latency 50
		--model alexnet --latency 11s
		--model alexnet --alpha 1ms
		--model alexnet --beta 1e-9
		--model alexnet --alpha 1ms --beta 1e-9 --latency 5us
		--model alexnet --beta 2 --alpha 1ms
		--model alexnet --ratio 0.5
		--model alexnet --bucket-mb 0
		--model alexnet --backward-ms -1
		--model alexnet --forward-ms nan
		--model alexnet --schedule tree
		--model alexnet extra
		--model
		--frobnicate
	EOF
}

help_ok() {
	"$tool" --help >"$tmp/h" && grep -q '^usage: incnn-wfbp' "$tmp/h"
}

check "alexnet at 10 Gbit/s, 50 us, 4 workers: exact predicted times" alexnet_exact
check "all models, defaults: buckets cover the model, mgwfbp <= others" consistent
check "all models, slow link 100Mbit 2ms, 16 workers, ratio 4" consistent --bandwidth 100Mbit --latency 2ms --workers 16 --ratio 4
check "all models, fast link 100Gbit 5us, forward 30 ms" consistent --bandwidth 100Gbit --latency 5us --forward-ms 30 --backward-ms 60
check "resnet50, 1 Gbit/s, 1 ms, 8 workers: mgwfbp merges and wins" merges
check "--alpha/--beta/--ratio taken as given" ratio_alpha
check "text output deterministic, --list-layers" text_output
check "bad arguments: exit 2, one line" bad_args
check "--help" help_ok

echo "# $((n - fail)) passed, $fail failed"
[ $fail = 0 ]
