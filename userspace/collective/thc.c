// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * THC, tensor homomorphic compression: parameters, the optimal lookup
 * table, the randomized Hadamard transform, quantisation, integer lanes
 * and decode (the scalar reference of every hot loop is thc_ref.c, the
 * AVX2 kernels thc_avx2.c). See include/incnn/thc.h and docs/thc.md.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "thc_int.h"
#include "coll.h"

#define TIE		1e-9	/* as scripts/gen/thc-table.py */
#define MIN_BLOCK	16
#define NORM_LIMIT	0x1p112
/*
 * A block whose agreed max norm is below TINY_NORM (and not 0) is
 * quantised, dequantised and decoded at its norm's scale divided by a power
 * of two 2^E (exact), the results scaled back by 2^E at the end: otherwise
 * g / (2 M) overflows and the decode step 2 M / (g N B) leaves the normal
 * floats. At or above it both stay normal for every g, N and B.
 */
#define TINY_NORM	0x1p-64f
/* the fused sum of squares is exact enough in [SUMSQ_LOW, FLT_MAX] */
#define SUMSQ_LOW	0x1p-100f
#define TINY_CHUNK	256

void incnn_thc_params_default(struct incnn_thc_params *p)
{
	memset(p, 0, sizeof(*p));
	p->bits = 4;
	p->gran = 30;
	p->p = 1.0 / 32;
	p->block_log2 = 12;
	p->seed = 0;
}

int incnn_thc_params_check(const struct incnn_thc_params *p, char *err,
			   size_t errlen)
{
	unsigned int b = p->bits;

	if (b != 1 && b != 2 && b != 4 && b != 8)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "thc: bits %u: must be 1, 2, 4 or 8", b);
	if (p->gran < (1u << b) - 1 || p->gran > 255)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "thc: granularity %u: must be in [2^bits - 1, 255] = [%u, 255]",
				       p->gran, (1u << b) - 1);
	if (!(p->p >= 1e-9 && p->p <= 0.5))
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "thc: p %g: must be in [1e-9, 0.5]", p->p);
	if (p->block_log2 < INCNN_THC_MIN_BLOCK_LOG2 ||
	    p->block_log2 > INCNN_THC_MAX_BLOCK_LOG2)
		return incnn_coll_errf(err, errlen, -EINVAL,
				       "thc: block_log2 %u: must be in [%d, %d]",
				       p->block_log2, INCNN_THC_MIN_BLOCK_LOG2,
				       INCNN_THC_MAX_BLOCK_LOG2);
	return 0;
}

/* --- the lookup table (section 5.2, appendix B) ------------------------- */

static double norm_pdf(double a)
{
	return exp(-0.5 * a * a) / sqrt(2.0 * M_PI);
}

static double norm_cdf(double a)
{
	return 0.5 * erfc(-a / sqrt(2.0));
}

/*
 * t_p = Phi^-1(1 - p/2): bisection on the upper tail 0.5 erfc(t / sqrt 2),
 * decreasing in t, down to adjacent doubles (p >= 1e-9: t < 7)
 */
static double t_of_p(double p)
{
	double lo = 0, hi = 40;

	for (;;) {
		double mid = lo + (hi - lo) / 2;

		if (mid <= lo || mid >= hi)
			return mid;
		if (0.5 * erfc(mid / sqrt(2.0)) > p / 2)
			lo = mid;
		else
			hi = mid;
	}
}

/*
 * cost[i * (g + 1) + j], i < j: the integral over [a_i, a_j] of
 * (a - a_i)(a_j - a) phi(a), the variance of unbiased rounding between
 * the grid points a_i and a_j times the density (closed form:
 * -(1 + a_i a_j)(Phi(a_j) - Phi(a_i)) - a_i phi(a_j) + a_j phi(a_i)).
 */
