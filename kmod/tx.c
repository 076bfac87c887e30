// SPDX-License-Identifier: GPL-2.0
/*
 * Egress: compress the payload of marked TCP segments of locally
 * generated flows (NF_INET_POST_ROUTING). See docs/design.md.
 */
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/netdevice.h>
#include <linux/netfilter_ipv4.h>
#include <net/ip.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/tcp.h>

#include "incnn.h"
#include "codec/frame.h"

/*
 * The device the local socket is bound to, as its lookup needs it: a
 * full socket's sk_bound_dev_if, or what a request socket's child will
 * get (SO_BINDTODEVICE on the listener, or its VRF).
 */
static int tx_bound_if(const struct sock *sk)
{
	if (sk_fullsock(sk))
		return READ_ONCE(sk->sk_bound_dev_if);
	return inet_rsk(inet_reqsk((struct sock *)sk))->ir_iif;
}

/*
 * What our SYN or SYN-ACK offers (docs/wire-format.md), f->lock held:
 * a retransmission (same ISN) exactly what the first transmission
 * carried, whatever rx, the rules or rx_codecs say now, so that the flow
 * decodes what the peer read from whichever copy reached it; else,
 * with rx on and the segment not signed (TCP-MD5/AO), a SYN whose DSCP
 * has a rule of the namespace, and a SYN-ACK that answers a SYN that
 * offered (@fresh: it answers no SYN the flow knows).
 */
static u16 tx_syn_codecs(const struct incnn_config *cfg,
			 const struct incnn_flow *f, const struct sk_buff *skb,
			 bool fresh)
{
	const struct tcphdr *th = tcp_hdr(skb);

	if ((f->flags & INCNN_FLOW_F_ISN) && f->isn == ntohl(th->seq))
		return f->flags & INCNN_FLOW_F_OFFERED ? f->rx_codecs : 0;
	if (!cfg->rx || incnn_tcpopt_signed(th))
		return 0;
	if (!th->ack)
		return cfg->rules[incnn_l3_dsfield(skb) >> 2].codec ?
		       incnn_tcpopt_codecs() : 0;
	return !fresh && (f->flags & INCNN_FLOW_F_PEER_RX) ?
	       incnn_tcpopt_codecs() : 0;
}

/*
 * Does our SYN or SYN-ACK start a new incarnation of the tuple? A SYN
 * with an ISN the flow does not know does: nothing of the previous one
 * (ISN, anchor, rule, offers) survives; a SYN-ACK keeps the peer's offer
 * only if it answers the SYN that offer came with. f->lock held.
 */
static bool tx_syn_fresh(const struct incnn_flow *f, const struct tcphdr *th)
{
	if (f->flags & INCNN_FLOW_F_ISN)
		return f->isn != ntohl(th->seq);
	return !th->ack || !(f->flags & INCNN_FLOW_F_PEER_SYN) ||
	       f->peer_isn + 1 != ntohl(th->ack_seq);
}

/*
 * Our own SYN or SYN-ACK: learn the flow, offer rx (tx_syn_codecs()).
 * The flow records the offer of the first transmission of its ISN, as it
 * left: a SYN whose option could not be added for want of memory is
 * dropped (TCP sends it again) rather than sent without it. A flow that
 * offers holds a module reference (incnn_flow_pin()).
 */
