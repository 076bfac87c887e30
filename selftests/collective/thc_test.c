// SPDX-License-Identifier: GPL-2.0
/*
 * THC (userspace/collective/thc.c): the lookup table against the
 * committed output of scripts/gen/thc-table.py, the RHT round trip, the
 * aggregate against the decode of the exact integer sum, unbiasedness,
 * lane overflow at the largest N, AVX2 == scalar bit for bit, simulated
 * worker-aggregator and ring reduce-scatter/allgather with N = 2..8
 * (bit-identical replicas, also at scales 1e-30 and 1e30), the error
 * independent of the input scale (1e-40 .. 1e30), the all-zero bucket,
 * and the one-line parameter errors. The
 * benchmark is the tool: incnn-thc bench (docs/thc.md).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"

#include <incnn/thc.h>
#include "thc_tables.h"

/* --- helpers ---------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* roughly N(0, 1) (sum of 4 uniforms, scaled) */
static float rng_gauss(uint64_t *s)
{
	double a = 0;
	int i;

	for (i = 0; i < 4; i++)
		a += (double)(rng_next(s) >> 11) * 0x1p-53 - 0.5;
	return (float)(a * sqrt(3.0));
}

static void fill(float *x, size_t n, uint64_t seed, float scale)
{
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = rng_gauss(&seed) * scale;
}

static struct incnn_thc *mk(const struct incnn_thc_params *p)
{
	struct incnn_thc *t = NULL;
	char err[256];

	if (incnn_thc_create(&t, p, err, sizeof(err)))
		return NULL;
	return t;
}

static struct incnn_thc *mk_default(uint64_t seed, unsigned int block_log2)
{
	struct incnn_thc_params p;

	incnn_thc_params_default(&p);
	p.seed = seed;
	p.block_log2 = block_log2;
	return mk(&p);
}

static unsigned int idx_at(const uint8_t *idx, unsigned int bits, size_t i)
{
	size_t bit = i * bits;

	return (idx[bit / 8] >> (bit % 8)) & ((1u << bits) - 1);
}

/* one worker's bucket: prepare and encode; norms into lmax (max) */
struct worker {
	float *grad, *work, *norms, *ef;
	uint8_t *idx;
};

static void worker_alloc(struct worker *w, const struct incnn_thc *t, size_t n)
{
	size_t np = incnn_thc_padded(t, n);

	w->grad = calloc(n, sizeof(float));
	w->work = calloc(np, sizeof(float));
	w->norms = calloc(incnn_thc_nblocks(t, n), sizeof(float));
	w->ef = calloc(n, sizeof(float));
	w->idx = calloc(incnn_thc_idx_bytes(t, n) + 1, 1);
}

static void worker_free(struct worker *w)
{
	free(w->grad);
	free(w->work);
	free(w->norms);
	free(w->ef);
	free(w->idx);
}

/* N workers' preliminary stage and encode; returns 0 or the error */
static int workers_encode(const struct incnn_thc *t, struct worker *w,
			  unsigned int N, size_t n, uint64_t nonce, float *lmax)
{
	size_t nb = incnn_thc_nblocks(t, n), k;
	unsigned int r;
	int rc;

	for (k = 0; k < nb; k++)
		lmax[k] = 0;
	for (r = 0; r < N; r++) {
		rc = incnn_thc_prepare(t, w[r].grad, NULL, n, nonce, w[r].work,
				       w[r].norms);
		if (rc)
			return rc;
		for (k = 0; k < nb; k++)
			lmax[k] = fmaxf(lmax[k], w[r].norms[k]);
	}
	for (r = 0; r < N; r++) {
		rc = incnn_thc_encode(t, w[r].work, n, lmax, nonce, r, w[r].idx);
		if (rc)
			return rc;
	}
	return 0;
}

/* --- the lookup table ---------------------------------------------- */

TEST(table_matches_generator)
{
	static const uint8_t def[16] = { 0, 3, 5, 7, 9, 11, 13, 14, 15, 17,
					 19, 21, 23, 25, 27, 30 };
	struct incnn_thc_params p;
	struct incnn_thc *t;
	size_t i;

	incnn_thc_params_default(&p);
	t = mk(&p);
	ASSERT_NE(NULL, t);
	/* the paper's prototype: b = 4, g = 30, p = 1/32 */
	ASSERT_EQ(0, memcmp(def, incnn_thc_table(t), 16));
	ASSERT_TRUE(fabs(incnn_thc_tp(t) - 2.1538746940614564) < 1e-12);
	incnn_thc_destroy(t);
	/* t_p at the ends of the range (as scripts/gen/thc-table.py) */
	p.p = 0.5;
	t = mk(&p);
	ASSERT_NE(NULL, t);
	ASSERT_TRUE(fabs(incnn_thc_tp(t) - 0.67448975019608159) < 1e-12);
	incnn_thc_destroy(t);
	p.p = 1e-9;
	t = mk(&p);
	ASSERT_NE(NULL, t);
	ASSERT_TRUE(fabs(incnn_thc_tp(t) - 6.1094102048693983) < 1e-12);
	incnn_thc_destroy(t);
	for (i = 0; i < sizeof(thc_ref_tables) / sizeof(thc_ref_tables[0]); i++) {
		const struct thc_ref_table *r = &thc_ref_tables[i];

		p.bits = r->bits;
		p.gran = r->gran;
		p.p = r->p;
		t = mk(&p);
		ASSERT_NE(NULL, t);
		EXPECT_EQ(0, memcmp(r->t, incnn_thc_table(t), 1u << r->bits))
			TH_LOG("b=%u g=%u p=%g", r->bits, r->gran, r->p);
		incnn_thc_destroy(t);
	}
}

