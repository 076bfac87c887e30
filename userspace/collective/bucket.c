// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Keyed calls (incnn_allreduce_bucket): per gradient bucket, the scale
 * 2^e that makes the codec's bound relative to the bucket's magnitude and
 * the error-feedback residuals, kept between calls. The per-value
 * transform runs inside the ring's passes (ring.c, struct coll_bkrun); this
 * file keeps the state, agrees on the first call's e and derives the next
 * call's e from the result (collective.h and docs/training.md give the
 * rule).
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "coll.h"

#define BK_NO_EXP	INT32_MIN	/* a rank whose input is all zero */
#define BK_MSG_HEAD	12	/* settings, segments, their hash; 4 B each */

/*
 * |x| as int32 lanes: the sign bit cleared, so signed compares order them
 * as the floats (SSE2 and AVX2 have no unsigned compare); an AVX2 clone
 * picked at load time on x86-64.
 */
typedef int32_t bk_i8 __attribute__((vector_size(32)));

static void bk_free_one(struct coll_bucket *b)
{
	free(b->res);
	free(b->seg);
	b->res = NULL;
	b->seg = NULL;
}

void incnn_coll_bk_free(struct incnn_comm *c)
{
	for (size_t i = 0; i < c->bk.n; i++)
		bk_free_one(&c->bk.v[i]);
	free(c->bk.v);
	c->bk.v = NULL;
	c->bk.n = c->bk.cap = 0;
}

static struct coll_bucket *bk_find(const struct incnn_comm *c, uint64_t key)
{
	for (size_t i = 0; i < c->bk.n; i++)
		if (c->bk.v[i].key == key)
			return &c->bk.v[i];
	return NULL;
}

/* Whether @b's segments are @seg[0..nseg) (NULL: one segment). */
static bool bk_same_segs(const struct coll_bucket *b, const size_t *seg,
			 size_t nseg)
{
	size_t end = 0;

	if (!seg)
		return b->nseg == 1;
	if (b->nseg != nseg)
		return false;
	for (size_t i = 0; i < nseg; i++) {
		end += seg[i];
		if (b->seg[i].end != end)
			return false;
	}
	return true;
}

/* @b's segments: @seg[0..nseg) (lengths, summing to b->n), or one. */
static int bk_set_segs(struct coll_bucket *b, const size_t *seg, size_t nseg)
{
	size_t end = 0;

	if (!seg)
		nseg = 1;
	b->seg = calloc(nseg, sizeof(*b->seg));
	if (!b->seg)
		return -ENOMEM;
	b->nseg = nseg;
	for (size_t i = 0; i < nseg; i++) {
		end += seg ? seg[i] : b->n;
		b->seg[i] = (struct coll_bkseg){ .end = end, .s = 1, .inv = 1 };
	}
	return 0;
}

/*
 * @key's state for @n values in segments @seg: found, (re)started, or
 * NULL (no memory).
 */
static struct coll_bucket *bk_get(struct incnn_comm *c, uint64_t key,
				  size_t n, const size_t *seg, size_t nseg)
{
	struct coll_bucket *b = bk_find(c, key);

	if (b && b->n == n && bk_same_segs(b, seg, nseg))
		return b;
	if (!b) {
		if (c->bk.n == c->bk.cap) {
			size_t cap = c->bk.cap ? 2 * c->bk.cap : 16;
			struct coll_bucket *v = realloc(c->bk.v,
							cap * sizeof(*v));

			if (!v)
				return NULL;
			c->bk.v = v;
			c->bk.cap = cap;
		}
		b = &c->bk.v[c->bk.n++];
	} else {
		bk_free_one(b);
	}
	memset(b, 0, sizeof(*b));
	b->key = key;
	b->n = n;
	b->info.n = n;
	if (c->bk.ef) {
		b->res = calloc(n ? n : 1, sizeof(float));
		b->info.ef_bytes = (uint64_t)n * sizeof(float);
	}
	if ((c->bk.ef && !b->res) || bk_set_segs(b, seg, nseg)) {
		bk_free_one(b);
		*b = c->bk.v[--c->bk.n];
		return NULL;
	}
	return b;
}

