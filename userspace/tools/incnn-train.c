// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn-train: data-parallel training of INCEPTIONN's HDC network (an MLP
 * on MNIST) over the incnn collective library.
 *
 *	incnn-train -n 4 --data mnist.bin --epochs 10 --log train.log
 *	MASTER_ADDR=h0 MASTER_PORT=29500 RANK=r WORLD_SIZE=4 \
 *		incnn-train --data mnist.bin --iters 20 --codec auto --log l
 *
 * Every rank holds the same replica. Each iteration every rank takes its
 * slice of the global batch (the epoch's shuffled order, rank r takes
 * samples r*B .. r*B+B-1 of the iteration's N*B), computes the mean
 * gradient over its B samples, the gradients are summed with
 * incnn_allreduce() (ring) or incnn_allreduce_ps() and divided by N, and
 * every rank applies the same SGD step. Rank 0 writes the log: every
 * iteration's training loss (mean over the global batch, exactly, as a
 * hex float and decimal), and per epoch the held-out test loss and
 * accuracy and a digest of every replica's weights (which must agree).
 * docs/training.md has the details.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/incnn.h>
#include "codec.h"
#include "toolutil.h"
#include "commutil.h"
#include <incnn/collective.h>
#include <incnn/wfbp.h>
#include "../train/data.h"
#include "../train/mlp.h"

#define PROG		"incnn-train"
#define EVAL_BATCH	100
#define SYNTH_TRAIN	2000
#define SYNTH_TEST	400

#define usage_err(...)	tu_error(PROG, TU_EXIT_USAGE, __VA_ARGS__)
#define fail(...)	tu_error(PROG, TU_EXIT_RUNTIME, __VA_ARGS__)

struct tr_opts {
	struct tu_coll_opts co;		/* -n, --algo, --codec, --bound, ... */
	const struct incnn_codec *codec;
	unsigned int param;
	int epochs;
	long iters;			/* 0: no limit */
	const char *data;
	const char *log;
	uint64_t seed;
	int nhidden;
	int hidden[TR_MAX_LAYERS];
	int batch;
	double lr, momentum, wd;
	bool quiet;
	enum incnn_coll_method method;	/* --method */
	bool mgwfbp;			/* --buckets mgwfbp */
	bool gvq_fc;			/* --gvq-fc */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " --data FILE|synth [-n RANKS] [--epochs E] [--iters K]\n"
"                   [--algo ring|ps] [--codec none|auto|inceptionn|ebq|zebq]\n"
"                   [--bound 2^-K] [--log FILE] [--seed S] [--hidden LIST]\n"
"                   [--batch B] [--lr X] [--momentum X] [--wd X] [--tos TOS]\n"
"                   [--timeout MS] [--method none|thc|gradiveq]\n"
"                   [--buckets single|mgwfbp] [--gvq-fc] [--quiet]\n"
"\n"
"Data-parallel SGD of an MLP (INCEPTIONN's HDC network: 784-500-500-500-\n"
"500-10, ReLU, softmax cross-entropy) with the incnn collective summing\n"
"the gradients. With -n, launch RANKS local ranks (processes on\n"
"127.0.0.1); without it, run as one rank of a job described by\n"
"MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE. Rank 0 writes the log.\n"
"\n"
"  -d, --data FILE    dataset (scripts/demo/mnist-fetch.sh), or 'synth' for\n"
"                     the built-in synthetic one (%d train, %d test)\n"
"  -n, --ranks N      local ranks to launch, 1..%d\n"
"  -e, --epochs E     epochs (default 10)\n"
"  -i, --iters K      stop after K iterations (default: no limit)\n"
"  -a, --algo A       ring (default) or ps (workers -> rank 0 -> workers)\n"
"  -c, --codec NAME   none, auto (default: the module's rule for the ToS),\n"
"                     inceptionn, ebq or zebq (emulated in userspace)\n"
"      --bound 2^-K   error bound of inceptionn, ebq and zebq (default 2^-10)\n"
"  -l, --log FILE     the log (rank 0; default: none)\n"
"  -s, --seed S       seed of the initial weights and the order (default 1)\n"
"      --hidden LIST  hidden layer sizes (default 500,500,500,500)\n"
"      --batch B      samples per rank per iteration (default 25)\n"
"      --lr X         learning rate (default 0.1)\n"
"      --momentum X   momentum (default 0.9)\n"
"      --wd X         weight decay (default 5e-5)\n"
"      --tos TOS      IP ToS of the gradient sockets (default 0x28)\n"
"      --timeout MS   a rank making no progress for MS fails the job\n"
"                     (default 300000)\n"
"      --method M     compression inside the collective: none, thc or\n"
"                     gradiveq (default: INCNN_METHOD, else none); thc\n"
"                     and gradiveq data sockets are unmarked (ToS 0)\n"
"      --buckets B    single (default: one allreduce of the whole\n"
"                     gradient) or mgwfbp (incnn_allreduce_layers() with\n"
"                     the MG-WFBP plan over the layers, backward order)\n"
"      --gvq-fc       GradiVeQ compresses the fully-connected layers as\n"
"                     1x1 convolutions (our extension; the MLP has no conv\n"
"                     layer, so without it gradiveq compresses nothing).\n"
"                     Its schedule: INCNN_GVQ_D, _K, _WARMUP, _TS, _TC\n"
"  -q, --quiet        no progress lines on stderr (nor the summary)\n"
"  -h, --help         this help\n",
		SYNTH_TRAIN, SYNTH_TEST, TU_MAX_LOCAL);
}

