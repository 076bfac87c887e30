/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Internal interface between zebq.c and zebq_avx2.c (see simd.h for the
 * scheme: the SIMD loop stops at a group boundary, the scalar code
 * finishes the buffer and decides every error).
 */
#ifndef _INCNN_CODEC_ZEBQ_H
#define _INCNN_CODEC_ZEBQ_H

#include "simd.h"

/* q != 0 exactly for exponent fields from this one on: |x| >= 2^-k */
#define INCNN_ZEBQ_NZ_EXP(k)	((u32)(127 - (k)) << 23)

/* the flags of groups @g.. (@g a multiple of 8) */
void incnn_zebq_flags(u8 k, const u8 *in, size_t n, u8 *flags, size_t g);
/* the size of the tag area for the flags @flags of @n values */
size_t incnn_zebq_tag_bytes(const u8 *flags, size_t n);
int incnn_zebq_start(u8 k, const u8 *in, size_t len, u8 *out, size_t cap,
		     size_t flags_done, size_t *pos);
/* finish from @at (a group boundary, @at->pos the payload's end) */
ssize_t incnn_zebq_encode_rest(u8 k, const u8 *in, size_t len, u8 *out,
			       size_t cap, struct incnn_enc_pos *at,
			       struct incnn_hist *hist);
/* the checks before the payload loop: 0, -EINVAL or -EBADMSG */
int incnn_zebq_decode_check(const u8 *in, size_t len, size_t out_len,
			    size_t *pos);
int incnn_zebq_decode_rest(u8 k, const u8 *in, size_t len, u8 *out,
			   size_t out_len, size_t i, size_t pos);

ssize_t incnn_zebq_encode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			       size_t cap, void *scratch,
			       struct incnn_hist *hist);
int incnn_zebq_decode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			   size_t out_len);

#endif /* _INCNN_CODEC_ZEBQ_H */
