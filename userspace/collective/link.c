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

#define cm_msg incnn_coll_msg

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
	struct sockaddr_in addr;
};

struct cm_setup {
	struct incnn_comm *c;
	uint64_t token;
	struct sockaddr_in *addrs;	/* per rank */
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
static int cm_out_step(struct cm_setup *st, struct cm_link *l)
{
	short *events = &l->events;
	struct incnn_comm *c = st->c;
	ssize_t k;
	int outq, tos;

	*events = 0;
	for (;;) {
		switch (l->state) {
		case CM_START:
			if (coll_now_ms() < l->retry_at)
				return 0;
			l->fd = incnn_coll_socket(c, true);
			if (l->fd < 0)
				return incnn_coll_fail(c, l->fd, false,
						       "socket: %s",
						       strerror(-l->fd));
			cm_hello(st, l);
			l->n = 0;
			l->state = CM_CONNECTING;
			if (connect(l->fd, (struct sockaddr *)&l->addr,
				    sizeof(l->addr)) == 0)
				l->state = CM_HELLO;
			else if (errno != EINPROGRESS)
				goto conn_err;
			continue;
		case CM_CONNECTING:
			if (connect(l->fd, (struct sockaddr *)&l->addr,
				    sizeof(l->addr)) == 0 || errno == EISCONN) {
				l->state = CM_HELLO;
				continue;
			}
			if (errno == EALREADY || errno == EINPROGRESS) {
				*events = POLLOUT;
				return 0;
			}
			goto conn_err;
		case CM_HELLO:
			k = send(l->fd, l->buf + l->n, COLL_DATA_HELLO_LEN - l->n,
				 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (k < 0) {
				if (errno == EAGAIN || errno == EINTR) {
					*events = POLLOUT;
					return 0;
				}
				goto conn_err;
			}
			l->n += (size_t)k;
			if (l->n == COLL_DATA_HELLO_LEN)
				l->state = CM_ACK;
			continue;
		case CM_ACK: {
			uint8_t ack;

			k = recv(l->fd, &ack, 1, MSG_DONTWAIT);
			if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
				*events = POLLIN;
				return 0;
			}
			if (k != 1 || ack != COLL_DATA_ACK) {
				char where[32];

				return incnn_coll_fail(c, -ECONNREFUSED, false,
						       "rank %d (%s) refused the %s data connection",
						       l->peer,
						       incnn_coll_addr_str(&l->addr, where, sizeof(where)),
						       cm_kind_name(l->kind));
			}
			l->state = CM_OUTQ;
			continue;
		}
		case CM_OUTQ:
			/* every unmarked byte acknowledged before marking */
			if (ioctl(l->fd, SIOCOUTQ, &outq))
				return incnn_coll_fail(c, -errno, false,
						       "ioctl(SIOCOUTQ): %s",
						       strerror(errno));
			if (outq > 0)
				return 0;	/* polled again shortly */
			tos = c->tos;
			if (tos && setsockopt(l->fd, IPPROTO_IP, IP_TOS, &tos,
					      sizeof(tos)))
				return incnn_coll_fail(c, -errno, false,
						       "setsockopt(IP_TOS, 0x%02x): %s",
						       tos, strerror(errno));
			l->state = CM_DONE;
			if (l->kind == COLL_LINK_RING)
				c->ring_send_fd = l->fd;
			else
				c->ps_fd = l->fd;
			l->fd = -1;
			return 0;
		default:
			return 0;
		}
	}
conn_err:
	l->last_err = errno;
	close(l->fd);
	l->fd = -1;
	if (!incnn_coll_retryable(l->last_err)) {
		char where[32];

		return incnn_coll_fail(c, -l->last_err, false,
				       "cannot connect to rank %d at %s: %s",
				       l->peer,
				       incnn_coll_addr_str(&l->addr, where, sizeof(where)),
				       strerror(l->last_err));
	}
	l->state = CM_START;
	l->n = 0;
	l->retry_at = coll_now_ms() + 100;
	return 0;
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
	int kind, zero = 0, *slot;
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
			slot = &c->ring_recv_fd;
		else if (kind == COLL_LINK_PS && c->rank == 0 && rank > 0 &&
			 rank < (uint32_t)c->world)
			slot = &c->ps_fds[rank];
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
	setsockopt(l->fd, IPPROTO_IP, IP_TOS, &zero, sizeof(zero));
	incnn_coll_sockbuf(l->fd, c->sockbuf, true);
	if (l->kind == COLL_LINK_RING)
		c->ring_recv_fd = l->fd;
	else
		c->ps_fds[l->peer] = l->fd;
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
		int fd = accept4(st->c->listen_fd, NULL, NULL,
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

static int cm_setup_links(struct incnn_comm *c, struct cm_setup *st,
			  int64_t deadline)
{
	struct pollfd *pfd = NULL;
	int ret = 0, i;

	st->nout = 0;
	if (c->world >= 2) {
		int succ = (c->rank + 1) % c->world;

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
	for (;;) {
		size_t n = 0, j;
		int timeout, done = 0;

		for (i = 0; i < st->nout; i++) {
			ret = cm_out_step(st, &st->out[i]);
			if (ret)
				goto out;
			done += st->out[i].state == CM_DONE;
		}
		for (j = 0; j < st->nin;)
			if (!cm_in_step(st, j))
				j++;
		if (done == st->nout && st->have_in == st->expect_in)
			break;
		if (coll_now_ms() >= deadline) {
			char what[96] = "";

			for (i = 0; i < st->nout; i++)
				if (st->out[i].state != CM_DONE)
					snprintf(what, sizeof(what),
						 "connecting to rank %d", st->out[i].peer);
			if (!*what)
				snprintf(what, sizeof(what),
					 "waiting for %d incoming data connection(s)",
					 st->expect_in - st->have_in);
			ret = incnn_coll_fail(c, -ETIMEDOUT, false,
					      "timed out after %d ms setting up data connections: %s",
					      c->init_timeout_ms, what);
			goto out;
		}
		free(pfd);
		pfd = calloc(st->nout + st->nin + 2, sizeof(*pfd));
		if (!pfd) {
			ret = incnn_coll_fail(c, -ENOMEM, false, "out of memory");
			goto out;
		}
		timeout = coll_left_ms(deadline);
		pfd[n++] = (struct pollfd){ .fd = c->store_fd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = c->listen_fd, .events = POLLIN };
		for (i = 0; i < st->nout; i++) {
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
		for (j = 0; j < st->nin; j++)
			pfd[n++] = (struct pollfd){ .fd = st->in[j].fd,
						    .events = st->in[j].events };
		if (poll(pfd, n, timeout) < 0 && errno != EINTR) {
			ret = incnn_coll_fail(c, -errno, false, "poll: %s",
					      strerror(errno));
			goto out;
		}
		if (pfd[0].revents) {
			ret = incnn_coll_store_pump(c);
			if (ret)
				goto out;
		}
		if (pfd[1].revents)
			cm_accept(st);
	}
out:
	free(pfd);
	for (i = 0; i < st->nout; i++)
		if (st->out[i].fd >= 0)
			close(st->out[i].fd);
	while (st->nin)
		cm_in_drop(st, 0);
	free(st->in);
	return ret;
}

int incnn_coll_listen_data(struct incnn_comm *c, const struct coll_cfg *k,
			  struct sockaddr_in *me)
{
	socklen_t len = sizeof(*me);
	char where[32];
	int fd;

	if (k->have_data) {
		*me = k->data;
	} else if (getsockname(c->store_fd, (struct sockaddr *)me, &len)) {
		return incnn_coll_fail(c, -errno, false, "getsockname: %s",
				       strerror(errno));
	}
	me->sin_port = 0;
	fd = incnn_coll_socket(c, false);
	if (fd < 0)
		return incnn_coll_fail(c, fd, false, "socket: %s",
				       strerror(-fd));
	/* accepted sockets inherit it; the window scale needs it now */
	incnn_coll_sockbuf(fd, c->sockbuf, false);
	if (bind(fd, (struct sockaddr *)me, sizeof(*me)) ||
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
	c->listen_fd = fd;
	return 0;
}

/* Leave: say goodbye, close, stop the store (rank 0). */

int incnn_coll_links_setup(struct incnn_comm *c, uint64_t token,
			   struct sockaddr_in *addrs, int64_t deadline)
{
	struct cm_setup st = { .c = c, .token = token, .addrs = addrs };

	return cm_setup_links(c, &st, deadline);
}
