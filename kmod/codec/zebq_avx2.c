// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * zebq with AVX2: one group (8 values) per vector. Flags: a compare of
 * the exponent fields and a movemask per group, a flag byte per 64
 * values. Encode: ebq's q, tags and pshufb packing, for the flagged
 * groups only. Decode: eight zeros for a group without a flag, else
 * ebq's unpacking. The scalar code in zebq.c finishes the buffer and
 * decides every error. Built with -mavx2; see simd.h.
 */
#include "codec.h"

#ifdef INCNN_CODEC_AVX2
#include "avx2.h"
#include "zebq.h"

#define GROUP		8
/* a 16-byte store at most 16 bytes in */
#define STEP_ROOM	(16 + 16)

/* the flag bytes of whole runs of 64 values; returns the groups done */
static size_t zebq_flags_avx2(u8 k, const u8 *in, size_t n, u8 *flags)
{
	v8si lim = avx2_set1(INCNN_ZEBQ_NZ_EXP(k) - 1);
	size_t b;

	for (b = 0; n - 64 * b >= 64; b++) {
		const u8 *p = in + 256 * b;
		u32 f = 0;
		int j;

		for (j = 0; j < 8; j++) {
			v8si e = avx2_load8(p + 32 * j) & 0x7f800000;

			f |= (u32)(avx2_mask8(e > lim) != 0) << j;
		}
		flags[b] = f;
	}
	return 8 * b;
}

/* Encode the 8 values at @ip; their tags in *tagsp, payload at @op. */
static __always_inline unsigned int zebq_enc_step(u8 k, const u8 *ip,
						  u8 *op, u32 *tagsp,
						  v8si *n1, v8si *n2, v8si *n3)
{
	v8si x = avx2_load8(ip);
	v8si s = avx2_set1(151 - k) - (avx2_srl(x, 23) & 0xff);
	/* as in ebq_avx2.c: shifts >= 32 give 0, s <= 0 is raw */
	v8si sc = s & ~(s >> 31);
	v8si m = (x & 0x7fffff) | 0x800000;
	v8si q = avx2_srlv(m + avx2_sllv(avx2_set1(1), sc - 1), sc);
	v8si m1 = q > avx2_set1(0), m2 = q > avx2_set1(0x7f);
	v8si m3 = q > avx2_set1(0x7fff);
	v8si sign = avx2_sllv(avx2_srl(x, 31), avx2_set1(7) + (m2 & 8));
	v8si v = (x & m3) | ((sign | q) & ~m3);

	*tagsp = avx2_tags((m1 & ~m2) | m3, m2);
	*n1 -= m1;
	*n2 -= m2;
	*n3 -= m3;
	return avx2_pack(op, v, *tagsp);
}

/*
 * The flagged whole groups, while the output has room,
 * from body byte @pos, their tags from @tp; their Table III counts only
 * if @count (a constant after inlining).
 */
static __always_inline void zebq_enc_steps(u8 k, const u8 *in, size_t n,
					   u8 *out, size_t cap, size_t pos,
					   size_t tp, struct incnn_enc_pos *at,
					   bool count)
{
	v8si n1 = avx2_set1(0), n2 = n1, n3 = n1;
	size_t b, ng = n / GROUP, nb = (ng + 7) / 8, g = 0;

	for (b = 0; b < nb; b++) {
		/* the whole groups of this flag byte */
		u32 f = out[b] & (ng - 8 * b >= 8 ? 0xff :
				  (1u << (ng - 8 * b)) - 1);

		while (f) {
			u32 tags;

			g = 8 * b + __builtin_ctz(f);
			if (cap - pos < STEP_ROOM)
				goto stop;
			f &= f - 1;
			pos += zebq_enc_step(k, in + 4 * GROUP * g, out + pos,
					     &tags, &n1, &n2, &n3);
			put_unaligned_le16(tags, out + tp);
			tp += 2;
		}
	}
	g = ng;
stop:
	avx2_enc_stop(at, GROUP * g, pos, count, n1, n2, n3, 0);
}

ssize_t incnn_zebq_encode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			       size_t cap, void __always_unused *scratch,
			       struct incnn_hist *hist)
{
	struct incnn_enc_pos at = { 0 };
	size_t n = len / 4, nf = (n + 8 * GROUP - 1) / (8 * GROUP), pos;
	int err;

	if (len % 4)
		return -EINVAL;
	if (nf > cap)
		return -ENOSPC;
	err = incnn_zebq_start(k, in, len, out, cap,
			       zebq_flags_avx2(k, in, n, out), &pos);
	if (err)
		return err;
	if (hist)
		zebq_enc_steps(k, in, n, out, cap, pos, nf, &at, true);
	else
		zebq_enc_steps(k, in, n, out, cap, pos, nf, &at, false);
	return incnn_zebq_encode_rest(k, in, len, out, cap, &at, hist);
}

/* Decode a flagged group of tag word @tags from @ip (STEP_ROOM readable). */
static inline void zebq_dec_step(const u8 *ip, u32 tags, int k, u8 *out)
{
	v8si t = avx2_lane_tags(tags);
	v8si r = avx2_unpack(ip, tags);
	v8si is3 = t == 3;
	v8si v = avx2_fx_to_f32(r, t == 2, 1 - k, false);

	avx2_store8(out, (r & is3) | (v & ~is3));
}

int incnn_zebq_decode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			   size_t out_len)
{
	size_t n = out_len / 4, ng = n / GROUP, g = 0, pos, tp, base;
	u8 tmp[2 * STEP_ROOM];
	int err;

	err = incnn_zebq_decode_check(in, len, out_len, &pos);
	if (err)
		return err;
	tp = (n + 8 * GROUP - 1) / (8 * GROUP);

	for (; g < ng && len - pos >= STEP_ROOM; g++) {
		u32 tags;

		if (!(in[g / 8] >> (g % 8) & 1)) {
			/* a whole flag byte of zero groups at once */
			if (!(g % 8) && !in[g / 8] && ng - g >= 8) {
				memset(out + 4 * GROUP * g, 0, 32 * GROUP);
				g += 7;
				continue;
			}
			avx2_store8(out + 4 * GROUP * g, avx2_set1(0));
			continue;
		}
		tags = get_unaligned_le16(in + tp);
		if (!tags)
			break;	/* the scalar code rejects it */
		zebq_dec_step(in + pos, tags, k, out + 4 * GROUP * g);
		tp += 2;
		pos += incnn_simd_len[tags & 0xff] + incnn_simd_len[tags >> 8];
	}

	/* the last payload bytes, zero-padded, while whole groups fit */
	if (g < ng && len - pos < STEP_ROOM) {
		base = pos;
		memset(tmp, 0, sizeof(tmp));
		memcpy(tmp, in + pos, len - pos);
		for (; g < ng; g++) {
			u32 tags;
			unsigned int l;

			if (!(in[g / 8] >> (g % 8) & 1)) {
				avx2_store8(out + 4 * GROUP * g, avx2_set1(0));
				continue;
			}
			tags = get_unaligned_le16(in + tp);
			l = incnn_simd_len[tags & 0xff] +
			    incnn_simd_len[tags >> 8];
			if (!tags || l > len - pos)
				break;
			zebq_dec_step(tmp + (pos - base), tags, k,
				      out + 4 * GROUP * g);
			tp += 2;
			pos += l;
		}
	}
	return incnn_zebq_decode_rest(k, in, len, out, out_len, GROUP * g, pos);
}
#endif /* INCNN_CODEC_AVX2 */
