// SPDX-License-Identifier: GPL-2.0
/*
 * Cut floats: every segment of a lossy compressed flow leaves on the
 * float grid, so that a float is never split over two packets (and so
 * never travels whole in one copy and cut in another), except where the
 * data written so far ends inside it: that float is recorded raw, and
 * every copy of it travels raw. Runs at NF_INET_LOCAL_OUT before any
 * other hook, inside tcp_transmit_skb() with the socket locked, and
 * reads the bytes a segment needs from the socket's queues. The grid
 * itself (anchor, raw floats, freeze) is grid.c's. See docs/design.md,
 * "Cut floats" and "Mid-stream toggles".
 */
#include <linux/ip.h>
#include <linux/netdevice.h>
#include <linux/tcp.h>
#include <net/ip.h>
#include <net/dsfield.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "incnn.h"

/* The skb of the socket's queues that holds the stream byte at @seq. */
static struct sk_buff *align_sk_skb(struct sock *sk, u32 seq)
{
	struct rb_node *p = sk->tcp_rtx_queue.rb_node;
	struct sk_buff *skb;

	while (p) {
		skb = rb_to_skb(p);
		if (before(seq, TCP_SKB_CB(skb)->seq))
			p = p->rb_left;
		else if (!before(seq, TCP_SKB_CB(skb)->seq + skb->len))
			p = p->rb_right;
		else
			return skb;
	}
	skb_queue_walk(&sk->sk_write_queue, skb) {
		if (before(seq, TCP_SKB_CB(skb)->seq))
			break;
		if (before(seq, TCP_SKB_CB(skb)->seq + skb->len))
			return skb;
	}
	return NULL;
}

/* Copy @len stream bytes from @seq out of the socket's queues. */
static bool align_sk_copy(struct sock *sk, u32 seq, u8 *to, unsigned int len)
{
	struct sk_buff *skb;
	unsigned int off, n;

	while (len) {
		skb = align_sk_skb(sk, seq);
		if (!skb)
			return false;
		off = seq - TCP_SKB_CB(skb)->seq;
		n = min(len, skb->len - off);
		if (skb_copy_bits(skb, off, to, n))
			return false;
		seq += n;
		to += n;
		len -= n;
	}
	return true;
}

/* A segment [s, e) of stream offsets and what it becomes: [S, E). */
struct align_plan {
	s64 s, e;
	s64 una;	/* the socket's snd_una */
	s64 dend;	/* the end of the data written so far */
	s64 nxt;	/* the socket's snd_nxt */
	u32 gso;	/* gso_size, 0 if not GSO */
	u32 lim;	/* longest payload for a non-GSO segment */
	bool fin;	/* the segment carries FIN */
	s64 S, E;
	bool ungso;	/* send the first GSO segment only, as one */
};

/*
 * Put the segment on the float grid (f->lock held): start at its first
 * float unless that float is raw; end before a cut last float whose
 * bytes are all written (the next segment starts with it), or complete
 * it if the segment would be empty, or record it raw if it is not
 * written whole yet. Returns false if the first float cannot be
 * completed: its first bytes are acknowledged and freed although it is
 * not raw (the peer acknowledged a point inside a float, which incnn
 * never sends).
 */
static bool align_plan(struct incnn_net *in, struct incnn_flow *f,
		       struct align_plan *a)
{
	s64 fl;

