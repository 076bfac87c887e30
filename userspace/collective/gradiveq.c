// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GradiVeQ core (include/incnn/gradiveq.h, docs/gradiveq.md): the paper's
 * flattening of a conv layer's gradient, the PCA compressor by a cyclic
 * Jacobi eigen-decomposition, compress / add / decompress, the loss
 * monitor and the schedule. Scalar C; every float operation in a fixed
 * order (the build uses -ffp-contract=off), so ranks agree bit for bit.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <incnn/gradiveq.h>
#include "coll.h"

/*
 * Let GCC's -O2 vectorise the element-wise inner loops of compress and
 * decompress (its default cost model at -O2 does not for a run-time trip
 * count). Vectorising across independent outputs keeps each output's
 * order of operations, so results stay bit-identical to the plain loop.
 */
#if defined(__GNUC__) && !defined(__clang__)
#define GVQ_VECTORIZE __attribute__((optimize("vect-cost-model=dynamic")))
#else
#define GVQ_VECTORIZE
#endif

void incnn_gvq_params_default(struct incnn_gvq_params *p)
{
	p->d = 256;
	p->k = 32;
	p->warmup = 1000;
	p->t_s = 100;
	p->t_c = 400;
	p->loss_eps = 0.01;
}

static int check_dk(unsigned int d, unsigned int k, char *err, size_t errlen)
{
	if (d < 2 || d > INCNN_GVQ_MAX_D)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "gradiveq: slice size d %u: must be in [2, %d]", d,
				       INCNN_GVQ_MAX_D);
	if (k < 1 || k >= d)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "gradiveq: compressed size k %u: must be in [1, d - 1] = [1, %u]",
				       k, d - 1);
	return 0;
}

int incnn_gvq_params_check(const struct incnn_gvq_params *p, char *err,
			   size_t errlen)
{
	int rc = check_dk(p->d, p->k, err, errlen);

	if (rc)
		return rc;
	if (p->warmup > INCNN_GVQ_MAX_ITERS)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "gradiveq: warm-up %u: must be at most %u",
				       p->warmup, INCNN_GVQ_MAX_ITERS);
	if (p->t_s < 2 || p->t_s > INCNN_GVQ_MAX_TS)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "gradiveq: T_s %u: must be in [2, %d]", p->t_s,
				       INCNN_GVQ_MAX_TS);
	if (p->t_c < 1 || p->t_c > INCNN_GVQ_MAX_ITERS)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "gradiveq: T_c %u: must be in [1, %u]", p->t_c,
				       INCNN_GVQ_MAX_ITERS);
	if (!(p->loss_eps > 0 && p->loss_eps <= 1))
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "gradiveq: loss threshold %g: must be in (0, 1]",
				       p->loss_eps);
	return 0;
}

/* --- slicing -------------------------------------------------------------- */

size_t incnn_gvq_conv_size(const struct incnn_gvq_conv *l)
{
	return (size_t)l->filters * l->depth * l->height * l->width;
}

int incnn_gvq_conv_check(const struct incnn_gvq_params *p,
			 const struct incnn_gvq_conv *l, char *err,
			 size_t errlen)
{
	uint64_t n = (uint64_t)l->filters * l->depth * l->height * l->width;

	if (!l->filters || !l->depth || !l->height || !l->width)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "gradiveq: conv layer %ux%ux%ux%u: every dimension must be >= 1",
				       l->filters, l->depth, l->height, l->width);
	if (l->filters > INCNN_GVQ_MAX_LAYER || l->depth > INCNN_GVQ_MAX_LAYER ||
	    l->height > INCNN_GVQ_MAX_LAYER || l->width > INCNN_GVQ_MAX_LAYER ||
	    (n / l->filters / l->depth / l->height != l->width) ||
	    n > INCNN_GVQ_MAX_LAYER)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "gradiveq: conv layer %ux%ux%ux%u: more than %u floats",
				       l->filters, l->depth, l->height, l->width,
				       INCNN_GVQ_MAX_LAYER);
	if (p->d % l->filters)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "gradiveq: slice size d %u: must be a multiple of the layer's %u filters",
				       p->d, l->filters);
	if (n < p->d)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "gradiveq: conv layer of %llu floats: must hold at least one slice of d = %u",
				       (unsigned long long)n, p->d);
	return 0;
}

