/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * AVX2 helpers for the SIMD codecs, on GCC vector extensions and
 * __builtin_ia32_* builtins (GCC and clang), which need no header: the
 * kernel cannot include <immintrin.h>. Only for files built with -mavx2.
 */
#ifndef _INCNN_CODEC_AVX2_H
#define _INCNN_CODEC_AVX2_H

#include "simd.h"

/* 8 x 32 bits, 32 x 8 bits, 16 x 8 bits, 8 x fp32 */
typedef s32 v8si __attribute__((vector_size(8 * sizeof(s32))));
typedef u32 v8su __attribute__((vector_size(8 * sizeof(u32))));
typedef char v32qi __attribute__((vector_size(32 * sizeof(u8))));
typedef char v16qi __attribute__((vector_size(16 * sizeof(u8))));
typedef float v8sf __attribute__((vector_size(8 * sizeof(u32))));

static inline v8si avx2_set1(s32 x)
{
	v8si v = { x, x, x, x, x, x, x, x };

	return v;
}

/* unaligned loads and stores (memcpy of a constant size: one move) */
static inline v8si avx2_load8(const u8 *p)
{
	v8si v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void avx2_store8(u8 *p, v8si v)
{
	memcpy(p, &v, sizeof(v));
}

static inline v16qi avx2_load16(const u8 *p)
{
	v16qi v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void avx2_store16(u8 *p, v16qi v)
{
	memcpy(p, &v, sizeof(v));
}

/* logical shifts by per-lane counts; counts >= 32 give 0 */
static inline v8si avx2_srlv(v8si a, v8si n)
{
	return __builtin_ia32_psrlv8si(a, n);
}

static inline v8si avx2_sllv(v8si a, v8si n)
{
	return __builtin_ia32_psllv8si(a, n);
}

/* lanes of a -1/0 mask as bits 7..0 */
static inline u32 avx2_mask8(v8si m)
{
	return __builtin_ia32_movmskps256((v8sf)m);
}

/* the tag word of 8 lanes from the masks of tag bits 0 and 1 */
static inline u32 avx2_tags(v8si b0, v8si b1)
{
	return incnn_simd_spread[avx2_mask8(b0)] |
	       incnn_simd_spread[avx2_mask8(b1)] << 1;
}

/* logical shift right by a constant */
static inline v8si avx2_srl(v8si a, int n)
{
	return (v8si)((v8su)a >> n);
}

/*
 * Pack the low 0/1/2/4 bytes of each lane by the tag word @tags: values
 * 0..3 to @op, values 4..7 right after them. Writes 16 bytes at @op and
 * at the end of the first half. Returns the bytes packed.
 */
static inline unsigned int avx2_pack(u8 *op, v8si v, u32 tags)
{
	u32 lo = tags & 0xff, hi = tags >> 8;
	v16qi m0 = avx2_load16(incnn_simd_enc_shuf[lo]);
	v16qi m1 = avx2_load16(incnn_simd_enc_shuf[hi]);
	v32qi mask = __builtin_shufflevector(m0, m1, 0, 1, 2, 3, 4, 5, 6, 7,
					     8, 9, 10, 11, 12, 13, 14, 15,
					     16, 17, 18, 19, 20, 21, 22, 23,
					     24, 25, 26, 27, 28, 29, 30, 31);
	v32qi p = __builtin_ia32_pshufb256((v32qi)v, mask);
	unsigned int l0 = incnn_simd_len[lo];

	avx2_store16(op, __builtin_shufflevector(p, p, 0, 1, 2, 3, 4, 5, 6, 7,
						 8, 9, 10, 11, 12, 13, 14,
						 15));
	avx2_store16(op + l0, __builtin_shufflevector(p, p, 16, 17, 18, 19,
						      20, 21, 22, 23, 24, 25,
						      26, 27, 28, 29, 30, 31));
	return l0 + incnn_simd_len[hi];
}

/*
 * Unpack what avx2_pack() packed: 8 lanes, bytes past a value's length
 * zero. Reads 16 bytes at @ip and at the end of the first half.
 */
static inline v8si avx2_unpack(const u8 *ip, u32 tags)
{
	u32 lo = tags & 0xff, hi = tags >> 8;
	v16qi m0 = avx2_load16(incnn_simd_dec_shuf[lo]);
	v16qi m1 = avx2_load16(incnn_simd_dec_shuf[hi]);
	v16qi a = avx2_load16(ip), b = avx2_load16(ip + incnn_simd_len[lo]);
	v32qi mask = __builtin_shufflevector(m0, m1, 0, 1, 2, 3, 4, 5, 6, 7,
					     8, 9, 10, 11, 12, 13, 14, 15,
					     16, 17, 18, 19, 20, 21, 22, 23,
					     24, 25, 26, 27, 28, 29, 30, 31);
	v32qi d = __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7,
					  8, 9, 10, 11, 12, 13, 14, 15,
					  16, 17, 18, 19, 20, 21, 22, 23,
					  24, 25, 26, 27, 28, 29, 30, 31);

	return (v8si)__builtin_ia32_pshufb256(d, mask);
}

/* per-lane tags (0..3) of a tag word */
static inline v8si avx2_lane_tags(u32 tags)
{
	return avx2_srlv(avx2_set1(tags), (v8si){ 0, 2, 4, 6, 8, 10, 12, 14 }) &
	       3;
}

/*
 * Lanes of tag 01 (f = 7) and 10 (f = 15) from their payload @r (bytes
 * past the payload zero): the fp32 pattern of (-1)^s * mag * 2^e,
 * s = bit f, mag = the bits below it, e = @e0, minus f if @frac
 * (incnn_fx_to_f32()). The int -> float conversion of mag < 2^15 is
 * exact and gives 2^p * 1.m, exponent field 127 + p; adding e to that
 * field gives the result. mag 0 gives +0.0.
 */
static inline v8si avx2_fx_to_f32(v8si r, v8si is2, int e0, bool frac)
{
	v8si mag = r & (avx2_set1(0x7f) | (is2 & 0x7f80));
	v8si sign = (r > mag) & avx2_set1(0x80000000u);
	v8si fm = (v8si)__builtin_convertvector(mag, v8sf);
	v8si e8 = avx2_set1((frac ? e0 - 7 : e0) * (1 << 23));
	v8si e16 = avx2_set1((frac ? e0 - 15 : e0) * (1 << 23));
	v8si v = (fm + ((e16 & is2) | (e8 & ~is2))) | sign;

	return v & ~(mag == 0);
}

/* sum of the 8 lanes */
static inline u32 avx2_hsum(v8si v)
{
	u32 s = 0;
	int j;

	for (j = 0; j < 8; j++)
		s += v[j];
	return s;
}

/*
 * Where an encoder's SIMD loop stopped: @i values done, body byte @pos;
 * if @count, their Table III classes from the per-lane counts of the
 * values with tag >= 01 (@n1), >= 10 (@n2) and 11 (@n3).
 */
static __always_inline void avx2_enc_stop(struct incnn_enc_pos *at, size_t i,
					  size_t pos, bool count, v8si n1,
					  v8si n2, v8si n3)
{
	at->i = i;
	at->pos = pos;
	if (count) {
		at->classes[3] = avx2_hsum(n3);
		at->classes[2] = avx2_hsum(n2) - at->classes[3];
		at->classes[1] = avx2_hsum(n1) - avx2_hsum(n2);
		at->classes[0] = i - avx2_hsum(n1);
	}
}

#endif /* _INCNN_CODEC_AVX2_H */