static unsigned int tx_syn(struct incnn_net *in,
			   const struct incnn_config *cfg, struct sk_buff *skb)
{
	const struct tcphdr *th = tcp_hdr(skb);
	struct incnn_tuple t;
	struct incnn_flow *f;
	bool reset = false;
	u16 codecs;
	int err;
	u32 seq;

	incnn_tuple_out(skb, &t);
	f = incnn_flow_get(in, cfg, &t);
	/* offer rx only for a flow we can decode: one in the table */
	if (!f)
		return NF_ACCEPT;
	spin_lock(&f->lock);
	codecs = tx_syn_codecs(cfg, f, skb, tx_syn_fresh(f, th));
	spin_unlock(&f->lock);
	err = codecs && incnn_flow_pin(f) ? incnn_tcpopt_add(skb, codecs) :
	      -ENOSPC;
	if (err == -ENOMEM) {
		incnn_stat_inc(in, INCNN_STAT_TX_ERRORS);
		return NF_DROP;
	}
	th = tcp_hdr(skb);
	seq = ntohl(th->seq);
	WRITE_ONCE(f->bound_if, tx_bound_if(skb->sk));
	spin_lock(&f->lock);
	if (tx_syn_fresh(f, th))
		reset = incnn_flow_reset(f);
	if (!(f->flags & INCNN_FLOW_F_ISN)) {
		f->rx_codecs = err ? 0 : codecs;
		if (!err)
			f->flags |= INCNN_FLOW_F_OFFERED;
	}
	f->flags |= INCNN_FLOW_F_ISN;
	f->isn = seq;
	WRITE_ONCE(f->last, jiffies);
	spin_unlock(&f->lock);
	incnn_sframe_syn(cfg, f, skb, !err);	/* superframes */
	if (reset)
		incnn_stat_inc(in, INCNN_STAT_FLOWS_RESET);
	return NF_ACCEPT;
}

/* How a marked data segment of a flow goes out. */
enum tx_mode {
	TX_FRAME,	/* framed if smaller */
	TX_QUANTISE,	/* unframed, quantised in place if the codec is lossy */
};

/*
 * Decide for a data segment of @plen bytes whose DSCP is @dscp: NULL to
 * leave the skb alone (a marked one counted under the reason), else the
 * flow, anchored, and in *mode how its segment goes out. A marked
 * segment anchors its flow; once anchored, a segment that is not marked
 * any more (rule deleted, tx off) or marked otherwise freezes the flow
 * (incnn_grid_mark()): a lossy flow then still quantises in place what
 * lies below the highest byte it sent, and nothing after.
 */
static struct incnn_flow *tx_flow(struct incnn_net *in,
				  const struct incnn_config *cfg,
				  struct sk_buff *skb, u8 dscp, unsigned int plen,
				  enum tx_mode *mode)
{
	u32 seq = ntohl(tcp_hdr(skb)->seq);
	bool marked = cfg->tx && cfg->rules[dscp].codec;
	const struct incnn_codec *c;
	struct incnn_flow *f;
	enum incnn_stat why;
	bool past = false;
	u16 peer_codecs;
	u32 flags;

	f = incnn_grid_flow(in, skb);
	if (!f) {
		why = INCNN_STAT_TX_RAW_UNTRACKED;
		goto raw;
	}
	spin_lock(&f->lock);
	if (!incnn_grid_mark(f, cfg, seq, dscp, marked)) {
		incnn_grid_sent(f, seq, plen);
		spin_unlock(&f->lock);
		return NULL;
	}
	WRITE_ONCE(f->last, jiffies);
	flags = f->flags;
	peer_codecs = f->peer_codecs;
	if (flags & INCNN_FLOW_F_TOGGLED)
		past = incnn_grid_past(f, seq, plen);
	spin_unlock(&f->lock);

	if (!(flags & INCNN_FLOW_F_PEER_RX)) {
		why = INCNN_STAT_TX_RAW_NO_PEER;
		goto raw;
	}
	c = incnn_codec_get(f->rule.codec);
	if ((flags & INCNN_FLOW_F_TOGGLED) && (past || !c || !c->lossy)) {
		why = INCNN_STAT_TX_RAW_MARK_TOGGLED;
		goto raw;
	}
	/* compressing: the module stays until the flow is freed */
	if (!(flags & INCNN_FLOW_F_PINNED) && !incnn_flow_pin(f)) {
		why = INCNN_STAT_TX_ERRORS;
		goto raw;
	}
	*mode = TX_FRAME;
	if (flags & INCNN_FLOW_F_TOGGLED) {
		/* quantised below the freeze, raw after it */
		incnn_stat_inc(in, INCNN_STAT_TX_RAW_MARK_TOGGLED);
		*mode = TX_QUANTISE;
	} else if (!(peer_codecs & BIT(f->rule.codec))) {
		/* a one-sided upgrade: the peer cannot decode this codec */
		incnn_stat_inc(in, INCNN_STAT_TX_RAW_PEER_CODEC);
		*mode = TX_QUANTISE;
	}
	return f;
raw:
	if (marked || why == INCNN_STAT_TX_RAW_MARK_TOGGLED) {
		incnn_stat_inc(in, why);
		incnn_stat_inc(in, INCNN_STAT_TX_SEGS);
		incnn_stat_add(in, INCNN_STAT_TX_BYTES, plen);
	}
	return NULL;
}