size_t incnn_gvq_flat_index(const struct incnn_gvq_conv *l, unsigned int m,
			    unsigned int c, unsigned int h, unsigned int w)
{
	return (((size_t)h * l->width + w) * l->depth + c) * l->filters + m;
}

/* g[m][c][h][w] <-> v[((h W + w) D + c) M + m]; to_v picks the direction */
static void shuffle(const struct incnn_gvq_conv *l, const float *src,
		    float *dst, bool to_v)
{
	size_t gi = 0, vi;
	unsigned int m, c, h, w;

	for (m = 0; m < l->filters; m++)
		for (c = 0; c < l->depth; c++)
			for (h = 0; h < l->height; h++)
				for (w = 0; w < l->width; w++, gi++) {
					vi = incnn_gvq_flat_index(l, m, c, h, w);
					if (to_v)
						dst[vi] = src[gi];
					else
						dst[gi] = src[vi];
				}
}

void incnn_gvq_flatten(const struct incnn_gvq_conv *l, const float *g,
		       float *v)
{
	shuffle(l, g, v, true);
}

void incnn_gvq_unflatten(const struct incnn_gvq_conv *l, const float *v,
			 float *g)
{
	shuffle(l, v, g, false);
}

/* --- the compressor ------------------------------------------------------- */

struct incnn_gvq_pca {
	unsigned int d, k, sweeps;
	bool ready;
	float *u;	/* d x k, row-major: compress walks rows */
	float *ut;	/* k x d, row-major: decompress walks rows */
	float *mu;	/* d */
	double *eig;	/* d, decreasing */
};

int incnn_gvq_pca_create(struct incnn_gvq_pca **out, unsigned int d,
			 unsigned int k, char *err, size_t errlen)
{
	struct incnn_gvq_pca *c;
	int rc = check_dk(d, k, err, errlen);

	if (rc)
		return rc;
	c = calloc(1, sizeof(*c));
	if (c) {
		c->u = calloc((size_t)d * k, sizeof(float));
		c->ut = calloc((size_t)d * k, sizeof(float));
		c->mu = calloc(d, sizeof(float));
		c->eig = calloc(d, sizeof(double));
	}
	if (!c || !c->u || !c->ut || !c->mu || !c->eig) {
		incnn_gvq_pca_destroy(c);
		return incnn_coll_errf(err, errlen, -ENOMEM, "gradiveq: out of memory");
	}
	c->d = d;
	c->k = k;
	*out = c;
	return 0;
}

void incnn_gvq_pca_destroy(struct incnn_gvq_pca *c)
{
	if (!c)
		return;
	free(c->u);
	free(c->ut);
	free(c->mu);
	free(c->eig);
	free(c);
}

bool incnn_gvq_pca_ready(const struct incnn_gvq_pca *c)
{
	return c->ready;
}

unsigned int incnn_gvq_pca_d(const struct incnn_gvq_pca *c)
{
	return c->d;
}

unsigned int incnn_gvq_pca_k(const struct incnn_gvq_pca *c)
{
	return c->k;
}

const float *incnn_gvq_pca_u(const struct incnn_gvq_pca *c)
{
	return c->u;
}

const float *incnn_gvq_pca_mu(const struct incnn_gvq_pca *c)
{
	return c->mu;
}

const double *incnn_gvq_pca_eigenvalues(const struct incnn_gvq_pca *c)
{
	return c->eig;
}

unsigned int incnn_gvq_pca_sweeps(const struct incnn_gvq_pca *c)
{
	return c->sweeps;
}

void incnn_gvq_pca_load(struct incnn_gvq_pca *c, const float *u,
			const float *mu)
{
	unsigned int i, j;

	if (u != c->u)
		memcpy(c->u, u, (size_t)c->d * c->k * sizeof(float));
	memcpy(c->mu, mu, (size_t)c->d * sizeof(float));
	for (i = 0; i < c->d; i++)
		for (j = 0; j < c->k; j++)
			c->ut[(size_t)j * c->d + i] = u[(size_t)i * c->k + j];
	c->ready = true;
}

