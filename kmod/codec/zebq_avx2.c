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

typedef short v8hi __attribute__((vector_size(8 * sizeof(u16))));

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

/*
 * The flag bytes: whole runs of 64 values by zebq_flag_byte(), then a
 * group at a time (the last one zero-padded: zeros have q = 0). Returns
 * the groups done: all.
 */
static size_t zebq_flags_avx2(u8 k, const u8 *in, size_t n, u8 *flags)
{
	v8si lim = avx2_set1(INCNN_ZEBQ_NZ_EXP(k) - 1);
	size_t b, g, ng = (n + GROUP - 1) / GROUP;

	for (b = 0; n - 64 * b >= 64; b++)
		flags[b] = zebq_flag_byte(in + 256 * b, lim);
	for (g = 8 * b; g < ng; g++) {
		unsigned int cnt = n - GROUP * g < GROUP ? n - GROUP * g : GROUP;
		v8si e = avx2_load_part(in + 4 * GROUP * g, cnt) & 0x7f800000;

		if (!(g % 8))
			flags[g / 8] = 0;
		flags[g / 8] |= (avx2_mask8(e > lim) != 0) << (g % 8);
	}
	return ng;
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

		/*
		 * eight flagged groups: the pending one with the first,
		 * then pairs of neighbours (the last one pending)
		 */
		if (f == 0xff && cap - pos >= 4 * WIDE_ROOM) {
			const u8 *ip = in + 4 * GROUP * 8 * b;
			int j, np = 4;

			if (pa) {
				pos += ebq_enc16(pa, ip, scale, out + tp,
						 out + pos, &c, count);
				tp += 4;
				ip += 4 * GROUP;
				np = 3;
			}
			for (j = 0; j < np; j++, ip += 8 * GROUP, tp += 4)
				pos += ebq_enc16(ip, ip + 4 * GROUP, scale,
						 out + tp, out + pos, &c, count);
			/* with a pending one, the last group is pending */
			ga = 8 * b + 7;
			pa = np == 3 ? ip : NULL;
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

/*
 * The one-pass encoder (zebq_enc_one()): the payload goes to a reserve
 * after the largest tag area, the tags and flags in place, block by
 * block (64 values, a flag byte); at the end the payload moves down to
 * the tags' end. Its state:
 */
struct zebq_one {
	v8sf scale;
	v8si lim;	/* the exponent field threshold, minus 1 */
	u8 *out;
	size_t pos;	/* payload end */
	size_t tp;	/* tag area end */
	struct avx2_counts c;
};

/*
 * The groups of a block with flags @f (not 0xff) in pairs of neighbours,
 * a pair of unflagged ones skipped; the tags of the flagged ones only.
 */
static __always_inline void zebq_enc_pairs(struct zebq_one *z, const u8 *ip,
					   u32 f, bool count)
{
	int j;

	for (j = 0; j < 4; j++, f >>= 2, ip += 8 * GROUP) {
		u32 fl = f & 3, tags;
		u8 t[4];

		if (!fl)
			continue;
		z->pos += ebq_enc16(ip, ip + 4 * GROUP, z->scale, t,
				    z->out + z->pos, &z->c, count);
		tags = get_unaligned_le32(t);
		if (fl == 3) {
			put_unaligned_le32(tags, z->out + z->tp);
			z->tp += 4;
		} else {
			put_unaligned_le16(fl == 1 ? tags : tags >> 16,
					   z->out + z->tp);
			z->tp += 2;
		}
	}
}

/*
 * A block of 64 values at @ip; @dense: the block before had eight
 * flagged groups, so encode first and find the flags from the tags
 * (an unflagged group has tags 0 and no payload: only its tags go),
 * else find the flags first and skip unflagged pairs. Returns the flag
 * byte.
 */
static __always_inline u32 zebq_enc_block(struct zebq_one *z, const u8 *ip,
					  bool dense, bool count)
{
	const v8hi zero = { 0 };
	v8hi nz;
	u8 t[16];
	u32 f;
	int j;

	if (!dense) {
		f = zebq_flag_byte(ip, z->lim);
		if (f != 0xff) {
			zebq_enc_pairs(z, ip, f, count);
			return f;
		}
	}
	for (j = 0; j < 4; j++)
		z->pos += ebq_enc16(ip + 64 * j, ip + 64 * j + 32, z->scale,
				    t + 4 * j, z->out + z->pos, &z->c, count);
	/* a bit per tag word != 0 */
	nz = (v8hi)avx2_load16(t) != 0;
	f = __builtin_ia32_pmovmskb128(__builtin_ia32_packsswb128(nz, zero));
	if (f == 0xff) {
		avx2_store16(z->out + z->tp, avx2_load16(t));
		z->tp += 16;
		return f;
	}
	for (j = 0; j < 8; j++)
		if (f >> j & 1) {
			memcpy(z->out + z->tp, t + 2 * j, 2);
			z->tp += 2;
		}
	return f;
}

/*
 * One pass, when the output has room for the reserve (@pos: nf + 2 *
 * groups, the largest tag area) and the SIMD stores. Blocks while there
 * is room, the last values from a zero-padded block (unused flags and
 * tags zero, as zeros give; a last group of 1..4 values has one tag
 * byte); then the payload moves to the tags' end, and the scalar code
 * finishes from there (the flags of the groups left first).
 */
static __always_inline ssize_t zebq_enc_one(u8 k, const u8 *in, size_t len,
					    u8 *out, size_t cap, size_t pos,
					    struct incnn_hist *hist,
					    bool count)
{
	size_t n = len / 4, nb = n / 64, b, p0 = pos, at_tags;
	size_t ng = (n + GROUP - 1) / GROUP, nf = (ng + 7) / 8;
	struct zebq_one z = {
		.scale = avx2_pow2(k - 1),
		.lim = avx2_set1(INCNN_ZEBQ_NZ_EXP(k) - 1),
		.out = out, .pos = pos, .tp = nf,
	};
	struct incnn_enc_pos at = { 0 };
	bool dense = false;
	int err;

	for (b = 0; b < nb && cap - z.pos >= 4 * WIDE_ROOM; b++) {
		u32 f = zebq_enc_block(&z, in + 256 * b, dense, count);

		out[b] = f;
		dense = f == 0xff;
	}
	if (b == nb && n % 64 && cap - z.pos >= 4 * WIDE_ROOM) {
		u8 buf[256];

		avx2_zero(buf, sizeof(buf) / 32);
		memcpy(buf, in + 256 * b, 4 * (n % 64));
		out[b] = zebq_enc_block(&z, buf, false, count);
		if (n % GROUP && n % GROUP <= 4 &&
		    (out[(ng - 1) / 8] >> ((ng - 1) % 8) & 1))
			z.tp--;
		b++;
	}
	at_tags = z.tp;
	if (8 * b < ng) {
		/* the flags of the groups left, the whole tag area */
		err = incnn_zebq_start(k, in, len, out, cap, 8 * b, &at_tags);
		if (err)
			return err;
	}
	memmove(out + at_tags, out + p0, z.pos - p0);
	avx2_enc_stop(&at, 64 * b < n ? 64 * b : n, at_tags + (z.pos - p0),
		      count, z.c.n1, z.c.n2, z.c.n3, z.c.c1);
	/* a group boundary for the scalar code: past a partial last group */
	at.i = 64 * b < n ? 64 * b : GROUP * ng;
	return incnn_zebq_encode_rest(k, in, len, out, cap, &at, hist);
}

ssize_t incnn_zebq_encode_avx2(u8 k, const u8 *in, size_t len, u8 *out,
			       size_t cap, void __always_unused *scratch,
			       struct incnn_hist *hist)
{
	struct incnn_enc_pos at = { 0 };
	size_t n = len / 4, nf = (n + 8 * GROUP - 1) / (8 * GROUP), pos;
	v8si lim;
	int err;

	if (len % 4)
		return -EINVAL;
	if (nf > cap)
		return -ENOSPC;
	/*
	 * dense data (a first block of five or more flagged groups): one
	 * pass; else the flags first, the unflagged groups skipped
	 */
	pos = nf + 2 * ((n + GROUP - 1) / GROUP);
	lim = avx2_set1(INCNN_ZEBQ_NZ_EXP(k) - 1);
	if (n >= 64 && cap - nf >= pos - nf + 4 * WIDE_ROOM &&
	    __builtin_popcount(zebq_flag_byte(in, lim)) >= 5) {
		if (hist)
			return zebq_enc_one(k, in, len, out, cap, pos, hist,
					    true);
		return zebq_enc_one(k, in, len, out, cap, pos, NULL, false);
	}
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
	size_t b, j;

	/*
	 * 64 groups at a time (dense data: a few bits of ~flags, one loop
	 * per word rather than a branch per flag byte)
	 */
	for (b = 0; 8 * b + 64 <= end; b += 8) {
		u64 z = ~avx2_get64(flags + b);

		if (z == ~0ull) {
			for (j = 0; j < 8; j++)
				avx2_zero(out + 4 * GROUP * 8 * (b + j), 8);
			continue;
		}
		for (; z; z &= z - 1)
			avx2_store8(out + 4 * GROUP * (8 * b + __builtin_ctzll(z)),
				    avx2_set1(0));
	}
	for (; 8 * b < end; b++) {
		u32 z = ~flags[b] & (end - 8 * b >= 8 ? 0xff :
				     (1u << (end - 8 * b)) - 1);

		if (z == 0xff) {
			avx2_zero(out + 4 * GROUP * 8 * b, 8);
			continue;
		}
		for (; z; z &= z - 1)
			avx2_store8(out + 4 * GROUP * (8 * b + __builtin_ctz(z)),
				    avx2_set1(0));
	}
}

/*
 * Whether the pair of flagged groups of tag word @tags decodes from body
 * byte @pos: neither group is all 00 (the scalar code rejects it) and
 * its payload is readable (lim = len - WIDE_ROOM).
 */
static __always_inline bool zebq_pair_ok(u32 tags, size_t pos, ssize_t lim,
					 size_t len, bool nz)
{
	if (!nz && (!(tags & 0xffff) || !(tags >> 16)))
		return false;
	return likely((ssize_t)pos <= lim) ||
	       (!(tags & TAGS_WIDE) && len - pos >= BYTES_ROOM);
}

/*
 * Whether the tags of the flagged whole groups (@ng whole groups, tags
 * from @tp) are all non-zero, as the scalar code requires: then the
 * pair loop need not check them.
 */
static bool zebq_tags_nz(const u8 *in, size_t ng, size_t tp)
{
	size_t b, w = 0, i;

	for (b = 0; 8 * b < ng; b++)
		w += __builtin_popcount(zebq_whole(in, ng, b));
	for (i = 0; w - i >= 16; i += 16) {
		v8si t = avx2_load8(in + tp + 2 * i);

		if (__builtin_ia32_pmovmskb256((v32qi)((v16hi)t == 0)))
			return false;
	}
	for (; i < w; i++)
		if (!get_unaligned_le16(in + tp + 2 * i))
			return false;
	return true;
}

/*
 * The flagged whole groups in pairs, while the payload is readable,
 * from body byte *@posp, their tags from *@tpp (all non-zero if @nz, a
 * constant after inlining). Returns the first group not decoded (every
 * flagged one before it is).
 */
static __always_inline size_t zebq_dec_pairs(u8 k, const u8 *in, size_t len,
					     u8 *out, size_t ng, size_t *posp,
					     size_t *tpp, bool nz)
{
	size_t pos = *posp, tp = *tpp;
	const v8sf s1 = avx2_pow2(-7 - k), s2 = avx2_pow2(1 - k);
	ssize_t lim = (ssize_t)len - WIDE_ROOM;
	size_t b, nb = (ng + 7) / 8, ga = 0;
	bool have = false;

	for (b = 0; b < nb; b++) {
		u32 f = zebq_whole(in, ng, b), tags;

		/*
		 * eight flagged groups: the pending one with the first,
		 * then pairs of neighbours; the groups left (a bad pair on,
		 * or the last one) to the loop below
		 */
		if (f == 0xff) {
			u8 *op0 = out + 4 * GROUP * 8 * b, *op = op0;
			/* the pairs start below the last group */
			u8 *last = op0 + 4 * GROUP * 7;

			tags = have ? get_unaligned_le32(in + tp) : 0;
			if (have && zebq_pair_ok(tags, pos, lim, len, nz)) {
				pos += ebq_dec16(in + pos, tags, s1, s2,
						 out + 4 * GROUP * ga, op);
				tp += 4;
				op += 4 * GROUP;
				have = false;
			}
			for (; !have && op < last; op += 8 * GROUP, tp += 4) {
				tags = get_unaligned_le32(in + tp);
				if (!zebq_pair_ok(tags, pos, lim, len, nz))
					break;
				pos += ebq_dec16(in + pos, tags, s1, s2, op,
						 op + 4 * GROUP);
			}
			f = (0xff << (op - op0) / (4 * GROUP)) & 0xff;
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
			if (!zebq_pair_ok(tags, pos, lim, len, nz))
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
	if (zebq_tags_nz(in, ng, tp))
		g = zebq_dec_pairs(k, in, len, out, ng, &pos, &tp, true);
	else
		g = zebq_dec_pairs(k, in, len, out, ng, &pos, &tp, false);

	/* the rest one group at a time, from a zero-padded copy */
	base = pos;
	avail = len - pos < WIDE_ROOM ? len - pos : WIDE_ROOM;
	avx2_zero(tmp, sizeof(tmp) / 32);
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
