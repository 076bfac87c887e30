// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The communicator: configuration, rendezvous through the store, data
 * connection setup, errors and teardown.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"

void incnn_coll_msg(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!buf || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

#define cm_msg incnn_coll_msg

/* --- errors ------------------------------------------------------------- */

void incnn_coll_close_rst(int *fd)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };

	if (*fd < 0)
		return;
	setsockopt(*fd, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
	close(*fd);
	*fd = -1;
}

static void cm_reset_data(struct incnn_comm *c)
{
	int w;

	incnn_coll_close_rst(&c->ring_send_fd);
	incnn_coll_close_rst(&c->ring_recv_fd);
	incnn_coll_close_rst(&c->ps_fd);
	if (c->ps_fds)
		for (w = 0; w < c->world; w++)
			incnn_coll_close_rst(&c->ps_fds[w]);
}

int incnn_coll_fail(struct incnn_comm *c, int err, bool from_store,
		    const char *fmt, ...)
{
	va_list ap;

	if (c->err)
		return c->err;
	c->err = err < 0 ? err : -EIO;
	va_start(ap, fmt);
	vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
	if (!from_store && c->store_fd >= 0) {
		/* best effort, never waits: the store relays it to everyone */
		if (!incnn_coll_msg_append(&c->sout, COLL_MSG_ABORT, c->errmsg,
					   strlen(c->errmsg)))
			incnn_coll_buf_flush(c->store_fd, &c->sout);
	}
	cm_reset_data(c);
	return c->err;
}

const char *incnn_comm_strerror(const struct incnn_comm *c)
{
	return c ? c->errmsg : "no communicator";
}

int incnn_comm_rank(const struct incnn_comm *c)
{
	return c->rank;
}

int incnn_comm_size(const struct incnn_comm *c)
{
	return c->world;
}

void incnn_comm_codec(const struct incnn_comm *c, unsigned int *codec_id,
		      unsigned int *codec_param)
{
	if (codec_id)
		*codec_id = c->codec_id;
	if (codec_param)
		*codec_param = c->codec_param;
}

/* --- store client ------------------------------------------------------- */

int incnn_coll_store_send(struct incnn_comm *c, uint16_t type,
			  const void *payload, size_t len)
{
	int64_t deadline = coll_now_ms() + c->timeout_ms;
	int ret;

	if (c->store_fd < 0)
		return incnn_coll_fail(c, -ENOTCONN, true,
				       "not connected to the store");
	ret = incnn_coll_msg_append(&c->sout, type, payload, len);
	if (ret)
		return incnn_coll_fail(c, ret, false, "store message: %s",
				       strerror(-ret));
	for (;;) {
		struct pollfd p = { .fd = c->store_fd, .events = POLLOUT };

		ret = incnn_coll_buf_flush(c->store_fd, &c->sout);
		if (ret)
			return incnn_coll_fail(c, -ECONNRESET, true,
					       "lost the connection to the store (rank 0): %s",
					       strerror(-ret));
		if (c->sout.off == c->sout.len)
			return 0;
		ret = poll(&p, 1, coll_left_ms(deadline));
		if (ret == 0)
			return incnn_coll_fail(c, -ETIMEDOUT, true,
					       "timed out after %d ms sending to the store (rank 0 stalled?)",
					       c->timeout_ms);
	}
}

static int cm_store_message(struct incnn_comm *c, uint16_t type,
			    const uint8_t *p, uint32_t len)
{
	char text[COLL_MSG_LEN];
	size_t n;

	switch (type) {
	case COLL_MSG_ERROR:
		if (len < 4)
			break;
		n = len - 4 < sizeof(text) - 1 ? len - 4 : sizeof(text) - 1;
		memcpy(text, p + 4, n);
		text[n] = '\0';
		return incnn_coll_fail(c, -(int)(coll_get32(p) & 0xffff), true,
				       "%s", text);
	case COLL_MSG_RESULT:
		if (len < 8 || coll_get64(p) != c->seq || c->got_result)
			break;
		c->result.off = c->result.len = 0;
		if (incnn_coll_buf_append(&c->result, p + 8, len - 8))
			return incnn_coll_fail(c, -ENOMEM, false,
					       "out of memory");
		c->got_result = true;
		return 0;
	case COLL_MSG_WELCOME:
		if (c->got_welcome)
			break;
		if (incnn_coll_buf_append(&c->welcome, p, len))
			return incnn_coll_fail(c, -ENOMEM, false,
					       "out of memory");
		c->got_welcome = true;
		return 0;
	case COLL_MSG_GO:
		if (!c->got_welcome || c->got_go)
			break;
		c->got_go = true;
		return 0;
	default:
		break;
	}
	return incnn_coll_fail(c, -EPROTO, false,
			       "unexpected message %u from the store", type);
}

