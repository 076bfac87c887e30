// SPDX-License-Identifier: GPL-2.0
/*
 * The float grid of a flow compressed toward the peer: the anchor (its
 * first marked byte), stream offsets relative to it, the cut floats that
 * travel raw in every copy, and the freeze of a flow that stops
 * compressing mid-stream. Both egress hooks work on it: align.c
 * (NF_INET_LOCAL_OUT) puts segments on the grid, tx.c
 * (NF_INET_POST_ROUTING) compresses what reaches it and checks the cuts
 * again. Everything here but incnn_grid_flow() and incnn_grid_fit()
 * runs with f->lock held.
 * See docs/design.md, "Cut floats" and "Mid-stream toggles".
 */
#include <linux/ip.h>
#include <linux/lockdep.h>
#include <linux/tcp.h>
#include <net/ip.h>
#include <net/tcp.h>

#include "incnn.h"

/*
 * The 64-bit offset, relative to the anchor, of the stream byte at
 * @seq: within a send window (< 2^31) of the highest end sent. f->lock
 * held.
 */
s64 incnn_flow_rel(const struct incnn_flow *f, u32 seq)
{
	u32 rel = seq - f->isn - 1 - f->anchor;

	return f->tx_end + (s32)(rel - (u32)f->tx_end);
}

/* Does the float at @fl travel raw in every copy? f->lock held. */
bool incnn_float_raw(const struct incnn_flow *f, s64 fl)
{
	unsigned int i;

	if (fl >= f->raw_from)
		return true;
	for (i = 0; i < f->raw_n; i++)
		if (f->raw[i] == fl)
			return true;
	return false;
}

/*
 * Record the float at @fl as raw, at the first transmission of any of
 * its bytes (nothing after it was sent yet), forgetting the floats that
 * lie wholly before @una (TCP never sends them again). If the list is
 * full, the flow is raw from @fl on, for good; returns false then.
 * f->lock held.
 */
bool incnn_float_raw_add(struct incnn_flow *f, s64 fl, s64 una)
{
	unsigned int i, n = 0;

	lockdep_assert_held(&f->lock);

	if (incnn_float_raw(f, fl))
		return true;
	for (i = 0; i < f->raw_n; i++)
		if (f->raw[i] + 4 > una)
			f->raw[n++] = f->raw[i];
	f->raw_n = n;
	if (n < INCNN_RAW_MAX) {
		f->raw[f->raw_n++] = fl;
		return true;
	}
	f->raw_from = fl;
	return false;
}

/*
 * The flow stops compressing mid-stream (its rule was deleted, tx was
 * switched off, or the application changed its mark): every float below
 * the highest byte ever sent keeps the value it was given, and every
 * copy of it travels aligned and quantised as before; the flow is raw
 * from the first float boundary at or after that byte on, for good.
 * f->lock held.
 */
static void grid_freeze(struct incnn_flow *f)
{
	s64 end = (f->tx_end + 3) & ~3LL;

	f->flags |= INCNN_FLOW_F_TOGGLED;
	if (end < f->raw_from)
		f->raw_from = end;
}

/*
 * Anchor the flow's float grid at its first marked data segment (at
 * @seq, DSCP @dscp): the first byte never sent before, sent with the
 * mark. f->lock held.
 */
static void grid_anchor(struct incnn_flow *f, const struct incnn_config *cfg,
			u32 seq, u8 dscp)
{
	f->anchor = seq - f->isn - 1;
	if ((f->flags & INCNN_FLOW_F_SENT) && after(f->sent_end, f->anchor))
		f->anchor = f->sent_end;
	f->dscp = dscp;
	f->rule = cfg->rules[dscp];
	/*
	 * zebq's values are ebq's, bit for bit: a peer that decodes ebq
	 * but not zebq gets ebq frames (not merely values quantised in
	 * place)
	 */
	if (f->rule.codec == INCNN_CODEC_ZEBQ &&
	    (f->peer_codecs & (BIT(INCNN_CODEC_ZEBQ) | BIT(INCNN_CODEC_EBQ))) ==
	    BIT(INCNN_CODEC_EBQ))
		f->rule.codec = INCNN_CODEC_EBQ;
	f->tx_end = 0;
	f->raw_from = S64_MAX;
	f->raw_n = 0;
	f->flags |= INCNN_FLOW_F_ANCHORED;
}

/*
 * The tracked flow (our SYN or SYN-ACK seen) of an outgoing segment,
 * NULL if there is none.
 */
struct incnn_flow *incnn_grid_flow(struct incnn_net *in,
				   const struct sk_buff *skb)
{
	struct incnn_tuple t;
	struct incnn_flow *f;

	incnn_tuple_out(skb, &t);
	f = incnn_flow_lookup(in, &t);
	if (!f || !(READ_ONCE(f->flags) & INCNN_FLOW_F_ISN))
		return NULL;
	return f;
}

/*
 * The grid follows the mark of the flow's data segments (at @seq, DSCP
 * @dscp; @marked if tx is on and that DSCP has a rule): the first marked
 * segment anchors it, and once anchored, a segment that is not marked
 * any more (rule deleted, tx off) or marked otherwise freezes it
 * (grid_freeze()). Returns whether the flow is anchored (false:
 * never marked). f->lock held.
 */
