// SPDX-License-Identifier: GPL-2.0
/*
 * IPv6's part of l3.c: the TCP header behind the IPv6 header, the
 * payload length, and the local socket an incoming segment is for.
 */
#include <linux/ipv6.h>
#include <linux/netfilter_ipv6.h>
#include <linux/tcp.h>
#include <net/ipv6.h>
#include <net/addrconf.h>
#include <net/inet6_hashtables.h>
#include <net/l3mdev.h>
#include <net/netfilter/ipv6/nf_defrag_ipv6.h>
#include <net/tcp.h>

#include "incnn.h"

/*
 * incnn_tcp_pull() of an IPv6 packet. TCP right after the IPv6 header
 * becomes the transport header. Behind extension headers (after
 * nf_defrag_ipv6 a reassembled packet has no fragment header left) it is
 * only found, with ipv6_skip_exthdr(), and the transport header is left
 * alone: IPv6 input still has to walk those headers. Nothing is read past
 * skb->len (the payload length, as ip6_rcv_core() trimmed it to).
 */
enum incnn_l3 incnn_ipv6_tcp_pull(struct sk_buff *skb, unsigned int *thoff)
{
	unsigned int noff = skb_network_offset(skb);
	enum incnn_l3 kind = INCNN_L3_TCP;
	const struct tcphdr *th;
	__be16 frag_off = 0;
	u8 nexthdr;
	int off;

	if (!pskb_may_pull(skb, noff + sizeof(struct ipv6hdr)))
		return INCNN_L3_NONE;
	nexthdr = ipv6_hdr(skb)->nexthdr;
	off = noff + sizeof(struct ipv6hdr);
	if (nexthdr != IPPROTO_TCP) {
		off = ipv6_skip_exthdr(skb, off, &nexthdr, &frag_off);
		if (off < 0 || nexthdr != IPPROTO_TCP ||
		    (frag_off & htons(IP6_OFFSET)))
			return INCNN_L3_NONE;
		kind = INCNN_L3_EXTHDR;
	}
	if (!pskb_may_pull(skb, off + sizeof(struct tcphdr)))
		return INCNN_L3_NONE;
	th = (const struct tcphdr *)(skb->data + off);
	if (th->doff < 5 || !pskb_may_pull(skb, off + th->doff * 4))
		return INCNN_L3_NONE;
	if (kind == INCNN_L3_TCP)
		skb_set_transport_header(skb, off);
	*thoff = off;
	return kind;
}

/* Set the payload length from skb->len (no extension headers). */
void incnn_ipv6_set_len(struct sk_buff *skb)
{
	ipv6_hdr(skb)->payload_len = htons(skb->len - skb_network_offset(skb) -
					   sizeof(struct ipv6hdr));
}

/* incnn_sk_established() of an IPv6 segment */
struct sock *incnn_ipv6_sk_established(struct net *net,
				       const struct sk_buff *skb)
{
	const struct ipv6hdr *h = ipv6_hdr(skb);
	const struct tcphdr *th = tcp_hdr(skb);
	int dif = skb->dev ? skb->dev->ifindex : 0;
	int sdif = skb->dev ? l3mdev_master_ifindex_rcu(skb->dev) : 0;

	/* 6.1: one global table (6.2 moved it to tcp_death_row.hashinfo) */
	return __inet6_lookup_established(net, &tcp_hashinfo, &h->saddr,
					  th->source, &h->daddr,
					  ntohs(th->dest), dif, sdif);
}

/*
 * incnn_sk_listener() of an IPv6 SYN: its destination an address of
 * this host (a link-local one on the device it came in on; the device's
 * VRF, if any), then the listener TCP would pick by hash.
 */
bool incnn_ipv6_sk_listener(struct net *net, const struct sk_buff *skb)
{
	const struct ipv6hdr *h = ipv6_hdr(skb);
	const struct tcphdr *th = tcp_hdr(skb);
	int dif = skb->dev ? skb->dev->ifindex : 0;
	int sdif = skb->dev ? l3mdev_master_ifindex_rcu(skb->dev) : 0;

	if (!ipv6_chk_addr(net, &h->daddr, skb->dev, 0))
		return false;
	/* listeners are not referenced (SOCK_RCU_FREE) */
	return inet6_lookup_listener(net, &tcp_hashinfo, NULL, 0, &h->saddr,
				     th->source, &h->daddr, ntohs(th->dest),
				     dif, sdif);
}

/*
 * The same hooks as IPv4's (netns.c), at the same points and
 * priorities: NF_IP6_PRI_FIRST is NF_IP_PRI_FIRST, and the ingress hook
 * runs after IPv6 defrag (NF_IP6_PRI_CONNTRACK_DEFRAG, -400), before the
 * raw table (-300) and conntrack (-200).
 */
static const struct nf_hook_ops incnn_nf6_ops[] = {
	{
		.hook = incnn_tx_align_hook,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_LOCAL_OUT,
		.priority = NF_IP6_PRI_FIRST,
	},
	{
		.hook = incnn_tx_hook,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_POST_ROUTING,
		.priority = INCNN_PRI_TX,
	},
	{
		.hook = incnn_rx_hook,
		.pf = NFPROTO_IPV6,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = NF_IP6_PRI_RAW - 10,
	},
};

/*
 * IPv6 in a new netns: fragments reassembled before the ingress hook
 * (nf_defrag_ipv6, conntrack or not, as for IPv4), then the hooks. On a
 * kernel booted with ipv6.disable=1 there is no IPv6 traffic to see: the
 * module then works on IPv4 alone (said once at load, main.c).
 */
int incnn_ipv6_net_init(struct net *net)
{
	int err;

	if (!ipv6_mod_enabled())
		return 0;
	err = nf_defrag_ipv6_enable(net);
	if (err)
		return err;
	err = nf_register_net_hooks(net, incnn_nf6_ops,
				    ARRAY_SIZE(incnn_nf6_ops));
	if (err)
		nf_defrag_ipv6_disable(net);
	return err;
}

/* pre_exit, as for IPv4 (netns.c) */
void incnn_ipv6_net_exit(struct net *net)
{
	if (!ipv6_mod_enabled())
		return;
	nf_unregister_net_hooks(net, incnn_nf6_ops, ARRAY_SIZE(incnn_nf6_ops));
	nf_defrag_ipv6_disable(net);
}
