/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Socket helpers shared by the datapath test programs (incnn_xfer,
 * incnn_inject).
 */
#ifndef INCNN_NET_SOCKUTIL_H
#define INCNN_NET_SOCKUTIL_H

#include <arpa/inet.h>
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <string.h>
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

/* An address of either family and a port. */
struct xaddr {
	union {
		struct sockaddr sa;
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} u;
	socklen_t len;
};

/*
 * @addr (IPv6 if it has a ':', e.g. fd00:66:1::2; NULL: IPv4's any
 * address) and @port into @x; -1 with EINVAL if it does not parse.
 */
static inline int xaddr_set(struct xaddr *x, const char *addr, int port)
{
	memset(x, 0, sizeof(*x));
	if (addr && strchr(addr, ':')) {
		x->u.v6.sin6_family = AF_INET6;
		x->u.v6.sin6_port = htons(port);
		x->len = sizeof(x->u.v6);
		if (inet_pton(AF_INET6, addr, &x->u.v6.sin6_addr) == 1)
			return 0;
	} else {
		x->u.v4.sin_family = AF_INET;
		x->u.v4.sin_port = htons(port);
		x->len = sizeof(x->u.v4);
		if (!addr || inet_pton(AF_INET, addr, &x->u.v4.sin_addr) == 1)
			return 0;
	}
	errno = EINVAL;
	return -1;
}

/* The ToS byte (IPv4) or the Traffic Class (IPv6) of the socket's family. */
static inline int set_tos(int fd, int tos)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return -1;
	if (ss.ss_family == AF_INET6)
		return setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos,
				  sizeof(tos));
	return setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
}

#endif
