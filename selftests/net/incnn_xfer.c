// SPDX-License-Identifier: GPL-2.0
/*
 * incnn_xfer: send a file over one TCP connection with a chosen ToS, or
 * receive one, for the datapath tests.
 *
 *   incnn_xfer recv [-b ADDR] -p PORT [-T TOS] OUT
 *	accept one connection, write everything received to OUT
 *	(-T: mark the accepted socket with TOS before reading)
 *   incnn_xfer send -c ADDR -p PORT [-T TOS] [-P N] [-m before|after] IN
 *	send IN. -T marks the socket; -m before (default) sets the ToS
 *	before connect, -m after connects marked (the SYN offers rx, see
 *	docs/wire-format.md), clears the ToS, sends the first N bytes (-P)
 *	unmarked, waits until the peer acknowledged them (SIOCOUTQ == 0)
 *	and only then sets the ToS again (what the collective library does).
 *   incnn_xfer serve [-b ADDR] -p PORT [-T TOS] [-n COUNT] IN
 *	accept COUNT connections (default 1) one after the other and send
 *	IN on each (-T: marked), then close it after the peer did: the
 *	server side, not the client, keeps the tuple in TIME_WAIT
 *   incnn_xfer fetch -c ADDR -p PORT -B LPORT [-T TOS] OUT
 *	connect from local port LPORT (SO_REUSEADDR) and write everything
 *	received to OUT (-T: mark the socket before connect)
 *
 * ADDR is an IPv4 or an IPv6 address (fd00:66:1::2): the socket is of its
 * family; recv and serve without -b listen on IPv4's any address. send -E
 * hbh|srh|both sends every segment, the SYN too, behind IPv6 extension
 * headers (sticky options, set before connect): a hop-by-hop header with
 * a PadN option (IPV6_HOPOPTS), a segment routing header whose only
 * segment is ADDR, segments left 0 (IPV6_RTHDR; the receiver needs
 * net.ipv6.conf.*.seg6_enabled=1), or both. send -M N: IPV6_MTU N (the
 * most bytes of a fragment, on a route that fragments every packet).
 *
 * Common options: -I IFNAME binds the socket(s) to a device
 * (SO_BINDTODEVICE, e.g. a VRF); -K KEY signs the connection with TCP-MD5
 * (RFC 2385) with KEY for any peer address (send, recv). send -Z N sends N zero bytes instead
 * of a file (IN is then "-"); recv -Z 1 checks instead of storing: OUT gets
 * one line "bytes N nonzero M" (M bytes that were not zero).
 *
 * Exit status 0 on success, 1 on a failure (one line on stderr).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sockutil.h"

static int fail(const char *what)
{
	fprintf(stderr, "incnn_xfer: %s: %s\n", what, strerror(errno));
	return 1;
}

struct xopts {
	const char *ifname;	/* -I */
	long long zeros;	/* -Z: send: bytes; recv: > 0 to check */
	const char *md5key;	/* -K */
	const char *exthdr;	/* -E */
	int frag_mtu;		/* -M */
};

static int xaddr_parse(const char *addr, int port, struct xaddr *x)
{
	if (xaddr_set(x, addr, port))
		return fail(addr);
	return 0;
}

/* -E: the IPv6 extension headers every segment carries (see above) */
static int set_exthdr(int fd, const char *which, const struct xaddr *x)
{
	/* next header, length 0 (8 bytes), PadN of 4 bytes */
	static const unsigned char hbh[8] = { 0, 0, 1, 4 };
	/* next header, length 2, type 4, segments left 0, last entry 0 */
	unsigned char srh[24] = { 0, 2, 4, 0, 0 };
	int both = !strcmp(which, "both");

	if (x->u.sa.sa_family != AF_INET6) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	if ((both || !strcmp(which, "hbh")) &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_HOPOPTS, hbh, sizeof(hbh)))
		return -1;
	memcpy(srh + 8, &x->u.v6.sin6_addr, 16);
	if ((both || !strcmp(which, "srh")) &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_RTHDR, srh, sizeof(srh)))
		return -1;
	return 0;
}

/* -I and -K: the device to bind to, the TCP-MD5 key for any peer */
static int bind_dev(int fd, const struct xopts *o, int family)
{
	struct tcp_md5sig md5 = { .tcpm_flags = TCP_MD5SIG_FLAG_PREFIX };
	size_t klen;

	if (o->ifname && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE,
				    o->ifname, strlen(o->ifname)))
		return -1;
	if (!o->md5key)
		return 0;
	klen = strlen(o->md5key);
	if (klen > TCP_MD5SIG_MAXKEYLEN) {
		errno = EINVAL;
		return -1;
	}
	/* prefix length 0: the key is for every peer of the family */
	md5.tcpm_addr.ss_family = family;
	md5.tcpm_keylen = klen;
	memcpy(md5.tcpm_key, o->md5key, klen);
	return setsockopt(fd, IPPROTO_TCP, TCP_MD5SIG_EXT, &md5, sizeof(md5));
}