/* --- the RHT ---------------------------------------------------------- */

static void rht_roundtrip(struct __test_metadata *_metadata, bool simd)
{
	static const size_t ns[] = { 1, 15, 16, 17, 100, 1000, 4096, 4097,
				     10000, 70000 };
	struct incnn_thc *t = mk_default(7, 12);
	size_t j, i;

	ASSERT_NE(NULL, t);
	if (simd && !incnn_thc_set_simd(t, true))
		SKIP(incnn_thc_destroy(t); return, "no AVX2");
	incnn_thc_set_simd(t, simd);
	for (j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
		size_t n = ns[j], np = incnn_thc_padded(t, n);
		float *x = calloc(np, sizeof(float)), *y = calloc(np, sizeof(float));
		double e2 = 0, x2 = 0, y2 = 0;

		fill(x, n, 100 + j, 3.0f);
		memcpy(y, x, np * sizeof(float));
		ASSERT_EQ(0, incnn_thc_rht(t, y, n, 42));
		for (i = 0; i < np; i++)
			y2 += (double)y[i] * y[i];
		ASSERT_EQ(0, incnn_thc_rht_inverse(t, y, n, 42));
		for (i = 0; i < np; i++) {
			e2 += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
			x2 += (double)x[i] * x[i];
		}
		/*
		 * ||H D x|| = sqrt(B) ||x|| per block (B <= 4096 here), and
		 * the round trip's normwise error is at most about
		 * 2 log2(B) fp32 roundings: <= 24 * 2^-24 * 2 (margin)
		 */
		EXPECT_TRUE(fabs(y2 / x2 - (n >= 4096 ? 4096 :
			   (double)incnn_thc_padded(t, n))) <
			   1e-4 * y2 / x2 || n > 4096)
			TH_LOG("n=%zu norm ratio %g", n, y2 / x2);
		EXPECT_TRUE(sqrt(e2) <= 48 * 0x1p-24 * sqrt(x2))
			TH_LOG("n=%zu: ||err|| %g ||x|| %g", n, sqrt(e2), sqrt(x2));
		free(x);
		free(y);
	}
	incnn_thc_destroy(t);
}

TEST(rht_inverse_identity_scalar)
{
	rht_roundtrip(_metadata, false);
}

TEST(rht_inverse_identity_avx2)
{
	rht_roundtrip(_metadata, true);
}

/* --- aggregate == decode of the exact integer sum --------------------- */

static void aggregate_equals_decode_of_integer_sum_body(struct __test_metadata *_metadata,
							bool simd)
{
	const unsigned int N = 4;
	const size_t n = 5000;
	struct incnn_thc *t = mk_default(11, 12);
	size_t np, nb, i;
	struct worker w[4];
	uint8_t *acc;
	uint32_t *sum;
	float *lmax, *a, *b, *one, *avg;
	double e2 = 0, d2 = 0;
	unsigned int r;

	ASSERT_NE(NULL, t);
	if (simd && !incnn_thc_set_simd(t, true))
		SKIP(incnn_thc_destroy(t); return, "no AVX2");
	incnn_thc_set_simd(t, simd);
	np = incnn_thc_padded(t, n);
	nb = incnn_thc_nblocks(t, n);
	ASSERT_EQ((size_t)4096 + 1024, np);
	ASSERT_EQ((size_t)2, nb);
	lmax = calloc(nb, sizeof(float));
	acc = calloc(np, 1);
	sum = calloc(np, 4);
	a = calloc(np, 4);
	b = calloc(np, 4);
	one = calloc(np, 4);
	avg = calloc(np, sizeof(float));
	for (r = 0; r < N; r++) {
		worker_alloc(&w[r], t, n);
		fill(w[r].grad, n, 1000 + r, 0.01f * (r + 1));
	}
	ASSERT_EQ(0, workers_encode(t, w, N, n, 5, lmax));
	/* the aggregator: 8-bit lanes (4 * 30 <= 255) */
	ASSERT_EQ(8, incnn_thc_lane_bits(t, N, NULL, 0));
	ASSERT_EQ(0, incnn_thc_add_idx(t, acc, 8, NULL, 0, 0, w[0].idx, np));
	for (r = 1; r < N; r++)
		ASSERT_EQ(0, incnn_thc_add_idx(t, acc, 8, acc, 8, r, w[r].idx, np));
	/* the exact sum, here: table lookups by hand, 32-bit */
	for (i = 0; i < np; i++)
		for (r = 0; r < N; r++)
			sum[i] += incnn_thc_table(t)[idx_at(w[r].idx, 4, i)];
	for (i = 0; i < np; i++)
		ASSERT_EQ(sum[i], acc[i]);
	ASSERT_EQ(0, incnn_thc_decode(t, a, n, acc, 8, N, lmax, 5));
	ASSERT_EQ(0, incnn_thc_decode(t, b, n, sum, 32, N, lmax, 5));
	ASSERT_EQ(0, memcmp(a, b, np * 4));
	/*
	 * the decode formula, independently: v = M (2 Y / (g N) - 1) per
	 * block (M = t_p l), in double, then the inverse RHT
	 */
	for (i = 0; i < np; i++) {
		double m = (float)(incnn_thc_tp(t) * lmax[i >> 12]);

		one[i] = (float)(m * (2.0 * sum[i] / (30.0 * N) - 1));
	}
	ASSERT_EQ(0, incnn_thc_rht_inverse(t, one, n, 5));
	for (i = 0; i < np; i++) {
		e2 += ((double)one[i] - a[i]) * ((double)one[i] - a[i]);
		d2 += (double)a[i] * a[i];
	}
	EXPECT_TRUE(sqrt(e2) <= 1e-6 * sqrt(d2))
		TH_LOG("formula: ||err|| %g ||dec|| %g", sqrt(e2), sqrt(d2));
	e2 = d2 = 0;
	/* homomorphic: the average of the single decodes, to fp32 rounding */
	for (r = 0; r < N; r++) {
		uint8_t *l1 = calloc(np, 1);

		ASSERT_EQ(0, incnn_thc_add_idx(t, l1, 8, NULL, 0, 0, w[r].idx, np));
		ASSERT_EQ(0, incnn_thc_decode(t, one, n, l1, 8, 1, lmax, 5));
		for (i = 0; i < n; i++)
			avg[i] += one[i] / N;
		free(l1);
	}
	for (i = 0; i < n; i++) {
		e2 += ((double)avg[i] - a[i]) * ((double)avg[i] - a[i]);
		d2 += (double)a[i] * a[i];
	}
	EXPECT_TRUE(sqrt(e2) <= 1e-5 * sqrt(d2))
		TH_LOG("||avg - dec|| %g ||dec|| %g", sqrt(e2), sqrt(d2));
	for (r = 0; r < N; r++)
		worker_free(&w[r]);
	free(lmax);
	free(acc);
	free(sum);
	free(a);
	free(b);
	free(one);
	free(avg);
	incnn_thc_destroy(t);
}

