/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * incnn: in-network gradient compression for marked TCP streams.
 *
 * This header is shared by the kernel module (kmod/) and userspace
 * (userspace/, selftests/). It defines:
 *
 *  - the codec identifiers and their parameter ranges;
 *  - the wire frame that replaces the payload of a compressed TCP segment
 *    (see docs/wire-format.md for the normative description).
 */
#ifndef _UAPI_LINUX_INCNN_H
#define _UAPI_LINUX_INCNN_H

#include <linux/types.h>

/*
 * Codec identifiers, carried in byte 1 of the wire frame.
 *
 * INCNN_CODEC_INCEPTIONN: the INCEPTIONN paper's lossy fp32 codec
 *	(Algorithms 2 and 3). Parameter: k, error bound 2^-k, 1 <= k <= 30.
 * INCNN_CODEC_EBQ: error-bounded quantisation, |decode(x) - x| <= 2^-k
 *	for every finite x. Parameter: k, 1 <= k <= 30.
 * INCNN_CODEC_TRUNC: keep the top 8, 16 or 24 bits of each fp32.
 *	Parameter: number of bits kept (8, 16 or 24).
 * INCNN_CODEC_LZ4: lossless LZ4 block. Parameter: 0.
 */
enum incnn_codec_id {
	INCNN_CODEC_NONE = 0,
	INCNN_CODEC_INCEPTIONN = 1,
	INCNN_CODEC_EBQ = 2,
	INCNN_CODEC_TRUNC = 3,
	INCNN_CODEC_LZ4 = 4,
	__INCNN_CODEC_MAX
};

#define INCNN_CODEC_MAX (__INCNN_CODEC_MAX - 1)

#define INCNN_BOUND_MIN_K	1
#define INCNN_BOUND_MAX_K	30

/*
 * Wire frame (8 bytes, network byte order), followed by:
 *
 *	head_len raw bytes      payload bytes copied verbatim (pre-anchor
 *	                        bytes and bytes before the float grid)
 *	codec body              the codec's encoding of the float-aligned part
 *	tail                    (float codecs only) the last
 *	                        (orig_len - head_len) % 4 payload bytes, raw
 *
 *  0               1               2               3
 *  +-------+-------+---------------+---------------+-----------+---+
 *  |version| flags |    codec      |    param      |   dscp    |rsv|
 *  +-------+-------+---------------+---------------+-----------+---+
 *  |          orig_len             |          head_len             |
 *  +-------------------------------+-------------------------------+
 *
 * version:  INCNN_FRAME_VERSION (high nibble of byte 0)
 * flags:    must be zero (low nibble of byte 0)
 * codec:    enum incnn_codec_id
 * param:    codec parameter (see enum incnn_codec_id)
 * dscp:     the segment's original DSCP (bits 7..2 of byte 3); bits 1..0
 *           are reserved and must be zero. ECN is never carried: the
 *           receiver keeps the ECN bits of the IP header as received.
 * orig_len: length of the original TCP payload, 1..65535
 * head_len: number of raw head bytes, 0..orig_len
 */
#define INCNN_FRAME_VERSION	1
#define INCNN_FRAME_HDR_LEN	8

struct incnn_frame_hdr {
	__u8	ver_flags;
	__u8	codec;
	__u8	param;
	__u8	dscp;
	__be16	orig_len;
	__be16	head_len;
};

/* Default marking: applications set IP ToS 0x28 (DSCP 10, AF11). */
#define INCNN_DEFAULT_TOS	0x28
/* Framed segments leave with this ToS (DSCP 11) unless configured. */
#define INCNN_DEFAULT_WIRE_TOS	0x2c

/*
 * Why a received frame was rejected. A receiver drops the segment and
 * counts it under one of these reasons.
 */
enum incnn_frame_error {
	INCNN_FRAME_OK = 0,
	INCNN_FRAME_ERR_SHORT,		/* payload shorter than the header */
	INCNN_FRAME_ERR_VERSION,	/* unknown version or flags set */
	INCNN_FRAME_ERR_CODEC,		/* unknown codec id */
	INCNN_FRAME_ERR_PARAM,		/* parameter invalid for the codec */
	INCNN_FRAME_ERR_LENGTH,		/* lengths do not add up */
	INCNN_FRAME_ERR_BODY,		/* body does not decode to orig_len */
	__INCNN_FRAME_ERR_MAX
};

#endif /* _UAPI_LINUX_INCNN_H */