static void table_costs(unsigned int g, double t, double *c)
{
	double a[256], ph[256], cd[256];
	unsigned int i, j;

	for (i = 0; i <= g; i++) {
		a[i] = -t + 2.0 * t * i / g;
		ph[i] = norm_pdf(a[i]);
		cd[i] = norm_cdf(a[i]);
	}
	for (i = 0; i <= g; i++)
		for (j = i + 1; j <= g; j++) {
			double v = -(1.0 + a[i] * a[j]) * (cd[j] - cd[i]) -
				   a[i] * ph[j] + a[j] * ph[i];

			c[i * (g + 1) + j] = v > 0 ? v : 0;
		}
}

/*
 * The exact optimum by dynamic programme: go[m][j], the least cost from
 * table point m at grid point j to point k - 1 at g; then the
 * lexicographically smallest table within TIE of the optimum.
 */
static int table_solve(unsigned int k, unsigned int g, double t, uint8_t *T)
{
	size_t w = g + 1;
	double *c = calloc(w * w, sizeof(*c));
	double *go = malloc(k * w * sizeof(*go));
	double lim, acc = 0;
	unsigned int m, j, nx;

	if (!c || !go) {
		free(c);
		free(go);
		return -ENOMEM;
	}
	table_costs(g, t, c);
	for (j = 0; j < w; j++)
		go[(k - 1) * w + j] = j == g ? 0 : INFINITY;
	for (m = k - 1; m-- > 0;)
		for (j = 0; j < w; j++) {
			double best = INFINITY;

			for (nx = j + 1; nx < w; nx++) {
				double v = c[j * w + nx] + go[(m + 1) * w + nx];

				if (v < best)
					best = v;
			}
			go[m * w + j] = best;
		}
	lim = go[0] * (1.0 + TIE) + 1e-300;
	T[0] = 0;
	for (m = 1; m < k; m++) {
		j = T[m - 1];
		for (nx = j + 1; nx < w; nx++)
			if (acc + c[j * w + nx] + go[m * w + nx] <= lim)
				break;
		T[m] = nx;	/* nx < w: the optimum itself qualifies */
		acc += c[j * w + nx];
	}
	free(c);
	free(go);
	return 0;
}

static void table_cells(struct incnn_thc *t)
{
	unsigned int c, z = 0;

	for (c = 0; c < t->p.gran; c++) {
		while (t->table[z + 1] <= c)
			z++;
		t->cell[c] = z | (uint32_t)t->table[z] << 8 |
			     (uint32_t)(t->table[z + 1] - t->table[z]) << 16;
	}
}

int incnn_thc_create(struct incnn_thc **out, const struct incnn_thc_params *p,
		     char *err, size_t errlen)
{
	struct incnn_thc *t;
	int rc = incnn_thc_params_check(p, err, errlen);

	if (rc)
		return rc;
	t = calloc(1, sizeof(*t));
	if (!t)
		return incnn_coll_errf(err, errlen, -ENOMEM, "thc: out of memory");
	t->p = *p;
	t->k = 1u << p->bits;
	t->tp = t_of_p(p->p);
	rc = table_solve(t->k, p->gran, t->tp, t->table);
	if (rc) {
		free(t);
		return incnn_coll_errf(err, errlen, rc, "thc: out of memory");
	}
	table_cells(t);
	incnn_thc_set_simd(t, true);
	*out = t;
	return 0;
}

void incnn_thc_destroy(struct incnn_thc *t)
{
	free(t);
}

const struct incnn_thc_params *incnn_thc_params(const struct incnn_thc *t)
{
	return &t->p;
}

const uint8_t *incnn_thc_table(const struct incnn_thc *t)
{
	return t->table;
}

double incnn_thc_tp(const struct incnn_thc *t)
{
	return t->tp;
}

bool incnn_thc_set_simd(struct incnn_thc *t, bool on)
{
	t->simd = NULL;
	if (on && incnn_simd_level() == INCNN_SIMD_AVX2)
		t->simd = thc_avx2_ops();
	return t->simd;
}

/* --- sizes -------------------------------------------------------------- */

static size_t last_block(size_t rem)
{
	size_t b = MIN_BLOCK;

	while (b < rem)
		b <<= 1;
	return b;
}