/*
 * Quantise the float part in place (decode(encode(x))), for a segment
 * that goes out unframed although the flow is compressed: the receiver
 * then sees the same values whichever way a byte travelled. Returns
 * false if it could not be done.
 */
static bool tx_quantise(const struct incnn_codec *c, enum incnn_simd simd,
			u8 param, u8 *p, unsigned int len,
			struct incnn_scratch *s)
{
	ssize_t n;

	len &= ~3u;
	if (!len)
		return true;
	n = incnn_codec_encode(c, simd, param, p, len, s->buf, sizeof(s->buf),
			       s->codec, NULL);
	return n >= 0 && !incnn_codec_decode(c, simd, param, s->buf, n, p, len);
}

/*
 * A (non-GSO) segment being compressed: its payload, and where it lies
 * on the flow's grid (tx_place()).
 */
struct tx_seg {
	u8 *p;			/* the payload */
	unsigned int hlen;	/* the headers before it */
	unsigned int plen;	/* its length */
	s64 pos;		/* its stream offset (incnn_grid_pos()) */
	unsigned int head;	/* raw: before the anchor, then to the grid */
	struct incnn_grid_raw r;	/* raw floats beyond the head */
};

/*
 * Send a segment of a compressed flow unframed: its float part
 * quantised in place if the codec is lossy, except the floats that
 * travel raw (@g's head and raw floats). Returns false if that failed
 * (the segment must not leave: TCP sends it again).
 */
static bool tx_unframed(struct incnn_net *in, const struct incnn_codec *c,
			struct incnn_flow *f, struct sk_buff *skb,
			const struct tx_seg *g, enum incnn_simd simd)
{
	struct incnn_scratch *s = incnn_scratch_get();
	const struct incnn_grid_raw *r = &g->r;
	unsigned int i, start = g->head, stop;

	if (!c->lossy || g->plen <= g->head)
		return true;
	for (i = 0; i <= r->n; i++) {
		stop = min(i < r->n ? r->off[i] : r->qend, g->plen);
		if (stop > start &&
		    !tx_quantise(c, simd, f->rule.param, g->p + start,
				 stop - start, s)) {
			incnn_stat_inc(in, INCNN_STAT_TX_ERRORS);
			return false;
		}
		start = max(start, stop + 4);
	}
	incnn_tcp_fix_csum(skb);
	return true;
}

/*
 * Replace the payload (at @p, @plen bytes) by the frame option and the
 * frame of @n bytes in @frame; n + the option is less than plen.
 */
static void tx_put_frame(const struct incnn_config *cfg, struct sk_buff *skb,
			 u8 *p, unsigned int plen, const u8 *frame,
			 unsigned int n)
{
	struct tcphdr *th = tcp_hdr(skb);

	p[0] = INCNN_TCPOPT_KIND;
	p[1] = INCNN_TCPOPT_FRAME_LEN;
	put_unaligned_be16(INCNN_TCPOPT_FRAME_EXID, p + 2);
	memcpy(p + INCNN_TCPOPT_FRAME_LEN, frame, n);
	__skb_trim(skb, skb->len - plen + INCNN_TCPOPT_FRAME_LEN + n);
	th->doff += INCNN_TCPOPT_FRAME_LEN / 4;
	incnn_l3_set_dscp(skb, cfg->wire_dscp << 2);
	incnn_l3_set_len(skb);
	incnn_tcp_fix_csum(skb);
}

