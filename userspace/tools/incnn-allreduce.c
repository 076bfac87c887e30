// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn-allreduce: allreduce benchmark of the incnn collective library,
 * in the manner of nccl-tests' all_reduce_perf.
 *
 *	incnn-allreduce -n 4 -b 4K -e 64M -f 2          4 local ranks
 *	MASTER_ADDR=h0 MASTER_PORT=29500 RANK=r WORLD_SIZE=w incnn-allreduce ...
 *
 * For every size: every rank restores its input, passes a barrier, and
 * times one allreduce; time is the mean over the timed iterations of the
 * slowest rank's mean, algbw = bytes / time, busbw = algbw * 2(N-1)/N.
 * After the last iteration every rank's result is hashed (FNV-1a) and the
 * hashes gathered through the store: "identical" says whether all
 * replicas are the same bit for bit; --json also gives rank 0's hash
 * ("digest"), to compare results between runs. Rank 0 regenerates every rank's
 * input (deterministic) and reports the largest error against the exact
 * (float64) sum, and the error budget: the codec's (where it has one;
 * 0 without a codec) plus the fp32 rounding of the sums, the figure every
 * error is checked against.
 *
 * With --model, instead of the size sweep: the model's layer gradients
 * (userspace/collective/models.c) go through incnn_allreduce_layers()
 * once per schedule (wfbp, single, fixed, mgwfbp), with ready times from
 * a backward pass of --backward-ms split by FLOPs; the time is that of a
 * whole call (the emulated backward included), the slowest rank's mean.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/incnn.h>
#include <incnn/gen.h>
#include "codec.h"
#include "toolutil.h"
#include "commutil.h"
#include <incnn/collective.h>
#include <incnn/wfbp.h>

#define PROG		"incnn-allreduce"
#define MAX_SIZES	64

struct ar_opts {
	struct tu_coll_opts co;		/* -n, --algo, --codec, --bound, ... */
	uint64_t minb, maxb, factor;
	unsigned int iters, warmup;
	const struct incnn_codec *codec;
	bool have_bound, have_bits;
	unsigned int param;
	size_t chunk;
	enum incnn_dist dist;
	double scale;
	uint64_t seed;
	bool json, check;
	enum incnn_coll_method method;	/* --method */
	/* gradient buckets: --model, --schedule (-1: all), --backward-ms */
	const char *model;
	int sched;
	double backward_ms;
	uint64_t bucket_bytes;
	/* --bound-scale, --error-feedback: keyed calls (-1: not given) */
	int bscale, ef;
};

struct ar_row {
	uint64_t bytes;
	uint64_t digest;		/* FNV-1a of rank 0's result */
	double time_us, algbw, busbw, max_err, budget;
	uint64_t wire_bytes;		/* rank 0 sent, per call */
	bool identical, within;
	int64_t gvq_calls;		/* compressed calls, -1: not GradiVeQ */
};

/* one-line errors: "PROG: message", with the exit status to return */
#define usage_err(...)	tu_error(PROG, TU_EXIT_USAGE, __VA_ARGS__)
#define fail(...)	tu_error(PROG, TU_EXIT_RUNTIME, __VA_ARGS__)

static const char *method_name(enum incnn_coll_method m)
{
	return m == INCNN_COLL_METHOD_THC ? "thc" :
	       m == INCNN_COLL_METHOD_GRADIVEQ ? "gradiveq" : "none";
}

static void usage(FILE *f)
{
	char names[64];

	tu_codec_names(names, sizeof(names));
	fprintf(f,
"usage: " PROG " [-n RANKS] [-b MIN] [-e MAX] [-f FACTOR] [-i ITERS] [-w WARMUP]\n"
"                       [--algo ring|ps] [--codec NAME|auto|none] [--bound 2^-K]\n"
"                       [--bits B] [--tos TOS] [--chunk BYTES] [--timeout MS]\n"
"                       [--dist D] [--scale X] [--seed S] [--check] [--json]\n"
"                       [--method none|thc|gradiveq]\n"
"                       [--model M [--schedule S] [--backward-ms MS] [--bucket-mb MB]]\n"
"\n"
"Allreduce benchmark of the incnn collective library (sum of fp32 vectors).\n"
"With -n, launch RANKS local ranks (processes on 127.0.0.1); without it, run\n"
"as one rank of a job described by MASTER_ADDR, MASTER_PORT, RANK and\n"
"WORLD_SIZE (rank 0 prints the results).\n"
"\n"
"  -n, --ranks N      local ranks to launch, 1..%d\n"
"  -b, --minbytes S   smallest size in bytes (K, M, G suffixes; default 4K)\n"
"  -e, --maxbytes S   largest size (default 64M)\n"
"  -f, --stepfactor F multiply the size by F, at least 2 (default 2)\n"
"  -i, --iters N      timed iterations per size (default 10)\n"
"  -w, --warmup N     untimed iterations per size (default 2)\n"
"  -a, --algo A       ring (INCEPTIONN's ring allreduce, default) or ps\n"
"                     (workers -> aggregator rank 0 -> workers)\n"
"  -c, --codec NAME   emulate NAME (%s) in userspace, as the\n"
"                     module would apply it; auto (default): the module's\n"
"                     rule for the ToS; none: no emulation\n"
"      --bound 2^-K   error bound of inceptionn, ebq and zebq (default 2^-10)\n"
"      --bits B       bits trunc keeps: 8, 16 or 24 (default 16)\n"
"      --tos TOS      IP ToS of the data sockets (default 0x28, 0: unmarked)\n"
"      --chunk S      pipeline chunk in bytes (default 256K)\n"
"      --timeout MS   a rank making no progress for MS fails the job (30000)\n"
"      --dist D       input data: laplace (default), normal, uniform,\n"
"                     loguniform\n"
"      --scale X      scale of the input data (default 1e-3)\n"
"      --seed S       seed of the input data (default 1)\n"
"  -m, --model M      instead of the size sweep: allreduce the layer gradients\n"
"                     of alexnet, vgg16, resnet50 or googlenet per schedule\n"
"                     (incnn_allreduce_layers; time per iteration)\n"
"  -s, --schedule S   wfbp, single, fixed, mgwfbp or all (default all)\n"
"      --backward-ms MS  emulated backward pass: layer i is ready after its\n"
"                     share of MS by FLOPs (default 0: all ready at once)\n"
"      --bucket-mb MB fixed schedule's bucket size in MiB (default 25)\n"
"      --method M     compression inside the collective: none (default),\n"
"                     thc (4-bit THC, ring or ps) or gradiveq (ring; each\n"
"                     size is two synthetic 16-filter 3x3 conv layers, the\n"
"                     -w warm-up calls are its sampling phase (-w >= 2), the\n"
"                     timed calls compressed; INCNN_GVQ_D, INCNN_GVQ_K);\n"
"                     unmarked sockets; no error budget: max_err is\n"
"                     reported, not checked\n"
"      --bound-scale S  auto or off: scale-relative bounds; with it or\n"
"                     --error-feedback, every size is a keyed call\n"
"                     (incnn_allreduce_bucket, ring), the result of its\n"
"                     last iteration has no error budget (replicas checked)\n"
"      --error-feedback on|off  feed each rank's quantisation error back\n"
"      --check        exit 1 unless every result is bit-identical across\n"
"                     ranks and within the error budget\n"
"  -j, --json         one JSON object on stdout\n"
"  -h, --help         this help\n",
		TU_MAX_LOCAL, names);
}

