/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * ebq's AVX2 kernels for 16 values (see ebq_avx2.c), shared by ebq and
 * zebq (whose flagged groups carry ebq's tags and payloads): built with
 * -mavx2 only.
 */
#ifndef _INCNN_CODEC_EBQ_AVX2_H
#define _INCNN_CODEC_EBQ_AVX2_H

#include "avx2.h"

#define STEP		8
/* a 16-byte store (load) at most 16 bytes in */
#define STEP_ROOM	(16 + 16)
/* 16 values: two steps */
#define WIDE		16
#define WIDE_ROOM	(2 * STEP_ROOM)
/* the byte kernels' payload: 8-byte stores (loads) at most 8 bytes in */
#define BYTES_ROOM	16
/* tag bits 1 of 16 values: any tag 10 or 11 */
#define TAGS_WIDE	0xaaaaaaaau

/*
 * Encode 16 values, 8 in @xa and 8 in @xb (ebq_enc16(): 8 at @pa and 8
 * at @pb): their tag word (4 bytes) at
 * @tp, their payload at @op (WIDE_ROOM bytes of room). Returns the payload
 * bytes; counts the classes only if @count (a constant after inlining).
 */
static __always_inline unsigned int ebq_enc16_v(v8si xa, v8si xb,
						v8sf scale, u8 *tp, u8 *op,
						struct avx2_counts *c,
						bool count)
{
	v8si qa = avx2_ebq_q(xa, scale), qb = avx2_ebq_q(xb, scale);
	v8si ta, tb, m1, m2, m3, a, b;
	unsigned int l;
	u32 tags;

	if (likely(avx2_below(qa, qb, 0x80))) {
		v16hi qw = avx2_words(qa, qb);
		u32 keep;
		/* bit 7 of the low byte: q != 0; the high byte 0 */
		v16qi p = avx2_bytes16(qw, qw + 0x7f, xa, xb, &tags, &keep);
		v2di r = avx2_pack16(p, keep);

		put_unaligned_le32(tags, tp);
		l = __builtin_popcount(keep & 0xff);
		avx2_put64(op, r[0]);
		avx2_put_hi64(op + l, r);
		if (count)
			c->c1 += __builtin_popcount(keep);
		return __builtin_popcount(keep);
	}
	a = avx2_ebq_enc_lanes(xa, scale, &ta, &m1, &m2, &m3);
	avx2_count(c, m1, m2, m3, count);
	b = avx2_ebq_enc_lanes(xb, scale, &tb, &m1, &m2, &m3);
	avx2_count(c, m1, m2, m3, count);
	tags = avx2_tags16(ta, tb);
	put_unaligned_le32(tags, tp);
	l = avx2_pack_tab(op, a, tags, incnn_simd_enc_shuf);
	return l + avx2_pack_tab(op + l, b, tags >> 16, incnn_simd_enc_shuf);
}

static __always_inline unsigned int ebq_enc16(const u8 *pa, const u8 *pb,
					      v8sf scale, u8 *tp, u8 *op,
					      struct avx2_counts *c,
					      bool count)
{
	return ebq_enc16_v(avx2_load8(pa), avx2_load8(pb), scale, tp, op, c,
			   count);
}

/* Decode 8 values of tag word @tags from @ip (STEP_ROOM readable). */
static __always_inline unsigned int ebq_dec8(const u8 *ip, u32 tags,
					     v8sf s1, v8sf s2, u8 *out)
{
	v8si mask, r = avx2_unpack_hi(ip, tags, &mask);

	avx2_store8(out, avx2_dec_lanes(r, mask, s1, s2, false));
	return incnn_simd_len[tags & 0xff] + incnn_simd_len[(tags >> 8) & 0xff];
}

/* the payload bytes of the 16 values of tag word @tags */
static inline unsigned int ebq_len16(u32 tags)
{
	if (!(tags & TAGS_WIDE))
		return __builtin_popcount(tags);
	return incnn_simd_len[tags & 0xff] + incnn_simd_len[(tags >> 8) & 0xff] +
	       incnn_simd_len[(tags >> 16) & 0xff] + incnn_simd_len[tags >> 24];
}

/*
 * Decode 16 values of tag word @tags from @ip (WIDE_ROOM readable, or
 * BYTES_ROOM if the tags are 00 and 01 only): values 0..7 to @oa, 8..15
 * to @ob. Returns the payload bytes.
 */
/* ebq_dec16() of tags 00/01 only: the byte kernel (BYTES_ROOM readable) */
static __always_inline unsigned int ebq_dec16_bytes(const u8 *ip, u32 tags,
						    v8sf s2, u8 *oa, u8 *ob)
{
	v8si a, b;

	avx2_unpack16(ip, ip + __builtin_popcount(tags & 0xffff), tags, &a,
		      &b);
	avx2_store8(oa, (v8si)(__builtin_convertvector(a, v8sf) * s2));
	avx2_store8(ob, (v8si)(__builtin_convertvector(b, v8sf) * s2));
	return __builtin_popcount(tags);
}

static __always_inline unsigned int ebq_dec16(const u8 *ip, u32 tags,
					      v8sf s1, v8sf s2, u8 *oa,
					      u8 *ob)
{
	unsigned int l;

	if (likely(!(tags & TAGS_WIDE)))
		return ebq_dec16_bytes(ip, tags, s2, oa, ob);
	l = ebq_dec8(ip, tags, s1, s2, oa);
	return l + ebq_dec8(ip + l, tags >> 16, s1, s2, ob);
}

#endif /* _INCNN_CODEC_EBQ_AVX2_H */