/*
 * Place a segment on its flow's grid: its stream offset, its raw head
 * (bytes before the anchor, then up to the float grid) and, for a lossy
 * codec, its cut and raw floats (incnn_grid_cuts()). Returns false if it
 * must be dropped: never a mix of two copies of a float.
 */
static bool tx_place(struct incnn_net *in, const struct incnn_codec *c,
		     struct incnn_flow *f, struct sk_buff *skb,
		     struct tx_seg *g)
{
	bool ok = true;
	s64 old_end;

	spin_lock(&f->lock);
	g->pos = incnn_grid_pos(f, ntohl(tcp_hdr(skb)->seq), g->plen,
				&old_end);
	g->head = min_t(s64, g->pos < 0 ? -g->pos : -g->pos & 3, g->plen);
	g->r.n = 0;
	g->r.qend = g->plen;
	if (c->lossy && g->pos + g->plen > 0)
		ok = incnn_grid_cuts(in, f, skb, g->pos, g->plen, g->head,
				     old_end, &g->r);
	spin_unlock(&f->lock);
	if (!ok)
		incnn_stat_inc(in, INCNN_STAT_TX_DROP_CUT);
	return ok;
}

/*
 * Frame a segment with no raw float beyond its head: the payload becomes
 * the frame option and the frame, if that is smaller and fits the path.
 * Returns false, counted under the reason, if it goes unframed instead.
 */
static bool tx_frame(struct incnn_net *in, const struct incnn_config *cfg,
		     const struct incnn_codec *c, struct incnn_flow *f,
		     struct sk_buff *skb, const struct tx_seg *g,
		     enum incnn_simd simd)
{
	struct incnn_scratch *s = incnn_scratch_get();
	struct incnn_hist hist = { { 0 } };
	ssize_t n;

	if (!incnn_tcpopt_frame_room(skb)) {
		incnn_stat_inc(in, INCNN_STAT_TX_RAW_NO_ROOM);
		return false;
	}
	n = incnn_frame_encode_simd(simd, c, f->rule.param, f->dscp << 2,
				    g->p, g->plen, g->head, s->buf,
				    sizeof(s->buf), s->codec, &hist);
	if (n >= 0 && n + INCNN_TCPOPT_FRAME_LEN >= g->plen)
		n = -E2BIG;	/* with its option, not smaller */
	if (n >= 0 && g->hlen + INCNN_TCPOPT_FRAME_LEN + n > incnn_l3_mtu(skb)) {
		/* lengthened by align.c, and too long for the path even so */
		incnn_stat_inc(in, INCNN_STAT_TX_RAW_NO_ROOM);
		return false;
	}
	if (n < 0) {
		incnn_stat_inc(in, n == -E2BIG ? INCNN_STAT_TX_RAW_NOT_SMALLER :
				   INCNN_STAT_TX_ERRORS);
		return false;
	}

	tx_put_frame(cfg, skb, g->p, g->plen, s->buf, n);
	incnn_stat_inc(in, INCNN_STAT_TX_FRAMED);
	incnn_stat_inc(in, INCNN_STAT_TX_WIRE_V1);
	incnn_stat_add(in, INCNN_STAT_TX_BYTES_ORIG, g->plen);
	incnn_stat_add(in, INCNN_STAT_TX_BYTES_WIRE, n);
	incnn_stats_codec(in, c->id, g->plen, n, &hist);
	spin_lock(&f->lock);
	f->bytes_orig += g->plen;
	f->bytes_wire += n;
	spin_unlock(&f->lock);
	return true;
}

/*
 * Compress one (non-GSO) segment in place, with the codec path @simd
 * (inside the caller's FPU section if not INCNN_SIMD_NONE): placed on
 * the grid, then framed, or else sent unframed. Returns false if the
 * segment must be dropped: a lossy flow's segment that could be neither
 * framed nor quantised (TCP retransmits it).
 */