bool incnn_grid_mark(struct incnn_flow *f, const struct incnn_config *cfg,
		     u32 seq, u8 dscp, bool marked)
{
	lockdep_assert_held(&f->lock);

	if (!(f->flags & INCNN_FLOW_F_ANCHORED)) {
		if (!marked)
			return false;
		grid_anchor(f, cfg, seq, dscp);
	} else if (!marked || f->dscp != dscp) {
		grid_freeze(f);
	}
	return true;
}

/*
 * A data segment of a flow that is not anchored and leaves unmarked:
 * remember how far the stream has been sent (those bytes stay raw even
 * when retransmitted with the mark). f->lock held.
 */
void incnn_grid_sent(struct incnn_flow *f, u32 seq, unsigned int plen)
{
	u32 end = seq - f->isn - 1 + plen;

	lockdep_assert_held(&f->lock);

	if (!(f->flags & INCNN_FLOW_F_SENT) || after(end, f->sent_end))
		f->sent_end = end;
	f->flags |= INCNN_FLOW_F_SENT;
}

/*
 * Does a segment of a frozen flow (at @seq, @plen bytes) lie wholly at or
 * after the point from which it is raw? Then it leaves as it is; the
 * highest end sent still advances (64-bit stream positions). f->lock
 * held.
 */
bool incnn_grid_past(struct incnn_flow *f, u32 seq, unsigned int plen)
{
	s64 pos = incnn_flow_rel(f, seq);

	lockdep_assert_held(&f->lock);

	if (pos < f->raw_from)
		return false;
	if (pos + plen > f->tx_end)
		f->tx_end = pos + plen;
	return true;
}

/*
 * Where a segment starts, relative to the anchor, as a 64-bit stream
 * offset: the 32-bit sequence number extended with the highest end sent
 * so far (a segment lies within a send window, < 2^31, of it), which the
 * segment then advances (@old_end: the end before). Negative: it starts
 * before the anchor. f->lock held.
 */
s64 incnn_grid_pos(struct incnn_flow *f, u32 seq, unsigned int plen,
		   s64 *old_end)
{
	s64 pos;

	lockdep_assert_held(&f->lock);

	pos = incnn_flow_rel(f, seq);
	*old_end = f->tx_end;
	if (pos + plen > f->tx_end)
		f->tx_end = pos + plen;
	return pos;
}

/*
 * The cut and raw floats of a segment of a lossy flow at stream offset
 * @pos, @plen bytes (f->lock held; @old_end: the highest end sent before
 * it). A float cut by the segment's start must be raw; one cut by its
 * end must be raw, or be sent now for the first time (it is recorded
 * raw): otherwise the copies of that float would differ (align.c
 * prevents this for every segment it saw). Fills @r. Returns false if
 * the segment must be dropped.
 */
bool incnn_grid_cuts(struct incnn_net *in, struct incnn_flow *f,
		     struct sk_buff *skb, s64 pos, unsigned int plen,
		     unsigned int head, s64 old_end, struct incnn_grid_raw *r)
{
	s64 end = pos + plen, fl, una = S64_MIN, a;
	unsigned int i, j, o;

	lockdep_assert_held(&f->lock);

	r->n = 0;
	r->qend = plen;
	if (pos > 0 && (pos & 3) && !incnn_float_raw(f, pos & ~3LL))
		return false;
	fl = end & ~3LL;
	if (end > 0 && (end & 3) && fl >= pos && !incnn_float_raw(f, fl)) {
		if (fl < old_end)
			return false;
		if (sk_fullsock(skb->sk))
			una = incnn_flow_rel(f,
					     READ_ONCE(tcp_sk(skb->sk)->snd_una));
		incnn_float_raw_add(f, fl, una);
		incnn_stat_inc(in, INCNN_STAT_TX_CUT_RAW);
	}
	a = pos + head;		/* on the grid, or the segment's end */
	if (f->raw_from < end)
		r->qend = f->raw_from > a ? f->raw_from - pos : head;
	for (i = 0; i < f->raw_n; i++) {
		if (f->raw[i] < a || f->raw[i] + 4 > end)
			continue;
		o = f->raw[i] - pos;
		for (j = r->n; j > 0 && r->off[j - 1] > o; j--)
			r->off[j] = r->off[j - 1];
		r->off[j] = o;
		r->n++;
	}
	return true;
}

/*
 * An unframed segment must fit the path (the longest packet the route
 * takes, as ip_finish_output() sees it): one that align.c lengthened by
 * up to 3 bytes for a frame (bounded by the peer's MSS, not the MTU)
 * ends at the last float boundary that fits (TCP sends the rest again,
 * with the FIN if this segment had one). Returns the new payload length,
 * 0 if nothing fits.
 */
unsigned int incnn_grid_fit(struct sk_buff *skb, s64 pos, unsigned int hlen,
			    unsigned int plen)
{
	unsigned int mtu = incnn_l3_mtu(skb), room;
	s64 end;

	if (skb->len <= mtu || skb_is_gso(skb) || mtu <= hlen + 4)
		return plen;
	room = mtu - hlen;
	end = (pos + room) & ~3LL;
	if (end <= pos)
		return 0;
	__skb_trim(skb, hlen + (end - pos));
	/* the FIN follows the bytes left out: it comes with them later */
	tcp_hdr(skb)->fin = 0;
	incnn_l3_set_len(skb);
	incnn_tcp_fix_csum(skb);
	return end - pos;
}
