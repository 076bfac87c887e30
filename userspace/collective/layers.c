// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn gradient buckets over a communicator: incnn_allreduce_layers()
 * (plan, agree on the plan, emulate the backward pass's ready times, pack,
 * allreduce, unpack) and incnn_comm_probe_cost() (the a + b M model of
 * this communicator). See include/incnn/wfbp.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll.h"
#include "include/incnn/wfbp.h"

static double ly_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* sleep until CLOCK_MONOTONIC reaches @t seconds */
static void ly_sleep_until(double t)
{
	struct timespec ts;

	if (!(t > ly_now()))
		return;
	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

void incnn_layers_opts_init(struct incnn_layers_opts *o)
{
	memset(o, 0, sizeof(*o));
}

/* FNV-1a, 64 bits */
static uint64_t ly_hash(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static uint64_t ly_hash_u64(uint64_t h, uint64_t v)
{
	uint8_t b[8];

	coll_put64(b, v);
	return ly_hash(h, b, sizeof(b));
}

static uint64_t ly_hash_double(uint64_t h, double v)
{
	uint64_t u;

	memcpy(&u, &v, sizeof(u));
	return ly_hash_u64(h, u);
}

/* what every rank sends before the data moves */
struct ly_digest {
	uint64_t hash;
	uint64_t nbuckets;
};

static int ly_agree(struct incnn_comm *c, const struct ly_digest *me)
{
	struct ly_digest *all;
	int ret, r;

	if (c->world == 1)
		return 0;
	all = calloc((size_t)c->world, sizeof(*all));
	if (!all)
		return incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	ret = incnn_comm_allgather_meta(c, me, sizeof(*me), all);
	for (r = 1; !ret && r < c->world; r++)
		if (all[r].hash != all[0].hash)
			ret = incnn_coll_fail(c, -EPROTO, false,
					      "ranks computed different bucket plans: rank %d has %llu buckets (digest %016llx), rank 0 %llu (%016llx)",
					      r, (unsigned long long)all[r].nbuckets,
					      (unsigned long long)all[r].hash,
					      (unsigned long long)all[0].nbuckets,
					      (unsigned long long)all[0].hash);
	free(all);
	return ret;
}

static int ly_check(struct incnn_comm *c, const struct incnn_layer *layers,
		    size_t L, enum incnn_sched s,
		    const struct incnn_layers_opts *o)
{
	uint64_t total = 0;
	size_t i;

	if ((unsigned int)s >= INCNN_SCHED_COUNT)
		return incnn_coll_fail(c, -EINVAL, false,
				       "incnn_allreduce_layers: bad schedule %d",
				       (int)s);
	if (L && !layers)
		return incnn_coll_fail(c, -EINVAL, false,
				       "incnn_allreduce_layers: NULL layers");
	if (o->have_cost && (!isfinite(o->alpha) || !isfinite(o->beta) ||
			     o->alpha < 0 || o->beta < 0))
		return incnn_coll_fail(c, -EINVAL, false,
				       "incnn_allreduce_layers: bad cost model a %g, b %g",
				       o->alpha, o->beta);
	for (i = 0; i < L; i++) {
		if (layers[i].count && !layers[i].grad)
			return incnn_coll_fail(c, -EINVAL, false,
					       "incnn_allreduce_layers: layer %zu: NULL gradient",
					       i);
		if (layers[i].shape > INCNN_LAYER_SHAPE_FC)
			return incnn_coll_fail(c, -EINVAL, false,
					       "incnn_allreduce_layers: layer %zu: bad shape kind %u",
					       i, layers[i].shape);
		if (!isfinite(layers[i].ready) || layers[i].ready < 0 ||
		    layers[i].ready > 1e6)
			return incnn_coll_fail(c, -EINVAL, false,
					       "incnn_allreduce_layers: layer %zu: bad ready time %g",
					       i, layers[i].ready);
		total += layers[i].count;
		if (layers[i].count > (SIZE_MAX / 4) / 2 ||
		    total > (SIZE_MAX / 4) / 2)
			return incnn_coll_fail(c, -EINVAL, false,
					       "incnn_allreduce_layers: too many floats");
	}
	return 0;
}

/* MG-WFBP's cost model: the caller's, or probed. */
static int ly_cost(struct incnn_comm *c, enum incnn_sched s,
		   const struct incnn_layers_opts *o, double *a, double *b)
{
	*a = *b = 0;
	if (s != INCNN_SCHED_MGWFBP)
		return 0;
	if (o->have_cost) {
		*a = o->alpha;
		*b = o->beta;
		return 0;
	}
	return incnn_comm_probe_cost(c, o->ps, a, b);
}

/* The plan's digest, which every rank must share; *@stage_n: floats of
 * the largest bucket of several layers. */
static uint64_t ly_plan_hash(enum incnn_sched s,
			     const struct incnn_plan_layer *pl, size_t L,
			     const struct incnn_layers_opts *o, double a,
			     double b, uint64_t bucket_bytes,
			     const struct incnn_bucket *bk, size_t nb,
			     uint64_t *stage_n)
{
	uint64_t h = ly_hash_u64(0xcbf29ce484222325ull, (uint64_t)s);
	size_t i;

	h = ly_hash_u64(h, L);
	for (i = 0; i < L; i++)
		h = ly_hash_u64(h, pl[i].count);
	h = ly_hash_u64(h, o->ps);
	h = ly_hash_double(h, a);
	h = ly_hash_double(h, b);
	h = ly_hash_u64(h, s == INCNN_SCHED_FIXED ? bucket_bytes : 0);
	h = ly_hash_u64(h, nb);
	*stage_n = 0;
	for (i = 0; i < nb; i++) {
		h = ly_hash_u64(h, bk[i].first);
		h = ly_hash_u64(h, bk[i].nlayers);
		if (bk[i].nlayers > 1 && bk[i].count > *stage_n)
			*stage_n = bk[i].count;
	}
	return h;
}

/* The packing buffer, kept in the communicator: no page faults per call */
static int ly_stage_reserve(struct incnn_comm *c, uint64_t stage_n)
{
	if (stage_n <= c->wfbp.stage_cap)
		return 0;
	free(c->wfbp.stage);
	c->wfbp.stage = malloc(stage_n * sizeof(float));
	c->wfbp.stage_cap = c->wfbp.stage ? stage_n : 0;
	if (!c->wfbp.stage)
		return incnn_coll_fail(c, -ENOMEM, false,
				       "out of memory (%llu staging floats)",
				       (unsigned long long)stage_n);
	return 0;
}

/* Copy the bucket's layers into @stage (@in) or back out of it. */
static void ly_pack(const struct incnn_layer *layers,
		    const struct incnn_bucket *q, float *stage, bool in)
{
	size_t off = 0, i;

	for (i = q->first; i < q->first + q->nlayers; i++) {
		if (layers[i].count) {
			if (in)
				memcpy(stage + off, layers[i].grad,
				       layers[i].count * sizeof(float));
			else
				memcpy(layers[i].grad, stage + off,
				       layers[i].count * sizeof(float));
		}
		off += layers[i].count;
	}
}

/* Allreduce one bucket (packed when it has several layers). */
static int ly_bucket(struct incnn_comm *c, const struct incnn_layer *layers,
		     const struct incnn_bucket *q, bool ps)
{
	float *buf = c->wfbp.stage;
	int ret;

	if (c->method == INCNN_COLL_METHOD_GRADIVEQ)
		return incnn_coll_gvq_bucket(c, layers, q);
	if (q->nlayers == 1)
		buf = layers[q->first].grad;
	else
		ly_pack(layers, q, buf, true);
	ret = ps ? incnn_allreduce_ps(c, buf, q->count) :
	      incnn_allreduce(c, buf, q->count);
	if (!ret && q->nlayers > 1)
		ly_pack(layers, q, buf, false);
	return ret;
}

/* Plan the buckets (@pl, @bk: L entries) and agree on the plan. */
static int ly_plan_agree(struct incnn_comm *c,
			 const struct incnn_layer *layers, size_t L,
			 enum incnn_sched s, const struct incnn_layers_opts *o,
			 double a, double b, struct incnn_plan_layer *pl,
			 struct incnn_bucket *bk, size_t *nb)
{
	uint64_t bucket_bytes = o->bucket_bytes ? o->bucket_bytes :
				INCNN_WFBP_DEFAULT_BUCKET_BYTES, stage_n;
	struct ly_digest dg;
	size_t i;
	int ret;

	/* a bucket never starts before its latest layer: running maximum */
	for (i = 0; i < L; i++) {
		pl[i].count = layers[i].count;
		pl[i].ready = i && pl[i - 1].ready > layers[i].ready ?
			      pl[i - 1].ready : layers[i].ready;
	}
	ret = incnn_plan(pl, L, s, a, b, bucket_bytes, bk, nb);
	if (ret)
		return incnn_coll_fail(c, ret, false,
				       "incnn_allreduce_layers: cannot plan (%s)",
				       strerror(-ret));
	dg.hash = ly_plan_hash(s, pl, L, o, a, b, bucket_bytes, bk, *nb,
			       &stage_n);
	dg.nbuckets = *nb;
	ret = ly_agree(c, &dg);
	return ret ? ret : ly_stage_reserve(c, stage_n);
}

static void ly_stat(struct incnn_layers_stats *stats, size_t k,
		    const struct incnn_bucket *q, double ready, double start,
		    double end)
{
	struct incnn_bucket_stat *st;

	if (!stats || !stats->bucket || k >= stats->cap)
		return;
	st = &stats->bucket[k];
	st->first = q->first;
	st->nlayers = q->nlayers;
	st->count = q->count;
	st->ready = ready;
	st->start = start;
	st->end = end;
}

int incnn_allreduce_layers(struct incnn_comm *c,
			   const struct incnn_layer *layers, size_t L,
			   enum incnn_sched s,
			   const struct incnn_layers_opts *opts,
			   struct incnn_layers_stats *stats)
{
	struct incnn_layers_opts o;
	struct incnn_plan_layer *pl = NULL;
	struct incnn_bucket *bk = NULL;
	double t0 = ly_now(), a = 0, b = 0, comm = 0;
	size_t nb = 0, k;
	int ret;

	if (!c)
		return -EINVAL;
	if (c->err)
		return c->err;
	if (opts)
		o = *opts;
	else
		incnn_layers_opts_init(&o);
	if (stats)
		stats->nbuckets = 0;
	ret = ly_check(c, layers, L, s, &o);
	if (!ret)
		ret = ly_cost(c, s, &o, &a, &b);
	if (ret)
		return ret;
	pl = malloc((L ? L : 1) * sizeof(*pl));
	bk = malloc((L ? L : 1) * sizeof(*bk));
	if (!pl || !bk)
		ret = incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	if (!ret)
		ret = ly_plan_agree(c, layers, L, s, &o, a, b, pl, bk, &nb);
	if (!ret && c->method == INCNN_COLL_METHOD_GRADIVEQ)
		ret = incnn_coll_gvq_begin(c, layers, L, o.ps);
	if (!ret && stats) {
		stats->nbuckets = nb;
		stats->alpha = a;
		stats->beta = b;
	}
	for (k = 0; !ret && k < nb; k++) {
		const struct incnn_bucket *q = &bk[k];
		double ready = pl[q->first + q->nlayers - 1].ready, t1, t2;

		if (!o.no_wait)
			ly_sleep_until(t0 + ready);
		t1 = ly_now();
		ret = ly_bucket(c, layers, q, o.ps);
		if (ret)
			break;
		t2 = ly_now();
		comm += t2 - t1;
		ly_stat(stats, k, q, ready, t1 - t0, t2 - t0);
	}
	if (!ret && c->method == INCNN_COLL_METHOD_GRADIVEQ)
		ret = incnn_coll_gvq_end(c);
	if (stats) {
		stats->total = ly_now() - t0;
		stats->comm = comm;
	}
	free(bk);
	free(pl);
	return ret;
}

/* --- the cost model ------------------------------------------------------- */

/* The communicator's flat allreduce; GradiVeQ's plain part (the ring) */
static int ly_allreduce_plain(struct incnn_comm *c, float *buf, size_t n,
			      bool ps)
{
	if (c->method == INCNN_COLL_METHOD_GRADIVEQ && !ps)
		return incnn_coll_allreduce_ring(c, buf, n);
	return ps ? incnn_allreduce_ps(c, buf, n) : incnn_allreduce(c, buf, n);
}

#define LY_PROBE_REPS	3

static const size_t ly_probe_sizes[] = { 4096, 65536, 1 << 20, 4 << 20 };
#define LY_NPROBE	(sizeof(ly_probe_sizes) / sizeof(ly_probe_sizes[0]))

/* The best of LY_PROBE_REPS times of each probe size into @best. */
static int ly_probe_times(struct incnn_comm *c, bool ps, double *best)
{
	size_t i, j, n = ly_probe_sizes[LY_NPROBE - 1] / 4;
	float *buf = malloc(n * sizeof(float));
	int ret = 0;

	if (!buf)
		return incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	for (i = 0; i < LY_NPROBE && !ret; i++) {
		best[i] = INFINITY;
		for (j = 0; j < LY_PROBE_REPS && !ret; j++) {
			size_t k, m = ly_probe_sizes[i] / 4;
			double t;

			for (k = 0; k < m; k++)
				buf[k] = 0x1p-10f * (float)(k % 7);
			ret = incnn_comm_barrier(c);
			if (ret)
				break;
			t = ly_now();
			ret = ly_allreduce_plain(c, buf, m, ps);
			t = ly_now() - t;
			if (t < best[i])
				best[i] = t;
		}
	}
	free(buf);
	return ret;
}

/*
 * Least squares t = a + b x, relative (weights 1/t^2, so that the small
 * sizes, which carry a, count as much as the large ones), clamped to
 * a, b >= 0.
 */
static void ly_fit(const double *best, double *a_out, double *b_out)
{
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, a, b, den;

	for (size_t i = 0; i < LY_NPROBE; i++) {
		double x = (double)ly_probe_sizes[i];
		double w = best[i] > 0 ? 1 / (best[i] * best[i]) : 1;

		sw += w;
		sx += w * x;
		sy += w * best[i];
		sxx += w * x * x;
		sxy += w * x * best[i];
	}
	den = sw * sxx - sx * sx;
	b = den > 0 ? (sw * sxy - sx * sy) / den : 0;
	a = (sy - b * sx) / sw;
	if (!(b >= 0)) {
		b = 0;
		a = sy / sw;
	}
	if (!(a >= 0)) {
		a = 0;
		b = sxx > 0 ? sxy / sxx : 0;
	}
	*a_out = a;
	*b_out = b;
}

int incnn_comm_probe_cost(struct incnn_comm *c, bool ps, double *a_out,
			  double *b_out)
{
	double best[LY_NPROBE], mine[2], *all;
	int ret;

	if (!c)
		return -EINVAL;
	if (c->err)
		return c->err;
	if (c->wfbp.cost_known[ps]) {
		*a_out = c->wfbp.cost_a[ps];
		*b_out = c->wfbp.cost_b[ps];
		return 0;
	}
	all = calloc((size_t)c->world, sizeof(mine));
	if (!all)
		return incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	ret = ly_probe_times(c, ps, best);
	if (!ret) {
		/* every rank uses rank 0's fit */
		ly_fit(best, &mine[0], &mine[1]);
		ret = incnn_comm_allgather_meta(c, mine, sizeof(mine), all);
	}
	if (!ret) {
		c->wfbp.cost_a[ps] = all[0];
		c->wfbp.cost_b[ps] = all[1];
		c->wfbp.cost_known[ps] = true;
		*a_out = all[0];
		*b_out = all[1];
	}
	free(all);
	return ret;
}