static bool tx_segment(struct incnn_net *in, const struct incnn_config *cfg,
		       struct incnn_flow *f, struct sk_buff *skb,
		       enum tx_mode mode, enum incnn_simd simd)
{
	const struct incnn_codec *c = incnn_codec_get(f->rule.codec);
	struct tx_seg g;

	if (!c || skb_ensure_writable(skb, skb->len)) {
		incnn_stat_inc(in, INCNN_STAT_TX_ERRORS);
		return !c || !c->lossy;
	}
	g.hlen = skb_transport_offset(skb) + tcp_hdr(skb)->doff * 4;
	if (skb->len <= g.hlen)
		return true;
	g.plen = skb->len - g.hlen;
	g.p = skb->data + g.hlen;

	incnn_stat_inc(in, INCNN_STAT_TX_SEGS);
	incnn_stat_add(in, INCNN_STAT_TX_BYTES, g.plen);
	if (!tx_place(in, c, f, skb, &g))
		return false;
	if (g.pos < 0 && -g.pos >= g.plen) {
		incnn_stat_inc(in, INCNN_STAT_TX_RAW_PRE_ANCHOR);
		return true;
	}
	/* unframed: counted by tx_flow(), or some floats inside are raw */
	if (mode == TX_FRAME && !g.r.n && g.r.qend >= g.plen &&
	    tx_frame(in, cfg, c, f, skb, &g, simd))
		return true;
	if (c->lossy) {
		g.plen = incnn_grid_fit(skb, g.pos, g.hlen, g.plen);
		if (!g.plen)
			return false;
	}
	return tx_unframed(in, c, f, skb, &g, simd);
}

/* Our position in the hook list, to continue after us per segment. */
static int tx_hook_index(const struct nf_hook_entries *e, void *priv)
{
	unsigned int i;

	for (i = 0; i < e->num_hook_entries; i++)
		if (e->hooks[i].hook == incnn_tx_hook &&
		    e->hooks[i].priv == priv)
			return i;
	return -1;
}

/*
 * The verdict that hands @err, a negative errno or a positive NET_XMIT_*
 * code, to the caller of the hook (nf_hook_slow() returns
 * NF_DROP_GETERR() of it): NF_DROP_ERR() for any sign. Netfilter frees
 * the skb.
 */
static unsigned int tx_verdict_err(int err)
{
	return ((u32)-err << NF_VERDICT_QBITS) | NF_DROP;
}

/*
 * Send the compressed segments of a GSO skb through the rest of the hook
 * chain and okfn. @failed segments were already dropped here. Returns
 * what the caller of the hook (TCP) should learn: 0 if every segment
 * left; the first error if none did (TCP sends the skb again, as after
 * any local drop); NET_XMIT_CN if some did not, or the device signalled
 * congestion (TCP reduces cwnd and, having sent the skb, recovers the
 * missing segments as losses).
 */
static int tx_gso_send(struct incnn_net *in, struct sk_buff *segs,
		       struct nf_hook_state *st,
		       const struct nf_hook_entries *e, int idx,
		       unsigned int failed)
{
	unsigned int sent = 0, cn = 0;
	struct sk_buff *seg, *next;
	int first = failed ? -ENOBUFS : 0, ret;

	skb_list_walk_safe(segs, seg, next) {
		skb_mark_not_on_list(seg);
		ret = nf_hook_slow(seg, st, e, idx + 1);
		if (ret == 1)
			ret = st->okfn(st->net, st->sk, seg);
		if (ret == NET_XMIT_DROP)
			ret = -ENOBUFS;
		if (ret < 0) {
			incnn_stat_inc(in, INCNN_STAT_TX_XMIT_ERRORS);
			failed++;
			if (!first)
				first = ret;
			continue;
		}
		sent++;
		if (ret == NET_XMIT_CN)
			cn++;
	}
	if (!sent)
		return first ? first : -ENOBUFS;
	return failed || cn ? NET_XMIT_CN : 0;
}

