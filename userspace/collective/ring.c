// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The ring allreduce (reduce-scatter, then allgather): single-threaded,
 * nonblocking and poll()-driven (xfer.c): whatever can move moves, a
 * received chunk is reduced (and quantised) as soon as it is complete and
 * becomes sendable at once, and the kernel's socket buffers keep both
 * directions busy while the CPU sums.
 *
 * Quantisation: Q is applied to every value before it is sent, so the
 * sender knows what the receiver gets. When this host's module applies
 * the same codec to our marked sends (c->codec.wire_q), the wire does that
 * work: the values we send and do not keep (our gradient block at the
 * start of the ring, the partial sums of the reduce-scatter) go out as
 * they are, and only the block we own after the reduce-scatter, which we
 * keep and send on, is quantised here. The receivers get the same values
 * either way (Q is deterministic and idempotent), so the result equals the
 * emulation's bit for bit.
 */
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"

struct ring_geom {
	int N, r;
	size_t base, rem;
};

static size_t ring_off(const struct ring_geom *g, int b)
{
	size_t ub = (size_t)b;

	return ub * g->base + (ub < g->rem ? ub : g->rem);
}

static size_t ring_len(const struct ring_geom *g, int b)
{
	return g->base + ((size_t)b < g->rem);
}

static int ring_mod(const struct ring_geom *g, int x)
{
	return ((x % g->N) + g->N) % g->N;
}

/* Block sent in segment j (reduce-scatter j < N-1, then allgather). */
static int ring_send_block(const struct ring_geom *g, int j)
{
	return j < g->N - 1 ? ring_mod(g, g->r - j) :
	       ring_mod(g, g->r + 1 - (j - (g->N - 1)));
}

/* Block received in segment j; ring_send_block(j + 1) == this. */
static int ring_recv_block(const struct ring_geom *g, int j)
{
	return j < g->N - 1 ? ring_mod(g, g->r - j - 1) :
	       ring_mod(g, g->r - (j - (g->N - 1)));
}

/* One ring allreduce in progress. */
struct ring_run {
	struct incnn_comm *c;
	struct coll_op *o;
	struct ring_geom g;
	float *buf;
	int nseg, succ, pred, sfd, rfd;
	size_t chunk, own_len, own_off;
	int ss, rs;		/* segment being sent, received */
	size_t sbytes, rbytes;	/* of it */
	size_t rdone;		/* floats of segment rs reduced (or in place) */
	size_t q0;		/* floats of our own block prepared */
	size_t qblock;		/* floats per block of a keyed call's Q */
	float div;		/* divide our input by this first (0: don't) */
	float dinv;		/* its exact 1 / div, or 0 (ring_exact_inv()):
				 * a keyed call multiplies by it instead */
	bool q_own;		/* quantise our own block before sending it */
	bool q_all;		/* quantise every partial sum ourselves (EF) */
	struct coll_bkrun *bk;	/* a keyed call's scale and residuals */
	bool progress, want_in, want_out;
};

/*
 * The division of incnn_allreduce_div(): IEEE fp32 division (never a
 * multiplication by 1/d, which rounds differently), so the result is bit
 * for bit torch's div_(). Division is slow enough that a scalar loop
 * costs more than the memory pass it saves: 8 lanes at a time (GCC's
 * vector extension), with an AVX clone picked at load time on x86-64.
 */
typedef float ring_f8 __attribute__((vector_size(32)));

/* x[i] = x[i] / d */
COLL_SIMD_CLONES("avx")
static void ring_div(float *x, size_t n, float d)
{
	const ring_f8 dv = { d, d, d, d, d, d, d, d };
	size_t i = 0;
	ring_f8 v;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, x + i, sizeof(v));
		v = v / dv;
		memcpy(x + i, &v, sizeof(v));
	}
	for (; i < n; i++)
		x[i] = x[i] / d;
}

/* x[i] = x[i] / d + y[i]: the reduction with our input's division */
COLL_SIMD_CLONES("avx")
static void ring_div_add(float *x, const float *y, size_t n,
			 float d)
{
	const ring_f8 dv = { d, d, d, d, d, d, d, d };
	size_t i = 0;
	ring_f8 v, w;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, x + i, sizeof(v));
		memcpy(&w, y + i, sizeof(w));
		v = v / dv + w;
		memcpy(x + i, &v, sizeof(v));
	}
	for (; i < n; i++)
		x[i] = x[i] / d + y[i];
}

