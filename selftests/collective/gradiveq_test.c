// SPDX-License-Identifier: GPL-2.0
/*
 * GradiVeQ core (userspace/collective/gradiveq.c): the paper's flattening
 * index map, subspace recovery on synthetic low-rank data, U bit-identical
 * across fits and simulated ranks with the sign convention,
 * compress-sum-decompress against decompress-of-sum (bit for bit where
 * the arithmetic is exact or in the same order), simulated ring allreduce
 * with N = 2..8 (bit-identical replicas), the loss monitor, the schedule's
 * transitions, and the one-line parameter errors. The benchmark is the
 * tool: incnn-gvq bench (docs/gradiveq.md).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
/* 30 s of wall clock is not enough on a loaded host: for hangs only */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#include <incnn/gradiveq.h>

/* the reference loops below must not fuse multiply-adds either */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* --- helpers ---------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in [-1, 1) */
static double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1p-52 - 1.0;
}

/* r orthonormal columns of length d (Gram-Schmidt), b[i * r + j] */
static void orthonormal(double *b, unsigned int d, unsigned int r,
			uint64_t seed)
{
	unsigned int i, j, l;
	double dot, nrm;

	for (i = 0; i < d * r; i++)
		b[i] = rng_unit(&seed);
	for (j = 0; j < r; j++) {
		for (l = 0; l < j; l++) {
			dot = 0;
			for (i = 0; i < d; i++)
				dot += b[i * r + j] * b[i * r + l];
			for (i = 0; i < d; i++)
				b[i * r + j] -= dot * b[i * r + l];
		}
		nrm = 0;
		for (i = 0; i < d; i++)
			nrm += b[i * r + j] * b[i * r + j];
		for (i = 0; i < d; i++)
			b[i * r + j] /= sqrt(nrm);
	}
}

/*
 * nt samples of d floats: mu0 + B z + noise, z_j of scale 2^-j (so the
 * eigenvalues are distinct), noise of amplitude @noise
 */
static void lowrank(float *x, unsigned int nt, unsigned int d,
		    const double *b, unsigned int r, const double *mu0,
		    double noise, uint64_t seed)
{
	unsigned int t, i, j;
	double z[16], v;

	for (t = 0; t < nt; t++) {
		for (j = 0; j < r; j++)
			z[j] = rng_unit(&seed) * ldexp(1.0, -(int)j);
		for (i = 0; i < d; i++) {
			v = mu0[i] + noise * rng_unit(&seed);
			for (j = 0; j < r; j++)
				v += b[i * r + j] * z[j];
			x[(size_t)t * d + i] = (float)v;
		}
	}
}

static struct incnn_gvq_pca *mk_pca(unsigned int d, unsigned int k)
{
	struct incnn_gvq_pca *c = NULL;

	if (incnn_gvq_pca_create(&c, d, k, NULL, 0))
		return NULL;
	return c;
}

/* a fitted compressor from low-rank samples (rank r, seed) */
static struct incnn_gvq_pca *mk_fitted(unsigned int d, unsigned int k,
				       unsigned int r, uint64_t seed)
{
	struct incnn_gvq_pca *c = mk_pca(d, k);
	double *b = malloc(sizeof(double) * d * r), *mu0 = malloc(sizeof(double) * d);
	float *x = malloc(sizeof(float) * d * 100);
	unsigned int i;

	if (!c || !b || !mu0 || !x)
		abort();
	orthonormal(b, d, r, seed);
	for (i = 0; i < d; i++)
		mu0[i] = 0.01 * rng_unit(&seed);
	lowrank(x, 100, d, b, r, mu0, 1e-4, seed + 1);
	if (incnn_gvq_pca_fit(c, x, 100))
		abort();
	free(b);
	free(mu0);
	free(x);
	return c;
}

/* --- flattening ------------------------------------------------------- */

TEST(flatten_index_map)
{
	struct incnn_gvq_conv l = { .filters = 3, .depth = 2, .height = 3,
				    .width = 4 };
	size_t n = incnn_gvq_conv_size(&l), i;
	float g[72], v[72], g2[72];
	unsigned char seen[72] = { 0 };
	unsigned int m, c, h, w;

	ASSERT_EQ(72u, n);
	for (i = 0; i < n; i++)
		g[i] = (float)i;	/* g[m][c][h][w] = ((m D + c) H + h) W + w */
	incnn_gvq_flatten(&l, g, v);
	/* collocated filters adjacent, then depth, then width, then height */
	ASSERT_EQ(g[0], v[0]);
	ASSERT_EQ(g[1 * 2 * 3 * 4], v[1]);		/* m = 1 */
	ASSERT_EQ(g[2 * 2 * 3 * 4], v[2]);		/* m = 2 */
	ASSERT_EQ(g[1 * 3 * 4], v[3]);			/* c = 1 */
	ASSERT_EQ(g[1], v[6]);				/* w = 1 */
	ASSERT_EQ(g[4], v[3 * 2 * 4]);			/* h = 1 */
	ASSERT_EQ(g[((2 * 2 + 1) * 3 + 2) * 4 + 3], v[71]);
	for (m = 0; m < 3; m++)
		for (c = 0; c < 2; c++)
			for (h = 0; h < 3; h++)
				for (w = 0; w < 4; w++) {
					i = incnn_gvq_flat_index(&l, m, c, h, w);
					ASSERT_LT(i, n);
					ASSERT_EQ(0, seen[i]);
					seen[i] = 1;
					ASSERT_EQ(((m * 2 + c) * 3 + h) * 4 + w,
						  (unsigned int)v[i]);
				}
	incnn_gvq_unflatten(&l, v, g2);
	ASSERT_EQ(0, memcmp(g, g2, sizeof(g)));
}

