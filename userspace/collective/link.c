// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The data connections: each rank's listener, and the state machine that
 * connects to the ring successor (and, for a worker, to rank 0), sends
 * the identification, waits for the ACK, and accepts and identifies the
 * incoming ones, all within the setup deadline.
 */
#include <arpa/inet.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"

enum cm_link_state {
	CM_START,	/* (re)connect when retry_at has passed */
	CM_CONNECTING,
	CM_HELLO,	/* sending the identification */
	CM_ACK,		/* waiting for the acknowledgement */
	CM_OUTQ,	/* waiting for SIOCOUTQ == 0 */
	CM_DONE,
	/* accepted connections */
	CM_IN_HELLO,	/* reading the identification */
	CM_IN_ACK,	/* sending the acknowledgement */
};

struct cm_link {
	int fd;
	int peer;		/* rank */
	int kind;		/* enum coll_link_kind */
	enum cm_link_state state;
	uint8_t buf[COLL_DATA_HELLO_LEN];
	size_t n;
	int64_t retry_at;
	int last_err;
	short events;		/* what to poll for */
	union coll_sa addr;
};

struct cm_setup {
	struct incnn_comm *c;
	uint64_t token;
	union coll_sa *addrs;	/* per rank */
	struct cm_link out[2];
	int nout;
	struct cm_link *in;		/* accepted, being identified */
	size_t nin, capin;
	int expect_in, have_in;
};

static void cm_hello(struct cm_setup *st, struct cm_link *l)
{
	struct coll_data_hello h = {
		.kind = (uint16_t)l->kind,
		.token = st->token,
		.rank = (uint32_t)st->c->rank,
	};

	coll_data_hello_encode(&h, l->buf);
}

static const char *cm_kind_name(int kind)
{
	return kind == COLL_LINK_RING ? "ring" : "aggregator";
}

/* Advance an outgoing link as far as it goes without blocking. */
/* What a state of an outgoing link did: a negative errno, or */
enum {
	CM_WAIT,	/* wait for l->events (or the retry time) */
	CM_NEXT,	/* on to the next state now */
	CM_RETRY,	/* the connection failed (errno): retry or fail */
};

static int cm_out_start(struct cm_setup *st, struct cm_link *l)
{
	struct incnn_comm *c = st->c;

	if (coll_now_ms() < l->retry_at)
		return CM_WAIT;
	l->fd = incnn_coll_socket(c, l->addr.sa.sa_family, true);
	if (l->fd < 0)
		return incnn_coll_fail(c, l->fd, false, "socket: %s",
				       strerror(-l->fd));
	cm_hello(st, l);
	l->n = 0;
	l->state = CM_CONNECTING;
	/*
	 * The SYN goes out marked: it offers to decode only when its DSCP
	 * has a rule (docs/wire-format.md); retransmissions repeat that
	 * offer whatever the mark. Unmarked again before the hello.
	 */
	if (c->tos && incnn_coll_set_tos(l->fd, c->tos))
		return CM_RETRY;
	if (connect(l->fd, &l->addr.sa, coll_sa_len(&l->addr)) == 0)
		l->state = CM_HELLO;
	else if (errno != EINPROGRESS)
		return CM_RETRY;
	if (c->tos && incnn_coll_set_tos(l->fd, 0))
		return CM_RETRY;
	return CM_NEXT;
}

static int cm_out_connecting(struct cm_link *l)
{
	if (connect(l->fd, &l->addr.sa, coll_sa_len(&l->addr)) == 0 ||
	    errno == EISCONN) {
		l->state = CM_HELLO;
		return CM_NEXT;
	}
	if (errno == EALREADY || errno == EINPROGRESS) {
		l->events = POLLOUT;
		return CM_WAIT;
	}
	return CM_RETRY;
}

static int cm_out_hello(struct cm_link *l)
{
	ssize_t k = send(l->fd, l->buf + l->n, COLL_DATA_HELLO_LEN - l->n,
			 MSG_DONTWAIT | MSG_NOSIGNAL);

	if (k < 0) {
		if (errno == EAGAIN || errno == EINTR) {
			l->events = POLLOUT;
			return CM_WAIT;
		}
		return CM_RETRY;
	}
	l->n += (size_t)k;
	if (l->n == COLL_DATA_HELLO_LEN)
		l->state = CM_ACK;
	return CM_NEXT;
}

