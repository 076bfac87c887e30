// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The store client: every rank's connection to the store (rank 0's
 * store thread, store.c), its messages in and out, and waiting for them.
 */
#include <arpa/inet.h>
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

/* --- store client ------------------------------------------------------- */

int incnn_coll_store_send(struct incnn_comm *c, uint16_t type,
			  const void *payload, size_t len)
{
	int64_t deadline = coll_now_ms() + c->timeout_ms;
	int ret;

	if (c->store.fd < 0)
		return incnn_coll_fail(c, -ENOTCONN, true,
				       "not connected to the store");
	ret = incnn_coll_msg_append(&c->store.out, type, payload, len);
	if (ret)
		return incnn_coll_fail(c, ret, false, "store message: %s",
				       strerror(-ret));
	for (;;) {
		struct pollfd p = { .fd = c->store.fd, .events = POLLOUT };

		ret = incnn_coll_buf_flush(c->store.fd, &c->store.out);
		if (ret)
			return incnn_coll_fail(c, -ECONNRESET, true,
					       "lost the connection to the store (rank 0): %s",
					       strerror(-ret));
		if (c->store.out.off == c->store.out.len)
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
		if (len < 8 || coll_get64(p) != c->store.seq || c->store.got_result)
			break;
		c->store.result.off = c->store.result.len = 0;
		if (incnn_coll_buf_append(&c->store.result, p + 8, len - 8))
			return incnn_coll_fail(c, -ENOMEM, false,
					       "out of memory");
		c->store.got_result = true;
		return 0;
	case COLL_MSG_WELCOME:
		if (c->store.got_welcome)
			break;
		if (incnn_coll_buf_append(&c->store.welcome, p, len))
			return incnn_coll_fail(c, -ENOMEM, false,
					       "out of memory");
		c->store.got_welcome = true;
		return 0;
	case COLL_MSG_GO:
		if (!c->store.got_welcome || c->store.got_go)
			break;
		c->store.got_go = true;
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
		ssize_t k = incnn_coll_buf_read(c->store.fd, &c->store.in);
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
		while ((ret = incnn_coll_msg_peek(&c->store.in, &type, &p,
						  &len)) == 1) {
			ret = cm_store_message(c, type, p, len);
			incnn_coll_buf_consume(&c->store.in, COLL_HDR_LEN + len);
			if (ret)
				return ret;
		}
		if (ret < 0)
			return incnn_coll_fail(c, -EPROTO, true,
					       "garbage from the store");
	}
}

/* Wait until *flag (set by the pump) or @deadline. */
int incnn_coll_store_wait(struct incnn_comm *c, const bool *flag,
			 int64_t deadline, const char *what)
{
	while (!*flag) {
		struct pollfd p = { .fd = c->store.fd, .events = POLLIN };
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

int incnn_coll_store_connect(struct incnn_comm *c, const union coll_sa *a,
			    int64_t deadline)
{
	char where[COLL_ADDR_STRLEN];
	int last = 0;

	incnn_coll_addr_str(a, where, sizeof(where));
	for (;;) {
		int fd = incnn_coll_socket(c, a->sa.sa_family, false), err = 0;
		socklen_t elen = sizeof(err);

		if (fd < 0)
			return incnn_coll_fail(c, fd, true, "socket: %s",
					       strerror(-fd));
		if (connect(fd, &a->sa, coll_sa_len(a)) == 0) {
			c->store.fd = fd;
			return 0;
		}
		if (errno == EINPROGRESS) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			if (poll(&p, 1, coll_left_ms(deadline)) > 0 &&
			    !getsockopt(fd, SOL_SOCKET, SO_ERROR, &err,
					&elen) && err == 0) {
				c->store.fd = fd;
				return 0;
			}
			if (!err)
				err = ETIMEDOUT;
		} else {
			err = errno;
		}
		close(fd);
		last = err;
		if (!incnn_coll_retryable(err))
			break;
		if (coll_now_ms() + 100 >= deadline)
			break;
		usleep(100000);
	}
	return incnn_coll_fail(c, last == ETIMEDOUT || incnn_coll_retryable(last) ?
			       -ETIMEDOUT : -last, true,
			       "cannot reach the store (rank 0) at %s within %d ms: %s",
			       where, c->init_timeout_ms, strerror(last));
}
