// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * THC's hot loops with AVX2: the Walsh-Hadamard butterflies, the sum of
 * squares, quantisation with 4-bit packing, and the integer lane sums.
 * Each computes what its *_ref twin in thc_ref.c computes, the same float
 * operations in the same order (a - b as a + (-b), a + b as b + a: both
 * exact identities of IEEE arithmetic), so the results are bit-identical.
 * Built with -mavx2 (no FMA; the Makefile's rule for *_avx2.c); without
 * it, thc_avx2_ops() is NULL and the scalar code runs.
 */
#include <string.h>

#include "thc_int.h"

#ifdef __AVX2__
#include <errno.h>
#include <immintrin.h>

/* stages h = 1, 2, 4 inside one vector: r = swapped + (+-v) */
static inline __m256 h8(__m256 v)
{
	const __m256 m1 = _mm256_setr_ps(0, -0.0f, 0, -0.0f, 0, -0.0f, 0, -0.0f);
	const __m256 m2 = _mm256_setr_ps(0, 0, -0.0f, -0.0f, 0, 0, -0.0f, -0.0f);
	const __m256 m4 = _mm256_setr_ps(0, 0, 0, 0, -0.0f, -0.0f, -0.0f, -0.0f);

	v = _mm256_add_ps(_mm256_permute_ps(v, 0xb1), _mm256_xor_ps(v, m1));
	v = _mm256_add_ps(_mm256_permute_ps(v, 0x4e), _mm256_xor_ps(v, m2));
	return _mm256_add_ps(_mm256_permute2f128_ps(v, v, 1), _mm256_xor_ps(v, m4));
}

static void fwht_in8(float *x, size_t len)
{
	size_t i;

	for (i = 0; i < len; i += 8)
		_mm256_storeu_ps(x + i, h8(_mm256_loadu_ps(x + i)));
}

/* stage h (>= 8) */
static void fwht_r2(float *x, size_t len, size_t h)
{
	size_t i, j;

	for (i = 0; i < len; i += 2 * h)
		for (j = i; j < i + h; j += 8) {
			__m256 a = _mm256_loadu_ps(x + j);
			__m256 b = _mm256_loadu_ps(x + j + h);

			_mm256_storeu_ps(x + j, _mm256_add_ps(a, b));
			_mm256_storeu_ps(x + j + h, _mm256_sub_ps(a, b));
		}
}

/* stages h and 2h in one pass */
static void fwht_r4(float *x, size_t len, size_t h)
{
	size_t i, j;

	for (i = 0; i < len; i += 4 * h)
		for (j = i; j < i + h; j += 8) {
			__m256 v0 = _mm256_loadu_ps(x + j);
			__m256 v1 = _mm256_loadu_ps(x + j + h);
			__m256 v2 = _mm256_loadu_ps(x + j + 2 * h);
			__m256 v3 = _mm256_loadu_ps(x + j + 3 * h);
			__m256 t0 = _mm256_add_ps(v0, v1), t1 = _mm256_sub_ps(v0, v1);
			__m256 t2 = _mm256_add_ps(v2, v3), t3 = _mm256_sub_ps(v2, v3);

			_mm256_storeu_ps(x + j, _mm256_add_ps(t0, t2));
			_mm256_storeu_ps(x + j + 2 * h, _mm256_sub_ps(t0, t2));
			_mm256_storeu_ps(x + j + h, _mm256_add_ps(t1, t3));
			_mm256_storeu_ps(x + j + 3 * h, _mm256_sub_ps(t1, t3));
		}
}

static void fwht_rest_avx2(float *x, size_t len)
{
	size_t h = 8;

	for (; 4 * h <= len; h *= 4)
		fwht_r4(x, len, h);
	if (2 * h <= len)
		fwht_r2(x, len, h);
}

static void fwht_avx2(float *x, size_t len)
{
	fwht_in8(x, len);
	fwht_rest_avx2(x, len);
}

static __m256i hash8(__m256i i, __m256i k0, __m256i k1)
{
	__m256i x = _mm256_mullo_epi32(_mm256_add_epi32(i, k0),
				       _mm256_set1_epi32((int)0x9e3779b1u));

	x = _mm256_xor_si256(x, k1);
	x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
	x = _mm256_mullo_epi32(x, _mm256_set1_epi32(0x7feb352d));
	x = _mm256_xor_si256(x, _mm256_srli_epi32(x, 15));
	x = _mm256_mullo_epi32(x, _mm256_set1_epi32((int)0x846ca68bu));
	return _mm256_xor_si256(x, _mm256_srli_epi32(x, 16));
}

/* 8 indices of thc_quant_ref, as int32 */
static __m256i quant8(const struct incnn_thc *t, const float *y, uint32_t at,
		      const struct thc_qblk *q)
{
	const __m256i ff = _mm256_set1_epi32(0xff);
	__m256 u = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(y),
					       _mm256_set1_ps(q->s)),
				 _mm256_set1_ps(q->h));
	__m256i c, e, r, lt;
	__m256 pr, rf;

	u = _mm256_max_ps(u, _mm256_setzero_ps());
	u = _mm256_min_ps(u, _mm256_set1_ps(q->gf));
	c = _mm256_min_epi32(_mm256_cvttps_epi32(u),
			     _mm256_set1_epi32((int)t->p.gran - 1));
	e = _mm256_i32gather_epi32((const int *)t->cell, c, 4);
	pr = _mm256_div_ps(_mm256_sub_ps(u, _mm256_cvtepi32_ps(_mm256_and_si256(
					_mm256_srli_epi32(e, 8), ff))),
			   _mm256_cvtepi32_ps(_mm256_srli_epi32(e, 16)));
	r = hash8(_mm256_add_epi32(_mm256_set1_epi32((int)at),
				   _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)),
		  _mm256_set1_epi32((int)q->k0), _mm256_set1_epi32((int)q->k1));
	rf = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(r, 8)),
			   _mm256_set1_ps(0x1p-24f));
	lt = _mm256_castps_si256(_mm256_cmp_ps(rf, pr, _CMP_LT_OQ));
	return _mm256_sub_epi32(_mm256_and_si256(e, ff), lt);
}