	a->S = a->s;
	a->E = a->e;
	if (a->s >= f->raw_from)	/* the flow is raw from here on */
		return true;
	if (a->s > 0 && (a->s & 3)) {
		fl = a->s & ~3LL;
		/* raw floats only if none of their bytes left yet (urgent) */
		if (!incnn_float_raw(f, fl) || fl >= f->tx_end) {
			if (fl < a->una)
				return false;
			a->S = fl;
		}
	}
	if (a->e > 0 && (a->e & 3)) {
		fl = a->e & ~3LL;
		if (incnn_float_raw(f, fl)) {
			/* keep it: travels raw */
		} else if (a->fin || (fl <= a->S &&
				      (fl + 4 > a->dend || fl >= f->tx_end))) {
			/*
			 * the data ends inside it (FIN: the last data byte
			 * stays where it is), or a segment inside one float
			 * not written whole or never sent before: raw
			 */
			incnn_float_raw_add(f, fl, a->una);
			incnn_stat_inc(in, INCNN_STAT_TX_CUT_RAW);
		} else if (fl > a->S && a->e <= a->nxt && fl >= f->tx_end) {
			/*
			 * a retransmission (TCP sent these bytes before) of a
			 * cut float none of whose bytes ever left: held back,
			 * the peer would acknowledge a point short of what TCP
			 * sent, and TCP in loss recovery resends that short
			 * rest only on its next, backed-off RTO. It goes raw,
			 * and the segment whole.
			 */
			incnn_float_raw_add(f, fl, a->una);
			incnn_stat_inc(in, INCNN_STAT_TX_CUT_RAW);
		} else if (fl > a->S) {
			/*
			 * the next segment starts with it (new data: TCP's
			 * next write completes the float)
			 */
			a->E = fl;
		} else if (fl + 4 <= a->nxt) {
			a->E = fl + 4;	/* complete it: sent whole before */
		}
	}
	if (a->fin) {
		/* never move a FIN: no clamp below */
	} else if (a->gso) {
		/* GSO segments of whole floats: only from a float boundary */
		if ((a->S & 3) || a->gso < 8) {
			a->ungso = true;
			a->E = min(a->E, (a->S + a->gso) & ~3LL);
		}
	} else if (a->E - a->S > a->lim) {
		a->E = (a->S + a->lim) & ~3LL;
	}
	if (a->E <= a->s) {	/* no progress: leave it to the egress hook */
		a->S = a->s;
		a->E = a->e;
		a->ungso = false;
	}
	return true;
}

/*
 * The segment now starts @back bytes before @seq: the urgent pointer,
 * relative to the sequence number, keeps pointing at the same byte; one
 * that would not fit 16 bits any more is left to the segments that
 * follow (TCP sends none when the urgent byte is that far ahead).
 */
static void align_move_back(struct tcphdr *th, u32 seq, unsigned int back)
{
	u32 up = ntohs(th->urg_ptr) + back;

	th->seq = htonl(seq - back);
	if (!th->urg)
		return;
	if (up > 0xffff) {
		th->urg = 0;
		up = 0;
	}
	th->urg_ptr = htons(up);
}

/*
 * Reshape the segment (payload @plen bytes after @hlen of headers, at
 * sequence number @seq) to the plan: @back bytes prepended from the
 * socket, payload @len bytes, GSO size made a multiple of 4.
 */
static int align_apply(struct sock *sk, struct sk_buff *skb,
		       unsigned int hlen, u32 seq, unsigned int plen,
		       const struct align_plan *a)
{
	unsigned int back = a->s - a->S, len = a->E - a->S;
	struct skb_shared_info *sh;
	u8 buf[4];
	int x;

	if (skb_unclone(skb, GFP_ATOMIC))
		return -ENOMEM;
	x = (int)(len - back) - (int)plen;
	if (x < 0 && pskb_trim(skb, hlen + plen + x))
		return -ENOMEM;
	if (x > 0) {	/* a tiny segment: complete its float */
		if (!align_sk_copy(sk, seq + plen, buf, x))
			return -ENODATA;
		if (skb_linearize(skb) ||
		    (skb_tailroom(skb) < x &&
		     pskb_expand_head(skb, 0, x, GFP_ATOMIC)))
			return -ENOMEM;
		skb_put_data(skb, buf, x);
	}
	if (back) {
		if (!align_sk_copy(sk, seq - back, buf, back))
			return -ENODATA;
		if (skb_headroom(skb) < back &&
		    pskb_expand_head(skb, back, 0, GFP_ATOMIC))
			return -ENOMEM;
		__skb_push(skb, back);
		memmove(skb->data, skb->data + back, hlen);
		memcpy(skb->data + hlen, buf, back);
		skb_set_transport_header(skb, skb_transport_offset(skb) - back);
		skb_reset_network_header(skb);
		align_move_back(tcp_hdr(skb), seq, back);
	}
	if (skb->ip_summed == CHECKSUM_PARTIAL)
		skb->csum_start = skb_transport_header(skb) - skb->head;
	if (skb_is_gso(skb)) {
		sh = skb_shinfo(skb);
		/* one segment is not GSO (tcp_gso_segment() refuses it) */
		if (a->ungso || len <= (a->gso & ~3u)) {
			sh->gso_size = 0;
			sh->gso_segs = 0;
			sh->gso_type = 0;
		} else {
			sh->gso_size = a->gso & ~3u;
			sh->gso_segs = DIV_ROUND_UP(len, sh->gso_size);
		}
	}
	incnn_l3_set_len(skb);
	incnn_tcp_fix_csum(skb);
	return 0;
}

