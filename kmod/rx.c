// SPDX-License-Identifier: GPL-2.0
/*
 * Ingress: restore framed TCP segments before conntrack and TCP see them
 * (NF_INET_PRE_ROUTING), and handle the peer's capability option. See
 * docs/design.md.
 */
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/netfilter_ipv4.h>
#include <net/ip.h>
#include <net/route.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/netfilter/nf_conntrack.h>
#include <net/inet_hashtables.h>
#include <net/l3mdev.h>
#include <net/tcp.h>

#include "incnn.h"
#include "codec/frame.h"

static const enum incnn_stat rx_drop_stat[__INCNN_FRAME_ERR_MAX] = {
	[INCNN_FRAME_ERR_SHORT] = INCNN_STAT_RX_DROP_SHORT,
	[INCNN_FRAME_ERR_VERSION] = INCNN_STAT_RX_DROP_VERSION,
	[INCNN_FRAME_ERR_CODEC] = INCNN_STAT_RX_DROP_CODEC,
	[INCNN_FRAME_ERR_PARAM] = INCNN_STAT_RX_DROP_PARAM,
	[INCNN_FRAME_ERR_LENGTH] = INCNN_STAT_RX_DROP_LENGTH,
	[INCNN_FRAME_ERR_BODY] = INCNN_STAT_RX_DROP_BODY,
};

static bool rx_csum_ok(struct sk_buff *skb, unsigned int hook)
{
	return !nf_ip_checksum(skb, hook, skb_transport_offset(skb),
			       IPPROTO_TCP);
}

/*
 * Is there a local TCP socket for this segment: a listener for a SYN, the
 * connecting socket for a SYN-ACK? A local destination address is not
 * enough: this hook runs before conntrack, so the replies of a
 * masqueraded connection still carry this host's address although they
 * will be de-NATed and forwarded.
 */
static bool rx_local_sk(struct net *net, const struct sk_buff *skb,
			const struct nf_hook_state *state)
{
	const struct iphdr *iph = ip_hdr(skb);
	const struct tcphdr *th = tcp_hdr(skb);
	struct net_device *dev = state->in;
	bool refcounted;
	struct sock *sk;

	/* the local table of the device's VRF, if any */
	if ((dev ? inet_dev_addr_type(net, dev, iph->daddr) :
		   inet_addr_type(net, iph->daddr)) != RTN_LOCAL)
		return false;
	/*
	 * 6.1: one global table (6.2 moved it to tcp_death_row.hashinfo).
	 * No skb: a reuseport BPF program would expect skb->data at the
	 * TCP header; without one the listener is chosen by hash. The
	 * device and its VRF (sdif), as TCP looks the socket up.
	 */
	sk = __inet_lookup(net, &tcp_hashinfo, NULL, 0, iph->saddr, th->source,
			   iph->daddr, th->dest, dev ? dev->ifindex : 0,
			   dev ? l3mdev_master_ifindex_rcu(dev) : 0,
			   &refcounted);
	if (!sk)
		return false;
	if (refcounted)
		sock_gen_put(sk);
	return true;
}

/* The peer's SYN or SYN-ACK to a local socket: note and strip its offer. */
static void rx_syn(struct incnn_net *in, const struct incnn_config *cfg,
		   struct sk_buff *skb, const struct nf_hook_state *state)
{
	unsigned int hook = state->hook;
	const struct iphdr *iph;
	const struct tcphdr *th;
	struct incnn_flow *f;
	bool offered;

	if (!rx_local_sk(in->net, skb, state))
		return;
	if (!rx_csum_ok(skb, hook) || skb_ensure_writable(skb, skb->len))
		return;	/* TCP drops it */
	offered = incnn_tcpopt_strip(skb);
	if (offered) {
		if (skb->ip_summed == CHECKSUM_PARTIAL)
			skb->ip_summed = CHECKSUM_NONE;
		incnn_tcp4_fix_csum(skb);
	}

	iph = ip_hdr(skb);
	th = tcp_hdr(skb);
	f = offered ? incnn_flow_get(in, cfg, iph->daddr, iph->saddr,
				     th->dest, th->source) :
		      incnn_flow_lookup(in, iph->daddr, iph->saddr, th->dest,
					th->source);
	if (!f)
		return;
	spin_lock(&f->lock);
	if (offered)
		f->flags |= INCNN_FLOW_F_PEER_RX;
	else
		f->flags &= ~INCNN_FLOW_F_PEER_RX;
	WRITE_ONCE(f->last, jiffies);
	spin_unlock(&f->lock);
}

