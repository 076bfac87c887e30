// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ebq with AVX2, 16 values (four tag bytes) per step, in one pass.
 * Encode: y = |x| * 2^(k-1) in fp32 (exact), the classes from compares
 * of y, q = trunc(y + 0.5), the tag bytes by one pmovmskb, the payload
 * bytes packed by pshufb on the tag bytes (avx2_ebq_enc_lanes()). Decode:
 * pshufb to lanes (a 1-byte value to byte 1, so that both payload sizes
 * have the sign at bit 15), then an exact int -> float conversion and a
 * product by 2^(1-k) or 2^(-7-k) (avx2_dec_lanes()). The last values go
 * through zero-padded buffers; the scalar code in ebq.c finishes what
 * does not fit and decides every error. Built with -mavx2; see simd.h.
 */
#include "codec.h"

#ifdef INCNN_CODEC_AVX2
#include "avx2.h"

#define STEP		8
/* a 16-byte store (load) at most 16 bytes in */
#define STEP_ROOM	(16 + 16)

/* Encode @cnt (1..8) values from @ip; their tag bytes, payload at @op */
static __always_inline u32 ebq_enc8(const u8 *ip, unsigned int cnt,
				    v8sf scale, u8 *op, unsigned int *plen,
				    struct avx2_counts *c, bool count)
{
	v8si tl, m1, m2, m3;
	v8si v = avx2_ebq_enc_lanes(avx2_load_part(ip, cnt), scale, &tl,
				    &m1, &m2, &m3);
	u32 tags = avx2_tags8(tl);

	avx2_count(c, m1, m2, m3, count);
	*plen = avx2_pack_tab(op, v, tags, incnn_simd_enc_shuf);
	return tags;
}

/*
 * The values that fit, from body byte @pos; their Table III counts only
 * if @count (a constant after inlining).
 */
static __always_inline void ebq_enc_steps(u8 k, const u8 *in, size_t n,
					  u8 *out, size_t cap, size_t pos,
					  struct incnn_enc_pos *at,
					  bool count)
{
	const v8sf scale = avx2_pow2(k - 1);
	struct avx2_counts c = { 0 };
	size_t i = 0;

	for (; n - i >= 2 * STEP && cap - pos >= 2 * STEP_ROOM; i += 16) {
		v8si ta, tb, m1, m2, m3;
		v8si a = avx2_ebq_enc_lanes(avx2_load8(in + 4 * i), scale,
					    &ta, &m1, &m2, &m3);
		v8si b;
		u32 tags;

		avx2_count(&c, m1, m2, m3, count);
		b = avx2_ebq_enc_lanes(avx2_load8(in + 4 * i + 32), scale, &tb,
				       &m1, &m2, &m3);
		avx2_count(&c, m1, m2, m3, count);
		tags = avx2_tags16(ta, tb);
		put_unaligned_le32(tags, out + i / 4);
		pos += avx2_pack_tab(out + pos, a, tags, incnn_simd_enc_shuf);
		pos += avx2_pack_tab(out + pos, b, tags >> 16,
				     incnn_simd_enc_shuf);
	}
	/* the last 1..15 values */
	while (i < n && cap - pos >= STEP_ROOM) {
		unsigned int cnt = n - i < STEP ? n - i : STEP, l;
		u32 tags = ebq_enc8(in + 4 * i, cnt, scale, out + pos, &l, &c,
				    count);

		out[i / 4] = tags;
		if (cnt > 4)
			out[i / 4 + 1] = tags >> 8;
		pos += l;
		i += cnt;
	}
	avx2_enc_stop(at, i, pos, count, c.n1, c.n2, c.n3);
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
static __always_inline unsigned int ebq_dec8(const u8 *ip, u32 tags,
					     v8sf s1, v8sf s2, u8 *out)
{
	v8si mask, r = avx2_unpack_hi(ip, tags, &mask);

	avx2_store8(out, avx2_dec_lanes(r, mask, s1, s2, false));
	return incnn_simd_len[tags & 0xff] + incnn_simd_len[(tags >> 8) & 0xff];
}

/*
 * The last values, from a zero-padded copy of the next (at most
 * 2 * STEP_ROOM) body bytes, while their payload is there.
 */
static int ebq_dec_tail(u8 k, const u8 *in, size_t len, u8 *out,
			size_t out_len, size_t i, size_t pos, v8sf s1, v8sf s2)
{
	size_t n = out_len / 4, base = pos;
	size_t avail = len - pos < 2 * STEP_ROOM ? len - pos : 2 * STEP_ROOM;
	u8 tmp[3 * STEP_ROOM], last[4 * STEP];

	memset(tmp, 0, sizeof(tmp));
	memcpy(tmp, in + pos, avail);
	while (i < n) {
		unsigned int cnt = n - i < STEP ? n - i : STEP, l;
		u32 tags = in[i / 4] | (cnt > 4 ? in[i / 4 + 1] << 8 : 0);

		l = incnn_simd_len[tags & 0xff] + incnn_simd_len[tags >> 8];
		if (l > avail - (pos - base))
			break;
		if (cnt == STEP) {
			ebq_dec8(tmp + (pos - base), tags, s1, s2, out + 4 * i);
		} else {
			ebq_dec8(tmp + (pos - base), tags, s1, s2, last);
			memcpy(out + 4 * i, last, 4 * cnt);
		}
		pos += l;
		i += cnt;
	}
	return incnn_ebq_decode_rest(k, in, len, out, out_len, i, pos);
}

int incnn_ebq_decode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			  size_t out_len)
{
	const v8sf s1 = avx2_pow2(-7 - k), s2 = avx2_pow2(1 - k);
	size_t n = out_len / 4, i = 0, pos;
	int err;

	err = incnn_ebq_decode_check(in, len, out_len);
	if (err)
		return err;
	pos = (n + 3) / 4;

	for (; n - i >= 2 * STEP && len - pos >= 2 * STEP_ROOM; i += 16) {
		u32 tags = get_unaligned_le32(in + i / 4);

		pos += ebq_dec8(in + pos, tags, s1, s2, out + 4 * i);
		pos += ebq_dec8(in + pos, tags >> 16, s1, s2, out + 4 * i + 32);
	}
	if (n - i >= STEP && len - pos >= STEP_ROOM) {
		pos += ebq_dec8(in + pos, get_unaligned_le16(in + i / 4), s1, s2,
				out + 4 * i);
		i += STEP;
	}
	return ebq_dec_tail(k, in, len, out, out_len, i, pos, s1, s2);
}

/* decode(encode()) in place: 8 values a step, the last 0..7 by ebq.c */
int incnn_ebq_quantise_avx2(u8 k, u8 *buf, size_t len)
{
	size_t i;

	if (len % 4)
		return -EINVAL;
	i = avx2_quant_loop(buf, len, avx2_ebq_quant_lanes,
			    (v8si)avx2_pow2(k - 1), (v8si)avx2_pow2(1 - k));
	return incnn_ebq_quantise(k, buf + i, len - i);
}
#endif /* INCNN_CODEC_AVX2 */
