// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ebq with AVX2, 16 values (four tag bytes) per step, in one pass.
 * Encode: q = round half up of |x| * 2^(k-1) by one fp32 product and a
 * truncation (avx2_ebq_q()); where all 16 q are below 2^7 (tags 00 and
 * 01, nearly every gradient value), the tag word comes from one
 * pmovmskb of the q != 0 words and the payload bytes (sign at bit 7) are
 * packed by one 128-bit pshufb (avx2_pack16()); otherwise the classes
 * come from compares of y, and the payload bytes are packed by pshufb on
 * each tag byte (avx2_ebq_enc_lanes()). Decode: where the tag word has
 * only tags 00 and 01, one pshufb spreads 16 payload bytes, then
 * +-q * 2^(1-k) by an exact int -> float conversion and a product;
 * otherwise pshufb to lanes (a 1-byte value to byte 1, so that both
 * payload sizes have the sign at bit 15), then the same with 2^(1-k) or
 * 2^(-7-k) (avx2_dec_lanes()). The last values go through zero-padded
 * buffers; the scalar code in ebq.c finishes what does not fit and
 * decides every error. Built with -mavx2; see simd.h.
 */
#include "codec.h"

#ifdef INCNN_CODEC_AVX2
#include "ebq_avx2.h"

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
	const u8 *ip = in, *end = in + 4 * (n - n % WIDE);
	size_t lim = cap >= WIDE_ROOM ? cap - WIDE_ROOM : 0, i;
	struct avx2_counts c = { 0 };
	u8 *tp = out;

	/* two steps at a time while there is room for both */
	for (; end - ip >= 8 * WIDE && pos + WIDE_ROOM <= lim;
	     ip += 8 * WIDE, tp += WIDE / 2) {
		pos += ebq_enc16(ip, ip + 32, scale, tp, out + pos, &c, count);
		pos += ebq_enc16(ip + 64, ip + 96, scale, tp + 4, out + pos, &c,
				 count);
	}
	/* while pos <= lim: cap - pos >= WIDE_ROOM (pos > 0 if n > 0) */
	for (; ip < end && pos <= lim; ip += 4 * WIDE, tp += WIDE / 4)
		pos += ebq_enc16(ip, ip + 32, scale, tp, out + pos, &c, count);
	i = (ip - in) / 4;
	/* the last 1..15 values, zero-padded (tag 00, no payload) */
	if (i < n && cap - pos >= WIDE_ROOM) {
		unsigned int r = n - i, ra = r < STEP ? r : STEP;
		u8 tags[4];

		pos += ebq_enc16_v(avx2_load_part(in + 4 * i, ra),
				   avx2_load_part(in + 4 * i + 32, r - ra),
				   scale, tags, out + pos, &c, count);
		memcpy(out + i / 4, tags, (r + 3) / 4);
		i = n;
	}
	avx2_enc_stop(at, i, pos, count, c.n1, c.n2, c.n3, c.c1);
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

/*
 * The last values, from a zero-padded copy of the next (at most
 * WIDE_ROOM) body bytes, while their payload is there.
 */
static int ebq_dec_tail(u8 k, const u8 *in, size_t len, u8 *out,
			size_t out_len, size_t i, size_t pos, v8sf s1, v8sf s2)
{
	size_t n = out_len / 4, base = pos;
	size_t avail = len - pos < WIDE_ROOM ? len - pos : WIDE_ROOM;
	u8 tmp[2 * WIDE_ROOM], last[4 * WIDE];

	avx2_zero(tmp, sizeof(tmp) / 32);
	memcpy(tmp, in + pos, avail);
	while (i < n) {
		unsigned int cnt = n - i < WIDE ? n - i : WIDE, l, j;
		u32 tags = 0;

		if (cnt == WIDE)
			tags = get_unaligned_le32(in + i / 4);
		else
			for (j = 0; j < (cnt + 3) / 4; j++)
				tags |= (u32)in[i / 4 + j] << (8 * j);
		l = ebq_len16(tags);
		if (l > avail - (pos - base))
			break;
		if (cnt == WIDE) {
			ebq_dec16(tmp + (pos - base), tags, s1, s2, out + 4 * i,
				  out + 4 * i + 32);
		} else {
			ebq_dec16(tmp + (pos - base), tags, s1, s2, last,
				  last + 32);
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
	size_t n = out_len / 4, pos;
	const u8 *tp = in, *tend = in + n / WIDE * (WIDE / 4);
	/* pos <= lim: WIDE_ROOM bytes left */
	ssize_t lim = (ssize_t)len - WIDE_ROOM;
	u8 *op = out;
	int err;

	err = incnn_ebq_decode_check(in, len, out_len);
	if (err)
		return err;
	pos = (n + 3) / 4;

	/* two steps at a time while both have WIDE_ROOM bytes */
	for (; tend - tp >= WIDE / 2 && (ssize_t)pos <= lim - WIDE_ROOM;
	     tp += WIDE / 2, op += 8 * WIDE) {
		pos += ebq_dec16(in + pos, get_unaligned_le32(tp), s1, s2, op,
				 op + 32);
		pos += ebq_dec16(in + pos, get_unaligned_le32(tp + 4), s1, s2,
				 op + 64, op + 96);
	}
	/* then each step while what it reads is there */
	for (; tp < tend; tp += WIDE / 4, op += 4 * WIDE) {
		u32 tags = get_unaligned_le32(tp);

		if (likely(!(tags & TAGS_WIDE))) {
			if (likely(len - pos >= BYTES_ROOM)) {
				pos += ebq_dec16_bytes(in + pos, tags, s2, op,
						       op + 32);
				continue;
			}
			if (tags)
				break;
			/* no payload at all */
			avx2_zero(op, 2);
			continue;
		}
		if ((ssize_t)pos > lim)
			break;
		pos += ebq_dec16(in + pos, tags, s1, s2, op, op + 32);
	}
	return ebq_dec_tail(k, in, len, out, out_len, 4 * (tp - in), pos, s1,
			    s2);
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
