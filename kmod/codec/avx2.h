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

/*
 * Zero @n32 (2, 4 or 8) * 32 bytes at @p by vector stores (a constant
 * memset of a few hundred bytes may become "rep stos", slow to start)
 */
static __always_inline void avx2_zero(u8 *p, unsigned int n32)
{
	const v8si z = avx2_set1(0);

	/* straight stores: a loop of them may become memset again */
	switch (n32) {
	case 8:
		avx2_store8(p + 224, z);
		avx2_store8(p + 192, z);
		avx2_store8(p + 160, z);
		avx2_store8(p + 128, z);
		fallthrough;
	case 4:
		avx2_store8(p + 96, z);
		avx2_store8(p + 64, z);
		fallthrough;
	case 2:
		avx2_store8(p + 32, z);
		avx2_store8(p, z);
		break;
	default:
		memset(p, 0, 32 * n32);
	}
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
					  v8si n2, v8si n3, size_t c1)
{
	at->i = i;
	at->pos = pos;
	if (count) {
		at->classes[3] = avx2_hsum(n3);
		at->classes[2] = avx2_hsum(n2) - at->classes[3];
		at->classes[1] = avx2_hsum(n1) - avx2_hsum(n2) + c1;
		at->classes[0] = i - avx2_hsum(n1) - c1;
	}
}

/*
 * The fast kernels (one pass, no per-call tables): classification by
 * compares, the tag bytes of 8 or 16 lanes by one pmovmskb, 8- and 16-bit
 * payloads kept at the same bit positions (sign at bit 15, a 1-byte value
 * is byte 1 of its lane: the *_shuf_hi tables).
 */
typedef short v16hi __attribute__((vector_size(16 * sizeof(u16))));
typedef long long v4di __attribute__((vector_size(4 * sizeof(u64))));

/*
 * The tag lane of a value from its class masks m1 (tag >= 01), m2
 * (>= 10) and m3 (11), each a subset of the one before: bit 7 is tag bit
 * 0, bit 15 tag bit 1.
 */
static inline v8si avx2_tag_lane(v8si m1, v8si m2, v8si m3)
{
	return ((m1 ^ m3) & 0x80) ^ (m2 & 0x8080);
}

/* the four tag bytes of 16 lanes (tag lanes @a: values 0..7, @b: 8..15) */
static inline u32 avx2_tags16(v8si a, v8si b)
{
	v4di p = (v4di)__builtin_ia32_packusdw256(a, b);

	p = __builtin_shufflevector(p, p, 0, 2, 1, 3);
	return (u32)__builtin_ia32_pmovmskb256((v32qi)p);
}

/* the two tag bytes of 8 lanes */
static inline u32 avx2_tags8(v8si a)
{
	return avx2_tags16(a, a) & 0xffff;
}

/*
 * Pack the low 0/1/2/4 bytes of each lane of @v by the tag word @tags
 * and the shuffle table @tab (incnn_simd_enc_shuf or _hi): values 0..3
 * to @op, values 4..7 right after them. Writes 16 bytes at @op and at
 * the end of the first half. Returns the bytes packed.
 */