/*
 * One Jacobi rotation zeroing a[p][q] of the symmetric n x n matrix a
 * (full storage), accumulated into the eigenvectors, the rows of vt.
 * Rutishauser's formulas: theta = (a_qq - a_pp) / (2 a_pq),
 * t = sign(theta) / (|theta| + sqrt(theta^2 + 1)), c = 1/sqrt(t^2 + 1),
 * s = t c; a_pp -= t a_pq, a_qq += t a_pq, a_pq = 0; for r != p, q the
 * rows p and q are rotated and mirrored into columns p and q (so every
 * read is of a contiguous row).
 */
static void jacobi_rotate(double *a, double *vt, unsigned int n,
			  unsigned int p, unsigned int q)
{
	double apq = a[(size_t)p * n + q], theta, t, cs, sn, x, y;
	double *ap = a + (size_t)p * n, *aq = a + (size_t)q * n;
	double *vp = vt + (size_t)p * n, *vq = vt + (size_t)q * n;
	unsigned int r;

	theta = (aq[q] - ap[p]) / (2.0 * apq);
	t = 1.0 / (fabs(theta) + sqrt(theta * theta + 1.0));
	if (theta < 0)
		t = -t;
	cs = 1.0 / sqrt(t * t + 1.0);
	sn = t * cs;
	for (r = 0; r < n; r++) {
		if (r == p || r == q)
			continue;
		x = ap[r];
		y = aq[r];
		ap[r] = cs * x - sn * y;
		aq[r] = sn * x + cs * y;
		a[(size_t)r * n + p] = ap[r];
		a[(size_t)r * n + q] = aq[r];
	}
	ap[p] -= t * apq;
	aq[q] += t * apq;
	ap[q] = 0;
	aq[p] = 0;
	for (r = 0; r < n; r++) {
		x = vp[r];
		y = vq[r];
		vp[r] = cs * x - sn * y;
		vq[r] = sn * x + cs * y;
	}
}

/* sum of squares of the off-diagonal entries, and of all (in *all) */
static double off_norm2(const double *a, unsigned int n, double *all)
{
	double off = 0, tot = 0, x;
	unsigned int i, j;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			x = a[(size_t)i * n + j];
			tot += x * x;
			if (i != j)
				off += x * x;
		}
	*all = tot;
	return off;
}

/*
 * Cyclic Jacobi on the symmetric a (destroyed; its diagonal ends as the
 * eigenvalues), vt = the eigenvectors in rows (vt[j n + i]: entry i of
 * the eigenvector of a[j][j]). Returns the sweeps, or
 * -EDOM if INCNN_GVQ_JACOBI_SWEEPS were not enough.
 */
static int jacobi(double *a, double *vt, unsigned int n)
{
	double all, off, tol2;
	unsigned int p, q, sweep;

	memset(vt, 0, (size_t)n * n * sizeof(double));
	for (p = 0; p < n; p++)
		vt[(size_t)p * n + p] = 1;
	off = off_norm2(a, n, &all);
	tol2 = INCNN_GVQ_JACOBI_TOL * INCNN_GVQ_JACOBI_TOL * all;
	for (sweep = 0; sweep < INCNN_GVQ_JACOBI_SWEEPS; sweep++) {
		if (off <= tol2)
			return (int)sweep;
		for (p = 0; p + 1 < n; p++)
			for (q = p + 1; q < n; q++)
				if (a[(size_t)p * n + q] != 0)
					jacobi_rotate(a, vt, n, p, q);
		off = off_norm2(a, n, &all);
	}
	return off <= tol2 ? (int)sweep : -EDOM;
}

/* mu = mean of the samples; a = their covariance (sample, 1/(T-1)) */
static void covariance(const float *x, unsigned int nt, unsigned int d,
		       double *mean, double *a)
{
	unsigned int t, i, j;
	double s, xi;

	for (i = 0; i < d; i++) {
		s = 0;
		for (t = 0; t < nt; t++)
			s += x[(size_t)t * d + i];
		mean[i] = s / nt;
	}
	memset(a, 0, (size_t)d * d * sizeof(double));
	for (t = 0; t < nt; t++)
		for (i = 0; i < d; i++) {
			xi = x[(size_t)t * d + i] - mean[i];
			for (j = i; j < d; j++)
				a[(size_t)i * d + j] +=
					xi * (x[(size_t)t * d + j] - mean[j]);
		}
	for (i = 0; i < d; i++)
		for (j = i; j < d; j++) {
			a[(size_t)i * d + j] /= (nt - 1);
			a[(size_t)j * d + i] = a[(size_t)i * d + j];
		}
}