enum {
	OPT_HIDDEN = TU_OPT_FREE,
	OPT_BATCH,
	OPT_LR,
	OPT_MOMENTUM,
	OPT_WD,
	OPT_METHOD,
	OPT_BUCKETS,
	OPT_GVQ_FC,
};

static const struct option long_opts[] = {
	TU_COLL_LONG_OPTS,
	{ "data", required_argument, NULL, 'd' },
	{ "epochs", required_argument, NULL, 'e' },
	{ "iters", required_argument, NULL, 'i' },
	{ "log", required_argument, NULL, 'l' },
	{ "seed", required_argument, NULL, 's' },
	{ "hidden", required_argument, NULL, OPT_HIDDEN },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "lr", required_argument, NULL, OPT_LR },
	{ "momentum", required_argument, NULL, OPT_MOMENTUM },
	{ "wd", required_argument, NULL, OPT_WD },
	{ "method", required_argument, NULL, OPT_METHOD },
	{ "buckets", required_argument, NULL, OPT_BUCKETS },
	{ "gvq-fc", no_argument, NULL, OPT_GVQ_FC },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_hidden(struct tr_opts *o, const char *s)
{
	char buf[256], *tok, *save = NULL;
	long v;

	if (strlen(s) >= sizeof(buf) || !*s || s[0] == ',' ||
	    s[strlen(s) - 1] == ',' || strstr(s, ",,"))
		return -EINVAL;
	strcpy(buf, s);
	o->nhidden = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->nhidden == TR_MAX_LAYERS - 1 ||
		    tu_parse_long(tok, 1, TR_MAX_DIM, &v))
			return -EINVAL;
		o->hidden[o->nhidden++] = (int)v;
	}
	return 0;
}

