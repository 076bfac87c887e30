// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The worker-aggregator allreduce (incnn_allreduce_ps() in fp32): every
 * worker streams Q(g) to rank 0 (marked; with c->codec.wire_q the wire
 * quantises it), rank 0 sums chunk by chunk in rank order and streams
 * the sums back (unmarked). Driven like the ring (xfer.c).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"

/* A worker: send Q(g) up (marked), receive the sum down (unmarked). */
static int agg_worker(struct incnn_comm *c, float *buf, size_t n,
		      struct coll_op *o)
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
			size_t cnt = coll_min(chunk, n - q);

			ret = incnn_coll_quantise(c, buf + q, cnt);
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
			} else if (k < 0 && coll_again(errno)) {
				ev |= POLLOUT;
			} else {
				return incnn_coll_send_error(o, 0, errno);
			}
		}
		/* the sum of a byte comes back only after we sent it */
		if (rb < total) {
			k = recv(fd, (char *)buf + rb,
				 coll_min(total - rb, 4 * chunk), MSG_DONTWAIT);
			if (k > 0) {
				rb += (size_t)k;
				o->moved += (uint64_t)k;
				o->rx_done += (uint64_t)k;
				progress = true;
			} else if (k < 0 && coll_again(errno)) {
				ev |= POLLIN;
			} else {
				return incnn_coll_recv_error(o, 0, k, errno);
			}
		}
		if (progress) {
			o->last = coll_now_ms();
			ret = incnn_coll_fault(o, fd);
			if (ret)
				return ret;
			continue;
		}
		pfd[0] = (struct pollfd){ .fd = fd, .events = ev };
		ret = incnn_coll_poll(o, pfd, ev ? 1 : 0,
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
struct agg_run {
	struct incnn_comm *c;
	struct coll_op *o;
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
static int agg_worker_io(struct agg_run *pr, int w)
{
	struct incnn_comm *c = pr->c;
	float *ring = c->stage + pr->W * (size_t)(w - 1);
	size_t limit = 4 * coll_min(pr->n, pr->F + pr->W);
	int fd = c->link.ps_fds[w];
	short ev = 0;
	ssize_t k;

	if (pr->rb[w] < limit) {
		size_t pos = pr->rb[w] % (4 * pr->W);
		size_t len = coll_min(limit - pr->rb[w], 4 * pr->W - pos);

		k = recv(fd, (char *)ring + pos, len, MSG_DONTWAIT);
		if (k > 0) {
			pr->rb[w] += (size_t)k;
			pr->o->moved += (uint64_t)k;
			pr->o->rx_done += (uint64_t)k;
			pr->progress = true;
		} else if (k < 0 && coll_again(errno)) {
			ev |= POLLIN;
			if (pr->lag < 0 || pr->rb[w] < pr->rb[pr->lag])
				pr->lag = w;
		} else {
			return incnn_coll_recv_error(pr->o, w, k, errno);
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
		} else if (k < 0 && coll_again(errno)) {
			ev |= POLLOUT;
		} else {
			return incnn_coll_send_error(pr->o, w, errno);
		}
	}
	if (pr->sb[w] < pr->total)
		pr->all_sent = false;
	if (ev)
		pr->pfd[pr->np++] = (struct pollfd){ .fd = fd, .events = ev };
	return 0;
}

/* Reduce the next chunk once every worker's copy is in. */
static void agg_reduce(struct agg_run *pr)
{
	size_t cnt = coll_min(pr->chunk, pr->n - pr->F), i;
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

static int agg_root_loop(struct agg_run *pr)
{
	char what[96];
	int ret, w;

	for (;;) {
		pr->progress = false;
		pr->all_sent = true;
		pr->np = 0;
		pr->lag = -1;
		for (w = 1; w < pr->N; w++) {
			ret = agg_worker_io(pr, w);
			if (ret)
				return ret;
		}
		if (pr->F == pr->n && pr->all_sent)
			return 0;
		if (pr->F < pr->n)
			agg_reduce(pr);
		if (pr->progress) {
			pr->o->last = coll_now_ms();
			ret = incnn_coll_fault(pr->o, -1);
		} else {
			if (pr->lag > 0)
				snprintf(what, sizeof(what),
					 "waiting for data from rank %d",
					 pr->lag);
			else
				snprintf(what, sizeof(what),
					 "sending the sum to the workers");
			ret = incnn_coll_poll(pr->o, pr->pfd, pr->np, what);
		}
		if (ret)
			return ret;
	}
}

static int agg_root(struct incnn_comm *c, float *buf, size_t n,
		    struct coll_op *o)
{
	struct agg_run pr = { .c = c, .o = o, .buf = buf, .n = n,
			     .total = 4 * n, .chunk = c->chunk,
			     .W = 4 * c->chunk, .N = c->world };
	size_t whole = (n + pr.chunk - 1) / pr.chunk * pr.chunk;
	int ret;

	/* a multiple of the chunk, so that no chunk wraps; no more than n */
	if (pr.W > whole)
		pr.W = whole;
	if (!pr.W)
		pr.W = pr.chunk;
	ret = incnn_coll_stage(c, pr.W * (size_t)(pr.N - 1));
	if (ret)
		return ret;
	pr.rb = calloc((size_t)pr.N, sizeof(*pr.rb));
	pr.sb = calloc((size_t)pr.N, sizeof(*pr.sb));
	pr.pfd = calloc((size_t)pr.N + 1, sizeof(*pr.pfd));
	if (!pr.rb || !pr.sb || !pr.pfd)
		ret = incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	o->rx_total = pr.total * (uint64_t)(pr.N - 1);
	if (!ret)
		ret = agg_root_loop(&pr);
	free(pr.rb);
	free(pr.sb);
	free(pr.pfd);
	return ret;
}

int incnn_coll_allreduce_agg(struct incnn_comm *c, float *buf, size_t n)
{
	struct coll_op o = { .c = c };
	int ret;

	ret = incnn_coll_check_args(c, buf, n);
	if (ret)
		return ret;
	ret = incnn_coll_call_begin(c, COLL_CALL_PS, n, NULL, 0);
	if (ret <= 0)
		return ret;
	o.last = coll_now_ms();
	if (c->rank == 0)
		ret = agg_root(c, buf, n, &o);
	else
		ret = agg_worker(c, buf, n, &o);
	if (ret)
		return ret;
	return incnn_coll_op_finish(&o, true);
}
