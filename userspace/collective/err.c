// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Errors, at the bottom of the collective: every file reports through
 * these and they call only the framing below them (buf.c), so that no
 * file has to call back up into the communicator to fail. One formatter
 * (incnn_coll_vmsg) writes every message.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"

void incnn_coll_vmsg(char *buf, size_t len, const char *fmt, va_list ap)
{
	if (buf && len)
		vsnprintf(buf, len, fmt, ap);
}

void incnn_coll_msg(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	incnn_coll_vmsg(buf, len, fmt, ap);
	va_end(ap);
}

int incnn_coll_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	incnn_coll_vmsg(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

void incnn_coll_close_rst(int *fd)
{
	struct linger lin = { .l_onoff = 1, .l_linger = 0 };

	if (*fd < 0)
		return;
	setsockopt(*fd, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
	close(*fd);
	*fd = -1;
}

void incnn_coll_reset_data(struct incnn_comm *c)
{
	int w;

	incnn_coll_close_rst(&c->link.ring_send_fd);
	incnn_coll_close_rst(&c->link.ring_recv_fd);
	incnn_coll_close_rst(&c->link.ps_fd);
	if (c->link.ps_fds)
		for (w = 0; w < c->world; w++)
			incnn_coll_close_rst(&c->link.ps_fds[w]);
}

int incnn_coll_fail(struct incnn_comm *c, int err, bool from_store,
		    const char *fmt, ...)
{
	va_list ap;

	if (c->err)
		return c->err;
	c->err = err < 0 ? err : -EIO;
	va_start(ap, fmt);
	incnn_coll_vmsg(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
	if (!from_store && c->store.fd >= 0) {
		/* best effort, never waits: the store relays it to everyone */
		if (!incnn_coll_msg_append(&c->store.out, COLL_MSG_ABORT, c->errmsg,
					   strlen(c->errmsg)))
			incnn_coll_buf_flush(c->store.fd, &c->store.out);
	}
	incnn_coll_reset_data(c);
	return c->err;
}