/* a number in (min, max] (or [0, max] when zero_ok) */
static int parse_real(const char *s, double max, bool zero_ok, double *out)
{
	double v;

	if (tu_parse_double(s, &v) || v < 0 || (!zero_ok && v == 0) || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static void opts_init(struct tr_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->epochs = 10;
	o->seed = 1;
	o->nhidden = 4;
	o->hidden[0] = o->hidden[1] = o->hidden[2] = o->hidden[3] = 500;
	o->batch = 25;
	o->lr = 0.1;
	o->momentum = 0.9;
	o->wd = 5e-5;
	o->co.tos = INCNN_COLL_DEFAULT_TOS;
	o->co.timeout_ms = 300000;
}

/* The model's and the optimiser's options: 0, an exit status, or -1
 * when @c is not one of them. */
static int model_opt(struct tr_opts *o, int c, const char *arg)
{
	long l;

	switch (c) {
	case OPT_HIDDEN:
		if (parse_hidden(o, arg))
			return usage_err("--hidden %s: must be 1..%d sizes of 1..%d, comma-separated",
					 arg, TR_MAX_LAYERS - 1, TR_MAX_DIM);
		return 0;
	case OPT_BATCH:
		if (tu_parse_long(arg, 1, 4096, &l))
			return usage_err("--batch %s: must be 1..4096", arg);
		o->batch = (int)l;
		return 0;
	case OPT_LR:
		if (parse_real(arg, 100, false, &o->lr))
			return usage_err("--lr %s: must be a number in (0, 100]",
					 arg);
		return 0;
	case OPT_MOMENTUM:
		if (parse_real(arg, 0.999999, true, &o->momentum))
			return usage_err("--momentum %s: must be a number in [0, 1)",
					 arg);
		return 0;
	case OPT_WD:
		if (parse_real(arg, 1, true, &o->wd))
			return usage_err("--wd %s: must be a number in [0, 1]",
					 arg);
		return 0;
	}
	return -1;
}

/* The run's options (data, length, seed, log): as model_opt(). */
static int run_opt(struct tr_opts *o, int c, const char *arg)
{
	uint64_t u;
	long l;

	switch (c) {
	case 'd':
		o->data = arg;
		return 0;
	case 'e':
		if (tu_parse_long(arg, 1, 100000, &l))
			return usage_err("--epochs %s: must be 1..100000", arg);
		o->epochs = (int)l;
		return 0;
	case 'i':
		if (tu_parse_long(arg, 1, 1000000000, &l))
			return usage_err("--iters %s: must be 1..1000000000",
					 arg);
		o->iters = l;
		return 0;
	case 'l':
		o->log = arg;
		return 0;
	case 's':
		if (tu_parse_u64(arg, &u))
			return usage_err("--seed %s: must be a non-negative integer",
					 arg);
		o->seed = u;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	}
	return -1;
}

/* The collective's options (--method, --buckets): as model_opt(). */
static int coll_opt(struct tr_opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_METHOD:
		if (!strcmp(arg, "none"))
			o->method = INCNN_COLL_METHOD_NONE;
		else if (!strcmp(arg, "thc"))
			o->method = INCNN_COLL_METHOD_THC;
		else if (!strcmp(arg, "gradiveq"))
			o->method = INCNN_COLL_METHOD_GRADIVEQ;
		else
			return usage_err("--method %s: must be none, thc or gradiveq",
					 arg);
		return 0;
	case OPT_BUCKETS:
		if (strcmp(arg, "single") && strcmp(arg, "mgwfbp"))
			return usage_err("--buckets %s: must be single or mgwfbp",
					 arg);
		o->mgwfbp = arg[0] == 'm';
		return 0;
	case OPT_GVQ_FC:
		o->gvq_fc = true;
		return 0;
	}
	return -1;
}

static const char *method_name(enum incnn_coll_method m)
{
	return m == INCNN_COLL_METHOD_THC ? "thc" :
	       m == INCNN_COLL_METHOD_GRADIVEQ ? "gradiveq" : "none";
}

static int parse_args(struct tr_opts *o, int argc, char **argv)
{
	int c, r;

	opts_init(o);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:n:e:i:a:c:l:s:qh", long_opts,
				NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		r = run_opt(o, c, optarg);
		if (r < 0)
			r = model_opt(o, c, optarg);
		if (r < 0)
			r = coll_opt(o, c, optarg);
		if (r < 0)
			r = tu_coll_opt(PROG, &o->co, c, optarg, argv);
		if (r)
			return r;
	}
	if (optind < argc)
		return usage_err("unexpected argument '%s'", argv[optind]);
	if (!o->data)
		return usage_err("--data FILE is required (scripts/demo/mnist-fetch.sh, or synth)");
	if (o->co.codec_name && strcmp(o->co.codec_name, "auto") &&
	    strcmp(o->co.codec_name, "none")) {
		o->codec = incnn_codec_find(o->co.codec_name);
		if (!o->codec || !tu_codec_takes_bound(o->codec))
			return usage_err("--codec %s: must be none, auto, inceptionn, ebq or zebq",
					 o->co.codec_name);
		o->param = o->codec->param.def;
	}
	/* (--codec takes only codecs with a bound) */
	if (o->co.bound &&
	    tu_parse_bound_opt(PROG, o->co.bound, o->codec, &o->param))
		return TU_EXIT_USAGE;
	return 0;
}

/* --- one rank --------------------------------------------------------- */

/* per-rank figures gathered through the store at an epoch's end */
struct tr_meta {
	uint64_t digest;
	double test_loss;	/* sum over this rank's test shard */
	int64_t correct;
	double comm_s;		/* seconds in allreduce, this epoch */
	uint64_t wire;		/* bytes this rank sent on data sockets */
};

