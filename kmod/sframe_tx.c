// SPDX-License-Identifier: GPL-2.0
/*
 * Superframes, egress (frame version 2; docs/design.md "Superframes"):
 * the version bits of our capability option and of the peer's, and a
 * matched GSO skb compressed as a whole and sent as few wire packets,
 * each restoring one contiguous range of the stream.
 */
#include <linux/ip.h>
#include <linux/tcp.h>
#include <linux/skbuff.h>
#include <net/ip.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>
#include <net/tcp.h>

#include "incnn.h"
#include "codec/frame.h"

/*
 * Our SYN or SYN-ACK went out with the capability option (@offered, the
 * option last in the header, see incnn_tcpopt_add()): with superframes
 * on, list version 2 too. The flow remembers it for this incarnation
 * (cleared only by incnn_flow_reset()): the peer may answer any SYN we
 * sent, so a retransmitted SYN never takes version 2 back.
 */
void incnn_sframe_syn(const struct incnn_config *cfg, struct incnn_flow *f,
		      struct sk_buff *skb, bool offered)
{
	u8 *opt;

	if (!offered || !cfg->superframes || skb_is_nonlinear(skb) ||
	    skb->len < skb_transport_offset(skb) + sizeof(struct tcphdr) +
		       INCNN_TCPOPT_LEN)
		return;
	opt = skb_tail_pointer(skb) - INCNN_TCPOPT_LEN;
	if (opt[0] != INCNN_TCPOPT_KIND || opt[1] != INCNN_TCPOPT_LEN ||
	    get_unaligned_be16(opt + 2) != INCNN_TCPOPT_EXID)
		return;
	opt[4] |= BIT(INCNN_FRAME_VERSION_2);
	incnn_tcp_fix_csum(skb);
	incnn_flow_set(f, INCNN_FLOW_F_RX_V2);
}

/* The peer's offer was taken (f->lock held): does it decode version 2? */
void incnn_sframe_peer(struct incnn_flow *f, const struct incnn_offer *offer)
{
	if (offer->codecs && offer->v2)
		f->flags |= INCNN_FLOW_F_PEER_V2;
	else
		f->flags &= ~INCNN_FLOW_F_PEER_V2;
}

/*
 * May the payload [pos, pos + len) of a GSO skb at @seq go as a
 * superframe? Only if it starts after the anchor, for a float codec on
 * the grid at both ends (no cut float), and no float inside travels
 * raw: then the cut-float rules have nothing to do (see incnn_grid_cuts()), and
 * the skb advances the highest end sent as a segment would. f->lock held.
 */
static bool sf_eligible(struct incnn_flow *f, const struct incnn_codec *c,
			u32 seq, unsigned int len)
{
	s64 pos = incnn_flow_rel(f, seq), end = pos + len;
	unsigned int i;

	if (pos < 0)
		return false;
	if (c->floats && ((pos | end) & 3))
		return false;
	if (c->lossy) {
		if (f->raw_from < end)
			return false;
		for (i = 0; i < f->raw_n; i++)
			if (f->raw[i] + 4 > pos && f->raw[i] < end)
				return false;
	}
	if (end > f->tx_end)
		f->tx_end = end;
	return true;
}

/*
 * Encode payload bytes [off, off + len) as a version-2 frame after the
 * frames already planned. Returns the frame length (which may not fit),
 * or a negative errno (-E2BIG: not smaller). @h gets its value classes.
 */
static ssize_t sf_encode(struct incnn_sframe_plan *pl, struct incnn_scratch *s,
			 enum incnn_simd simd, unsigned int off,
			 unsigned int len, struct incnn_hist *h)
{
	memset(h, 0, sizeof(*h));
	return incnn_frame_encode_ver(simd, INCNN_FRAME_VERSION_2, pl->c,
				      pl->param, pl->dscp, s->sframe + off,
				      len, 0, s->buf + pl->wire,
				      sizeof(s->buf) - pl->wire, s->codec, h);
}

/* Does a frame of @n bytes for @len bytes fit one wire packet? */
static bool sf_fits(const struct incnn_sframe_plan *pl, ssize_t n, unsigned int len)
{
	return n > 0 && n + INCNN_TCPOPT_FRAME_LEN <= pl->room &&
	       n + INCNN_TCPOPT_FRAME_LEN < len;
}

/*
 * The chunk length that a ratio of @n frame bytes for @len predicts to
 * fill a wire packet, with 1/16 to spare: a multiple of 4, at least 4.
 */
