// SPDX-License-Identifier: GPL-2.0
/*
 * Layer 3 for the datapath: the header fields, lengths, checksums, DSCP,
 * path MTU, GSO type and socket lookups of a TCP segment, whichever its
 * family (the version of its network header). The tx, rx, align and
 * superframe code use only these; ipv4.c and ipv6.c hold the families'
 * parts.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/inet_hashtables.h>
#include <net/inet6_hashtables.h>
#include <net/tcp.h>

#include "incnn.h"

/*
 * A TCP segment whose TCP header, options included, is in the linear
 * area, its offset in *thoff (INCNN_L3_TCP: also the transport header).
 * ip_hdr(), ipv6_hdr() and tcp_hdr() must be read again after it.
 */
enum incnn_l3 incnn_tcp_pull(struct sk_buff *skb, unsigned int *thoff)
{
	if (!pskb_may_pull(skb, skb_network_offset(skb) + sizeof(struct iphdr)))
		return INCNN_L3_NONE;
	if (incnn_l3_v6(skb))
		return incnn_ipv6_tcp_pull(skb, thoff);
	if (ip_hdr(skb)->version != 4 || !incnn_ipv4_tcp_pull(skb))
		return INCNN_L3_NONE;
	*thoff = skb_transport_offset(skb);
	return INCNN_L3_TCP;
}

/* Set the IP length field from skb->len (IPv4: and the header csum). */
void incnn_l3_set_len(struct sk_buff *skb)
{
	if (incnn_l3_v6(skb))
		incnn_ipv6_set_len(skb);
	else
		incnn_ipv4_set_len(skb);
}

/* The TCP pseudo-header sum of the segment, @len bytes from TCP on. */
static __sum16 l3_tcp_check(const struct sk_buff *skb, unsigned int len,
			    __wsum base)
{
	if (incnn_l3_v6(skb)) {
		const struct ipv6hdr *h = ipv6_hdr(skb);

		return tcp_v6_check(len, &h->saddr, &h->daddr, base);
	}
	return tcp_v4_check(len, ip_hdr(skb)->saddr, ip_hdr(skb)->daddr,
			    base);
}

/*
 * Make the TCP checksum right for the segment as it is now. A
 * CHECKSUM_PARTIAL skb (local transmit) only needs the pseudo-header
 * sum; anything else gets the full checksum computed here and is marked
 * CHECKSUM_UNNECESSARY, since its bytes were verified or produced by us.
 */
void incnn_tcp_fix_csum(struct sk_buff *skb)
{
	struct tcphdr *th = tcp_hdr(skb);
	unsigned int off = skb_transport_offset(skb);
	unsigned int len = skb->len - off;

	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		th->check = ~l3_tcp_check(skb, len, 0);
		return;
	}
	th->check = 0;
	th->check = l3_tcp_check(skb, len, skb_checksum(skb, off, len, 0));
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	skb->csum_level = 0;
}

/*
 * The checksum state of a GRO skb (tcp4_gro_complete(),
 * tcp6_gro_complete()): CHECKSUM_PARTIAL over the pseudo-header.
 */
void incnn_tcp_csum_partial(struct sk_buff *skb)
{
	unsigned int len = skb->len - skb_transport_offset(skb);

	tcp_hdr(skb)->check = ~l3_tcp_check(skb, len, 0);
	skb->ip_summed = CHECKSUM_PARTIAL;
	skb->csum_start = skb_transport_header(skb) - skb->head;
	skb->csum_offset = offsetof(struct tcphdr, check);
}

/* The DS field: IPv4's ToS byte, IPv6's Traffic Class (DSCP << 2 | ECN). */
u8 incnn_l3_dsfield(const struct sk_buff *skb)
{
	if (incnn_l3_v6(skb))
		return ipv6_get_dsfield(ipv6_hdr(skb));
	return ipv4_get_dsfield(ip_hdr(skb));
}

/* Set the DSCP part of the DS field (@dsfield: DSCP << 2), ECN kept. */
void incnn_l3_set_dscp(struct sk_buff *skb, u8 dsfield)
{
	if (incnn_l3_v6(skb))
		ipv6_change_dsfield(ipv6_hdr(skb), INET_ECN_MASK, dsfield);
	else
		ipv4_change_dsfield(ip_hdr(skb), INET_ECN_MASK, dsfield);
}