static void quant_avx2(const struct incnn_thc *t, const float *y, size_t len,
		       const struct thc_qblk *q, uint8_t *idx)
{
	const __m256i perm = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	struct thc_qblk tail;
	size_t i;

	for (i = 0; i + 32 <= len; i += 32) {
		uint32_t at = q->base + (uint32_t)i;
		__m256i i0 = quant8(t, y + i, at, q);
		__m256i i1 = quant8(t, y + i + 8, at + 8, q);
		__m256i i2 = quant8(t, y + i + 16, at + 16, q);
		__m256i i3 = quant8(t, y + i + 24, at + 24, q);
		__m256i b = _mm256_packus_epi16(_mm256_packus_epi32(i0, i1),
						_mm256_packus_epi32(i2, i3));
		__m256i w;

		b = _mm256_permutevar8x32_epi32(b, perm);
		w = _mm256_maddubs_epi16(b, _mm256_set1_epi16(0x1001));
		w = _mm256_permute4x64_epi64(_mm256_packus_epi16(w, w), 0x08);
		_mm_storeu_si128((__m128i *)(idx + i / 2),
				 _mm256_castsi256_si128(w));
	}
	if (i < len) {
		tail = *q;
		tail.base += (uint32_t)i;
		thc_quant_ref(t, y + i, len - i, &tail, idx + i / 2);
	}
}

/* all of the unsigned maxima in mx <= limit */
static bool ok8(__m256i mx, uint32_t limit)
{
	__m256i l = _mm256_set1_epi8((char)(limit > 0xff ? 0xff : limit));

	return _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(mx, l), l)) == -1;
}

static bool ok16(__m256i mx, uint32_t limit)
{
	__m256i l = _mm256_set1_epi16((short)(limit > 0xffff ? 0xffff : limit));

	return _mm256_movemask_epi8(_mm256_cmpeq_epi16(_mm256_max_epu16(mx, l), l)) == -1;
}

static bool ok32(__m256i mx, uint32_t limit)
{
	__m256i l = _mm256_set1_epi32((int)limit);

	return _mm256_movemask_epi8(_mm256_cmpeq_epi32(_mm256_max_epu32(mx, l), l)) == -1;
}

/* src lanes 8k .. 8k + 7 of a 32-coordinate step, widened to 32 bits */
static __m256i src32(const void *src, unsigned int sbits, size_t i)
{
	if (sbits == 8)
		return _mm256_cvtepu8_epi32(_mm_loadl_epi64(
				(const __m128i *)((const uint8_t *)src + i)));
	if (sbits == 16)
		return _mm256_cvtepu16_epi32(_mm_loadu_si128(
				(const __m128i *)((const uint16_t *)src + i)));
	return _mm256_loadu_si256((const __m256i *)((const uint32_t *)src + i));
}

static __m256i src16(const void *src, unsigned int sbits, size_t i)
{
	if (sbits == 8)
		return _mm256_cvtepu8_epi16(_mm_loadu_si128(
				(const __m128i *)((const uint8_t *)src + i)));
	return _mm256_loadu_si256((const __m256i *)((const uint16_t *)src + i));
}