TEST(aggregate_equals_decode_of_integer_sum_scalar)
{
	aggregate_equals_decode_of_integer_sum_body(_metadata, false);
}

TEST(aggregate_equals_decode_of_integer_sum_avx2)
{
	aggregate_equals_decode_of_integer_sum_body(_metadata, true);
}

/* --- unbiasedness ----------------------------------------------------- */

/*
 * One block of 256, x fixed, l = 4 ||x|| so that nothing is truncated
 * (asserted), K = 4000 encodes with different random streams (rank =
 * trial), each decoded alone. Per coordinate z = (mean - x) / (sd /
 * sqrt(K)): an unbiased estimator gives z ~ N(0, 1): require max |z| < 5
 * (P(fail) ~ 256 * 6e-7) and mean z^2 in [0.7, 1.3] (~3.4 sigma).
 * Rounding always down or up fails by hundreds of sigma.
 */
static void estimator_unbiased_body(struct __test_metadata *_metadata,
				    bool simd)
{
	const size_t n = 256;
	const unsigned int K = 4000;
	struct incnn_thc *t = mk_default(3, 8);
	double s1[256] = { 0 }, s2[256] = { 0 }, zmax = 0, z2 = 0;
	float x[256], work[256], norm, lmax, out[256];
	uint8_t idx[128], lane[256];
	unsigned int k;
	size_t i;

	ASSERT_NE(NULL, t);
	if (simd && !incnn_thc_set_simd(t, true))
		SKIP(incnn_thc_destroy(t); return, "no AVX2");
	incnn_thc_set_simd(t, simd);
	fill(x, n, 77, 1.0f);
	ASSERT_EQ(0, incnn_thc_prepare(t, x, NULL, n, 9, work, &norm));
	lmax = 4 * norm;
	for (i = 0; i < n; i++)
		ASSERT_TRUE(fabsf(work[i]) < incnn_thc_tp(t) * lmax);
	for (k = 0; k < K; k++) {
		ASSERT_EQ(0, incnn_thc_encode(t, work, n, &lmax, 9, k, idx));
		ASSERT_EQ(0, incnn_thc_add_idx(t, lane, 8, NULL, 0, 0, idx, n));
		ASSERT_EQ(0, incnn_thc_decode(t, out, n, lane, 8, 1, &lmax, 9));
		for (i = 0; i < n; i++) {
			s1[i] += out[i];
			s2[i] += (double)out[i] * out[i];
		}
	}
	for (i = 0; i < n; i++) {
		double m = s1[i] / K, v = s2[i] / K - m * m;
		double z = (m - x[i]) / sqrt(v / K);

		zmax = fmax(zmax, fabs(z));
		z2 += z * z / n;
	}
	TH_LOG("max |z| %.3f, mean z^2 %.3f", zmax, z2);
	EXPECT_TRUE(zmax < 5);
	EXPECT_TRUE(z2 > 0.7 && z2 < 1.3);
	incnn_thc_destroy(t);
}

TEST(estimator_unbiased_scalar)
{
	estimator_unbiased_body(_metadata, false);
}

TEST(estimator_unbiased_avx2)
{
	estimator_unbiased_body(_metadata, true);
}

/* --- lane overflow ---------------------------------------------------- */