static unsigned int sf_guess(const struct incnn_sframe_plan *pl, unsigned int len,
			     ssize_t n)
{
	u64 t = (u64)len * (pl->room - INCNN_TCPOPT_FRAME_LEN) /
		(n + INCNN_TCPOPT_FRAME_LEN);

	t -= t / 16;
	return clamp_t(u64, t & ~3ull, 4, 0xfffc);
}

/*
 * Cut the payload (@len bytes in s->sframe) into as few chunks as fit:
 * chunks of the length @target (0: the whole payload), then of the
 * length the last chunk's ratio predicts; a chunk too long is shortened
 * (by its ratio, or halved) until it fits. Chunk boundaries are
 * multiples of 4 from the payload's start (on the float grid). Returns
 * false if a chunk of one segment (@gso bytes) or less does not fit, or
 * more than @max chunks would be needed.
 */
static bool sf_plan(struct incnn_sframe_plan *pl, struct incnn_scratch *s,
		    enum incnn_simd simd, unsigned int len, unsigned int max,
		    unsigned int gso, unsigned int target)
{
	unsigned int off = 0, try, i;
	struct incnn_hist h;
	ssize_t n;

	if (!target)
		target = len;
	max = min_t(unsigned int, max, INCNN_SFRAME_CHUNKS);
	while (off < len) {
		try = min(target, len - off);
		for (;;) {
			n = sf_encode(pl, s, simd, off, try, &h);
			if (sf_fits(pl, n, try))
				break;
			if (try <= gso)
				return false;
			try = n > 0 ? min(sf_guess(pl, try, n), try - 4) :
				      max_t(unsigned int, (try / 2) & ~3u, 4);
		}
		if (pl->n >= max)
			return false;
		pl->ch[pl->n++] = (struct incnn_sframe_chunk){ off, try, pl->wire, n };
		pl->wire += n;
		for (i = 0; i < ARRAY_SIZE(h.n); i++)
			pl->hist.n[i] += h.n[i];
		off += try;
		target = sf_guess(pl, try, n);
	}
	return true;
}

/*
 * Make segment @seg (a copy of the skb's headers and some payload) the
 * wire packet of chunk @ch: payload replaced by the frame option and the
 * frame, sequence number the chunk's start, the wire DSCP.
 */
static int sf_put(const struct incnn_config *cfg, struct sk_buff *seg,
		  u32 seq, const struct incnn_sframe_chunk *ch, const u8 *frame)
{
	unsigned int hlen = skb_transport_offset(seg) + tcp_hdr(seg)->doff * 4;
	unsigned int need = INCNN_TCPOPT_FRAME_LEN + ch->flen;
	struct tcphdr *th;
	u8 *p;

	if (skb_ensure_writable(seg, hlen) || pskb_trim(seg, hlen))
		return -ENOMEM;
	if (skb_tailroom(seg) < need &&
	    pskb_expand_head(seg, 0, need - skb_tailroom(seg), GFP_ATOMIC))
		return -ENOMEM;
	p = skb_put(seg, need);
	p[0] = INCNN_TCPOPT_KIND;
	p[1] = INCNN_TCPOPT_FRAME_LEN;
	put_unaligned_be16(INCNN_TCPOPT_FRAME_EXID, p + 2);
	memcpy(p + INCNN_TCPOPT_FRAME_LEN, frame, ch->flen);
	th = tcp_hdr(seg);
	th->doff += INCNN_TCPOPT_FRAME_LEN / 4;
	th->seq = htonl(seq + ch->off);
	incnn_l3_set_dscp(seg, cfg->wire_dscp << 2);
	incnn_l3_set_len(seg);
	incnn_tcp_fix_csum(seg);
	return 0;
}

/*
 * Rewrite the first pl->n segments of @segs into the planned wire
 * packets (the last one with the PSH and FIN of the last segment) and
 * free the others. On failure every segment is freed and *segs is NULL:
 * nothing leaves, and TCP sends the skb again.
 */