/*
 * The flow of a data segment that must be aligned: compressed toward the
 * peer with a lossy codec, anchored here if this is its first marked
 * segment, and frozen here if it stopped compressing since (rule
 * deleted, tx off, mark changed), as the egress hook does
 * (incnn_grid_mark()): its bytes below the highest one sent keep their
 * values (grid.c). NULL otherwise.
 */
static struct incnn_flow *align_flow(struct incnn_net *in,
				     const struct sk_buff *skb)
{
	const struct incnn_config *cfg = rcu_dereference(in->cfg);
	const u32 want = INCNN_FLOW_F_ANCHORED | INCNN_FLOW_F_PEER_RX;
	u8 dscp = incnn_l3_dsfield(skb) >> 2, codec;
	bool marked = cfg->tx && cfg->rules[dscp].codec;
	const struct incnn_codec *c;
	struct incnn_flow *f;
	u32 flags;

	f = incnn_grid_flow(in, skb);
	if (!f || !(marked ||
		    (READ_ONCE(f->flags) & INCNN_FLOW_F_ANCHORED)))
		return NULL;
	spin_lock(&f->lock);
	incnn_grid_mark(f, cfg, ntohl(tcp_hdr(skb)->seq), dscp, marked);
	flags = f->flags;
	codec = f->rule.codec;
	spin_unlock(&f->lock);
	if ((flags & want) != want)
		return NULL;
	c = incnn_codec_get(codec);
	return c && c->lossy ? f : NULL;
}

/*
 * Urgent data (send(MSG_OOB)): a receiver without SO_OOBINLINE takes the
 * urgent byte out of the stream as it arrives, so the float that holds
 * it travels raw in every copy; recorded before any of its bytes leaves.
 * f->lock held.
 */
static void align_urgent(struct incnn_net *in, struct incnn_flow *f,
			 const struct tcp_sock *tp, const struct align_plan *a)
{
	s64 fl;

	if (tp->snd_up == tp->snd_una)	/* not in urgent mode */
		return;
	fl = incnn_flow_rel(f, tp->snd_up - 1) & ~3LL;
	if (fl < 0 || fl < a->una || fl < f->tx_end || incnn_float_raw(f, fl))
		return;
	incnn_float_raw_add(f, fl, a->una);
	incnn_stat_inc(in, INCNN_STAT_TX_CUT_RAW);
}