/* --- the compressor ----------------------------------------------------- */

/* ||B - U U^T B||_F^2 / r: 0 when span(U) contains span(B) */
static double proj_err(const float *u, unsigned int d, unsigned int k,
		       const double *b, unsigned int r)
{
	double e = 0, p, utb[64];
	unsigned int i, j, l;

	for (l = 0; l < r; l++) {
		for (j = 0; j < k; j++) {
			utb[j] = 0;
			for (i = 0; i < d; i++)
				utb[j] += u[i * k + j] * b[i * r + l];
		}
		for (i = 0; i < d; i++) {
			p = b[i * r + l];
			for (j = 0; j < k; j++)
				p -= u[i * k + j] * utb[j];
			e += p * p;
		}
	}
	return e / r;
}

/* max_j ||C u_j - lambda_j u_j|| / lambda_0, C the samples' covariance */
static double eig_residual(const float *x, unsigned int nt, unsigned int d,
			   const float *u, unsigned int k, const double *eig)
{
	double *cv = calloc((size_t)d * d, sizeof(double)), mean[256] = { 0 };
	double worst = 0, r2, cu;
	unsigned int t, i, j, l;

	for (t = 0; t < nt; t++)
		for (i = 0; i < d; i++)
			mean[i] += x[t * d + i] / (double)nt;
	for (t = 0; t < nt; t++)
		for (i = 0; i < d; i++)
			for (l = 0; l < d; l++)
				cv[i * d + l] += (x[t * d + i] - mean[i]) *
						 (x[t * d + l] - mean[l]) / (nt - 1);
	for (j = 0; j < k; j++) {
		r2 = 0;
		for (i = 0; i < d; i++) {
			cu = -eig[j] * u[i * k + j];
			for (l = 0; l < d; l++)
				cu += cv[i * d + l] * u[l * k + j];
			r2 += cu * cu;
		}
		worst = fmax(worst, sqrt(r2) / eig[0]);
	}
	free(cv);
	return worst;
}

TEST(subspace_recovered)
{
	const unsigned int d = 64, r = 4, nt = 100;
	double b[64 * 4], mu0[64], uu, maxdev = 0, mudev = 0;
	float x[64 * 100];
	struct incnn_gvq_pca *c = mk_pca(d, r);
	const float *u, *mu;
	const double *eig;
	uint64_t seed = 7;
	unsigned int i, j, l;

	ASSERT_NE(NULL, c);
	orthonormal(b, d, r, 42);
	for (i = 0; i < d; i++)
		mu0[i] = rng_unit(&seed);
	lowrank(x, nt, d, b, r, mu0, 1e-4, 99);
	ASSERT_FALSE(incnn_gvq_pca_ready(c));
	ASSERT_EQ(0, incnn_gvq_pca_fit(c, x, nt));
	ASSERT_TRUE(incnn_gvq_pca_ready(c));
	u = incnn_gvq_pca_u(c);
	mu = incnn_gvq_pca_mu(c);
	eig = incnn_gvq_pca_eigenvalues(c);
	/* the projection error of the true basis onto span(U) */
	EXPECT_LT(proj_err(u, d, r, b, r), 1e-6);
	/* U orthonormal to fp32 rounding */
	for (j = 0; j < r; j++)
		for (l = 0; l < r; l++) {
			uu = 0;
			for (i = 0; i < d; i++)
				uu += (double)u[i * r + j] * u[i * r + l];
			maxdev = fmax(maxdev, fabs(uu - (j == l)));
		}
	EXPECT_LT(maxdev, 1e-5);
	/* the whitening vector is the sample mean: mu0 + mean of B z */
	for (i = 0; i < d; i++)
		mudev = fmax(mudev, fabs(mu[i] - mu0[i]));
	EXPECT_LT(mudev, 0.3);
	/* decreasing, a gap after the 4th, and the paper's k for 1% */
	for (j = 1; j < d; j++)
		ASSERT_LE(eig[j], eig[j - 1]);
	EXPECT_GT(eig[r - 1], 1e4 * eig[r]);
	EXPECT_EQ(r, incnn_gvq_choose_k(eig, d, 0.01));
	/* the eigenpairs themselves, to fp32 rounding of U */
	EXPECT_LT(eig_residual(x, nt, d, u, r, eig), 1e-6);
	TH_LOG("residual %.3g, proj err %.3g, sweeps %u, eig %.3g .. %.3g | %.3g",
	       eig_residual(x, nt, d, u, r, eig), proj_err(u, d, r, b, r), incnn_gvq_pca_sweeps(c), eig[0],
	       eig[r - 1], eig[r]);
	incnn_gvq_pca_destroy(c);
}

