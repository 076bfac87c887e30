// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The wire frame: header, raw head, codec body, raw tail.
 */
#include "frame.h"

/* the header's fields at the byte offsets of struct incnn_frame_hdr */
#define HDR(field)	offsetof(struct incnn_frame_hdr, field)
static_assert(sizeof(struct incnn_frame_hdr) == INCNN_FRAME_HDR_LEN,
	      "struct incnn_frame_hdr is the wire header");

static size_t frame_tail(const struct incnn_codec *c, size_t len,
			 size_t head)
{
	return c->floats ? (len - head) % 4 : 0;
}

ssize_t incnn_frame_encode_ver(enum incnn_simd simd, u8 version,
			       const struct incnn_codec *c, u8 param,
			       u8 dscp, const u8 *payload, size_t len,
			       size_t head, u8 *out, size_t cap,
			       void *scratch, struct incnn_hist *hist)
{
	size_t tail, fixed, body_len;
	ssize_t r;

	if (!len || len > 0xffff || head > len || cap + 1 < len ||
	    incnn_codec_check_param(c, param) || dscp & 3 ||
	    (version != INCNN_FRAME_VERSION && version != INCNN_FRAME_VERSION_2))
		return -EINVAL;

	tail = frame_tail(c, len, head);
	fixed = INCNN_FRAME_HDR_LEN + head + tail;
	if (fixed >= len)
		return -E2BIG;
	body_len = len - head - tail;

	/* the frame must come out strictly shorter than the payload */
	r = incnn_codec_encode(c, simd, param, payload + head, body_len,
			       out + INCNN_FRAME_HDR_LEN + head, len - 1 - fixed,
			       scratch, hist);
	if (r == -ENOSPC)
		return -E2BIG;
	if (r < 0)
		return r;

	out[HDR(ver_flags)] = version << 4;
	out[HDR(codec)] = c->id;
	out[HDR(param)] = param;
	out[HDR(dscp)] = dscp;
	put_unaligned_be16(len, out + HDR(orig_len));
	put_unaligned_be16(head, out + HDR(head_len));
	memcpy(out + INCNN_FRAME_HDR_LEN, payload, head);
	memcpy(out + INCNN_FRAME_HDR_LEN + head + r, payload + len - tail,
	       tail);
	return fixed + r;
}

ssize_t incnn_frame_encode_simd(enum incnn_simd simd,
				const struct incnn_codec *c, u8 param,
				u8 dscp, const u8 *payload, size_t len,
				size_t head, u8 *out, size_t cap,
				void *scratch, struct incnn_hist *hist)
{
	return incnn_frame_encode_ver(simd, INCNN_FRAME_VERSION, c, param,
				      dscp, payload, len, head, out, cap,
				      scratch, hist);
}

ssize_t incnn_frame_encode(const struct incnn_codec *c, u8 param, u8 dscp,
			   const u8 *payload, size_t len, size_t head,
			   u8 *out, size_t cap, void *scratch,
			   struct incnn_hist *hist)
{
	return incnn_frame_encode_simd(incnn_simd_auto(), c, param, dscp,
				       payload, len, head, out, cap, scratch,
				       hist);
}

int incnn_frame_parse(const u8 *frame, size_t len,
		      struct incnn_frame_info *fi)
{
	const struct incnn_codec *c;
	size_t tail;

	if (len < INCNN_FRAME_HDR_LEN)
		return INCNN_FRAME_ERR_SHORT;
	if ((frame[HDR(ver_flags)] != INCNN_FRAME_VERSION << 4 &&
	     frame[HDR(ver_flags)] != INCNN_FRAME_VERSION_2 << 4) ||
	    frame[HDR(dscp)] & 3)
		return INCNN_FRAME_ERR_VERSION;
	c = incnn_codec_get(frame[HDR(codec)]);
	if (!c)
		return INCNN_FRAME_ERR_CODEC;
	if (incnn_codec_check_param(c, frame[HDR(param)]))
		return INCNN_FRAME_ERR_PARAM;

	fi->version = frame[HDR(ver_flags)] >> 4;
	fi->codec = frame[HDR(codec)];
	fi->param = frame[HDR(param)];
	fi->dscp = frame[HDR(dscp)];
	fi->orig_len = get_unaligned_be16(frame + HDR(orig_len));
	fi->head_len = get_unaligned_be16(frame + HDR(head_len));

	if (!fi->orig_len || fi->head_len > fi->orig_len ||
	    len >= fi->orig_len)
		return INCNN_FRAME_ERR_LENGTH;
	tail = frame_tail(c, fi->orig_len, fi->head_len);
	if (len < INCNN_FRAME_HDR_LEN + fi->head_len + tail)
		return INCNN_FRAME_ERR_LENGTH;
	return INCNN_FRAME_OK;
}

int incnn_frame_decode_simd(enum incnn_simd simd, const u8 *frame,
			    size_t len, u8 *out, size_t cap,
			    struct incnn_frame_info *fi)
{
	const struct incnn_codec *c;
	size_t head, tail, body_len;
	int err;

	err = incnn_frame_parse(frame, len, fi);
	if (err)
		return err;
	if (cap < fi->orig_len)
		return INCNN_FRAME_ERR_LENGTH;

	c = incnn_codec_get(fi->codec);
	head = fi->head_len;
	tail = frame_tail(c, fi->orig_len, head);
	body_len = len - INCNN_FRAME_HDR_LEN - head - tail;

	memcpy(out, frame + INCNN_FRAME_HDR_LEN, head);
	if (incnn_codec_decode(c, simd, fi->param,
			       frame + INCNN_FRAME_HDR_LEN + head, body_len,
			       out + head, fi->orig_len - head - tail))
		return INCNN_FRAME_ERR_BODY;
	memcpy(out + fi->orig_len - tail, frame + len - tail, tail);
	return INCNN_FRAME_OK;
}

int incnn_frame_decode(const u8 *frame, size_t len, u8 *out, size_t cap,
		       struct incnn_frame_info *fi)
{
	return incnn_frame_decode_simd(incnn_simd_auto(), frame, len, out, cap,
				       fi);
}
