# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# seeds-lib.sh: the C trainer's rows of `make seeds`, shared by the host
# driver (scripts/seeds/seeds.sh) and the VM part (seeds-vm.sh). Source it
# with TOOL set to incnn-train.
#
#   SEEDS_METHODS          the methods, in table order (INCNN_SEEDS_METHODS:
#                          a subset)
#   SEEDS_BUCKETS          the bucket schedules
#   seeds_why METHOD BUCKETS
#                          prints why the row cannot run with this
#                          incnn-train (nothing, status 0: it can run)
#   seeds_args METHOD BUCKETS WHERE
#                          fills SEEDS_ENV (env assignments) and SEEDS_ARGS
#                          (incnn-train arguments) for WHERE = host
#                          (codecs emulated in userspace) or vm (codec
#                          auto: the module's rule; everything else on
#                          unmarked sockets)

# shellcheck disable=SC2034 # used by the scripts that source this
# shellcheck disable=SC2206 # a list of words
SEEDS_METHODS=(${INCNN_SEEDS_METHODS:-none inceptionn ebq thc thc-wa gradiveq})
# shellcheck disable=SC2034
SEEDS_BUCKETS=(single mgwfbp)
SEEDS_BOUND=10

# _seeds_has OPTION [WORD]: incnn-train's --help names OPTION (and WORD)
_seeds_has() {
	local h
	h=$("$TOOL" --help 2>&1) || true
	grep -q -- "$1" <<<"$h" || return 1
	[ -z "${2:-}" ] || grep -q -- "$2" <<<"$h"
}

seeds_why() { # method buckets
	if [ "$2" != single ] && ! _seeds_has --buckets mgwfbp; then
		echo "not available: incnn-train has no --buckets mgwfbp yet (it sums the whole gradient in one allreduce)"
		return 1
	fi
	if [ "$1" = thc-wa ] && ! _seeds_has --algo ps; then
		echo "not available: incnn-train has no --algo ps"
		return 1
	fi
	if [ "$1" = gradiveq ]; then
		if ! _seeds_has --method gradiveq; then
			echo "not available: incnn-train has no --method gradiveq yet, and the library refuses INCNN_METHOD=gradiveq (not wired into the communicator)"
			return 1
		fi
		_seeds_probe gradiveq || return 1
	fi
	return 0
}

# _seeds_probe METHOD: one iteration on 2 local ranks of synthetic data;
# prints why not when it fails (e.g. a method not wired yet)
_seeds_probe() {
	local err
	seeds_args "$1" single host
	if ! err=$("$TOOL" -n 2 --data synth --iters 1 "${SEEDS_ARGS[@]}" -q 2>&1 >/dev/null); then
		echo "not available: $(head -n 1 <<<"$err")"
		return 1
	fi
}

seeds_args() { # method buckets where
	SEEDS_ENV=()
	SEEDS_ARGS=()
	case $1 in
	none)
		SEEDS_ARGS+=(--codec none --tos 0) ;;
	inceptionn | ebq)
		if [ "$3" = vm ]; then
			SEEDS_ARGS+=(--codec auto)
		else
			SEEDS_ARGS+=(--codec "$1" --bound "2^-$SEEDS_BOUND")
		fi ;;
	thc-wa) # THC's worker-aggregator mode (the paper's parameter server)
		SEEDS_ARGS+=(--codec none --tos 0 --method thc --algo ps) ;;
	thc | gradiveq)
		# GradiVeQ's uncompressed iterations quantised as the paper
		# does (emulated ebq, scale and error feedback; the sockets
		# stay unmarked): INCNN_SEEDS_GVQ_CODEC, "none" for fp32
		local gc=${INCNN_SEEDS_GVQ_CODEC:-ebq:2^-8}
		if [ "$1" = gradiveq ] && [ "$gc" != none ]; then
			SEEDS_ARGS+=(--codec "${gc%%:*}" --bound "${gc#*:}")
		else
			SEEDS_ARGS+=(--codec none)
		fi
		SEEDS_ARGS+=(--tos 0)
		if _seeds_has --method "$1"; then
			SEEDS_ARGS+=(--method "$1")
		else
			SEEDS_ENV+=("INCNN_METHOD=$1")
		fi
		# GradiVeQ on the MLP's fully connected layers; its schedule
		# scaled to our runs (the library's warm-up of 1000 iterations
		# is longer than a 10-epoch run): host warm-up 100, T_s 100;
		# VM (3 iterations) no warm-up, T_s 2: the last iteration(s)
		# compressed
		if [ "$1" = gradiveq ] && _seeds_has --gvq-fc; then
			SEEDS_ARGS+=(--gvq-fc)
			if [ "$3" = vm ]; then
				SEEDS_ENV+=(INCNN_GVQ_WARMUP=0 INCNN_GVQ_TS=2)
			else
				SEEDS_ENV+=("INCNN_GVQ_WARMUP=${INCNN_SEEDS_GVQ_WARMUP:-100}"
					    "INCNN_GVQ_TS=${INCNN_SEEDS_GVQ_TS:-100}")
			fi
		fi ;;
	esac
	if _seeds_has --buckets mgwfbp; then
		SEEDS_ARGS+=(--buckets "$2")
	fi
}
