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
#define BK_MSG_LEN	8

typedef uint32_t bk_u8 __attribute__((vector_size(32)));

static void bk_free_one(struct coll_bucket *b)
{
	free(b->res);
	b->res = NULL;
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

/* @key's state for @n values: found, (re)started, or NULL (no memory). */
static struct coll_bucket *bk_get(struct incnn_comm *c, uint64_t key,
				  size_t n)
{
	struct coll_bucket *b = bk_find(c, key);

	if (b && b->n == n)
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
		if (!b->res) {
			*b = c->bk.v[--c->bk.n];
			return NULL;
		}
		b->info.ef_bytes = (uint64_t)n * sizeof(float);
	}
	return b;
}

/*
 * The largest finite |x[i]| as its bit pattern (0: none), x multiplied
 * by @mul first unless it is 1 (in place: the result's unscaling).
 */
static uint32_t bk_absmax_bits(float *x, size_t n, float mul)
{
	const bk_u8 mask = { 0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff,
			     0x7fffffff, 0x7fffffff, 0x7fffffff, 0x7fffffff };
	const bk_u8 inf = { 0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000,
			    0x7f800000, 0x7f800000, 0x7f800000, 0x7f800000 };
	typedef float f8 __attribute__((vector_size(32)));
	const f8 mv = { mul, mul, mul, mul, mul, mul, mul, mul };
	bk_u8 m = { 0 }, v, keep;
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
		keep = (bk_u8)(v < inf) & (bk_u8)(v > m);
		m = (m & ~keep) | (v & keep);
	}
	for (int j = 0; j < 8; j++)
		best = m[j] > best ? m[j] : best;
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

/*
 * A key's first call: every rank says its settings and the exponent of
 * its input's largest value (store gather); the ranks must agree on the
 * settings, and e keeps the sum of N such inputs below 1.
 */
static int bk_agree(struct incnn_comm *c, struct coll_bucket *b,
		    const float *buf, float div)
{
	uint8_t mine[BK_MSG_LEN], *all;
	uint32_t bits = 0;
	long top = BK_NO_EXP;
	int ret, lg = 0;

	/* the local max of x / d, as the exponent of max |x| / |d| */
	if (b->n)
		bits = bk_absmax_bits((float *)buf, b->n, 1);
	mine[0] = c->bk.scale;
	mine[1] = c->bk.ef;
	mine[2] = mine[3] = 0;
	if (bits) {
		float m;

		memcpy(&m, &bits, sizeof(m));
		coll_put32(mine + 4, (uint32_t)ilogb(div ? m / fabs(div) :
						      (double)m));
	} else {
		coll_put32(mine + 4, (uint32_t)BK_NO_EXP);
	}
	all = malloc(BK_MSG_LEN * (size_t)c->world);
	if (!all)
		return incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	ret = incnn_comm_allgather_meta(c, mine, BK_MSG_LEN, all);
	for (int r = 0; !ret && r < c->world; r++) {
		const uint8_t *p = all + BK_MSG_LEN * (size_t)r;
		int32_t e = (int32_t)coll_get32(p + 4);

		if (p[0] != mine[0] || p[1] != mine[1])
			ret = incnn_coll_fail(c, -EPROTO, false,
					      "ranks disagree on keyed-call settings: rank %d has scale %s and error feedback %s, rank %d has scale %s and error feedback %s",
					      c->rank, mine[0] ? "auto" : "off",
					      mine[1] ? "on" : "off", r,
					      p[0] ? "auto" : "off",
					      p[1] ? "on" : "off");
		else if (e != BK_NO_EXP && e > top)
			top = e;
	}
	free(all);
	if (ret)
		return ret;
	while ((1L << lg) < c->world)
		lg++;
	b->have_exp = top != BK_NO_EXP || !c->bk.scale;
	b->exp = b->have_exp ? bk_clamp(-1 - (top + lg)) : 0;
	return 0;
}

/* After a call: the result's unscaling, the next e, the counts. */
static void bk_after(struct incnn_comm *c, struct coll_bucket *b, float *buf,
		     const struct coll_bkrun *run)
{
	struct incnn_bucket_info *in = &b->info;

	in->calls++;
	in->exp = b->exp;
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
	if (c->bk.scale) {
		uint32_t bits = bk_absmax_bits(buf, b->n, run->inv);

		/* no information in an all-zero result: agree again */
		b->have_exp = bits != 0;
		if (bits)
			b->exp = bk_clamp(-1L - bk_ilogb(bits));
	}
	in->next_exp = b->exp;
}

static int bk_plain(struct incnn_comm *c, float *buf, size_t n, float div)
{
	return div ? incnn_allreduce_div(c, buf, n, div) :
		     incnn_allreduce(c, buf, n);
}

int incnn_allreduce_bucket(struct incnn_comm *c, float *buf, size_t n,
			   uint64_t key, float divisor)
{
	struct coll_bkrun run = { .s = 1, .inv = 1 };
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
	if (c->world == 1 || !c->codec.q.codec ||
	    c->method != INCNN_COLL_METHOD_NONE)
		return bk_plain(c, buf, n, divisor);
	if ((n && !buf) || n > (SIZE_MAX / 4) / 2)
		return incnn_coll_fail(c, -EINVAL, false,
				       "invalid arguments: buf %p, n %zu",
				       (const void *)buf, n);
	b = bk_get(c, key, n);
	if (!b)
		return incnn_coll_fail(c, -ENOMEM, false,
				       "out of memory (%zu residuals)", n);
	if (!b->have_exp) {
		ret = bk_agree(c, b, buf, divisor);
		if (ret)
			return ret;
	}
	if (c->bk.scale) {
		run.s = ldexpf(1, b->exp);
		run.inv = ldexpf(1, -b->exp);
	}
	run.res = b->res;
	ret = incnn_coll_allreduce_bk(c, buf, n, divisor, &run);
	if (ret)
		return ret;
	bk_after(c, b, buf, &run);
	return 0;
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