static int cm_out_ack(struct cm_setup *st, struct cm_link *l)
{
	char where[COLL_ADDR_STRLEN];
	uint8_t ack;
	ssize_t k = recv(l->fd, &ack, 1, MSG_DONTWAIT);

	if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
		l->events = POLLIN;
		return CM_WAIT;
	}
	if (k != 1 || ack != COLL_DATA_ACK)
		return incnn_coll_fail(st->c, -ECONNREFUSED, false,
				       "rank %d (%s) refused the %s data connection",
				       l->peer,
				       incnn_coll_addr_str(&l->addr, where,
							   sizeof(where)),
				       cm_kind_name(l->kind));
	l->state = CM_OUTQ;
	return CM_NEXT;
}

/* Mark the link once every unmarked byte is acknowledged; it is set up. */
static int cm_out_outq(struct cm_setup *st, struct cm_link *l)
{
	struct incnn_comm *c = st->c;
	int outq, err, tos = c->tos;

	if (ioctl(l->fd, SIOCOUTQ, &outq))
		return incnn_coll_fail(c, -errno, false, "ioctl(SIOCOUTQ): %s",
				       strerror(errno));
	if (outq > 0)
		return CM_WAIT;	/* polled again shortly */
	err = tos ? incnn_coll_set_tos(l->fd, tos) : 0;
	if (err)
		return incnn_coll_fail(c, err, false,
				       "cannot mark the link with ToS 0x%02x: %s",
				       tos, strerror(-err));
	l->state = CM_DONE;
	if (l->kind == COLL_LINK_RING)
		c->link.ring_send_fd = l->fd;
	else
		c->link.ps_fd = l->fd;
	l->fd = -1;
	return CM_WAIT;
}

/* A failed connection (errno): retry in 100 ms, or fail for good. */
static int cm_out_retry(struct cm_setup *st, struct cm_link *l)
{
	char where[COLL_ADDR_STRLEN];

	l->last_err = errno;
	close(l->fd);
	l->fd = -1;
	if (!incnn_coll_retryable(l->last_err))
		return incnn_coll_fail(st->c, -l->last_err, false,
				       "cannot connect to rank %d at %s: %s",
				       l->peer,
				       incnn_coll_addr_str(&l->addr, where,
							   sizeof(where)),
				       strerror(l->last_err));
	l->state = CM_START;
	l->n = 0;
	l->retry_at = coll_now_ms() + 100;
	return 0;
}

/* Advance an outgoing link as far as it goes without blocking. */
static int cm_out_step(struct cm_setup *st, struct cm_link *l)
{
	int r;

	l->events = 0;
	for (;;) {
		switch (l->state) {
		case CM_START:
			r = cm_out_start(st, l);
			break;
		case CM_CONNECTING:
			r = cm_out_connecting(l);
			break;
		case CM_HELLO:
			r = cm_out_hello(l);
			break;
		case CM_ACK:
			r = cm_out_ack(st, l);
			break;
		case CM_OUTQ:
			r = cm_out_outq(st, l);
			break;
		default:
			return 0;
		}
		if (r == CM_RETRY)
			return cm_out_retry(st, l);
		if (r != CM_NEXT)
			return r;	/* CM_WAIT (0) or an error */
	}
}

static void cm_in_drop(struct cm_setup *st, size_t i)
{
	close(st->in[i].fd);
	st->in[i] = st->in[--st->nin];
}

