// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn-train's multi-layer perceptron (see mlp.h).
 *
 * The inner loops are "y += a * x" over a row (axpy), written with GCC
 * vector extensions: four independent float multiply-then-add operations
 * at a time, exactly the scalar results (no FMA, no reassociation). Every
 * output element is a sum whose order is fixed by the loop nest, never by
 * the vector width: forward sums over inputs i = 0, 1, ...; weight
 * gradients over samples b = 0, 1, ...; input gradients over outputs
 * j = 0, 1, ... Blocking (IB rows at a time) keeps a slice of W in cache
 * while every sample of the batch uses it, without changing any order.
 * Multiplying by a zero input is skipped: adding +-0 never changes a sum
 * that is not -0, and the sums start from the bias or +0, so the result is
 * the same bit for bit.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <incnn/gen.h>
#include "mlp.h"

#define IB	16	/* rows of W per cache block */

typedef float v4f __attribute__((vector_size(16)));

static inline v4f load4(const float *p)
{
	v4f v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void store4(float *p, v4f v)
{
	memcpy(p, &v, sizeof(v));
}

/* y[j] = y[j] + a * x[j], j = 0..n-1, each in float as written */
static inline void axpy(float *restrict y, const float *restrict x, float a,
			int n)
{
	v4f va = { a, a, a, a };
	int j = 0;

	for (; j + 8 <= n; j += 8) {
		v4f y0 = load4(y + j), y1 = load4(y + j + 4);
		v4f p0 = va * load4(x + j), p1 = va * load4(x + j + 4);

		store4(y + j, y0 + p0);
		store4(y + j + 4, y1 + p1);
	}
	for (; j < n; j++) {
		float p = a * x[j];

		y[j] = y[j] + p;
	}
}

/* --- exp and log with + - * / only ------------------------------------ */

static double pow2i(int k)	/* 2^k for -1022 <= k <= 1023 */
{
	uint64_t bits = (uint64_t)(k + 1023) << 52;
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

double tr_exp(double x)
{
	/* ln 2 split so that k * LN2_HI is exact for |k| < 2^11 */
	static const double LN2_HI = 6.93147180369123816490e-01;
	static const double LN2_LO = 1.90821492927058770002e-10;
	static const double INV_LN2 = 1.44269504088896338700e+00;
	double t, r, p;
	int k, n;

	if (x != x)
		return x;
	if (x > 709.0)
		return HUGE_VAL;
	if (x < -745.0)
		return 0;
	t = x * INV_LN2;
	k = (int)(t < 0 ? t - 0.5 : t + 0.5);
	r = (x - k * LN2_HI) - k * LN2_LO;	/* |r| <= 0.35 */
	/* Taylor series to r^14 / 14!, Horner from the top */
	p = 1.0;
	for (n = 14; n >= 1; n--)
		p = 1.0 + p * r / n;
	if (k < -1000) {
		p *= pow2i(-1000);
		k += 1000;
	}
	if (k > 1023) {
		p *= pow2i(1023);
		k -= 1023;
	}
	return p * pow2i(k);
}

double tr_log(double x)
{
	static const double LN2_HI = 6.93147180369123816490e-01;
	static const double LN2_LO = 1.90821492927058770002e-10;
	static const double SQRT2 = 1.41421356237309514547e+00;
	uint64_t bits;
	double m, f, s, sum, term;
	int e = 0, n;

	if (x != x || x < 0)
		return NAN;
	if (x == 0)
		return -HUGE_VAL;
	if (x > 1.7976931348623157e308)
		return x;
	if (x < 2.2250738585072014e-308) {	/* subnormal */
		x *= pow2i(54);
		e = -54;
	}
	memcpy(&bits, &x, sizeof(bits));
	e += (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ((1ull << 52) - 1)) | (1023ull << 52);
	memcpy(&m, &bits, sizeof(m));		/* 1 <= m < 2 */
	if (m > SQRT2) {
		m *= 0.5;
		e++;
	}
	/* ln m = 2 atanh(f) = 2 (f + f^3/3 + f^5/5 + ...), |f| < 0.172 */
	f = (m - 1) / (m + 1);
	s = f * f;
	sum = 0;
	term = 1;
	for (n = 0; n < 12; n++) {
		sum += term / (2 * n + 1);
		term *= s;
	}
	return e * LN2_HI + (2 * f * sum + e * LN2_LO);
}

/* --- network ------------------------------------------------------------ */

static void transpose(float *restrict dst, const float *restrict src,
		      int rows, int cols)
{
	int i, j;

	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++)
			dst[(size_t)j * rows + i] = src[(size_t)i * cols + j];
}

static void refresh_transposes(struct tr_mlp *m)
{
	int l;

	for (l = 1; l < m->nlayers; l++)
		transpose(m->wt[l], m->param + m->woff[l], m->dims[l],
			  m->dims[l + 1]);
}

int tr_mlp_init(struct tr_mlp *m, int nlayers, const int *dims, int maxbatch,
		uint64_t seed)
{
	struct incnn_rng rng;
	size_t off = 0, i, n;
	int l, maxdim = 0;

	memset(m, 0, sizeof(*m));
	if (nlayers < 1 || nlayers > TR_MAX_LAYERS || maxbatch < 1 ||
	    maxbatch > 65536)
		return -EINVAL;
	for (l = 0; l <= nlayers; l++) {
		if (dims[l] < 1 || dims[l] > TR_MAX_DIM)
			return -EINVAL;
		m->dims[l] = dims[l];
		if (dims[l] > maxdim)
			maxdim = dims[l];
	}
	m->nlayers = nlayers;
	m->maxbatch = maxbatch;
	for (l = 0; l < nlayers; l++) {
		m->woff[l] = off;
		off += (size_t)dims[l] * dims[l + 1];
		m->boff[l] = off;
		off += dims[l + 1];
	}
	m->nparams = off;
	m->param = calloc(off, sizeof(float));
	m->grad = calloc(off, sizeof(float));
	m->mom = calloc(off, sizeof(float));
	m->prob = calloc((size_t)maxbatch * dims[nlayers], sizeof(double));
	m->delta[0] = calloc((size_t)maxbatch * maxdim, sizeof(float));
	m->delta[1] = calloc((size_t)maxbatch * maxdim, sizeof(float));
	if (!m->param || !m->grad || !m->mom || !m->prob || !m->delta[0] ||
	    !m->delta[1])
		goto nomem;
	for (l = 0; l <= nlayers; l++) {
		m->act[l] = calloc((size_t)maxbatch * dims[l], sizeof(float));
		if (!m->act[l])
			goto nomem;
	}
	for (l = 1; l < nlayers; l++) {
		m->wt[l] = calloc((size_t)dims[l] * dims[l + 1], sizeof(float));
		if (!m->wt[l])
			goto nomem;
	}

	/* He uniform: U(-a, a), a = sqrt(6 / fan_in), layer by layer, row
	 * by row; sqrt is exact-rounded (IEEE 754), the rest is + and * */
	incnn_rng_seed(&rng, seed);
	for (l = 0; l < nlayers; l++) {
		double a = sqrt(6.0 / dims[l]);
		float *w = m->param + m->woff[l];

		n = (size_t)dims[l] * dims[l + 1];
		for (i = 0; i < n; i++) {
			/* 24 random bits: u in [0, 1) exactly */
			double u = (double)(incnn_rng_next(&rng) >> 40) *
				   (1.0 / 16777216.0);

			w[i] = (float)((2 * u - 1) * a);
		}
	}
	refresh_transposes(m);
	return 0;
nomem:
	tr_mlp_free(m);
	return -ENOMEM;
}

void tr_mlp_free(struct tr_mlp *m)
{
	int l;

	free(m->param);
	free(m->grad);
	free(m->mom);
	free(m->prob);
	free(m->delta[0]);
	free(m->delta[1]);
	for (l = 0; l <= TR_MAX_LAYERS; l++)
		free(m->act[l]);
	for (l = 0; l < TR_MAX_LAYERS; l++)
		free(m->wt[l]);
	memset(m, 0, sizeof(*m));
}

/* y (B x out) = x (B x in) W + bias; sums over i in increasing order */
static void fc_forward(const float *x, int B, int in, int out, const float *W,
		       const float *bias, float *y, int relu)
{
	int b, i, i0, i1;
	size_t k;

	for (b = 0; b < B; b++)
		memcpy(y + (size_t)b * out, bias, sizeof(float) * out);
	for (i0 = 0; i0 < in; i0 = i1) {
		i1 = i0 + IB < in ? i0 + IB : in;
		for (b = 0; b < B; b++) {
			const float *xb = x + (size_t)b * in;
			float *yb = y + (size_t)b * out;

			for (i = i0; i < i1; i++)
				if (xb[i] != 0)
					axpy(yb, W + (size_t)i * out, xb[i], out);
		}
	}
	if (relu)
		for (k = 0; k < (size_t)B * out; k++)
			y[k] = y[k] > 0 ? y[k] : 0;
}

double tr_mlp_forward(struct tr_mlp *m, const float *x, int B,
		      const uint8_t *labels, long *correct)
{
	int L = m->nlayers, C = m->dims[L], l, b, k;
	double total = 0;

	memcpy(m->act[0], x, sizeof(float) * (size_t)B * m->dims[0]);
	for (l = 0; l < L; l++)
		fc_forward(m->act[l], B, m->dims[l], m->dims[l + 1],
			   m->param + m->woff[l], m->param + m->boff[l],
			   m->act[l + 1], l < L - 1);

	/* softmax cross-entropy in double, classes in order */
	for (b = 0; b < B; b++) {
		const float *z = m->act[L] + (size_t)b * C;
		double *p = m->prob + (size_t)b * C;
		double mx = z[0], s = 0;
		int arg = 0;

		for (k = 1; k < C; k++) {
			if (z[k] > mx) {
				mx = z[k];
				arg = k;
			}
		}
		for (k = 0; k < C; k++) {
			p[k] = tr_exp((double)z[k] - mx);
			s += p[k];
		}
		for (k = 0; k < C; k++)
			p[k] /= s;
		total += tr_log(s) - ((double)z[labels[b]] - mx);
		if (correct && arg == labels[b])
			(*correct)++;
	}
	return total;
}

void tr_mlp_backward(struct tr_mlp *m, int B, const uint8_t *labels)
{
	int L = m->nlayers, C = m->dims[L], l, b, i, j, i0, i1, cur = 0;
	float *delta = m->delta[cur];

	memset(m->grad, 0, sizeof(float) * m->nparams);
	/* dLoss/dlogits of the batch mean: (p - onehot) / B */
	for (b = 0; b < B; b++)
		for (j = 0; j < C; j++)
			delta[(size_t)b * C + j] = (float)
				((m->prob[(size_t)b * C + j] -
				  (j == labels[b] ? 1.0 : 0.0)) / B);

	for (l = L - 1; l >= 0; l--) {
		int in = m->dims[l], out = m->dims[l + 1];
		const float *x = m->act[l];
		float *gw = m->grad + m->woff[l], *gb = m->grad + m->boff[l];

		/* bias: sum over b in order */
		for (b = 0; b < B; b++)
			for (j = 0; j < out; j++)
				gb[j] += delta[(size_t)b * out + j];
		/* gW[i][j] = sum over b in order of x[b][i] delta[b][j] */
		for (i0 = 0; i0 < in; i0 = i1) {
			i1 = i0 + IB < in ? i0 + IB : in;
			for (b = 0; b < B; b++) {
				const float *xb = x + (size_t)b * in;

				for (i = i0; i < i1; i++)
					if (xb[i] != 0)
						axpy(gw + (size_t)i * out,
						     delta + (size_t)b * out,
						     xb[i], out);
			}
		}
		if (l == 0)
			break;
		/* dx[b][i] = sum over j in order of delta[b][j] W[i][j],
		 * through ReLU: 0 where the activation was 0 */
		{
			float *dx = m->delta[cur ^ 1];
			const float *wt = m->wt[l];
			int j0, j1;

			memset(dx, 0, sizeof(float) * (size_t)B * in);
			for (j0 = 0; j0 < out; j0 = j1) {
				j1 = j0 + IB < out ? j0 + IB : out;
				for (b = 0; b < B; b++) {
					const float *db = delta + (size_t)b * out;

					for (j = j0; j < j1; j++)
						if (db[j] != 0)
							axpy(dx + (size_t)b * in,
							     wt + (size_t)j * in,
							     db[j], in);
				}
			}
			for (i = 0; i < B * in; i++)
				if (!(x[i] > 0))
					dx[i] = 0;
			cur ^= 1;
			delta = dx;
		}
	}
}

void tr_mlp_sgd(struct tr_mlp *m, float lr, float momentum, float wd)
{
	float *w = m->param, *g = m->grad, *v = m->mom;
	size_t k;

	for (k = 0; k < m->nparams; k++) {
		float d = wd * w[k];
		float gk = g[k] + d;
		float mv = momentum * v[k];

		v[k] = mv + gk;
		d = lr * v[k];
		w[k] = w[k] - d;
	}
	refresh_transposes(m);
}

uint64_t tr_mlp_digest(const struct tr_mlp *m)
{
	const unsigned char *p = (const unsigned char *)m->param;
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < m->nparams * sizeof(float); i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

void tr_mlp_arch(const struct tr_mlp *m, char *buf, size_t len)
{
	size_t used = 0;
	int l;

	buf[0] = 0;
	for (l = 0; l <= m->nlayers && used < len; l++)
		used += snprintf(buf + used, len - used, "%s%d", l ? "-" : "",
				 m->dims[l]);
}