/*
 * 1 / d where x / d == x * (1 / d) for every float x, else 0: d a power
 * of two whose reciprocal is a float (x / d and x * (1 / d) are then the
 * same real number, rounded once: the same bits, subnormal results and
 * NaNs included), as every world size that is one.
 */
static float ring_exact_inv(float d)
{
	int e;

	if (!d || !isfinite(d) || fabsf(frexpf(d, &e)) != 0.5f ||
	    !isfinite(1 / d))
		return 0;
	return 1 / d;
}

/*
 * A keyed call's contribution (bucket.c): x[i] = ((x[i] / d + r[i]) * s)
 * + y[i], each step in this order and only where asked (d 0, r NULL,
 * s 1, y NULL: skipped), every operation one IEEE fp32 rounding (x / d
 * as x * dinv where ring_exact_inv() gave dinv, not 0: the same bits,
 * and a division costs several multiplications); the result also into
 * save[i] unless @save is NULL (it may be @r: EF keeps the value before
 * Q where it read the residual).
 */
COLL_SIMD_CLONES("avx")
static void ring_contrib(float *x, const float *r,
			 const float *y, size_t n, float d,
			 float dinv, float s, float *save)
{
	const ring_f8 dv = { d, d, d, d, d, d, d, d };
	const ring_f8 iv = { dinv, dinv, dinv, dinv, dinv, dinv, dinv, dinv };
	const ring_f8 sv = { s, s, s, s, s, s, s, s };
	size_t i = 0;
	ring_f8 v, w;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, x + i, sizeof(v));
		if (dinv)
			v = v * iv;
		else if (d)
			v = v / dv;
		if (r) {
			memcpy(&w, r + i, sizeof(w));
			v = v + w;
		}
		if (s != 1)
			v = v * sv;
		if (y) {
			memcpy(&w, y + i, sizeof(w));
			v = v + w;
		}
		memcpy(x + i, &v, sizeof(v));
		if (save)
			memcpy(save + i, &v, sizeof(v));
	}
	for (; i < n; i++) {
		float a = x[i];

		if (dinv)
			a = a * dinv;
		else if (d)
			a = a / d;
		if (r)
			a = a + r[i];
		if (s != 1)
			a = a * s;
		if (y)
			a = a + y[i];
		x[i] = a;
		if (save)
			save[i] = a;
	}
}

/*
 * int32 lanes: the counting loops below want AVX2 (AVX has no 256-bit
 * integer operations: each one would be split in two 128-bit ones).
 */
typedef int32_t ring_i8 __attribute__((vector_size(32)));

/* Values of x[0..n) that are +-0 (n < 2^31) */
COLL_SIMD_CLONES("avx2")
static uint64_t ring_zeros(const float *x, size_t n)
{
	const ring_f8 zero = { 0 };
	ring_i8 acc = { 0 };
	uint64_t z = 0;
	size_t i = 0;
	ring_f8 v;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, x + i, sizeof(v));
		acc -= v == zero;
	}
	for (int j = 0; j < 8; j++)
		z += (uint32_t)acc[j];
	for (; i < n; i++)
		z += x[i] == 0;
	return z;
}

/*
 * EF after Q: r[i] = (r[i] - x[i]) * inv, r holding the values before Q
 * and x after; counts the nonzero values and those Q made zero (n < 2^31).
 */
COLL_SIMD_CLONES("avx2")
static void ring_resid(float *r, const float *x, size_t n,
		       float inv, uint64_t *nonzero,
		       uint64_t *flattened)
{
	const ring_f8 zero = { 0 };
	const ring_f8 iv = { inv, inv, inv, inv, inv, inv, inv, inv };
	ring_i8 nz = { 0 }, fl = { 0 }, m;
	size_t i = 0;
	ring_f8 a, q;

	for (; i + 8 <= n; i += 8) {
		memcpy(&a, r + i, sizeof(a));
		memcpy(&q, x + i, sizeof(q));
		m = a != zero;
		nz -= m;
		fl -= m & (q == zero);
		a = (a - q) * iv;
		memcpy(r + i, &a, sizeof(a));
	}
	for (int j = 0; j < 8; j++) {
		*nonzero += (uint32_t)nz[j];
		*flattened += (uint32_t)fl[j];
	}
	for (; i < n; i++) {
		float b = r[i], c = x[i];

		*nonzero += b != 0;
		*flattened += b != 0 && c == 0;
		r[i] = (b - c) * inv;
	}
}

/*
 * Quantise a keyed call's values in place, with their residuals (EF: r
 * holds a, the values before Q, and becomes (a - Q(a)) * inv) and the
 * counts of nonzero values and of those Q made zero.
 */
