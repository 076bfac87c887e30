// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * inceptionn with AVX2: one 256-bit vector is one group of 8 values, two
 * groups per step, in one pass. Encode: the classes from compares of
 * |x|'s bit pattern, floor(|x| * 2^15) by one vpsrlvd, the tag words by
 * one pmovmskb, the bytes packed by pshufb on the tag bytes (a 1-byte
 * value is byte 1 of its lane: incnn_simd_enc_shuf_hi). Decode: the
 * reverse, then an exact int -> float conversion times 2^-15 for both
 * payload sizes (avx2_dec_lanes()). The last values go through
 * zero-padded buffers; the scalar code in inceptionn.c finishes what
 * does not fit and decides every error. Built with -mavx2; see simd.h.
 */
#include "codec.h"

#ifdef INCNN_CODEC_AVX2
#include "avx2.h"

#define GROUP		8
/* the widest group: 2 tag bytes + a 16-byte store at most 16 bytes in */
#define GROUP_ROOM	(2 + 16 + 16)

/* constants of the encoder: EB << 23, T16 << 23 */
struct inc_enc_c {
	v8si eb, t16;
	/* floor(|x| * 2^7) of a value of tag 10 or 11 is >= lim8 */
	u32 lim8;
};

/*
 * Encode 16 values (two groups) @xa, @xb at @op (2 * GROUP_ROOM bytes of
 * room) if all have tags 00/01 (a payload byte s, floor(|x| * 2^7), or
 * none): the tag words and the bytes packed by the byte kernel. Returns
 * the two groups' length, 0 if a value has tag 10 or 11.
 */
static __always_inline unsigned int inc_enc16_bytes(v8si xa, v8si xb,
						    struct inc_enc_c kc,
						    u8 *op,
						    struct avx2_counts *c,
						    bool count)
{
	v8si axa = xa & 0x7fffffff, axb = xb & 0x7fffffff;
	const v8sf s7 = avx2_pow2(7);
	v8si ya = __builtin_ia32_cvttps2dq256((v8sf)axa * s7);
	v8si yb = __builtin_ia32_cvttps2dq256((v8sf)axb * s7);
	v16hi kw;
	v16qi p;
	v2di r;
	u32 tags, keep;
	unsigned int la;

	if (!avx2_below(ya, yb, kc.lim8))
		return 0;
	kw = __builtin_ia32_packssdw256(axa > kc.eb - 1, axb > kc.eb - 1) &
	     0x80;
	p = avx2_bytes16(avx2_words(ya, yb), kw, xa, xb, &tags, &keep);
	r = avx2_pack16(p, keep);
	la = __builtin_popcount(keep & 0xff);
	put_unaligned_le16(tags, op);
	avx2_put64(op + 2, r[0]);
	put_unaligned_le16(tags >> 16, op + 2 + la);
	avx2_put_hi64(op + 4 + la, r);
	if (count)
		c->c1 += __builtin_popcount(keep);
	return 4 + __builtin_popcount(keep);
}

/*
 * Encode 16 values (two groups) @xa, @xb (inc_enc16(): from @ip) at @op
 * (2 * GROUP_ROOM bytes of room): the byte kernel where it applies, else the classes of each
 * vector and pshufb on each tag byte. Returns the two groups' length.
 */
static __always_inline unsigned int inc_enc16_v(v8si xa, v8si xb,
						struct inc_enc_c kc, u8 *op,
						struct avx2_counts *c,
						bool count)
{
	v8si ta, tb, m1, m2, m3, a, b;
	unsigned int l = kc.lim8 ? inc_enc16_bytes(xa, xb, kc, op, c, count) :
			 0;
	u32 tags;

	if (likely(l))
		return l;
	a = avx2_inc_enc_lanes(xa, kc.eb, kc.t16, &ta, &m1, &m2, &m3);
	avx2_count(c, m1, m2, m3, count);
	b = avx2_inc_enc_lanes(xb, kc.eb, kc.t16, &tb, &m1, &m2, &m3);
	avx2_count(c, m1, m2, m3, count);
	tags = avx2_tags16(ta, tb);
	put_unaligned_le16(tags, op);
	l = 2 + avx2_pack_tab(op + 2, a, tags, incnn_simd_enc_shuf_hi);
	put_unaligned_le16(tags >> 16, op + l);
	return l + 2 + avx2_pack_tab(op + l + 2, b, tags >> 16,
				     incnn_simd_enc_shuf_hi);
}