/*
 * A GSO super-packet: every wire packet must decode alone, so segment it
 * here, compress each segment, and send each through the rest of the hook
 * chain and okfn. All segments are compressed in one FPU section, which
 * ends before the first is sent. The transmit results reach TCP as far
 * as netfilter allows (tx_gso_send()): anything but "all sent" is
 * returned through NF_DROP_ERR(), and netfilter frees the original skb.
 */
static unsigned int tx_gso(struct incnn_net *in,
			   const struct incnn_config *cfg,
			   struct incnn_flow *f, struct sk_buff *skb,
			   enum tx_mode mode, void *priv,
			   const struct nf_hook_state *state)
{
	const struct incnn_codec *c = incnn_codec_get(f->rule.codec);
	struct sk_buff *segs, *seg, *next, **pprev;
	const struct nf_hook_entries *e;
	struct nf_hook_state st = *state;
	enum incnn_simd simd;
	unsigned int failed = 0;
	int idx, err;

	e = incnn_l3_hooks(state);
	idx = e ? tx_hook_index(e, priv) : -1;
	segs = idx < 0 ? NULL : skb_gso_segment(skb, NETIF_F_HW_CSUM);
	if (IS_ERR_OR_NULL(segs)) {
		/* raw values only if raw is what the codec gives anyway */
		incnn_stat_inc(in, INCNN_STAT_TX_ERRORS);
		return c && c->lossy ? NF_DROP : NF_ACCEPT;
	}
	incnn_stat_inc(in, INCNN_STAT_TX_GSO_SPLIT);

	simd = incnn_simd_begin();
	/* superframes (sframe_tx.c): the skb's bytes as few version-2 frames */
	if (mode == TX_FRAME && incnn_sframe_tx(in, cfg, f, skb, &segs, simd))
		goto sent;
	pprev = &segs;
	skb_list_walk_safe(segs, seg, next) {
		if (tx_segment(in, cfg, f, seg, mode, simd)) {
			pprev = &seg->next;
			continue;
		}
		*pprev = next;	/* unlink and drop it */
		kfree_skb(seg);
		failed++;
	}
sent:
	incnn_simd_end(simd);

	err = tx_gso_send(in, segs, &st, e, idx, failed);
	if (!err) {
		consume_skb(skb);
		return NF_STOLEN;
	}
	return tx_verdict_err(err);
}

/*
 * A segment behind IPv6 extension headers (a socket's IPV6_HOPOPTS,
 * IPV6_RTHDR, ...; @thoff: its TCP header): none is handled, so its SYN
 * is neither learned nor offers rx, and nothing of it is compressed. A
 * marked data segment goes raw (tx_raw_exthdr); one of a flow that
 * already compresses with a lossy codec is dropped (tx_drop_exthdr): its
 * bytes must never reach the peer both quantised and original, and such
 * a flow fails loudly rather than deliver that.
 */
static unsigned int tx_exthdr(struct incnn_net *in,
			      const struct incnn_config *cfg,
			      struct sk_buff *skb, unsigned int thoff)
{
	const struct tcphdr *th = (const struct tcphdr *)(skb->data + thoff);
	unsigned int hlen = thoff + th->doff * 4;
	u8 dscp = incnn_l3_dsfield(skb) >> 2;
	const struct incnn_codec *c;
	struct incnn_tuple t;
	struct incnn_flow *f;
	u32 flags;