static int ring_quantise_bk(struct incnn_comm *c, struct coll_bkrun *bk,
			    float *x, float *r, size_t n, float inv)
{
	uint64_t z0 = 0;
	int ret;

	if (!r)
		z0 = ring_zeros(x, n);
	ret = incnn_coll_quantise(c, x, n);
	if (ret)
		return ret;
	bk->quantised += n;
	if (!r) {
		bk->nonzero += n - z0;
		bk->flattened += ring_zeros(x, n) - z0;
		return 0;
	}
	ring_resid(r, x, n, inv, &bk->nonzero, &bk->flattened);
	return 0;
}

/* The segment of a keyed call that holds value @off (ends ascending). */
static size_t ring_bk_seg(const struct coll_bkrun *bk, size_t off)
{
	size_t lo = 0, hi = bk->nseg - 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bk->seg[mid].end > off)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * A keyed call's transform of the values x[0..n) that start at @off of
 * the bucket (y: the received partial sums, or NULL), quantised when @q:
 * each segment the range crosses with its own 2^e (bucket.c). Quantised,
 * in blocks of rr->qblock values: the contribution, Q and the residuals
 * of a block while it is in L1 (Q is value by value: the blocks change
 * no bit).
 */
static int ring_bk_apply(struct ring_run *rr, float *x, const float *y,
			 size_t off, size_t n, bool q)
{
	struct coll_bkrun *bk = rr->bk;
	size_t k = ring_bk_seg(bk, off), blk = q ? rr->qblock : n;
	int ret = 0;

	while (n && !ret) {
		const struct coll_bkseg *sg = &bk->seg[k];
		size_t m = coll_min(coll_min(n, sg->end - off), blk);
		float *r = bk->res ? bk->res + off : NULL;

		ring_contrib(x, r, y, m, rr->div, rr->dinv, sg->s,
			     q ? r : NULL);
		if (q)
			ret = ring_quantise_bk(rr->c, bk, x, r, m, sg->inv);
		x += m;
		y = y ? y + m : NULL;
		off += m;
		n -= m;
		k += off == sg->end;
	}
	return ret;
}

/*
 * A keyed call's final values at [off, off + n) of the bucket, sent on
 * (or received last, not to be sent): unscaled in place, x * 2^-e of
 * their segment, while they are in cache, and each segment's largest
 * |x| kept for its next e (bucket.c).
 */
static void ring_bk_final(struct ring_run *rr, size_t off, size_t n)
{
	struct coll_bkrun *bk = rr->bk;
	size_t k;

	if (!bk || !bk->top || !n)
		return;
	k = ring_bk_seg(bk, off);
	while (n) {
		const struct coll_bkseg *sg = &bk->seg[k];
		size_t m = coll_min(n, sg->end - off);
		uint32_t t = incnn_coll_absmax_bits(rr->buf + off, m, sg->inv);

		bk->top[k] = t > bk->top[k] ? t : bk->top[k];
		off += m;
		n -= m;
		k++;
	}
}

/*
 * Our own block goes out first: prepare it a chunk ahead (divide it,
 * quantise it), in cache just before it is sent.
 */
static int ring_prepare_own(struct ring_run *rr)
{
	float *x = rr->buf + rr->own_off + rr->q0;
	size_t cnt;
	int ret;

	if (rr->q0 >= rr->own_len)
		return 0;
	cnt = coll_min(rr->chunk, rr->own_len - rr->q0);
	if (rr->bk) {
		ret = ring_bk_apply(rr, x, NULL, rr->own_off + rr->q0, cnt,
				    rr->q_own);
	} else {
		if (rr->div)
			ring_div(x, cnt, rr->div);
		ret = rr->q_own ? incnn_coll_quantise(rr->c, x, cnt) : 0;
	}
	if (ret)
		return ret;
	rr->q0 += cnt;
	rr->progress = true;
	return 0;
}