static void no_lane_overflow_at_max_n_body(struct __test_metadata *_metadata,
					   bool simd)
{
	struct incnn_thc *t = mk_default(5, 12);
	const size_t n = 4096;
	uint8_t *idx = malloc(n / 2), *acc8 = calloc(n, 1);
	uint16_t *acc16 = calloc(n, 2);
	uint32_t *acc32 = calloc(n, 4);
	float *out = calloc(n, 4), lmax = 0.01f;
	struct worker w;
	unsigned int r;
	size_t i;

	ASSERT_NE(NULL, t);
	if (simd && !incnn_thc_set_simd(t, true))
		SKIP(incnn_thc_destroy(t); free(idx); free(acc8); free(acc16);
		     free(acc32); free(out); return, "no AVX2");
	incnn_thc_set_simd(t, simd);
	/* g = 30: 8 bits for N <= 8, 16 for <= 2184, 32 for <= 71582788 */
	ASSERT_EQ(8, incnn_thc_lane_bits(t, 8, NULL, 0));
	ASSERT_EQ(16, incnn_thc_lane_bits(t, 9, NULL, 0));
	ASSERT_EQ(16, incnn_thc_lane_bits(t, 2184, NULL, 0));
	ASSERT_EQ(32, incnn_thc_lane_bits(t, 2185, NULL, 0));
	ASSERT_EQ(32, incnn_thc_lane_bits(t, 71582788, NULL, 0));
	ASSERT_EQ(-ERANGE, incnn_thc_lane_bits(t, 71582789, NULL, 0));
	/*
	 * the worst case through the encoder: a spike, so that y = H D x is
	 * one value everywhere, of the sign that clamps every coordinate to
	 * +t_p (l far below ||x||): every index is 15, T = g = 30
	 */
	worker_alloc(&w, t, n);
	w.grad[0] = 1;
	ASSERT_EQ(0, incnn_thc_prepare(t, w.grad, NULL, n, 1, w.work, w.norms));
	if (w.work[0] < 0) {
		w.grad[0] = -1;
		ASSERT_EQ(0, incnn_thc_prepare(t, w.grad, NULL, n, 1, w.work,
					       w.norms));
	}
	ASSERT_EQ(0, incnn_thc_encode(t, w.work, n, &lmax, 1, 0, w.idx));
	for (i = 0; i < n / 2; i++)
		ASSERT_EQ(0xff, w.idx[i]);
	memcpy(idx, w.idx, n / 2);
	ASSERT_EQ(0, incnn_thc_add_idx(t, acc8, 8, NULL, 0, 0, idx, n));
	for (r = 1; r < 8; r++)
		ASSERT_EQ(0, incnn_thc_add_idx(t, acc8, 8, acc8, 8, r, idx, n));
	for (i = 0; i < n; i++)
		ASSERT_EQ(240, acc8[i]);
	ASSERT_EQ(0, incnn_thc_decode(t, out, n, acc8, 8, 8, &lmax, 1));
	/* a ninth worker does not fit 8 bits: refused, not wrapped */
	ASSERT_EQ(-ERANGE, incnn_thc_add_idx(t, acc8, 8, acc8, 8, 8, idx, n));
	ASSERT_EQ(-ERANGE, incnn_thc_decode(t, out, n, acc8, 8, 9, &lmax, 1));
	/* widened on the way: 16 bits up to 2184 workers */
	ASSERT_EQ(0, incnn_thc_add_idx(t, acc16, 16, acc8, 8, 8, idx, n));
	for (r = 9; r < 2184; r++)
		ASSERT_EQ(0, incnn_thc_add_idx(t, acc16, 16, acc16, 16, r, idx, n));
	for (i = 0; i < n; i++)
		ASSERT_EQ(65520, acc16[i]);
	ASSERT_EQ(-ERANGE, incnn_thc_add_idx(t, acc16, 16, acc16, 16, 2184,
					     idx, n));
	ASSERT_EQ(0, incnn_thc_add_idx(t, acc32, 32, acc16, 16, 2184, idx, n));
	for (i = 0; i < n; i++)
		ASSERT_EQ(65550u, acc32[i]);
	/* a lane above its worker count (corrupt input) is refused */
	acc8[77] = 241;
	ASSERT_EQ(-EBADMSG, incnn_thc_add_idx(t, acc16, 16, acc8, 8, 8, idx, n));
	ASSERT_EQ(-EBADMSG, incnn_thc_decode(t, out, n, acc8, 8, 8, &lmax, 1));
	acc32[5] = 0x80000000u;
	ASSERT_EQ(-EBADMSG, incnn_thc_decode(t, out, n, acc32, 32, 2185, &lmax, 1));
	worker_free(&w);
	free(idx);
	free(acc8);
	free(acc16);
	free(acc32);
	free(out);
	incnn_thc_destroy(t);
}

TEST(no_lane_overflow_at_max_n_scalar)
{
	no_lane_overflow_at_max_n_body(_metadata, false);
}

TEST(no_lane_overflow_at_max_n_avx2)
{
	no_lane_overflow_at_max_n_body(_metadata, true);
}

/* --- AVX2 == scalar --------------------------------------------------- */

/* every kernel on both contexts; the outputs compared byte for byte */
static void simd_case(struct __test_metadata *_metadata, struct incnn_thc *ts,
		      struct incnn_thc *tv, size_t n, uint64_t seed)
{
	size_t np = incnn_thc_padded(ts, n), nb = incnn_thc_nblocks(ts, n);
	size_t ib = incnn_thc_idx_bytes(ts, n), k;
	float *g = malloc(n * 4), *ef = malloc(n * 4), *w[2], *nr[2], *lm;
	float *o[2], *efo[2];
	uint8_t *idx[2], *l8[2];
	uint16_t *l16[2];
	uint32_t *l32[2];
	int v, rc[2];

