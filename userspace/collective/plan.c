// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn gradient buckets: the planner (WFBP, single bucket, fixed-size
 * buckets, MG-WFBP's merge) and the timeline simulator. Pure functions:
 * no communicator, no clock, no global state. See include/incnn/wfbp.h.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "include/incnn/wfbp.h"

static const char *const pl_names[INCNN_SCHED_COUNT] = {
	[INCNN_SCHED_WFBP] = "wfbp",
	[INCNN_SCHED_SINGLE] = "single",
	[INCNN_SCHED_FIXED] = "fixed",
	[INCNN_SCHED_MGWFBP] = "mgwfbp",
};

const char *incnn_sched_name(enum incnn_sched s)
{
	if ((unsigned int)s >= INCNN_SCHED_COUNT)
		return NULL;
	return pl_names[s];
}

int incnn_sched_parse(const char *name)
{
	int i;

	for (i = 0; name && i < INCNN_SCHED_COUNT; i++)
		if (!strcmp(name, pl_names[i]))
			return i;
	return -1;
}

static bool pl_layers_ok(const struct incnn_plan_layer *layers, size_t L)
{
	size_t i;

	if (L && !layers)
		return false;
	for (i = 0; i < L; i++) {
		if (!isfinite(layers[i].ready) || layers[i].ready < 0)
			return false;
		if (i && layers[i].ready < layers[i - 1].ready)
			return false;
		if (layers[i].count > (UINT64_MAX >> 4) / (L ? L : 1))
			return false;
	}
	return true;
}

/* open bucket k at layer i */
static void pl_open(struct incnn_bucket *out, size_t k,
		    const struct incnn_plan_layer *layers, size_t i)
{
	out[k].first = i;
	out[k].nlayers = 1;
	out[k].count = layers[i].count;
}

static void pl_add(struct incnn_bucket *bk, const struct incnn_plan_layer *ly)
{
	bk->nlayers++;
	bk->count += ly->count;
}

/*
 * MG-WFBP (Shi, Chu, Li, INFOCOM 2019): choose the buckets (runs of
 * consecutive layers) that minimise the iteration time under T(M) =
 * a + b M, the paper's optimisation problem. The paper merges layer by
 * layer with a pairwise test (incnn_plan_mg_pairwise() above); a
 * brute-force check of our timeline model found cases where that one
 * pass is not optimal (it merges early layers that an optimum keeps
 * apart so that a later, larger merge can start sooner), so the optimum
 * is computed exactly instead:
 *
 *	f(0) = 0
 *	f(j) = min over 0 <= i < j of max(f(i), r(j-1)) + a + b * 4 S(i, j)
 *
 * f(j) is the earliest time the communication of layers 0..j-1 can end,
 * S(i, j) their floats i..j-1, r(j-1) the ready time of layer j-1. The
 * recurrence holds because a bucket's end only grows with the previous
 * end (optimal substructure); O(L^2). Ties go to the smaller last bucket
 * (the latest split), with a relative tolerance of 1e-12 against
 * rounding, so merges that gain nothing are not made: a = 0 gives WFBP,
 * a huge a one bucket.
 */
static int pl_mgwfbp(const struct incnn_plan_layer *layers, size_t L,
		     double a, double b, struct incnn_bucket *out,
		     size_t *nbuckets)
{
	double *f = malloc((L + 1) * sizeof(*f));
	double *pre = malloc((L + 1) * sizeof(*pre));
	size_t *from = malloc((L + 1) * sizeof(*from));
	size_t i, j, k, n;

	if (!f || !pre || !from) {
		free(f);
		free(pre);
		free(from);
		return -ENOMEM;
	}
	f[0] = 0;
	pre[0] = 0;
	for (j = 1; j <= L; j++)
		pre[j] = pre[j - 1] + 4.0 * (double)layers[j - 1].count;
	for (j = 1; j <= L; j++) {
		double r = layers[j - 1].ready, best = INFINITY;

		from[j] = j - 1;
		for (i = j; i-- > 0;) {
			double t = fmax(f[i], r) + a + b * (pre[j] - pre[i]);

			if (i == j - 1 || t < best - 1e-12 * fabs(best)) {
				best = t;
				from[j] = i;
			}
		}
		f[j] = best;
	}
	/* the buckets, back to front */
	for (n = 0, j = L; j > 0; j = from[j])
		n++;
	for (k = n, j = L; j > 0; j = from[j]) {
		k--;
		out[k].first = from[j];
		out[k].nlayers = j - from[j];
		out[k].count = 0;
		for (i = from[j]; i < j; i++)
			out[k].count += layers[i].count;
	}
	*nbuckets = n;
	free(f);
	free(pre);
	free(from);
	return 0;
}

/*
 * The paper's one-pass rule (as in the authors' implementation,
 * github.com/HKBU-HPML/MG-WFBP, _generate_groups_mgwfbp): walking the
 * layers in backward order, the open bucket's communication would start
 * at c = max(end of the previous bucket, its ready time); the next layer,
 * ready at r, is merged into it when r < c + a (it is ready before the
 * open bucket's message would have got past its startup), and then c =
 * max(end of the previous bucket, r).
 */