struct tr_run {
	const struct tr_opts *o;
	const struct tr_data *d;
	struct incnn_comm *comm;
	struct tr_mlp m;
	FILE *log;
	int rank, N;
	float *x;
	uint8_t *y;
	int *perm;
	double t0, last_progress;
	/* --buckets mgwfbp: the layers (backward order) and the options */
	struct incnn_layer ly[TR_MAX_LAYERS];
	struct incnn_layers_opts lo;
	size_t nbuckets;	/* of the last call's plan */
	double iter_s;		/* wall time in train_iter(), all iterations */
	uint64_t wire0;		/* incnn_comm_wire_bytes() at the start */
	double test_acc;	/* the last evaluation's (rank 0), or NaN */
};

/* test loss and accuracy of this rank's shard of the test split */
static void evaluate(struct tr_run *r, double *loss, int64_t *correct)
{
	const struct tr_data *d = r->d;
	int lo = (int)((int64_t)d->n_test * r->rank / r->N);
	int hi = (int)((int64_t)d->n_test * (r->rank + 1) / r->N);
	long ok = 0;
	int i, b, n;

	*loss = 0;
	for (i = lo; i < hi; i += n) {
		n = hi - i < EVAL_BATCH ? hi - i : EVAL_BATCH;
		for (b = 0; b < n; b++)
			tr_data_get(d, d->n_train + i + b,
				    r->x + (size_t)b * d->dim, r->y + b);
		*loss += tr_mlp_forward(&r->m, r->x, n, r->y, &ok);
	}
	*correct = ok;
}

/* gather the digests (and test figures); rank 0 checks the replicas */
static int gather(struct tr_run *r, struct tr_meta *me, struct tr_meta *all)
{
	int i;

	me->digest = tr_mlp_digest(&r->m);
	me->wire = incnn_comm_wire_bytes(r->comm) - r->wire0;
	if (incnn_comm_allgather_meta(r->comm, me, sizeof(*me), all))
		return fail("rank %d: %s", r->rank,
			    incnn_comm_strerror(r->comm));
	for (i = 1; i < r->N; i++)
		if (all[i].digest != all[0].digest)
			return fail("replicas differ: rank %d's weights %016" PRIx64
				    ", rank 0's %016" PRIx64, i, all[i].digest,
				    all[0].digest);
	return 0;
}

/* The gradient's sum: one allreduce, or the layers API's buckets. */
static int allreduce_grad(struct tr_run *r)
{
	struct incnn_layers_stats st;
	struct tr_mlp *m = &r->m;
	int ret;

	/* GradiVeQ needs the layers API (shapes), with one bucket or more */
	if (!r->o->mgwfbp &&
	    incnn_comm_method(r->comm) != INCNN_COLL_METHOD_GRADIVEQ)
		return r->o->co.ps ?
		       incnn_allreduce_ps(r->comm, m->grad, m->nparams) :
		       incnn_allreduce(r->comm, m->grad, m->nparams);
	memset(&st, 0, sizeof(st));
	ret = incnn_allreduce_layers(r->comm, r->ly, (size_t)m->nlayers,
				     r->o->mgwfbp ? INCNN_SCHED_MGWFBP :
				     INCNN_SCHED_SINGLE, &r->lo, &st);
	r->nbuckets = st.nbuckets;
	return ret;
}

/*
 * The layers for incnn_allreduce_layers(): each layer's weights and bias
 * (adjacent in grad), in backward order, with their shapes: fully
 * connected, [in][out] (GradiVeQ compresses them with --gvq-fc).
 */
static void layer_table(struct tr_run *r)
{
	struct tr_mlp *m = &r->m;
	int L = m->nlayers, i, l;

	memset(r->ly, 0, sizeof(r->ly));
	for (i = 0; i < L; i++) {
		l = L - 1 - i;
		r->ly[i].grad = m->grad + m->woff[l];
		r->ly[i].count = (size_t)m->dims[l] * m->dims[l + 1] +
				 (size_t)m->dims[l + 1];
		r->ly[i].shape = INCNN_LAYER_SHAPE_FC;
		r->ly[i].out_ch = (unsigned int)m->dims[l + 1];
		r->ly[i].in_ch = (unsigned int)m->dims[l];
	}
	incnn_layers_opts_init(&r->lo);
	r->lo.ps = r->o->co.ps;
	r->lo.no_wait = true;
}