/* 32 coordinates: T[idx] as 32 bytes */
static __m256i vals32(const __m128i tab, const uint8_t *idx)
{
	const __m128i f = _mm_set1_epi8(0x0f);
	__m128i raw = _mm_loadu_si128((const __m128i *)idx);
	__m128i lo = _mm_shuffle_epi8(tab, _mm_and_si128(raw, f));
	__m128i hi = _mm_shuffle_epi8(tab, _mm_and_si128(_mm_srli_epi16(raw, 4), f));

	return _mm256_set_m128i(_mm_unpackhi_epi8(lo, hi),
				_mm_unpacklo_epi8(lo, hi));
}

static bool add8(const __m128i tab, uint8_t *dst, const uint8_t *src,
		 uint32_t limit, const uint8_t *idx, size_t n)
{
	__m256i mx = _mm256_setzero_si256();
	size_t i;

	for (i = 0; i < n; i += 32) {
		__m256i v = vals32(tab, idx + i / 2);

		if (src) {
			__m256i s = _mm256_loadu_si256((const __m256i *)(src + i));

			mx = _mm256_max_epu8(mx, s);
			v = _mm256_add_epi8(v, s);
		}
		_mm256_storeu_si256((__m256i *)(dst + i), v);
	}
	return ok8(mx, limit);
}

static bool add16(const __m128i tab, uint16_t *dst, const void *src,
		  unsigned int sbits, uint32_t limit, const uint8_t *idx,
		  size_t n)
{
	__m256i mx = _mm256_setzero_si256();
	size_t i, k;

	for (i = 0; i < n; i += 32) {
		__m256i v = vals32(tab, idx + i / 2);
		__m256i w[2] = { _mm256_cvtepu8_epi16(_mm256_castsi256_si128(v)),
				 _mm256_cvtepu8_epi16(_mm256_extracti128_si256(v, 1)) };

		for (k = 0; k < 2; k++) {
			if (src) {
				__m256i s = src16(src, sbits, i + 16 * k);

				mx = _mm256_max_epu16(mx, s);
				w[k] = _mm256_add_epi16(w[k], s);
			}
			_mm256_storeu_si256((__m256i *)(dst + i + 16 * k), w[k]);
		}
	}
	return ok16(mx, limit);
}

static bool add32(const __m128i tab, uint32_t *dst, const void *src,
		  unsigned int sbits, uint32_t limit, const uint8_t *idx,
		  size_t n)
{
	__m256i mx = _mm256_setzero_si256();
	uint8_t b[32];
	size_t i, k;

	for (i = 0; i < n; i += 32) {
		_mm256_storeu_si256((__m256i *)b, vals32(tab, idx + i / 2));
		for (k = 0; k < 4; k++) {
			__m256i w = _mm256_cvtepu8_epi32(
					_mm_loadl_epi64((const __m128i *)(b + 8 * k)));

			if (src) {
				__m256i s = src32(src, sbits, i + 8 * k);

				mx = _mm256_max_epu32(mx, s);
				w = _mm256_add_epi32(w, s);
			}
			_mm256_storeu_si256((__m256i *)(dst + i + 8 * k), w);
		}
	}
	return ok32(mx, limit);
}

static int add_avx2(const struct incnn_thc *t, void *dst, unsigned int dbits,
		    const void *src, unsigned int sbits, uint32_t limit,
		    const uint8_t *idx, size_t n)
{
	__m128i tab = _mm_loadu_si128((const __m128i *)t->table);
	size_t m = n & ~(size_t)31;
	bool ok;
	int rc;

	if (src && sbits > dbits)
		return thc_add_ref(t, dst, dbits, src, sbits, limit, idx, n);
	if (dbits == 8)
		ok = add8(tab, dst, src, limit, idx, m);
	else if (dbits == 16)
		ok = add16(tab, dst, src, sbits, limit, idx, m);
	else
		ok = add32(tab, dst, src, sbits, limit, idx, m);
	rc = 0;
	if (m < n)
		rc = thc_add_ref(t, (uint8_t *)dst + m * dbits / 8, dbits,
				 src ? (const uint8_t *)src + m * sbits / 8 : NULL,
				 sbits, limit, idx + m / 2, n - m);
	return ok ? rc : -EBADMSG;
}

/* the sign mask of D for coordinates c .. c + 7 (c % 8 == 0) of word s */
static inline __m256 sign8(uint32_t s, uint32_t c)
{
	const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
	__m256i m = _mm256_and_si256(_mm256_set1_epi32((int)((s >> (c % 32)) & 0xff)),
				     bit);

	return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cmpeq_epi32(m, bit), 31));
}

