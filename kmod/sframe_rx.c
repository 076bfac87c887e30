// SPDX-License-Identifier: GPL-2.0
/*
 * Superframes, ingress (frame version 2; docs/design.md "Superframes"):
 * a version-2 frame, checked as a version-1 one, restored into one skb
 * of page frags that TCP takes as it would take the same segments merged
 * by GRO.
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

/* Version 2 only on a flow whose offer listed it. */
int incnn_sframe_rx_check(const struct incnn_flow *f,
			  const struct incnn_frame_info *fi)
{
	if (fi->version == INCNN_FRAME_VERSION_2 &&
	    !(READ_ONCE(f->flags) & INCNN_FLOW_F_RX_V2))
		return INCNN_FRAME_ERR_VERSION;
	return INCNN_FRAME_OK;
}

/*
 * The receiver's bounds for a version-2 frame restoring @len bytes at
 * @seq: a full socket, and the range's end within the window it
 * advertised (rcv_wup + rcv_wnd; read without the socket lock, the
 * right edge only moves right, so a stale value only drops more).
 * Returns the segment size GRO would have recorded (the peer's MSS as
 * the socket knows it: its advertised MSS less the options in use), 0
 * if the frame must be dropped.
 */
static unsigned int sf_rx_bounds(struct net *net, const struct sk_buff *skb,
				 u32 seq, unsigned int len)
{
	const struct tcp_sock *tp;
	unsigned int gso = 0;
	struct sock *sk;
	u32 edge;

	sk = incnn_sk_established(net, skb);
	if (!sk)
		return 0;
	if (sk_fullsock(sk)) {
		tp = tcp_sk(sk);
		edge = READ_ONCE(tp->rcv_wup) + READ_ONCE(tp->rcv_wnd);
		if (!after(seq + len, edge))
			gso = READ_ONCE(tp->advmss) -
			      (READ_ONCE(tp->tcp_header_len) -
			       sizeof(struct tcphdr));
		if (gso < 8 || gso > 0xffff)
			gso = 0;
	}
	sock_gen_put(sk);
	return gso;
}

/*
 * Replace the payload (from @hlen, linear) by @len bytes of @data in
 * freshly allocated pages. Returns false if pages ran out (the skb is
 * then half-made: the caller drops it).
 */
static bool sf_rx_fill(struct sk_buff *skb, unsigned int hlen,
		       const u8 *data, unsigned int len)
{
	unsigned int off, n, i = 0;
	struct page *page;

	if (pskb_trim(skb, hlen) || skb_is_nonlinear(skb))
		return false;
	for (off = 0; off < len; off += n, i++) {
		n = min_t(unsigned int, len - off, PAGE_SIZE);
		if (i >= MAX_SKB_FRAGS)
			return false;
		page = alloc_page(GFP_ATOMIC | __GFP_NOWARN);
		if (!page)
			return false;
		memcpy(page_address(page), data + off, n);
		skb_add_rx_frag(skb, i, page, 0, n, PAGE_SIZE);
	}
	return true;
}

/*
 * Headers of the restored skb: the frame option NOPed, the original
 * DSCP, lengths, and the checksum state and GSO fields of a GRO skb
 * (tcp4_gro_complete(): CHECKSUM_PARTIAL over the pseudo-header, gso_size
 * one segment, gso_segs the segments it stands for).
 */
static void sf_rx_headers(struct sk_buff *skb, int opt, u8 dscp,
			  unsigned int len, unsigned int gso)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	const struct tcphdr *th = tcp_hdr(skb);

	memset(skb->data + opt, TCPOPT_NOP, INCNN_TCPOPT_FRAME_LEN);
	incnn_l3_set_dscp(skb, dscp);
	incnn_l3_set_len(skb);
	incnn_tcp_csum_partial(skb);
	if (len > gso) {
		sh->gso_size = gso;
		sh->gso_segs = DIV_ROUND_UP(len, gso);
		sh->gso_type = incnn_l3_gso_type(skb) |
			       (th->cwr ? SKB_GSO_TCP_ECN : 0);
	} else {
		sh->gso_size = 0;
		sh->gso_segs = 0;
		sh->gso_type = 0;
	}
}

/*
 * Restore a version-2 frame (checked by rx_frame(): checksum, offer,
 * header, codec, not wholly outside the window; the skb linear and
 * writable). @cap: the most bytes one IPv4 datagram holds after these
 * headers. Returns 0 if restored, an enum incnn_frame_error to drop and
 * count by the caller, or -1 if dropped and counted here.
 */
int incnn_sframe_rx(struct incnn_net *in, struct sk_buff *skb,
		    unsigned int hlen, int opt, unsigned int cap,
		    struct incnn_frame_info *fi)
{
	struct incnn_scratch *s = incnn_scratch_get();
	unsigned int plen = skb->len - hlen, gso;
	int err;

	if (fi->orig_len > cap)
		return INCNN_FRAME_ERR_LENGTH;
	gso = sf_rx_bounds(in->net, skb, ntohl(tcp_hdr(skb)->seq),
			   fi->orig_len);
	if (!gso) {
		incnn_stat_inc(in, INCNN_STAT_RX_DROP_V2_WINDOW);
		return -1;
	}
	err = incnn_frame_decode_fpu(skb->data + hlen, plen, s->buf, cap, fi);
	if (err)
		return err;
	if (skb_unclone(skb, GFP_ATOMIC) ||
	    !sf_rx_fill(skb, hlen, s->buf, fi->orig_len)) {
		incnn_stat_inc(in, INCNN_STAT_RX_DROP_ALLOC);
		return -1;
	}
	sf_rx_headers(skb, opt, fi->dscp, fi->orig_len, gso);

	incnn_stat_inc(in, INCNN_STAT_RX_FRAMES);
	incnn_stat_inc(in, INCNN_STAT_RX_FRAMES_V2);
	incnn_stat_add(in, INCNN_STAT_RX_BYTES_WIRE, plen);
	incnn_stat_add(in, INCNN_STAT_RX_BYTES_ORIG, fi->orig_len);
	incnn_stat_add(in, INCNN_STAT_RX_V2_BYTES_ORIG, fi->orig_len);
	return 0;
}
