// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * inceptionn with AVX2: one 256-bit vector is one group of 8 values.
 * Encode: the tag from three compares of the exponent, the 8/16-bit
 * payloads by vpsrlvd/vpsllvd, the bytes packed by pshufb on the two tag
 * bytes. Decode: the reverse. Whole groups only, while the output (input)
 * has room for the 16-byte stores (loads); the scalar code in
 * inceptionn.c finishes the buffer and decides every error.
 * Built with -mavx2; see simd.h.
 */
#include "codec.h"

#ifdef INCNN_CODEC_AVX2
#include "avx2.h"

#define GROUP		8
/* the widest group: 2 tag bytes + a 16-byte store at most 16 bytes in */
#define GROUP_ROOM	(2 + 16 + 16)

/*
 * The groups that fit; their Table III counts only if @count (a
 * constant after inlining: no counting when nobody asked for it).
 */
static __always_inline void inc_enc_groups(u8 k, const u8 *in, size_t n,
					   u8 *out, size_t cap,
					   struct incnn_enc_pos *at,
					   bool count)
{
	const v8si eb = avx2_set1(127 - k - 1);
	const v8si t16 = avx2_set1(127 - k + (k + 1) / 2 - 1);
	v8si n1 = avx2_set1(0), n2 = n1, n3 = n1;
	size_t i = 0, pos = 0;

	for (; n - i >= GROUP && cap - pos >= GROUP_ROOM; i += GROUP) {
		v8si x = avx2_load8(in + 4 * i);
		v8si e = avx2_srl(x, 23) & 0xff;
		v8si m1 = e > eb, m2 = e > t16, m3 = e > avx2_set1(126);
		/* < 2^23 where it matters: tags 01 and 10 shift by >= 1 */
		v8si sh = avx2_srlv((x & 0x7fffff) | 0x800000,
				    avx2_set1(127) - e);
		/* 16-bit class: s, shifted[22:8]; 8-bit: the top byte of it */
		v8si v = (avx2_srl(x, 16) & 0x8000) | avx2_srl(sh, 8);
		u32 tags = avx2_tags((m1 & ~m2) | m3, m2);

		v = avx2_srlv(v, ~m2 & 8);
		v = (x & m3) | (v & ~m3);
		put_unaligned_le16(tags, out + pos);
		pos += 2 + avx2_pack(out + pos + 2, v, tags);
		if (count) {
			n1 -= m1;
			n2 -= m2;
			n3 -= m3;
		}
	}
	avx2_enc_stop(at, i, pos, count, n1, n2, n3);
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

/* Decode the group at @ip (GROUP_ROOM readable bytes); its length. */
static inline unsigned int inc_dec_group(const u8 *ip, u8 *out)
{
	u32 tags = get_unaligned_le16(ip);
	v8si t = avx2_lane_tags(tags);
	v8si r = avx2_unpack(ip + 2, tags);
	v8si is3 = t == 3;
	v8si v = avx2_fx_to_f32(r, t == 2, 0, true);

	avx2_store8(out, (r & is3) | (v & ~is3));
	return 2 + incnn_simd_len[tags & 0xff] + incnn_simd_len[tags >> 8];
}

int incnn_inc_decode_avx2(u8 __always_unused k, const u8 *in, size_t len,
			  u8 *out, size_t out_len)
{
	size_t n = out_len / 4, i = 0, pos = 0, base;
	u8 tmp[2 * GROUP_ROOM];

	if (out_len % 4)
		return -EINVAL;

	for (; n - i >= GROUP && len - pos >= GROUP_ROOM; i += GROUP)
		pos += inc_dec_group(in + pos, out + 4 * i);

	/* the last bytes, zero-padded, while whole groups fit in them */
	if (n - i >= GROUP && len - pos >= 2) {
		base = pos;
		memset(tmp, 0, sizeof(tmp));
		memcpy(tmp, in + pos, len - pos);
		for (; n - i >= GROUP && len - pos >= 2; i += GROUP) {
			const u8 *ip = tmp + (pos - base);
			u32 tags = get_unaligned_le16(ip);
			unsigned int l = 2 + incnn_simd_len[tags & 0xff] +
					 incnn_simd_len[tags >> 8];

			if (l > len - pos)
				break;
			pos += inc_dec_group(ip, out + 4 * i);
		}
	}
	return incnn_inc_decode_rest(in, len, out, out_len, i, pos);
}
#endif /* INCNN_CODEC_AVX2 */
