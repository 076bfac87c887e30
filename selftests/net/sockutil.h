/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Socket helpers shared by the datapath test programs (incnn_xfer,
 * incnn_inject).
 */
#ifndef INCNN_NET_SOCKUTIL_H
#define INCNN_NET_SOCKUTIL_H

#include <errno.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

/* Send all @len bytes; -1 on error or a closed connection. */
static inline int send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

/*
 * Wait until the peer acknowledged everything sent (SIOCOUTQ == 0),
 * polling every millisecond for at most @ms; -1 with ETIMEDOUT after.
 */
static inline int wait_acked(int fd, int ms)
{
	struct timespec ts = { 0, 1000000 };
	int outq, i;

	for (i = 0; i < ms; i++) {
		if (ioctl(fd, SIOCOUTQ, &outq))
			return -1;
		if (!outq)
			return 0;
		nanosleep(&ts, NULL);
	}
	errno = ETIMEDOUT;
	return -1;
}

#endif