	fill(g, n, seed, 0.5f);
	fill(ef, n, seed + 1, 0.01f);
	lm = malloc(nb * 4);
	for (v = 0; v < 2; v++) {
		struct incnn_thc *t = v ? tv : ts;

		w[v] = malloc(np * 4);
		nr[v] = malloc(nb * 4);
		o[v] = malloc(np * 4);
		efo[v] = malloc(n * 4);
		idx[v] = malloc(ib);
		l8[v] = malloc(np);
		l16[v] = malloc(np * 2);
		l32[v] = malloc(np * 4);
		ASSERT_EQ(0, incnn_thc_prepare(t, g, ef, n, seed, w[v], nr[v]));
		for (k = 0; k < nb; k++)	/* some truncation, one empty block */
			lm[k] = k == 1 ? 0 : nr[0][k] * (k % 2 ? 0.3f : 1.2f);
		ASSERT_EQ(0, incnn_thc_encode(t, w[v], n, lm, seed, 3, idx[v]));
		ASSERT_EQ(0, incnn_thc_ef_update(t, efo[v], n, w[v], idx[v], lm,
						 seed, o[v]));
		ASSERT_EQ(0, incnn_thc_add_idx2(t, l8[v], 8, idx[v], idx[v], np));
		ASSERT_EQ(0, incnn_thc_add_idx(t, l8[v], 8, l8[v], 8, 2, idx[v], np));
		ASSERT_EQ(0, incnn_thc_add_idx(t, l16[v], 16, l8[v], 8, 3, idx[v], np));
		ASSERT_EQ(0, incnn_thc_add_idx(t, l16[v], 16, l16[v], 16, 4, idx[v], np));
		ASSERT_EQ(0, incnn_thc_add_idx(t, l32[v], 32, l16[v], 16, 5, idx[v], np));
		ASSERT_EQ(0, incnn_thc_add_idx(t, l32[v], 32, l32[v], 32, 6, idx[v], np));
		ASSERT_EQ(0, incnn_thc_add_idx(t, l32[v], 32, l8[v], 8, 3, idx[v], np));
		ASSERT_EQ(0, incnn_thc_decode(t, o[v], n, l32[v], 32, 4, lm, seed));
		/* a corrupt lane: the same error from both */
		l8[v][np - 1] = 91;
		rc[v] = incnn_thc_add_idx(t, l16[v], 16, l8[v], 8, 3, idx[v], np);
	}
	EXPECT_EQ(0, memcmp(w[0], w[1], np * 4)) TH_LOG("n=%zu work", n);
	EXPECT_EQ(0, memcmp(nr[0], nr[1], nb * 4)) TH_LOG("n=%zu norms", n);
	EXPECT_EQ(0, memcmp(idx[0], idx[1], ib)) TH_LOG("n=%zu idx", n);
	EXPECT_EQ(0, memcmp(efo[0], efo[1], n * 4)) TH_LOG("n=%zu ef", n);
	EXPECT_EQ(0, memcmp(l8[0], l8[1], np)) TH_LOG("n=%zu l8", n);
	EXPECT_EQ(0, memcmp(l32[0], l32[1], np * 4)) TH_LOG("n=%zu l32", n);
	EXPECT_EQ(0, memcmp(o[0], o[1], np * 4)) TH_LOG("n=%zu decode", n);
	EXPECT_EQ(-EBADMSG, rc[0]);
	EXPECT_EQ(rc[0], rc[1]);
	for (v = 0; v < 2; v++) {
		free(w[v]);
		free(nr[v]);
		free(o[v]);
		free(efo[v]);
		free(idx[v]);
		free(l8[v]);
		free(l16[v]);
		free(l32[v]);
	}
	free(g);
	free(ef);
	free(lm);
}

TEST(avx2_equals_scalar)
{
	static const unsigned int blocks[] = { 4, 5, 12, 16 };
	uint64_t s = 99;
	size_t j, n;

	for (j = 0; j < sizeof(blocks) / sizeof(blocks[0]); j++) {
		struct incnn_thc *ts = mk_default(j + 1, blocks[j]);
		struct incnn_thc *tv = mk_default(j + 1, blocks[j]);
		size_t bs = (size_t)1 << blocks[j];

		ASSERT_NE(NULL, ts);
		ASSERT_NE(NULL, tv);
		incnn_thc_set_simd(ts, false);
		if (!incnn_thc_set_simd(tv, true)) {
			incnn_thc_destroy(ts);
			incnn_thc_destroy(tv);
			SKIP(return, "no AVX2");
		}
		for (n = 1; n <= 80; n++)
			simd_case(_metadata, ts, tv, n, n);
		simd_case(_metadata, ts, tv, bs - 1, 1);
		simd_case(_metadata, ts, tv, bs, 2);
		simd_case(_metadata, ts, tv, bs + 1, 3);
		simd_case(_metadata, ts, tv, 3 * bs + 17, 4);
		for (n = 0; n < 12; n++)
			simd_case(_metadata, ts, tv, 1 + rng_next(&s) % 40000,
				  5 + n);
		incnn_thc_destroy(ts);
		incnn_thc_destroy(tv);
	}
}