static int sf_rewrite(const struct incnn_config *cfg, struct sk_buff **segs,
		      const struct incnn_sframe_plan *pl, struct incnn_scratch *s,
		      u32 seq)
{
	struct sk_buff *seg = *segs, *last = *segs, *next;
	bool fin, psh;
	unsigned int i;
	int err = 0;

	while (last->next)
		last = last->next;
	fin = tcp_hdr(last)->fin;
	psh = tcp_hdr(last)->psh;
	for (i = 0; i < pl->n && !err; i++, seg = seg->next)
		err = sf_put(cfg, seg, seq, &pl->ch[i], s->buf + pl->ch[i].fpos);
	if (err) {
		kfree_skb_list(*segs);
		*segs = NULL;
		return err;
	}
	last = *segs;
	for (i = 1; i < pl->n; i++)
		last = last->next;
	tcp_hdr(last)->fin = fin;
	tcp_hdr(last)->psh = psh;
	incnn_tcp_fix_csum(last);
	next = last->next;
	last->next = NULL;
	while (next) {		/* not needed: not a drop */
		seg = next;
		next = seg->next;
		skb_mark_not_on_list(seg);
		consume_skb(seg);
	}
	return 0;
}

/*
 * Count a GSO skb of @len payload bytes sent as @pl: its wire packets
 * are the marked segments seen (tx_segs), every one framed.
 */
static void sf_count(struct incnn_net *in, struct incnn_flow *f,
		     const struct incnn_sframe_plan *pl, unsigned int len)
{
	incnn_stat_add(in, INCNN_STAT_TX_SEGS, pl->n);
	incnn_stat_add(in, INCNN_STAT_TX_BYTES, len);
	incnn_stat_add(in, INCNN_STAT_TX_FRAMED, pl->n);
	incnn_stat_add(in, INCNN_STAT_TX_WIRE_V2, pl->n);
	incnn_stat_inc(in, INCNN_STAT_TX_SUPERFRAMES);
	incnn_stat_add(in, INCNN_STAT_TX_BYTES_ORIG, len);
	incnn_stat_add(in, INCNN_STAT_TX_BYTES_WIRE, pl->wire);
	incnn_stats_codec_n(in, pl->c->id, pl->n, len, pl->wire, &pl->hist);
	spin_lock(&f->lock);
	f->bytes_orig += len;
	f->bytes_wire += pl->wire;
	spin_unlock(&f->lock);
}

/*
 * A GSO skb of a flow that frames toward its peer, already segmented
 * into @segs (inside the caller's FPU section @simd): if the peer decodes
 * version 2 and superframes are on, compress its payload as a whole and
 * turn the first segments into its wire packets. Returns false, having
 * changed nothing, if the skb must take the per-packet path; true if
 * *segs now holds what to send (NULL: nothing, an error was counted).
 */
bool incnn_sframe_tx(struct incnn_net *in, const struct incnn_config *cfg,
		     struct incnn_flow *f, struct sk_buff *skb,
		     struct sk_buff **segs, enum incnn_simd simd)
{
	const struct incnn_codec *c = incnn_codec_get(f->rule.codec);
	struct incnn_scratch *s = incnn_scratch_get();
	unsigned int hlen, len, k = 0, gso = skb_shinfo(skb)->gso_size;
	struct incnn_sframe_plan *pl = &s->sframe_plan;
	struct sk_buff *seg;
	bool ok;
	u32 seq;

	if (!cfg->superframes || !c || !*segs ||
	    !(READ_ONCE(f->flags) & INCNN_FLOW_F_PEER_V2) ||
	    !incnn_tcpopt_frame_room(skb))
		return false;
	hlen = skb_transport_offset(skb) + tcp_hdr(skb)->doff * 4;
	len = skb->len - hlen;
	seq = ntohl(tcp_hdr(skb)->seq);
	if (len <= gso || len > sizeof(s->sframe) ||
	    gso <= INCNN_TCPOPT_FRAME_LEN + INCNN_FRAME_HDR_LEN)
		return false;
	for (seg = *segs; seg; seg = seg->next)
		k++;
	if (skb_copy_bits(skb, hlen, s->sframe, len))
		return false;

	memset(pl, 0, sizeof(*pl));
	pl->c = c;
	pl->param = f->rule.param;
	pl->dscp = f->dscp << 2;
	pl->room = gso;
	if (!sf_plan(pl, s, simd, len, k, gso, READ_ONCE(f->sf_target)))
		return false;
	WRITE_ONCE(f->sf_target, pl->ch[0].len);

	spin_lock(&f->lock);
	ok = f->rule.codec == c->id && sf_eligible(f, c, seq, len);
	spin_unlock(&f->lock);
	if (!ok)
		return false;
	if (sf_rewrite(cfg, segs, pl, s, seq)) {
		incnn_stat_inc(in, INCNN_STAT_TX_ERRORS);
		return true;
	}
	sf_count(in, f, pl, len);
	return true;
}