TEST(jacobi_eigenpairs_exact_on_known_matrix)
{
	/* samples +-e_0 * 2, +-e_1, 0 on e_2: C = diag(8/3, 2/3, 0) (T = 4) */
	float x[4 * 3] = { 2, 0, 0, -2, 0, 0, 0, 1, 0, 0, -1, 0 };
	struct incnn_gvq_pca *c = mk_pca(3, 2);
	const double *eig;
	const float *u;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, incnn_gvq_pca_fit(c, x, 4));
	eig = incnn_gvq_pca_eigenvalues(c);
	u = incnn_gvq_pca_u(c);
	EXPECT_EQ(8.0 / 3, eig[0]);
	EXPECT_EQ(2.0 / 3, eig[1]);
	EXPECT_EQ(0, eig[2]);
	/* U = [e_0 e_1], signs positive */
	EXPECT_EQ(1.0f, u[0 * 2 + 0]);
	EXPECT_EQ(0.0f, u[0 * 2 + 1]);
	EXPECT_EQ(0.0f, u[1 * 2 + 0]);
	EXPECT_EQ(1.0f, u[1 * 2 + 1]);
	EXPECT_EQ(0.0f, u[2 * 2 + 0]);
	EXPECT_EQ(0.0f, u[2 * 2 + 1]);
	incnn_gvq_pca_destroy(c);
}

TEST(u_bit_identical_across_ranks)
{
	const unsigned int d = 256, k = 32, nt = 100, N = 4;
	double *b = malloc(sizeof(double) * d * 8), mu0[256];
	float *x = malloc(sizeof(float) * d * nt), *xr;
	struct incnn_gvq_pca *c[4];
	const float *u;
	unsigned int r, i, j, big;
	uint64_t seed = 3;

	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, x);
	orthonormal(b, d, 8, 5);
	for (i = 0; i < d; i++)
		mu0[i] = 1e-3 * rng_unit(&seed);
	lowrank(x, nt, d, b, 8, mu0, 1e-3, 11);
	/* each simulated rank fits from its own copy of the same samples */
	for (r = 0; r < N; r++) {
		c[r] = mk_pca(d, k);
		ASSERT_NE(NULL, c[r]);
		xr = malloc(sizeof(float) * d * nt);
		ASSERT_NE(NULL, xr);
		memcpy(xr, x, sizeof(float) * d * nt);
		ASSERT_EQ(0, incnn_gvq_pca_fit(c[r], xr, nt));
		free(xr);
	}
	/* and rank 0 again (a refresh from the same samples) */
	ASSERT_EQ(0, incnn_gvq_pca_fit(c[0], x, nt));
	for (r = 1; r < N; r++) {
		ASSERT_EQ(0, memcmp(incnn_gvq_pca_u(c[0]), incnn_gvq_pca_u(c[r]),
				    sizeof(float) * d * k));
		ASSERT_EQ(0, memcmp(incnn_gvq_pca_mu(c[0]),
				    incnn_gvq_pca_mu(c[r]), sizeof(float) * d));
		ASSERT_EQ(0, memcmp(incnn_gvq_pca_eigenvalues(c[0]),
				    incnn_gvq_pca_eigenvalues(c[r]),
				    sizeof(double) * d));
	}
	/* the sign convention: each column's largest entry is positive */
	u = incnn_gvq_pca_u(c[0]);
	for (j = 0; j < k; j++) {
		big = 0;
		for (i = 1; i < d; i++)
			if (fabsf(u[i * k + j]) > fabsf(u[big * k + j]))
				big = i;
		ASSERT_GT(u[big * k + j], 0);
	}
	for (r = 0; r < N; r++)
		incnn_gvq_pca_destroy(c[r]);
	free(b);
	free(x);
}

/* --- compress, add, decompress -------------------------------------------- */

TEST(compress_sum_decompress_exact)
{
	/* dyadic U and mu, small integer x: every operation is exact */
	const unsigned int d = 16, k = 4, N = 4, ns = 3;
	float u[16 * 4], mu[16], x[4][16 * 3], xs[16 * 3];
	float y[4][4 * 3], acc[4 * 3], ysum[4 * 3], a[16 * 3], bb[16 * 3];
	struct incnn_gvq_pca *c = mk_pca(d, k);
	uint64_t seed = 1;
	unsigned int i, r;

	ASSERT_NE(NULL, c);
	for (i = 0; i < d * k; i++)
		u[i] = (float)((int)(rng_next(&seed) % 5) - 2) * 0.5f;
	for (i = 0; i < d; i++)
		mu[i] = (float)(4 * ((int)(rng_next(&seed) % 9) - 4));
	incnn_gvq_pca_load(c, u, mu);
	memset(xs, 0, sizeof(xs));
	for (r = 0; r < N; r++)
		for (i = 0; i < d * ns; i++) {
			x[r][i] = (float)((int)(rng_next(&seed) % 64) - 32);
			xs[i] += x[r][i];
		}
	/* the ring: compress each rank's slices with mu / N, add in order */
	for (r = 0; r < N; r++)
		incnn_gvq_compress(c, x[r], ns, N, y[r]);
	memcpy(acc, y[0], sizeof(acc));
	for (r = 1; r < N; r++)
		incnn_gvq_add(acc, y[r], k * ns);
	/* the aggregate compressed as one rank's vector (mu / 1) */
	incnn_gvq_compress(c, xs, ns, 1, ysum);
	ASSERT_EQ(0, memcmp(acc, ysum, sizeof(acc)));
	incnn_gvq_decompress(c, acc, ns, a);
	incnn_gvq_decompress(c, ysum, ns, bb);
	ASSERT_EQ(0, memcmp(a, bb, sizeof(a)));
	incnn_gvq_pca_destroy(c);
}