static unsigned int align_hook(struct incnn_net *in, struct sk_buff *skb)
{
	struct sock *sk = skb->sk;
	const struct tcp_sock *tp = tcp_sk(sk);
	struct align_plan a = { 0 };
	unsigned int hlen, plen;
	struct incnn_flow *f;
	const struct tcphdr *th;
	u32 seq, end;
	bool ok;

	if (skb_network_offset(skb) ||
	    incnn_tcp_pull(skb, &hlen) != INCNN_L3_TCP)
		return NF_ACCEPT;
	th = tcp_hdr(skb);
	hlen += th->doff * 4;
	if (th->syn || th->rst || skb->len <= hlen ||
	    incnn_tcpopt_signed(th))
		return NF_ACCEPT;
	f = align_flow(in, skb);
	if (!f)
		return NF_ACCEPT;
	seq = ntohl(th->seq);
	plen = skb->len - hlen;
	a.gso = skb_is_gso(skb) ? skb_shinfo(skb)->gso_size : 0;
	a.fin = th->fin;
	/* a queued FIN takes a sequence number after the data */
	end = READ_ONCE(tp->write_seq) -
	      !!(READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN);
	a.lim = max_t(u32, plen, tp->mss_cache) + 3;
	/*
	 * never longer than the peer restores: its advmss (rx.c), the MSS
	 * it advertised less the options in use (timestamps)
	 */
	if (tp->rx_opt.mss_clamp)
		a.lim = min_t(u32, a.lim, tp->rx_opt.mss_clamp -
			      (tp->tcp_header_len - sizeof(struct tcphdr)));

	spin_lock(&f->lock);
	a.s = incnn_flow_rel(f, seq);
	a.e = a.s + plen;
	a.una = incnn_flow_rel(f, tp->snd_una);
	a.dend = incnn_flow_rel(f, end);
	a.nxt = incnn_flow_rel(f, tp->snd_nxt);
	align_urgent(in, f, tp, &a);
	ok = align_plan(in, f, &a);
	spin_unlock(&f->lock);

	if (!ok) {
		incnn_stat_inc(in, INCNN_STAT_TX_DROP_CUT);
		return NF_DROP;
	}
	if (a.S == a.s && a.E == a.e && !a.ungso &&
	    (!(a.gso & 3) || a.E - a.S <= (a.gso & ~3u)))
		return NF_ACCEPT;
	if (align_apply(sk, skb, hlen, seq, plen, &a)) {
		/* never a guess: TCP sends it again */
		incnn_stat_inc(in, INCNN_STAT_TX_ERRORS);
		return NF_DROP;
	}
	incnn_stat_inc(in, INCNN_STAT_TX_ALIGNED);
	return NF_ACCEPT;
}

/*
 * Is this the LOCAL_OUT pass that tcp_transmit_skb() runs, with the
 * socket locked? Every caller of tcp_transmit_skb() holds the socket lock
 * (owned by the user, or bh_lock_sock() in timers, the TSQ tasklet and
 * ACK processing), and ip_queue_xmit() -> __ip_local_out() runs the
 * hooks synchronously, with skb->dev still NULL (TCP clears it). Not
 * that pass:
 *  - a second pass of an skb that already went through a device: an
 *    l3mdev slave's pass after the VRF device's (from vrf_xmit(), after
 *    the VRF's qdisc if it has one: any context, socket not locked), or
 *    ipvlan's ip_local_out() after its qdisc;
 *  - any pass in which a hook before ours ran (none but ours is at
 *    NF_IP_PRI_FIRST unless added after us, which puts it first): it
 *    may have queued the skb (NFQUEUE) and reinjected it later.
 * A VRF device's own pass (skb->dev set by vrf_ip_out_direct() or not)
 * comes first, from __ip_local_out(): that one is ours.
 */
static bool align_locked_pass(const struct sk_buff *skb,
			      const struct nf_hook_state *state)
{
	const struct net_device *out = state->out;
	const struct nf_hook_entries *e;

	if (sock_net(skb->sk) != state->net)
		return false;
	if (!(out && netif_is_l3_master(out)) &&
	    (skb->dev || (out && netif_is_l3_slave(out))))
		return false;
	e = incnn_l3_hooks(state);
	return e && e->num_hook_entries &&
	       e->hooks[0].hook == incnn_tx_align_hook;
}

/*
 * NF_INET_LOCAL_OUT, NF_IP_PRI_FIRST: a local TCP socket's data segment,
 * on the pass that holds the socket lock (align_locked_pass()): the
 * socket's queues may be read here; lockdep checks it. Other passes are
 * left to the egress hook's checks ("Fallback without the socket" in
 * docs/design.md). BH off for the flow lock and the per-CPU counters.
 */
unsigned int incnn_tx_align_hook(void *priv, struct sk_buff *skb,
				 const struct nf_hook_state *state)
{
	struct sock *sk = skb->sk;
	unsigned int ret;

	if (!sk || !sk_fullsock(sk) || sk->sk_type != SOCK_STREAM ||
	    sk->sk_protocol != IPPROTO_TCP || !align_locked_pass(skb, state))
		return NF_ACCEPT;
	sock_owned_by_me(sk);
	local_bh_disable();
	ret = align_hook(incnn_pernet(state->net), skb);
	local_bh_enable();
	return ret;
}