int incnn_coll_store_pump(struct incnn_comm *c)
{
	if (c->err)
		return c->err;
	for (;;) {
		ssize_t k = incnn_coll_buf_read(c->store_fd, &c->sin);
		const uint8_t *p;
		uint16_t type;
		uint32_t len;
		int ret;

		if (k == -EAGAIN)
			return 0;
		if (k <= 0)
			return incnn_coll_fail(c, -ECONNRESET, true,
					       "lost the connection to the store (rank 0 died?)%s%s",
					       k < 0 ? ": " : "",
					       k < 0 ? strerror((int)-k) : "");
		while ((ret = incnn_coll_msg_peek(&c->sin, &type, &p,
						  &len)) == 1) {
			ret = cm_store_message(c, type, p, len);
			incnn_coll_buf_consume(&c->sin, COLL_HDR_LEN + len);
			if (ret)
				return ret;
		}
		if (ret < 0)
			return incnn_coll_fail(c, -EPROTO, true,
					       "garbage from the store");
	}
}

/* Wait until *flag (set by the pump) or @deadline. */
static int cm_store_wait(struct incnn_comm *c, const bool *flag,
			 int64_t deadline, const char *what)
{
	while (!*flag) {
		struct pollfd p = { .fd = c->store_fd, .events = POLLIN };
		int ret = poll(&p, 1, coll_left_ms(deadline));

		if (ret < 0 && errno != EINTR)
			return incnn_coll_fail(c, -errno, false, "poll: %s",
					       strerror(errno));
		if (ret == 0)
			return incnn_coll_fail(c, -ETIMEDOUT, false,
					       "timed out after %d ms %s",
					       c->init_timeout_ms, what);
		ret = incnn_coll_store_pump(c);
		if (ret)
			return ret;
	}
	return 0;
}

/* how much longer a rank waits for the store's verdict than the store */
#define CM_GRACE_MS	2000

/* --- sockets ------------------------------------------------------------ */

static long cm_read_sysctl(const char *path)
{
	char buf[32];
	long v = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t k;

	if (fd < 0)
		return -1;
	k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (k > 0) {
		buf[k] = '\0';
		v = strtol(buf, NULL, 10);
	}
	return v;
}

/*
 * Large socket buffers, without ever capping them below what autotuning
 * would reach: SO_*BUFFORCE when allowed, else the plain option when the
 * size fits net.core.[wr]mem_max, else leave the kernel to autotune.
 */
static void cm_sockbuf(int fd, int size, bool snd)
{
	int force = snd ? SO_SNDBUFFORCE : SO_RCVBUFFORCE;
	int plain = snd ? SO_SNDBUF : SO_RCVBUF;
	long max;

	if (size <= 0)
		return;
	if (!setsockopt(fd, SOL_SOCKET, force, &size, sizeof(size)))
		return;
	max = cm_read_sysctl(snd ? "/proc/sys/net/core/wmem_max" :
			     "/proc/sys/net/core/rmem_max");
	if (max >= size)
		setsockopt(fd, SOL_SOCKET, plain, &size, sizeof(size));
}

static int cm_socket(struct incnn_comm *c, bool bufs)
{
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bufs) {
		cm_sockbuf(fd, c->sockbuf, true);
		cm_sockbuf(fd, c->sockbuf, false);
	}
	return fd;
}

static bool cm_retryable(int err)
{
	return err == ECONNREFUSED || err == ETIMEDOUT || err == ENETUNREACH ||
	       err == EHOSTUNREACH || err == ECONNRESET || err == EAGAIN;
}