TEST(compress_sum_decompress_fitted)
{
	/* a fitted U: linear up to fp32 rounding; same order, same bits */
	const unsigned int d = 256, k = 32, N = 6, ns = 9;
	struct incnn_gvq_pca *c = mk_fitted(d, k, 8, 21);
	float *x = malloc(sizeof(float) * N * d * ns);
	float *xs = calloc(d * ns, sizeof(float));
	float *y = malloc(sizeof(float) * N * k * ns);
	float *acc = malloc(sizeof(float) * k * ns), *ys = malloc(sizeof(float) * k * ns);
	float *a = malloc(sizeof(float) * d * ns), *b = malloc(sizeof(float) * d * ns);
	double e = 0, nrm = 0;
	uint64_t seed = 8;
	unsigned int i, r, j;

	ASSERT_NE(NULL, c);
	for (i = 0; i < N * d * ns; i++)
		x[i] = (float)(1e-3 * rng_unit(&seed));
	for (r = 0; r < N; r++)
		for (i = 0; i < d * ns; i++)
			xs[i] += x[r * d * ns + i];
	for (r = 0; r < N; r++)
		incnn_gvq_compress(c, x + r * d * ns, ns, N, y + r * k * ns);
	memcpy(acc, y, sizeof(float) * k * ns);
	for (r = 1; r < N; r++)
		incnn_gvq_add(acc, y + r * k * ns, k * ns);
	/* decompress-of-sum, the sum formed independently in the same order */
	for (j = 0; j < k * ns; j++) {
		float s = y[j];

		for (r = 1; r < N; r++)
			s = s + y[r * k * ns + j];
		ys[j] = s;
	}
	ASSERT_EQ(0, memcmp(acc, ys, sizeof(float) * k * ns));
	incnn_gvq_decompress(c, acc, ns, a);
	incnn_gvq_decompress(c, ys, ns, b);
	ASSERT_EQ(0, memcmp(a, b, sizeof(float) * d * ns));
	/* against compressing the sum: equal up to rounding */
	incnn_gvq_compress(c, xs, ns, 1, ys);
	incnn_gvq_decompress(c, ys, ns, b);
	for (i = 0; i < d * ns; i++) {
		e = fmax(e, fabs((double)a[i] - b[i]));
		nrm = fmax(nrm, fabs((double)b[i]));
	}
	EXPECT_LT(e, 1e-4 * nrm);
	free(x); free(xs); free(y); free(acc); free(ys); free(a); free(b);
	incnn_gvq_pca_destroy(c);
}

/*
 * The documented order of operations, as plain loops: compress
 * y_j = (((0 + u_0j t_0) + u_1j t_1) + ...), t_i = x_i - mu_i / N;
 * decompress x_i = (((mu_i + u_i0 s_0) + u_i1 s_1) + ...). Every
 * implementation (unrolled, vectorised, later SIMD) must match it bit
 * for bit, so that ranks with different builds still agree.
 */
static void check_order(struct __test_metadata *_metadata, unsigned int d,
			unsigned int k, unsigned int N, uint64_t seed)
{
	struct incnn_gvq_pca *c = mk_fitted(d, k, k < 8 ? k : 8, seed);
	const float *u, *mu;
	float x[1024], y[1024], yr[1024], xo[1024], xr[1024], t;
	unsigned int i, j;

	ASSERT_NE(NULL, c);
	u = incnn_gvq_pca_u(c);
	mu = incnn_gvq_pca_mu(c);
	for (i = 0; i < d; i++)
		x[i] = (float)(0.01 * rng_unit(&seed));
	for (j = 0; j < k; j++)
		yr[j] = 0;
	for (i = 0; i < d; i++) {
		t = x[i] - mu[i] / (float)N;
		for (j = 0; j < k; j++)
			yr[j] = yr[j] + u[i * k + j] * t;
	}
	incnn_gvq_compress(c, x, 1, N, y);
	ASSERT_EQ(0, memcmp(yr, y, sizeof(float) * k));
	for (i = 0; i < d; i++) {
		xr[i] = mu[i];
		for (j = 0; j < k; j++)
			xr[i] = xr[i] + u[i * k + j] * y[j];
	}
	incnn_gvq_decompress(c, y, 1, xo);
	ASSERT_EQ(0, memcmp(xr, xo, sizeof(float) * d));
	incnn_gvq_pca_destroy(c);
}

TEST(compress_decompress_in_documented_order)
{
	check_order(_metadata, 256, 32, 4, 1);
	check_order(_metadata, 10, 7, 3, 2);	/* the remainder loops */
	check_order(_metadata, 64, 5, 7, 3);
	check_order(_metadata, 7, 1, 2, 4);
}

/*
 * Algorithm 1 with N simulated ranks on a layer of ns slices: rank r
 * starts segment r; at step t rank r receives segment (r - t) mod N from
 * r - 1, compresses its own copy of that segment and adds it to the
 * received one; then the aggregated compressed segments circulate and
 * every rank decompresses each one itself. out[r]: rank r's result.
 */