static void signs_avx2(float *x, size_t len, uint32_t base, uint32_t k0,
		       uint32_t k1, float scale)
{
	const __m256 sc = _mm256_set1_ps(scale);
	uint32_t s = 0;
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint32_t c = base + (uint32_t)i;

		if (i == 0 || c % 32 == 0)
			s = thc_hash32(c / 32, k0, k1);
		_mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_xor_ps(
				_mm256_loadu_ps(x + i), sign8(s, c)), sc));
	}
}

static float prep_avx2(const float *g, const float *ef, size_t valid,
		       size_t len, float *w, uint32_t base, uint32_t k0,
		       uint32_t k1)
{
	__m256 acc[2] = { _mm256_setzero_ps(), _mm256_setzero_ps() }, r;
	uint32_t s = 0;
	size_t i, j;
	__m128 q;

	for (i = 0; i < len; i += 8) {
		uint32_t c = base + (uint32_t)i;
		__m256 v;

		if (i + 8 <= valid) {
			v = _mm256_loadu_ps(g + i);
			if (ef)
				v = _mm256_add_ps(v, _mm256_loadu_ps(ef + i));
		} else {
			float tmp[8];

			for (j = 0; j < 8; j++)
				tmp[j] = i + j < valid ?
					 (ef ? g[i + j] + ef[i + j] : g[i + j]) : 0;
			v = _mm256_loadu_ps(tmp);
		}
		acc[(i / 8) % 2] = _mm256_add_ps(acc[(i / 8) % 2],
						 _mm256_mul_ps(v, v));
		if (i == 0 || c % 32 == 0)
			s = thc_hash32(c / 32, k0, k1);
		_mm256_storeu_ps(w + i, h8(_mm256_xor_ps(v, sign8(s, c))));
	}
	r = _mm256_add_ps(acc[0], acc[1]);
	q = _mm_add_ps(_mm256_castps256_ps128(r), _mm256_extractf128_ps(r, 1));
	q = _mm_add_ps(q, _mm_movehl_ps(q, q));
	q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 1));
	return _mm_cvtss_f32(q);
}

static bool unlane_h_avx2(float *out, const void *lanes, unsigned int bits,
			  uint32_t limit, float sc, float mb, size_t len)
{
	const __m256 vs = _mm256_set1_ps(sc), vm = _mm256_set1_ps(mb);
	__m256i mx = _mm256_setzero_si256();
	size_t i;

	for (i = 0; i < len; i += 8) {
		__m256i y = src32(lanes, bits, i);

		mx = _mm256_max_epu32(mx, y);
		_mm256_storeu_ps(out + i, h8(_mm256_sub_ps(_mm256_mul_ps(
					_mm256_cvtepi32_ps(y), vs), vm)));
	}
	return ok32(mx, limit);
}

static void efd_h_avx2(const struct incnn_thc *t, float *d, const float *work,
		       const uint8_t *idx, float sc, float m, size_t len)
{
	__m128i tab = _mm_loadu_si128((const __m128i *)t->table);
	const __m256 vs = _mm256_set1_ps(sc), vm = _mm256_set1_ps(m);
	uint8_t b[32];
	size_t i, k;

	for (i = 0; i + 32 <= len; i += 32) {
		_mm256_storeu_si256((__m256i *)b, vals32(tab, idx + i / 2));
		for (k = 0; k < 32; k += 8) {
			__m256 v = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
					_mm_loadl_epi64((const __m128i *)(b + k))));
			__m256 x = _mm256_sub_ps(_mm256_mul_ps(v, vs), vm);

			_mm256_storeu_ps(d + i + k, h8(_mm256_sub_ps(
					_mm256_loadu_ps(work + i + k), x)));
		}
	}
	if (i < len) {
		thc_efd_ref(t, d + i, work + i, idx + i / 2, sc, m, len - i);
		fwht_in8(d + i, len - i);
	}
}

static const struct thc_simd_ops ops = {
	.efd_h = efd_h_avx2,
	.prep = prep_avx2,
	.unlane_h = unlane_h_avx2,
	.fwht_rest = fwht_rest_avx2,
	.signs = signs_avx2,
	.fwht = fwht_avx2,
	.quant = quant_avx2,
	.add = add_avx2,
};

const struct thc_simd_ops *thc_avx2_ops(void)
{
	return &ops;
}

#else

const struct thc_simd_ops *thc_avx2_ops(void)
{
	return NULL;
}

#endif /* __AVX2__ */