static const char *cm_addr_str(const struct sockaddr_in *a, char *buf,
			       size_t len)
{
	char ip[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, ntohs(a->sin_port));
	return buf;
}

/* Connect to the store, retrying while rank 0 is not up yet. */
static int cm_connect_store(struct incnn_comm *c, const struct sockaddr_in *a,
			    int64_t deadline)
{
	char where[32];
	int last = 0;

	cm_addr_str(a, where, sizeof(where));
	for (;;) {
		int fd = cm_socket(c, false), err = 0;
		socklen_t elen = sizeof(err);

		if (fd < 0)
			return incnn_coll_fail(c, fd, true, "socket: %s",
					       strerror(-fd));
		if (connect(fd, (const struct sockaddr *)a, sizeof(*a)) == 0) {
			c->store_fd = fd;
			return 0;
		}
		if (errno == EINPROGRESS) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			if (poll(&p, 1, coll_left_ms(deadline)) > 0 &&
			    !getsockopt(fd, SOL_SOCKET, SO_ERROR, &err,
					&elen) && err == 0) {
				c->store_fd = fd;
				return 0;
			}
			if (!err)
				err = ETIMEDOUT;
		} else {
			err = errno;
		}
		close(fd);
		last = err;
		if (!cm_retryable(err))
			break;
		if (coll_now_ms() + 100 >= deadline)
			break;
		usleep(100000);
	}
	return incnn_coll_fail(c, last == ETIMEDOUT || cm_retryable(last) ?
			       -ETIMEDOUT : -last, true,
			       "cannot reach the store (rank 0) at %s within %d ms: %s",
			       where, c->init_timeout_ms, strerror(last));
}

