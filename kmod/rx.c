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
#include <net/addrconf.h>

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
	return incnn_l3_csum_ok(skb, hook);
}

enum rx_syn_kind {
	RX_SYN_IGNORE,		/* not for us, or not believable */
	RX_SYN_NEW,		/* a SYN to a listener: new incarnation */
	RX_SYN_ACK,		/* a SYN-ACK for our socket in SYN_SENT */
	RX_SYN_STRIP,		/* local, but no state may change */
};

/*
 * Which SYN or SYN-ACK may tell us about the peer? Only a SYN that a
 * listener will take (no other socket owns the tuple, or a TIME_WAIT one
 * whose tuple a new connection may reuse), and a SYN-ACK for our socket
 * in SYN_SENT. Anything else, such as a SYN-ACK sprayed at an
 * established connection, changes nothing.
 */
static enum rx_syn_kind rx_syn_kind(struct net *net,
				    const struct sk_buff *skb)
{
	const struct tcphdr *th = tcp_hdr(skb);
	enum rx_syn_kind kind = RX_SYN_STRIP;
	struct sock *sk = incnn_sk_established(net, skb);

	if (th->ack) {
		if (!sk)
			return RX_SYN_IGNORE;
		if (sk_fullsock(sk) && sk->sk_state == TCP_SYN_SENT)
			kind = RX_SYN_ACK;
	} else if (!sk || sk->sk_state == TCP_TIME_WAIT) {
		if (!incnn_sk_listener(net, skb))
			kind = sk ? RX_SYN_STRIP : RX_SYN_IGNORE;
		else
			kind = RX_SYN_NEW;
	}
	if (sk)
		sock_gen_put(sk);
	return kind;
}

/* A SYN to a listener: a new incarnation of the tuple. */
static void rx_syn_new(struct incnn_net *in, const struct incnn_config *cfg,
		       const struct sk_buff *skb,
		       const struct incnn_offer *offer)
{
	u32 seq = ntohl(tcp_hdr(skb)->seq);
	struct incnn_tuple t;
	struct incnn_flow *f;
	bool reset = false;

	incnn_tuple_in(skb, &t);
	f = offer->codecs ? incnn_flow_get(in, cfg, &t) :
			    incnn_flow_lookup(in, &t);
	if (!f)
		return;
	spin_lock(&f->lock);
	/* a retransmitted SYN of the handshake under way changes nothing */
	if (!(f->flags & INCNN_FLOW_F_PEER_SYN) || f->peer_isn != seq ||
	    (f->flags & INCNN_FLOW_F_ANCHORED)) {
		reset = incnn_flow_reset(f);
		f->flags |= INCNN_FLOW_F_PEER_SYN;
		f->peer_isn = seq;
		if (offer->codecs)
			f->flags |= INCNN_FLOW_F_PEER_RX;
		f->peer_codecs = offer->codecs;
		incnn_sframe_peer(f, offer);
	}
	WRITE_ONCE(f->last, jiffies);
	spin_unlock(&f->lock);
	if (reset)
		incnn_stat_inc(in, INCNN_STAT_FLOWS_RESET);
}

/* A SYN-ACK for our socket in SYN_SENT: valid if it acks our SYN. */
static void rx_syn_ack(struct incnn_net *in, const struct sk_buff *skb,
		       const struct incnn_offer *offer)
{
	const struct tcphdr *th = tcp_hdr(skb);
	struct incnn_tuple t;
	struct incnn_flow *f;

	incnn_tuple_in(skb, &t);
	f = incnn_flow_lookup(in, &t);
	if (!f)
		return;
	spin_lock(&f->lock);
	if ((f->flags & INCNN_FLOW_F_ISN) &&
	    !(f->flags & INCNN_FLOW_F_ANCHORED) &&
	    ntohl(th->ack_seq) == f->isn + 1) {
		f->flags |= INCNN_FLOW_F_PEER_SYN;
		f->peer_isn = ntohl(th->seq);
		if (offer->codecs)
			f->flags |= INCNN_FLOW_F_PEER_RX;
		else
			f->flags &= ~INCNN_FLOW_F_PEER_RX;
		f->peer_codecs = offer->codecs;
		incnn_sframe_peer(f, offer);
		WRITE_ONCE(f->last, jiffies);
	}
	spin_unlock(&f->lock);
}