/* Decode a frame in place. Returns false when the skb must be dropped. */
static bool rx_frame(struct incnn_net *in, struct sk_buff *skb,
		     unsigned int hook)
{
	struct incnn_scratch *s = incnn_scratch_get();
	struct incnn_frame_info fi;
	unsigned int hlen, plen, grow, cap;
	enum incnn_simd simd;
	struct iphdr *iph;
	int err;

	if (!rx_csum_ok(skb, hook)) {
		incnn_stat_inc(in, INCNN_STAT_RX_DROP_CSUM);
		return false;
	}
	if (skb_ensure_writable(skb, skb->len)) {
		incnn_stat_inc(in, INCNN_STAT_RX_DROP_NOMEM);
		return false;
	}
	hlen = skb_transport_offset(skb) + tcp_hdr(skb)->doff * 4;
	plen = skb->len - hlen;
	/*
	 * The restored segment must still fit in an IPv4 datagram: a frame
	 * whose orig_len does not is a LENGTH error ("larger than the
	 * receiver can hold"), not a 16-bit tot_len that wraps around.
	 */
	cap = IP_MAX_MTU - (hlen - skb_network_offset(skb));
	if (cap > sizeof(s->buf))
		cap = sizeof(s->buf);

	simd = incnn_simd_begin();
	err = incnn_frame_decode_simd(simd, skb->data + hlen, plen, s->buf,
				      cap, &fi);
	incnn_simd_end(simd);
	if (err) {
		incnn_stat_inc(in, rx_drop_stat[err]);
		return false;
	}
	/* incnn_frame_decode() guarantees orig_len > plen */
	grow = fi.orig_len - plen;
	if (skb_tailroom(skb) < grow &&
	    pskb_expand_head(skb, 0, grow - skb_tailroom(skb), GFP_ATOMIC)) {
		incnn_stat_inc(in, INCNN_STAT_RX_DROP_NOMEM);
		return false;
	}
	skb_put(skb, grow);
	memcpy(skb->data + hlen, s->buf, fi.orig_len);

	iph = ip_hdr(skb);
	ipv4_change_dsfield(iph, INET_ECN_MASK, fi.dscp);
	incnn_ipv4_set_len(skb);
	if (skb->ip_summed == CHECKSUM_PARTIAL)
		skb->ip_summed = CHECKSUM_NONE;
	incnn_tcp4_fix_csum(skb);

	incnn_stat_inc(in, INCNN_STAT_RX_FRAMES);
	incnn_stat_add(in, INCNN_STAT_RX_BYTES_WIRE, plen);
	incnn_stat_add(in, INCNN_STAT_RX_BYTES_ORIG, fi.orig_len);
	return true;
}

static unsigned int rx_hook(struct sk_buff *skb,
			    const struct nf_hook_state *state)
{
	struct incnn_net *in = incnn_pernet(state->net);
	const struct incnn_config *cfg;
	const struct iphdr *iph;
	const struct tcphdr *th;
	struct incnn_flow *f;

	if (!incnn_ipv4_tcp_pull(skb))
		return NF_ACCEPT;	/* not ours, or TCP drops it */
	iph = ip_hdr(skb);
	th = tcp_hdr(skb);
	cfg = rcu_dereference(in->cfg);

	if (th->syn) {
		rx_syn(in, cfg, skb, state);
		return NF_ACCEPT;
	}
	f = incnn_flow_lookup(in, iph->daddr, iph->saddr, th->dest,
			      th->source);
	if (!f)
		return NF_ACCEPT;
	WRITE_ONCE(f->last, jiffies);
	if (th->fin || th->rst)
		incnn_flow_set(f, INCNN_FLOW_F_CLOSING);
	/* the peer acknowledges our SYN: the handshake is complete */
	if (th->ack && (READ_ONCE(f->flags) & INCNN_FLOW_F_ISN) &&
	    (s32)(ntohl(th->ack_seq) - READ_ONCE(f->isn)) > 0)
		incnn_flow_confirm(in, f);
	/* frames only come on flows we offered rx to, with the wire DSCP */
	if (ipv4_get_dsfield(iph) >> 2 != cfg->wire_dscp ||
	    !(READ_ONCE(f->flags) & INCNN_FLOW_F_OFFERED) ||
	    skb->len <= skb_transport_offset(skb) + th->doff * 4)
		return NF_ACCEPT;
	return rx_frame(in, skb, state->hook) ? NF_ACCEPT : NF_DROP;
}

/*
 * A VRF (l3mdev) runs PRE_ROUTING a second time for its own device:
 * everything was done on the first pass, for the real device.
 */
unsigned int incnn_rx_hook(void *priv, struct sk_buff *skb,
			   const struct nf_hook_state *state)
{
	unsigned int ret;

	if (state->in && netif_is_l3_master(state->in))
		return NF_ACCEPT;

	local_bh_disable();
	ret = rx_hook(skb, state);
	local_bh_enable();
	return ret;
}