size_t incnn_thc_padded(const struct incnn_thc *t, size_t n)
{
	size_t bs = (size_t)1 << t->p.block_log2, rem = n & (bs - 1);

	return (n - rem) + (rem ? last_block(rem) : 0);
}

size_t incnn_thc_nblocks(const struct incnn_thc *t, size_t n)
{
	size_t bs = (size_t)1 << t->p.block_log2;

	return (n + bs - 1) / bs;
}

size_t incnn_thc_idx_bytes(const struct incnn_thc *t, size_t n)
{
	return incnn_thc_padded(t, n) * t->p.bits / 8;
}

/* block k: offset and (padded) length */
static size_t block_at(const struct incnn_thc *t, size_t n, size_t k,
		       size_t *len)
{
	size_t bs = (size_t)1 << t->p.block_log2, off = k * bs;

	*len = n - off >= bs ? bs : last_block(n - off);
	return off;
}

static uint32_t lane_max(unsigned int bits)
{
	return bits == 8 ? 0xff : bits == 16 ? 0xffff : 0x7fffffff;
}

int incnn_thc_lane_bits(const struct incnn_thc *t, unsigned int workers,
			char *err, size_t errlen)
{
	uint64_t top = (uint64_t)workers * t->p.gran;

	if (!workers)
		return incnn_coll_errf(err, errlen, -EINVAL, "thc: 0 workers");
	if (top <= 0xff)
		return 8;
	if (top <= 0xffff)
		return 16;
	if (top <= 0x7fffffff)
		return 32;
	return incnn_coll_errf(err, errlen, -ERANGE,
			       "thc: %u workers: at most %u at granularity %u (sums in 31 bits)",
			       workers, 0x7fffffffu / t->p.gran, t->p.gran);
}

/* --- keys --------------------------------------------------------------- */

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* the shared signs of D; the rank's quantisation stream */
static uint64_t sign_key(const struct incnn_thc *t, uint64_t nonce)
{
	return mix64(t->p.seed ^ mix64(nonce ^ 0x5349474e53ull));
}

static uint64_t quant_key(const struct incnn_thc *t, uint64_t nonce)
{
	return mix64(t->p.seed ^ mix64(nonce ^ 0x5155414e54ull));
}

/* --- the RHT ------------------------------------------------------------ */

static void apply_signs(const struct incnn_thc *t, float *x, size_t len,
			uint32_t base, uint64_t key, float scale)
{
	uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);

	if (t->simd)
		t->simd->signs(x, len, base, k0, k1, scale);
	else
		thc_signs_ref(x, len, base, k0, k1, scale);
}

static void fwht(const struct incnn_thc *t, float *x, size_t len)
{
	if (t->simd)
		t->simd->fwht(x, len);
	else
		thc_fwht_ref(x, len);
}

static int check_n(size_t n)
{
	return n && n <= INCNN_THC_MAX_N ? 0 : -EINVAL;
}

int incnn_thc_rht(const struct incnn_thc *t, float *x, size_t n,
		  uint64_t nonce)
{
	uint64_t key = sign_key(t, nonce);
	size_t k, nb = incnn_thc_nblocks(t, n), len, off;

	if (check_n(n))
		return -EINVAL;
	for (k = 0; k < nb; k++) {
		off = block_at(t, n, k, &len);
		apply_signs(t, x + off, len, (uint32_t)off, key, 1.0f);
		fwht(t, x + off, len);
	}
	return 0;
}

int incnn_thc_rht_inverse(const struct incnn_thc *t, float *x, size_t n,
			  uint64_t nonce)
{
	uint64_t key = sign_key(t, nonce);
	size_t k, nb = incnn_thc_nblocks(t, n), len, off;

	if (check_n(n))
		return -EINVAL;
	for (k = 0; k < nb; k++) {
		off = block_at(t, n, k, &len);
		fwht(t, x + off, len);
		apply_signs(t, x + off, len, (uint32_t)off, key, 1.0f / len);
	}
	return 0;
}