/* The peer's SYN or SYN-ACK to a local socket: note and strip its offer. */
static void rx_syn(struct incnn_net *in, const struct incnn_config *cfg,
		   struct sk_buff *skb, const struct nf_hook_state *state)
{
	struct incnn_offer offer;
	enum rx_syn_kind kind;

	kind = rx_syn_kind(in->net, skb);
	if (kind == RX_SYN_IGNORE)
		return;
	if (!rx_csum_ok(skb, state->hook) || skb_ensure_writable(skb, skb->len))
		return;	/* TCP drops it */
	incnn_tcpopt_strip(skb, &offer);
	if (offer.seen) {
		if (skb->ip_summed == CHECKSUM_PARTIAL)
			skb->ip_summed = CHECKSUM_NONE;
		incnn_tcp_fix_csum(skb);
	}
	if (kind == RX_SYN_NEW)
		rx_syn_new(in, cfg, skb, &offer);
	else if (kind == RX_SYN_ACK)
		rx_syn_ack(in, skb, &offer);
}

/*
 * Would TCP take any of [seq, seq + len) from this segment
 * (tcp_sequence())? Read without the socket lock: rcv_nxt only grows, so
 * a stale value errs on the side of decoding.
 */
static bool rx_in_window(const struct sock *sk, u32 seq, u32 len)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	u32 rcv_nxt = READ_ONCE(tp->rcv_nxt);
	u32 rcv_wup = READ_ONCE(tp->rcv_wup);
	s32 win = rcv_wup + READ_ONCE(tp->rcv_wnd) - rcv_nxt;

	if (win < 0)
		win = 0;
	return !before(seq + len, rcv_wup) && !after(seq, rcv_nxt + win);
}

/*
 * A frame TCP will not take: remove the option and the payload, so that
 * TCP still answers the segment (a duplicate ACK for an old one) without
 * anything to deliver. The TCP checksum was verified.
 */
static bool rx_frame_empty(struct incnn_net *in, struct sk_buff *skb,
			   unsigned int hlen, int opt)
{
	if (skb_ensure_writable(skb, hlen) || pskb_trim(skb, hlen)) {
		incnn_stat_inc(in, INCNN_STAT_RX_DROP_NOMEM);
		return false;
	}
	memset(skb->data + opt, TCPOPT_NOP, INCNN_TCPOPT_FRAME_LEN);
	incnn_l3_set_len(skb);
	if (skb->ip_summed == CHECKSUM_PARTIAL)
		skb->ip_summed = CHECKSUM_NONE;
	incnn_tcp_fix_csum(skb);
	incnn_stat_inc(in, INCNN_STAT_RX_OUT_OF_WINDOW);
	return true;
}

/*
 * The receiver's own limits for a frame: its socket's receive window
 * (the frame is emptied, not decoded, if TCP would not take it) and the
 * MSS it advertised (no segment of the peer is longer). Returns false if
 * the frame must not be decoded (*drop: drop it, else it was emptied),
 * else the most bytes it may restore in *cap.
 */
static bool rx_frame_limits(struct incnn_net *in, struct sk_buff *skb,
			    unsigned int hlen, int opt,
			    const struct incnn_frame_info *fi,
			    unsigned int *cap, bool *drop)
{
	struct sock *sk = incnn_sk_established(in->net, skb);
	bool ok = true;

	*drop = false;
	if (!sk)
		return true;	/* TCP decides; decode as before */
	if (sk->sk_state == TCP_TIME_WAIT) {
		ok = false;
	} else if (sk_fullsock(sk)) {
		u16 mss = READ_ONCE(tcp_sk(sk)->advmss);

		/* version 2 (superframes): sframe_rx.c's bounds instead */
		if (mss && *cap > mss && fi->version == INCNN_FRAME_VERSION)
			*cap = mss;
		if (!rx_in_window(sk, ntohl(tcp_hdr(skb)->seq), fi->orig_len))
			ok = false;
	}
	sock_gen_put(sk);
	if (!ok)
		*drop = !rx_frame_empty(in, skb, hlen, opt);
	return ok;
}