int incnn_plan_mg_pairwise(const struct incnn_plan_layer *layers, size_t L,
			   double a, double b, struct incnn_bucket *out,
			   size_t *nbuckets)
{
	double prev_end = 0, c;
	size_t k = 0, i;

	if (!nbuckets || (L && !out) || !pl_layers_ok(layers, L) ||
	    !isfinite(a) || !isfinite(b) || a < 0 || b < 0)
		return -EINVAL;
	*nbuckets = 0;
	if (L == 0)
		return 0;
	pl_open(out, 0, layers, 0);
	c = layers[0].ready;
	for (i = 1; i < L; i++) {
		double r = layers[i].ready;

		if (r < c + a) {
			pl_add(&out[k], &layers[i]);
			c = fmax(prev_end, r);
			continue;
		}
		prev_end = c + a + b * 4.0 * (double)out[k].count;
		pl_open(out, ++k, layers, i);
		c = fmax(prev_end, r);
	}
	*nbuckets = k + 1;
	return 0;
}

int incnn_plan(const struct incnn_plan_layer *layers, size_t L,
	       enum incnn_sched s, double a, double b, uint64_t bucket_bytes,
	       struct incnn_bucket *out, size_t *nbuckets)
{
	size_t i, k;

	if (!nbuckets || (L && !out) || !pl_layers_ok(layers, L) ||
	    (unsigned int)s >= INCNN_SCHED_COUNT)
		return -EINVAL;
	if (s == INCNN_SCHED_MGWFBP &&
	    (!isfinite(a) || !isfinite(b) || a < 0 || b < 0))
		return -EINVAL;
	if (s == INCNN_SCHED_FIXED && bucket_bytes == 0)
		return -EINVAL;
	*nbuckets = 0;
	if (L == 0)
		return 0;

	switch (s) {
	case INCNN_SCHED_WFBP:
		for (i = 0; i < L; i++)
			pl_open(out, i, layers, i);
		*nbuckets = L;
		break;
	case INCNN_SCHED_SINGLE:
		pl_open(out, 0, layers, 0);
		for (i = 1; i < L; i++)
			pl_add(&out[0], &layers[i]);
		*nbuckets = 1;
		break;
	case INCNN_SCHED_FIXED:
		/* DDP: append; close once the bucket holds >= bucket_bytes */
		k = 0;
		pl_open(out, 0, layers, 0);
		for (i = 1; i < L; i++) {
			if (out[k].count * 4 >= bucket_bytes)
				pl_open(out, ++k, layers, i);
			else
				pl_add(&out[k], &layers[i]);
		}
		*nbuckets = k + 1;
		break;
	case INCNN_SCHED_MGWFBP:
		return pl_mgwfbp(layers, L, a, b, out, nbuckets);
	default:
		return -EINVAL;
	}
	return 0;
}

int incnn_simulate(const struct incnn_plan_layer *layers, size_t L,
		   const struct incnn_bucket *bk, size_t nbuckets,
		   double forward, double backward, double a, double b,
		   struct incnn_sim *res, double *start, double *end)
{
	double t = 0, comm = 0, last;
	size_t k, next = 0;

	if (!res || !pl_layers_ok(layers, L) || (nbuckets && !bk) ||
	    !isfinite(forward) || forward < 0 || !isfinite(backward) ||
	    !isfinite(a) || !isfinite(b) || a < 0 || b < 0 ||
	    (L && backward < layers[L - 1].ready) || backward < 0)
		return -EINVAL;
	for (k = 0; k < nbuckets; k++) {
		uint64_t count = 0;
		size_t i;
		double ready, cost;

		if (bk[k].first != next || bk[k].nlayers == 0 ||
		    bk[k].nlayers > L - next)
			return -EINVAL;
		for (i = next; i < next + bk[k].nlayers; i++)
			count += layers[i].count;
		if (count != bk[k].count)
			return -EINVAL;
		next += bk[k].nlayers;
		ready = layers[next - 1].ready;
		cost = a + b * 4.0 * (double)count;
		t = fmax(t, ready);
		if (start)
			start[k] = t;
		t += cost;
		if (end)
			end[k] = t;
		comm += cost;
	}
	if (next != L)
		return -EINVAL;
	last = fmax(backward, t);
	res->nbuckets = nbuckets;
	res->compute = forward + backward;
	res->iter = forward + last;
	res->comm = comm;
	res->exposed = last - backward;
	return 0;
}

void incnn_ring_cost(int N, double bytes_per_s, double latency_s, double *a,
		     double *b)
{
	if (N <= 1 || !(bytes_per_s > 0)) {
		*a = N <= 1 ? 0 : 2.0 * (N - 1) * latency_s;
		*b = 0;
		return;
	}
	*a = 2.0 * (N - 1) * latency_s;
	*b = 2.0 * (N - 1) / N / bytes_per_s;
}