/* --- worker ------------------------------------------------------------- */

/* one block of prepare, scalar: x = g (+ ef), zero padding, ||x||^2, H D x */
static float prep_ref(const float *g, const float *ef, size_t valid,
		      size_t len, float *w, uint32_t base, uint64_t key)
{
	size_t i;
	float s;

	for (i = 0; i < valid; i++)
		w[i] = ef ? g[i] + ef[i] : g[i];
	for (; i < len; i++)
		w[i] = 0;
	s = thc_sumsq_ref(w, len);
	thc_signs_ref(w, len, base, (uint32_t)key, (uint32_t)(key >> 32), 1.0f);
	thc_fwht_ref(w, len);
	return s;
}

/*
 * ||g (+ ef)|| of one block in double: the squares of floats neither
 * underflow nor overflow there. Used when the fused float sum of squares
 * s fell outside [SUMSQ_LOW, FLT_MAX] (squares below FLT_MIN lose their
 * digits, large ones overflow; an all-zero block also comes here).
 * Scalar on every path, so the norms stay identical.
 */
static float norm_wide(const float *g, const float *ef, size_t valid)
{
	double acc = 0;
	size_t i;

	for (i = 0; i < valid; i++) {
		double v = ef ? g[i] + ef[i] : g[i];

		acc += v * v;
	}
	return (float)sqrt(acc);
}

int incnn_thc_prepare(const struct incnn_thc *t, const float *grad,
		      const float *ef, size_t n, uint64_t nonce, float *work,
		      float *norms)
{
	size_t k, nb = incnn_thc_nblocks(t, n), len, off, valid;
	uint64_t key = sign_key(t, nonce);
	int rc = 0;

	if (check_n(n))
		return -EINVAL;
	for (k = 0; k < nb; k++) {
		const float *e;
		float s;

		off = block_at(t, n, k, &len);
		valid = n - off < len ? n - off : len;
		e = ef ? ef + off : NULL;
		if (t->simd) {
			s = t->simd->prep(grad + off, e, valid, len, work + off,
					  (uint32_t)off, (uint32_t)key,
					  (uint32_t)(key >> 32));
			t->simd->fwht_rest(work + off, len);
		} else {
			s = prep_ref(grad + off, e, valid, len, work + off,
				     (uint32_t)off, key);
		}
		if (s >= SUMSQ_LOW && s <= FLT_MAX)
			norms[k] = sqrtf(s);
		else
			norms[k] = norm_wide(grad + off, e, valid);
		if (!(norms[k] < NORM_LIMIT))
			rc = -ERANGE;
	}
	return rc;
}

static int check_lmax(const float *lmax, size_t nb)
{
	size_t k;

	for (k = 0; k < nb; k++)
		if (!(lmax[k] >= 0 && lmax[k] < NORM_LIMIT))
			return -ERANGE;
	return 0;
}

static float block_m(const struct incnn_thc *t, float l)
{
	return (float)(t->tp * (double)l);
}

/* 2^-E for a tiny l: the scaled norm l 2^-E is in [1, 2) */
static int tiny_exp(float l)
{
	return ilogbf(l);
}

/*
 * A block with 0 < l < TINY_NORM: y 2^-E (exact) through the scalar
 * quantiser, TINY_CHUNK coordinates at a time (a whole number of bytes
 * of indices at every b).
 */
static void quant_tiny(const struct incnn_thc *t, const float *y, size_t len,
		       float l, const struct thc_qblk *q0, uint8_t *out)
{
	int e = tiny_exp(l);
	float m = block_m(t, ldexpf(l, -e)), tmp[TINY_CHUNK];
	struct thc_qblk q = *q0;
	size_t j, i, c;

	q.s = (float)((double)t->p.gran / (2.0 * (double)m));
	for (j = 0; j < len; j += c) {
		c = len - j < TINY_CHUNK ? len - j : TINY_CHUNK;
		for (i = 0; i < c; i++)
			tmp[i] = ldexpf(y[j + i], -e);
		q.base = q0->base + (uint32_t)j;
		thc_quant_ref(t, tmp, c, &q, out + j * t->p.bits / 8);
	}
}

