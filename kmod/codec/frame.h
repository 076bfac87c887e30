/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Whole-frame helpers: header + raw head + codec body + raw tail.
 * See uapi/linux/incnn.h and docs/wire-format.md.
 */
#ifndef _INCNN_FRAME_H
#define _INCNN_FRAME_H

#include "codec.h"

struct incnn_frame_info {
	u8 version;	/* INCNN_FRAME_VERSION or INCNN_FRAME_VERSION_2 */
	u8 codec;
	u8 param;
	u8 dscp;	/* the original DSCP, ToS bits 7..2 (ECN bits zero) */
	u16 orig_len;
	u16 head_len;
};

/*
 * Encode @len payload bytes, of which the first @head are copied raw,
 * into @out, which has room for @cap >= @len - 1 bytes. Returns the frame
 * length, which is always strictly less than @len, or a negative errno:
 *	-E2BIG	the frame would not be smaller than the payload
 *	-EINVAL	bad arguments (length 0 or > 65535, head > len, param)
 */
ssize_t incnn_frame_encode(const struct incnn_codec *c, u8 param, u8 dscp,
			   const u8 *payload, size_t len, size_t head,
			   u8 *out, size_t cap, void *scratch,
			   struct incnn_hist *hist);
/* The same with the codec path @simd (incnn_frame_encode: the default) */
ssize_t incnn_frame_encode_simd(enum incnn_simd simd,
				const struct incnn_codec *c, u8 param,
				u8 dscp, const u8 *payload, size_t len,
				size_t head, u8 *out, size_t cap,
				void *scratch, struct incnn_hist *hist);

/*
 * The same as a frame of @version (INCNN_FRAME_VERSION or
 * INCNN_FRAME_VERSION_2: the same layout, see docs/wire-format.md).
 */
ssize_t incnn_frame_encode_ver(enum incnn_simd simd, u8 version,
			       const struct incnn_codec *c, u8 param,
			       u8 dscp, const u8 *payload, size_t len,
			       size_t head, u8 *out, size_t cap,
			       void *scratch, struct incnn_hist *hist);

/*
 * Parse and check the header of a frame of @len bytes without decoding
 * it (either version). Returns INCNN_FRAME_OK or the reason (enum
 * incnn_frame_error).
 */
int incnn_frame_parse(const u8 *frame, size_t len,
		      struct incnn_frame_info *fi);

/*
 * Decode a whole frame of @len bytes into @out, which has room for @cap
 * bytes. On INCNN_FRAME_OK, @fi->orig_len bytes were written. Otherwise
 * returns the reason the frame must be dropped; @out may have been
 * partly written.
 */
int incnn_frame_decode(const u8 *frame, size_t len, u8 *out, size_t cap,
		       struct incnn_frame_info *fi);
int incnn_frame_decode_simd(enum incnn_simd simd, const u8 *frame,
			    size_t len, u8 *out, size_t cap,
			    struct incnn_frame_info *fi);

#endif /* _INCNN_FRAME_H */