/* order[] = indices by decreasing eigenvalue, stable (insertion sort) */
static void sort_desc(const double *a, unsigned int d, unsigned int *order)
{
	unsigned int i, j, o;

	for (i = 0; i < d; i++) {
		o = i;
		for (j = i; j > 0 && a[(size_t)order[j - 1] * d + order[j - 1]] <
				      a[(size_t)o * d + o]; j--)
			order[j] = order[j - 1];
		order[j] = o;
	}
}

/* U = the first k eigenvectors (rows of vt) in @order, signs fixed */
static void take_u(struct incnn_gvq_pca *c, const double *a, const double *vt,
		   const unsigned int *order)
{
	unsigned int d = c->d, i, j, big;
	double sign;

	for (j = 0; j < d; j++)
		c->eig[j] = a[(size_t)order[j] * d + order[j]];
	for (j = 0; j < c->k; j++) {
		const double *e = vt + (size_t)order[j] * d;

		big = 0;
		for (i = 1; i < d; i++)
			if (fabs(e[i]) > fabs(e[big]))
				big = i;
		sign = e[big] < 0 ? -1.0 : 1.0;
		for (i = 0; i < d; i++)
			c->u[(size_t)i * c->k + j] = (float)(sign * e[i]);
	}
}

int incnn_gvq_pca_fit(struct incnn_gvq_pca *c, const float *samples,
		      unsigned int nsamples)
{
	unsigned int d = c->d, *order = NULL, i;
	double *mean = NULL, *a = NULL, *v = NULL;
	float *u = NULL, *mu = NULL;
	size_t nf = (size_t)nsamples * d, j;
	int rc = -ENOMEM;

	if (nsamples < 2 || nsamples > INCNN_GVQ_MAX_TS)
		return -EINVAL;
	for (j = 0; j < nf; j++)
		if (!isfinite(samples[j]))
			return -ERANGE;
	mean = malloc(d * sizeof(double));
	a = malloc((size_t)d * d * sizeof(double));
	v = malloc((size_t)d * d * sizeof(double));
	order = malloc(d * sizeof(unsigned int));
	mu = malloc(d * sizeof(float));
	if (!mean || !a || !v || !order || !mu)
		goto out;
	covariance(samples, nsamples, d, mean, a);
	rc = jacobi(a, v, d);
	if (rc < 0)
		goto out;
	c->sweeps = (unsigned int)rc;
	sort_desc(a, d, order);
	u = c->u;	/* take_u writes c->u; load() then rebuilds ut */
	take_u(c, a, v, order);
	for (i = 0; i < d; i++)
		mu[i] = (float)mean[i];
	incnn_gvq_pca_load(c, u, mu);
	rc = 0;
out:
	free(mean);
	free(a);
	free(v);
	free(order);
	free(mu);
	return rc;
}

unsigned int incnn_gvq_choose_k(const double *eig, unsigned int d,
				double eps)
{
	double total = 0, tail;
	unsigned int j;

	for (j = 0; j < d; j++)
		total += eig[j] > 0 ? eig[j] : 0;
	if (total <= 0)
		return 1;
	tail = total;
	for (j = 0; j < d; j++) {
		if (tail <= eps * total)
			return j ? j : 1;
		tail -= eig[j] > 0 ? eig[j] : 0;
	}
	return d;
}

