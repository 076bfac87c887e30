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

ssize_t incnn_ebq_encode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			      size_t cap, void *scratch,
			      struct incnn_hist *hist)
{
	v8si n1 = V8(0), n2 = V8(0), n3 = V8(0);
	struct incnn_enc_pos at = { 0 };
	size_t n = len / 4, i = 0, pos;

	if (len % 4)
		return -EINVAL;
	pos = (n + 3) / 4;
	if (pos > cap)
		return -ENOSPC;

	for (; n - i >= STEP && cap - pos >= STEP_ROOM; i += STEP) {
		v8si x = avx2_load8(in + 4 * i);
		v8si s = V8(151 - k) - ((x >> 23) & 0xff);
		v8si big = s > V8(31), raw = s < V8(1);
		v8si sc = (s & ~big) | (V8(31) & big);
		v8si m = (x & 0x7fffff) | 0x800000;
		v8si q = avx2_srlv(m + avx2_sllv(V8(1), sc - 1), sc);
		/* q < 2^25 unless raw: signed compares are exact */
		v8si m1 = (q > V8(0)) | raw, m2 = (q > V8(0x7f)) | raw;
		v8si m3 = (q > V8(0x7fff)) | raw;
		v8si sign = avx2_sllv(avx2_srlv(x, V8(31)),
				      V8(7) + (m2 & 8));
		v8si v = (x & m3) | ((sign | q) & ~m3);
		u32 tags = avx2_tags((m1 & ~m2) | m3, m2);

		put_unaligned_le16(tags, out + i / 4);
		pos += avx2_pack(out + pos, v, tags);
		n1 -= m1;
		n2 -= m2;
		n3 -= m3;
	}

	at.i = i;
	at.pos = pos;
	at.classes[3] = avx2_hsum(n3);
	at.classes[2] = avx2_hsum(n2) - at.classes[3];
	at.classes[1] = avx2_hsum(n1) - avx2_hsum(n2);
	at.classes[0] = i - avx2_hsum(n1);
	return incnn_ebq_encode_rest(k, in, len, out, cap, &at, hist);
}

int incnn_ebq_decode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			  size_t out_len)
{
	size_t n = out_len / 4, i = 0, pos;
	int err;

	if (out_len % 4)
		return -EINVAL;
	err = incnn_ebq_decode_check(in, len, n);
	if (err)
		return err;
	pos = (n + 3) / 4;

	for (; n - i >= STEP && len - pos >= STEP_ROOM; i += STEP) {
		u32 tags = get_unaligned_le16(in + i / 4);
		v8si t = avx2_lane_tags(tags);
		v8si r = avx2_unpack(in + pos, tags);
		v8si is3 = t == 3;
		v8si v = avx2_fx_to_f32(r, t == 2, 1 - k, false);

		avx2_store8(out + 4 * i, (r & is3) | (v & ~is3));
		pos += incnn_simd_len[tags & 0xff] + incnn_simd_len[tags >> 8];
	}
	return incnn_ebq_decode_rest(k, in, len, out, out_len, i, pos);
}
#endif /* INCNN_CODEC_AVX2 */
