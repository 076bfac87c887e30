// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * zebq: ebq with zero groups. The values are ebq's, bit for bit
 * (q = round(|x| / 2^(1-k)), the same tags and payloads, the same
 * decoded values); only the container differs: a group of 8 values whose
 * q are all 0 costs one flag bit instead of 16 tag bits.
 *
 * Body, for n values in G = ceil(n / 8) groups (the last may be partial):
 *	flags	ceil(G / 8) bytes: bit g % 8 of byte g / 8 set iff group g
 *		holds a value with q != 0 (|x| >= 2^-k, NaN, Inf); unused
 *		bits zero
 *	tags	for each flagged group, in order, ebq's tag bytes of its
 *		values: 2 bytes (value j's tag in bits 2j+1..2j, little
 *		endian), ceil(r / 4) for a last group of r values (unused
 *		bits zero); at least one tag is non-zero
 *	payload	the flagged groups' ebq payload bytes, in value order
 * A group without a flag decodes to eight +0.0, as ebq's tag 00 does.
 * The body is the flags followed by ebq's body of the flagged groups'
 * values, so it is never longer than ebq's body plus the flags.
 */
#include "codec.h"
#include "ebq_value.h"
#include "zebq.h"

#define GROUP		8
#define GROUP_MAX	(4 * GROUP)	/* payload bytes of eight raw values */
#define SLACK		4	/* a 4-byte load or store at the end */

static inline size_t zebq_ceil(size_t a, size_t b)
{
	return (a + b - 1) / b;
}

static inline bool zebq_flag(const u8 *flags, size_t g)
{
	return (flags[g / 8] >> (g % 8)) & 1;
}

void incnn_zebq_flags(u8 k, const u8 *in, size_t n, u8 *flags, size_t g)
{
	size_t ng = zebq_ceil(n, GROUP);
	u32 lim = INCNN_ZEBQ_NZ_EXP(k);

	for (; g < ng; g++) {
		size_t i, end = n - g * GROUP < GROUP ? n : (g + 1) * GROUP;
		u32 nz = 0;

		if (g % 8 == 0)
			flags[g / 8] = 0;
		for (i = g * GROUP; i < end; i++)
			nz |= (get_unaligned_le32(in + 4 * i) & 0x7f800000) >= lim;
		flags[g / 8] |= nz << (g % 8);
	}
}

/* set bits in @nb bytes at @p */
static size_t zebq_popcount(const u8 *p, size_t nb)
{
	size_t i, t = 0;

	for (i = 0; i + 4 <= nb; i += 4)
		t += hweight32(get_unaligned_le32(p + i));
	for (; i < nb; i++)
		t += hweight8(p[i]);
	return t;
}

size_t incnn_zebq_tag_bytes(const u8 *flags, size_t n)
{
	size_t ng = zebq_ceil(n, GROUP), nf = zebq_ceil(ng, 8);
	size_t t = 2 * zebq_popcount(flags, nf);

	if (n % GROUP && zebq_flag(flags, ng - 1))
		t -= 2 - zebq_ceil(n % GROUP, 4);
	return t;
}

/* where group @g's tags are: after the flags and the flagged groups' before it */
static size_t zebq_tag_at(const u8 *flags, size_t n, size_t g)
{
	size_t nf = zebq_ceil(zebq_ceil(n, GROUP), 8);
	size_t t = zebq_popcount(flags, g / 8);

	if (g % 8)
		t += hweight8(flags[g / 8] & ((1u << (g % 8)) - 1));
	return nf + 2 * t;
}

/*
 * Encode @cnt (1..8) values of a flagged group into @op (room for
 * GROUP_MAX + SLACK bytes). Returns the payload bytes, their tags in
 * *tagsp.
 */
static unsigned int zebq_enc_group(const u8 *in, unsigned int cnt, int k,
				   u32 *tagsp, u8 *op, u32 *classes)
{
	unsigned int i, pos = 0;
	u32 tags = 0;

	for (i = 0; i < cnt; i++) {
		u32 v, tag = incnn_ebq_tag_value(get_unaligned_le32(in + 4 * i),
						 k, &v);

		put_unaligned_le32(v, op + pos);
		pos += INCNN_TAG_BYTES(tag);
		tags |= tag << (2 * i);
		classes[tag]++;
	}
	*tagsp = tags;
	return pos;
}

ssize_t incnn_zebq_encode_rest(u8 k, const u8 *in, size_t len, u8 *out,
			       size_t cap, struct incnn_enc_pos *at,
			       struct incnn_hist *hist)
{
	size_t n = len / 4, ng = zebq_ceil(n, GROUP), g = at->i / GROUP;
	size_t pos = at->pos, tp = zebq_tag_at(out, n, g);
	u32 *classes = at->classes;
	u8 tmp[GROUP_MAX + SLACK];

	for (; g < ng; g++) {
		size_t i = g * GROUP;
		unsigned int cnt = n - i < GROUP ? n - i : GROUP, plen;
		u32 tags;

		if (!zebq_flag(out, g)) {
			classes[0] += cnt;
			continue;
		}
		if (likely(cap - pos >= GROUP_MAX + SLACK)) {
			plen = zebq_enc_group(in + 4 * i, cnt, k, &tags,
					      out + pos, classes);
		} else {
			plen = zebq_enc_group(in + 4 * i, cnt, k, &tags, tmp,
					      classes);
			if (plen > cap - pos)
				return -ENOSPC;
			memcpy(out + pos, tmp, plen);
		}
		pos += plen;
		out[tp++] = tags;
		if (cnt > 4)
			out[tp++] = tags >> 8;
	}

