// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * EBQ: error-bounded quantisation. For every finite x,
 * |decode(x) - x| <= 2^-k.
 *
 * q = round(|x| / 2^(1-k)), computed on the bit pattern. A value is sent
 * as
 *	q == 0			tag 00, nothing (decodes to +0.0)
 *	q < 2^7			tag 01, 8 bits: sign, q[6:0]
 *	q < 2^15		tag 10, 16 bits: sign, q[14:0]
 *	otherwise, NaN, Inf	tag 11, the raw 32 bits
 * and decodes to (-1)^sign * q * 2^(1-k), exactly representable in fp32,
 * so decode(encode(decode(encode(x)))) == decode(encode(x)).
 *
 * Container (stream-vbyte style): all tags first, four per byte (value
 * i's tag in bits 2(i%4)+1..2(i%4) of byte i/4, unused bits zero), then
 * all payload bytes (little-endian) in value order.
 */
#include "codec.h"
#include "ebq_value.h"
#include "simd.h"

#define QUAD		4
#define QUAD_MAX	(4 * QUAD)	/* payload bytes of four raw values */
#define SLACK		4	/* a 4-byte load or store at the end */

/* Encode @cnt (1..4) values; @op has room for QUAD_MAX + SLACK bytes. */
static unsigned int ebq_enc_quad(const u8 *in, unsigned int cnt, int k,
				 u8 *tagp, u8 *op, u32 *classes)
{
	unsigned int i, pos = 0;
	u32 tags = 0, lo, hi, n1, n2, n3;

	for (i = 0; i < cnt; i++) {
		u32 v, tag = incnn_ebq_tag_value(get_unaligned_le32(in + 4 * i),
						 k, &v);

		put_unaligned_le32(v, op + pos);
		pos += INCNN_TAG_BYTES(tag);
		tags |= tag << (2 * i);
	}
	*tagp = tags;
	lo = tags & 0x55;
	hi = (tags >> 1) & 0x55;
	n1 = hweight8(lo & ~hi);
	n2 = hweight8(hi & ~lo);
	n3 = hweight8(lo & hi);
	classes[0] += cnt - n1 - n2 - n3;
	classes[1] += n1;
	classes[2] += n2;
	classes[3] += n3;
	return pos;
}

ssize_t incnn_ebq_encode_rest(u8 k, const u8 *in, size_t len, u8 *out,
			      size_t cap, struct incnn_enc_pos *at,
			      struct incnn_hist *hist)
{
	size_t n = len / 4, i, pos = at->pos;
	u32 *classes = at->classes;
	u8 tmp[QUAD_MAX + SLACK];

	for (i = at->i; i < n; i += QUAD) {
		unsigned int cnt = n - i < QUAD ? n - i : QUAD;
		unsigned int qlen;
		u8 *tagp = out + i / QUAD;

		if (likely(cap - pos >= QUAD_MAX + SLACK)) {
			pos += ebq_enc_quad(in + 4 * i, cnt, k, tagp,
					    out + pos, classes);
			continue;
		}
		qlen = ebq_enc_quad(in + 4 * i, cnt, k, tagp, tmp, classes);
		if (qlen > cap - pos)
			return -ENOSPC;
		memcpy(out + pos, tmp, qlen);
		pos += qlen;
	}

	if (hist)
		for (i = 0; i < 4; i++)
			hist->n[i] += classes[i];
	return pos;
}

static ssize_t ebq_encode(u8 k, const u8 *in, size_t len, u8 *out,
			  size_t cap, void __always_unused *scratch,
			  struct incnn_hist *hist)
{
	struct incnn_enc_pos at = { 0 };

	if (len % 4)
		return -EINVAL;
	at.pos = (len / 4 + QUAD - 1) / QUAD;
	if (at.pos > cap)
		return -ENOSPC;
	return incnn_ebq_encode_rest(k, in, len, out, cap, &at, hist);
}

int incnn_ebq_decode_check(const u8 *in, size_t len, size_t out_len)
{
	size_t n = out_len / 4, ntags = (n + QUAD - 1) / QUAD;

	if (out_len % 4)
		return -EINVAL;
	if (ntags > len)
		return -EBADMSG;
	if (n % QUAD && in[ntags - 1] >> (2 * (n % QUAD)))
		return -EBADMSG;
	return 0;
}

int incnn_ebq_decode_rest(u8 k, const u8 *in, size_t len, u8 *out,
			  size_t out_len, size_t i, size_t pos)
{
	size_t n = out_len / 4;
	u8 tmp[QUAD_MAX + SLACK];

	for (; i < n; i += QUAD) {
		unsigned int cnt = n - i < QUAD ? n - i : QUAD;
		u32 tags = in[i / QUAD];
		unsigned int qlen;

		qlen = INCNN_TAG_BYTES(tags & 3) +
		       INCNN_TAG_BYTES((tags >> 2) & 3) +
		       INCNN_TAG_BYTES((tags >> 4) & 3) +
		       INCNN_TAG_BYTES(tags >> 6);
		if (qlen > len - pos)
			return -EBADMSG;
		if (likely(len - pos >= qlen + SLACK)) {
			incnn_ebq_dec_values(in + pos, tags, cnt, k,
					     out + 4 * i);
		} else {
			memset(tmp, 0, sizeof(tmp));
			memcpy(tmp, in + pos, qlen);
			incnn_ebq_dec_values(tmp, tags, cnt, k, out + 4 * i);
		}
		pos += qlen;
	}
	return pos == len ? 0 : -EBADMSG;
}

static int ebq_decode(u8 k, const u8 *in, size_t len, u8 *out,
		      size_t out_len)
{
	size_t n = out_len / 4;
	int err;

	err = incnn_ebq_decode_check(in, len, out_len);
	if (err)
		return err;
	return incnn_ebq_decode_rest(k, in, len, out, out_len, 0,
				     (n + QUAD - 1) / QUAD);
}

/* ebq's and zebq's decode(encode()) (the same values) */
int incnn_ebq_quantise(u8 k, u8 *buf, size_t len)
{
	size_t i;

	if (len % 4)
		return -EINVAL;
	for (i = 0; i < len; i += 4) {
		u32 x = get_unaligned_le32(buf + i);

		put_unaligned_le32(incnn_ebq_quantise_value(x, k), buf + i);
	}
	return 0;
}

static size_t ebq_bound(size_t len)
{
	size_t n = len / 4;

	return (n + QUAD - 1) / QUAD + 4 * n;
}

const struct incnn_codec incnn_codec_ebq = {
	.id = INCNN_CODEC_EBQ,
	.name = "ebq",
	.lossy = true,
	.floats = true,
	.param = INCNN_CODEC_PARAM_BOUND(10),
	.max_err = incnn_codec_max_err_param,
	.hist = true,
	.bound = ebq_bound,
	.encode = ebq_encode,
	.decode = ebq_decode,
	.quantise = incnn_ebq_quantise,
#ifdef INCNN_CODEC_AVX2
	.encode_avx2 = incnn_ebq_encode_avx2,
	.decode_avx2 = incnn_ebq_decode_avx2,
	.quantise_avx2 = incnn_ebq_quantise_avx2,
#endif
};
