// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * zebq with AVX2. Flags: a compare of the exponent fields and a movemask
 * per group, a flag byte per 64 values. The flagged groups carry ebq's
 * tags and payloads, contiguous: they go through ebq's 16-value kernels
 * (ebq_avx2.h) in pairs, whether the two groups are neighbours or not.
 * Decode: the groups without a flag get eight +0.0 first. The scalar
 * code in zebq.c finishes the buffer and decides every error. Built
 * with -mavx2; see simd.h.
 */
#include "codec.h"

#ifdef INCNN_CODEC_AVX2
#include "ebq_avx2.h"
#include "zebq.h"

#define GROUP		8

/* eight zero values: the partner of a lone flagged group */
static const u8 zebq_zeros[4 * GROUP];

/*
 * The flag byte of the 64 values at @p: per group, a compare of the
 * exponent fields with @lim; the 8 masks packed to bytes (group j's lanes
 * in dword j of both halves), the halves ORed, a dword per group.
 */
static inline u32 zebq_flag_byte(const u8 *p, v8si lim)
{
#define ZEBQ_NZ(j)	((avx2_load8(p + 32 * (j)) & 0x7f800000) > lim)
	v16hi w01 = __builtin_ia32_packssdw256(ZEBQ_NZ(0), ZEBQ_NZ(1));
	v16hi w23 = __builtin_ia32_packssdw256(ZEBQ_NZ(2), ZEBQ_NZ(3));
	v16hi w45 = __builtin_ia32_packssdw256(ZEBQ_NZ(4), ZEBQ_NZ(5));
	v16hi w67 = __builtin_ia32_packssdw256(ZEBQ_NZ(6), ZEBQ_NZ(7));
#undef ZEBQ_NZ
	v4di c = (v4di)__builtin_ia32_packsswb256(w01, w23);
	v4di d = (v4di)__builtin_ia32_packsswb256(w45, w67);
	v4di w;

	w = __builtin_shufflevector(c, d, 0, 1, 4, 5) |
	    __builtin_shufflevector(c, d, 2, 3, 6, 7);
	return avx2_mask8((v8si)w != 0);
}

/* the flag bytes of whole runs of 64 values; returns the groups done */
static size_t zebq_flags_avx2(u8 k, const u8 *in, size_t n, u8 *flags)
{
	v8si lim = avx2_set1(INCNN_ZEBQ_NZ_EXP(k) - 1);
	size_t b;

	for (b = 0; n - 64 * b >= 64; b++)
		flags[b] = zebq_flag_byte(in + 256 * b, lim);
	return 8 * b;
}

/* the flags of the whole groups of flag byte @b (of @ng whole groups) */
static inline u32 zebq_whole(const u8 *flags, size_t ng, size_t b)
{
	return flags[b] & (ng - 8 * b >= 8 ? 0xff : (1u << (ng - 8 * b)) - 1);
}

/*
 * The flagged whole groups, in pairs, while the output has room, from
 * body byte @pos, their tags from @tp; their Table III counts only if
 * @count (a constant after inlining).
 */
static __always_inline void zebq_enc_steps(u8 k, const u8 *in, size_t n,
					   u8 *out, size_t cap, size_t pos,
					   size_t tp, struct incnn_enc_pos *at,
					   bool count)
{
	const v8sf scale = avx2_pow2(k - 1);
	size_t b, ng = n / GROUP, nb = (ng + 7) / 8, g = ng, ga = 0;
	struct avx2_counts c = { 0 };
	const u8 *pa = NULL;
	u8 t[4];

	for (b = 0; b < nb; b++) {
		u32 f = zebq_whole(out, ng, b);

		/* eight flagged groups: four pairs of neighbours */
		if (f == 0xff && !pa && cap - pos >= 4 * WIDE_ROOM) {
			const u8 *ip = in + 4 * GROUP * 8 * b;
			int j;

			for (j = 0; j < 4; j++, ip += 8 * GROUP, tp += 4)
				pos += ebq_enc16(ip, ip + 4 * GROUP, scale,
						 out + tp, out + pos, &c, count);
			continue;
		}
		while (f) {
			size_t gb = 8 * b + __builtin_ctz(f);

			f &= f - 1;
			if (!pa) {
				ga = gb;
				pa = in + 4 * GROUP * ga;
				continue;
			}
			if (cap - pos < WIDE_ROOM) {
				g = ga;
				goto stop;
			}
			pos += ebq_enc16(pa, in + 4 * GROUP * gb, scale,
					 out + tp, out + pos, &c, count);
			tp += 4;
			pa = NULL;
		}
	}
	if (pa) {
		/* a lone last one, beside eight zeros (tag 00, no payload) */
		if (cap - pos < WIDE_ROOM) {
			g = ga;
			goto stop;
		}
		pos += ebq_enc16(pa, zebq_zeros, scale, t, out + pos, &c, count);
		memcpy(out + tp, t, 2);
	}
stop:
	avx2_enc_stop(at, GROUP * g, pos, count, c.n1, c.n2, c.n3, c.c1);
}

ssize_t incnn_zebq_encode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			       size_t cap, void __always_unused *scratch,
			       struct incnn_hist *hist)
{
	struct incnn_enc_pos at = { 0 };
	size_t n = len / 4, nf = (n + 8 * GROUP - 1) / (8 * GROUP), pos;
	int err;