/* --- tiny and huge scales ------------------------------------------- */

/*
 * N workers (Gaussian, scale sc, n floats, B = 4096 and 16): decode of the
 * exact integer sum (32-bit lanes) into out; its error against the true
 * average, relative to the average's norm, or -1 on an error code.
 */
static double scale_case(const struct incnn_thc *t, unsigned int N, size_t n,
			 float sc, float *out, float *ef, double *ef_rel)
{
	size_t np = incnn_thc_padded(t, n), nb = incnn_thc_nblocks(t, n), i;
	float *lmax = calloc(nb, sizeof(float));
	uint32_t *sum = calloc(np, 4);
	struct worker w[8];
	double e2 = 0, d2 = 0, avg;
	unsigned int r;
	int rc;

	for (r = 0; r < N; r++) {
		worker_alloc(&w[r], t, n);
		fill(w[r].grad, n, 700 + r, sc);
	}
	rc = workers_encode(t, w, N, n, 9, lmax);
	for (r = 0; !rc && r < N; r++)
		rc = incnn_thc_add_idx(t, sum, 32, r ? sum : NULL, 32, r,
				       w[r].idx, np);
	if (!rc)
		rc = incnn_thc_decode(t, out, n, sum, 32, N, lmax, 9);
	/* worker 0's error feedback: x - its own decode */
	if (!rc)
		rc = incnn_thc_ef_update(t, w[0].ef, n, w[0].work, w[0].idx,
					 lmax, 9, ef);
	for (i = 0; !rc && i < n; i++) {
		e2 += (double)w[0].ef[i] * w[0].ef[i];
		d2 += (double)w[0].grad[i] * w[0].grad[i];
	}
	*ef_rel = rc ? -1 : sqrt(e2) / sqrt(d2);
	e2 = d2 = 0;
	for (i = 0; !rc && i < n; i++) {
		for (avg = 0, r = 0; r < N; r++)
			avg += (double)w[r].grad[i] / N;
		e2 += (out[i] - avg) * (out[i] - avg);
		d2 += avg * avg;
	}
	for (r = 0; r < N; r++)
		worker_free(&w[r]);
	free(lmax);
	free(sum);
	return rc ? -1 : sqrt(e2) / sqrt(d2);
}

/*
 * The error relative to the input does not depend on the input's scale,
 * 1e-40 .. 1e30 (squares and quantisation steps below FLT_MIN on the way;
 * below 1e-37 the inputs themselves are subnormal),
 * and the AVX2 path decodes the same floats as the scalar one at every
 * scale. The same inputs times a power of two must give the reference
 * error within 10% (a power of two only moves the exponents).
 */
TEST(error_independent_of_scale)
{
	static const unsigned int Ns[] = { 2, 8 }, blocks[] = { 12, 4 };
	size_t n = 5000, j, b;
	int e;

	for (b = 0; b < 2; b++) {
		struct incnn_thc *ts = mk_default(3, blocks[b]);
		struct incnn_thc *tv = mk_default(3, blocks[b]);
		size_t np = incnn_thc_padded(ts, n);
		float *o1 = calloc(np, 4), *o2 = calloc(np, 4);
		float *f1 = calloc(np, 4), *f2 = calloc(np, 4);
		double fref, f;
		bool simd;

		ASSERT_NE(NULL, ts);
		ASSERT_NE(NULL, tv);
		incnn_thc_set_simd(ts, false);
		simd = incnn_thc_set_simd(tv, true);
		for (j = 0; j < 2; j++) {
			double ref = scale_case(ts, Ns[j], n, 1.0f, o1, f1, &fref);

			ASSERT_TRUE(ref > 0 && ref < 0.5);
			ASSERT_TRUE(fref > 0 && fref < 0.5);
			for (e = -40; e <= 30; e++) {
				float sc = (float)pow(10.0, e);
				double r1 = scale_case(ts, Ns[j], n, sc, o1, f1, &f);

				EXPECT_TRUE(r1 >= 0 && r1 <= 1.1 * ref)
					TH_LOG("B 2^%u N %u scale 1e%d: relative error %g, at 1: %g",
					       blocks[b], Ns[j], e, r1, ref);
				EXPECT_TRUE(f >= 0 && f <= 1.1 * fref)
					TH_LOG("B 2^%u N %u scale 1e%d: relative ef %g, at 1: %g",
					       blocks[b], Ns[j], e, f, fref);
				if (simd) {
					scale_case(tv, Ns[j], n, sc, o2, f2, &f);
					EXPECT_EQ(0, memcmp(o1, o2, np * 4))
						TH_LOG("scale 1e%d: AVX2 != scalar", e);
					EXPECT_EQ(0, memcmp(f1, f2, n * 4))
						TH_LOG("scale 1e%d: ef AVX2 != scalar", e);
				}
			}
		}
		free(o1);
		free(o2);
		free(f1);
		free(f2);
		incnn_thc_destroy(ts);
		incnn_thc_destroy(tv);
	}
}

