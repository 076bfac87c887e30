// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * THC inside the communicator (docs/thc.md): incnn_allreduce_thc(), the
 * ring variant. One call, N ranks, rank r, a bucket of n floats padded to
 * P coordinates in nblk RHT blocks, ring chunk k = incnn_thc_ring_chunk():
 *
 *   1. incnn_thc_prepare() (nonce: the communicator's call counter, the
 *      same on every rank), then the preliminary stage: the nblk norms go
 *      through the store (incnn_comm_allgather_meta) and every rank takes
 *      the same maxima l_k; incnn_thc_encode() with them.
 *   2. Reduce-scatter, step s = 0..N-2: send chunk (r - s) mod N, receive
 *      chunk (r - s - 1) mod N; step 0 moves the b-bit indices, step s the
 *      partial sums of s + 1 workers in incnn_thc_ring_bits(N, s) lanes;
 *      the receiver adds its own indices' table values (integers, checked
 *      against the sender's worker count) into lanes for s + 2 workers.
 *   3. Allgather of the full sums (lanes for N workers), step by step.
 *   4. incnn_thc_decode() of the integer sums, times N: the estimate of the
 *      sum of the N buckets. Integer sums and a deterministic decode make
 *      the replicas bit-identical.
 *
 * Steps are whole-chunk exchanges (incnn_coll_ring_exchange()), not
 * pipelined like the fp32 ring. The data connections are unmarked: a THC
 * communicator's ToS is 0 (config.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "coll.h"
#include "include/incnn/thc.h"

#define TC_MAX_BLOCKS	(COLL_GATHER_MAX / 4)

/* One call's buffers, carved from c->thc.mem. */
struct tc_run {
	struct incnn_comm *c;
	const struct incnn_thc *t;
	size_t n, P, nblk;
	unsigned int b, N, r;
	uint64_t nonce;
	float *work, *norms, *all, *lmax;
	uint8_t *idx, *lanes, *cur, *nxt, *rbuf;
};