/* -Z: N zero bytes, 1 MiB at a time */
static int send_zeros(int fd, long long n)
{
	static char z[1 << 20];
	long long len;

	while (n > 0) {
		len = n < (long long)sizeof(z) ? n : (long long)sizeof(z);
		if (send_all(fd, z, len))
			return -1;
		n -= len;
	}
	return 0;
}

static int do_send(const char *addr, int port, int tos, long pre,
		   int after, const char *in, const struct xopts *o)
{
	struct stat st = { .st_size = 0 };
	struct xaddr sa;
	char *buf;
	int fd, f;

	if (o->zeros) {
		buf = malloc(1);
		if (!buf)
			return fail("malloc");
		after = 0;
	} else {
		f = open(in, O_RDONLY);
		if (f < 0 || fstat(f, &st))
			return fail(in);
		buf = malloc(st.st_size + 1);
		if (!buf || read(f, buf, st.st_size) != st.st_size)
			return fail(in);
		close(f);
	}
	if (pre > st.st_size)
		pre = st.st_size;

	if (xaddr_parse(addr, port, &sa))
		return 1;
	fd = socket(sa.u.sa.sa_family, SOCK_STREAM, 0);
	if (fd < 0)
		return fail("socket");
	if (bind_dev(fd, o, sa.u.sa.sa_family))
		return fail("SO_BINDTODEVICE/TCP_MD5SIG");
	if (o->exthdr && set_exthdr(fd, o->exthdr, &sa))
		return fail("IPV6_HOPOPTS/IPV6_RTHDR");
	if (o->frag_mtu && setsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &o->frag_mtu,
				      sizeof(o->frag_mtu)))
		return fail("IPV6_MTU");
	if (tos >= 0 && set_tos(fd, tos))
		return fail("IP_TOS");
	if (connect(fd, &sa.u.sa, sa.len))
		return fail("connect");
	if (after) {
		/* the SYN was marked: it offered rx; the preamble is not */
		if (tos >= 0 && set_tos(fd, 0))
			return fail("IP_TOS");
		if (send_all(fd, buf, pre) || wait_acked(fd, 10000))
			return fail("preamble");
		if (tos >= 0 && set_tos(fd, tos))
			return fail("IP_TOS");
	} else {
		pre = 0;
	}
	if (o->zeros ? send_zeros(fd, o->zeros) :
		       send_all(fd, buf + pre, st.st_size - pre))
		return fail("send");
	if (shutdown(fd, SHUT_WR))
		return fail("shutdown");
	/* wait for the receiver to close: everything was delivered */
	while (read(fd, buf, 1) > 0)
		;
	close(fd);
	free(buf);
	return 0;
}

/* recv -Z: count the bytes and those that are not zero */
static int check_zeros(int fd, const char *out)
{
	static unsigned char buf[1 << 16];
	long long bytes = 0, nonzero = 0;
	ssize_t n, i;
	FILE *f;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		bytes += n;
		if (buf[0] == 0 && !memcmp(buf, buf + 1, n - 1))
			continue;
		for (i = 0; i < n; i++)
			nonzero += buf[i] != 0;
	}
	if (n < 0)
		return fail("read");
	f = fopen(out, "w");
	if (!f || fprintf(f, "bytes %lld nonzero %lld\n", bytes, nonzero) < 0 ||
	    fclose(f))
		return fail(out);
	return 0;
}

static int do_recv(const char *addr, int port, int tos, const char *out,
		   const struct xopts *o)
{
	static char buf[1 << 16];
	int one = 1, lfd, fd, f;
	struct xaddr sa;
	ssize_t n;

	if (xaddr_parse(addr, port, &sa))
		return 1;
	lfd = socket(sa.u.sa.sa_family, SOCK_STREAM, 0);
	if (lfd < 0 || bind_dev(lfd, o, sa.u.sa.sa_family) ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, &sa.u.sa, sa.len) || listen(lfd, 1))
		return fail("listen");
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		return fail("accept");
	if (tos >= 0 && set_tos(fd, tos))
		return fail("IP_TOS");
	if (o->zeros) {
		if (check_zeros(fd, out))
			return 1;
		close(fd);
		close(lfd);
		return 0;
	}
	f = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (f < 0)
		return fail(out);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(f, buf, n) != n)
			return fail(out);
	if (n < 0)
		return fail("read");
	if (close(f))
		return fail(out);
	close(fd);
	close(lfd);
	return 0;
}