static void ring_sim(const struct incnn_gvq_pca *c, const float *x,
		     unsigned int N, size_t ns, float *out)
{
	unsigned int d = incnn_gvq_pca_d(c), k = incnn_gvq_pca_k(c), r, t, sg;
	size_t first, cnt;
	float *send = malloc(sizeof(float) * N * k * ns);
	float *own = malloc(sizeof(float) * k * ns);
	float *hold = malloc(sizeof(float) * N * k * ns);

	if (!send || !own || !hold)
		abort();
	/* send[r]: the segment buffer rank r sends next (segment r first) */
	for (r = 0; r < N; r++) {
		cnt = incnn_gvq_segment(ns, N, r, &first);
		incnn_gvq_compress(c, x + (r * ns + first) * d, cnt, N,
				   hold + (r * ns + first) * k);
	}
	for (t = 1; t < N; t++) {
		memcpy(send, hold, sizeof(float) * N * k * ns);
		for (r = 0; r < N; r++) {
			unsigned int from = (r + N - 1) % N;

			sg = (r + N - t) % N;
			cnt = incnn_gvq_segment(ns, N, sg, &first);
			incnn_gvq_compress(c, x + (r * ns + first) * d, cnt, N,
					   own);
			memcpy(hold + (r * ns + first) * k,
			       send + (from * ns + first) * k,
			       sizeof(float) * k * cnt);
			incnn_gvq_add(hold + (r * ns + first) * k, own, k * cnt);
		}
	}
	/* rank r owns segment (r + 1) mod N; allgather the compressed */
	for (sg = 0; sg < N; sg++) {
		unsigned int owner = (sg + N - 1) % N;

		cnt = incnn_gvq_segment(ns, N, sg, &first);
		for (r = 0; r < N; r++) {
			memcpy(own, hold + (owner * ns + first) * k,
			       sizeof(float) * k * cnt);
			incnn_gvq_decompress(c, own, cnt,
					     out + (r * ns + first) * d);
		}
	}
	free(send);
	free(own);
	free(hold);
}

TEST(ring_replicas_bit_identical_n2_to_8)
{
	struct incnn_gvq_conv l = { 16, 16, 3, 3 };	/* 9 slices of 256 */
	const unsigned int d = 256, k = 32, ns = 9;
	struct incnn_gvq_pca *c = mk_fitted(d, k, 8, 33);
	float *g = malloc(sizeof(float) * d * ns), *x, *out, *ref, *ys, *y;
	uint64_t seed = 12;
	unsigned int N, r, i, j;

	ASSERT_NE(NULL, c);
	ASSERT_EQ(d * ns, incnn_gvq_conv_size(&l));
	for (N = 2; N <= 8; N++) {
		x = malloc(sizeof(float) * N * d * ns);
		out = malloc(sizeof(float) * N * d * ns);
		ref = malloc(sizeof(float) * d * ns);
		ys = malloc(sizeof(float) * k * ns);
		y = malloc(sizeof(float) * N * k * ns);
		ASSERT_NE(NULL, out);
		for (r = 0; r < N; r++) {
			for (i = 0; i < d * ns; i++)
				g[i] = (float)(1e-3 * rng_unit(&seed));
			incnn_gvq_flatten(&l, g, x + r * d * ns);
		}
		ring_sim(c, x, N, ns, out);
		for (r = 1; r < N; r++)
			ASSERT_EQ(0, memcmp(out, out + r * d * ns,
					    sizeof(float) * d * ns));
		/* reference: per slice, sum from the segment's first rank on */
		for (r = 0; r < N; r++)
			incnn_gvq_compress(c, x + r * d * ns, ns, N,
					   y + r * k * ns);
		for (i = 0; i < ns; i++) {
			unsigned int sg = 0;
			size_t first, cnt;

			while (cnt = incnn_gvq_segment(ns, N, sg, &first),
			       i >= first + cnt)
				sg++;
			for (j = 0; j < k; j++) {
				float s = y[sg * k * ns + i * k + j];

				for (r = 1; r < N; r++)
					s += y[((sg + r) % N) * k * ns + i * k + j];
				ys[i * k + j] = s;
			}
		}
		incnn_gvq_decompress(c, ys, ns, ref);
		ASSERT_EQ(0, memcmp(out, ref, sizeof(float) * d * ns)) {
			TH_LOG("N=%u: ring differs from decompress-of-sum", N);
		}
		free(x); free(out); free(ref); free(ys); free(y);
	}
	free(g);
	incnn_gvq_pca_destroy(c);
}

/*
 * A simulated training job: N = 4 ranks, one 3x3x16x16 layer, each with
 * its own schedule and layer state. Gradients are rank-4 per slice in a
 * basis that changes at iteration 34. Uncompressed iterations sum the
 * ranks' gradients; sampling ones feed the sum's first slice to every
 * rank; compressed ones run the simulated ring. The phases must follow
 * warm-up 2, T_s 12, T_c 6, and the drift must trigger a refresh at the
 * first compressed iteration after it.
 */
#define JOB_N 4
#define JOB_ITERS 55
#define JOB_DRIFT 34

