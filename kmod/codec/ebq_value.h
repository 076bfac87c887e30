/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * One value of ebq (see ebq.c), for the codecs that send ebq's tags and
 * payloads: ebq and zebq.
 */
#ifndef _INCNN_CODEC_EBQ_VALUE_H
#define _INCNN_CODEC_EBQ_VALUE_H

#include "fp32.h"

/* The 2-bit tag of @x at 2^-@k, its payload word in *@val */
static inline u32 incnn_ebq_tag_value(u32 x, int k, u32 *val)
{
	int s = 151 - (int)INCNN_F32_EXP(x) - k;
	int sc = s > 31 ? 31 : s;
	u32 m = 0x800000 | INCNN_F32_MANT(x);
	u32 q = s > 0 ? (m + (1u << ((sc - 1) & 31))) >> (sc & 31) : ~0u;
	u32 tag = (q != 0) + (q >= 0x80) + (q >= 0x8000);
	u32 sign = INCNN_F32_SIGN(x);

	*val = tag == 3 ? x : (sign << (tag == 2 ? 15 : 7)) | q;
	return tag;
}

/* The decoded bits of tag @tag from the 4 bytes @r at its payload */
static inline u32 incnn_ebq_value(u32 tag, u32 r, int k)
{
	/* magnitude bits: 7 (tag 01) or 15 (tag 10); tag 00: none */
	u32 f = tag == 2 ? 15 : 7;
	u32 q = r & ((1u << f) - 1) & (tag ? ~0u : 0);

	return tag == 3 ? r : incnn_fx_to_f32((r >> f) & 1, q, 1 - k);
}

/* decode(encode(@x)) at 2^-@k: the payload word is the 4 bytes read */
static inline u32 incnn_ebq_quantise_value(u32 x, int k)
{
	u32 v, tag = incnn_ebq_tag_value(x, k, &v);

	return incnn_ebq_value(tag, v, k);
}

/*
 * Decode @cnt values of the tag word @tags (value i's tag in bits
 * 2i+1..2i) from their payload @ip, 4 readable bytes past it.
 */
static inline void incnn_ebq_dec_values(const u8 *ip, u32 tags,
					unsigned int cnt, int k, u8 *out)
{
	unsigned int i;

	for (i = 0; i < cnt; i++) {
		u32 tag = (tags >> (2 * i)) & 3;

		put_unaligned_le32(incnn_ebq_value(tag, get_unaligned_le32(ip),
						   k), out + 4 * i);
		ip += INCNN_TAG_BYTES(tag);
	}
}

#endif /* _INCNN_CODEC_EBQ_VALUE_H */