	if (th->syn || skb->len <= hlen)
		return NF_ACCEPT;
	incnn_tuple_out(skb, &t);
	f = incnn_flow_lookup(in, &t);
	flags = f ? READ_ONCE(f->flags) : 0;
	c = flags & INCNN_FLOW_F_ANCHORED ? incnn_codec_get(f->rule.codec) :
	    NULL;
	if (c && c->lossy && (flags & INCNN_FLOW_F_PEER_RX)) {
		incnn_stat_inc(in, INCNN_STAT_TX_DROP_EXTHDR);
		return NF_DROP;
	}
	if (cfg->tx && cfg->rules[dscp].codec) {
		incnn_stat_inc(in, INCNN_STAT_TX_RAW_EXTHDR);
		incnn_stat_inc(in, INCNN_STAT_TX_SEGS);
		incnn_stat_add(in, INCNN_STAT_TX_BYTES, skb->len - hlen);
	}
	return NF_ACCEPT;
}

static unsigned int tx_hook(void *priv, struct sk_buff *skb,
			    const struct nf_hook_state *state)
{
	struct incnn_net *in = incnn_pernet(state->net);
	const struct incnn_config *cfg;
	const struct tcphdr *th;
	struct incnn_tuple t;
	struct incnn_flow *f;
	enum incnn_l3 l3;
	enum tx_mode mode;
	unsigned int hlen;
	enum incnn_simd simd;
	bool ok;
	u8 dscp;

	l3 = incnn_tcp_pull(skb, &hlen);
	if (l3 == INCNN_L3_NONE)
		return NF_ACCEPT;
	cfg = rcu_dereference(in->cfg);
	if (l3 == INCNN_L3_EXTHDR)
		return tx_exthdr(in, cfg, skb, hlen);
	th = tcp_hdr(skb);
	hlen += th->doff * 4;

	if (th->syn)
		return tx_syn(in, cfg, skb);
	if (th->fin || th->rst) {
		incnn_tuple_out(skb, &t);
		f = incnn_flow_lookup(in, &t);
		if (f)
			incnn_flow_set(f, INCNN_FLOW_F_CLOSING);
	}
	if (skb->len <= hlen)
		return NF_ACCEPT;

	dscp = incnn_l3_dsfield(skb) >> 2;
	/* signed (TCP-MD5/AO): any change would fail the peer's check */
	if (incnn_tcpopt_signed(th)) {
		if (cfg->tx && cfg->rules[dscp].codec) {
			incnn_stat_inc(in, INCNN_STAT_TX_RAW_SIGNED);
			incnn_stat_inc(in, INCNN_STAT_TX_SEGS);
			incnn_stat_add(in, INCNN_STAT_TX_BYTES, skb->len - hlen);
		}
		return NF_ACCEPT;
	}
	f = tx_flow(in, cfg, skb, dscp, skb->len - hlen, &mode);
	if (!f)
		return NF_ACCEPT;
	if (skb_is_gso(skb))
		return tx_gso(in, cfg, f, skb, mode, priv, state);
	simd = incnn_simd_begin();
	ok = tx_segment(in, cfg, f, skb, mode, simd);
	incnn_simd_end(simd);
	return ok ? NF_ACCEPT : NF_DROP;
}

/*
 * Locally generated segments of a TCP socket: a full TCP socket, or a
 * request socket (SYN-ACK). Forwarded packets have no socket, and what a
 * raw or packet socket builds is not ours to learn from or to rewrite,
 * even if it looks like a segment of a tracked flow.
 */
static bool tx_tcp_sk(const struct sock *sk)
{
	if (!sk)
		return false;
	if (!sk_fullsock(sk))
		return sk->sk_state == TCP_NEW_SYN_RECV;
	return sk->sk_type == SOCK_STREAM && sk->sk_protocol == IPPROTO_TCP;
}

/*
 * Per-CPU scratch needs BH off. A VRF (l3mdev) runs POST_ROUTING twice
 * per packet, for its own device and then for the real one: act once, on
 * the real device.
 */
unsigned int incnn_tx_hook(void *priv, struct sk_buff *skb,
			   const struct nf_hook_state *state)
{
	unsigned int ret;

	if (!tx_tcp_sk(skb->sk) ||
	    (state->out && netif_is_l3_master(state->out)))
		return NF_ACCEPT;
	local_bh_disable();
	ret = tx_hook(priv, skb, state);
	local_bh_enable();
	return ret;
}
