// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn-wfbp: the gradient-bucket planner and timeline simulator.
 *
 *	incnn-wfbp --model resnet50 --workers 4 --bandwidth 10Gbit \
 *		--latency 50us --backward-ms 100
 *
 * For a model's layer table (parameters and FLOPs computed from the
 * architecture), a ring of N workers (a = 2(N-1) latency, b = 2(N-1)/N /
 * bandwidth, or --alpha/--beta) and a backward pass of --backward-ms
 * (each layer's share proportional to its FLOPs), print the buckets and
 * the predicted iteration time of each schedule: WFBP (one allreduce per
 * layer), one bucket, fixed-size buckets (DDP, --bucket-mb) and MG-WFBP's
 * optimal merge. --ratio R divides b by R (INC+C: compressed gradients).
 * Pure computation: deterministic output, no network.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolutil.h"
#include <incnn/wfbp.h>

#define PROG	"incnn-wfbp"

#define usage_err(...)	tu_error(PROG, TU_EXIT_USAGE, __VA_ARGS__)
#define fail(...)	tu_error(PROG, TU_EXIT_RUNTIME, __VA_ARGS__)

struct wf_opts {
	const char *model;
	int workers;
	double bandwidth;	/* bytes per second */
	double latency;		/* seconds */
	bool have_ab;
	double alpha, beta;	/* seconds, seconds per byte */
	double forward, backward;	/* seconds */
	double ratio;
	uint64_t bucket_bytes;
	int only;		/* one schedule, -1: all */
	bool json, list;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " --model NAME [--workers N] [--bandwidth BW] [--latency T]\n"
"                  [--alpha T --beta S] [--forward-ms MS] [--backward-ms MS]\n"
"                  [--ratio R] [--bucket-mb MB] [--schedule S] [--list-layers]\n"
"                  [--json]\n"
"\n"
"Plan the allreduce of a model's gradients during the backward pass and\n"
"predict the iteration time of each schedule: wfbp (one allreduce per\n"
"layer), single (one bucket after backward), fixed (DDP-style buckets) and\n"
"mgwfbp (MG-WFBP's optimal merge for the cost a + b * bytes).\n"
"\n"
"  -m, --model NAME    alexnet, vgg16, resnet50 or googlenet\n"
"  -n, --workers N     ring size, 1..4096 (default 4)\n"
"  -B, --bandwidth BW  link bandwidth: a number with bit or B (bytes) and an\n"
"                      optional K, M, G, T (x1000) prefix, e.g. 10Gbit,\n"
"                      1.25GB (default 10Gbit)\n"
"  -l, --latency T     per-message latency with ns, us, ms or s (default 50us)\n"
"                      ring cost: a = 2(N-1) T, b = 2(N-1)/N / BW\n"
"      --alpha T       the cost model's a directly (a time, as --latency) ...\n"
"      --beta S        ... and b in seconds per byte (e.g. 8e-10); both or\n"
"                      neither, not with --bandwidth/--latency\n"
"      --forward-ms MS forward pass (default 0)\n"
"      --backward-ms MS backward pass, split over the layers in proportion\n"
"                      to their FLOPs (default 100)\n"
"      --ratio R       gradient compression ratio >= 1: b / R (default 1)\n"
"      --bucket-mb MB  fixed schedule's bucket size in MiB (default 25)\n"
"  -s, --schedule S    only wfbp, single, fixed or mgwfbp\n"
"      --list-layers   also list the layers (forward order)\n"
"  -j, --json          one JSON object on stdout\n"
"  -h, --help          this help\n");
}

enum {
	OPT_ALPHA = 256,
	OPT_BETA,
	OPT_FORWARD,
	OPT_BACKWARD,
	OPT_RATIO,
	OPT_BUCKET,
	OPT_LIST,
};