int incnn_thc_encode(const struct incnn_thc *t, const float *work, size_t n,
		     const float *lmax, uint64_t nonce, uint32_t rank,
		     uint8_t *idx)
{
	uint64_t key = quant_key(t, nonce);
	size_t k, nb = incnn_thc_nblocks(t, n), len, off;
	struct thc_qblk q;

	if (check_n(n))
		return -EINVAL;
	if (check_lmax(lmax, nb))
		return -ERANGE;
	q.k0 = (uint32_t)key;
	q.k1 = (uint32_t)(key >> 32) ^ rank;
	q.h = (float)t->p.gran * 0.5f;
	q.gf = (float)t->p.gran;
	for (k = 0; k < nb; k++) {
		float m = block_m(t, lmax[k]);
		uint8_t *out;

		off = block_at(t, n, k, &len);
		out = idx + off * t->p.bits / 8;
		if (lmax[k] == 0) {
			memset(out, 0, len * t->p.bits / 8);
			continue;
		}
		q.base = (uint32_t)off;
		if (lmax[k] < TINY_NORM) {
			quant_tiny(t, work + off, len, lmax[k], &q, out);
			continue;
		}
		q.s = (float)((double)t->p.gran / (2.0 * (double)m));
		if (t->simd && t->p.bits == 4)
			t->simd->quant(t, work + off, len, &q, out);
		else
			thc_quant_ref(t, work + off, len, &q, out);
	}
	return 0;
}

/* a tiny block's d = work 2^-E - dequantised idx, scalar, and H */
static void efd_tiny(const struct incnn_thc *t, float *d, const float *work,
		     const uint8_t *idx, float sc, float m, int e, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		d[i] = ldexpf(work[i], -e);
	thc_efd_ref(t, d, d, idx, sc, m, len);
	fwht(t, d, len);
}

int incnn_thc_ef_update(const struct incnn_thc *t, float *ef, size_t n,
			const float *work, const uint8_t *idx,
			const float *lmax, uint64_t nonce, float *scratch)
{
	size_t k, nb = incnn_thc_nblocks(t, n), len, off, i;
	uint64_t key = sign_key(t, nonce);

	if (check_n(n))
		return -EINVAL;
	if (check_lmax(lmax, nb))
		return -ERANGE;
	for (k = 0; k < nb; k++) {
		bool tiny = lmax[k] > 0 && lmax[k] < TINY_NORM;
		int e = tiny ? tiny_exp(lmax[k]) : 0;
		float m = block_m(t, ldexpf(lmax[k], -e));
		float sc = (float)(2.0 * (double)m / t->p.gran);
		const uint8_t *in;

		off = block_at(t, n, k, &len);
		in = idx + off * t->p.bits / 8;
		if (tiny) {
			efd_tiny(t, scratch + off, work + off, in, sc, m, e,
				 len);
		} else if (t->simd && t->p.bits == 4) {
			t->simd->efd_h(t, scratch + off, work + off, in, sc, m,
				       len);
			t->simd->fwht_rest(scratch + off, len);
		} else {
			thc_efd_ref(t, scratch + off, work + off, in, sc, m, len);
			fwht(t, scratch + off, len);
		}
		apply_signs(t, scratch + off, len, (uint32_t)off, key,
			    1.0f / len);
		for (i = 0; tiny && i < len; i++)
			scratch[off + i] = ldexpf(scratch[off + i], e);
	}
	memcpy(ef, scratch, n * sizeof(*ef));
	return 0;
}

/* --- aggregation -------------------------------------------------------- */

static int check_bits(unsigned int bits)
{
	return bits == 8 || bits == 16 || bits == 32 ? 0 : -EINVAL;
}