/* y = U^T (x - mu / nranks) for one slice; i increasing */
GVQ_VECTORIZE
static void compress1(const struct incnn_gvq_pca *c, const float *x,
		      float nr, float *restrict y)
{
	unsigned int d = c->d, k = c->k, i, j;
	const float *restrict ur;
	float t;

	for (j = 0; j < k; j++)
		y[j] = 0;
	/* four rows per pass, added one after the other: the same order */
	for (i = 0; i + 4 <= d; i += 4) {
		const float *restrict u1 = c->u + (size_t)(i + 1) * k;
		const float *restrict u2 = c->u + (size_t)(i + 2) * k;
		const float *restrict u3 = c->u + (size_t)(i + 3) * k;
		float t1 = x[i + 1] - c->mu[i + 1] / nr;
		float t2 = x[i + 2] - c->mu[i + 2] / nr;
		float t3 = x[i + 3] - c->mu[i + 3] / nr;

		t = x[i] - c->mu[i] / nr;
		ur = c->u + (size_t)i * k;
		for (j = 0; j < k; j++)
			y[j] = y[j] + ur[j] * t + u1[j] * t1 + u2[j] * t2 +
			       u3[j] * t3;
	}
	for (; i < d; i++) {
		t = x[i] - c->mu[i] / nr;
		ur = c->u + (size_t)i * k;
		for (j = 0; j < k; j++)
			y[j] += ur[j] * t;
	}
}

void incnn_gvq_compress(const struct incnn_gvq_pca *c, const float *x,
			size_t nslices, unsigned int nranks, float *y)
{
	size_t s;

	for (s = 0; s < nslices; s++)
		compress1(c, x + s * c->d, (float)nranks, y + s * c->k);
}

void incnn_gvq_add(float *restrict acc, const float *restrict y, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		acc[i] += y[i];
}

/* x = mu / nr + U s for one slice; j increasing */
GVQ_VECTORIZE
static void decompress1(const struct incnn_gvq_pca *c, const float *s,
			float nr, float *restrict x)
{
	unsigned int d = c->d, k = c->k, i, j;
	const float *restrict ut;
	float sj;

	for (i = 0; i < d; i++)
		x[i] = c->mu[i] / nr;
	/* four columns per pass, added one after the other: the same order */
	for (j = 0; j + 4 <= k; j += 4) {
		const float *restrict u1 = c->ut + (size_t)(j + 1) * d;
		const float *restrict u2 = c->ut + (size_t)(j + 2) * d;
		const float *restrict u3 = c->ut + (size_t)(j + 3) * d;
		float s1 = s[j + 1], s2 = s[j + 2], s3 = s[j + 3];

		ut = c->ut + (size_t)j * d;
		sj = s[j];
		for (i = 0; i < d; i++)
			x[i] = x[i] + ut[i] * sj + u1[i] * s1 + u2[i] * s2 +
			       u3[i] * s3;
	}
	for (; j < k; j++) {
		ut = c->ut + (size_t)j * d;
		sj = s[j];
		for (i = 0; i < d; i++)
			x[i] += ut[i] * sj;
	}
}

void incnn_gvq_decompress(const struct incnn_gvq_pca *c, const float *s,
			  size_t nslices, float *x)
{
	size_t i;

	for (i = 0; i < nslices; i++)
		decompress1(c, s + i * c->k, 1.0f, x + i * c->d);
}

double incnn_gvq_local_loss(const struct incnn_gvq_pca *c, const float *x,
			    size_t nslices, unsigned int nranks)
{
	float y[INCNN_GVQ_MAX_D], xh[INCNN_GVQ_MAX_D];
	double num = 0, den = 0, e;
	size_t s;
	unsigned int i;

	for (s = 0; s < nslices; s++) {
		const float *xs = x + s * c->d;

		compress1(c, xs, (float)nranks, y);
		decompress1(c, y, (float)nranks, xh);
		for (i = 0; i < c->d; i++) {
			e = (double)xs[i] - xh[i];
			num += e * e;
			den += (double)xs[i] * xs[i];
		}
	}
	return den > 0 ? num / den : 0;
}

size_t incnn_gvq_segment(size_t nslices, unsigned int nranks,
			 unsigned int seg, size_t *first)
{
	size_t base = nslices / nranks, extra = nslices % nranks;

	*first = seg * base + (seg < extra ? seg : extra);
	return base + (seg < extra ? 1 : 0);
}

/* --- one conv layer ---------------------------------------------------------- */

struct incnn_gvq_layer {
	struct incnn_gvq_params p;
	struct incnn_gvq_conv l;
	struct incnn_gvq_pca *pca;
	float *samples;		/* t_s x d */
	unsigned int nsamples;
};

