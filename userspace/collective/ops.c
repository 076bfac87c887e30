// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The collective calls: ring allreduce, worker-aggregator allreduce and
 * the store's small allgather. The data phases are single-threaded,
 * nonblocking and poll()-driven: whatever can move moves, a received
 * chunk is reduced (and quantised) as soon as it is complete and becomes
 * sendable at once, and the kernel's socket buffers keep both directions
 * busy while the CPU sums.
 *
 * Quantisation: Q is applied to every value before it is sent, so the
 * sender knows what the receiver gets. When this host's module applies
 * the same codec to our marked sends (c->codec.wire_q), the wire does that
 * work: the values we send and do not keep (our gradient block at the
 * start of the ring, the partial sums of the reduce-scatter, a worker's
 * gradients) go out as they are, and only the block we own after the
 * reduce-scatter, which we keep and send on, is quantised here. The
 * receivers get the same values either way (Q is deterministic and
 * idempotent), so the result equals the emulation's bit for bit.
 */
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"

struct op_ctx {
	struct incnn_comm *c;
	int64_t last;		/* last data progress */
	uint64_t moved;		/* bytes sent + received in this call */
	uint64_t rx_total;	/* bytes this rank receives in this call */
	uint64_t rx_done;
};

static size_t op_min(size_t a, size_t b)
{
	return a < b ? a : b;
}

static bool op_again(int e)
{
	return e == EAGAIN || e == EWOULDBLOCK || e == EINTR;
}

/*
 * A data connection failed. The failing peer has usually told the store
 * why (or the store saw it die): give that message a moment to arrive,
 * it says more than "connection reset".
 */
static int op_peer_error(struct op_ctx *o, int err, const char *fmt, ...)
	COLL_PRINTF(3, 4);
