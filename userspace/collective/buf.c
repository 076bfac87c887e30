// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Byte buffers and the store protocol's message framing, shared by the
 * store client (store_client.c) and the store (store.c).
 */
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"

int incnn_coll_buf_reserve(struct coll_buf *b, size_t extra)
{
	size_t need, cap;
	uint8_t *p;

	if (b->off && b->off == b->len)
		b->off = b->len = 0;
	if (extra > SIZE_MAX / 2 - b->len)
		return -ENOMEM;
	need = b->len + extra;
	if (need <= b->cap)
		return 0;
	if (b->off) {		/* compact first */
		memmove(b->p, b->p + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
		need = b->len + extra;
		if (need <= b->cap)
			return 0;
	}
	cap = b->cap ? b->cap : 4096;
	while (cap < need)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

int incnn_coll_buf_append(struct coll_buf *b, const void *d, size_t n)
{
	int err = incnn_coll_buf_reserve(b, n);

	if (err)
		return err;
	if (n)
		memcpy(b->p + b->len, d, n);
	b->len += n;
	return 0;
}

void incnn_coll_buf_consume(struct coll_buf *b, size_t n)
{
	b->off += n;
	if (b->off >= b->len)
		b->off = b->len = 0;
}

void incnn_coll_buf_free(struct coll_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

int incnn_coll_msg_append(struct coll_buf *b, uint16_t type,
			  const void *payload, size_t len)
{
	uint8_t hdr[COLL_HDR_LEN];
	int err;

	if (len > COLL_MAX_PAYLOAD)
		return -EMSGSIZE;
	coll_put16(hdr, type);
	coll_put16(hdr + 2, 0);
	coll_put32(hdr + 4, (uint32_t)len);
	err = incnn_coll_buf_reserve(b, sizeof(hdr) + len);
	if (err)
		return err;
	incnn_coll_buf_append(b, hdr, sizeof(hdr));
	incnn_coll_buf_append(b, payload, len);
	return 0;
}

int incnn_coll_msg_peek(const struct coll_buf *b, uint16_t *type,
			const uint8_t **payload, uint32_t *plen)
{
	size_t avail = b->len - b->off;
	const uint8_t *h = b->p + b->off;
	uint32_t len;

	if (avail < COLL_HDR_LEN)
		return 0;
	len = coll_get32(h + 4);
	if (coll_get16(h + 2) != 0 || len > COLL_MAX_PAYLOAD)
		return -EPROTO;
	if (avail - COLL_HDR_LEN < len)
		return 0;
	*type = coll_get16(h);
	*payload = h + COLL_HDR_LEN;
	*plen = len;
	return 1;
}

ssize_t incnn_coll_buf_read(int fd, struct coll_buf *b)
{
	ssize_t k;
	int err = incnn_coll_buf_reserve(b, 16384);

	if (err)
		return err;
	do
		k = recv(fd, b->p + b->len, b->cap - b->len, MSG_DONTWAIT);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	b->len += (size_t)k;
	return k;
}

int incnn_coll_buf_flush(int fd, struct coll_buf *b)
{
	while (b->off < b->len) {
		ssize_t k = send(fd, b->p + b->off, b->len - b->off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -errno;
		}
		incnn_coll_buf_consume(b, (size_t)k);
	}
	return 0;
}