/* Identify an accepted connection. 1: done (removed), 0: later. */
static int cm_in_step(struct cm_setup *st, size_t i)
{
	struct incnn_comm *c = st->c;
	struct cm_link *l = &st->in[i];
	short *events = &l->events;
	uint8_t ack = COLL_DATA_ACK;
	struct coll_data_hello h;
	uint32_t rank;
	int kind, *slot;
	ssize_t k;

	*events = 0;
	if (l->state == CM_IN_HELLO) {
		k = recv(l->fd, l->buf + l->n, COLL_DATA_HELLO_LEN - l->n,
			 MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
			*events = POLLIN;
			return 0;
		}
		if (k <= 0)
			goto drop;
		l->n += (size_t)k;
		if (l->n < COLL_DATA_HELLO_LEN) {
			*events = POLLIN;
			return 0;
		}
		if (coll_data_hello_decode(l->buf, l->n, &h) ||
		    h.token != st->token)
			goto drop;	/* not ours: another job, a scanner */
		kind = h.kind;
		rank = h.rank;
		if (kind == COLL_LINK_RING &&
		    rank == (uint32_t)((c->rank + c->world - 1) % c->world))
			slot = &c->link.ring_recv_fd;
		else if (kind == COLL_LINK_PS && c->rank == 0 && rank > 0 &&
			 rank < (uint32_t)c->world)
			slot = &c->link.ps_fds[rank];
		else
			goto drop;
		if (*slot >= 0)
			goto drop;	/* duplicate */
		l->peer = (int)rank;
		l->kind = kind;
		l->state = CM_IN_ACK;
	}
	k = send(l->fd, &ack, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
		*events = POLLOUT;
		return 0;
	}
	if (k != 1)
		goto drop;
	/* our side of it never carries floats towards the peer except the
	 * aggregator's down leg, which stays unmarked */
	incnn_coll_set_tos(l->fd, 0);
	incnn_coll_sockbuf(l->fd, c->sockbuf, true);
	if (l->kind == COLL_LINK_RING)
		c->link.ring_recv_fd = l->fd;
	else
		c->link.ps_fds[l->peer] = l->fd;
	st->have_in++;
	st->in[i] = st->in[--st->nin];
	return 1;
drop:
	cm_in_drop(st, i);
	return 1;
}

