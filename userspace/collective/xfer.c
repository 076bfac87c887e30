// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * One collective call's transfers, below every data phase (ring.c,
 * agg.c, thc_comm.c): a call begins and finishes through the store,
 * waits for its sockets and the store together (one timeout: no
 * progress for timeout_ms), reports a failed peer with the store's
 * reason when it comes, and injects the tests' faults. Also the
 * exchange of one ring step in pieces (THC) and the store-only calls.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"

/*
 * A data connection failed. The failing peer has usually told the store
 * why (or the store saw it die): give that message a moment to arrive,
 * it says more than "connection reset".
 */
static int xf_peer_error(struct coll_op *o, int err, const char *fmt, ...)
	COLL_PRINTF(3, 4);
static int xf_peer_error(struct coll_op *o, int err, const char *fmt, ...)
{
	struct incnn_comm *c = o->c;
	int64_t deadline = coll_now_ms() + 250;
	char msg[COLL_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	incnn_coll_vmsg(msg, sizeof(msg), fmt, ap);
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

int incnn_coll_send_error(struct coll_op *o, int peer, int e)
{
	return xf_peer_error(o, -ECONNRESET, "sending to rank %d: %s", peer,
			     strerror(e));
}

int incnn_coll_recv_error(struct coll_op *o, int peer, ssize_t k, int e)
{
	if (k == 0)
		return xf_peer_error(o, -ECONNRESET,
				     "rank %d closed its connection after %llu of the %llu bytes this rank expected in this call (short stream, or the process died)",
				     peer, (unsigned long long)o->rx_done,
				     (unsigned long long)o->rx_total);
	return xf_peer_error(o, -ECONNRESET, "receiving from rank %d: %s",
			     peer, strerror(e));
}

/* Fault injection (tests), once per communicator. */
int incnn_coll_fault(struct coll_op *o, int send_fd)
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
int incnn_coll_poll(struct coll_op *o, struct pollfd *pfd, int n,
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
int incnn_coll_call_begin(struct incnn_comm *c, uint32_t kind, uint64_t count,
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
int incnn_coll_op_finish(struct coll_op *o, bool send_done)
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

		ret = incnn_coll_poll(o, pfd, 0, what);
	}
	return ret;
}

int incnn_coll_check_args(struct incnn_comm *c, const float *buf, size_t n)
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

int incnn_coll_stage(struct incnn_comm *c, size_t floats)
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

int incnn_coll_quantise(struct incnn_comm *c, float *x, size_t n)
{
	int ret = incnn_coll_q_apply(&c->codec.q, x, n);

	if (ret)
		return incnn_coll_fail(c, ret, false,
				       "codec emulation failed: %s",
				       strerror(-ret));
	return 0;
}

/* --- calls in pieces (thc_comm.c) ----------------------------------------- */

int incnn_coll_call_finish(struct incnn_comm *c)
{
	struct coll_op o = { .c = c, .last = coll_now_ms() };

	return incnn_coll_op_finish(&o, true);
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
	struct coll_op o = { .c = c, .rx_total = rlen, .last = coll_now_ms() };
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
			} else if (k < 0 && coll_again(errno)) {
				pfd[np++] = (struct pollfd){ .fd = sfd,
							     .events = POLLOUT };
			} else {
				return incnn_coll_send_error(&o, speer, errno);
			}
		}
		if (rb < rlen) {
			k = recv(rfd, (char *)rbuf + rb, rlen - rb, MSG_DONTWAIT);
			if (k > 0) {
				rb += (size_t)k;
				o.rx_done += (uint64_t)k;
				progress = true;
			} else if (k < 0 && coll_again(errno)) {
				pfd[np++] = (struct pollfd){ .fd = rfd,
							     .events = POLLIN };
			} else {
				return incnn_coll_recv_error(&o, rpeer, k, errno);
			}
		}
		if (progress) {
			o.last = coll_now_ms();
			continue;
		}
		ret = incnn_coll_poll(&o, pfd, np, "exchanging THC data");
		if (ret)
			return ret;
	}
	return 0;
}

/* --- store-only calls ----------------------------------------------------- */

int incnn_comm_allgather_meta(struct incnn_comm *c, const void *in,
			      size_t len, void *out)
{
	struct coll_op o = { .c = c };
	int ret;

	if (!c)
		return -EINVAL;
	if (c->err)
		return c->err;
	if (len > COLL_GATHER_MAX || (len && (!in || !out)))
		return incnn_coll_fail(c, -EINVAL, false,
				       "invalid arguments to incnn_comm_allgather_meta: len %zu",
				       len);
	ret = incnn_coll_call_begin(c, COLL_CALL_GATHER, len, in, len);
	if (ret < 0)
		return ret;
	if (ret == 0) {		/* one rank */
		if (len)
			memmove(out, in, len);
		return 0;
	}
	o.last = coll_now_ms();
	ret = incnn_coll_op_finish(&o, false);
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
