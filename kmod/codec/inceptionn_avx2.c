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

ssize_t incnn_inc_encode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			      size_t cap, void *scratch,
			      struct incnn_hist *hist)
{
	const v8si eb = V8(127 - k - 1), t16 = V8(127 - k + (k + 1) / 2 - 1);
	v8si n1 = V8(0), n2 = V8(0), n3 = V8(0);
	struct incnn_enc_pos at = { 0 };
	size_t n = len / 4, i = 0, pos = 0;

	if (len % 4)
		return -EINVAL;

	for (; n - i >= GROUP && cap - pos >= GROUP_ROOM; i += GROUP) {
		v8si x = avx2_load8(in + 4 * i);
		v8si e = (x >> 23) & 0xff;
		v8si m1 = e > eb, m2 = e > t16, m3 = e > V8(126);
		v8si sh = avx2_srlv((x & 0x7fffff) | 0x800000, V8(127) - e);
		/* 16-bit class: s, shifted[22:8]; 8-bit: s, shifted[22:16] */
		v8si drop = V8(16) + (m2 & -8);
		v8si s = avx2_srlv(x, V8(31));
		v8si v = avx2_sllv(s, V8(23) - drop) |
			 avx2_srlv(sh & 0x7fffff, drop);
		u32 tags = avx2_tags((m1 & ~m2) | m3, m2);

		v = (x & m3) | (v & ~m3);
		put_unaligned_le16(tags, out + pos);
		pos += 2 + avx2_pack(out + pos + 2, v, tags);
		n1 -= m1;
		n2 -= m2;
		n3 -= m3;
	}

	/* Table III classes: tag >= 01, >= 10, == 11 per lane so far */
	at.i = i;
	at.pos = pos;
	at.classes[3] = avx2_hsum(n3);
	at.classes[2] = avx2_hsum(n2) - at.classes[3];
	at.classes[1] = avx2_hsum(n1) - avx2_hsum(n2);
	at.classes[0] = i - avx2_hsum(n1);
	return incnn_inc_encode_rest(k, in, len, out, cap, &at, hist);
}

int incnn_inc_decode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			  size_t out_len)
{
	size_t n = out_len / 4, i = 0, pos = 0;

	if (out_len % 4)
		return -EINVAL;

	for (; n - i >= GROUP && len - pos >= GROUP_ROOM; i += GROUP) {
		u32 tags = get_unaligned_le16(in + pos);
		v8si t = avx2_lane_tags(tags);
		v8si r = avx2_unpack(in + pos + 2, tags);
		v8si is3 = t == 3;
		v8si v = avx2_fx_to_f32(r, t == 2, 0, true);

		avx2_store8(out + 4 * i, (r & is3) | (v & ~is3));
		pos += 2 + incnn_simd_len[tags & 0xff] +
		       incnn_simd_len[tags >> 8];
	}
	return incnn_inc_decode_rest(in, len, out, out_len, i, pos);
}
#endif /* INCNN_CODEC_AVX2 */