static const struct option long_opts[] = {
	{ "model", required_argument, NULL, 'm' },
	{ "workers", required_argument, NULL, 'n' },
	{ "bandwidth", required_argument, NULL, 'B' },
	{ "latency", required_argument, NULL, 'l' },
	{ "alpha", required_argument, NULL, OPT_ALPHA },
	{ "beta", required_argument, NULL, OPT_BETA },
	{ "forward-ms", required_argument, NULL, OPT_FORWARD },
	{ "backward-ms", required_argument, NULL, OPT_BACKWARD },
	{ "ratio", required_argument, NULL, OPT_RATIO },
	{ "bucket-mb", required_argument, NULL, OPT_BUCKET },
	{ "schedule", required_argument, NULL, 's' },
	{ "list-layers", no_argument, NULL, OPT_LIST },
	{ "json", no_argument, NULL, 'j' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * A number followed by one of @units (name, factor pairs, longest first
 * where one is a suffix of another); the whole string. 0 or -EINVAL.
 */
struct wf_unit {
	const char *name;
	double mul;
};

static int parse_unit(const char *s, const struct wf_unit *units,
		      double *out)
{
	char num[64];
	size_t len = strlen(s), n;
	const struct wf_unit *u;

	for (u = units; u->name; u++) {
		n = strlen(u->name);
		if (len > n && !strcmp(s + len - n, u->name) &&
		    len - n < sizeof(num)) {
			memcpy(num, s, len - n);
			num[len - n] = '\0';
			if (tu_parse_double(num, out) || !(*out >= 0))
				return -EINVAL;
			*out *= u->mul;
			return isfinite(*out) ? 0 : -EINVAL;
		}
	}
	return -EINVAL;
}

static const struct wf_unit bw_units[] = {
	{ "Tbit", 1e12 / 8 }, { "Gbit", 1e9 / 8 }, { "Mbit", 1e6 / 8 },
	{ "Kbit", 1e3 / 8 }, { "kbit", 1e3 / 8 }, { "bit", 1.0 / 8 },
	{ "TB", 1e12 }, { "GB", 1e9 }, { "MB", 1e6 }, { "KB", 1e3 },
	{ "kB", 1e3 }, { "B", 1 }, { NULL, 0 },
};

static const struct wf_unit time_units[] = {
	{ "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1 },
	{ NULL, 0 },
};

/* a non-negative number, at most @max */
static int parse_num(const char *s, double max, double *out)
{
	return tu_parse_double(s, out) || !(*out >= 0) || *out > max ?
	       -EINVAL : 0;
}

static void opts_init(struct wf_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->workers = 4;
	o->bandwidth = 10e9 / 8;
	o->latency = 50e-6;
	o->backward = 0.1;
	o->ratio = 1;
	o->bucket_bytes = INCNN_WFBP_DEFAULT_BUCKET_BYTES;
	o->only = -1;
}

/* Which of the cost model's options were given. */
struct wf_given {
	bool link, a, b;
};

/* The cost model's and link's options: 0, an exit status, or -1 when @c
 * is not one of them. */
static int cost_opt(struct wf_opts *o, int c, const char *arg,
		    struct wf_given *g)
{
	switch (c) {
	case 'B':
		if (parse_unit(arg, bw_units, &o->bandwidth) ||
		    !(o->bandwidth > 0))
			return usage_err("--bandwidth %s: must be a positive rate such as 10Gbit or 1.25GB",
					 arg);
		g->link = true;
		return 0;
	case 'l':
		if (parse_unit(arg, time_units, &o->latency) || o->latency > 10)
			return usage_err("--latency %s: must be a time such as 50us (at most 10s)",
					 arg);
		g->link = true;
		return 0;
	case OPT_ALPHA:
		if (parse_unit(arg, time_units, &o->alpha) || o->alpha > 100)
			return usage_err("--alpha %s: must be a time such as 300us (at most 100s)",
					 arg);
		g->a = true;
		return 0;
	case OPT_BETA:
		if (parse_num(arg, 1, &o->beta))
			return usage_err("--beta %s: must be seconds per byte, 0..1 (e.g. 8e-10)",
					 arg);
		g->b = true;
		return 0;
	case OPT_RATIO:
		if (parse_num(arg, 1e6, &o->ratio) || o->ratio < 1)
			return usage_err("--ratio %s: must be 1..1e6", arg);
		return 0;
	}
	return -1;
}

/* The job's options (model, workers, timeline, buckets): as cost_opt(). */
static int job_opt(struct wf_opts *o, int c, const char *arg)
{
	double v;
	int s;

	switch (c) {
	case 'm':
		o->model = arg;
		return 0;
	case 'n':
		if (parse_num(arg, INCNN_COLL_MAX_WORLD, &v) || v < 1 ||
		    v != floor(v))
			return usage_err("--workers %s: must be 1..%d", arg,
					 INCNN_COLL_MAX_WORLD);
		o->workers = (int)v;
		return 0;
	case OPT_FORWARD:
	case OPT_BACKWARD:
		if (parse_num(arg, 1e7, &v))
			return usage_err("--%s %s: must be 0..1e7 ms",
					 c == OPT_FORWARD ? "forward-ms" :
					 "backward-ms", arg);
		*(c == OPT_FORWARD ? &o->forward : &o->backward) = v / 1e3;
		return 0;
	case OPT_BUCKET:
		if (parse_num(arg, 1 << 20, &v) || !(v * 1048576 >= 1))
			return usage_err("--bucket-mb %s: must be a positive size in MiB",
					 arg);
		o->bucket_bytes = (uint64_t)ceil(v * 1048576);
		return 0;
	case 's':
		s = incnn_sched_parse(arg);
		if (s < 0)
			return usage_err("--schedule %s: must be wfbp, single, fixed or mgwfbp",
					 arg);
		o->only = s;
		return 0;
	}
	return -1;
}

static int parse_args(struct wf_opts *o, int argc, char **argv)
{
	struct wf_given g = { 0 };
	int c, r;

	opts_init(o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":m:n:B:l:s:jh", long_opts,
				NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == OPT_LIST || c == 'j') {
			*(c == 'j' ? &o->json : &o->list) = true;
			continue;
		}
		r = cost_opt(o, c, optarg, &g);
		if (r < 0)
			r = job_opt(o, c, optarg);
		if (r < 0)
			return tu_getopt_error(PROG, c, argv);
		if (r)
			return r;
	}
	if (optind < argc)
		return usage_err("unexpected argument '%s'", argv[optind]);
	if (!o->model)
		return usage_err("--model is required (alexnet, vgg16, resnet50, googlenet)");
	if (g.a != g.b)
		return usage_err("--alpha and --beta go together");
	if (g.a && g.link)
		return usage_err("--alpha/--beta replace --bandwidth/--latency: not both");
	o->have_ab = g.a;
	return 0;
}

struct wf_result {
	struct incnn_bucket *bk;
	size_t nb;
	struct incnn_sim sim;
	double *start, *end;
};

/* the paper's one-pass rule, for comparison with the exact mgwfbp */
struct wf_pairwise {
	size_t nb;
	struct incnn_sim sim;
};

static void print_text(const struct wf_opts *o, const struct incnn_model *m,
		       const struct incnn_plan_layer *pl, double a, double b,
		       struct wf_result *res, const struct wf_pairwise *pw)
{
	size_t L = m->nlayers, i, k;
	int s;

	printf("# " PROG ": %s, %zu layers, %llu parameters (%.1f MB), %.3f GFLOP forward\n",
	       m->name, L, (unsigned long long)m->params, m->params * 4e-6,
	       m->flops * 1e-9);
	if (o->have_ab)
		printf("# %d workers; cost a = %.3f us, b = %.4g ns/B (given)",
		       o->workers, o->alpha * 1e6, o->beta * 1e9);
	else
		printf("# %d workers, %.4g Gbit/s, latency %.3g us: ring a = 2(N-1) latency = %.3f us, b = 2(N-1)/N / bw = %.4g ns/B",
		       o->workers, o->bandwidth * 8e-9, o->latency * 1e6,
		       a * 1e6, b * o->ratio * 1e9);
	if (o->ratio != 1)
		printf("; ratio %g: b = %.4g ns/B", o->ratio, b * 1e9);
	printf("\n# forward %.3f ms, backward %.3f ms; fixed buckets of %llu bytes\n",
	       o->forward * 1e3, o->backward * 1e3,
	       (unsigned long long)o->bucket_bytes);
	if (o->list) {
		printf("#\n# %4s %-32s %-4s %12s %12s %10s %10s\n", "idx", "layer",
		       "kind", "params", "MFLOP", "bwd(ms)", "ready(ms)");
		for (i = 0; i < L; i++) {
			const struct incnn_model_layer *l = &m->layer[i];
			/* backward order index */
			size_t j = L - 1 - i;
			double prev = j ? pl[j - 1].ready : 0;

			printf("  %4zu %-32s %-4s %12llu %12.3f %10.4f %10.4f\n",
			       i, l->name, l->kind == INCNN_LAYER_CONV ? "conv" :
			       l->kind == INCNN_LAYER_FC ? "fc" : "bn",
			       (unsigned long long)l->params, l->flops * 1e-6,
			       (pl[j].ready - prev) * 1e3, pl[j].ready * 1e3);
		}
	}
	printf("#\n# %-8s %8s %12s %12s %12s %9s\n", "schedule", "buckets",
	       "iter(ms)", "comm(ms)", "exposed(ms)", "vs wfbp");
	for (s = 0; s < INCNN_SCHED_COUNT; s++) {
		if (o->only >= 0 && o->only != s)
			continue;
		printf("  %-8s %8zu %12.3f %12.3f %12.3f %8.3fx\n",
		       incnn_sched_name(s), res[s].nb, res[s].sim.iter * 1e3,
		       res[s].sim.comm * 1e3, res[s].sim.exposed * 1e3,
		       res[s].sim.iter > 0 ?
		       res[INCNN_SCHED_WFBP].sim.iter / res[s].sim.iter : 1);
	}
	if (o->only < 0 || o->only == INCNN_SCHED_MGWFBP)
		printf("# the paper's one-pass merge rule: %zu buckets, iter %.3f ms (mgwfbp is the exact optimum)\n",
		       pw->nb, pw->sim.iter * 1e3);
	for (s = 0; s < INCNN_SCHED_COUNT; s++) {
		struct wf_result *r = &res[s];

		if (s == INCNN_SCHED_WFBP || (o->only >= 0 && o->only != s) ||
		    (o->only < 0 && s != INCNN_SCHED_MGWFBP))
			continue;
		printf("#\n# %s buckets (backward order; times from the start of backward)\n",
		       incnn_sched_name(s));
		printf("# %6s %7s %12s %10s %10s  %s\n", "bucket", "layers",
		       "bytes", "start(ms)", "end(ms)", "first .. last layer");
		for (k = 0; k < r->nb; k++) {
			size_t f = r->bk[k].first, e = f + r->bk[k].nlayers - 1;

			printf("  %6zu %7zu %12llu %10.4f %10.4f  %s .. %s\n", k,
			       r->bk[k].nlayers,
			       (unsigned long long)r->bk[k].count * 4,
			       r->start[k] * 1e3, r->end[k] * 1e3,
			       m->layer[L - 1 - f].name, m->layer[L - 1 - e].name);
		}
	}
}

/* --list-layers in JSON: the model's layers, each with its ready time */
static void json_layer_table(const struct incnn_model *m,
			     const struct incnn_plan_layer *pl)
{
	size_t L = m->nlayers;

	printf(",\"layer_table\":[");
	for (size_t i = 0; i < L; i++) {
		const struct incnn_model_layer *l = &m->layer[i];

		printf("%s\n{\"name\":", i ? "," : "");
		tu_json_str(stdout, l->name);
		printf(",\"kind\":\"%s\",\"params\":%llu,\"flops\":",
		       l->kind == INCNN_LAYER_CONV ? "conv" :
		       l->kind == INCNN_LAYER_FC ? "fc" : "bn",
		       (unsigned long long)l->params);
		tu_json_num(stdout, l->flops);
		printf(",\"ready_ms\":");
		tu_json_num(stdout, pl[L - 1 - i].ready * 1e3);
		printf("}");
	}
	printf("]");
}

/* One schedule's object in JSON, with its buckets. */
static void json_schedule(const struct incnn_model *m, int s,
			  const struct wf_result *r, bool first)
{
	size_t L = m->nlayers;

	printf("%s\n{\"schedule\":\"%s\",\"buckets\":%zu,\"iter_ms\":",
	       first ? "" : ",", incnn_sched_name(s), r->nb);
	tu_json_num(stdout, r->sim.iter * 1e3);
	printf(",\"compute_ms\":");
	tu_json_num(stdout, r->sim.compute * 1e3);
	printf(",\"comm_ms\":");
	tu_json_num(stdout, r->sim.comm * 1e3);
	printf(",\"exposed_ms\":");
	tu_json_num(stdout, r->sim.exposed * 1e3);
	printf(",\"bucket_list\":[");
	for (size_t k = 0; k < r->nb; k++) {
		size_t f = r->bk[k].first, e = f + r->bk[k].nlayers - 1;

		printf("%s{\"first\":%zu,\"layers\":%zu,\"bytes\":%llu,\"start_ms\":",
		       k ? "," : "", f, r->bk[k].nlayers,
		       (unsigned long long)r->bk[k].count * 4);
		tu_json_num(stdout, r->start[k] * 1e3);
		printf(",\"end_ms\":");
		tu_json_num(stdout, r->end[k] * 1e3);
		printf(",\"first_layer\":");
		tu_json_str(stdout, m->layer[L - 1 - f].name);
		printf(",\"last_layer\":");
		tu_json_str(stdout, m->layer[L - 1 - e].name);
		printf("}");
	}
	printf("]}");
}

static void print_json(const struct wf_opts *o, const struct incnn_model *m,
		       const struct incnn_plan_layer *pl, double a, double b,
		       struct wf_result *res, const struct wf_pairwise *pw)
{
	bool first = true;
	int s;

	printf("{\"model\":");
	tu_json_str(stdout, m->name);
	printf(",\"layers\":%zu,\"params\":%llu,\"flops\":", m->nlayers,
	       (unsigned long long)m->params);
	tu_json_num(stdout, m->flops);
	printf(",\"workers\":%d,\"bandwidth_Bps\":", o->workers);
	if (o->have_ab)
		printf("null,\"latency_s\":null");
	else {
		tu_json_num(stdout, o->bandwidth);
		printf(",\"latency_s\":");
		tu_json_num(stdout, o->latency);
	}
	printf(",\"alpha_s\":");
	tu_json_num(stdout, a);
	printf(",\"beta_s_per_byte\":");
	tu_json_num(stdout, b);
	printf(",\"ratio\":");
	tu_json_num(stdout, o->ratio);
	printf(",\"forward_ms\":");
	tu_json_num(stdout, o->forward * 1e3);
	printf(",\"backward_ms\":");
	tu_json_num(stdout, o->backward * 1e3);
	printf(",\"bucket_bytes\":%llu", (unsigned long long)o->bucket_bytes);
	printf(",\"mgwfbp_pairwise\":{\"buckets\":%zu,\"iter_ms\":", pw->nb);
	tu_json_num(stdout, pw->sim.iter * 1e3);
	printf("}");
	if (o->list)
		json_layer_table(m, pl);
	printf(",\"schedules\":[");
	for (s = 0; s < INCNN_SCHED_COUNT; s++) {
		if (o->only >= 0 && o->only != s)
			continue;
		json_schedule(m, s, &res[s], first);
		first = false;
	}
	printf("\n]}\n");
}

/* Plan and simulate schedule @s into @r (which gets its arrays). */
static int plan_one(const struct wf_opts *o, const struct incnn_plan_layer *pl,
		    size_t L, int s, double a, double b, struct wf_result *r)
{
	int ret;

	r->bk = calloc(L, sizeof(*r->bk));
	r->start = calloc(L, sizeof(double));
	r->end = calloc(L, sizeof(double));
	if (!r->bk || !r->start || !r->end)
		return fail("out of memory");
	ret = incnn_plan(pl, L, s, a, b, o->bucket_bytes, r->bk, &r->nb);
	if (!ret)
		ret = incnn_simulate(pl, L, r->bk, r->nb, o->forward,
				     o->backward, a, b, &r->sim, r->start,
				     r->end);
	if (ret)
		return fail("%s: cannot plan: %s", incnn_sched_name(s),
			    strerror(-ret));
	return 0;
}

int main(int argc, char **argv)
{
	struct wf_result res[INCNN_SCHED_COUNT];
	struct wf_pairwise pw;
	struct incnn_plan_layer *pl = NULL;
	struct incnn_model *m;
	struct wf_opts o;
	double a, b;
	int ret = parse_args(&o, argc, argv), s, status = 0;
	size_t L;

	if (ret)
		return ret;
	ret = incnn_model_build(o.model, &m);
	if (ret == -ENOENT)
		return usage_err("--model %s: must be alexnet, vgg16, resnet50 or googlenet",
				 o.model);
	if (ret)
		return fail("cannot build %s: %s", o.model, strerror(-ret));
	if (o.have_ab) {
		a = o.alpha;
		b = o.beta;
	} else {
		incnn_ring_cost(o.workers, o.bandwidth, o.latency, &a, &b);
	}
	b /= o.ratio;
	L = m->nlayers;
	memset(res, 0, sizeof(res));
	pl = calloc(L, sizeof(*pl));
	if (!pl) {
		status = fail("out of memory");
		goto out;
	}
	incnn_model_timeline(m, o.backward, pl);
	for (s = 0; s < INCNN_SCHED_COUNT && !status; s++)
		status = plan_one(&o, pl, L, s, a, b, &res[s]);
	if (status)
		goto out;
	/* res[0].bk is scratch again once WFBP is simulated */
	ret = incnn_plan_mg_pairwise(pl, L, a, b, res[0].bk, &pw.nb);
	if (!ret)
		ret = incnn_simulate(pl, L, res[0].bk, pw.nb, o.forward,
				     o.backward, a, b, &pw.sim, NULL, NULL);
	if (!ret)
		ret = incnn_plan(pl, L, INCNN_SCHED_WFBP, a, b, o.bucket_bytes,
				 res[0].bk, &res[0].nb);
	if (ret) {
		status = fail("cannot plan: %s", strerror(-ret));
		goto out;
	}
	if (o.json)
		print_json(&o, m, pl, a, b, res, &pw);
	else
		print_text(&o, m, pl, a, b, res, &pw);
	if (fflush(stdout) || ferror(stdout))
		status = fail("writing the output failed");
out:
	for (s = 0; s < INCNN_SCHED_COUNT; s++) {
		free(res[s].bk);
		free(res[s].start);
		free(res[s].end);
	}
	free(pl);
	incnn_model_free(m);
	return status;
}