	if (len % 4)
		return -EINVAL;
	if (nf > cap)
		return -ENOSPC;
	err = incnn_zebq_start(k, in, len, out, cap,
			       zebq_flags_avx2(k, in, n, out), &pos);
	if (err)
		return err;
	if (hist)
		zebq_enc_steps(k, in, n, out, cap, pos, nf, &at, true);
	else
		zebq_enc_steps(k, in, n, out, cap, pos, nf, &at, false);
	return incnn_zebq_encode_rest(k, in, len, out, cap, &at, hist);
}

/*
 * Eight +0.0 for the groups without a flag before @end, which the scalar
 * code would write before reaching group @end (on an error, the output
 * past it is the scalar code's too).
 */
static void zebq_dec_zeros(const u8 *flags, size_t end, u8 *out)
{
	size_t b;

	for (b = 0; 8 * b < end; b++) {
		u32 z = ~flags[b] & (end - 8 * b >= 8 ? 0xff :
				     (1u << (end - 8 * b)) - 1);

		if (z == 0xff) {
			memset(out + 4 * GROUP * 8 * b, 0, 4 * GROUP * 8);
			continue;
		}
		for (; z; z &= z - 1)
			avx2_store8(out + 4 * GROUP * (8 * b + __builtin_ctz(z)),
				    avx2_set1(0));
	}
}

/*
 * The flagged whole groups in pairs, while the payload is readable,
 * from body byte *@pos, their tags from *@tp. Returns the first group
 * not decoded (every flagged one before it is).
 */
static size_t zebq_dec_pairs(u8 k, const u8 *in, size_t len, u8 *out,
			     size_t ng, size_t *posp, size_t *tpp)
{
	size_t pos = *posp, tp = *tpp;
	const v8sf s1 = avx2_pow2(-7 - k), s2 = avx2_pow2(1 - k);
	ssize_t lim = (ssize_t)len - WIDE_ROOM;
	size_t b, nb = (ng + 7) / 8, ga = 0;
	bool have = false;

	for (b = 0; b < nb; b++) {
		u32 f = zebq_whole(in, ng, b), tags;

		/* eight flagged groups, room for four pairs of neighbours */
		if (f == 0xff && !have && (ssize_t)pos <= lim - 3 * WIDE_ROOM) {
			u8 *op = out + 4 * GROUP * 8 * b;

			for (; f; f >>= 2, op += 16 * 4, tp += 4) {
				tags = get_unaligned_le32(in + tp);
				if (!(tags & 0xffff) || !(tags >> 16))
					break;
				pos += ebq_dec16(in + pos, tags, s1, s2, op,
						  op + 32);
			}
			/* the groups left: the top ones (none if all done) */
			f = (f << (8 - __builtin_popcount(f))) & 0xff;
		}
		while (f) {
			size_t gb = 8 * b + __builtin_ctz(f);

			f &= f - 1;
			if (!have) {
				ga = gb;
				have = true;
				continue;
			}
			tags = get_unaligned_le32(in + tp);
			/* an all-00 group: the scalar code rejects it */
			if (!(tags & 0xffff) || !(tags >> 16) ||
			    (unlikely((ssize_t)pos > lim) &&
			     ((tags & TAGS_WIDE) || len - pos < BYTES_ROOM)))
				goto stop;
			pos += ebq_dec16(in + pos, tags, s1, s2,
					  out + 4 * GROUP * ga,
					  out + 4 * GROUP * gb);
			tp += 4;
			have = false;
		}
	}
	if (!have)
		ga = ng;
stop:
	zebq_dec_zeros(in, ga, out);
	*posp = pos;
	*tpp = tp;
	return ga;
}

int incnn_zebq_decode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			   size_t out_len)
{
	const v8sf s1 = avx2_pow2(-7 - k), s2 = avx2_pow2(1 - k);
	size_t n = out_len / 4, ng = n / GROUP, g, pos, tp, base, avail;
	u8 tmp[2 * WIDE_ROOM], rest[4 * GROUP];
	int err;

	err = incnn_zebq_decode_check(in, len, out_len, &pos);
	if (err)
		return err;
	tp = (n + 8 * GROUP - 1) / (8 * GROUP);
	g = zebq_dec_pairs(k, in, len, out, ng, &pos, &tp);

	/* the rest one group at a time, from a zero-padded copy */
	base = pos;
	avail = len - pos < WIDE_ROOM ? len - pos : WIDE_ROOM;
	memset(tmp, 0, sizeof(tmp));
	memcpy(tmp, in + pos, avail);
	for (; g < ng; g++) {
		u32 tags;
		unsigned int l;

		if (!(in[g / 8] >> (g % 8) & 1)) {
			avx2_store8(out + 4 * GROUP * g, avx2_set1(0));
			continue;
		}
		tags = get_unaligned_le16(in + tp);
		l = ebq_len16(tags);
		if (!tags || l > avail - (pos - base))
			break;	/* the scalar code decides */
		ebq_dec16(tmp + (pos - base), tags, s1, s2,
			  out + 4 * GROUP * g, rest);
		tp += 2;
		pos += l;
	}
	return incnn_zebq_decode_rest(k, in, len, out, out_len, GROUP * g, pos);
}
#endif /* INCNN_CODEC_AVX2 */
