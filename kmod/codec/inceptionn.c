// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The INCEPTIONN codec: the paper's Algorithm 2 (compress) and Algorithm 3
 * (decompress), bit for bit, with its 256-bit burst container.
 *
 * With error bound 2^-k the exponent threshold is EB = 127 - k. A value
 * with biased exponent e is sent as
 *	e >= 127		tag 11, the raw 32 bits
 *	e < EB			tag 00, nothing (decodes to +0.0)
 *	e >= T16		tag 10, 16 bits: sign, shifted[22:8]
 *	otherwise		tag 01, 8 bits: sign, shifted[22:16]
 * where T16 = EB + ceil((127 - EB) / 2) and shifted = (1 << 23 | m) >>
 * (127 - e) is |x| in fixed point with 23 fractional bits.
 *
 * Container: for each group of 8 values a little-endian 16-bit tag word
 * (value i's tag in bits 2i+1..2i), then the group's 0/1/2/4 payload
 * bytes (little-endian) in order. The last group may be partial; its
 * unused tag bits are zero.
 */
#include "codec.h"
#include "fp32.h"
#include "simd.h"

#define GROUP		8
#define GROUP_MAX	(2 + 4 * GROUP)		/* bytes */
#define SLACK		4			/* a 4-byte load or store at the end */

struct inc_thr {
	u32 eb;		/* below: tag 00 */
	u32 t16;	/* at or above: tag 10 */
};

static struct inc_thr inc_thresholds(u8 k)
{
	struct inc_thr t;

	t.eb = 127 - k;
	t.t16 = t.eb + (k + 1) / 2;
	return t;
}

/* Values of each class in a tag word of @cnt tags (Table III counts). */
static void count_classes(u32 tags, unsigned int cnt, u32 *classes)
{
	u32 lo = tags & 0x5555, hi = (tags >> 1) & 0x5555;
	u32 n1 = hweight32(lo & ~hi), n2 = hweight32(hi & ~lo);
	u32 n3 = hweight32(lo & hi);

	classes[0] += cnt - n1 - n2 - n3;
	classes[1] += n1;
	classes[2] += n2;
	classes[3] += n3;
}

/* The tag of @x, its payload word in *@val */
static inline u32 inc_tag_value(u32 x, struct inc_thr t, u32 *val)
{
	u32 e = INCNN_F32_EXP(x);
	u32 tag = (e >= t.eb) + (e >= t.t16) + (e >= 127);
	u32 sh = (0x800000 | INCNN_F32_MANT(x)) >> ((127 - e) & 31);
	/* 16-bit class: s, shifted[22:8]; 8-bit: s, shifted[22:16] */
	u32 drop = tag == 2 ? 8 : 16;
	u32 v = (INCNN_F32_SIGN(x) << (23 - drop)) | ((sh & 0x7fffff) >> drop);

	*val = tag == 3 ? x : v;
	return tag;
}

/* The decoded bits of tag @tag from the 4 bytes @r at its payload */
static inline u32 inc_value(u32 tag, u32 r)
{
	/* fraction bits F: 7 (tag 01) or 15 (tag 10); tag 00: 0 */
	u32 f = tag == 2 ? 15 : 7;
	u32 mag = r & ((1u << f) - 1) & (tag ? ~0u : 0);

	return tag == 3 ? r : incnn_fx_to_f32((r >> f) & 1, mag, -(int)f);
}

/*
 * Encode @cnt (1..8) values into @op, which has room for GROUP_MAX + SLACK
 * bytes. Returns the group's length.
 */
static unsigned int inc_enc_group(const u8 *in, unsigned int cnt, u8 *op,
				  struct inc_thr t, u32 *classes)
{
	unsigned int i, pos = 2;
	u32 tags = 0;

	for (i = 0; i < cnt; i++) {
		u32 v, tag = inc_tag_value(get_unaligned_le32(in + 4 * i), t,
					   &v);

		put_unaligned_le32(v, op + pos);
		pos += INCNN_TAG_BYTES(tag);
		tags |= tag << (2 * i);
	}
	put_unaligned_le16(tags, op);
	count_classes(tags, cnt, classes);
	return pos;
}

ssize_t incnn_inc_encode_rest(u8 k, const u8 *in, size_t len, u8 *out,
			      size_t cap, struct incnn_enc_pos *at,
			      struct incnn_hist *hist)
{
	struct inc_thr t = inc_thresholds(k);
	size_t n = len / 4, i, pos = at->pos;
	u32 *classes = at->classes;
	u8 tmp[GROUP_MAX + SLACK];

	for (i = at->i; i < n; i += GROUP) {
		unsigned int cnt = n - i < GROUP ? n - i : GROUP;
		unsigned int glen;

		if (likely(cap - pos >= GROUP_MAX + SLACK)) {
			pos += inc_enc_group(in + 4 * i, cnt, out + pos, t,
					     classes);
			continue;
		}
		glen = inc_enc_group(in + 4 * i, cnt, tmp, t, classes);
		if (glen > cap - pos)
			return -ENOSPC;
		memcpy(out + pos, tmp, glen);
		pos += glen;
	}

	if (hist)
		for (i = 0; i < 4; i++)
			hist->n[i] += classes[i];
	return pos;
}

static ssize_t inc_encode(u8 k, const u8 *in, size_t len, u8 *out,
			  size_t cap, void __always_unused *scratch,
			  struct incnn_hist *hist)
{
	struct incnn_enc_pos at = { 0 };

	if (len % 4)
		return -EINVAL;
	return incnn_inc_encode_rest(k, in, len, out, cap, &at, hist);
}

/* Decode @cnt values whose payload starts at @ip (SLACK readable bytes). */
static void inc_dec_group(const u8 *ip, u32 tags, unsigned int cnt, u8 *out)
{
	unsigned int i;

	for (i = 0; i < cnt; i++) {
		u32 tag = (tags >> (2 * i)) & 3;

		put_unaligned_le32(inc_value(tag, get_unaligned_le32(ip)),
				   out + 4 * i);
		ip += INCNN_TAG_BYTES(tag);
	}
}

/* decode(encode()) in place: a value's payload word is the 4 bytes read */
int incnn_inc_quantise(u8 k, u8 *buf, size_t len)
{
	struct inc_thr t = inc_thresholds(k);
	size_t i;

	if (len % 4)
		return -EINVAL;
	for (i = 0; i < len; i += 4) {
		u32 v, tag = inc_tag_value(get_unaligned_le32(buf + i), t, &v);

		put_unaligned_le32(inc_value(tag, v), buf + i);
	}
	return 0;
}

/* Payload bytes of a tag word: 1 per 01, 2 per 10, 4 per 11. */
static unsigned int tag_bytes(u32 tags)
{
	u32 lo = tags & 0x5555, hi = (tags >> 1) & 0x5555;

	return hweight32(lo & ~hi) + 2 * hweight32(hi & ~lo) +
	       4 * hweight32(lo & hi);
}

int incnn_inc_decode_rest(const u8 *in, size_t len, u8 *out,
			  size_t out_len, size_t i, size_t pos)
{
	size_t n = out_len / 4;
	u8 tmp[4 * GROUP + SLACK];

	for (; i < n; i += GROUP) {
		unsigned int cnt = n - i < GROUP ? n - i : GROUP;
		unsigned int glen;
		u32 tags;

		if (len - pos < 2)
			return -EBADMSG;
		tags = get_unaligned_le16(in + pos);
		pos += 2;
		if (cnt < GROUP && (tags >> (2 * cnt)))
			return -EBADMSG;
		glen = tag_bytes(tags);
		if (glen > len - pos)
			return -EBADMSG;
		if (likely(len - pos >= glen + SLACK)) {
			inc_dec_group(in + pos, tags, cnt, out + 4 * i);
		} else {
			memset(tmp, 0, sizeof(tmp));
			memcpy(tmp, in + pos, glen);
			inc_dec_group(tmp, tags, cnt, out + 4 * i);
		}
		pos += glen;
	}
	return pos == len ? 0 : -EBADMSG;
}

static int inc_decode(u8 __always_unused k, const u8 *in, size_t len,
		      u8 *out, size_t out_len)
{
	if (out_len % 4)
		return -EINVAL;
	return incnn_inc_decode_rest(in, len, out, out_len, 0, 0);
}

static size_t inc_bound(size_t len)
{
	size_t n = len / 4;

	return 2 * ((n + GROUP - 1) / GROUP) + 4 * n;
}

/*
 * The nominal bound 2^-k does not hold for k > 7: the 8-bit class keeps
 * 7 fractional bits whatever k is, so the error reaches 2^-7
 * (docs/codecs.md, "The nominal bound does not hold for k > 7").
 */
static int inc_max_err(u8 param)
{
	return param < 7 ? param : 7;
}

const struct incnn_codec incnn_codec_inceptionn = {
	.id = INCNN_CODEC_INCEPTIONN,
	.name = "inceptionn",
	.lossy = true,
	.floats = true,
	.param = INCNN_CODEC_PARAM_BOUND(10),
	.max_err = inc_max_err,
	.hist = true,
	.bound = inc_bound,
	.encode = inc_encode,
	.decode = inc_decode,
	.quantise = incnn_inc_quantise,
#ifdef INCNN_CODEC_AVX2
	.encode_avx2 = incnn_inc_encode_avx2,
	.decode_avx2 = incnn_inc_decode_avx2,
	.quantise_avx2 = incnn_inc_quantise_avx2,
#endif
};