/* The longest packet the route takes, as the family's output sees it. */
unsigned int incnn_l3_mtu(struct sk_buff *skb)
{
	if (incnn_l3_v6(skb))
		return ip6_skb_dst_mtu(skb);
	return ip_skb_dst_mtu(skb->sk, skb);
}

/* The longest datagram, IP header included, the length field allows. */
unsigned int incnn_l3_max_len(const struct sk_buff *skb)
{
	if (incnn_l3_v6(skb))
		return IPV6_MAXPLEN + sizeof(struct ipv6hdr);
	return IP_MAX_MTU;
}

unsigned int incnn_l3_gso_type(const struct sk_buff *skb)
{
	return incnn_l3_v6(skb) ? SKB_GSO_TCPV6 : SKB_GSO_TCPV4;
}

/* The tuple, local -> peer, of an outgoing (@in: incoming) segment. */
static void l3_tuple(const struct sk_buff *skb, struct incnn_tuple *t,
		     bool in)
{
	const struct tcphdr *th = tcp_hdr(skb);
	struct in6_addr *s = in ? &t->daddr : &t->saddr;
	struct in6_addr *d = in ? &t->saddr : &t->daddr;

	if (incnn_l3_v6(skb)) {
		*s = ipv6_hdr(skb)->saddr;
		*d = ipv6_hdr(skb)->daddr;
		t->family = AF_INET6;
	} else {
		ipv6_addr_set(s, ip_hdr(skb)->saddr, 0, 0, 0);
		ipv6_addr_set(d, ip_hdr(skb)->daddr, 0, 0, 0);
		t->family = AF_INET;
	}
	t->sport = in ? th->dest : th->source;
	t->dport = in ? th->source : th->dest;
}

void incnn_tuple_out(const struct sk_buff *skb, struct incnn_tuple *t)
{
	l3_tuple(skb, t, false);
}

void incnn_tuple_in(const struct sk_buff *skb, struct incnn_tuple *t)
{
	l3_tuple(skb, t, true);
}

/*
 * The local socket of the established-hash tuple of an incoming segment
 * (a full socket, a request socket or a TIME_WAIT socket), referenced,
 * or NULL. Keyed by both addresses and ports, so it never matches
 * forwarded or masqueraded traffic.
 */
struct sock *incnn_sk_established(struct net *net, const struct sk_buff *skb)
{
	if (incnn_l3_v6(skb))
		return incnn_ipv6_sk_established(net, skb);
	return incnn_ipv4_sk_established(net, skb);
}

/*
 * Is there a listener for this SYN to a local address? A local
 * destination address is checked first: a wildcard listener must not
 * claim forwarded segments.
 */
bool incnn_sk_listener(struct net *net, const struct sk_buff *skb)
{
	if (incnn_l3_v6(skb))
		return incnn_ipv6_sk_listener(net, skb);
	return incnn_ipv4_sk_listener(net, skb);
}

/*
 * The local socket that owns a flow's tuple, bound to device @dif (its
 * sk_bound_dev_if, or 0), referenced, or NULL.
 */
struct sock *incnn_tuple_sk(struct net *net, const struct incnn_tuple *t,
			    int dif)
{
	struct sock *sk;

	rcu_read_lock();
	/* 6.1: one global table (6.2 moved it to tcp_death_row.hashinfo) */
	if (t->family == AF_INET6)
		sk = __inet6_lookup_established(net, &tcp_hashinfo, &t->daddr,
						t->dport, &t->saddr,
						ntohs(t->sport), dif, dif);
	else
		sk = __inet_lookup_established(net, &tcp_hashinfo,
					       t->daddr.s6_addr32[0],
					       t->dport,
					       t->saddr.s6_addr32[0],
					       ntohs(t->sport), dif, dif);
	rcu_read_unlock();
	return sk;
}

/* Is the TCP checksum of an incoming segment right (nf_checksum())? */
bool incnn_l3_csum_ok(struct sk_buff *skb, unsigned int hook)
{
	return !nf_checksum(skb, hook, skb_transport_offset(skb), IPPROTO_TCP,
			    incnn_l3_v6(skb) ? NFPROTO_IPV6 : NFPROTO_IPV4);
}

/* The hook entries of the netns at the hook now running. */
const struct nf_hook_entries *
incnn_l3_hooks(const struct nf_hook_state *state)
{
	struct net *net = state->net;

	if (state->pf == NFPROTO_IPV6)
		return rcu_dereference(net->nf.hooks_ipv6[state->hook]);
	return rcu_dereference(net->nf.hooks_ipv4[state->hook]);
}