static __always_inline unsigned int avx2_pack_tab(u8 *op, v8si v, u32 tags,
						  const u8 (*tab)[16])
{
	u32 lo = tags & 0xff, hi = (tags >> 8) & 0xff;
	v16qi m0 = avx2_load16(tab[lo]), m1 = avx2_load16(tab[hi]);
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
 * Pack the low 0/1/2/4 bytes of each lane by the tag word @tags
 * (avx2_pack_tab() with incnn_simd_enc_shuf).
 */
static inline unsigned int avx2_pack(u8 *op, v8si v, u32 tags)
{
	return avx2_pack_tab(op, v, tags, incnn_simd_enc_shuf);
}

/*
 * Unpack 8 lanes by the shuffle table @tab (incnn_simd_dec_shuf or _hi):
 * bytes past a value zero. Reads 16 bytes at @ip and at the end of the
 * first half. *@mask gets the shuffle.
 */
static __always_inline v8si avx2_unpack_tab(const u8 *ip, u32 tags,
					    const u8 (*tab)[16], v8si *mask)
{
	u32 lo = tags & 0xff, hi = (tags >> 8) & 0xff;
	v16qi m0 = avx2_load16(tab[lo]), m1 = avx2_load16(tab[hi]);
	v16qi a = avx2_load16(ip), b = avx2_load16(ip + incnn_simd_len[lo]);
	v32qi m = __builtin_shufflevector(m0, m1, 0, 1, 2, 3, 4, 5, 6, 7,
					  8, 9, 10, 11, 12, 13, 14, 15,
					  16, 17, 18, 19, 20, 21, 22, 23,
					  24, 25, 26, 27, 28, 29, 30, 31);
	v32qi d = __builtin_shufflevector(a, b, 0, 1, 2, 3, 4, 5, 6, 7,
					  8, 9, 10, 11, 12, 13, 14, 15,
					  16, 17, 18, 19, 20, 21, 22, 23,
					  24, 25, 26, 27, 28, 29, 30, 31);

	*mask = (v8si)m;
	return (v8si)__builtin_ia32_pshufb256(d, m);
}

/*
 * Unpack what avx2_pack() packed: 8 lanes, bytes past a value's length
 * zero.
 */
static inline v8si avx2_unpack(const u8 *ip, u32 tags)
{
	v8si mask;

	return avx2_unpack_tab(ip, tags, incnn_simd_dec_shuf, &mask);
}

/*
 * Unpack 8 lanes by incnn_simd_dec_shuf_hi: a 1-byte value in byte 1 of
 * its lane. *@mask gets the shuffle: the sign of a lane is clear for tag
 * 11 only, the sign of its byte 0 clear for tags 10, 11.
 */
static __always_inline v8si avx2_unpack_hi(const u8 *ip, u32 tags,
					   v8si *mask)
{
	return avx2_unpack_tab(ip, tags, incnn_simd_dec_shuf_hi, mask);
}

/* per lane: @b where the sign of @m is set, else @a */
static inline v8si avx2_blendv(v8si a, v8si b, v8si m)
{
	return (v8si)__builtin_ia32_blendvps256((v8sf)a, (v8sf)b, (v8sf)m);
}

/*
 * The values of 8 unpacked lanes (avx2_unpack_hi()): tag 11 the raw
 * lane; tags 01 and 10 (sign at bit 15, magnitude bits 14..0) the
 * magnitude times @s1 (tag 01) or @s2 (tag 10), powers of 2: the int ->
 * float conversion (< 2^15) and the product are exact, no exception can
 * occur; a zero magnitude (and tag 00) gives +0.0.
 */
static __always_inline v8si avx2_dec_lanes(v8si r, v8si mask, v8sf s1,
					   v8sf s2, bool same_scale)
{
	v8si sgn = (v8si)((v8su)r << 16), sel = (v8si)((v8su)mask << 24);
	v8si mag = __builtin_ia32_psignd256(r & 0x7fff, sgn);
	v8sf f = __builtin_convertvector(mag, v8sf);
	v8sf s = same_scale ? s2 :
		 __builtin_ia32_blendvps256(s2, s1, (v8sf)sel);

	return avx2_blendv(r, (v8si)(f * s), mask);
}

/* lanes where !(a < b), i.e. a >= b or a is NaN (one vcmpps) */
static inline v8si avx2_nlt(v8sf a, float b)
{
	v8sf vb = { b, b, b, b, b, b, b, b };

	return (v8si)__builtin_ia32_cmpps256(a, vb, 0x05);	/* NLT_UQ */
}

/* 2^e as a float, for -126 <= e <= 127 */
static inline v8sf avx2_pow2(int e)
{
	return (v8sf)avx2_set1((127 + e) << 23);
}

/*
 * ebq's lanes for 8 values @x (ebq.c), one pass, with @scale = 2^(k-1):
 * y = |x| * scale is exact (or +Inf, or a tiny value < 0.5), so
 * q = round half up of y = trunc(y + 0.5) (exact below 2^22), and the
 * classes are compares of y: q >= 1 iff y >= 0.5, q >= 2^7 iff
 * y >= 127.5, q >= 2^15 iff y >= 32767.5, or y is NaN (all classes hold
 * for NaN: the unordered "not less than"). Needs masked FP exceptions
 * (the default; kernel_fpu_begin() sets them). Returns the payload lane
 * (sign at bit 7 or 15, or the raw value); *@tl the tag lane, *@m1..3
 * the class masks.
 */
static __always_inline v8si avx2_ebq_enc_lanes(v8si x, v8sf scale, v8si *tl,
					       v8si *m1, v8si *m2, v8si *m3)
{
	v8si ax = x & 0x7fffffff;
	v8sf y = (v8sf)ax * scale;
	v8si q = __builtin_ia32_cvttps2dq256(y + 0.5f);
	v8si sh;

	*m1 = avx2_nlt(y, 0.5f);
	*m2 = avx2_nlt(y, 127.5f);
	*m3 = avx2_nlt(y, 32767.5f);
	*tl = avx2_tag_lane(*m1, *m2, *m3);
	/* the sign to bit 15 (tag 10) or bit 7 (tag 01) */
	sh = avx2_set1(24) + (*m2 & -8);
	return avx2_blendv(q | avx2_srlv(x ^ ax, sh), x, *m3);
}

/*
 * ebq's q of 8 values @x with @scale = 2^(k-1): y = |x| * scale rounded
 * half up, exactly, below 2^31 (else, and for Inf and NaN, 0x80000000,
 * >= 2^15 as unsigned). y is exact, and trunc(y + (0.5 - 2^-25)) is
 * floor(y + 0.5): y < 0.5 gives at most 1 - 3 * 2^-26, which rounds
 * below 1; y + 0.5 = n >= 1 gives n - 2^-25, which rounds to n (at n = 1
 * a tie, to the even 1.0); otherwise y's step (>= 2^-24) keeps the sum
 * within [n, n + 1).
 */
static __always_inline v8si avx2_ebq_q(v8si x, v8sf scale)
{
	v8sf y = (v8sf)(x & 0x7fffffff) * scale;
	v8sf h = (v8sf)avx2_set1(0x3effffff);	/* 0.5 - 2^-25 */

	return __builtin_ia32_cvttps2dq256(y + h);
}

/*
 * inceptionn's lanes for 8 values @x (inceptionn.c) with @eb = EB << 23
 * and @t16 = T16 << 23: the classes are compares of |x|'s bit pattern;
 * tags 01 and 10 carry floor(|x| * 2^15) (< 2^15) with the sign at bit
 * 15 (the 8-bit class sends byte 1, shifted[22:16], by
 * incnn_simd_enc_shuf_hi), tag 11 the raw value.
 */
static __always_inline v8si avx2_inc_classes(v8si ax, v8si eb, v8si t16,
					     v8si *m1, v8si *m2, v8si *m3)
{
	*m1 = ax > eb - 1;
	*m2 = ax > t16 - 1;
	*m3 = ax > avx2_set1(0x3f7fffff);
	/* floor(|x| * 2^15): shifted[22:8] below exponent 127 */
	return avx2_srlv((ax & 0x7fffff) | 0x800000,
			 avx2_set1(135) - avx2_srl(ax, 23));
}

static __always_inline v8si avx2_inc_enc_lanes(v8si x, v8si eb, v8si t16,
					       v8si *tl, v8si *m1, v8si *m2,
					       v8si *m3)
{
	v8si y = avx2_inc_classes(x & 0x7fffffff, eb, t16, m1, m2, m3);

	*tl = avx2_tag_lane(*m1, *m2, *m3);
	return avx2_blendv(y | (avx2_srl(x, 16) & 0x8000), x, *m3);
}

/*
 * inceptionn's decode(encode(x)) of 8 values @x (as avx2_dec_lanes()
 * decodes what avx2_inc_enc_lanes() sends): tag 11 x; tags 01 and 10
 * +-mag * 2^-15, mag = floor(|x| * 2^15) without its low byte (tag 01)
 * or whole (tag 10), exact; a zero magnitude (and tag 00) gives +0.0.
 */
static __always_inline v8si avx2_inc_quant_lanes(v8si x, v8si eb, v8si t16)
{
	v8si m1, m2, m3;
	v8si y = avx2_inc_classes(x & 0x7fffffff, eb, t16, &m1, &m2, &m3);
	/* psignd: -mag where x < 0; x == 0 has mag 0 */
	v8si mag = __builtin_ia32_psignd256(y & (m2 | 0x7f00) & m1, x);
	v8sf f = __builtin_convertvector(mag, v8sf) * avx2_pow2(-15);

	return avx2_blendv((v8si)f, x, m3);
}

/*
 * ebq's decode(encode(x)) of 8 values @x (ebq.c), @scale = 2^(k-1),
 * @step = 2^(1-k) (floats): q and the classes as avx2_ebq_enc_lanes() finds
 * them; tags 01 and 10 give +-q * @step (q < 2^15: exact), tag 00 +0.0,
 * tag 11 (NaN, Inf, q >= 2^15) x. Needs masked FP exceptions.
 */
static __always_inline v8si avx2_ebq_quant_lanes(v8si x, v8si scale,
						 v8si step)
{
	v8si ax = x & 0x7fffffff;
	v8sf y = (v8sf)ax * (v8sf)scale;
	v8si q = __builtin_ia32_cvttps2dq256(y + 0.5f);
	v8sf f = __builtin_convertvector(q, v8sf) * (v8sf)step;
	v8si v = ((v8si)f | (x ^ ax)) & avx2_nlt(y, 0.5f);

	return avx2_blendv(v, x, avx2_nlt(y, 32767.5f));
}

/*
 * A quantiser's whole vectors of @buf (@len bytes) in place: x becomes
 * @lanes(x, @a, @b). Returns the bytes done (the rest: 0..28).
 */
static __always_inline size_t avx2_quant_loop(u8 *buf, size_t len,
					      v8si (*lanes)(v8si x, v8si a,
							    v8si b),
					      v8si a, v8si b)
{
	size_t i;

	for (i = 0; len - i >= 32; i += 32)
		avx2_store8(buf + i, lanes(avx2_load8(buf + i), a, b));
	return i;
}

/*
 * Class counts of an encoder (see avx2_enc_stop()): per lane, of the
 * values with tag >= 01 (n1), >= 10 (n2) and 11 (n3), plus @c1 values of
 * tag 01 counted by the byte kernels.
 */
struct avx2_counts {
	v8si n1, n2, n3;
	size_t c1;
};

static __always_inline void avx2_count(struct avx2_counts *c, v8si m1,
				       v8si m2, v8si m3, bool count)
{
	if (count) {
		c->n1 -= m1;
		c->n2 -= m2;
		c->n3 -= m3;
	}
}

/*
 * @cnt (0..8) values at @p as 8 lanes, zero-padded: zeros are tag 00 in
 * both codecs (no payload, tag bits 0, not counted as sent). One masked
 * load (vpmaskmovd): the lanes past @cnt are not read, nor can they
 * fault.
 */
static __always_inline v8si avx2_load_part(const u8 *p, unsigned int cnt)
{
	v8si m = avx2_set1(cnt) > (v8si){ 0, 1, 2, 3, 4, 5, 6, 7 };

	return __builtin_ia32_maskloadd256((const v8si *)p, m);
}

/*
 * The byte kernels: 16 values (two vectors A and B) whose tags are all 00
 * or 01 (a 1-byte payload or none; in practice nearly every gradient
 * value at k <= 10), packed with one 128-bit pshufb from the 8-byte
 * tables incnn_simd_pack8/unpack8 (simd.h), indexed by the keep byte of
 * 8 values.
 */
typedef char v8qi __attribute__((vector_size(8 * sizeof(u8))));
typedef long long v2di __attribute__((vector_size(2 * sizeof(u64))));
typedef float v2sf __attribute__((vector_size(2 * sizeof(u32))));
typedef float v4sf __attribute__((vector_size(4 * sizeof(u32))));

/* bytes 0..7 of @v sign-extended to 32 bits (vpmovsxbd) */
static inline v8si avx2_sx8(v16qi v)
{
#ifdef __clang__
	return __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1, 2, 3,
							       4, 5, 6, 7),
				       v8si);
