// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * THC's scalar reference kernels: what thc.c runs without AVX2 and what
 * thc_avx2.c runs on its tails, bit for bit the results of the AVX2
 * kernels (selftests/collective/thc_test.c). Below both.
 */
#include <errno.h>
#include <string.h>

#include "thc_int.h"

/* 16 partial sums (coordinate i into sum i % 16), then a fixed tree */
float thc_sumsq_ref(const float *x, size_t len)
{
	float acc[16] = { 0 }, r[8];
	size_t i;
	int j;

	for (i = 0; i < len; i++)
		acc[i % 16] += x[i] * x[i];
	for (j = 0; j < 8; j++)
		r[j] = acc[j] + acc[j + 8];
	for (j = 0; j < 4; j++)
		r[j] = r[j] + r[j + 4];
	for (j = 0; j < 2; j++)
		r[j] = r[j] + r[j + 2];
	return r[0] + r[1];
}

/* unnormalised Walsh-Hadamard, stages h = 1, 2, 4, ..., len / 2 */
void thc_fwht_ref(float *x, size_t len)
{
	size_t h, i, j;

	for (h = 1; h < len; h <<= 1)
		for (i = 0; i < len; i += 2 * h)
			for (j = i; j < i + h; j++) {
				float a = x[j], b = x[j + h];

				x[j] = a + b;
				x[j + h] = a - b;
			}
}

static void put_idx(uint8_t *idx, unsigned int bits, size_t i, unsigned int v)
{
	size_t bit = i * bits;

	if (bits == 8) {
		idx[i] = v;
		return;
	}
	if (bit % 8 == 0)
		idx[bit / 8] = 0;
	idx[bit / 8] |= v << (bit % 8);
}

static unsigned int get_idx(const uint8_t *idx, unsigned int bits, size_t i)
{
	size_t bit = i * bits;

	return (idx[bit / 8] >> (bit % 8)) & ((1u << bits) - 1);
}

/* stochastic rounding of one block; idx at the block's first byte */
void thc_quant_ref(const struct incnn_thc *t, const float *y, size_t len,
		   const struct thc_qblk *q, uint8_t *idx)
{
	int gm1 = (int)t->p.gran - 1;
	size_t i;

	for (i = 0; i < len; i++) {
		float u = y[i] * q->s + q->h, pr, rf;
		uint32_t e, r;
		int c;

		u = u > 0.0f ? u : 0.0f;	/* as vmaxps (NaN -> 0) */
		u = u < q->gf ? u : q->gf;	/* as vminps */
		c = (int)u;
		c = c < gm1 ? c : gm1;
		e = t->cell[c];
		pr = (u - (float)(int)((e >> 8) & 0xff)) /
		     (float)(int)(e >> 16);
		r = thc_hash32(q->base + (uint32_t)i, q->k0, q->k1) >> 8;
		rf = (float)(int)r * 0x1p-24f;
		put_idx(idx, t->p.bits, i, (e & 0xff) + (rf < pr));
	}
}

static uint32_t get_lane(const void *p, unsigned int bits, size_t i)
{
	if (bits == 8)
		return ((const uint8_t *)p)[i];
	if (bits == 16)
		return ((const uint16_t *)p)[i];
	return ((const uint32_t *)p)[i];
}

static void put_lane(void *p, unsigned int bits, size_t i, uint32_t v)
{
	if (bits == 8)
		((uint8_t *)p)[i] = v;
	else if (bits == 16)
		((uint16_t *)p)[i] = v;
	else
		((uint32_t *)p)[i] = v;
}

/* dst = src + T[idx] over n coordinates; -EBADMSG if src > limit */
int thc_add_ref(const struct incnn_thc *t, void *dst, unsigned int dbits,
		const void *src, unsigned int sbits, uint32_t limit,
		const uint8_t *idx, size_t n)
{
	bool bad = false;
	size_t i;

	for (i = 0; i < n; i++) {
		uint32_t s = src ? get_lane(src, sbits, i) : 0;

		bad |= s > limit;
		put_lane(dst, dbits, i, s + t->table[get_idx(idx, t->p.bits, i)]);
	}
	return bad ? -EBADMSG : 0;
}

/*
 * D, and a scale: x[i] = +-x[i] * scale, the sign of coordinate c =
 * base + i being bit c % 32 of the hash of c / 32
 */
void thc_signs_ref(float *x, size_t len, uint32_t base, uint32_t k0,
		   uint32_t k1, float scale)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		uint32_t c = base + (uint32_t)i, v;

		if (i == 0 || c % 32 == 0)
			s = thc_hash32(c / 32, k0, k1);
		memcpy(&v, &x[i], 4);
		v ^= ((s >> (c % 32)) & 1) << 31;
		memcpy(&x[i], &v, 4);
		x[i] *= scale;
	}
}

/* out = (float)lane * sc - mb; false if a lane exceeds limit */
bool thc_unlane_ref(float *out, const void *lanes, unsigned int bits,
		    uint32_t limit, float sc, float mb, size_t len)
{
	bool bad = false;
	size_t i;

	for (i = 0; i < len; i++) {
		uint32_t y = get_lane(lanes, bits, i);

		bad |= y > limit;
		out[i] = (float)(int32_t)y * sc - mb;
	}
	return !bad;
}

/* d = work - (T[idx] * sc - m), one block, scalar */
void thc_efd_ref(const struct incnn_thc *t, float *d, const float *work,
		 const uint8_t *idx, float sc, float m, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		d[i] = work[i] - ((float)t->table[get_idx(idx, t->p.bits, i)] *
				  sc - m);
}
