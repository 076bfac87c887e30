// SPDX-License-Identifier: GPL-2.0
/*
 * IPv4's part of l3.c: header fields and checksums after the payload of
 * a TCP segment changed, and the local socket an incoming segment is
 * for. ipv6.c holds IPv6's.
 */
#include <linux/ip.h>
#include <linux/tcp.h>
#include <net/ip.h>
#include <net/route.h>
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

/* incnn_sk_established() of an IPv4 segment */
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

/* incnn_sk_listener() of an IPv4 SYN */
bool incnn_ipv4_sk_listener(struct net *net, const struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);
	const struct tcphdr *th = tcp_hdr(skb);
	int dif = skb->dev ? skb->dev->ifindex : 0;
	int sdif = skb->dev ? l3mdev_master_ifindex_rcu(skb->dev) : 0;
	struct sock *sk;

	/* the local table of the device's VRF, if any */
	if ((skb->dev ? inet_dev_addr_type(net, skb->dev, iph->daddr) :
		   inet_addr_type(net, iph->daddr)) != RTN_LOCAL)
		return false;
	/*
	 * No skb: a reuseport BPF program would expect skb->data at the
	 * TCP header; without one the listener is chosen by hash. The
	 * device and its VRF (sdif), as TCP looks the socket up.
	 */
	sk = __inet_lookup_listener(net, &tcp_hashinfo, NULL, 0, iph->saddr,
				    th->source, iph->daddr, ntohs(th->dest),
				    dif, sdif);
	return sk;	/* listeners are not referenced (SOCK_RCU_FREE) */
}
