/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Internal interface between the scalar float codecs and their SIMD
 * versions. A SIMD loop handles whole blocks while the output (encode)
 * or the input (decode) has room for a block's widest loads and stores,
 * then hands its position to the scalar loop, which finishes the buffer
 * and decides every error: the results are the scalar code's, bit for
 * bit, by construction.
 */
#ifndef _INCNN_CODEC_SIMD_H
#define _INCNN_CODEC_SIMD_H

#include "codec.h"

/* Where an encoder stopped: values done, body bytes written, classes. */
struct incnn_enc_pos {
	size_t i;
	size_t pos;
	u32 classes[4];
};

/* inceptionn.c: decode(encode()) in place, scalar */
int incnn_inc_quantise(u8 k, u8 *buf, size_t len);
/* inceptionn.c: finish from @at (a group boundary) */
ssize_t incnn_inc_encode_rest(u8 k, const u8 *in, size_t len, u8 *out,
			      size_t cap, struct incnn_enc_pos *at,
			      struct incnn_hist *hist);
int incnn_inc_decode_rest(const u8 *in, size_t len, u8 *out,
			  size_t out_len, size_t i, size_t pos);

/* ebq.c: finish from @at (a multiple of 4 values) */
ssize_t incnn_ebq_encode_rest(u8 k, const u8 *in, size_t len, u8 *out,
			      size_t cap, struct incnn_enc_pos *at,
			      struct incnn_hist *hist);
/* the checks before the payload loop: 0, -EINVAL or -EBADMSG */
int incnn_ebq_decode_check(const u8 *in, size_t len, size_t out_len);
int incnn_ebq_decode_rest(u8 k, const u8 *in, size_t len, u8 *out,
			  size_t out_len, size_t i, size_t pos);
/* ebq's (and zebq's) decode(encode()) in place, scalar */
int incnn_ebq_quantise(u8 k, u8 *buf, size_t len);

/* simd_tables.c: pshufb tables indexed by a byte of four 2-bit tags */
extern const u8 incnn_simd_enc_shuf[256][16];
extern const u8 incnn_simd_dec_shuf[256][16];
extern const u8 incnn_simd_len[256];
/* bit j of the index at bit 2j */
extern const u16 incnn_simd_spread[256];
/* the same shuffles with a 1-byte value in byte 1 of its lane */
extern const u8 incnn_simd_enc_shuf_hi[256][16];
extern const u8 incnn_simd_dec_shuf_hi[256][16];
/*
 * Byte shuffles of 8 values of tags 00 and 01 (one payload byte or none):
 * pack8 packs the kept byte lanes, indexed by the keep mask (bit j: value
 * j is sent); unpack8 spreads them back, indexed by the keep byte
 * (t | t >> 7) & 0xff of their 16 tag bits t.
 */
extern const u8 incnn_simd_pack8[256][8];
extern const u8 incnn_simd_unpack8[256][8];

/* the AVX2 codecs (inceptionn_avx2.c, ebq_avx2.c) */
ssize_t incnn_inc_encode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			      size_t cap, void *scratch,
			      struct incnn_hist *hist);
int incnn_inc_decode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			  size_t out_len);
ssize_t incnn_ebq_encode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			      size_t cap, void *scratch,
			      struct incnn_hist *hist);
int incnn_ebq_decode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			  size_t out_len);
/* the quantisers: whole vectors, the last 0..7 values by the scalar one */
int incnn_inc_quantise_avx2(u8 k, u8 *buf, size_t len);
int incnn_ebq_quantise_avx2(u8 k, u8 *buf, size_t len);

#endif /* _INCNN_CODEC_SIMD_H */