static __always_inline unsigned int inc_enc16(const u8 *ip,
					      struct inc_enc_c kc, u8 *op,
					      struct avx2_counts *c,
					      bool count)
{
	return inc_enc16_v(avx2_load8(ip), avx2_load8(ip + 32), kc, op, c,
			   count);
}

/*
 * The groups that fit; their Table III counts only if @count (a
 * constant after inlining: no counting when nobody asked for it).
 */
static __always_inline void inc_enc_groups(u8 k, const u8 *in, size_t n,
					   u8 *out, size_t cap,
					   struct incnn_enc_pos *at,
					   bool count)
{
	const struct inc_enc_c kc = {
		.eb = avx2_set1((127 - k) << 23),
		.t16 = avx2_set1((127 - k + (k + 1) / 2) << 23),
		/*
		 * tag >= 10 iff |x| >= 2^(T16 - 127) iff floor(|x| * 2^7)
		 * >= 2^(T16 - 120) (raw: >= 2^7, or 0x80000000), for
		 * T16 >= 120 (k <= 15); else no byte kernel (0)
		 */
		.lim8 = k <= 15 ? 1u << (7 - k + (k + 1) / 2) : 0,
	};
	struct avx2_counts c = { 0 };
	size_t i = 0, pos = 0;

	/* two steps at a time while there is room for both */
	for (; n - i >= 4 * GROUP && cap - pos >= 4 * GROUP_ROOM; i += 32) {
		pos += inc_enc16(in + 4 * i, kc, out + pos, &c, count);
		pos += inc_enc16(in + 4 * i + 64, kc, out + pos, &c, count);
	}
	for (; n - i >= 2 * GROUP && cap - pos >= 2 * GROUP_ROOM; i += 16)
		pos += inc_enc16(in + 4 * i, kc, out + pos, &c, count);
	/*
	 * the last 1..15 values, zero-padded: zeros have tag 00 and no
	 * payload, as the unused tags of a last group; of one group (<= 8
	 * values), not the empty second one's tag word
	 */
	if (i < n && cap - pos >= 2 * GROUP_ROOM) {
		unsigned int r = n - i, ra = r < GROUP ? r : GROUP, l;

		l = inc_enc16_v(avx2_load_part(in + 4 * i, ra),
				avx2_load_part(in + 4 * i + 32, r - ra), kc,
				out + pos, &c, count);
		pos += r > GROUP ? l : l - 2;
		i = n;
	}
	avx2_enc_stop(at, i, pos, count, c.n1, c.n2, c.n3, c.c1);
}

ssize_t incnn_inc_encode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			      size_t cap, void __always_unused *scratch,
			      struct incnn_hist *hist)
{
	struct incnn_enc_pos at = { 0 };

	if (len % 4)
		return -EINVAL;
	if (hist)
		inc_enc_groups(k, in, len / 4, out, cap, &at, true);
	else
		inc_enc_groups(k, in, len / 4, out, cap, &at, false);
	return incnn_inc_encode_rest(k, in, len, out, cap, &at, hist);
}

/* Decode the payload at @ip (32 readable bytes) of tag word @tags. */
static __always_inline void inc_dec8(const u8 *ip, u32 tags, u8 *out)
{
	v8si mask, r = avx2_unpack_hi(ip, tags, &mask);
	v8sf s = avx2_pow2(-15);

	avx2_store8(out, avx2_dec_lanes(r, mask, s, s, true));
}

static inline unsigned int inc_group_len(u32 tags)
{
	return 2 + incnn_simd_len[tags & 0xff] + incnn_simd_len[tags >> 8];
}