/*
 * --buckets mgwfbp: the layers' ready times for the plan: rank 0's
 * measured backward time of one batch, split in proportion to the
 * layers' multiply-adds (in x out) and shared, so that every rank plans
 * the same buckets. The backward pass has run when the call is made, so
 * the call does not wait for the ready times (no_wait). The cost model
 * is probed here, before the wire bytes are counted.
 */
static int setup_mgwfbp(struct tr_run *r)
{
	struct tr_mlp *m = &r->m;
	int L = m->nlayers, B = r->o->batch, i, l;
	double t, tot = 0, cum = 0, a, b, *all;
	int ret;

	for (i = 0; i < B; i++)
		tr_data_get(r->d, i, r->x + (size_t)i * r->d->dim, r->y + i);
	tr_mlp_forward(m, r->x, B, r->y, NULL);
	t = tu_now();
	tr_mlp_backward(m, B, r->y);
	t = tu_now() - t;
	all = calloc((size_t)r->N, sizeof(double));
	if (!all)
		return fail("out of memory");
	ret = incnn_comm_allgather_meta(r->comm, &t, sizeof(t), all);
	t = all[0];
	free(all);
	for (l = 0; l < L; l++)
		tot += (double)m->dims[l] * m->dims[l + 1];
	for (i = 0; i < L; i++) {
		l = L - 1 - i;
		cum += (double)m->dims[l] * m->dims[l + 1];
		r->ly[i].ready = t * cum / tot;
	}
	if (!ret)
		ret = incnn_comm_probe_cost(r->comm, r->lo.ps, &a, &b);
	if (ret)
		return fail("rank %d: %s", r->rank, incnn_comm_strerror(r->comm));
	if (r->log)
		fprintf(r->log, "# buckets mgwfbp: backward %.6f s (rank 0), cost a %g s + b %g s/byte (probed)\n",
			t, a, b);
	return 0;
}

/*
 * One iteration @i of the epoch: forward and backward on our slice of the
 * global batch, allreduce, SGD. *@mean: the global batch's mean loss
 * (ranks in order); *@comm_s grows by the communication time.
 */
static int train_iter(struct tr_run *r, int i, long it, double *losses,
		      double *mean, double *comm_s)
{
	const struct tr_opts *o = r->o;
	const struct tr_data *d = r->d;
	struct tr_mlp *m = &r->m;
	int B = o->batch, N = r->N, G = B * N, b, ret;
	const int *slice = r->perm + (size_t)i * G + (size_t)r->rank * B;
	double loss, sum = 0, t;

	for (b = 0; b < B; b++)
		tr_data_get(d, slice[b], r->x + (size_t)b * d->dim, r->y + b);
	loss = tr_mlp_forward(m, r->x, B, r->y, NULL);
	tr_mlp_backward(m, B, r->y);
	t = tu_now();
	ret = allreduce_grad(r);
	if (!ret)
		ret = incnn_comm_allgather_meta(r->comm, &loss, sizeof(loss),
						losses);
	*comm_s += tu_now() - t;
	if (ret)
		return fail("rank %d: iteration %ld: %s", r->rank, it + 1,
			    incnn_comm_strerror(r->comm));
	if (N > 1)
		for (size_t k = 0; k < m->nparams; k++)
			m->grad[k] /= (float)N;
	tr_mlp_sgd(m, (float)o->lr, (float)o->momentum, (float)o->wd);
	for (b = 0; b < N; b++)
		sum += losses[b];
	*mean = sum / G;
	return 0;
}

/* Rank 0: the iteration's log line, and progress every 5 s. */
static void train_progress(struct tr_run *r, int epoch, long it, long total,
			   int ipe, double loss)
{
	double t = tu_now(), el = t - r->t0;

	if (r->log)
		fprintf(r->log, "iter %ld epoch %d loss %a %.9g\n", it, epoch,
			loss, loss);
	if (r->o->quiet || t - r->last_progress < 5)
		return;
	fprintf(stderr, PROG ": epoch %d/%ld iter %ld/%ld loss %.4f elapsed %.0f s ETA %.0f s\n",
		epoch, (total + ipe - 1) / ipe, it, total, loss, el,
		el / it * (total - it));
	r->last_progress = t;
}