static int op_peer_error(struct op_ctx *o, int err, const char *fmt, ...)
{
	struct incnn_comm *c = o->c;
	int64_t deadline = coll_now_ms() + 250;
	char msg[COLL_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	while (c->store.fd >= 0 && !c->err) {
		struct pollfd p = { .fd = c->store.fd, .events = POLLIN };
		int left = coll_left_ms(deadline);

		if (!left || poll(&p, 1, left) <= 0)
			break;
		incnn_coll_store_pump(c);
	}
	return incnn_coll_fail(c, err, false, "%s", msg);
}

static int op_send_error(struct op_ctx *o, int peer, int e)
{
	return op_peer_error(o, -ECONNRESET, "sending to rank %d: %s", peer,
			     strerror(e));
}

static int op_recv_error(struct op_ctx *o, int peer, ssize_t k, int e)
{
	if (k == 0)
		return op_peer_error(o, -ECONNRESET,
				     "rank %d closed its connection after %llu of the %llu bytes this rank expected in this call (short stream, or the process died)",
				     peer, (unsigned long long)o->rx_done,
				     (unsigned long long)o->rx_total);
	return op_peer_error(o, -ECONNRESET, "receiving from rank %d: %s",
			     peer, strerror(e));
}

/* Fault injection (tests), once per communicator. */
static int op_fault(struct op_ctx *o, int send_fd)
{
	struct incnn_comm *c = o->c;
	struct timespec ts;

	if (c->fault.kind == INCNN_COLL_FAULT_NONE || c->fault.fired ||
	    o->moved < c->fault.after)
		return 0;
	c->fault.fired = true;
	switch (c->fault.kind) {
	case INCNN_COLL_FAULT_CLOSE:
		/* as if the process had crashed: resets, no goodbye */
		incnn_coll_close_rst(&c->store.fd);
		return incnn_coll_fail(c, -ECONNABORTED, true,
				       "fault injected: closed every connection");
	case INCNN_COLL_FAULT_STALL:
		ts.tv_sec = c->fault.stall_ms / 1000;
		ts.tv_nsec = (long)(c->fault.stall_ms % 1000) * 1000000;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		o->last = coll_now_ms();
		return 0;
	case INCNN_COLL_FAULT_SHORT:
		if (send_fd >= 0)
			shutdown(send_fd, SHUT_WR);
		c->fault.send_shut = true;
		return 0;
	default:
		return 0;
	}
}

/*
 * Nothing moved: wait for @n data fds (pfd[0..n-1]; pfd has room for one
 * more) and the store, at most until timeout_ms after the last progress. @what describes what
 * we wait for, for the timeout message.
 */
static int op_poll(struct op_ctx *o, struct pollfd *pfd, int n,
		   const char *what)
{
	struct incnn_comm *c = o->c;
	int left = coll_left_ms(o->last + c->timeout_ms), ret;

	if (!left)
		return incnn_coll_fail(c, -ETIMEDOUT, false,
				       "timed out: no progress for %d ms %s",
				       c->timeout_ms, what);
	pfd[n] = (struct pollfd){ .fd = c->store.fd, .events = POLLIN };
	ret = poll(pfd, (nfds_t)n + 1, left);
	if (ret < 0 && errno != EINTR)
		return incnn_coll_fail(c, -errno, false, "poll: %s",
				       strerror(errno));
	if (ret > 0 && pfd[n].revents)
		return incnn_coll_store_pump(c);
	return 0;
}

/*
 * Start a call: check the communicator, tell the store what we call.
 * Returns 1 to go on, 0 when there is nothing to do (one rank), or the
 * error.
 */
static int op_begin(struct incnn_comm *c, uint32_t kind, uint64_t count,
		    const void *data, size_t dlen)
{
	uint8_t *p;
	int ret;

	if (!c)
		return -EINVAL;
	if (c->err)
		return c->err;
	if (c->world == 1)
		return 0;
	p = malloc(24 + dlen);
	if (!p)
		return incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	c->store.seq++;
	c->store.got_result = false;
	coll_put64(p, c->store.seq);
	coll_put32(p + 8, kind);
	coll_put32(p + 12, 0);
	coll_put64(p + 16, count);
	if (dlen)
		memcpy(p + 24, data, dlen);
	ret = incnn_coll_store_send(c, COLL_MSG_CALL, p, 24 + dlen);
	free(p);
	return ret ? ret : 1;
}

/* The data phase is complete here: wait until it is everywhere. */
static int op_finish(struct op_ctx *o, bool send_done)
{
	struct incnn_comm *c = o->c;
	uint8_t seq[8];
	char what[96];
	int ret;

	if (send_done) {
		coll_put64(seq, c->store.seq);
		ret = incnn_coll_store_send(c, COLL_MSG_DONE, seq, 8);
		if (ret)
			return ret;
	}
	snprintf(what, sizeof(what),
		 "waiting for the other ranks to complete call #%llu",
		 (unsigned long long)c->store.seq);
	ret = incnn_coll_store_pump(c);
	while (!ret && !c->store.got_result) {
		struct pollfd pfd[1];

		ret = op_poll(o, pfd, 0, what);
	}
	return ret;
}

static int op_check_args(struct incnn_comm *c, const float *buf, size_t n)
{
	if (!c)
		return -EINVAL;
	if (c->err)
		return c->err;
	if ((n && !buf) || n > (SIZE_MAX / 4) / 2)
		return incnn_coll_fail(c, -EINVAL, false,
				       "invalid arguments: buf %p, n %zu",
				       (const void *)buf, n);
	return 0;
}

static int op_stage(struct incnn_comm *c, size_t floats)
{
	float *p;

	if (floats <= c->stage_cap)
		return 0;
	p = realloc(c->stage, floats * sizeof(float));
	if (!p)
		return incnn_coll_fail(c, -ENOMEM, false,
				       "out of memory (%zu staging floats)",
				       floats);
	c->stage = p;
	c->stage_cap = floats;
	return 0;
}

static int op_quantise(struct incnn_comm *c, float *x, size_t n)
{
	int ret = incnn_coll_q_apply(&c->codec.q, x, n);

	if (ret)
		return incnn_coll_fail(c, ret, false,
				       "codec emulation failed: %s",
				       strerror(-ret));
	return 0;
}

/* --- ring ------------------------------------------------------------- */

struct op_ring {
	int N, r;
	size_t base, rem;
};

static size_t ring_off(const struct op_ring *g, int b)
{
	size_t ub = (size_t)b;

	return ub * g->base + (ub < g->rem ? ub : g->rem);
}

static size_t ring_len(const struct op_ring *g, int b)
{
	return g->base + ((size_t)b < g->rem);
}

static int ring_mod(const struct op_ring *g, int x)
{
	return ((x % g->N) + g->N) % g->N;
}

/* Block sent in segment j (reduce-scatter j < N-1, then allgather). */
static int ring_send_block(const struct op_ring *g, int j)
{
	return j < g->N - 1 ? ring_mod(g, g->r - j) :
	       ring_mod(g, g->r + 1 - (j - (g->N - 1)));
}

/* Block received in segment j; ring_send_block(j + 1) == this. */
static int ring_recv_block(const struct op_ring *g, int j)
{
	return j < g->N - 1 ? ring_mod(g, g->r - j - 1) :
	       ring_mod(g, g->r - (j - (g->N - 1)));
}

/* One ring allreduce in progress. */
struct ring_run {
	struct incnn_comm *c;
	struct op_ctx *o;
	struct op_ring g;
	float *buf;
	int nseg, succ, pred, sfd, rfd;
	size_t chunk, own_len, own_off;
	int ss, rs;		/* segment being sent, received */
	size_t sbytes, rbytes;	/* of it */
	size_t rdone;		/* floats of segment rs reduced (or in place) */
	size_t q0;		/* floats of our own block prepared */
	float div;		/* divide our input by this first (0: don't) */
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
typedef float op_f8 __attribute__((vector_size(32)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define OP_SIMD_CLONES __attribute__((target_clones("avx", "default")))
#else
#define OP_SIMD_CLONES
#endif

/* x[i] = x[i] / d */
OP_SIMD_CLONES static void op_div(float *x, size_t n, float d)
{
	const op_f8 dv = { d, d, d, d, d, d, d, d };
	size_t i = 0;
	op_f8 v;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, x + i, sizeof(v));
		v = v / dv;
		memcpy(x + i, &v, sizeof(v));
	}
	for (; i < n; i++)
		x[i] = x[i] / d;
}

/* x[i] = x[i] / d + y[i]: the reduction with our input's division */
OP_SIMD_CLONES static void op_div_add(float *x, const float *y, size_t n,
				      float d)
{
	const op_f8 dv = { d, d, d, d, d, d, d, d };
	size_t i = 0;
	op_f8 v, w;

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
 * A keyed call's contribution (bucket.c): x[i] = ((x[i] / d + r[i]) * s)
 * + y[i], each step in this order and only where asked (d 0, r NULL,
 * s 1, y NULL: skipped), every operation one IEEE fp32 rounding.
 */
OP_SIMD_CLONES static void op_contrib(float *x, const float *r,
				      const float *y, size_t n, float d,
				      float s)
{
	const op_f8 dv = { d, d, d, d, d, d, d, d };
	const op_f8 sv = { s, s, s, s, s, s, s, s };
	size_t i = 0;
	op_f8 v, w;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, x + i, sizeof(v));
		if (d)
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
	}
	for (; i < n; i++) {
		float a = x[i];

		if (d)
			a = a / d;
		if (r)
			a = a + r[i];
		if (s != 1)
			a = a * s;
		if (y)
			a = a + y[i];
		x[i] = a;
	}
}

typedef int32_t op_i8 __attribute__((vector_size(32)));

/* Values of x[0..n) that are +-0 (n < 2^31) */
OP_SIMD_CLONES static uint64_t op_zeros(const float *x, size_t n)
{
	const op_f8 zero = { 0 };
	op_i8 acc = { 0 };
	uint64_t z = 0;
	size_t i = 0;
	op_f8 v;

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
OP_SIMD_CLONES static void op_resid(float *r, const float *x, size_t n,
				    float inv, uint64_t *nonzero,
				    uint64_t *flattened)
{
	const op_f8 zero = { 0 };
	const op_f8 iv = { inv, inv, inv, inv, inv, inv, inv, inv };
	op_i8 nz = { 0 }, fl = { 0 }, m;
	size_t i = 0;
	op_f8 a, q;

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
 * becomes (a - Q(a)) * inv, a the value before) and the counts of
 * nonzero values and of those Q made zero.
 */
static int op_quantise_bk(struct incnn_comm *c, struct coll_bkrun *bk,
			  float *x, float *r, size_t n)
{
	uint64_t z0 = 0;
	int ret;

	if (r)
		memcpy(r, x, n * sizeof(float));
	else
		z0 = op_zeros(x, n);
	ret = op_quantise(c, x, n);
	if (ret)
		return ret;
	bk->quantised += n;
	if (!r) {
		bk->nonzero += n - z0;
		bk->flattened += op_zeros(x, n) - z0;
		return 0;
	}
	op_resid(r, x, n, bk->inv, &bk->nonzero, &bk->flattened);
	return 0;
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
	cnt = op_min(rr->chunk, rr->own_len - rr->q0);
	if (rr->bk) {
		float *r = rr->bk->res ? rr->bk->res + rr->own_off + rr->q0 :
			   NULL;

		op_contrib(x, r, NULL, cnt, rr->div, rr->bk->s);
		ret = rr->q_own ? op_quantise_bk(rr->c, rr->bk, x, r, cnt) : 0;
	} else {
		if (rr->div)
			op_div(x, cnt, rr->div);
		ret = rr->q_own ? op_quantise(rr->c, x, cnt) : 0;
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
	const struct op_ring *g = &rr->g;
	int b = ring_send_block(g, rr->ss);
	size_t len = 4 * ring_len(g, b), avail;
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
	k = send(rr->sfd, (char *)(rr->buf + ring_off(g, b)) + rr->sbytes,
		 avail - rr->sbytes, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (k < 0 && op_again(errno)) {
		rr->want_out = true;
		return 0;
	}
	if (k <= 0)
		return op_send_error(rr->o, rr->succ, errno);
	rr->sbytes += (size_t)k;
	rr->c->wire_sent += (uint64_t)k;
	rr->o->moved += (uint64_t)k;
	rr->progress = true;
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
	cnt = op_min(rr->chunk, got - rr->rdone);
	x = dst + rr->rdone;
	y = rr->c->stage + rr->rdone;
	if (rr->bk) {
		float *r = rr->bk->res ? rr->bk->res + (dst - rr->buf) +
					 rr->rdone : NULL;

		op_contrib(x, r, y, cnt, rr->div, rr->bk->s);
		ret = !rr->q_all && rr->rs < rr->g.N - 2 ? 0 :
		      op_quantise_bk(rr->c, rr->bk, x, r, cnt);
		goto out;
	}
	if (rr->div) {		/* our input's first and only touch */
		op_div_add(x, y, cnt, rr->div);
	} else {
		for (i = 0; i < cnt; i++)
			x[i] = x[i] + y[i];
	}
	ret = !rr->q_all && rr->rs < rr->g.N - 2 ? 0 :
	      op_quantise(rr->c, x, cnt);
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
	const struct op_ring *g = &rr->g;
	int b = ring_recv_block(g, rr->rs), ret;
	size_t lenf = ring_len(g, b), len = 4 * lenf;
	bool rsc = rr->rs < g->N - 1;
	float *dst = rr->buf + ring_off(g, b);
	ssize_t k;

	if (rr->rbytes < len) {
		char *to = rsc ? (char *)rr->c->stage : (char *)dst;

		k = recv(rr->rfd, to + rr->rbytes,
			 op_min(len - rr->rbytes, 4 * rr->chunk), MSG_DONTWAIT);
		if (k > 0) {
			rr->rbytes += (size_t)k;
			rr->o->moved += (uint64_t)k;
			rr->o->rx_done += (uint64_t)k;
			rr->progress = true;
		} else if (k < 0 && op_again(errno)) {
			rr->want_in = true;
		} else {
			return op_recv_error(rr->o, rr->pred, k, errno);
		}
	}
	if (rsc) {
		ret = ring_reduce(rr, dst, lenf);
		if (ret)
			return ret;
	} else {
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
	struct pollfd pfd[3];	/* op_poll() adds the store's */
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
	return op_poll(rr->o, pfd, np, what);
}

static int op_ring(struct incnn_comm *c, float *buf, size_t n, float div,
		   struct coll_bkrun *bk, struct op_ctx *o)
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
		.chunk = c->chunk,
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
	ret = op_stage(c, rr.g.base + (rr.g.rem > 0));
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
			ret = op_fault(o, rr.sfd);
		} else {
			ret = ring_wait(&rr);
		}
		if (ret)
			return ret;
	}
}

/* GradiVeQ needs the layer shapes: the flat calls are errors */
static int op_gvq_refuse(struct incnn_comm *c, const char *call)
{
	if (c->err)
		return c->err;
	return incnn_coll_fail(c, -EINVAL, false,
			       "method gradiveq needs incnn_allreduce_layers() (layer shapes; ring only), not %s",
			       call);
}

/* The ring allreduce, the input divided by @div first (0: not), with a
 * keyed call's transform @bk (NULL: none). */
static int op_allreduce(struct incnn_comm *c, float *buf, size_t n, float div,
			struct coll_bkrun *bk)
{
	struct op_ctx o = { .c = c };
	int ret = op_check_args(c, buf, n);

	if (ret)
		return ret;
	ret = op_begin(c, COLL_CALL_RING, n, NULL, 0);
	if (ret < 0)
		return ret;
	if (ret == 0) {		/* one rank */
		if (div)
			op_div(buf, n, div);
		return 0;
	}
	o.last = coll_now_ms();
	ret = op_ring(c, buf, n, div, bk, &o);
	if (ret)
		return ret;
	return op_finish(&o, true);
}

int incnn_coll_allreduce_ring(struct incnn_comm *c, float *buf, size_t n)
{
	return op_allreduce(c, buf, n, 0, NULL);
}

int incnn_coll_allreduce_bk(struct incnn_comm *c, float *buf, size_t n,
			    float div, struct coll_bkrun *bk)
{
	return op_allreduce(c, buf, n, div, bk);
}

void incnn_coll_div(float *x, size_t n, float d)
{
	op_div(x, n, d);
}

int incnn_allreduce(struct incnn_comm *c, float *buf, size_t n)
{
	if (c && c->method == INCNN_COLL_METHOD_THC)
		return incnn_allreduce_thc(c, buf, n);
	if (c && c->method == INCNN_COLL_METHOD_GRADIVEQ)
		return op_gvq_refuse(c, "incnn_allreduce()");
	return op_allreduce(c, buf, n, 0, NULL);
}

int incnn_allreduce_div(struct incnn_comm *c, float *buf, size_t n,
			float divisor)
{
	int ret;

	if (c && !c->err && !(isfinite(divisor) && divisor != 0))
		return incnn_coll_fail(c, -EINVAL, false,
				       "invalid divisor %g for incnn_allreduce_div",
				       (double)divisor);
	if (c && c->method == INCNN_COLL_METHOD_THC) {
		ret = op_check_args(c, buf, n);
		if (ret)
			return ret;
		op_div(buf, n, divisor);
		return incnn_allreduce_thc(c, buf, n);
	}
	if (c && c->method == INCNN_COLL_METHOD_GRADIVEQ)
		return op_gvq_refuse(c, "incnn_allreduce_div()");
	return op_allreduce(c, buf, n, divisor, NULL);
}

/* --- worker-aggregator ---------------------------------------------------- */

/* A worker: send Q(g) up (marked), receive the sum down (unmarked). */
static int op_ps_worker(struct incnn_comm *c, float *buf, size_t n,
			struct op_ctx *o)
{
	const size_t total = 4 * n, chunk = c->chunk;
	const int fd = c->link.ps_fd;
	size_t q = c->codec.q.codec && !c->codec.wire_q ? 0 : n, sb = 0, rb = 0;
	int ret;

	o->rx_total = total;
	while (sb < total || rb < total) {
		bool progress = false;
		struct pollfd pfd[2];
		short ev = 0;
		ssize_t k;

		if (q < n) {
			size_t cnt = op_min(chunk, n - q);

			ret = op_quantise(c, buf + q, cnt);
			if (ret)
				return ret;
			q += cnt;
			progress = true;
		}
		if (sb < 4 * q && !c->fault.send_shut) {
			k = send(fd, (char *)buf + sb, 4 * q - sb,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (k > 0) {
				sb += (size_t)k;
				c->wire_sent += (uint64_t)k;
				o->moved += (uint64_t)k;
				progress = true;
			} else if (k < 0 && op_again(errno)) {
				ev |= POLLOUT;
			} else {
				return op_send_error(o, 0, errno);
			}
		}
		/* the sum of a byte comes back only after we sent it */
		if (rb < total) {
			k = recv(fd, (char *)buf + rb,
				 op_min(total - rb, 4 * chunk), MSG_DONTWAIT);
			if (k > 0) {
				rb += (size_t)k;
				o->moved += (uint64_t)k;
				o->rx_done += (uint64_t)k;
				progress = true;
			} else if (k < 0 && op_again(errno)) {
				ev |= POLLIN;
			} else {
				return op_recv_error(o, 0, k, errno);
			}
		}
		if (progress) {
			o->last = coll_now_ms();
			ret = op_fault(o, fd);
			if (ret)
				return ret;
			continue;
		}
		pfd[0] = (struct pollfd){ .fd = fd, .events = ev };
		ret = op_poll(o, pfd, ev ? 1 : 0,
			      ev & POLLIN ? "waiting for the sum from rank 0" :
			      "sending to rank 0 (it stopped reading)");
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Rank 0: receive every worker's stream into a ring of W floats each,
 * add chunk by chunk in rank order (((g0 + q1) + q2) + ...) once every
 * worker's chunk is in, send the sums back to everyone.
 */
/* Rank 0's side of one worker-aggregator allreduce in progress. */
struct ps_run {
	struct incnn_comm *c;
	struct op_ctx *o;
	float *buf;
	size_t n, total, chunk;
	size_t W;		/* floats per worker in the staging ring */
	size_t F;		/* floats reduced (the sum, ready to send) */
	size_t *rb, *sb;	/* per worker: bytes received, sent */
	struct pollfd *pfd;
	int N, np, lag;
	bool progress, all_sent;
};

/* Receive from worker @w into its staging ring; send it the sum so far. */
static int ps_worker_io(struct ps_run *pr, int w)
{
	struct incnn_comm *c = pr->c;
	float *ring = c->stage + pr->W * (size_t)(w - 1);
	size_t limit = 4 * op_min(pr->n, pr->F + pr->W);
	int fd = c->link.ps_fds[w];
	short ev = 0;
	ssize_t k;

	if (pr->rb[w] < limit) {
		size_t pos = pr->rb[w] % (4 * pr->W);
		size_t len = op_min(limit - pr->rb[w], 4 * pr->W - pos);

		k = recv(fd, (char *)ring + pos, len, MSG_DONTWAIT);
		if (k > 0) {
			pr->rb[w] += (size_t)k;
			pr->o->moved += (uint64_t)k;
			pr->o->rx_done += (uint64_t)k;
			pr->progress = true;
		} else if (k < 0 && op_again(errno)) {
			ev |= POLLIN;
			if (pr->lag < 0 || pr->rb[w] < pr->rb[pr->lag])
				pr->lag = w;
		} else {
			return op_recv_error(pr->o, w, k, errno);
		}
	}
	if (pr->sb[w] < 4 * pr->F) {
		k = send(fd, (char *)pr->buf + pr->sb[w], 4 * pr->F - pr->sb[w],
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k > 0) {
			pr->sb[w] += (size_t)k;
			c->wire_sent += (uint64_t)k;
			pr->o->moved += (uint64_t)k;
			pr->progress = true;
		} else if (k < 0 && op_again(errno)) {
			ev |= POLLOUT;
		} else {
			return op_send_error(pr->o, w, errno);
		}
	}
	if (pr->sb[w] < pr->total)
		pr->all_sent = false;
	if (ev)
		pr->pfd[pr->np++] = (struct pollfd){ .fd = fd, .events = ev };
	return 0;
}

/* Reduce the next chunk once every worker's copy is in. */
static void ps_reduce(struct ps_run *pr)
{
	size_t cnt = op_min(pr->chunk, pr->n - pr->F), i;
	float *x = pr->buf + pr->F;
	int w;

	for (w = 1; w < pr->N; w++)
		if (pr->rb[w] < 4 * (pr->F + cnt))
			return;
	for (w = 1; w < pr->N; w++) {
		const float *y = pr->c->stage + pr->W * (size_t)(w - 1) +
				 pr->F % pr->W;

		for (i = 0; i < cnt; i++)
			x[i] = x[i] + y[i];
	}
	pr->F += cnt;
	pr->progress = true;
}

static int ps_root_loop(struct ps_run *pr)
{
	char what[96];
	int ret, w;

	for (;;) {
		pr->progress = false;
		pr->all_sent = true;
		pr->np = 0;
		pr->lag = -1;
		for (w = 1; w < pr->N; w++) {
			ret = ps_worker_io(pr, w);
			if (ret)
				return ret;
		}
		if (pr->F == pr->n && pr->all_sent)
			return 0;
		if (pr->F < pr->n)
			ps_reduce(pr);
		if (pr->progress) {
			pr->o->last = coll_now_ms();
			ret = op_fault(pr->o, -1);
		} else {
			if (pr->lag > 0)
				snprintf(what, sizeof(what),
					 "waiting for data from rank %d",
					 pr->lag);
			else
				snprintf(what, sizeof(what),
					 "sending the sum to the workers");
			ret = op_poll(pr->o, pr->pfd, pr->np, what);
		}
		if (ret)
			return ret;
	}
}

static int op_ps_root(struct incnn_comm *c, float *buf, size_t n,
		      struct op_ctx *o)
{
	struct ps_run pr = { .c = c, .o = o, .buf = buf, .n = n,
			     .total = 4 * n, .chunk = c->chunk,
			     .W = 4 * c->chunk, .N = c->world };
	size_t whole = (n + pr.chunk - 1) / pr.chunk * pr.chunk;
	int ret;

	/* a multiple of the chunk, so that no chunk wraps; no more than n */
	if (pr.W > whole)
		pr.W = whole;
	if (!pr.W)
		pr.W = pr.chunk;
	ret = op_stage(c, pr.W * (size_t)(pr.N - 1));
	if (ret)
		return ret;
	pr.rb = calloc((size_t)pr.N, sizeof(*pr.rb));
	pr.sb = calloc((size_t)pr.N, sizeof(*pr.sb));
	pr.pfd = calloc((size_t)pr.N + 1, sizeof(*pr.pfd));
	if (!pr.rb || !pr.sb || !pr.pfd)
		ret = incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	o->rx_total = pr.total * (uint64_t)(pr.N - 1);
	if (!ret)
		ret = ps_root_loop(&pr);
	free(pr.rb);
	free(pr.sb);
	free(pr.pfd);
	return ret;
}

int incnn_allreduce_ps(struct incnn_comm *c, float *buf, size_t n)
{
	struct op_ctx o = { .c = c };
	int ret;

	if (c && c->method == INCNN_COLL_METHOD_THC)
		return incnn_allreduce_thc_ps(c, buf, n);
	if (c && c->method == INCNN_COLL_METHOD_GRADIVEQ)
		return op_gvq_refuse(c, "incnn_allreduce_ps()");
	ret = op_check_args(c, buf, n);

	if (ret)
		return ret;
	ret = op_begin(c, COLL_CALL_PS, n, NULL, 0);
	if (ret <= 0)
		return ret;
	o.last = coll_now_ms();
	if (c->rank == 0)
		ret = op_ps_root(c, buf, n, &o);
	else
		ret = op_ps_worker(c, buf, n, &o);
	if (ret)
		return ret;
	return op_finish(&o, true);
}

/* --- calls in pieces (thc_comm.c) ----------------------------------------- */

int incnn_coll_call_begin(struct incnn_comm *c, uint32_t kind, uint64_t count)
{
	return op_begin(c, kind, count, NULL, 0);
}

int incnn_coll_call_finish(struct incnn_comm *c)
{
	struct op_ctx o = { .c = c, .last = coll_now_ms() };

	return op_finish(&o, true);
}

/* One ring step: send to the successor while receiving from the
 * predecessor, both to completion. */
int incnn_coll_ring_exchange(struct incnn_comm *c, const void *sbuf,
			     size_t slen, void *rbuf, size_t rlen)
{
	return incnn_coll_exchange(c, c->link.ring_send_fd,
				   (c->rank + 1) % c->world, sbuf, slen,
				   c->link.ring_recv_fd,
				   (c->rank + c->world - 1) % c->world, rbuf,
				   rlen);
}

int incnn_coll_exchange(struct incnn_comm *c, int sfd, int speer,
			const void *sbuf, size_t slen, int rfd, int rpeer,
			void *rbuf, size_t rlen)
{
	struct op_ctx o = { .c = c, .rx_total = rlen, .last = coll_now_ms() };
	size_t sb = 0, rb = 0;
	ssize_t k;
	int ret;

	while (sb < slen || rb < rlen) {
		struct pollfd pfd[3];
		bool progress = false;
		int np = 0;

		if (sb < slen) {
			k = send(sfd, (const char *)sbuf + sb, slen - sb,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (k > 0) {
				sb += (size_t)k;
				c->wire_sent += (uint64_t)k;
				progress = true;
			} else if (k < 0 && op_again(errno)) {
				pfd[np++] = (struct pollfd){ .fd = sfd,
							     .events = POLLOUT };
			} else {
				return op_send_error(&o, speer, errno);
			}
		}
		if (rb < rlen) {
			k = recv(rfd, (char *)rbuf + rb, rlen - rb, MSG_DONTWAIT);
			if (k > 0) {
				rb += (size_t)k;
				o.rx_done += (uint64_t)k;
				progress = true;
			} else if (k < 0 && op_again(errno)) {
				pfd[np++] = (struct pollfd){ .fd = rfd,
							     .events = POLLIN };
			} else {
				return op_recv_error(&o, rpeer, k, errno);
			}
		}
		if (progress) {
			o.last = coll_now_ms();
			continue;
		}
		ret = op_poll(&o, pfd, np, "exchanging THC data");
		if (ret)
			return ret;
	}
	return 0;
}

/* --- store-only calls ----------------------------------------------------- */

int incnn_comm_allgather_meta(struct incnn_comm *c, const void *in,
			      size_t len, void *out)
{
	struct op_ctx o = { .c = c };
	int ret;

	if (!c)
		return -EINVAL;
	if (c->err)
		return c->err;
	if (len > COLL_GATHER_MAX || (len && (!in || !out)))
		return incnn_coll_fail(c, -EINVAL, false,
				       "invalid arguments to incnn_comm_allgather_meta: len %zu",
				       len);
	ret = op_begin(c, COLL_CALL_GATHER, len, in, len);
	if (ret < 0)
		return ret;
	if (ret == 0) {		/* one rank */
		if (len)
			memmove(out, in, len);
		return 0;
	}
	o.last = coll_now_ms();
	ret = op_finish(&o, false);
	if (ret)
		return ret;
	if (c->store.result.len - c->store.result.off != len * (size_t)c->world)
		return incnn_coll_fail(c, -EPROTO, false,
				       "malformed gather result from the store");
	if (len)
		memcpy(out, c->store.result.p + c->store.result.off, len * (size_t)c->world);
	return 0;
}

int incnn_comm_barrier(struct incnn_comm *c)
{
	return incnn_comm_allgather_meta(c, NULL, 0, NULL);
}
