// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Socket addresses of either family: parsing what a user writes
 * (MASTER_ADDR, INCNN_DATA_ADDR), printing, and the 24-byte form the
 * store protocol carries (coll.h).
 *
 * Rules:
 *  - "a.b.c.d", "fd00::1", "[fd00::1]", "fe80::1%eth0" (a scope by
 *    interface name or number) or a host name (getaddrinfo(), first
 *    answer of either family);
 *  - an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address it
 *    maps, so that its socket is an IPv4 socket and the module sees the
 *    IPv4 flow it is;
 *  - a link-local IPv6 address needs a scope: without one it is refused
 *    with a message saying so;
 *  - on the wire, a link-local address travels without its scope (an
 *    interface index means nothing on another host); the receiver gives
 *    it the scope of its own store connection (coll_sa_adopt_scope()).
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>
#include <stdio.h>

#include "coll.h"

socklen_t coll_sa_len(const union coll_sa *a)
{
	return a->sa.sa_family == AF_INET6 ? sizeof(a->v6) : sizeof(a->v4);
}

uint16_t coll_sa_port(const union coll_sa *a)
{
	return ntohs(a->sa.sa_family == AF_INET6 ? a->v6.sin6_port :
		     a->v4.sin_port);
}

void coll_sa_set_port(union coll_sa *a, uint16_t port)
{
	if (a->sa.sa_family == AF_INET6)
		a->v6.sin6_port = htons(port);
	else
		a->v4.sin_port = htons(port);
}

bool coll_sa_is_any(const union coll_sa *a)
{
	if (a->sa.sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&a->v6.sin6_addr);
	return a->v4.sin_addr.s_addr == htonl(INADDR_ANY);
}

/* The wildcard (@loopback false) or loopback address of @a's family. */
void coll_sa_set_host(union coll_sa *a, bool loopback)
{
	if (a->sa.sa_family == AF_INET6) {
		a->v6.sin6_addr = loopback ? in6addr_loopback : in6addr_any;
		a->v6.sin6_scope_id = 0;
	} else {
		a->v4.sin_addr.s_addr = htonl(loopback ? INADDR_LOOPBACK :
					      INADDR_ANY);
	}
}

/* ::ffff:a.b.c.d -> a.b.c.d (same port) */
static void sa_unmap(union coll_sa *a)
{
	struct sockaddr_in v4 = { .sin_family = AF_INET };

	if (a->sa.sa_family != AF_INET6 ||
	    !IN6_IS_ADDR_V4MAPPED(&a->v6.sin6_addr))
		return;
	v4.sin_port = a->v6.sin6_port;
	memcpy(&v4.sin_addr, &a->v6.sin6_addr.s6_addr[12], 4);
	memset(a, 0, sizeof(*a));
	a->v4 = v4;
}

static bool sa_from_ai(const struct addrinfo *ai, union coll_sa *out)
{
	for (; ai; ai = ai->ai_next) {
		if ((ai->ai_family == AF_INET &&
		     ai->ai_addrlen == sizeof(out->v4)) ||
		    (ai->ai_family == AF_INET6 &&
		     ai->ai_addrlen == sizeof(out->v6))) {
			memcpy(out, ai->ai_addr, ai->ai_addrlen);
			return true;
		}
	}
	return false;
}

int coll_sa_parse(const char *host, uint16_t port, union coll_sa *out,
		  char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM };
	char name[NI_MAXHOST];
	struct addrinfo *res;
	size_t n = strlen(host);
	int ret;

	memset(out, 0, sizeof(*out));
	/* "[v6]" (the brackets of "[v6]:port", without the port) */
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host++;
		n -= 2;
		hints.ai_family = AF_INET6;
		hints.ai_flags = AI_NUMERICHOST;
	}
	if (n == 0 || n >= sizeof(name)) {
		incnn_coll_msg(err, errlen, "address '%.*s' is %s", (int)n,
			       host, n ? "too long" : "empty");
		return -EINVAL;
	}
	memcpy(name, host, n);
	name[n] = '\0';
	ret = getaddrinfo(name, NULL, &hints, &res);
	if (ret) {
		incnn_coll_msg(err, errlen, "cannot resolve address '%s': %s",
			       name, gai_strerror(ret));
		return -EHOSTUNREACH;
	}
	ret = sa_from_ai(res, out) ? 0 : -EAFNOSUPPORT;
	freeaddrinfo(res);
	if (ret) {
		incnn_coll_msg(err, errlen,
			       "address '%s' is neither IPv4 nor IPv6", name);
		return ret;
	}
	sa_unmap(out);
	coll_sa_set_port(out, port);
	if (out->sa.sa_family == AF_INET6 &&
	    IN6_IS_ADDR_LINKLOCAL(&out->v6.sin6_addr) &&
	    !out->v6.sin6_scope_id) {
		incnn_coll_msg(err, errlen,
			       "link-local address '%s' needs a scope: write it as %s%%IFNAME (e.g. %s%%eth0)",
			       name, name, name);
		return -EINVAL;
	}
	return 0;
}

const char *incnn_coll_addr_str(const union coll_sa *a, char *buf,
				size_t len)
{
	char ip[INET6_ADDRSTRLEN], scope[IF_NAMESIZE + 12] = "";

	if (a->sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &a->v6.sin6_addr, ip, sizeof(ip));
		if (a->v6.sin6_scope_id) {
			char ifn[IF_NAMESIZE];

			if (if_indextoname(a->v6.sin6_scope_id, ifn))
				snprintf(scope, sizeof(scope), "%%%s", ifn);
			else
				snprintf(scope, sizeof(scope), "%%%u",
					 a->v6.sin6_scope_id);
		}
		snprintf(buf, len, "[%s%s]:%u", ip, scope, coll_sa_port(a));
	} else {
		inet_ntop(AF_INET, &a->v4.sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, coll_sa_port(a));
	}
	return buf;
}

/* u16 family (4 or 6), u16 port, u32 0, 16 bytes address (IPv4: 4) */
void coll_sa_encode(const union coll_sa *a, uint8_t out[COLL_ADDR_WIRE_LEN])
{
	memset(out, 0, COLL_ADDR_WIRE_LEN);
	coll_put16(out + 2, coll_sa_port(a));
	if (a->sa.sa_family == AF_INET6) {
		coll_put16(out, 6);
		memcpy(out + 8, &a->v6.sin6_addr, 16);
	} else {
		coll_put16(out, 4);
		memcpy(out + 8, &a->v4.sin_addr, 4);
	}
}

int coll_sa_decode(const uint8_t p[COLL_ADDR_WIRE_LEN], union coll_sa *a)
{
	uint16_t fam = coll_get16(p);

	memset(a, 0, sizeof(*a));
	if (coll_get32(p + 4))
		return -EPROTO;
	if (fam == 4) {
		a->v4.sin_family = AF_INET;
		memcpy(&a->v4.sin_addr, p + 8, 4);
	} else if (fam == 6) {
		a->v6.sin6_family = AF_INET6;
		memcpy(&a->v6.sin6_addr, p + 8, 16);
	} else {
		return -EPROTO;
	}
	coll_sa_set_port(a, coll_get16(p + 2));
	return 0;
}

void coll_sa_adopt_scope(union coll_sa *a, const union coll_sa *local)
{
	if (a->sa.sa_family == AF_INET6 && local->sa.sa_family == AF_INET6 &&
	    IN6_IS_ADDR_LINKLOCAL(&a->v6.sin6_addr))
		a->v6.sin6_scope_id = local->v6.sin6_scope_id;
}