#else
	return __builtin_ia32_pmovsxbd256(v);
#endif
}

static inline u64 avx2_get64(const u8 *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* whether every lane of @a and @b is below @lim (a power of 2), unsigned */
static inline bool avx2_below(v8si a, v8si b, u32 lim)
{
	return __builtin_ia32_ptestz256((v4di)(a | b), (v4di)avx2_set1(-lim));
}

/*
 * The words of 16 lanes @a, @b (each < 2^15) as vpackusdw orders them:
 * A0-3 B0-3 in the low half, A4-7 B4-7 in the high half.
 */
static inline v16hi avx2_words(v8si a, v8si b)
{
	return __builtin_ia32_packusdw256(a, b);
}

/*
 * 16 values of tags 00/01 from their magnitudes @mw (< 2^7, words in
 * avx2_words() order), keep words @kw (the same order: 0x80 if the value
 * is sent, tag 01, else 0) and their values @xa, @xb (for the signs):
 * *@tags gets their tag word (value i's tag in bits 2i+1..2i), *@keep
 * their keep mask (bit i: value i is sent). Returns their payload bytes
 * (the magnitude, the sign at bit 7) in value order.
 */
static __always_inline v16qi avx2_bytes16(v16hi mw, v16hi kw, v8si xa,
					  v8si xb, u32 *tags, u32 *keep)
{
	v16hi sw = __builtin_ia32_packssdw256(xa, xb);
	v16hi pw = mw | ((sw >> 8) & 0x80);
	v32qi pb = __builtin_ia32_packuswb256(pw, kw);
	/* the payload bytes in the low half, the keep bytes in the high */
	v8si v = __builtin_ia32_permvarsi256((v8si)pb,
					     (v8si){ 0, 4, 1, 5, 2, 6, 3, 7 });
	v4di k = __builtin_shufflevector((v4di)kw, (v4di)kw, 0, 2, 1, 3);

	*tags = (u32)__builtin_ia32_pmovmskb256((v32qi)k);
	*keep = (u32)__builtin_ia32_pmovmskb256((v32qi)v) >> 16;
	return (v16qi)__builtin_shufflevector((v4di)v, (v4di)v, 0, 1);
}

static inline void avx2_put64(u8 *p, u64 v)
{
	memcpy(p, &v, sizeof(v));
}

/* the high 8 bytes of @r at @p (vmovhps: one store, no shuffle) */
static inline void avx2_put_hi64(u8 *p, v2di r)
{
#ifdef __clang__
	avx2_put64(p, r[1]);
#else
	__builtin_ia32_storehps((v2sf *)p, (v4sf)r);
#endif
}

/*
 * Pack the bytes @p of 16 values of tags 00/01 by their keep mask @keep:
 * the packed bytes of values 0..7 in element 0, of 8..15 in element 1
 * (their counts: popcount of the mask's bytes).
 */
static __always_inline v2di avx2_pack16(v16qi p, u32 keep)
{
	v2di m = { avx2_get64(incnn_simd_pack8[keep & 0xff]),
		   avx2_get64(incnn_simd_pack8[keep >> 8]) };

	/* values 8..15 are source bytes 8..15 */
	m |= (v2di){ 0, 0x0808080808080808ll };
	return (v2di)__builtin_ia32_pshufb128(p, (v16qi)m);
}

/*
 * Unpack 16 values of tags 00/01 (tag word @tags; the keep byte of 8
 * values with 16 tags t is (t | t >> 7) & 0xff) from their payload
 * bytes, values 0..7 at @lo, 8..15 at @hi (8 readable bytes at each):
 * per value +-m, m the payload's bits 6..0, negative if its bit 7 is set
 * (0 for tag 00), as 32-bit lanes: values 0..7 in *@a, 8..15 in *@b.
 */
static __always_inline void avx2_unpack16(const u8 *lo, const u8 *hi, u32 tags,
					  v8si *a, v8si *b)
{
	u32 kb = tags | tags >> 7, il = kb & 0xff, ih = (kb >> 16) & 0xff;
	v2di s = { avx2_get64(lo), avx2_get64(hi) };
	v2di m = { avx2_get64(incnn_simd_unpack8[il]),
		   avx2_get64(incnn_simd_unpack8[ih]) };
	v16qi r, v;

	/* values 8..15 come from source bytes 8..15 */
	m |= (v2di){ 0, 0x0808080808080808ll };
	r = __builtin_ia32_pshufb128((v16qi)s, (v16qi)m);
	v = __builtin_ia32_psignb128(r & 0x7f, r);
	*a = avx2_sx8(v);
	*b = avx2_sx8((v16qi)__builtin_shufflevector((v2di)v, (v2di)v, 1, 0));
}

#endif /* _INCNN_CODEC_AVX2_H */
