// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ebq with AVX2: 8 values per step (two tag bytes). Encode: q by
 * vpsllvd/vpsrlvd (round half up, then shift), the tag from compares of
 * q, the payload bytes packed by pshufb on the tag bytes. Decode: the
 * reverse. While the output (input) has room for the 16-byte stores
 * (loads); the scalar code in ebq.c finishes the buffer and decides every
 * error. Built with -mavx2; see simd.h.
 */
#include "codec.h"

#ifdef INCNN_CODEC_AVX2
#include "avx2.h"

#define STEP		8
/* a 16-byte store at most 16 bytes in */
#define STEP_ROOM	(16 + 16)

/*
 * The steps that fit, from body byte @pos; their Table III counts only
 * if @count (a constant after inlining).
 */
static __always_inline void ebq_enc_steps(u8 k, const u8 *in, size_t n,
					  u8 *out, size_t cap, size_t pos,
					  struct incnn_enc_pos *at,
					  bool count)
{
	v8si n1 = avx2_set1(0), n2 = n1, n3 = n1;
	size_t i = 0;

	for (; n - i >= STEP && cap - pos >= STEP_ROOM; i += STEP) {
		v8si x = avx2_load8(in + 4 * i);
		v8si s = avx2_set1(151 - k) - (avx2_srl(x, 23) & 0xff);
		/*
		 * Shifts by 32 or more give 0, like the scalar code's shift
		 * by 31; s <= 0 shifts by 0: q = m >= 2^23 is raw, as it
		 * must be.
		 */
		v8si sc = s & ~(s >> 31);
		v8si m = (x & 0x7fffff) | 0x800000;
		v8si q = avx2_srlv(m + avx2_sllv(avx2_set1(1), sc - 1), sc);
		v8si m1 = q > avx2_set1(0), m2 = q > avx2_set1(0x7f);
		v8si m3 = q > avx2_set1(0x7fff);
		v8si sign = avx2_sllv(avx2_srl(x, 31), avx2_set1(7) + (m2 & 8));
		v8si v = (x & m3) | ((sign | q) & ~m3);
		u32 tags = avx2_tags((m1 & ~m2) | m3, m2);

		put_unaligned_le16(tags, out + i / 4);
		pos += avx2_pack(out + pos, v, tags);
		if (count) {
			n1 -= m1;
			n2 -= m2;
			n3 -= m3;
		}
	}
	avx2_enc_stop(at, i, pos, count, n1, n2, n3);
}

ssize_t incnn_ebq_encode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			      size_t cap, void __always_unused *scratch,
			      struct incnn_hist *hist)
{
	struct incnn_enc_pos at = { 0 };
	size_t n = len / 4, ntags = (n + 3) / 4;

	if (len % 4)
		return -EINVAL;
	if (ntags > cap)
		return -ENOSPC;
	if (hist)
		ebq_enc_steps(k, in, n, out, cap, ntags, &at, true);
	else
		ebq_enc_steps(k, in, n, out, cap, ntags, &at, false);
	return incnn_ebq_encode_rest(k, in, len, out, cap, &at, hist);
}

/* Decode 8 values of tag word @tags from @ip (STEP_ROOM readable). */
static inline void ebq_dec_step(const u8 *ip, u32 tags, int k, u8 *out)
{
	v8si t = avx2_lane_tags(tags);
	v8si r = avx2_unpack(ip, tags);
	v8si is3 = t == 3;
	v8si v = avx2_fx_to_f32(r, t == 2, 1 - k, false);

	avx2_store8(out, (r & is3) | (v & ~is3));
}

int incnn_ebq_decode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			  size_t out_len)
{
	size_t n = out_len / 4, i = 0, pos, base;
	u8 tmp[2 * STEP_ROOM];
	int err;

	err = incnn_ebq_decode_check(in, len, out_len);
	if (err)
		return err;
	pos = (n + 3) / 4;

	for (; n - i >= STEP && len - pos >= STEP_ROOM; i += STEP) {
		u32 tags = get_unaligned_le16(in + i / 4);

		ebq_dec_step(in + pos, tags, k, out + 4 * i);
		pos += incnn_simd_len[tags & 0xff] + incnn_simd_len[tags >> 8];
	}

	/* the last payload bytes, zero-padded, while whole steps fit */
	if (n - i >= STEP) {
		base = pos;
		memset(tmp, 0, sizeof(tmp));
		memcpy(tmp, in + pos, len - pos);
		for (; n - i >= STEP; i += STEP) {
			u32 tags = get_unaligned_le16(in + i / 4);
			unsigned int l = incnn_simd_len[tags & 0xff] +
					 incnn_simd_len[tags >> 8];

			if (l > len - pos)
				break;
			ebq_dec_step(tmp + (pos - base), tags, k, out + 4 * i);
			pos += l;
		}
	}
	return incnn_ebq_decode_rest(k, in, len, out, out_len, i, pos);
}
#endif /* INCNN_CODEC_AVX2 */