COLL_SIMD_CLONES("avx2")
uint32_t incnn_coll_absmax_bits(float *x, size_t n, float mul)
{
	const bk_i8 mask = { 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff,
			     0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff };
	const bk_i8 inf = { 0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000,
			    0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000 };
	typedef float f8 __attribute__((vector_size(32)));
	const f8 mv = { mul, mul, mul, mul, mul, mul, mul, mul };
	bk_i8 m = { 0 }, v, keep;
	uint32_t best = 0, u;
	size_t i = 0;
	f8 f;

	for (; i + 8 <= n; i += 8) {
		memcpy(&f, x + i, sizeof(f));
		if (mul != 1) {
			f = f * mv;
			memcpy(x + i, &f, sizeof(f));
		}
		memcpy(&v, &f, sizeof(v));
		v &= mask;
		keep = (v < inf) & (v > m);
		m = (m & ~keep) | (v & keep);
	}
	for (int j = 0; j < 8; j++)
		best = (uint32_t)m[j] > best ? (uint32_t)m[j] : best;
	for (; i < n; i++) {
		if (mul != 1)
			x[i] = x[i] * mul;
		memcpy(&u, x + i, sizeof(u));
		u &= 0x7fffffff;
		if (u < 0x7f800000 && u > best)
			best = u;
	}
	return best;
}

/* ilogb of a finite, nonzero |value| given as its bit pattern */
static int bk_ilogb(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return ilogbf(f);
}

static int bk_clamp(long e)
{
	if (e > INCNN_SCALE_EXP_MAX)
		return INCNN_SCALE_EXP_MAX;
	if (e < -INCNN_SCALE_EXP_MAX)
		return -INCNN_SCALE_EXP_MAX;
	return (int)e;
}

/* The exponent of max |x[0..n)| / |d| (d 0: 1), BK_NO_EXP when all zero. */
static int32_t bk_local_exp(const float *x, size_t n, float div)
{
	uint32_t bits = n ? incnn_coll_absmax_bits((float *)x, n, 1) : 0;
	float m;

	if (!bits)
		return BK_NO_EXP;
	memcpy(&m, &bits, sizeof(m));
	return ilogb(div ? m / fabs(div) : (double)m);
}

/* FNV-1a of @b's segment ends: ranks compare their segments by it. */
static uint32_t bk_seg_hash(const struct coll_bucket *b)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < b->nseg; i++) {
		uint64_t e = b->seg[i].end;

		for (int k = 0; k < 8; k++, e >>= 8)
			h = (h ^ (uint8_t)e) * 16777619u;
	}
	return h;
}

/* The settings' disagreement of rank @r (message @p), as an error. */
static int bk_disagree(struct incnn_comm *c, const uint8_t *mine,
		       const uint8_t *p, int r)
{
	if (memcmp(p + 4, mine + 4, 8))
		return incnn_coll_fail(c, -EPROTO, false,
				       "ranks disagree on a keyed call's segments: rank %d has %u (hash %08x), rank %d has %u (hash %08x)",
				       c->rank, coll_get32(mine + 4),
				       coll_get32(mine + 8), r,
				       coll_get32(p + 4), coll_get32(p + 8));
	return incnn_coll_fail(c, -EPROTO, false,
			       "ranks disagree on keyed-call settings: rank %d has scale %s and error feedback %s, rank %d has scale %s and error feedback %s",
			       c->rank, mine[0] ? "auto" : "off",
			       mine[1] ? "on" : "off", r,
			       p[0] ? "auto" : "off", p[1] ? "on" : "off");
}

/*
 * A key's first call: every rank says its settings, its segments and,
 * per segment, the exponent of its input's largest value (one store
 * gather); the ranks must agree on the settings and the segments, and
 * each segment's e keeps the sum of N such inputs below 1. A segment
 * that is zero on every rank takes the bucket's e (its largest).
 */