static void job_grads(float *x, size_t n, unsigned int d, const double *b,
		      uint64_t seed)
{
	unsigned int i, j;
	size_t s;
	double z[4], v;

	for (s = 0; s < n / d; s++) {
		for (j = 0; j < 4; j++)
			z[j] = rng_unit(&seed);
		for (i = 0; i < d; i++) {
			v = 1e-4 * rng_unit(&seed);
			for (j = 0; j < 4; j++)
				v += b[i * 4 + j] * z[j];
			x[s * d + i] = (float)v;
		}
	}
}

/* after each fit: every rank's U and mu identical */
static int job_fit(struct incnn_gvq_layer **ly)
{
	const struct incnn_gvq_pca *c0 = incnn_gvq_layer_pca(ly[0]);
	unsigned int r, d = incnn_gvq_pca_d(c0), k = incnn_gvq_pca_k(c0);
	int rc;

	for (r = 0; r < JOB_N; r++) {
		rc = incnn_gvq_layer_fit(ly[r]);
		if (rc)
			return rc;
	}
	for (r = 1; r < JOB_N; r++) {
		const struct incnn_gvq_pca *c = incnn_gvq_layer_pca(ly[r]);

		if (memcmp(incnn_gvq_pca_u(c0), incnn_gvq_pca_u(c),
			   sizeof(float) * d * k) ||
		    memcmp(incnn_gvq_pca_mu(c0), incnn_gvq_pca_mu(c),
			   sizeof(float) * d))
			return -EDOM;
	}
	return 0;
}

TEST(training_job_schedule_and_refresh)
{
	struct incnn_gvq_conv l = { 16, 16, 3, 3 };
	struct incnn_gvq_params p = { .d = 256, .k = 8, .warmup = 2,
				      .t_s = 12, .t_c = 6, .loss_eps = 0.05 };
	struct incnn_gvq_layer *ly[JOB_N];
	struct incnn_gvq_sched s[JOB_N];
	const char *want = "WWSSSSSSSSSSSSCCCCCCSSSSSSSSSSSSCCCSSSSSSSSSSSSCCCCCCSS";
	const unsigned int d = 256;
	double b[2][256 * 4], e, nrm;
	float *x, *agg, *out;
	char got[JOB_ITERS + 1];
	unsigned int it, r, over, ph, prev;
	size_t n, ns, i;

	orthonormal(b[0], d, 4, 71);
	orthonormal(b[1], d, 4, 72);
	for (r = 0; r < JOB_N; r++) {
		ASSERT_EQ(0, incnn_gvq_layer_create(&ly[r], &p, &l, NULL, 0));
		ASSERT_EQ(0, incnn_gvq_sched_init(&s[r], &p, NULL, 0));
	}
	n = incnn_gvq_layer_size(ly[0]);
	ns = incnn_gvq_layer_nslices(ly[0]);
	ASSERT_EQ(n, ns * d);
	x = malloc(sizeof(float) * JOB_N * n);
	agg = calloc(n, sizeof(float));
	out = malloc(sizeof(float) * JOB_N * n);
	ASSERT_NE(NULL, out);
	for (it = 0; it < JOB_ITERS; it++) {
		ph = s[0].phase;
		got[it] = "WSC"[ph];
		for (r = 0; r < JOB_N; r++)
			job_grads(x + r * n, n, d, b[it >= JOB_DRIFT],
				  (uint64_t)it * 100 + r);
		memset(agg, 0, sizeof(float) * n);
		for (r = 0; r < JOB_N; r++)
			for (i = 0; i < n; i++)
				agg[i] += x[r * n + i];
		over = 0;
		if (ph == INCNN_GVQ_SAMPLE) {
			for (r = 0; r < JOB_N; r++)
				ASSERT_EQ(0, incnn_gvq_layer_sample(ly[r], agg));
		} else if (ph == INCNN_GVQ_COMPRESSED) {
			const struct incnn_gvq_pca *c = incnn_gvq_layer_pca(ly[0]);

			ring_sim(c, x, JOB_N, ns, out);
			for (r = 1; r < JOB_N; r++)
				ASSERT_EQ(0, memcmp(out, out + r * n,
						    sizeof(float) * n));
			for (r = 0; r < JOB_N; r++)
				over += incnn_gvq_local_loss(
					incnn_gvq_layer_pca(ly[r]), x + r * n,
					ns, JOB_N) > p.loss_eps;
			/* but at the drift: the aggregate to ~3e-3 (noise) */
			e = nrm = 0;
			for (i = 0; i < n; i++) {
				e += ((double)out[i] - agg[i]) * (out[i] - agg[i]);
				nrm += (double)agg[i] * agg[i];
			}
			if (it != JOB_DRIFT) {
				ASSERT_LT(e, 1e-5 * nrm) {
					TH_LOG("iteration %u: error %.3g", it,
					       e / nrm);
				}
			} else {
				ASSERT_EQ((unsigned int)JOB_N, over);
			}
		}
		for (r = 0; r < JOB_N; r++)
			ASSERT_EQ(s[0].phase, s[r].phase);
		for (r = 0; r < JOB_N; r++) {
			prev = s[r].phase;
			if (incnn_gvq_sched_next(&s[r], over, JOB_N) ==
			    INCNN_GVQ_COMPRESSED && prev == INCNN_GVQ_SAMPLE) {
				ASSERT_EQ(p.t_s, incnn_gvq_layer_nsamples(ly[r]));
			}
		}
		if (ph == INCNN_GVQ_SAMPLE && s[0].phase == INCNN_GVQ_COMPRESSED) {
			ASSERT_EQ(0, job_fit(ly));
		}
	}
	got[it] = 0;
	ASSERT_STREQ(want, got);
	ASSERT_EQ(1u, s[0].refreshes);
	/* two samples of the current phase; T_s fit, one more does not */
	ASSERT_EQ(2u, incnn_gvq_layer_nsamples(ly[0]));
	for (i = 2; i < p.t_s; i++)
		ASSERT_EQ(0, incnn_gvq_layer_sample(ly[0], agg));
	ASSERT_EQ(-ENOSPC, incnn_gvq_layer_sample(ly[0], agg));
	for (r = 0; r < JOB_N; r++)
		incnn_gvq_layer_destroy(ly[r]);
	free(x);
	free(agg);
	free(out);
}