/* every rank's bucket all zero: norms 0, indices 0, the decode exact zeros */
TEST(all_zero_bucket_is_exact_zeros)
{
	const size_t n = 5000;
	struct incnn_thc *t = mk_default(4, 12);
	size_t np, nb, i;
	struct worker w[3];
	uint32_t *sum;
	float *lmax, *out;
	unsigned int r;

	ASSERT_NE(NULL, t);
	np = incnn_thc_padded(t, n);
	nb = incnn_thc_nblocks(t, n);
	lmax = calloc(nb, 4);
	sum = calloc(np, 4);
	out = malloc(np * 4);
	for (r = 0; r < 3; r++)
		worker_alloc(&w[r], t, n);
	ASSERT_EQ(0, workers_encode(t, w, 3, n, 1, lmax));
	for (i = 0; i < nb; i++)
		ASSERT_EQ(0.0f, lmax[i]);
	for (r = 0; r < 3; r++) {
		for (i = 0; i < incnn_thc_idx_bytes(t, n); i++)
			ASSERT_EQ(0, w[r].idx[i]);
		ASSERT_EQ(0, incnn_thc_add_idx(t, sum, 32, r ? sum : NULL, 32,
					       r, w[r].idx, np));
	}
	ASSERT_EQ(0, incnn_thc_decode(t, out, n, sum, 32, 3, lmax, 1));
	for (i = 0; i < n; i++)
		ASSERT_EQ(0.0f, out[i]);
	for (r = 0; r < 3; r++)
		worker_free(&w[r]);
	free(lmax);
	free(sum);
	free(out);
	incnn_thc_destroy(t);
}

/* --- replicas: worker-aggregator and ring, N = 2..8 ------------------- */

/* the ring, simulated: every message copied out at its wire width */
static void ring_sim(struct __test_metadata *_metadata,
		     const struct incnn_thc *t, struct worker *w,
		     unsigned int N, size_t n, void **full)
{
	size_t np = incnn_thc_padded(t, n);
	void **part = calloc(N, sizeof(void *));
	unsigned int r, s;

	for (r = 0; r < N; r++) {
		part[r] = calloc(np, 4);	/* partial sums, per chunk */
		full[r] = calloc(np, 4);
	}
	for (s = 0; s + 1 < N; s++) {
		int wb = incnn_thc_ring_bits(t, N, s);
		int ob = incnn_thc_ring_bits(t, N, s + 1);

		ASSERT_TRUE(wb > 0 && ob >= wb);
		for (r = 0; r < N; r++) {
			unsigned int to = (r + 1) % N, c = (r + N - s) % N;
			size_t off, len, bytes;
			uint8_t *msg, *dst;

			incnn_thc_ring_chunk(t, n, N, c, &off, &len);
			bytes = len * wb / 8;
			msg = malloc(bytes + 1);
			if (s == 0)
				memcpy(msg, w[r].idx + off * 4 / 8, bytes);
			else
				memcpy(msg, (uint8_t *)part[r] + off * wb / 8, bytes);
			dst = (uint8_t *)part[to] + off * ob / 8;
			if (s == 0) {
				ASSERT_EQ(0, incnn_thc_add_idx2(t, dst, ob, msg,
						w[to].idx + off * 4 / 8, len));
			} else {
				ASSERT_EQ(0, incnn_thc_add_idx(t, dst, ob, msg, wb,
						s + 1, w[to].idx + off * 4 / 8, len));
			}
			free(msg);
		}
	}
	/* rank r owns chunk r + 1: allgather in lanes for N */
	{
		int lb = incnn_thc_lane_bits(t, N, NULL, 0);

		for (r = 0; r < N; r++) {
			unsigned int c = (r + 1) % N, q;
			size_t off, len;

			incnn_thc_ring_chunk(t, n, N, c, &off, &len);
			for (q = 0; q < N; q++)	/* N - 1 hops, same bytes */
				memcpy((uint8_t *)full[q] + off * lb / 8,
				       (uint8_t *)part[r] + off * lb / 8,
				       len * lb / 8);
		}
	}
	for (r = 0; r < N; r++)
		free(part[r]);
	free(part);
}

static void replicas_identical_ps_and_ring_body(struct __test_metadata *_metadata,
						bool simd)
{
	/* 1e-30: tiny blocks (scaled quantisation and decode); 1e30 */
	static const float scales[] = { 1.0f, 1e-30f, 1e30f };
	const size_t n = 3001;
	struct incnn_thc *t = mk_default(21, 10);
	unsigned int N, r, si;

	ASSERT_NE(NULL, t);
	if (simd && !incnn_thc_set_simd(t, true))
		SKIP(incnn_thc_destroy(t); return, "no AVX2");
	incnn_thc_set_simd(t, simd);
	for (si = 0; si < 3; si++)
	for (N = 2; N <= 8; N++) {
		size_t np = incnn_thc_padded(t, n), nb = incnn_thc_nblocks(t, n);
		int lb = incnn_thc_lane_bits(t, N, NULL, 0);
		struct worker w[8];
		void *full[8];
		float *lmax = calloc(nb, 4), *ref = calloc(np, 4);
		float *out = calloc(np, 4);
		uint8_t *acc = calloc(np, 4), *bcast = malloc(np * 4);

		ASSERT_EQ(8, lb);
		for (r = 0; r < N; r++) {
			worker_alloc(&w[r], t, n);
			fill(w[r].grad, n, 50 * N + r, (1.0f + r) * scales[si]);
		}
		ASSERT_EQ(0, workers_encode(t, w, N, n, N, lmax));
		/* worker-aggregator: rank 0 sums, broadcasts lanes for N */
		ASSERT_EQ(0, incnn_thc_add_idx(t, acc, lb, NULL, 0, 0, w[0].idx, np));
		for (r = 1; r < N; r++)
			ASSERT_EQ(0, incnn_thc_add_idx(t, acc, lb, acc, lb, r,
						       w[r].idx, np));
		memcpy(bcast, acc, np * lb / 8);
		ASSERT_EQ(0, incnn_thc_decode(t, ref, n, bcast, lb, N, lmax, N));
		ring_sim(_metadata, t, w, N, n, full);
		for (r = 0; r < N; r++) {
			/* the ring's sums are the aggregator's, so the floats */
			EXPECT_EQ(0, memcmp(full[r], acc, np * lb / 8))
				TH_LOG("N=%u rank %u lanes", N, r);
			ASSERT_EQ(0, incnn_thc_decode(t, out, n, full[r], lb, N,
						      lmax, N));
			EXPECT_EQ(0, memcmp(out, ref, n * 4))
				TH_LOG("N=%u rank %u decode", N, r);
			free(full[r]);
			worker_free(&w[r]);
		}
		free(lmax);
		free(ref);
		free(out);
		free(acc);
		free(bcast);
	}
	incnn_thc_destroy(t);
}