/* Read everything from @fd into the file @out. */
static int read_to(int fd, const char *out)
{
	static char buf[1 << 16];
	ssize_t n;
	int f;

	f = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (f < 0)
		return fail(out);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(f, buf, n) != n)
			return fail(out);
	if (n < 0)
		return fail("read");
	if (close(f))
		return fail(out);
	return 0;
}

static int do_serve(const char *addr, int port, int tos, long count,
		    const char *in)
{
	int one = 1, lfd, fd, f;
	struct xaddr sa;
	struct stat st;
	char *buf;
	long i;

	f = open(in, O_RDONLY);
	if (f < 0 || fstat(f, &st))
		return fail(in);
	buf = malloc(st.st_size + 1);
	if (!buf || read(f, buf, st.st_size) != st.st_size)
		return fail(in);
	close(f);
	if (xaddr_parse(addr, port, &sa))
		return 1;
	lfd = socket(sa.u.sa.sa_family, SOCK_STREAM, 0);
	if (lfd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, &sa.u.sa, sa.len) || listen(lfd, 1))
		return fail("listen");
	for (i = 0; i < count; i++) {
		fd = accept(lfd, NULL, NULL);
		if (fd < 0)
			return fail("accept");
		if (tos >= 0 && set_tos(fd, tos))
			return fail("IP_TOS");
		if (send_all(fd, buf, st.st_size) || shutdown(fd, SHUT_WR))
			return fail("send");
		while (read(fd, buf, 1) > 0)
			;
		close(fd);
	}
	close(lfd);
	free(buf);
	return 0;
}

static int do_fetch(const char *addr, int port, int lport, int tos,
		    const char *out)
{
	struct xaddr sa, la;
	int one = 1, fd;

	if (xaddr_parse(addr, port, &sa))
		return 1;
	/* the any address of the peer's family */
	if (xaddr_parse(sa.u.sa.sa_family == AF_INET6 ? "::" : NULL, lport,
			&la))
		return 1;
	fd = socket(sa.u.sa.sa_family, SOCK_STREAM, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, &la.u.sa, la.len))
		return fail("bind");
	if (tos >= 0 && set_tos(fd, tos))
		return fail("IP_TOS");
	if (connect(fd, &sa.u.sa, sa.len))
		return fail("connect");
	if (read_to(fd, out))
		return 1;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct xopts o = { .ifname = NULL };
	const char *addr = NULL;
	int port = 0, tos = -1, after = 0, lport = 0, opt;
	long pre = 0, count = 1;

	if (argc < 2) {
		fprintf(stderr, "usage: incnn_xfer send|recv ...\n");
		return 2;
	}
	optind = 2;
	while ((opt = getopt(argc, argv, "b:c:p:T:P:m:n:B:I:Z:K:E:M:")) != -1) {
		switch (opt) {
		case 'b':
		case 'c':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'T':
			tos = strtol(optarg, NULL, 0);
			break;
		case 'P':
			pre = atol(optarg);
			break;
		case 'm':
			after = !strcmp(optarg, "after");
			break;
		case 'n':
			count = atol(optarg);
			break;
		case 'B':
			lport = atoi(optarg);
			break;
		case 'I':
			o.ifname = optarg;
			break;
		case 'Z':
			o.zeros = atoll(optarg);
			break;
		case 'K':
			o.md5key = optarg;
			break;
		case 'E':
			o.exthdr = optarg;
			break;
		case 'M':
			o.frag_mtu = atoi(optarg);
			break;
		default:
			return 2;
		}
	}
	if (optind != argc - 1 || port <= 0) {
		fprintf(stderr, "incnn_xfer: bad arguments\n");
		return 2;
	}
	if (!strcmp(argv[1], "send") && addr)
		return do_send(addr, port, tos, pre, after, argv[optind],
			       &o);
	if (!strcmp(argv[1], "recv"))
		return do_recv(addr, port, tos, argv[optind], &o);
	if (!strcmp(argv[1], "serve"))
		return do_serve(addr, port, tos, count, argv[optind]);
	if (!strcmp(argv[1], "fetch") && addr && lport > 0)
		return do_fetch(addr, port, lport, tos, argv[optind]);
	fprintf(stderr, "incnn_xfer: bad arguments\n");
	return 2;
}