TEST(layer_samples_first_slice)
{
	struct incnn_gvq_conv l = { 4, 2, 1, 3 };	/* 24 floats, d = 8 */
	struct incnn_gvq_params p = { .d = 8, .k = 2, .warmup = 0, .t_s = 4,
				      .t_c = 1, .loss_eps = 0.5 };
	struct incnn_gvq_layer *g;
	float v[4][24];
	const float *mu;
	unsigned int t, i;

	ASSERT_EQ(0, incnn_gvq_layer_create(&g, &p, &l, NULL, 0));
	ASSERT_EQ(24u, incnn_gvq_layer_size(g));
	ASSERT_EQ(3u, incnn_gvq_layer_nslices(g));
	for (t = 0; t < 4; t++)
		for (i = 0; i < 24; i++)	/* slice 0: t + i; others 100 */
			v[t][i] = i < 8 ? (float)(t * (i + 1)) : 100.0f;
	for (t = 0; t < 4; t++)
		ASSERT_EQ(0, incnn_gvq_layer_sample(g, v[t]));
	ASSERT_EQ(0, incnn_gvq_layer_fit(g));
	ASSERT_EQ(0u, incnn_gvq_layer_nsamples(g));
	ASSERT_TRUE(incnn_gvq_pca_ready(incnn_gvq_layer_pca(g)));
	/* mu = the mean of the first slices: 1.5 (i + 1), exactly */
	mu = incnn_gvq_pca_mu(incnn_gvq_layer_pca(g));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(1.5f * (float)(i + 1), mu[i]);
	incnn_gvq_layer_destroy(g);
	ASSERT_EQ(-EINVAL, incnn_gvq_layer_create(&g, &p, &(struct incnn_gvq_conv){ 3, 2, 1, 4 }, NULL, 0));
}

TEST(loss_monitor)
{
	const unsigned int d = 64, k = 4, N = 3;
	double b[64 * 4], mu0[64] = { 0 };
	float x[64 * 100], noise[64 * 2];
	struct incnn_gvq_pca *c = mk_pca(d, k);
	uint64_t seed = 4;
	unsigned int i;

	ASSERT_NE(NULL, c);
	orthonormal(b, d, k, 17);
	lowrank(x, 100, d, b, k, mu0, 1e-5, 18);
	ASSERT_EQ(0, incnn_gvq_pca_fit(c, x, 100));
	/* a rank's share of a low-rank aggregate: small loss */
	for (i = 0; i < 2 * d; i++)
		x[i] /= N;
	EXPECT_LT(incnn_gvq_local_loss(c, x, 2, N), 1e-3);
	/* noise outside the subspace: loss near 1 - k/d */
	for (i = 0; i < 2 * d; i++)
		noise[i] = (float)rng_unit(&seed);
	EXPECT_GT(incnn_gvq_local_loss(c, noise, 2, N), 0.5);
	memset(noise, 0, sizeof(noise));
	EXPECT_EQ(0, incnn_gvq_local_loss(c, noise, 2, 1));
	incnn_gvq_pca_destroy(c);
}

/* --- the schedule ----------------------------------------------------------- */

TEST(schedule_transitions)
{
	struct incnn_gvq_params p;
	struct incnn_gvq_sched s;
	char got[64], want[] = "WWWSSSSCCCCCSSSSCCCCCSSSSCCCCCSS";
	unsigned int i;

	incnn_gvq_params_default(&p);
	p.warmup = 3;
	p.t_s = 4;
	p.t_c = 5;
	ASSERT_EQ(0, incnn_gvq_sched_init(&s, &p, NULL, 0));
	for (i = 0; i < strlen(want); i++) {
		got[i] = "WSC"[s.phase];
		incnn_gvq_sched_next(&s, 0, 4);
	}
	got[i] = 0;
	ASSERT_STREQ(want, got);
	ASSERT_EQ(strlen(want), s.iter);
	ASSERT_EQ(0u, s.refreshes);

	/* the loss monitor: a majority refreshes, half does not */
	p.warmup = 0;
	ASSERT_EQ(0, incnn_gvq_sched_init(&s, &p, NULL, 0));
	ASSERT_EQ(INCNN_GVQ_SAMPLE, (int)s.phase);
	for (i = 0; i < 4; i++)
		incnn_gvq_sched_next(&s, 4, 4);	/* ignored while sampling */
	ASSERT_EQ(INCNN_GVQ_COMPRESSED, (int)s.phase);
	ASSERT_EQ(INCNN_GVQ_COMPRESSED, (int)incnn_gvq_sched_next(&s, 2, 4));
	ASSERT_EQ(INCNN_GVQ_SAMPLE, (int)incnn_gvq_sched_next(&s, 3, 4));
	ASSERT_EQ(1u, s.refreshes);
	ASSERT_EQ(6u, s.iter);
	for (i = 0; i < 4; i++)
		incnn_gvq_sched_next(&s, 0, 4);
	ASSERT_EQ(INCNN_GVQ_COMPRESSED, (int)s.phase);
	ASSERT_EQ(INCNN_GVQ_SAMPLE, (int)incnn_gvq_sched_next(&s, 2, 3));
	ASSERT_STREQ("compressed", incnn_gvq_phase_name(INCNN_GVQ_COMPRESSED));
}