TEST(replicas_identical_ps_and_ring_scalar)
{
	replicas_identical_ps_and_ring_body(_metadata, false);
}

TEST(replicas_identical_ps_and_ring_avx2)
{
	replicas_identical_ps_and_ring_body(_metadata, true);
}

/* --- bad parameters ---------------------------------------------------- */

static int check_err(struct incnn_thc_params *p, const char *want)
{
	struct incnn_thc *t = NULL;
	char err[256] = "";
	int rc = incnn_thc_create(&t, p, err, sizeof(err));

	if (rc != -EINVAL || t || !strstr(err, want) || strchr(err, '\n') ||
	    strncmp(err, "thc: ", 5)) {
		fprintf(stderr, "# want -EINVAL and \"%s\", got %d \"%s\"\n",
			want, rc, err);
		return -1;
	}
	fprintf(stderr, "# %s\n", err);
	incnn_thc_params_default(p);
	return 0;
}

TEST(bad_parameters_one_line_errors)
{
	struct incnn_thc_params p;
	struct incnn_thc *t;
	char err[256] = "";
	float x[16] = { 0 }, w[16], nr, lm;
	uint8_t idx[8] = { 0 }, l8[16];

	incnn_thc_params_default(&p);
	p.bits = 3;
	ASSERT_EQ(0, check_err(&p, "bits 3: must be 1, 2, 4 or 8"));
	p.gran = 14;
	ASSERT_EQ(0, check_err(&p, "granularity 14: must be in [2^bits - 1, 255] = [15, 255]"));
	p.gran = 256;
	ASSERT_EQ(0, check_err(&p, "granularity 256: must be in"));
	p.bits = 8;
	p.gran = 30;
	ASSERT_EQ(0, check_err(&p, "[255, 255]"));
	p.p = 0;
	ASSERT_EQ(0, check_err(&p, "p 0: must be in [1e-9, 0.5]"));
	p.p = 0.6;
	ASSERT_EQ(0, check_err(&p, "p 0.6: must be in"));
	p.p = NAN;
	ASSERT_EQ(0, check_err(&p, "must be in [1e-9, 0.5]"));
	p.block_log2 = 3;
	ASSERT_EQ(0, check_err(&p, "block_log2 3: must be in [4, 16]"));
	p.block_log2 = 17;
	ASSERT_EQ(0, check_err(&p, "block_log2 17: must be in [4, 16]"));
	t = mk(&p);
	ASSERT_NE(NULL, t);
	ASSERT_EQ(-EINVAL, incnn_thc_lane_bits(t, 0, err, sizeof(err)));
	ASSERT_EQ(-ERANGE, incnn_thc_lane_bits(t, 100000000, err, sizeof(err)));
	TH_LOG("%s", err);
	ASSERT_NE(NULL, strstr(err, "at most 71582788 at granularity 30"));
	ASSERT_EQ(NULL, strchr(err, '\n'));
	/* calls: bad sizes, widths, norms */
	ASSERT_EQ(-EINVAL, incnn_thc_prepare(t, x, NULL, 0, 0, w, &nr));
	x[3] = INFINITY;
	ASSERT_EQ(-ERANGE, incnn_thc_prepare(t, x, NULL, 16, 0, w, &nr));
	lm = NAN;
	ASSERT_EQ(-ERANGE, incnn_thc_encode(t, w, 16, &lm, 0, 0, idx));
	lm = -1;
	ASSERT_EQ(-ERANGE, incnn_thc_encode(t, w, 16, &lm, 0, 0, idx));
	ASSERT_EQ(-EINVAL, incnn_thc_add_idx(t, l8, 12, NULL, 0, 0, idx, 16));
	ASSERT_EQ(-EINVAL, incnn_thc_add_idx(t, l8, 8, NULL, 0, 0, idx, 15));
	ASSERT_EQ(-EINVAL, incnn_thc_add_idx(t, l8, 8, l8, 16, 1, idx, 16));
	ASSERT_EQ(-ERANGE, incnn_thc_add_idx(t, l8, 8, l8, 8, 8, idx, 16));
	incnn_thc_destroy(t);
}

TEST_HARNESS_MAIN