/*
 * The last groups, from a zero-padded copy of the next (at most
 * 2 * GROUP_ROOM) body bytes, while they are there.
 */
static int inc_dec_tail(const u8 *in, size_t len, u8 *out, size_t out_len,
			size_t i, size_t pos)
{
	size_t n = out_len / 4, base = pos;
	size_t avail = len - pos < 2 * GROUP_ROOM ? len - pos : 2 * GROUP_ROOM;
	/* 3 * GROUP_ROOM, rounded up to whole vectors */
	u8 tmp[(3 * GROUP_ROOM + 31) / 32 * 32], last[4 * GROUP];

	avx2_zero(tmp, sizeof(tmp) / 32);
	memcpy(tmp, in + pos, avail);
	while (i < n && avail - (pos - base) >= 2) {
		const u8 *ip = tmp + (pos - base);
		unsigned int cnt = n - i < GROUP ? n - i : GROUP;
		u32 tags = get_unaligned_le16(ip);

		if (inc_group_len(tags) > avail - (pos - base) ||
		    (cnt < GROUP && tags >> (2 * cnt)))
			break;
		if (cnt == GROUP) {
			inc_dec8(ip + 2, tags, out + 4 * i);
		} else {
			inc_dec8(ip + 2, tags, last);
			memcpy(out + 4 * i, last, 4 * cnt);
		}
		pos += inc_group_len(tags);
		i += cnt;
	}
	return incnn_inc_decode_rest(in, len, out, out_len, i, pos);
}

int incnn_inc_decode_avx2(u8 __always_unused k, const u8 *in, size_t len,
			  u8 *out, size_t out_len)
{
	const v8sf s7 = avx2_pow2(-7);
	size_t n = out_len / 4, i = 0, pos = 0;

	if (out_len % 4)
		return -EINVAL;

	for (; n - i >= GROUP && len - pos >= GROUP_ROOM; i += GROUP) {
		u32 tags = get_unaligned_le16(in + pos), tb;
		unsigned int la;

		/* two groups of tags 00/01: the byte kernel, 2^-7 */
		if (likely(!(tags & 0xaaaa)) && n - i >= 2 * GROUP) {
			/*
			 * the second tag word: bytes 2 + la, 3 + la; out of a
			 * register loaded before la is known (la <= 6, nearly
			 * always) rather than by a load that waits for la
			 */
			u64 w = avx2_get64(in + pos + 2);

			la = __builtin_popcount(tags);
			if (likely(la <= 6))
				tb = (w >> (8 * la)) & 0xffff;
			else
				tb = get_unaligned_le16(in + pos + 2 + la);
			if (likely(!(tb & 0xaaaa))) {
				v8si a, b;

				avx2_unpack16(in + pos + 2, in + pos + 4 + la,
					      tags | tb << 16, &a, &b);
				avx2_store8(out + 4 * i,
					    (v8si)(__builtin_convertvector(a, v8sf) * s7));
				avx2_store8(out + 4 * i + 32,
					    (v8si)(__builtin_convertvector(b, v8sf) * s7));
				pos += 4 + la + __builtin_popcount(tb);
				i += GROUP;
				continue;
			}
		}
		inc_dec8(in + pos + 2, tags, out + 4 * i);
		pos += inc_group_len(tags);
	}
	return inc_dec_tail(in, len, out, out_len, i, pos);
}

/* decode(encode()) in place: 8 values a step, the last 0..7 by inceptionn.c */
int incnn_inc_quantise_avx2(u8 k, u8 *buf, size_t len)
{
	size_t i;

	if (len % 4)
		return -EINVAL;
	i = avx2_quant_loop(buf, len, avx2_inc_quant_lanes,
			    avx2_set1((127 - k) << 23),
			    avx2_set1((127 - k + (k + 1) / 2) << 23));
	return incnn_inc_quantise(k, buf + i, len - i);
}
#endif /* INCNN_CODEC_AVX2 */