/*
 * Restore a version-1 frame (checked by rx_frame(), as for
 * incnn_sframe_rx()) in place: the payload decoded into the per-CPU
 * buffer and copied back over the frame, the frame option NOPed, the
 * original DSCP, length and checksum. @cap: the most bytes the restored
 * payload may have. Returns 0 if restored, an enum incnn_frame_error to
 * drop and count by the caller, or -1 if dropped and counted here.
 */
static int rx_frame_restore(struct incnn_net *in, struct sk_buff *skb,
			    unsigned int hlen, int opt, unsigned int cap,
			    struct incnn_frame_info *fi)
{
	struct incnn_scratch *s = incnn_scratch_get();
	unsigned int plen = skb->len - hlen, grow;
	int err;

	err = incnn_frame_decode_fpu(skb->data + hlen, plen, s->buf, cap, fi);
	if (err)
		return err;
	/* incnn_frame_decode() guarantees orig_len > plen */
	grow = fi->orig_len - plen;
	if (skb_tailroom(skb) < grow &&
	    pskb_expand_head(skb, 0, grow - skb_tailroom(skb), GFP_ATOMIC)) {
		incnn_stat_inc(in, INCNN_STAT_RX_DROP_NOMEM);
		return -1;
	}
	skb_put(skb, grow);
	memcpy(skb->data + hlen, s->buf, fi->orig_len);
	memset(skb->data + opt, TCPOPT_NOP, INCNN_TCPOPT_FRAME_LEN);

	incnn_l3_set_dscp(skb, fi->dscp);
	incnn_l3_set_len(skb);
	if (skb->ip_summed == CHECKSUM_PARTIAL)
		skb->ip_summed = CHECKSUM_NONE;
	incnn_tcp_fix_csum(skb);

	incnn_stat_inc(in, INCNN_STAT_RX_FRAMES);
	incnn_stat_inc(in, INCNN_STAT_RX_FRAMES_V1);
	incnn_stat_add(in, INCNN_STAT_RX_BYTES_WIRE, plen);
	incnn_stat_add(in, INCNN_STAT_RX_BYTES_ORIG, fi->orig_len);
	return 0;
}

/*
 * Decode a frame (whose option is at @opt from skb->data) in place.
 * Returns false when the skb must be dropped.
 */
static bool rx_frame(struct incnn_net *in, struct incnn_flow *f,
		     struct sk_buff *skb, unsigned int hook, int opt)
{
	struct incnn_scratch *s = incnn_scratch_get();
	struct incnn_frame_info fi;
	unsigned int hlen, plen, cap;
	bool drop;
	int err;

	if (!rx_csum_ok(skb, hook)) {
		incnn_stat_inc(in, INCNN_STAT_RX_DROP_CSUM);
		return false;
	}
	hlen = skb_transport_offset(skb) + tcp_hdr(skb)->doff * 4;
	plen = skb->len - hlen;
	/*
	 * The restored segment must still fit in an IP datagram: a frame
	 * whose orig_len does not is a LENGTH error ("larger than the
	 * receiver can hold"), not a 16-bit length that wraps around.
	 */
	cap = incnn_l3_max_len(skb) - (hlen - skb_network_offset(skb));
	if (cap > sizeof(s->buf))
		cap = sizeof(s->buf);
	if (!plen) {
		err = INCNN_FRAME_ERR_SHORT;
		goto bad;
	}
	/* the header first: checks that cost nothing before any decoding */
	if (skb_ensure_writable(skb, hlen + min_t(unsigned int, plen,
						  INCNN_FRAME_HDR_LEN))) {
		incnn_stat_inc(in, INCNN_STAT_RX_DROP_NOMEM);
		return false;
	}
	err = incnn_frame_parse(skb->data + hlen, plen, &fi);
	if (err)
		goto bad;
	if (!(BIT(fi.codec) & READ_ONCE(f->rx_codecs))) {
		err = INCNN_FRAME_ERR_CODEC;	/* not what we offered */
		goto bad;
	}
	err = incnn_sframe_rx_check(f, &fi);	/* version 2 if offered */
	if (err)
		goto bad;
	if (!rx_frame_limits(in, skb, hlen, opt, &fi, &cap, &drop))
		return !drop;