/* Rank 0: the epoch's report from every rank's @all. */
static void epoch_report(struct tr_run *r, const struct tr_meta *all,
			 int epoch, long it, long total, int ipe,
			 double train_sum, double epoch_t0)
{
	const struct tr_data *d = r->d;
	double tl = 0, secs = tu_now() - epoch_t0, mean = train_sum / ipe, el;
	int64_t ok = 0;

	for (int b = 0; b < r->N; b++) {
		tl += all[b].test_loss;
		ok += all[b].correct;
	}
	tl /= d->n_test;
	r->test_acc = (double)ok / d->n_test;
	if (r->log) {
		fprintf(r->log, "epoch %d iter %ld train_loss %a %.9g test_loss %a %.9g test_acc %.4f correct %" PRId64
			" test %d digest %016" PRIx64 " identical %d seconds %.3f comm %.3f\n",
			epoch, it, mean, mean, tl, tl, (double)ok / d->n_test,
			ok, d->n_test, all[0].digest, r->N, secs,
			all[0].comm_s);
		fflush(r->log);
	}
	if (r->o->quiet)
		return;
	el = tu_now() - r->t0;
	fprintf(stderr, PROG ": epoch %d/%ld done: test acc %.4f loss %.4f, %.1f s/epoch, ETA %.0f s\n",
		epoch, (total + ipe - 1) / ipe, (double)ok / d->n_test, tl,
		secs, el / it * (total - it));
	r->last_progress = tu_now();
}

/*
 * --algo ps: what a worker sends up (the mean over ranks 1..N-1) and what
 * rank 0 sends down to each worker, per iteration, from @all (gathered).
 */
static void summary_ps(const struct tr_run *r, long it,
		       const struct tr_meta *all, char *out, size_t len)
{
	uint64_t up = 0;
	int i;

	if (!r->o->co.ps || r->N < 2 || !it) {
		out[0] = 0;
		return;
	}
	for (i = 1; i < r->N; i++)
		up += all[i].wire;
	snprintf(out, len, " up_bytes_per_iter %.0f down_bytes_per_iter %.0f",
		 (double)up / (r->N - 1) / (double)it,
		 (double)all[0].wire / (r->N - 1) / (double)it);
}

/* Rank 0: the run's summary line, in the log and on stderr. */
static void summary(struct tr_run *r, long it, const struct tr_meta *all)
{
	uint64_t wire = incnn_comm_wire_bytes(r->comm) - r->wire0;
	struct incnn_gvq_status gs;
	char line[256], extra[160] = "", ps[96];

	snprintf(line, sizeof(line),
		 "summary method %s buckets %s nbuckets %zu iters %ld test_acc %.4f iter_ms %.3f wire_bytes_per_iter %.0f",
		 method_name(incnn_comm_method(r->comm)), r->o->mgwfbp ? "mgwfbp" : "single",
		 r->o->mgwfbp ? r->nbuckets : (size_t)1, it, r->test_acc,
		 it ? r->iter_s * 1e3 / (double)it : 0.0,
		 it ? (double)wire / (double)it : 0.0);
	incnn_comm_gvq_status(r->comm, &gs);
	if (incnn_comm_method(r->comm) == INCNN_COLL_METHOD_GRADIVEQ)
		snprintf(extra, sizeof(extra),
			 " gvq_compressed_iters %" PRIu64 " gvq_refreshes %" PRIu64
			 " gvq_fits %" PRIu64 " gvq_layers %u",
			 gs.compressed_calls, gs.refreshes, gs.fits,
			 gs.layers_compressed);
	summary_ps(r, it, all, ps, sizeof(ps));
	if (r->log)
		fprintf(r->log, "%s%s%s\n", line, extra, ps);
	if (!r->o->quiet)
		fprintf(stderr, PROG ": %s%s%s\n", line, extra, ps);
}

/* Stopped within an epoch (--iters): evaluate, digest, the stop line. */
static int train_stop(struct tr_run *r, struct tr_meta *me,
		      struct tr_meta *all, long it, int epoch)
{
	int64_t ok = 0;
	int ret, b;

	evaluate(r, &me->test_loss, &me->correct);
	ret = gather(r, me, all);
	if (ret)
		return ret;
	for (b = 0; b < r->N; b++)
		ok += all[b].correct;
	r->test_acc = (double)ok / r->d->n_test;
	if (r->log)
		fprintf(r->log, "stop iter %ld epoch %d digest %016" PRIx64
			" identical %d seconds %.3f\n",
			it, epoch, all[0].digest, r->N, tu_now() - r->t0);
	return 0;
}