enum {
	OPT_BITS = TU_OPT_FREE,
	OPT_CHUNK,
	OPT_DIST,
	OPT_SCALE,
	OPT_SEED,
	OPT_CHECK,
	OPT_BACKWARD,
	OPT_BUCKET,
	OPT_METHOD,
	OPT_BSCALE,
	OPT_EF,
};

static const struct option long_opts[] = {
	TU_COLL_LONG_OPTS,
	{ "minbytes", required_argument, NULL, 'b' },
	{ "maxbytes", required_argument, NULL, 'e' },
	{ "stepfactor", required_argument, NULL, 'f' },
	{ "iters", required_argument, NULL, 'i' },
	{ "warmup", required_argument, NULL, 'w' },
	{ "bits", required_argument, NULL, OPT_BITS },
	{ "chunk", required_argument, NULL, OPT_CHUNK },
	{ "dist", required_argument, NULL, OPT_DIST },
	{ "scale", required_argument, NULL, OPT_SCALE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "model", required_argument, NULL, 'm' },
	{ "schedule", required_argument, NULL, 's' },
	{ "backward-ms", required_argument, NULL, OPT_BACKWARD },
	{ "bucket-mb", required_argument, NULL, OPT_BUCKET },
	{ "method", required_argument, NULL, OPT_METHOD },
	{ "bound-scale", required_argument, NULL, OPT_BSCALE },
	{ "error-feedback", required_argument, NULL, OPT_EF },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void opts_init(struct ar_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->minb = 4096;
	o->maxb = 64 << 20;
	o->factor = 2;
	o->iters = 10;
	o->warmup = 2;
	o->co.tos = INCNN_COLL_DEFAULT_TOS;
	o->chunk = INCNN_COLL_DEFAULT_CHUNK;
	o->co.timeout_ms = INCNN_COLL_DEFAULT_TIMEOUT_MS;
	o->dist = INCNN_DIST_LAPLACE;
	o->scale = 1e-3;
	o->seed = 1;
	o->sched = -1;
	o->bucket_bytes = INCNN_WFBP_DEFAULT_BUCKET_BYTES;
	o->bscale = o->ef = -1;
}

/* --bound-scale auto|off, --error-feedback on|off: 0, an exit status,
 * or -1 when @c is neither. */
static int keyed_opt(struct ar_opts *o, int c, const char *arg)
{
	const char *on = c == OPT_BSCALE ? "auto" : "on";
	int v;

	if (c != OPT_BSCALE && c != OPT_EF)
		return -1;
	if (!strcmp(arg, on))
		v = 1;
	else if (!strcmp(arg, "off"))
		v = 0;
	else
		return usage_err("--%s %s: must be %s or off",
				 c == OPT_BSCALE ? "bound-scale" :
				 "error-feedback", arg, on);
	*(c == OPT_BSCALE ? &o->bscale : &o->ef) = v;
	return 0;
}

/* The size sweep's and the data's options: 0, an exit status, or -1
 * when @c is not one of them. */
static int sweep_opt(struct ar_opts *o, int c, const char *arg)
{
	uint64_t v;
	long l;
	int d;

	switch (c) {
	case 'b':
	case 'e':
		if (tu_parse_u64(arg, &v) || v > (1ull << 34))
			return usage_err("-%c %s: must be a size in bytes up to 16G",
					 c, arg);
		*(c == 'b' ? &o->minb : &o->maxb) = v;
		return 0;
	case 'f':
		if (tu_parse_u64(arg, &v) || v < 2 || v > 1024)
			return usage_err("-f %s: must be 2..1024", arg);
		o->factor = v;
		return 0;
	case 'i':
	case 'w':
		if (tu_parse_long(arg, c == 'i' ? 1 : 0, 100000, &l))
			return usage_err("-%c %s: must be %d..100000", c, arg,
					 c == 'i' ? 1 : 0);
		*(c == 'i' ? &o->iters : &o->warmup) = (unsigned int)l;
		return 0;
	case OPT_CHUNK:
		if (tu_parse_u64(arg, &v) || v < 4 || v > (1u << 30))
			return usage_err("--chunk %s: must be 4..1G bytes", arg);
		o->chunk = v;
		return 0;
	case OPT_DIST:
		d = incnn_dist_parse(arg);
		if (d < 0 || d == INCNN_DIST_BITS)
			return usage_err("--dist %s: must be laplace, normal, uniform or loguniform",
					 arg);
		o->dist = d;
		return 0;
	case OPT_SCALE:
		if (tu_parse_double(arg, &o->scale) || !(o->scale > 0) ||
		    o->scale > 1e30)
			return usage_err("--scale %s: must be a positive number",
					 arg);
		return 0;
	case OPT_SEED:
		if (tu_parse_u64(arg, &o->seed))
			return usage_err("--seed %s: must be a non-negative integer",
					 arg);
		return 0;
	}
	return -1;
}

/* --model and what goes with it: as sweep_opt(). */
static int model_opt(struct ar_opts *o, int c, const char *arg,
		     const char **sched)
{
	struct incnn_model *model;
	double mb;

	switch (c) {
	case 'm':
		if (incnn_model_build(arg, &model))
			return usage_err("--model %s: must be alexnet, vgg16, resnet50 or googlenet",
					 arg);
		incnn_model_free(model);
		o->model = arg;
		return 0;
	case 's':
		*sched = arg;
		return 0;
	case OPT_BACKWARD:
		if (tu_parse_double(arg, &o->backward_ms) ||
		    !(o->backward_ms >= 0) || o->backward_ms > 1e6)
			return usage_err("--backward-ms %s: must be 0..1e6", arg);
		return 0;
	case OPT_BUCKET:
		if (tu_parse_double(arg, &mb) || !(mb * 1048576 >= 1) ||
		    mb > 1048576)
			return usage_err("--bucket-mb %s: must be a positive size in MiB",
					 arg);
		o->bucket_bytes = (uint64_t)ceil(mb * 1048576);
		return 0;
	}
	return -1;
}

/* --codec, --bound and --bits together. */
static int codec_args(struct ar_opts *o, const char *bits)
{
	char names[64], range[32];

	if (o->co.codec_name && strcmp(o->co.codec_name, "auto") &&
	    strcmp(o->co.codec_name, "none")) {
		o->codec = incnn_codec_find(o->co.codec_name);
		tu_codec_names(names, sizeof(names));
		if (!o->codec)
			return usage_err("--codec %s: unknown codec (%s, auto, none)",
					 o->co.codec_name, names);
		o->param = o->codec->param.def;
	}
	if (o->co.bound &&
	    tu_parse_bound_opt(PROG, o->co.bound, o->codec, &o->param))
		return TU_EXIT_USAGE;
	if (!bits)
		return 0;
	if (!o->codec || !tu_codec_takes_bits(o->codec))
		return usage_err("--bits needs --codec trunc");
	if (incnn_codec_param_parse(&o->codec->param, bits, &o->param))
		return usage_err("--bits %s: must be %s", bits,
				 incnn_codec_param_range(&o->codec->param,
							 range, sizeof(range)));
	return 0;
}

static int parse_args(struct ar_opts *o, int argc, char **argv)
{
	const char *bits = NULL, *sched = NULL;
	int c, r;

	opts_init(o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:b:e:f:i:w:a:c:m:s:jh", long_opts,
				NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == OPT_BITS) {
			bits = optarg;
			continue;
		}
		if (c == OPT_METHOD) {
			if (!strcmp(optarg, "none"))
				o->method = INCNN_COLL_METHOD_NONE;
			else if (!strcmp(optarg, "thc"))
				o->method = INCNN_COLL_METHOD_THC;
			else if (!strcmp(optarg, "gradiveq"))
				o->method = INCNN_COLL_METHOD_GRADIVEQ;
			else
				return usage_err("--method %s: must be none, thc or gradiveq",
						 optarg);
			continue;
		}
		if (c == OPT_CHECK || c == 'j') {
			*(c == 'j' ? &o->json : &o->check) = true;
			continue;
		}
		r = keyed_opt(o, c, optarg);
		if (r < 0)
			r = sweep_opt(o, c, optarg);
		if (r < 0)
			r = model_opt(o, c, optarg, &sched);
		if (r < 0)
			r = tu_coll_opt(PROG, &o->co, c, optarg, argv);
		if (r)
			return r;
	}
	if (optind < argc)
		return usage_err("unexpected argument '%s'", argv[optind]);
	if (sched) {
		o->sched = strcmp(sched, "all") ? incnn_sched_parse(sched) : -1;
		if (o->sched < 0 && strcmp(sched, "all"))
			return usage_err("--schedule %s: must be wfbp, single, fixed, mgwfbp or all",
					 sched);
	}
	if ((sched || o->backward_ms > 0 ||
	     o->bucket_bytes != INCNN_WFBP_DEFAULT_BUCKET_BYTES) && !o->model)
		return usage_err("--schedule, --backward-ms and --bucket-mb need --model");
	if (o->method > INCNN_COLL_METHOD_NONE && o->model)
		return usage_err("--method %s: only the size sweep (not --model)",
				 method_name(o->method));
	if ((o->bscale >= 0 || o->ef >= 0) &&
	    (o->co.ps || o->model || o->method > INCNN_COLL_METHOD_NONE))
		return usage_err("--bound-scale and --error-feedback: the ring's size sweep only (not --algo ps, --model or --method)");
	if (o->method == INCNN_COLL_METHOD_GRADIVEQ && o->co.ps)
		return usage_err("--method gradiveq: ring only (not --algo ps)");
	if (o->method == INCNN_COLL_METHOD_GRADIVEQ && o->warmup < 2)
		return usage_err("--method gradiveq: -w %u: must be at least 2 (its sampling calls)",
				 o->warmup);
	if (o->minb / 4 > o->maxb / 4)
		return usage_err("-b %llu is larger than -e %llu",
				 (unsigned long long)o->minb,
				 (unsigned long long)o->maxb);
	return codec_args(o, bits);
}