/* --- bad parameters ----------------------------------------------------------- */

static void expect_err(struct __test_metadata *_metadata,
		       const struct incnn_gvq_params *p, const char *want)
{
	char err[256] = "";
	struct incnn_gvq_sched s;

	EXPECT_EQ(-EINVAL, incnn_gvq_params_check(p, err, sizeof(err)));
	EXPECT_STREQ(want, err);
	EXPECT_EQ(NULL, strchr(err, '\n'));
	EXPECT_EQ(-EINVAL, incnn_gvq_sched_init(&s, p, NULL, 0));
}

TEST(bad_parameters_one_line)
{
	struct incnn_gvq_params p, q;
	struct incnn_gvq_conv l = { 16, 16, 3, 3 };
	struct incnn_gvq_pca *c = NULL;
	float x[4] = { 0, 1, NAN, 0 };
	char err[256] = "";

	incnn_gvq_params_default(&p);
	ASSERT_EQ(0, incnn_gvq_params_check(&p, err, sizeof(err)));
	ASSERT_EQ(0, incnn_gvq_conv_check(&p, &l, err, sizeof(err)));
	q = p; q.d = 1025;
	expect_err(_metadata, &q, "gradiveq: slice size d 1025: must be in [2, 1024]");
	q = p; q.d = 1;
	expect_err(_metadata, &q, "gradiveq: slice size d 1: must be in [2, 1024]");
	q = p; q.k = 256;
	expect_err(_metadata, &q, "gradiveq: compressed size k 256: must be in [1, d - 1] = [1, 255]");
	q = p; q.k = 0;
	expect_err(_metadata, &q, "gradiveq: compressed size k 0: must be in [1, d - 1] = [1, 255]");
	q = p; q.t_s = 1;
	expect_err(_metadata, &q, "gradiveq: T_s 1: must be in [2, 4096]");
	q = p; q.t_s = 4097;
	expect_err(_metadata, &q, "gradiveq: T_s 4097: must be in [2, 4096]");
	q = p; q.t_c = 0;
	expect_err(_metadata, &q, "gradiveq: T_c 0: must be in [1, 2147483647]");
	q = p; q.warmup = 0x80000000u;
	expect_err(_metadata, &q, "gradiveq: warm-up 2147483648: must be at most 2147483647");
	q = p; q.loss_eps = 0;
	expect_err(_metadata, &q, "gradiveq: loss threshold 0: must be in (0, 1]");
	q = p; q.loss_eps = NAN;
	expect_err(_metadata, &q, "gradiveq: loss threshold nan: must be in (0, 1]");

	l.filters = 48;
	EXPECT_EQ(-EINVAL, incnn_gvq_conv_check(&p, &l, err, sizeof(err)));
	EXPECT_STREQ("gradiveq: slice size d 256: must be a multiple of the layer's 48 filters", err);
	l = (struct incnn_gvq_conv){ 16, 3, 1, 1 };
	EXPECT_EQ(-EINVAL, incnn_gvq_conv_check(&p, &l, err, sizeof(err)));
	EXPECT_STREQ("gradiveq: conv layer of 48 floats: must hold at least one slice of d = 256", err);
	l = (struct incnn_gvq_conv){ 16, 0, 3, 3 };
	EXPECT_EQ(-EINVAL, incnn_gvq_conv_check(&p, &l, err, sizeof(err)));
	EXPECT_STREQ("gradiveq: conv layer 16x0x3x3: every dimension must be >= 1", err);
	l = (struct incnn_gvq_conv){ 1024, 1024, 33, 32 };
	EXPECT_EQ(-EINVAL, incnn_gvq_conv_check(&p, &l, err, sizeof(err)));
	EXPECT_STREQ("gradiveq: conv layer 1024x1024x33x32: more than 1073741824 floats", err);

	EXPECT_EQ(-EINVAL, incnn_gvq_pca_create(&c, 64, 64, err, sizeof(err)));
	EXPECT_STREQ("gradiveq: compressed size k 64: must be in [1, d - 1] = [1, 63]", err);
	ASSERT_EQ(0, incnn_gvq_pca_create(&c, 2, 1, err, sizeof(err)));
	EXPECT_EQ(-EINVAL, incnn_gvq_pca_fit(c, x, 1));
	EXPECT_EQ(-ERANGE, incnn_gvq_pca_fit(c, x, 2));
	EXPECT_FALSE(incnn_gvq_pca_ready(c));
	incnn_gvq_pca_destroy(c);
}

TEST_HARNESS_MAIN