static int bk_agree(struct incnn_comm *c, struct coll_bucket *b,
		    const float *buf, float div)
{
	size_t len = BK_MSG_HEAD + 4 * b->nseg, start = 0;
	uint8_t *mine, *all;
	long top_all = BK_NO_EXP;
	int ret, lg = 0;

	mine = malloc(len * ((size_t)c->world + 1));
	if (!mine)
		return incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	all = mine + len;
	mine[0] = c->bk.scale;
	mine[1] = c->bk.ef;
	mine[2] = mine[3] = 0;
	coll_put32(mine + 4, (uint32_t)b->nseg);
	coll_put32(mine + 8, bk_seg_hash(b));
	for (size_t i = 0; i < b->nseg; i++) {
		coll_put32(mine + BK_MSG_HEAD + 4 * i,
			   (uint32_t)bk_local_exp(buf + start,
						  b->seg[i].end - start, div));
		start = b->seg[i].end;
	}
	ret = incnn_comm_allgather_meta(c, mine, len, all);
	for (int r = 0; !ret && r < c->world; r++) {
		const uint8_t *p = all + len * (size_t)r;

		if (memcmp(p, mine, BK_MSG_HEAD))
			ret = bk_disagree(c, mine, p, r);
	}
	while ((1L << lg) < c->world)
		lg++;
	/* each segment's top exponent over the ranks, into its exp */
	for (size_t i = 0; !ret && i < b->nseg; i++) {
		long top = BK_NO_EXP;

		for (int r = 0; r < c->world; r++) {
			int32_t e = (int32_t)coll_get32(all + len * (size_t)r +
							BK_MSG_HEAD + 4 * i);

			if (e != BK_NO_EXP && e > top)
				top = e;
		}
		b->seg[i].exp = top == BK_NO_EXP ? BK_NO_EXP :
				bk_clamp(-1 - (top + lg));
		if (top != BK_NO_EXP && top > top_all)
			top_all = top;
	}
	free(mine);
	if (ret)
		return ret;
	b->have_exp = top_all != BK_NO_EXP || !c->bk.scale;
	for (size_t i = 0; i < b->nseg; i++)
		if (b->seg[i].exp == BK_NO_EXP || !c->bk.scale)
			b->seg[i].exp = b->have_exp && c->bk.scale ?
					bk_clamp(-1 - (top_all + lg)) : 0;
	return 0;
}

/*
 * After a call: the result's unscaling (unless the ring did it: run->top),
 * each segment's next e (kept where its result is zero), the counts.
 */
static void bk_after(struct incnn_comm *c, struct coll_bucket *b, float *buf,
		     const struct coll_bkrun *run)
{
	struct incnn_bucket_info *in = &b->info;
	bool any = false;
	size_t start = 0;

	in->calls++;
	in->exp = b->seg[0].exp;
	in->quantised = run->quantised;
	in->nonzero = run->nonzero;
	in->flattened = run->flattened;
	if (run->nonzero && run->flattened * 100 > run->nonzero * 99)
		in->flat_streak++;
	else
		in->flat_streak = 0;
	if (in->flat_streak >= INCNN_FLAT_CALLS && !in->flat) {
		in->flat = 1;
		c->bk.flattened++;
	}
	for (size_t i = 0; c->bk.scale && i < b->nseg; i++) {
		struct coll_bkseg *sg = &b->seg[i];
		uint32_t bits = run->top ? run->top[i] :
				incnn_coll_absmax_bits(buf + start,
						       sg->end - start, sg->inv);

		if (bits)
			sg->exp = bk_clamp(-1L - bk_ilogb(bits));
		any |= bits != 0;
		start = sg->end;
	}
	/* no information in an all-zero result: agree again */
	if (c->bk.scale)
		b->have_exp = any;
	in->next_exp = b->seg[0].exp;
}

static int bk_plain(struct incnn_comm *c, float *buf, size_t n, float div)
{
	return div ? incnn_allreduce_div(c, buf, n, div) :
		     incnn_allreduce(c, buf, n);
}

/* Whether @seg[0..nseg) (lengths) is a valid segment list of @n values. */
static bool bk_segs_ok(size_t n, const size_t *seg, size_t nseg)
{
	size_t sum = 0;

	if (!seg)
		return !nseg;
	if (!nseg || nseg > INCNN_BUCKET_SEG_MAX)
		return false;
	for (size_t i = 0; i < nseg; i++) {
		if (seg[i] > n - sum)
			return false;
		sum += seg[i];
	}
	return sum == n;
}