/* --- one rank --------------------------------------------------------- */

static uint64_t fnv1a(const void *p, size_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void gen_rank_input(const struct ar_opts *o, int rank, float *x,
			   size_t n)
{
	struct incnn_rng rng;

	incnn_rng_seed(&rng, o->seed * 0x9e3779b97f4a7c15ull + (uint64_t)rank);
	incnn_gen_f32(&rng, o->dist, o->scale, x, n);
}

/*
 * The codec's error budget per element, before fp32 rounding
 * (check_errors() adds that); < 0: none.
 */
static double budget_of(const struct ar_opts *o, unsigned int codec,
			unsigned int param, int N)
{
	int hops = o->co.ps ? N - 1 : N;
	double e;

	if (o->method > INCNN_COLL_METHOD_NONE && N > 1)
		return -1;	/* THC's, GradiVeQ's error: no budget */
	if ((o->bscale >= 0 || o->ef >= 0) && N > 1 && codec)
		return -1;	/* relative bound, residuals: no budget */
	if (N == 1)
		return 0;
	e = incnn_codec_max_err(codec, param);
	return e < 0 ? -1 : hops * e;
}

/*
 * What both reports begin with: '{"ranks":N,...,"codec":"NAME"' (--json)
 * or '# PROG: N ranks (...), algo A, codec C' (text); the caller goes on.
 */
static void print_job(const struct ar_opts *o, int N, unsigned int codec,
		      unsigned int param)
{
	const struct incnn_codec *c = incnn_codec_get(codec);
	char label[48];

	if (o->json) {
		printf("{\"ranks\":%d,\"launch\":", N);
		tu_json_str(stdout, o->co.local ? "local" : "env");
		printf(",\"algo\":");
		tu_json_str(stdout, o->co.ps ? "ps" : "ring");
		printf(",\"codec\":");
		tu_json_str(stdout, codec && c ? c->name : "none");
		printf(",\"method\":");
		tu_json_str(stdout, method_name(o->method));
		return;
	}
	printf("# " PROG ": %d rank%s (%s), algo %s, codec %s%s%s", N,
	       N == 1 ? "" : "s", o->co.local ? "local processes" : "env",
	       o->co.ps ? "ps" : "ring",
	       incnn_codec_label(codec, param, label, sizeof(label)),
	       o->method > INCNN_COLL_METHOD_NONE ? ", method " : "",
	       o->method > INCNN_COLL_METHOD_NONE ? method_name(o->method) : "");
}

/* a JSON error budget: null when there is none (< 0) */
static void json_budget(double budget)
{
	if (budget < 0)
		printf("null");
	else
		tu_json_num(stdout, budget);
}

static void print_header(const struct ar_opts *o, int N, unsigned int codec,
			 unsigned int param)
{
	/* THC/GradiVeQ sockets are unmarked whatever --tos says */
	int tos = o->method > INCNN_COLL_METHOD_NONE ? 0 : o->co.tos;

	print_job(o, N, codec, param);
	if (o->json) {
		printf(",\"param\":%u,\"tos\":%d,\"chunk\":%zu,\"iters\":%u,"
		       "\"warmup\":%u,\"dist\":", codec ? param : 0, tos,
		       o->chunk, o->iters, o->warmup);
		tu_json_str(stdout, incnn_dist_name(o->dist));
		printf(",\"scale\":");
		tu_json_num(stdout, o->scale);
		printf(",\"seed\":%llu,\"results\":[",
		       (unsigned long long)o->seed);
		return;
	}
	printf(", tos 0x%02x, chunk %zu B\n", tos, o->chunk);
	printf("# data %s scale %g seed %llu; %u timed iterations after %u warm-up\n#\n",
	       incnn_dist_name(o->dist), o->scale, (unsigned long long)o->seed,
	       o->iters, o->warmup);
	printf("# %12s %11s %10s %12s %12s %11s %10s %9s\n", "size(B)", "count",
	       "time(us)", "algbw(GB/s)", "busbw(GB/s)", "max_err", "budget",
	       "identical");
	fflush(stdout);
}

static void print_row(const struct ar_opts *o, const struct ar_row *r,
		      bool first)
{
	if (o->json) {
		printf("%s\n{\"bytes\":%llu,\"count\":%llu,\"time_us\":",
		       first ? "" : ",", (unsigned long long)r->bytes,
		       (unsigned long long)r->bytes / 4);
		tu_json_num(stdout, r->time_us);
		printf(",\"algbw_gbps\":");
		tu_json_num(stdout, r->algbw);
		printf(",\"busbw_gbps\":");
		tu_json_num(stdout, r->busbw);
		printf(",\"max_abs_err\":");
		tu_json_num(stdout, r->max_err);
		printf(",\"budget\":");
		json_budget(r->budget);
		printf(",\"identical\":%s,\"within_budget\":%s,"
		       "\"digest\":\"%016llx\",\"wire_bytes\":%llu",
		       r->identical ? "true" : "false",
		       r->within ? "true" : "false",
		       (unsigned long long)r->digest,
		       (unsigned long long)r->wire_bytes);
		if (r->gvq_calls >= 0)
			printf(",\"gvq_compressed_calls\":%lld}",
			       (long long)r->gvq_calls);
		else
			printf("}");
		return;
	}
	printf("  %12llu %11llu %10.1f %12.3f %12.3f %11.3e ",
	       (unsigned long long)r->bytes, (unsigned long long)r->bytes / 4,
	       r->time_us, r->algbw, r->busbw, r->max_err);
	if (r->budget < 0)
		printf("%10s", "-");
	else
		printf("%10.3e", r->budget);
	printf(" %9s\n", r->identical ? (r->within ? "yes" : "yes/over") :
	       "NO");
	fflush(stdout);
}

/* per-rank figures gathered through the store */
struct ar_meta {
	uint64_t hash;		/* FNV-1a of the result */
	double seconds, comm;	/* sums over the timed iterations */
	uint64_t wire;		/* bytes sent in the timed iterations */
	uint64_t udig;		/* GradiVeQ: the compressors' digest */
	uint64_t gvq_calls;	/* GradiVeQ: compressed calls of the size */
};

/* the figures rank 0 makes of every rank's */
struct ar_sum {
	uint64_t digest;	/* rank 0's hash */
	bool identical;		/* every rank's hash is rank 0's */
	double worst, comm;	/* the slowest rank's seconds, its comm */
};

/*
 * Rank 0: the exact (float64) sum of every rank's first @n input floats
 * (regenerated; @tmp: n floats of scratch) in @exact, and the sum of
 * their magnitudes in @ab.
 */
static void exact_sums(const struct ar_opts *o, int N, size_t n, float *tmp,
		       double *exact, double *ab)
{
	size_t i;
	int r;

	for (r = 0; r < N; r++) {
		gen_rank_input(o, r, tmp, n);
		for (i = 0; i < n; i++) {
			exact[i] += tmp[i];
			ab[i] += fabs(tmp[i]);
		}
	}
}

/*
 * Every rank: hash the @n floats of the result in @buf and gather the
 * hashes and timings (@me: the rest filled in) into @all (N entries);
 * rank 0 then sums them up in @sum. 0 or the exit status (reported).
 */
static int gather(struct incnn_comm *comm, const float *buf, size_t n,
		  struct ar_meta *me, struct ar_meta *all, struct ar_sum *sum)
{
	int N = incnn_comm_size(comm), r;

	me->hash = fnv1a(buf, 4 * n);
	if (incnn_comm_allgather_meta(comm, me, sizeof(*me), all))
		return fail("rank %d: %s", incnn_comm_rank(comm),
			    incnn_comm_strerror(comm));
	sum->digest = all[0].hash;
	sum->identical = true;
	sum->worst = 0;
	sum->comm = 0;
	for (r = 0; r < N; r++) {
		if (all[r].hash != all[0].hash || all[r].udig != all[0].udig)
			sum->identical = false;
		if (all[r].seconds > sum->worst) {
			sum->worst = all[r].seconds;
			sum->comm = all[r].comm;
		}
	}
	return 0;
}

/*
 * Rank 0: the largest error of the @n result floats in @buf against the
 * exact sums, in *@max_err; whether every one is within *@budget (< 0:
 * none, left as is). A budget >= 0 is the codec's (budget_of()); the fp32
 * rounding of the N - 1 additions is added to it, for the largest sum of
 * magnitudes, so that *@budget on return is the one figure every error
 * is checked against: within if and only if *@max_err <= *@budget.
 */
static bool check_errors(const float *buf, const double *exact,
			 const double *ab, size_t n, int N, double *budget,
			 double *max_err)
{
	double b = *budget, max_ab = 0;
	bool nan = false;
	size_t i;

	*max_err = 0;
	for (i = 0; i < n; i++) {
		double e = fabs(buf[i] - exact[i]);

		if (isnan(e))
			nan = true;
		else if (e > *max_err)
			*max_err = e;
		if (ab[i] > max_ab)
			max_ab = ab[i];
	}
	if (nan)
		*max_err = NAN;
	if (b < 0)
		return true;
	*budget = b + N * 0x1p-23 * (max_ab + b);
	return !nan && *max_err <= *budget;
}

/* after the last row: close the JSON object, report --check's failure */
static void finish(const struct ar_opts *o, int rank, int status, int ret)
{
	if (rank == 0 && o->json)
		printf("\n]}\n");
	if (rank == 0 && o->check && status == TU_EXIT_RUNTIME && !ret)
		fail("--check: results differ between ranks or exceed the error budget");
}

/* --- --model: the layers API per schedule --------------------------------- */

static void print_layers_header(const struct ar_opts *o, int N,
				unsigned int codec, unsigned int param,
				const struct incnn_model *m)
{
	print_job(o, N, codec, param);
	if (o->json) {
		printf(",\"param\":%u,\"model\":", codec ? param : 0);
		tu_json_str(stdout, m->name);
		printf(",\"layers\":%zu,\"params\":%llu,\"backward_ms\":",
		       m->nlayers, (unsigned long long)m->params);
		tu_json_num(stdout, o->backward_ms);
		printf(",\"bucket_bytes\":%llu,\"iters\":%u,\"warmup\":%u,\"schedules\":[",
		       (unsigned long long)o->bucket_bytes, o->iters, o->warmup);
		return;
	}
	printf(", model %s (%zu layers, %llu floats)\n", m->name, m->nlayers,
	       (unsigned long long)m->params);
	printf("# backward %.3f ms emulated; %u timed iterations after %u warm-up\n#\n",
	       o->backward_ms, o->iters, o->warmup);
	printf("# %-8s %8s %12s %12s %12s %11s %9s\n", "schedule", "buckets",
	       "iter(ms)", "comm(ms)", "exposed(ms)", "max_err", "identical");
	fflush(stdout);
}

/* a rank's buffers; exact, ab and tmp on rank 0 only */
struct ar_bufs {
	float *in, *buf, *tmp;
	double *exact, *ab;
	struct ar_meta *all;
};

/*
 * Room for @n floats (and one more: n may be 0) and N figures; this
 * rank's input in b->in; on rank 0 the exact sums (exact_sums()). 0 or
 * the exit status (reported).
 */
static int bufs_init(struct ar_bufs *b, const struct ar_opts *o,
		     struct incnn_comm *comm, size_t n)
{
	int N = incnn_comm_size(comm), rank = incnn_comm_rank(comm);

	memset(b, 0, sizeof(*b));
	b->in = malloc(4 * n + 4);
	b->buf = malloc(4 * n + 4);
	b->all = calloc((size_t)N, sizeof(*b->all));
	if (rank == 0) {
		b->exact = calloc(n + 1, sizeof(*b->exact));
		b->ab = calloc(n + 1, sizeof(*b->ab));
		b->tmp = malloc(4 * n + 4);
	}
	if (!b->in || !b->buf || !b->all ||
	    (rank == 0 && (!b->exact || !b->ab || !b->tmp)))
		return fail("out of memory for %zu floats", n);
	gen_rank_input(o, rank, b->in, n);
	if (rank == 0)
		exact_sums(o, N, n, b->tmp, b->exact, b->ab);
	return 0;
}

static void bufs_free(struct ar_bufs *b)
{
	free(b->in);
	free(b->buf);
	free(b->tmp);
	free(b->exact);
	free(b->ab);
	free(b->all);
}

/* one timed collective call; *comm_s: its time communicating, if known */
typedef int ar_call(struct incnn_comm *comm, void *arg, double *comm_s);

/*
 * o->warmup + o->iters times: restore the first @n input floats into
 * b->buf, pass a barrier and time @call; the sums over the timed
 * iterations in me->seconds and me->comm. 0 or the library's error.
 */
static int timed(const struct ar_opts *o, struct incnn_comm *comm,
		 struct ar_bufs *b, size_t n, ar_call *call, void *arg,
		 struct ar_meta *me)
{
	unsigned int it;
	double t0, cs;
	int ret;

	me->seconds = 0;
	me->comm = 0;
	me->wire = 0;
	for (it = 0; it < o->warmup + o->iters; it++) {
		uint64_t w0;

		memcpy(b->buf, b->in, 4 * n);
		ret = incnn_comm_barrier(comm);
		if (ret)
			return ret;
		w0 = incnn_comm_wire_bytes(comm);
		t0 = tu_now();
		ret = call(comm, arg, &cs);
		if (ret)
			return ret;
		if (it >= o->warmup) {
			me->seconds += tu_now() - t0;
			me->comm += cs;
			me->wire += incnn_comm_wire_bytes(comm) - w0;
		}
	}
	return 0;
}

/*
 * The size sweep's call: one incnn_allreduce() or incnn_allreduce_ps();
 * GradiVeQ: one incnn_allreduce_layers() of the @L synthetic layers.
 */
struct sweep_arg {
	bool ps;
	bool keyed;			/* incnn_allreduce_bucket(), key n */
	float *buf;
	size_t n;
	struct incnn_layer ly[2];
	size_t L;			/* 0: not GradiVeQ */
};

static int sweep_call(struct incnn_comm *comm, void *arg, double *comm_s)
{
	const struct sweep_arg *a = arg;

	*comm_s = 0;
	if (a->L)
		return incnn_allreduce_layers(comm, a->ly, a->L,
					      INCNN_SCHED_SINGLE, NULL, NULL);
	if (a->keyed)
		return incnn_allreduce_bucket(comm, a->buf, a->n, a->n, 0);
	return a->ps ? incnn_allreduce_ps(comm, a->buf, a->n) :
	       incnn_allreduce(comm, a->buf, a->n);
}

/*
 * --method gradiveq: the @n floats as two layers of n/2 and n - n/2
 * floats, each a 16-filter 3x3 convolution as deep as fits (16 x D x 3 x
 * 3 floats) followed by its unshaped rest (a "bias", the plain ring).
 */
static void gvq_layers(struct sweep_arg *a)
{
	size_t cnt[2] = { a->n / 2, a->n - a->n / 2 }, off = 0, i;

	a->L = 0;
	for (i = 0; i < 2; i++) {
		struct incnn_layer *l = &a->ly[a->L];

		if (!cnt[i])
			continue;
		memset(l, 0, sizeof(*l));
		l->grad = a->buf + off;
		l->count = cnt[i];
		if (cnt[i] >= 16 * 9) {
			l->shape = INCNN_LAYER_SHAPE_CONV;
			l->out_ch = 16;
			l->in_ch = (unsigned int)(cnt[i] / (16 * 9));
			l->kh = l->kw = 3;
		}
		off += cnt[i];
		a->L++;
	}
	if (!a->L)	/* n = 0: one empty layer */
		a->ly[a->L++] = (struct incnn_layer){ .grad = a->buf };
}

/* --model's call: one incnn_allreduce_layers() with schedule @s */
struct layers_arg {
	struct incnn_layer *ly;
	size_t L;
	int s;
	struct incnn_layers_opts *lo;
	struct incnn_layers_stats *st;
};

static int layers_call(struct incnn_comm *comm, void *arg, double *comm_s)
{
	const struct layers_arg *a = arg;
	int ret = incnn_allreduce_layers(comm, a->ly, a->L, a->s, a->lo,
					 a->st);

	*comm_s = a->st->comm;
	return ret;
}

/*
 * Every schedule: restore the gradients, barrier, one
 * incnn_allreduce_layers() with ready times from the model's simulated
 * backward; iteration time = the slowest rank's mean.
 */
/* One schedule's line of the --model report (JSON or text). */
static void print_sched(const struct ar_opts *o, int s,
			const struct incnn_layers_stats *st,
			const struct ar_sum *sum, double max_err,
			double budget, bool within, bool first,
			uint64_t wire)
{
	double worst = sum->worst / o->iters, wcomm = sum->comm / o->iters;

	if (!o->json) {
		printf("  %-8s %8zu %12.3f %12.3f %12.3f %11.3e %9s\n",
		       incnn_sched_name(s), st->nbuckets, worst * 1e3,
		       wcomm * 1e3, worst * 1e3 - o->backward_ms, max_err,
		       !sum->identical ? "NO" : within ? "yes" : "yes/over");
		if (s == INCNN_SCHED_MGWFBP)
			printf("#          probed cost: a = %.1f us, b = %.4g ns/B\n",
			       st->alpha * 1e6, st->beta * 1e9);
		return;
	}
	printf("%s\n{\"schedule\":\"%s\",\"buckets\":%zu,\"iter_ms\":",
	       first ? "" : ",", incnn_sched_name(s), st->nbuckets);
	tu_json_num(stdout, worst * 1e3);
	printf(",\"comm_ms\":");
	tu_json_num(stdout, wcomm * 1e3);
	printf(",\"exposed_ms\":");
	tu_json_num(stdout, worst * 1e3 - o->backward_ms);
	printf(",\"alpha_s\":");
	tu_json_num(stdout, s == INCNN_SCHED_MGWFBP ? st->alpha : NAN);
	printf(",\"beta_s_per_byte\":");
	tu_json_num(stdout, s == INCNN_SCHED_MGWFBP ? st->beta : NAN);
	printf(",\"max_abs_err\":");
	tu_json_num(stdout, max_err);
	printf(",\"budget\":");
	json_budget(budget);
	printf(",\"identical\":%s,\"within_budget\":%s,\"wire_bytes\":%llu}",
	       sum->identical ? "true" : "false", within ? "true" : "false",
	       (unsigned long long)(wire / o->iters));
}

/*
 * One schedule of run_layers() (la->s, its options set): timed, gathered,
 * and on rank 0 checked and printed. Returns 0 or the exit status to end
 * with; *ret gets the library's error.
 */
static int layers_sched(const struct ar_opts *o, struct incnn_comm *comm,
			struct ar_bufs *b, struct layers_arg *la, size_t n,
			unsigned int codec, unsigned int param, bool *first,
			int *ret)
{
	int N = incnn_comm_size(comm), rank = incnn_comm_rank(comm);
	struct incnn_layers_opts *lo = la->lo;
	struct ar_meta me = { 0 };
	struct ar_sum sum;
	double budget, max_err;
	bool within;

	/* MG-WFBP's cost model, measured now rather than in the timing */
	*ret = 0;
	if (la->s == INCNN_SCHED_MGWFBP)
		*ret = incnn_comm_probe_cost(comm, o->co.ps, &lo->alpha,
					     &lo->beta);
	if (!*ret)
		*ret = timed(o, comm, b, n, layers_call, la, &me);
	if (*ret)
		return fail("rank %d: %s layers: %s", rank,
			    incnn_sched_name(la->s), incnn_comm_strerror(comm));
	*ret = gather(comm, b->buf, n, &me, b->all, &sum);
	if (*ret)
		return *ret;
	if (rank != 0)
		return 0;
	budget = budget_of(o, codec, param, N);
	within = check_errors(b->buf, b->exact, b->ab, n, N, &budget, &max_err);
	print_sched(o, la->s, la->st, &sum, max_err, budget, within, *first,
		    me.wire);
	fflush(stdout);
	*first = false;
	if (o->check && (!sum.identical || !within))
		return TU_EXIT_RUNTIME;
	return 0;
}

static int run_layers(const struct ar_opts *o, struct incnn_comm *comm,
		      unsigned int codec, unsigned int param)
{
	int N = incnn_comm_size(comm), rank = incnn_comm_rank(comm);
	struct incnn_plan_layer *pl = NULL;
	struct incnn_layer *ly = NULL;
	struct incnn_model *m = NULL;
	struct ar_bufs b = { 0 };
	size_t n, i, off, L;
	int s, rc, ret = 0, status = 0;
	bool first = true;

	if (incnn_model_build(o->model, &m))
		return fail("cannot build model %s", o->model);
	L = m->nlayers;
	n = m->params;
	pl = calloc(L, sizeof(*pl));
	ly = calloc(L, sizeof(*ly));
	if (!pl || !ly) {
		status = fail("out of memory for %zu floats", n);
		goto out;
	}
	status = bufs_init(&b, o, comm, n);
	if (status)
		goto out;
	incnn_model_timeline(m, o->backward_ms / 1e3, pl);
	for (i = 0, off = 0; i < L; i++) {
		ly[i].grad = b.buf + off;
		ly[i].count = pl[i].count;
		ly[i].ready = pl[i].ready;
		off += pl[i].count;
	}
	if (rank == 0)
		print_layers_header(o, N, codec, param, m);
	for (s = 0; s < INCNN_SCHED_COUNT && !ret; s++) {
		struct incnn_layers_opts lo;
		struct incnn_layers_stats st = { 0 };
		struct layers_arg la = { ly, L, s, &lo, &st };

		if (o->sched >= 0 && o->sched != s)
			continue;
		incnn_layers_opts_init(&lo);
		lo.ps = o->co.ps;
		lo.bucket_bytes = o->bucket_bytes;
		rc = layers_sched(o, comm, &b, &la, n, codec, param, &first,
				  &ret);
		if (rc)
			status = rc;	/* a failed check: the next one runs */
	}
	finish(o, rank, status, ret);
out:
	free(pl);
	free(ly);
	bufs_free(&b);
	incnn_model_free(m);
	return status;
}

/* Rank 0: a size's row (row->bytes set) from the gathered figures. */
static void sweep_row(const struct ar_opts *o, const struct ar_bufs *b,
		      struct ar_row *row, int N, unsigned int codec,
		      unsigned int param, const struct ar_sum *sum,
		      const struct ar_meta *me)
{
	row->identical = sum->identical;
	row->digest = sum->digest;
	row->time_us = sum->worst / o->iters * 1e6;
	row->algbw = row->time_us > 0 ? row->bytes / row->time_us * 1e-3 : 0;
	row->busbw = row->algbw * 2.0 * (N - 1) / N;
	row->wire_bytes = me->wire / o->iters;
	row->budget = budget_of(o, codec, param, N);
	row->within = check_errors(b->buf, b->exact, b->ab, row->bytes / 4, N,
				   &row->budget, &row->max_err);
	row->gvq_calls = o->method == INCNN_COLL_METHOD_GRADIVEQ ?
			 (int64_t)me->gvq_calls : -1;
}

static int run_rank(const struct ar_opts *o, struct incnn_comm_config *cfg)
{
	struct incnn_comm *comm;
	struct ar_bufs b = { 0 };
	struct ar_meta me = { 0 };
	struct ar_sum sum;
	char err[512];
	uint64_t sizes[MAX_SIZES], n0, next;
	unsigned int codec, param, ns = 0, k;
	int ret, N, rank, status = 0;

	ret = incnn_comm_create(&comm, cfg, err, sizeof(err));
	if (ret)
		return fail("%s", err);
	N = incnn_comm_size(comm);
	rank = incnn_comm_rank(comm);
	incnn_comm_codec(comm, &codec, &param);
	if (o->model) {
		status = run_layers(o, comm, codec, param);
		goto out;
	}

	/* sizes in whole floats: MIN, MIN * F, ... up to MAX (0, then 4) */
	for (n0 = o->minb / 4; ns < MAX_SIZES;) {
		sizes[ns++] = 4 * n0;
		next = n0 ? n0 * o->factor : 1;
		if (next > o->maxb / 4)
			break;
		n0 = next;
	}
	status = bufs_init(&b, o, comm, sizes[ns - 1] / 4);
	if (status)
		goto out;
	if (rank == 0)
		print_header(o, N, codec, param);

	for (k = 0; k < ns; k++) {
		size_t n = sizes[k] / 4;
		struct ar_row row = { .bytes = sizes[k] };
		struct sweep_arg sa = { .ps = o->co.ps, .buf = b.buf, .n = n,
					.keyed = o->bscale >= 0 || o->ef >= 0 };
		struct incnn_gvq_status gs;

		if (o->method == INCNN_COLL_METHOD_GRADIVEQ)
			gvq_layers(&sa);
		ret = timed(o, comm, &b, n, sweep_call, &sa, &me);
		incnn_comm_gvq_status(comm, &gs);
		me.udig = gs.u_digest;
		me.gvq_calls = gs.compressed_calls;
		if (ret) {
			status = fail("rank %d: allreduce of %llu bytes: %s",
				      rank, (unsigned long long)sizes[k],
				      incnn_comm_strerror(comm));
			/* the library already made every rank fail */
			break;
		}
		ret = gather(comm, b.buf, n, &me, b.all, &sum);
		if (ret) {
			status = ret;
			break;
		}
		if (rank != 0)
			continue;
		sweep_row(o, &b, &row, N, codec, param, &sum, &me);
		print_row(o, &row, k == 0);
		if (o->check && (!row.identical || !row.within))
			status = TU_EXIT_RUNTIME;
	}
	finish(o, rank, status, ret);
out:
	bufs_free(&b);
	incnn_comm_destroy(comm);
	return status;
}

static void base_config(const struct ar_opts *o, struct incnn_comm_config *cfg)
{
	tu_comm_config(cfg, o->co.tos, o->co.timeout_ms, o->co.codec_name, o->codec,
		       o->param);
	cfg->chunk_bytes = o->chunk;
	if (o->bscale >= 0)
		cfg->scale = o->bscale;
	if (o->ef >= 0)
		cfg->error_feedback = o->ef;
	if (o->method)
		cfg->method = o->method;
	if (o->method == INCNN_COLL_METHOD_GRADIVEQ) {
		/* the warm-up calls sample, the timed ones are compressed */
		cfg->gvq_warmup = 0;
		cfg->gvq_ts = (int)(o->warmup < 4096 ? o->warmup : 4096);
		cfg->gvq_tc = 0x7fffffff;
		cfg->gvq_eps = INFINITY;
	}
}

/* -n: one rank of the local job (tu_launch_local()) */
static int local_rank(void *arg, int rank, int world, int port, int store_fd)
{
	const struct ar_opts *o = arg;
	struct incnn_comm_config cfg;

	base_config(o, &cfg);
	tu_comm_local(&cfg, rank, world, port, store_fd);
	return run_rank(o, &cfg);
}

int main(int argc, char **argv)
{
	struct incnn_comm_config cfg;
	struct ar_opts o;
	int ret = parse_args(&o, argc, argv);

	if (ret)
		return ret;
	signal(SIGPIPE, SIG_IGN);
	if (o.co.local)
		return tu_launch_local(PROG, o.co.local, local_rank, &o);
	base_config(&o, &cfg);
	return run_rank(&o, &cfg);
}