static int train(struct tr_run *r)
{
	const struct tr_opts *o = r->o;
	const struct tr_data *d = r->d;
	int G = o->batch * r->N, ipe = d->n_train / G, epoch = 0, i;
	long it = 0, total;
	struct tr_meta me, *all;
	double epoch_t0, comm_s, train_sum, loss = 0, ti;
	int ret = 0;

	if (ipe < 1)
		return fail("%d training samples are fewer than one global batch of %d",
			    d->n_train, G);
	total = (long)ipe * o->epochs;
	if (o->iters && o->iters < total)
		total = o->iters;
	all = calloc(r->N, sizeof(*all) > sizeof(double) ? sizeof(*all) :
		     sizeof(double));
	if (!all)
		return fail("out of memory");
	if (r->log)
		fprintf(r->log, "# %ld iterations of %d global samples, %d per epoch\n",
			total, G, ipe);
	while (it < total) {
		epoch++;
		tr_shuffle(r->perm, d->n_train, o->seed, epoch);
		train_sum = 0;
		comm_s = 0;
		epoch_t0 = tu_now();
		for (i = 0; i < ipe && it < total; i++) {
			ti = tu_now();
			ret = train_iter(r, i, it, (double *)all, &loss, &comm_s);
			if (ret)
				goto out;
			r->iter_s += tu_now() - ti;
			it++;
			train_sum += loss;
			if (!r->rank)
				train_progress(r, epoch, it, total, ipe, loss);
		}
		if (i < ipe) {
			ret = train_stop(r, &me, all, it, epoch);
			if (ret)
				goto out;
			break;
		}
		evaluate(r, &me.test_loss, &me.correct);
		me.comm_s = comm_s;
		ret = gather(r, &me, all);
		if (ret)
			goto out;
		if (r->rank == 0)
			epoch_report(r, all, epoch, it, total, ipe, train_sum,
				     epoch_t0);
	}
	if (r->log)
		fprintf(r->log, "done iters %ld epochs %d digest %016" PRIx64
			" seconds %.3f\n", it, epoch, all[0].digest,
			tu_now() - r->t0);
	if (r->rank == 0)
		summary(r, it, all);
out:
	free(all);
	return ret;
}

/* Rank 0: the log's header lines and the start line on stderr. */
static void header(struct tr_run *r, const char *label, const char *arch)
{
	const struct tr_opts *o = r->o;
	const struct tr_data *d = r->d;
	const char *meth = method_name(incnn_comm_method(r->comm));
	const char *bk = o->mgwfbp ? "mgwfbp" : "single";

	if (r->log) {
		fprintf(r->log, "# " PROG ": %d rank%s (%s), algo %s, codec %s, arch %s (%zu parameters), batch %d per rank (%d global), lr %g, momentum %g, weight decay %g, seed %" PRIu64 "\n",
			r->N, r->N == 1 ? "" : "s",
			o->co.local ? "local processes" : "env",
			o->co.ps ? "ps" : "ring", label, arch, r->m.nparams,
			o->batch, o->batch * r->N, o->lr, o->momentum, o->wd,
			o->seed);
		fprintf(r->log, "# data %s: %d train, %d test\n", o->data,
			d->n_train, d->n_test);
		fprintf(r->log, "# method %s buckets %s\n", meth, bk);
	}
	if (r->rank == 0 && !o->quiet)
		fprintf(stderr, PROG ": %d rank%s, codec %s, method %s, buckets %s, arch %s, data %s (%d train, %d test)\n",
			r->N, r->N == 1 ? "" : "s", label, meth, bk, arch,
			o->data, d->n_train, d->n_test);
}

static int run_rank(const struct tr_opts *o, const struct tr_data *d,
		    struct incnn_comm_config *cfg)
{
	struct tr_run r = { .o = o, .d = d, .test_acc = NAN };
	int dims[TR_MAX_LAYERS + 1], i, ret, status = 0, maxb;
	char err[512], arch[128], label[48];
	unsigned int codec, param;