	if (skb_ensure_writable(skb, skb->len)) {
		incnn_stat_inc(in, INCNN_STAT_RX_DROP_NOMEM);
		return false;
	}
	if (fi.version == INCNN_FRAME_VERSION_2)	/* superframes */
		err = incnn_sframe_rx(in, skb, hlen, opt, cap, &fi);
	else
		err = rx_frame_restore(in, skb, hlen, opt, cap, &fi);
	if (err > 0)
		goto bad;
	return !err;
bad:
	incnn_stat_inc(in, rx_drop_stat[err]);
	return false;
}

/*
 * A segment with the frame option on a flow we did not offer rx to, or
 * that we do not track: ours to drop if a local socket would take it
 * (never deliver a frame undecoded), else forwarded traffic, not ours.
 */
static bool rx_frame_foreign(struct incnn_net *in, struct incnn_flow *f,
			     struct sk_buff *skb, unsigned int hook)
{
	struct sock *sk;

	if (!f) {
		sk = incnn_sk_established(in->net, skb);
		if (!sk)
			return false;
		sock_gen_put(sk);
	}
	incnn_stat_inc(in, rx_csum_ok(skb, hook) ?
			   INCNN_STAT_RX_DROP_NOT_OFFERED :
			   INCNN_STAT_RX_DROP_CSUM);
	return true;
}

/*
 * A segment behind IPv6 extension headers (@thoff: its TCP header): no
 * handshake or frame of it is handled. No incnn sender frames such a
 * segment, but one with the frame option to a local address (a path that
 * added headers, a forged frame) is dropped (rx_drop_exthdr): a frame
 * never reaches TCP undecoded. Anything else passes untouched.
 */
static unsigned int rx_exthdr(struct incnn_net *in, const struct sk_buff *skb,
			      unsigned int thoff)
{
	const struct tcphdr *th = (const struct tcphdr *)(skb->data + thoff);

	if (th->syn || incnn_tcpopt_frame_at(th) < 0 ||
	    !ipv6_chk_addr(in->net, &ipv6_hdr(skb)->daddr, skb->dev, 0))
		return NF_ACCEPT;
	incnn_stat_inc(in, INCNN_STAT_RX_DROP_EXTHDR);
	return NF_DROP;
}

static unsigned int rx_hook(struct sk_buff *skb,
			    const struct nf_hook_state *state)
{
	struct incnn_net *in = incnn_pernet(state->net);
	const struct incnn_config *cfg;
	const struct tcphdr *th;
	struct incnn_tuple t;
	struct incnn_flow *f;
	unsigned int thoff;
	enum incnn_l3 l3;
	int opt;

	l3 = incnn_tcp_pull(skb, &thoff);
	if (l3 == INCNN_L3_EXTHDR)
		return rx_exthdr(in, skb, thoff);
	if (l3 != INCNN_L3_TCP)
		return NF_ACCEPT;	/* not ours, or TCP drops it */
	th = tcp_hdr(skb);
	cfg = rcu_dereference(in->cfg);

	if (th->syn) {
		rx_syn(in, cfg, skb, state);
		return NF_ACCEPT;
	}
	incnn_tuple_in(skb, &t);
	f = incnn_flow_lookup(in, &t);
	if (f) {
		WRITE_ONCE(f->last, jiffies);
		if (th->fin || th->rst)
			incnn_flow_set(f, INCNN_FLOW_F_CLOSING);
		/* the peer acknowledges our SYN: the handshake is complete */
		if (th->ack && (READ_ONCE(f->flags) & INCNN_FLOW_F_ISN) &&
		    (s32)(ntohl(th->ack_seq) - READ_ONCE(f->isn)) > 0)
			incnn_flow_confirm(in, f);
	}
	/* a frame is recognised by its option alone, never by DSCP */
	opt = incnn_tcpopt_frame_find(skb);
	if (opt < 0)
		return NF_ACCEPT;
	if (!f || !(READ_ONCE(f->flags) & INCNN_FLOW_F_OFFERED))
		return rx_frame_foreign(in, f, skb, state->hook) ?
		       NF_DROP : NF_ACCEPT;
	return rx_frame(in, f, skb, state->hook, opt) ? NF_ACCEPT : NF_DROP;
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