	if (hist)
		for (g = 0; g < 4; g++)
			hist->n[g] += classes[g];
	return pos;
}

/*
 * Write the flags (groups from @flags_done on; the ones before are
 * written) and check that they and the tags fit: @pos gets where the
 * payload starts. 0, -EINVAL or -ENOSPC.
 */
int incnn_zebq_start(u8 k, const u8 *in, size_t len, u8 *out, size_t cap,
		     size_t flags_done, size_t *pos)
{
	size_t n = len / 4, nf = zebq_ceil(zebq_ceil(n, GROUP), 8), t;

	if (len % 4)
		return -EINVAL;
	if (nf > cap)
		return -ENOSPC;
	incnn_zebq_flags(k, in, n, out, flags_done);
	t = incnn_zebq_tag_bytes(out, n);
	if (t > cap - nf)
		return -ENOSPC;
	*pos = nf + t;
	return 0;
}

static ssize_t zebq_encode(u8 k, const u8 *in, size_t len, u8 *out,
			   size_t cap, void __always_unused *scratch,
			   struct incnn_hist *hist)
{
	struct incnn_enc_pos at = { 0 };
	int err;

	err = incnn_zebq_start(k, in, len, out, cap, 0, &at.pos);
	if (err)
		return err;
	return incnn_zebq_encode_rest(k, in, len, out, cap, &at, hist);
}

int incnn_zebq_decode_check(const u8 *in, size_t len, size_t out_len,
			    size_t *pos)
{
	size_t n = out_len / 4, ng = zebq_ceil(n, GROUP), nf = zebq_ceil(ng, 8), t;

	if (out_len % 4)
		return -EINVAL;
	if (nf > len)
		return -EBADMSG;
	if (ng % 8 && in[nf - 1] >> (ng % 8))
		return -EBADMSG;
	t = incnn_zebq_tag_bytes(in, n);
	if (t > len - nf)
		return -EBADMSG;
	*pos = nf + t;
	return 0;
}

int incnn_zebq_decode_rest(u8 k, const u8 *in, size_t len, u8 *out,
			   size_t out_len, size_t i, size_t pos)
{
	size_t n = out_len / 4, ng = zebq_ceil(n, GROUP), g = i / GROUP;
	size_t tp = zebq_tag_at(in, n, g);
	u8 tmp[GROUP_MAX + SLACK];

	for (; g < ng; g++) {
		unsigned int cnt = n - g * GROUP < GROUP ? n - g * GROUP : GROUP;
		unsigned int plen = 0, j;
		u8 *op = out + 4 * GROUP * g;
		u32 tags;

		if (!zebq_flag(in, g)) {
			memset(op, 0, 4 * cnt);
			continue;
		}
		tags = in[tp++];
		if (cnt > 4)
			tags |= (u32)in[tp++] << 8;
		if (!tags || tags >> (2 * cnt))
			return -EBADMSG;
		for (j = 0; j < cnt; j++)
			plen += INCNN_TAG_BYTES((tags >> (2 * j)) & 3);
		if (plen > len - pos)
			return -EBADMSG;
		if (likely(len - pos >= plen + SLACK)) {
			incnn_ebq_dec_values(in + pos, tags, cnt, k, op);
		} else {
			memset(tmp, 0, sizeof(tmp));
			memcpy(tmp, in + pos, plen);
			incnn_ebq_dec_values(tmp, tags, cnt, k, op);
		}
		pos += plen;
	}
	return pos == len ? 0 : -EBADMSG;
}

static int zebq_decode(u8 k, const u8 *in, size_t len, u8 *out,
		       size_t out_len)
{
	size_t pos;
	int err;

	err = incnn_zebq_decode_check(in, len, out_len, &pos);
	if (err)
		return err;
	return incnn_zebq_decode_rest(k, in, len, out, out_len, 0, pos);
}

/* ebq's bound plus the flags */
static size_t zebq_bound(size_t len)
{
	size_t n = len / 4;

	return zebq_ceil(zebq_ceil(n, GROUP), 8) + zebq_ceil(n, 4) + 4 * n;
}

const struct incnn_codec incnn_codec_zebq = {
	.id = INCNN_CODEC_ZEBQ,
	.name = "zebq",
	.lossy = true,
	.floats = true,
	.param = INCNN_CODEC_PARAM_BOUND(10),
	.max_err = incnn_codec_max_err_param,
	.hist = true,
	.bound = zebq_bound,
	.encode = zebq_encode,
	.decode = zebq_decode,
	/* ebq's values: ebq's quantiser */
	.quantise = incnn_ebq_quantise,
#ifdef INCNN_CODEC_AVX2
	.encode_avx2 = incnn_zebq_encode_avx2,
	.decode_avx2 = incnn_zebq_decode_avx2,
	.quantise_avx2 = incnn_ebq_quantise_avx2,
#endif
};
