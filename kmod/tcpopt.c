// SPDX-License-Identifier: GPL-2.0
/*
 * incnn's two TCP options (RFC 6994 experimental option kind 253, see
 * uapi/linux/incnn.h): the capability option, added to our SYN and
 * SYN-ACK when compression can happen (docs/wire-format.md) and stripped
 * from the peer's before TCP sees it, and the frame option that marks a
 * framed data segment. A segment signed with TCP-MD5 or TCP-AO is never
 * changed: the signature covers its header length, options and payload.
 */
#include <linux/module.h>
#include <linux/tcp.h>
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "incnn.h"
#include "codec/frame.h"
#include "codec/tcpopt_scan.h"

/*
 * The codecs this host offers to decode (bit c: codec id c), of those
 * built in. Read at each handshake: a flow keeps what it offered.
 */
static ushort rx_codecs = 0xffff;
module_param(rx_codecs, ushort, 0644);
MODULE_PARM_DESC(rx_codecs,
		 "Bit mask of codec ids offered to peers for decoding (default: all)");

u16 incnn_tcpopt_codecs(void)
{
	u16 mask = 0;
	int id;

	for (id = 1; id <= INCNN_CODEC_MAX; id++)
		if (incnn_codec_get(id))
			mask |= BIT(id);
	return mask & READ_ONCE(rx_codecs);
}

/*
 * Append the capability option offering @codecs to a SYN or SYN-ACK
 * without payload. Returns 0, -ENOSPC when the segment has no room for
 * it (or carries data), -ENOMEM when the skb could not be made writable
 * or grown.
 */
int incnn_tcpopt_add(struct sk_buff *skb, u16 codecs)
{
	unsigned int thoff = skb_transport_offset(skb);
	struct tcphdr *th = tcp_hdr(skb);
	u8 *opt;

	if (!codecs || th->doff * 4 + INCNN_TCPOPT_LEN > 60 ||
	    skb->len != thoff + th->doff * 4)
		return -ENOSPC;
	if (skb_ensure_writable(skb, skb->len))
		return -ENOMEM;
	th = tcp_hdr(skb);
	if (skb_tailroom(skb) < INCNN_TCPOPT_LEN &&
	    pskb_expand_head(skb, 0, INCNN_TCPOPT_LEN, GFP_ATOMIC))
		return -ENOMEM;
	opt = skb_put(skb, INCNN_TCPOPT_LEN);
	opt[0] = INCNN_TCPOPT_KIND;
	opt[1] = INCNN_TCPOPT_LEN;
	put_unaligned_be16(INCNN_TCPOPT_EXID, opt + 2);
	opt[4] = BIT(INCNN_FRAME_VERSION);
	opt[5] = 0;
	put_unaligned_be16(codecs, opt + 6);
	th = tcp_hdr(skb);
	th->doff += INCNN_TCPOPT_LEN / 4;
	incnn_l3_set_len(skb);
	incnn_tcp_fix_csum(skb);
	return 0;
}

/* incnn_tcpopt_scan() of a linear TCP header's options */
static void tcpopt_scan(const struct tcphdr *th, struct incnn_tcpopt_scan *s)
{
	incnn_tcpopt_scan((const u8 *)(th + 1), th->doff * 4 - sizeof(*th), s);
}

/*
 * Is the segment (linear TCP header) signed with TCP-MD5 (RFC 2385) or
 * TCP-AO (RFC 5925)? Then nothing of it may change.
 */
bool incnn_tcpopt_signed(const struct tcphdr *th)
{
	struct incnn_tcpopt_scan s;

	if (th->doff <= 5)
		return false;
	tcpopt_scan(th, &s);
	return s.sig;
}

/*
 * Find the peer's capability option in a received SYN or SYN-ACK
 * (writable, linear TCP header), read it into @offer and overwrite it
 * with NOPs. The caller fixes the checksum if offer->seen. An option of
 * the earlier 4-byte form, of no frame version we decode, or with
 * reserved bits set offers nothing. A signed segment is left as it is
 * and offers nothing.
 */
void incnn_tcpopt_strip(struct sk_buff *skb, struct incnn_offer *offer)
{
	struct tcphdr *th = tcp_hdr(skb);
	struct incnn_tcpopt_scan s;
	u8 *p;

	offer->seen = false;
	offer->codecs = 0;
	offer->v2 = false;
	tcpopt_scan(th, &s);
	if (s.cap < 0 || s.sig)
		return;
	p = (u8 *)(th + 1) + s.cap;
	offer->seen = true;
	offer->codecs = incnn_tcpopt_cap_codecs(p);
	/* superframes (sframe_*.c): it also decodes frame version 2 */
	offer->v2 = offer->codecs && (p[4] & BIT(INCNN_FRAME_VERSION_2));
	memset(p, TCPOPT_NOP, p[1]);
}

/*
 * The offset from skb->data of the frame option of a segment whose TCP
 * header is linear, or -1.
 */
int incnn_tcpopt_frame_find(const struct sk_buff *skb)
{
	int at = incnn_tcpopt_frame_at(tcp_hdr(skb));

	return at < 0 ? -1 : skb_transport_offset(skb) + at;
}

/* Where the frame option is from the start of @th (linear), or -1. */
int incnn_tcpopt_frame_at(const struct tcphdr *th)
{
	struct incnn_tcpopt_scan s;

	if (th->doff <= 5)
		return -1;
	tcpopt_scan(th, &s);
	return s.frame < 0 ? -1 : sizeof(*th) + s.frame;
}

/*
 * Can the frame option be appended to the segment's TCP header: room
 * left, and no EOL that would hide it from the receiver?
 */
bool incnn_tcpopt_frame_room(const struct sk_buff *skb)
{
	const struct tcphdr *th = tcp_hdr(skb);
	struct incnn_tcpopt_scan s;

	if (th->doff * 4 + INCNN_TCPOPT_FRAME_LEN > 60)
		return false;
	tcpopt_scan(th, &s);
	return !s.eol && !s.sig;
}