static void cm_accept(struct cm_setup *st)
{
	for (;;) {
		int fd = accept4(st->c->link.listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		int one = 1;

		if (fd < 0)
			return;
		if (st->nin == st->capin) {
			size_t cap = st->capin ? 2 * st->capin : 8;
			struct cm_link *n;

			if (cap > 256) {	/* a flood: not ours */
				close(fd);
				continue;
			}
			n = realloc(st->in, cap * sizeof(*n));
			if (!n) {
				close(fd);
				continue;
			}
			st->in = n;
			st->capin = cap;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		st->in[st->nin++] = (struct cm_link){ .fd = fd,
						      .state = CM_IN_HELLO,
						      .events = POLLIN };
	}
}

/* The links this rank makes, and how many it accepts. */
static void cm_plan_links(struct incnn_comm *c, struct cm_setup *st)
{
	int succ = (c->rank + 1) % c->world;

	st->nout = 0;
	if (c->world < 2)
		return;
	st->out[st->nout++] = (struct cm_link){
		.fd = -1, .peer = succ, .kind = COLL_LINK_RING,
		.addr = st->addrs[succ] };
	st->expect_in++;
	if (c->rank != 0)
		st->out[st->nout++] = (struct cm_link){
			.fd = -1, .peer = 0, .kind = COLL_LINK_PS,
			.addr = st->addrs[0] };
	else
		st->expect_in += c->world - 1;
}

static int cm_links_timeout(struct incnn_comm *c, struct cm_setup *st)
{
	char what[96] = "";

	for (int i = 0; i < st->nout; i++)
		if (st->out[i].state != CM_DONE)
			snprintf(what, sizeof(what), "connecting to rank %d",
				 st->out[i].peer);
	if (!*what)
		snprintf(what, sizeof(what),
			 "waiting for %d incoming data connection(s)",
			 st->expect_in - st->have_in);
	return incnn_coll_fail(c, -ETIMEDOUT, false,
			       "timed out after %d ms setting up data connections: %s",
			       c->init_timeout_ms, what);
}

/*
 * Wait (until @deadline at most) for the store, the listener or a link
 * to be ready, then serve the store and the listener. 0 or the error.
 */
static int cm_links_poll(struct incnn_comm *c, struct cm_setup *st,
			 int64_t deadline)
{
	struct pollfd *pfd = calloc(st->nout + st->nin + 2, sizeof(*pfd));
	int timeout = coll_left_ms(deadline), ret = 0;
	size_t n = 0;

	if (!pfd)
		return incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	pfd[n++] = (struct pollfd){ .fd = c->store.fd, .events = POLLIN };
	pfd[n++] = (struct pollfd){ .fd = c->link.listen_fd, .events = POLLIN };
	for (int i = 0; i < st->nout; i++) {
		struct cm_link *l = &st->out[i];

		if (l->state == CM_START || l->state == CM_OUTQ) {
			if (timeout > 10)
				timeout = 10;
			continue;
		}
		if (l->fd >= 0 && l->events)
			pfd[n++] = (struct pollfd){ .fd = l->fd,
						    .events = l->events };
	}
	for (size_t j = 0; j < st->nin; j++)
		pfd[n++] = (struct pollfd){ .fd = st->in[j].fd,
					    .events = st->in[j].events };
	if (poll(pfd, n, timeout) < 0 && errno != EINTR)
		ret = incnn_coll_fail(c, -errno, false, "poll: %s",
				      strerror(errno));
	if (!ret && pfd[0].revents)
		ret = incnn_coll_store_pump(c);
	if (!ret && pfd[1].revents)
		cm_accept(st);
	free(pfd);
	return ret;
}

static int cm_setup_links(struct incnn_comm *c, struct cm_setup *st,
			  int64_t deadline)
{
	int ret = 0, i;

	cm_plan_links(c, st);
	for (;;) {
		int done = 0;

		for (i = 0; i < st->nout; i++) {
			ret = cm_out_step(st, &st->out[i]);
			if (ret)
				goto out;
			done += st->out[i].state == CM_DONE;
		}
		for (size_t j = 0; j < st->nin;)
			if (!cm_in_step(st, j))
				j++;
		if (done == st->nout && st->have_in == st->expect_in)
			break;
		if (coll_now_ms() >= deadline) {
			ret = cm_links_timeout(c, st);
			goto out;
		}
		ret = cm_links_poll(c, st, deadline);
		if (ret)
			goto out;
	}
out:
	for (i = 0; i < st->nout; i++)
		if (st->out[i].fd >= 0)
			close(st->out[i].fd);
	while (st->nin)
		cm_in_drop(st, 0);
	free(st->in);
	return ret;
}

int incnn_coll_listen_data(struct incnn_comm *c, const struct coll_cfg *k,
			  union coll_sa *me)
{
	socklen_t len = sizeof(*me);
	char where[COLL_ADDR_STRLEN];
	int fd;

	if (k->have_data) {
		*me = k->data;
	} else if (getsockname(c->store.fd, &me->sa, &len)) {
		return incnn_coll_fail(c, -errno, false, "getsockname: %s",
				       strerror(errno));
	}
	coll_sa_set_port(me, 0);
	fd = incnn_coll_socket(c, me->sa.sa_family, false);
	if (fd < 0)
		return incnn_coll_fail(c, fd, false, "socket: %s",
				       strerror(-fd));
	/* accepted sockets inherit it; the window scale needs it now */
	incnn_coll_sockbuf(fd, c->sockbuf, false);
	if (bind(fd, &me->sa, coll_sa_len(me)) ||
	    listen(fd, c->world + 16)) {
		int e = errno;

		close(fd);
		return incnn_coll_fail(c, -e, false,
				       "cannot listen for data connections on %s: %s",
				       incnn_coll_addr_str(me, where, sizeof(where)),
				       strerror(e));
	}
	len = sizeof(*me);
	getsockname(fd, (struct sockaddr *)me, &len);
	c->link.listen_fd = fd;
	return 0;
}

/* Leave: say goodbye, close, stop the store (rank 0). */

int incnn_coll_links_setup(struct incnn_comm *c, uint64_t token,
			   union coll_sa *addrs, int64_t deadline)
{
	struct cm_setup st = { .c = c, .token = token, .addrs = addrs };

	return cm_setup_links(c, &st, deadline);
}