static size_t tc_up(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

static int tc_alloc(struct tc_run *x)
{
	struct incnn_comm *c = x->c;
	size_t maxc = 0, off, len, need, o;
	unsigned int k;

	for (k = 0; k < x->N; k++) {
		incnn_thc_ring_chunk(x->t, x->n, x->N, k, &off, &len);
		if (len > maxc)
			maxc = len;
	}
	need = tc_up(4 * x->P) + tc_up(4 * x->nblk) * 2 +
	       tc_up(4 * x->nblk * x->N) + tc_up(incnn_thc_idx_bytes(x->t, x->n)) +
	       tc_up(4 * x->P) + 3 * tc_up(4 * maxc);
	if (need > c->thc.mem_cap) {
		uint8_t *p = realloc(c->thc.mem, need);

		if (!p)
			return incnn_coll_fail(c, -ENOMEM, false,
					       "out of memory (THC, %zu bytes)",
					       need);
		c->thc.mem = p;
		c->thc.mem_cap = need;
	}
	o = 0;
#define TC_TAKE(field, type, bytes) \
	do { x->field = (type)(void *)(c->thc.mem + o); o += tc_up(bytes); } while (0)
	TC_TAKE(work, float *, 4 * x->P);
	TC_TAKE(norms, float *, 4 * x->nblk);
	TC_TAKE(lmax, float *, 4 * x->nblk);
	TC_TAKE(all, float *, 4 * x->nblk * x->N);
	TC_TAKE(idx, uint8_t *, incnn_thc_idx_bytes(x->t, x->n));
	TC_TAKE(lanes, uint8_t *, 4 * x->P);
	TC_TAKE(cur, uint8_t *, 4 * maxc);
	TC_TAKE(nxt, uint8_t *, 4 * maxc);
	TC_TAKE(rbuf, uint8_t *, 4 * maxc);
#undef TC_TAKE
	return 0;
}

/* Prepare, agree on the block maxima, encode. */
static int tc_encode(struct tc_run *x, const float *buf)
{
	struct incnn_comm *c = x->c;
	size_t i;
	unsigned int w;
	int ret;

	ret = incnn_thc_prepare(x->t, buf, NULL, x->n, x->nonce, x->work,
				x->norms);
	if (ret)
		return incnn_coll_fail(c, ret, false,
				       "THC: %s in the bucket (a norm not finite or >= 2^112)",
				       ret == -ERANGE ? "values out of range" :
				       "bad bucket");
	ret = incnn_comm_allgather_meta(c, x->norms, 4 * x->nblk, x->all);
	if (ret)
		return ret;
	for (i = 0; i < x->nblk; i++) {
		float m = x->all[i];

		for (w = 1; w < x->N; w++)
			if (x->all[w * x->nblk + i] > m)
				m = x->all[w * x->nblk + i];
		x->lmax[i] = m;
	}
	ret = incnn_thc_encode(x->t, x->work, x->n, x->lmax, x->nonce, x->r,
			       x->idx);
	if (ret)
		return incnn_coll_fail(c, ret, false, "THC encode failed: %s",
				       strerror(-ret));
	return 0;
}

static unsigned int tc_mod(const struct tc_run *x, long v)
{
	return (unsigned int)(((v % (long)x->N) + (long)x->N) % (long)x->N);
}

/* Reduce-scatter step @s; the last one writes the owned chunk's lanes. */
static int tc_rs_step(struct tc_run *x, unsigned int s)
{
	size_t soff, slen, roff, rlen;
	int sbits = incnn_thc_ring_bits(x->t, x->N, s);
	int obits = incnn_thc_ring_bits(x->t, x->N, s + 1);
	const uint8_t *sp, *mine;
	uint8_t *dst, *tmp;
	int ret;

	incnn_thc_ring_chunk(x->t, x->n, x->N, tc_mod(x, (long)x->r - s),
			     &soff, &slen);
	incnn_thc_ring_chunk(x->t, x->n, x->N, tc_mod(x, (long)x->r - s - 1),
			     &roff, &rlen);
	sp = s == 0 ? x->idx + soff * x->b / 8 : x->cur;
	ret = incnn_coll_ring_exchange(x->c, sp, slen * (size_t)sbits / 8,
				       x->rbuf, rlen * (size_t)sbits / 8);
	if (ret || !rlen)
		return ret;
	mine = x->idx + roff * x->b / 8;
	dst = s == x->N - 2 ? x->lanes + roff * (size_t)obits / 8 : x->nxt;
	if (s == 0)
		ret = incnn_thc_add_idx2(x->t, dst, (unsigned int)obits,
					 x->rbuf, mine, rlen);
	else
		ret = incnn_thc_add_idx(x->t, dst, (unsigned int)obits, x->rbuf,
					(unsigned int)sbits, s + 1, mine, rlen);
	if (ret)
		return incnn_coll_fail(x->c, ret, false,
				       "THC: bad partial sums from rank %u (step %u): %s",
				       tc_mod(x, (long)x->r - 1), s,
				       strerror(-ret));
	tmp = x->cur;
	x->cur = x->nxt;
	x->nxt = tmp;
	return 0;
}

static int tc_ring(struct tc_run *x)
{
	int L = incnn_thc_ring_bits(x->t, x->N, x->N - 1);
	size_t soff, slen, roff, rlen;
	unsigned int s;
	int ret;

	for (s = 0; s + 1 < x->N; s++) {
		ret = tc_rs_step(x, s);
		if (ret)
			return ret;
	}
	for (s = 0; s + 1 < x->N; s++) {
		incnn_thc_ring_chunk(x->t, x->n, x->N,
				     tc_mod(x, (long)x->r + 1 - s), &soff, &slen);
		incnn_thc_ring_chunk(x->t, x->n, x->N,
				     tc_mod(x, (long)x->r - s), &roff, &rlen);
		ret = incnn_coll_ring_exchange(x->c,
					       x->lanes + soff * (size_t)L / 8,
					       slen * (size_t)L / 8,
					       x->lanes + roff * (size_t)L / 8,
					       rlen * (size_t)L / 8);
		if (ret)
			return ret;
	}
	return 0;
}

static int tc_decode(struct tc_run *x, float *buf)
{
	int L = incnn_thc_ring_bits(x->t, x->N, x->N - 1);
	const float fN = (float)x->N;
	size_t i;
	int ret;

	ret = incnn_thc_decode(x->t, x->work, x->n, x->lanes, (unsigned int)L,
			       x->N, x->lmax, x->nonce);
	if (ret)
		return incnn_coll_fail(x->c, ret, false,
				       "THC: bad aggregated sums: %s",
				       strerror(-ret));
	for (i = 0; i < x->n; i++)
		buf[i] = x->work[i] * fN;
	return 0;
}

static int tc_check(struct incnn_comm *c, const float *buf, size_t n)
{
	struct incnn_thc_params p;
	char msg[COLL_MSG_LEN];
	int ret;

	if (!c)
		return -EINVAL;
	if (c->err)
		return c->err;
	/* indices and lanes on a marked socket: the module would mangle them */
	if (c->tos)
		return incnn_coll_fail(c, -EINVAL, false,
				       "THC needs unmarked data connections, these have ToS 0x%02x: use method thc or tos 0",
				       c->tos);
	if (!c->thc.t) {
		incnn_thc_params_default(&p);
		ret = incnn_thc_create(&c->thc.t, &p, msg, sizeof(msg));
		if (ret)
			return incnn_coll_fail(c, ret, false, "THC: %s", msg);
	}
	if ((n && !buf) || n > INCNN_THC_MAX_N)
		return incnn_coll_fail(c, -EINVAL, false,
				       "invalid arguments: buf %p, n %zu (THC: at most 2^30 floats)",
				       (const void *)buf, n);
	if (incnn_thc_nblocks(c->thc.t, n) > TC_MAX_BLOCKS)
		return incnn_coll_fail(c, -EINVAL, false,
				       "THC: %zu floats make %zu RHT blocks, more than the %d the max-norm agreement takes",
				       n, incnn_thc_nblocks(c->thc.t, n),
				       TC_MAX_BLOCKS);
	return 0;
}

/* The sizes of one THC call over @n floats, and its nonce. */
static void tc_begin(struct tc_run *x, size_t n)
{
	struct incnn_comm *c = x->c;

	x->t = c->thc.t;
	x->n = n;
	x->P = incnn_thc_padded(x->t, n);
	x->nblk = incnn_thc_nblocks(x->t, n);
	x->b = incnn_thc_params(x->t)->bits;
	x->N = (unsigned int)c->world;
	x->r = (unsigned int)c->rank;
	x->nonce = ++c->thc.calls;
}

int incnn_allreduce_thc(struct incnn_comm *c, float *buf, size_t n)
{
	struct tc_run x = { .c = c };
	int ret = tc_check(c, buf, n);

	if (ret || c->world == 1 || !n)
		return ret;
	tc_begin(&x, n);
	ret = tc_alloc(&x);
	if (!ret)
		ret = tc_encode(&x, buf);
	if (ret)
		return ret;
	ret = incnn_coll_call_begin(c, COLL_CALL_THC, n, NULL, 0);
	if (ret <= 0)
		return ret;
	ret = tc_ring(&x);
	if (!ret)
		ret = incnn_coll_call_finish(c);
	if (!ret)
		ret = tc_decode(&x, buf);
	return ret;
}

/* Rank 0: every worker's indices in, the sums (@L-bit lanes) out. */
static int tc_ps_root(struct tc_run *x, int L)
{
	struct incnn_comm *c = x->c;
	size_t ib = incnn_thc_idx_bytes(x->t, x->n), lb = x->P * (size_t)L / 8;
	unsigned int w;
	int ret;

	ret = incnn_thc_add_idx(x->t, x->lanes, (unsigned int)L, NULL, 0, 0,
				x->idx, x->P);
	for (w = 1; !ret && w < x->N; w++) {
		/* the work area is free until the decode */
		ret = incnn_coll_exchange(c, -1, 0, NULL, 0, c->link.ps_fds[w],
					  (int)w, x->work, ib);
		if (ret)
			return ret;
		ret = incnn_thc_add_idx(x->t, x->lanes, (unsigned int)L,
					x->lanes, (unsigned int)L, w,
					(const uint8_t *)x->work, x->P);
	}
	if (ret)
		return incnn_coll_fail(c, ret, false, "THC: summing indices: %s",
				       strerror(-ret));
	for (w = 1; w < x->N; w++) {
		ret = incnn_coll_exchange(c, c->link.ps_fds[w], (int)w,
					  x->lanes, lb, -1, 0, NULL, 0);
		if (ret)
			return ret;
	}
	return 0;
}

int incnn_allreduce_thc_ps(struct incnn_comm *c, float *buf, size_t n)
{
	struct tc_run x = { .c = c };
	int ret = tc_check(c, buf, n), L;

	if (ret || c->world == 1 || !n)
		return ret;
	tc_begin(&x, n);
	L = incnn_thc_ring_bits(x.t, x.N, x.N - 1);
	ret = tc_alloc(&x);
	if (!ret)
		ret = tc_encode(&x, buf);
	if (ret)
		return ret;
	ret = incnn_coll_call_begin(c, COLL_CALL_THC_PS, n, NULL, 0);
	if (ret <= 0)
		return ret;
	if (c->rank == 0)
		ret = tc_ps_root(&x, L);
	else
		ret = incnn_coll_exchange(c, c->link.ps_fd, 0, x.idx,
					  incnn_thc_idx_bytes(x.t, n), c->link.ps_fd,
					  0, x.lanes, x.P * (size_t)L / 8);
	if (!ret)
		ret = incnn_coll_call_finish(c);
	if (!ret)
		ret = tc_decode(&x, buf);
	return ret;
}

int incnn_coll_thc_init(struct incnn_comm *c, const struct coll_cfg *k,
			char *err, size_t errlen)
{
	struct incnn_thc_params p;
	int ret;

	c->method = k->method;
	if (k->method != INCNN_COLL_METHOD_THC)
		return 0;
	incnn_thc_params_default(&p);
	p.bits = (unsigned int)k->thc_bits;
	p.gran = (unsigned int)k->thc_gran;
	ret = incnn_thc_create(&c->thc.t, &p, err, errlen);
	if (!ret && k->world > 1)
		ret = incnn_thc_lane_bits(c->thc.t, (unsigned int)k->world,
					  err, errlen);
	return ret < 0 ? ret : 0;
}

void incnn_coll_thc_free(struct incnn_comm *c)
{
	incnn_thc_destroy(c->thc.t);
	free(c->thc.mem);
}

enum incnn_coll_method incnn_comm_method(const struct incnn_comm *c)
{
	return c->method ? c->method : INCNN_COLL_METHOD_NONE;
}

uint64_t incnn_comm_wire_bytes(const struct incnn_comm *c)
{
	return c->wire_sent;
}