/* --- data connections --------------------------------------------------- */

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
			l->fd = cm_socket(c, true);
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
						       cm_addr_str(&l->addr, where, sizeof(where)),
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
	if (!cm_retryable(l->last_err)) {
		char where[32];

		return incnn_coll_fail(c, -l->last_err, false,
				       "cannot connect to rank %d at %s: %s",
				       l->peer,
				       cm_addr_str(&l->addr, where, sizeof(where)),
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
	cm_sockbuf(l->fd, c->sockbuf, true);
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

/* --- lifecycle ---------------------------------------------------------- */

static int cm_listen_data(struct incnn_comm *c, const struct coll_cfg *k,
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
	fd = cm_socket(c, false);
	if (fd < 0)
		return incnn_coll_fail(c, fd, false, "socket: %s",
				       strerror(-fd));
	/* accepted sockets inherit it; the window scale needs it now */
	cm_sockbuf(fd, c->sockbuf, false);
	if (bind(fd, (struct sockaddr *)me, sizeof(*me)) ||
	    listen(fd, c->world + 16)) {
		int e = errno;

		close(fd);
		return incnn_coll_fail(c, -e, false,
				       "cannot listen for data connections on %s: %s",
				       cm_addr_str(me, where, sizeof(where)),
				       strerror(e));
	}
	len = sizeof(*me);
	getsockname(fd, (struct sockaddr *)me, &len);
	c->listen_fd = fd;
	return 0;
}

/* Leave: say goodbye, close, stop the store (rank 0). */
static void cm_teardown(struct incnn_comm *c)
{
	int w;

	if (c->store_fd >= 0) {
		char drain[256];

		if (!c->err) {
			incnn_coll_store_send(c, COLL_MSG_BYE, NULL, 0);
		} else if (!incnn_coll_msg_append(&c->sout, COLL_MSG_BYE, NULL, 0)) {
			incnn_coll_buf_flush(c->store_fd, &c->sout);
		}
		/* nothing unread: close with a FIN, not a reset */
		while (recv(c->store_fd, drain, sizeof(drain), MSG_DONTWAIT) > 0)
			;
		close(c->store_fd);
		c->store_fd = -1;
	}
	if (c->err) {
		cm_reset_data(c);
	} else {
		if (c->ring_send_fd >= 0)
			close(c->ring_send_fd);
		if (c->ring_recv_fd >= 0)
			close(c->ring_recv_fd);
		if (c->ps_fd >= 0)
			close(c->ps_fd);
		if (c->ps_fds)
			for (w = 0; w < c->world; w++)
				if (c->ps_fds[w] >= 0)
					close(c->ps_fds[w]);
	}
	if (c->listen_fd >= 0)
		close(c->listen_fd);
	if (c->server)
		incnn_coll_server_stop(c->server, c->timeout_ms);
	incnn_coll_q_free(&c->q);
	incnn_coll_buf_free(&c->sin);
	incnn_coll_buf_free(&c->sout);
	incnn_coll_buf_free(&c->result);
	incnn_coll_buf_free(&c->welcome);
	free(c->ps_fds);
	free(c->stage);
	free(c->bucket_stage);
	free(c);
}

void incnn_comm_destroy(struct incnn_comm *c)
{
	if (c)
		cm_teardown(c);
}

static int cm_store_listen(const struct coll_cfg *k, int *out, char *err,
			   size_t errlen)
{
	struct sockaddr_in a = k->master;
	int one = 1, fd, e;
	char where[32];

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	e = bind(fd, (struct sockaddr *)&a, sizeof(a)) ? errno : 0;
	if (e == EADDRNOTAVAIL) {
		/* MASTER_ADDR is not ours (NAT, a load balancer): any */
		a.sin_addr.s_addr = htonl(INADDR_ANY);
		e = bind(fd, (struct sockaddr *)&a, sizeof(a)) ? errno : 0;
	}
	if (!e && listen(fd, 4 * k->world + 16))
		e = errno;
	if (e) {
		close(fd);
		cm_msg(err, errlen, "rank 0 cannot serve the store on %s: %s",
		       cm_addr_str(&k->master, where, sizeof(where)),
		       strerror(e));
		return -e;
	}
	*out = fd;
	return 0;
}

int incnn_comm_create(struct incnn_comm **out,
		      const struct incnn_comm_config *cfg, char *err,
		      size_t errlen)
{
	struct cm_setup st = { 0 };
	struct incnn_comm *c;
	struct sockaddr_in me;
	struct coll_cfg k;
	struct coll_hello h = { .version = COLL_PROTO_VERSION };
	struct coll_welcome w;
	uint8_t hello[COLL_HELLO_LEN];
	unsigned int codec = 0, param = 0;
	int64_t deadline;
	int ret, r, lfd;
	char desc[64];

	if (err && errlen)
		err[0] = '\0';
	*out = NULL;
	if (!cfg) {
		cm_msg(err, errlen, "no configuration");
		return -EINVAL;
	}
	ret = incnn_coll_config_resolve(cfg, &k, err, errlen);
	if (ret) {
		if (cfg->store_fd >= 0)
			close(cfg->store_fd);
		return ret;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		if (k.store_fd >= 0)
			close(k.store_fd);
		cm_msg(err, errlen, "out of memory");
		return -ENOMEM;
	}
	c->rank = k.rank;
	c->world = k.world;
	c->tos = k.tos;
	c->chunk = k.chunk_bytes / 4;
	c->timeout_ms = k.timeout_ms;
	c->init_timeout_ms = k.init_timeout_ms;
	c->sockbuf = k.sockbuf;
	c->store_fd = c->listen_fd = -1;
	c->ring_send_fd = c->ring_recv_fd = c->ps_fd = -1;
	c->fault = cfg->fault;
	c->fault_after = cfg->fault_after;
	c->fault_stall_ms = cfg->fault_stall_ms;
	deadline = coll_now_ms() + c->init_timeout_ms;
	if (c->rank == 0) {
		c->ps_fds = malloc(sizeof(int) * (size_t)c->world);
		if (!c->ps_fds) {
			if (k.store_fd >= 0)
				close(k.store_fd);
			ret = incnn_coll_fail(c, -ENOMEM, true, "out of memory");
			goto fail;
		}
		for (r = 0; r < c->world; r++)
			c->ps_fds[r] = -1;
		lfd = k.store_fd;
		if (lfd < 0) {
			ret = cm_store_listen(&k, &lfd, c->errmsg,
					      sizeof(c->errmsg));
			if (ret) {
				c->err = ret;
				goto fail;
			}
		}
		ret = incnn_coll_server_start(&c->server, lfd, c->world,
					      c->init_timeout_ms);
		if (ret) {
			ret = incnn_coll_fail(c, ret, true, "cannot start the store: %s",
					      strerror(-ret));
			goto fail;
		}
	}

	ret = cm_connect_store(c, &k.master, deadline);
	if (ret)
		goto fail;
	ret = cm_listen_data(c, &k, &me);
	if (ret)
		goto fail;

	/* our codec, as this host's module or the configuration says */
	if (k.codec_mode == INCNN_COLL_CODEC_EMULATE) {
		codec = k.codec_id;
		param = k.codec_param;
	} else if (k.codec_mode == INCNN_COLL_CODEC_AUTO && c->tos) {
		ret = incnn_coll_rule_lookup(c->tos, &codec, &param, c->errmsg,
					     sizeof(c->errmsg));
	}

	h.rank = (uint32_t)c->rank;
	h.world = (uint32_t)c->world;
	h.codec = (uint8_t)codec;
	h.param = (uint8_t)param;
	memcpy(h.addr, &me.sin_addr.s_addr, 4);
	memcpy(h.addr + 4, &me.sin_port, 2);
	coll_hello_encode(&h, hello);
	if (ret) {
		/* join only to tell everyone, so that no rank waits for us */
		c->err = ret;
		if (!incnn_coll_msg_append(&c->sout, COLL_MSG_HELLO, hello,
					   sizeof(hello)) &&
		    !incnn_coll_msg_append(&c->sout, COLL_MSG_ABORT, c->errmsg,
					   strlen(c->errmsg)))
			incnn_coll_buf_flush(c->store_fd, &c->sout);
		goto fail;
	}
	ret = incnn_coll_store_send(c, COLL_MSG_HELLO, hello, sizeof(hello));
	if (ret)
		goto fail;
	/* rank 0's store gives up at the deadline and says who is missing;
	 * our own deadline is a fallback for a store that went away */
	ret = cm_store_wait(c, &c->got_welcome, deadline + CM_GRACE_MS,
			    "waiting for the other ranks to join the store");
	if (ret)
		goto fail;
	st.addrs = calloc((size_t)c->world, sizeof(*st.addrs));
	if (!st.addrs) {
		ret = incnn_coll_fail(c, -ENOMEM, false, "out of memory");
		goto fail;
	}
	if (coll_welcome_decode(c->welcome.p + c->welcome.off,
				c->welcome.len - c->welcome.off,
				(uint32_t)c->world, &w, st.addrs)) {
		ret = incnn_coll_fail(c, -EPROTO, false, "malformed WELCOME from the store");
		goto fail;
	}
	st.c = c;
	st.token = w.token;
	c->codec_id = w.codec;
	c->codec_param = w.param;
	c->wire_q = k.codec_mode == INCNN_COLL_CODEC_AUTO && c->tos &&
		    codec && codec == c->codec_id && param == c->codec_param;
	ret = incnn_coll_q_init(&c->q, c->codec_id, c->codec_param);
	if (ret) {
		incnn_coll_codec_desc(c->codec_id, c->codec_param, desc, sizeof(desc));
		ret = incnn_coll_fail(c, ret, false, "cannot emulate codec %s", desc);
		goto fail;
	}
	ret = cm_setup_links(c, &st, deadline);
	free(st.addrs);
	st.addrs = NULL;
	if (ret)
		goto fail;
	close(c->listen_fd);
	c->listen_fd = -1;
	ret = incnn_coll_store_send(c, COLL_MSG_READY, NULL, 0);
	if (ret)
		goto fail;
	ret = cm_store_wait(c, &c->got_go, deadline,
			    "waiting for the other ranks to set up their data connections");
	if (ret)
		goto fail;
	*out = c;
	return 0;

fail:
	free(st.addrs);
	cm_msg(err, errlen, "rank %d: %s", c->rank, c->errmsg);
	if (!c->err)
		c->err = ret ? ret : -EIO;
	ret = c->err;
	cm_teardown(c);
	return ret;
}