int incnn_allreduce_bucket_seg(struct incnn_comm *c, float *buf, size_t n,
			       uint64_t key, float divisor, const size_t *seg,
			       size_t nseg)
{
	struct coll_bkrun run = { 0 };
	struct coll_bucket *b;
	int ret;

	if (!c)
		return -EINVAL;
	if (c->err)
		return c->err;
	if (divisor != 0 && !isfinite(divisor))
		return incnn_coll_fail(c, -EINVAL, false,
				       "invalid divisor %g for incnn_allreduce_bucket",
				       (double)divisor);
	if (!bk_segs_ok(n, seg, nseg))
		return incnn_coll_fail(c, -EINVAL, false,
				       "invalid segments for incnn_allreduce_bucket: %zu of them for %zu values",
				       nseg, n);
	if (c->world == 1 || !c->codec.q.codec ||
	    c->method != INCNN_COLL_METHOD_NONE)
		return bk_plain(c, buf, n, divisor);
	if ((n && !buf) || n > (SIZE_MAX / 4) / 2)
		return incnn_coll_fail(c, -EINVAL, false,
				       "invalid arguments: buf %p, n %zu",
				       (const void *)buf, n);
	b = bk_get(c, key, n, seg, nseg);
	if (!b)
		return incnn_coll_fail(c, -ENOMEM, false,
				       "out of memory (%zu residuals)", n);
	if (!b->have_exp) {
		ret = bk_agree(c, b, buf, divisor);
		if (ret)
			return ret;
	}
	for (size_t i = 0; c->bk.scale && i < b->nseg; i++) {
		b->seg[i].s = ldexpf(1, b->seg[i].exp);
		b->seg[i].inv = ldexpf(1, -b->seg[i].exp);
	}
	run.res = b->res;
	run.seg = b->seg;
	run.nseg = b->nseg;
	/* the ring unscales (no memory: bk_after() does, a pass more) */
	if (c->bk.scale)
		run.top = calloc(b->nseg, sizeof(*run.top));
	ret = incnn_coll_allreduce_bk(c, buf, n, divisor, &run);
	if (!ret)
		bk_after(c, b, buf, &run);
	free(run.top);
	return ret;
}

int incnn_allreduce_bucket(struct incnn_comm *c, float *buf, size_t n,
			   uint64_t key, float divisor)
{
	return incnn_allreduce_bucket_seg(c, buf, n, key, divisor, NULL, 0);
}

int incnn_comm_bucket_exps(const struct incnn_comm *c, uint64_t key,
			   int32_t *exp, size_t len)
{
	const struct coll_bucket *b;

	if (!c || (len && !exp))
		return -EINVAL;
	b = bk_find(c, key);
	if (!b)
		return -ENOENT;
	for (size_t i = 0; i < len && i < b->nseg; i++)
		exp[i] = b->seg[i].exp;
	return (int)b->nseg;
}

int incnn_comm_bucket_info(const struct incnn_comm *c, uint64_t key,
			   struct incnn_bucket_info *info)
{
	const struct coll_bucket *b;

	if (!c || !info)
		return -EINVAL;
	b = bk_find(c, key);
	if (!b)
		return -ENOENT;
	*info = b->info;
	return 0;
}

int incnn_comm_bucket_forget(struct incnn_comm *c, uint64_t key)
{
	struct coll_bucket *b = c ? bk_find(c, key) : NULL;

	if (!b)
		return c ? -ENOENT : -EINVAL;
	bk_free_one(b);
	*b = c->bk.v[--c->bk.n];
	return 0;
}

void incnn_comm_bucket_stats(const struct incnn_comm *c,
			     struct incnn_bucket_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!c)
		return;
	st->scale = c->bk.scale;
	st->error_feedback = c->bk.ef;
	st->buckets = c->bk.n;
	st->flattened = c->bk.flattened;
	for (size_t i = 0; i < c->bk.n; i++)
		st->ef_bytes += c->bk.v[i].info.ef_bytes;
}