/* Send what is ready: segment ss needs received segment ss - 1. */
static int ring_send(struct ring_run *rr)
{
	const struct ring_geom *g = &rr->g;
	int b = ring_send_block(g, rr->ss);
	size_t len = 4 * ring_len(g, b), avail, want, done = rr->sbytes / 4;
	ssize_t k;

	if (rr->ss == 0)
		avail = 4 * rr->q0;
	else if (rr->rs > rr->ss - 1)
		avail = len;
	else if (rr->rs == rr->ss - 1)
		avail = 4 * rr->rdone;
	else
		avail = 0;
	if (avail <= rr->sbytes)
		return 0;
	want = avail - rr->sbytes;
	/* the allgather's values are unscaled once sent: a chunk at a time,
	 * in cache */
	if (rr->ss >= g->N - 1 && rr->bk && rr->bk->top)
		want = coll_min(want, 4 * rr->chunk);
	k = send(rr->sfd, (char *)(rr->buf + ring_off(g, b)) + rr->sbytes,
		 want, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (k < 0 && coll_again(errno)) {
		rr->want_out = true;
		return 0;
	}
	if (k <= 0)
		return incnn_coll_send_error(rr->o, rr->succ, errno);
	rr->sbytes += (size_t)k;
	rr->c->wire_sent += (uint64_t)k;
	rr->o->moved += (uint64_t)k;
	rr->progress = true;
	/* the allgather's values, whole ones sent: final */
	if (rr->ss >= g->N - 1)
		ring_bk_final(rr, ring_off(g, b) + done,
			      rr->sbytes / 4 - done);
	if (rr->sbytes == len) {
		rr->ss++;
		rr->sbytes = 0;
	}
	return 0;
}

/* Reduce one complete received chunk: B = Q(B + received). */
static int ring_reduce(struct ring_run *rr, float *dst, size_t lenf)
{
	size_t got = rr->rbytes / 4, cnt, i;
	const float *y;
	float *x;
	int ret;

	if (rr->rdone >= lenf || (got - rr->rdone < rr->chunk && got != lenf))
		return 0;
	cnt = coll_min(rr->chunk, got - rr->rdone);
	x = dst + rr->rdone;
	y = rr->c->stage + rr->rdone;
	if (rr->bk) {
		ret = ring_bk_apply(rr, x, y, (size_t)(x - rr->buf), cnt,
				    rr->q_all || rr->rs >= rr->g.N - 2);
		goto out;
	}
	if (rr->div) {		/* our input's first and only touch */
		ring_div_add(x, y, cnt, rr->div);
	} else {
		for (i = 0; i < cnt; i++)
			x[i] = x[i] + y[i];
	}
	ret = !rr->q_all && rr->rs < rr->g.N - 2 ? 0 :
	      incnn_coll_quantise(rr->c, x, cnt);
out:
	if (ret)
		return ret;
	rr->rdone += cnt;
	rr->progress = true;
	return 0;
}

/* Receive into the staging block (reduce-scatter) or in place. */
static int ring_recv(struct ring_run *rr)
{
	const struct ring_geom *g = &rr->g;
	int b = ring_recv_block(g, rr->rs), ret;
	size_t lenf = ring_len(g, b), len = 4 * lenf;
	bool rsc = rr->rs < g->N - 1;
	float *dst = rr->buf + ring_off(g, b);
	ssize_t k;

	if (rr->rbytes < len) {
		char *to = rsc ? (char *)rr->c->stage : (char *)dst;

		k = recv(rr->rfd, to + rr->rbytes,
			 coll_min(len - rr->rbytes, 4 * rr->chunk), MSG_DONTWAIT);
		if (k > 0) {
			rr->rbytes += (size_t)k;
			rr->o->moved += (uint64_t)k;
			rr->o->rx_done += (uint64_t)k;
			rr->progress = true;
		} else if (k < 0 && coll_again(errno)) {
			rr->want_in = true;
		} else {
			return incnn_coll_recv_error(rr->o, rr->pred, k, errno);
		}
	}
	if (rsc) {
		ret = ring_reduce(rr, dst, lenf);
		if (ret)
			return ret;
	} else {
		/* the last block received is not sent: final now */
		if (rr->rs == rr->nseg - 1)
			ring_bk_final(rr, ring_off(g, b) + rr->rdone,
				      rr->rbytes / 4 - rr->rdone);
		rr->rdone = rr->rbytes / 4;
	}
	if (rr->rbytes == len && rr->rdone == lenf) {
		rr->rs++;
		rr->rbytes = rr->rdone = 0;
	}
	return 0;
}

/* No progress: wait for the sockets the ring waits on. */
static int ring_wait(struct ring_run *rr)
{
	struct pollfd pfd[3];	/* incnn_coll_poll() adds the store's */
	char what[96];
	int np = 0;

	if (rr->want_out)
		pfd[np++] = (struct pollfd){ .fd = rr->sfd, .events = POLLOUT };
	if (rr->want_in)
		pfd[np++] = (struct pollfd){ .fd = rr->rfd, .events = POLLIN };
	if (rr->want_in)
		snprintf(what, sizeof(what), "waiting for data from rank %d",
			 rr->pred);
	else if (rr->want_out)
		snprintf(what, sizeof(what),
			 "sending to rank %d (it stopped reading)", rr->succ);
	else
		snprintf(what, sizeof(what), "in the ring");
	return incnn_coll_poll(rr->o, pfd, np, what);
}

/*
 * A keyed call's Q works in blocks of this many values, in L1 with their
 * residuals and partial sums; a codec without a quantise op (an encode
 * and a decode per call) in its pieces of 64 KiB (rule.c).
 */
#define RING_QBLOCK	2048

static size_t ring_qblock(const struct incnn_comm *c)
{
	const struct incnn_codec *q = c->codec.q.codec;

	return q && !q->quantise ? COLL_Q_PIECE : RING_QBLOCK;
}

static int ring_loop(struct incnn_comm *c, float *buf, size_t n, float div,
		     struct coll_bkrun *bk, struct coll_op *o)
{
	struct ring_run rr = {
		.c = c, .o = o, .buf = buf, .div = div, .bk = bk,
		.g = { .N = c->world, .r = c->rank,
		       .base = n / (size_t)c->world,
		       .rem = n % (size_t)c->world },
		.nseg = 2 * (c->world - 1),
		.succ = (c->rank + 1) % c->world,
		.pred = (c->rank + c->world - 1) % c->world,
		.sfd = c->link.ring_send_fd, .rfd = c->link.ring_recv_fd,
		.chunk = c->chunk, .qblock = ring_qblock(c),
		.dinv = ring_exact_inv(div),
	};
	int j, ret;

	rr.own_len = ring_len(&rr.g, rr.g.r);
	rr.own_off = ring_off(&rr.g, rr.g.r);
	/*
	 * The wire quantises what we send; we keep only the owned block,
	 * unless we need every residual (EF).
	 */
	rr.q_all = c->codec.q.codec &&
		   (!c->codec.wire_q || (bk && bk->res));
	rr.q_own = rr.q_all;
	rr.q0 = rr.q_own || div || bk ? 0 : rr.own_len;
	ret = incnn_coll_stage(c, rr.g.base + (rr.g.rem > 0));
	if (ret)
		return ret;
	for (j = 0; j < rr.nseg; j++)
		o->rx_total += 4 * ring_len(&rr.g, ring_recv_block(&rr.g, j));
	for (;;) {
		rr.progress = rr.want_in = rr.want_out = false;
		while (rr.ss < rr.nseg &&
		       !ring_len(&rr.g, ring_send_block(&rr.g, rr.ss)))
			rr.ss++;
		while (rr.rs < rr.nseg &&
		       !ring_len(&rr.g, ring_recv_block(&rr.g, rr.rs)))
			rr.rs++;
		if (rr.ss == rr.nseg && rr.rs == rr.nseg)
			return 0;
		ret = ring_prepare_own(&rr);
		if (!ret && rr.ss < rr.nseg && !c->fault.send_shut)
			ret = ring_send(&rr);
		if (!ret && rr.rs < rr.nseg)
			ret = ring_recv(&rr);
		if (ret)
			return ret;
		if (rr.progress) {
			o->last = coll_now_ms();
			ret = incnn_coll_fault(o, rr.sfd);
		} else {
			ret = ring_wait(&rr);
		}
		if (ret)
			return ret;
	}
}

/* The ring allreduce, the input divided by @div first (0: not), with a
 * keyed call's transform @bk (NULL: none). */
static int ring_allreduce(struct incnn_comm *c, float *buf, size_t n, float div,
			  struct coll_bkrun *bk)
{
	struct coll_op o = { .c = c };
	int ret = incnn_coll_check_args(c, buf, n);

	if (ret)
		return ret;
	ret = incnn_coll_call_begin(c, COLL_CALL_RING, n, NULL, 0);
	if (ret < 0)
		return ret;
	if (ret == 0) {		/* one rank */
		if (div)
			ring_div(buf, n, div);
		return 0;
	}
	o.last = coll_now_ms();
	ret = ring_loop(c, buf, n, div, bk, &o);
	if (ret)
		return ret;
	return incnn_coll_op_finish(&o, true);
}

int incnn_coll_allreduce_ring(struct incnn_comm *c, float *buf, size_t n)
{
	return ring_allreduce(c, buf, n, 0, NULL);
}

int incnn_coll_allreduce_bk(struct incnn_comm *c, float *buf, size_t n,
			    float div, struct coll_bkrun *bk)
{
	return ring_allreduce(c, buf, n, div, bk);
}

void incnn_coll_div(float *x, size_t n, float d)
{
	ring_div(x, n, d);
}
