// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Socket helpers of the communicator: buffers, options, addresses.
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
void incnn_coll_sockbuf(int fd, int size, bool snd)
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

int incnn_coll_socket(struct incnn_comm *c, int family, bool bufs)
{
	int one = 1;
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bufs) {
		incnn_coll_sockbuf(fd, c->sockbuf, true);
		incnn_coll_sockbuf(fd, c->sockbuf, false);
	}
	return fd;
}

bool incnn_coll_retryable(int err)
{
	return err == ECONNREFUSED || err == ETIMEDOUT || err == ENETUNREACH ||
	       err == EHOSTUNREACH || err == ECONNRESET || err == EAGAIN;
}

/*
 * IPv6 sockets carry the DSCP in the Traffic Class: the module's rules
 * match both the same way. The family is the socket's own.
 */
int incnn_coll_set_tos(int fd, int tos)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int ret;

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return -errno;
	if (ss.ss_family == AF_INET6)
		ret = setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos,
				 sizeof(tos));
	else
		ret = setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
	return ret ? -errno : 0;
}

/* Connect to the store, retrying while rank 0 is not up yet. */
