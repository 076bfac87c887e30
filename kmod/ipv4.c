// SPDX-License-Identifier: GPL-2.0
/*
 * IPv4-specific helpers: header fields and checksums after the payload of
 * a TCP segment changed, and the local socket an incoming segment is
 * for. IPv6 will get its own file.
 */
#include <linux/ip.h>
#include <linux/tcp.h>
#include <net/ip.h>
#include <net/tcp.h>
#include <net/checksum.h>
#include <net/inet_hashtables.h>
#include <net/l3mdev.h>

#include "incnn.h"

/*
 * An unfragmented IPv4 TCP segment whose TCP header, options included, is
 * in the linear area? ip_hdr() and tcp_hdr() must be read again after it.
 */
bool incnn_ipv4_tcp_pull(struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);
	unsigned int thoff = skb_transport_offset(skb);

	if (iph->protocol != IPPROTO_TCP || ip_is_fragment(iph) ||
	    !pskb_may_pull(skb, thoff + sizeof(struct tcphdr)))
		return false;
	return tcp_hdr(skb)->doff >= 5 &&
	       pskb_may_pull(skb, thoff + tcp_hdr(skb)->doff * 4);
}

/* Set the IPv4 total length from skb->len and refresh the header csum. */
void incnn_ipv4_set_len(struct sk_buff *skb)
{
	struct iphdr *iph = ip_hdr(skb);

	iph->tot_len = htons(skb->len - skb_network_offset(skb));
	ip_send_check(iph);
}

/*
 * Make the TCP checksum right for the segment as it is now. A
 * CHECKSUM_PARTIAL skb (local transmit) only needs the pseudo-header
 * sum; anything else gets the full checksum computed here and is marked
 * CHECKSUM_UNNECESSARY, since its bytes were verified or produced by us.
 */
void incnn_tcp4_fix_csum(struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct tcphdr *th = tcp_hdr(skb);
	unsigned int off = skb_transport_offset(skb);
	unsigned int len = skb->len - off;

	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		th->check = ~tcp_v4_check(len, iph->saddr, iph->daddr, 0);
		return;
	}
	th->check = 0;
	th->check = tcp_v4_check(len, iph->saddr, iph->daddr,
				 skb_checksum(skb, off, len, 0));
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	skb->csum_level = 0;
}

/*
 * The local socket of the established-hash tuple of an incoming segment
 * (a full socket, a request socket or a TIME_WAIT socket), referenced,
 * or NULL. Keyed by both addresses and ports, so it never matches
 * forwarded or masqueraded traffic.
 */
struct sock *incnn_ipv4_sk_established(struct net *net,
				       const struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);
	const struct tcphdr *th = tcp_hdr(skb);
	int dif = skb->dev ? skb->dev->ifindex : 0;
	int sdif = skb->dev ? l3mdev_master_ifindex_rcu(skb->dev) : 0;

	/* 6.1: one global table (6.2 moved it to tcp_death_row.hashinfo) */
	return __inet_lookup_established(net, &tcp_hashinfo, iph->saddr,
					 th->source, iph->daddr,
					 ntohs(th->dest), dif, sdif);
}