int incnn_thc_add_idx(const struct incnn_thc *t, void *dst,
		      unsigned int dst_bits, const void *src,
		      unsigned int src_bits, unsigned int src_workers,
		      const uint8_t *idx, size_t n)
{
	uint64_t top = ((uint64_t)src_workers + 1) * t->p.gran;
	uint32_t limit;

	if (check_n(n) || n % MIN_BLOCK || check_bits(dst_bits) ||
	    (!src) != (!src_workers) ||
	    (src && check_bits(src_bits)) ||
	    (src == dst && src_bits != dst_bits))
		return -EINVAL;
	if (top > lane_max(dst_bits))
		return -ERANGE;
	limit = (uint32_t)(top - t->p.gran);
	if (t->simd && t->p.bits == 4)
		return t->simd->add(t, dst, dst_bits, src, src_bits, limit,
				    idx, n);
	return thc_add_ref(t, dst, dst_bits, src, src_bits, limit, idx, n);
}

int incnn_thc_add_idx2(const struct incnn_thc *t, void *dst,
		       unsigned int dst_bits, const uint8_t *a,
		       const uint8_t *b, size_t n)
{
	int rc = incnn_thc_add_idx(t, dst, dst_bits, NULL, 0, 0, a, n);

	if (rc)
		return rc;
	return incnn_thc_add_idx(t, dst, dst_bits, dst, dst_bits, 1, b, n);
}

int incnn_thc_ring_bits(const struct incnn_thc *t, unsigned int nranks,
			unsigned int step)
{
	if (!nranks)
		return -EINVAL;
	if (step == 0 && nranks > 1)
		return (int)t->p.bits;
	if (step >= nranks - 1)
		return incnn_thc_lane_bits(t, nranks, NULL, 0);
	return incnn_thc_lane_bits(t, step + 1, NULL, 0);
}

void incnn_thc_ring_chunk(const struct incnn_thc *t, size_t n,
			  unsigned int nranks, unsigned int c, size_t *off,
			  size_t *len)
{
	size_t units = incnn_thc_padded(t, n) / MIN_BLOCK;
	size_t q = units / nranks, r = units % nranks;

	*off = (c * q + (c < r ? c : r)) * MIN_BLOCK;
	*len = (q + (c < r)) * MIN_BLOCK;
}

/* --- decode ------------------------------------------------------------- */

int incnn_thc_decode(const struct incnn_thc *t, float *out, size_t n,
		     const void *lanes, unsigned int bits, unsigned int workers,
		     const float *lmax, uint64_t nonce)
{
	size_t k, nb = incnn_thc_nblocks(t, n), len, off;
	uint64_t limit = (uint64_t)workers * t->p.gran;
	uint64_t key = sign_key(t, nonce);
	bool bad = false;

	if (check_n(n) || check_bits(bits) || !workers)
		return -EINVAL;
	if (limit > lane_max(bits) || check_lmax(lmax, nb))
		return -ERANGE;
	for (k = 0; k < nb; k++) {
		int e = lmax[k] > 0 && lmax[k] < TINY_NORM ?
			tiny_exp(lmax[k]) : 0;
		float m = block_m(t, ldexpf(lmax[k], -e));
		double dm = (double)m;
		const uint8_t *in;
		float sc, mb;

		off = block_at(t, n, k, &len);
		sc = (float)(2.0 * dm / ((double)t->p.gran * workers) / len);
		mb = (float)(dm / len);
		in = (const uint8_t *)lanes + off * bits / 8;
		if (t->simd) {
			bad |= !t->simd->unlane_h(out + off, in, bits,
						  (uint32_t)limit, sc, mb, len);
			t->simd->fwht_rest(out + off, len);
		} else {
			bad |= !thc_unlane_ref(out + off, in, bits,
					       (uint32_t)limit, sc, mb, len);
			thc_fwht_ref(out + off, len);
		}
		/* 2^e: a float for every e >= -149 (l >= 2^-149) */
		apply_signs(t, out + off, len, (uint32_t)off, key,
			    ldexpf(1.0f, e));
	}
	return bad ? -EBADMSG : 0;
}