int incnn_gvq_layer_create(struct incnn_gvq_layer **out,
			   const struct incnn_gvq_params *p,
			   const struct incnn_gvq_conv *l, char *err,
			   size_t errlen)
{
	struct incnn_gvq_layer *g;
	int rc = incnn_gvq_params_check(p, err, errlen);

	rc = rc ? rc : incnn_gvq_conv_check(p, l, err, errlen);
	if (rc)
		return rc;
	g = calloc(1, sizeof(*g));
	if (!g)
		return incnn_coll_errf(err, errlen, -ENOMEM, "gradiveq: out of memory");
	g->p = *p;
	g->l = *l;
	g->samples = calloc((size_t)p->t_s * p->d, sizeof(float));
	rc = g->samples ? incnn_gvq_pca_create(&g->pca, p->d, p->k, err, errlen)
			: incnn_coll_errf(err, errlen, -ENOMEM, "gradiveq: out of memory");
	if (rc) {
		incnn_gvq_layer_destroy(g);
		return rc;
	}
	*out = g;
	return 0;
}

void incnn_gvq_layer_destroy(struct incnn_gvq_layer *g)
{
	if (!g)
		return;
	incnn_gvq_pca_destroy(g->pca);
	free(g->samples);
	free(g);
}

size_t incnn_gvq_layer_size(const struct incnn_gvq_layer *g)
{
	return incnn_gvq_conv_size(&g->l);
}

size_t incnn_gvq_layer_nslices(const struct incnn_gvq_layer *g)
{
	return incnn_gvq_conv_size(&g->l) / g->p.d;
}

int incnn_gvq_layer_sample(struct incnn_gvq_layer *g, const float *v)
{
	if (g->nsamples >= g->p.t_s)
		return -ENOSPC;
	memcpy(g->samples + (size_t)g->nsamples * g->p.d, v,
	       g->p.d * sizeof(float));
	g->nsamples++;
	return 0;
}

unsigned int incnn_gvq_layer_nsamples(const struct incnn_gvq_layer *g)
{
	return g->nsamples;
}

int incnn_gvq_layer_fit(struct incnn_gvq_layer *g)
{
	int rc = incnn_gvq_pca_fit(g->pca, g->samples, g->nsamples);

	g->nsamples = 0;
	return rc;
}

struct incnn_gvq_pca *incnn_gvq_layer_pca(const struct incnn_gvq_layer *g)
{
	return g->pca;
}

/* --- the schedule ---------------------------------------------------------- */

int incnn_gvq_sched_init(struct incnn_gvq_sched *s,
			 const struct incnn_gvq_params *p, char *err,
			 size_t errlen)
{
	int rc = incnn_gvq_params_check(p, err, errlen);

	if (rc)
		return rc;
	memset(s, 0, sizeof(*s));
	s->p = *p;
	s->phase = p->warmup ? INCNN_GVQ_WARMUP : INCNN_GVQ_SAMPLE;
	return 0;
}

enum incnn_gvq_phase incnn_gvq_sched_next(struct incnn_gvq_sched *s,
					  unsigned int over,
					  unsigned int nranks)
{
	enum incnn_gvq_phase next = s->phase;

	s->iter++;
	s->done++;
	switch (s->phase) {
	case INCNN_GVQ_WARMUP:
		if (s->done >= s->p.warmup)
			next = INCNN_GVQ_SAMPLE;
		break;
	case INCNN_GVQ_SAMPLE:
		if (s->done >= s->p.t_s)
			next = INCNN_GVQ_COMPRESSED;
		break;
	case INCNN_GVQ_COMPRESSED:
		if ((uint64_t)over * 2 > nranks) {
			s->refreshes++;
			next = INCNN_GVQ_SAMPLE;
		} else if (s->done >= s->p.t_c) {
			next = INCNN_GVQ_SAMPLE;
		}
		break;
	}
	if (next != s->phase) {
		s->phase = next;
		s->done = 0;
	}
	return next;
}

const char *incnn_gvq_phase_name(enum incnn_gvq_phase ph)
{
	switch (ph) {
	case INCNN_GVQ_WARMUP:
		return "warmup";
	case INCNN_GVQ_SAMPLE:
		return "sample";
	case INCNN_GVQ_COMPRESSED:
		return "compressed";
	}
	return "?";
}