	dims[0] = d->dim;
	for (i = 0; i < o->nhidden; i++)
		dims[i + 1] = o->hidden[i];
	dims[o->nhidden + 1] = TR_CLASSES;
	maxb = o->batch > EVAL_BATCH ? o->batch : EVAL_BATCH;
	ret = tr_mlp_init(&r.m, o->nhidden + 1, dims, maxb, o->seed);
	if (ret)
		return fail("cannot allocate the network: %s", strerror(-ret));
	r.x = malloc(sizeof(float) * (size_t)maxb * d->dim);
	r.y = malloc(maxb);
	r.perm = malloc(sizeof(int) * d->n_train);
	if (!r.x || !r.y || !r.perm) {
		status = fail("out of memory");
		goto out_free;
	}
	ret = incnn_comm_create(&r.comm, cfg, err, sizeof(err));
	if (ret) {
		status = fail("%s", err);
		goto out_free;
	}
	r.rank = incnn_comm_rank(r.comm);
	r.N = incnn_comm_size(r.comm);
	incnn_comm_codec(r.comm, &codec, &param);
	incnn_codec_label(codec, param, label, sizeof(label));
	tr_mlp_arch(&r.m, arch, sizeof(arch));
	if (r.rank == 0 && o->log) {
		r.log = fopen(o->log, "w");
		if (!r.log)
			status = fail("%s: %s", o->log, strerror(errno));
	}
	/* every rank learns whether rank 0 could open its log */
	{
		int bad = status, *all = calloc(r.N, sizeof(int));

		if (!all || incnn_comm_allgather_meta(r.comm, &bad, sizeof(bad), all)) {
			status = status ? status : fail("rank %d: %s", r.rank,
							incnn_comm_strerror(r.comm));
		} else if (all[0]) {
			status = TU_EXIT_RUNTIME;
		}
		free(all);
		if (status)
			goto out;
	}
	header(&r, label, arch);
	layer_table(&r);
	if (o->mgwfbp) {
		status = setup_mgwfbp(&r);
		if (status)
			goto out;
	}
	r.wire0 = incnn_comm_wire_bytes(r.comm);
	r.t0 = tu_now();
	r.last_progress = r.t0;
	status = train(&r);
out:
	if (r.log && fclose(r.log) && !status)
		status = fail("%s: %s", o->log, strerror(errno));
	incnn_comm_destroy(r.comm);
out_free:
	free(r.x);
	free(r.y);
	free(r.perm);
	tr_mlp_free(&r.m);
	return status;
}

struct tr_local {
	const struct tr_opts *o;
	struct tr_data *d;
};

/* -n: one rank of the local job (tu_launch_local()) */
static int local_rank(void *arg, int rank, int world, int port, int store_fd)
{
	const struct tr_local *l = arg;
	struct incnn_comm_config cfg;
	int status;

	tu_comm_config(&cfg, l->o->co.tos, l->o->co.timeout_ms, l->o->co.codec_name,
		       l->o->codec, l->o->param);
	cfg.method = l->o->method;
	if (l->o->gvq_fc)
		cfg.gvq_fc = 1;
	tu_comm_local(&cfg, rank, world, port, store_fd);
	status = run_rank(l->o, l->d, &cfg);
	tr_data_free(l->d);
	return status;
}

int main(int argc, char **argv)
{
	struct incnn_comm_config cfg;
	struct tr_data d;
	struct tr_opts o;
	char err[512];
	int ret = parse_args(&o, argc, argv);

	if (ret)
		return ret;
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(o.data, "synth"))
		ret = tr_data_synth(&d, SYNTH_TRAIN, SYNTH_TEST, 42);
	else
		ret = tr_data_load(&d, o.data, err, sizeof(err));
	if (ret)
		return ret == -ENOMEM ? fail("out of memory for the dataset") :
		       fail("%s", ret == -EINVAL && !strcmp(o.data, "synth") ?
			    "synth: bad size" : err);
	if (o.co.local) {
		struct tr_local l = { .o = &o, .d = &d };

		ret = tu_launch_local(PROG, o.co.local, local_rank, &l);
	} else {
		tu_comm_config(&cfg, o.co.tos, o.co.timeout_ms, o.co.codec_name, o.codec,
			       o.param);
		cfg.method = o.method;
		if (o.gvq_fc)
			cfg.gvq_fc = 1;
		ret = run_rank(&o, &d, &cfg);
	}
	tr_data_free(&d);
	return ret;
}
