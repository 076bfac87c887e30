// SPDX-License-Identifier: GPL-2.0
/*
 * incnn's two TCP options (RFC 6994 experimental option kind 253, see
 * uapi/linux/incnn.h): the capability option, added to our SYN and
 * SYN-ACK when rx is enabled and stripped from the peer's before TCP
 * sees it, and the frame option that marks a framed data segment.
 */
#include <linux/module.h>
#include <linux/tcp.h>
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "incnn.h"
#include "codec/frame.h"

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
 * without payload. The skb must be writable and linear. Returns false
 * when there is no room.
 */
bool incnn_tcpopt_add(struct sk_buff *skb, u16 codecs)
{
	unsigned int thoff = skb_transport_offset(skb);
	struct tcphdr *th = tcp_hdr(skb);
	u8 *opt;

	if (!codecs || th->doff * 4 + INCNN_TCPOPT_LEN > 60 ||
	    skb->len != thoff + th->doff * 4)
		return false;
	if (skb_tailroom(skb) < INCNN_TCPOPT_LEN &&
	    pskb_expand_head(skb, 0, INCNN_TCPOPT_LEN, GFP_ATOMIC))
		return false;
	opt = skb_put(skb, INCNN_TCPOPT_LEN);
	opt[0] = INCNN_TCPOPT_KIND;
	opt[1] = INCNN_TCPOPT_LEN;
	put_unaligned_be16(INCNN_TCPOPT_EXID, opt + 2);
	opt[4] = BIT(INCNN_FRAME_VERSION);
	opt[5] = 0;
	put_unaligned_be16(codecs, opt + 6);
	th = tcp_hdr(skb);
	th->doff += INCNN_TCPOPT_LEN / 4;
	incnn_ipv4_set_len(skb);
	incnn_tcp4_fix_csum(skb);
	return true;
}

/*
 * Walk the options of a TCP header (linear) and return the offset from
 * the header of the first of @kind/@len/@exid, -1 if none; with @exid 0
 * any capability option form matches. *eol is set if an EOL ends them.
 */
static int tcpopt_find(const struct tcphdr *th, u8 len_want, u16 exid,
		       bool *eol)
{
	const u8 *p = (const u8 *)(th + 1), *end = (const u8 *)th + th->doff * 4;

	*eol = false;
	while (p < end) {
		u8 kind = p[0], len;

		if (kind == TCPOPT_EOL) {
			*eol = true;
			break;
		}
		if (kind == TCPOPT_NOP) {
			p++;
			continue;
		}
		if (end - p < 2)
			break;
		len = p[1];
		if (len < 2 || len > end - p)
			break;
		if (kind == INCNN_TCPOPT_KIND && len >= 4 &&
		    (exid ? len == len_want &&
			    get_unaligned_be16(p + 2) == exid :
			    get_unaligned_be16(p + 2) == INCNN_TCPOPT_EXID &&
			    (len == INCNN_TCPOPT_LEN ||
			     len == INCNN_TCPOPT_LEN_V1)))
			return p - (const u8 *)th;
		p += len;
	}
	return -1;
}

/*
 * Find the peer's capability option in a received SYN or SYN-ACK
 * (writable, linear TCP header), read it into @offer and overwrite it
 * with NOPs. The caller fixes the checksum if offer->seen. An option of
 * the earlier 4-byte form, of no frame version we decode, or with
 * reserved bits set offers nothing.
 */
void incnn_tcpopt_strip(struct sk_buff *skb, struct incnn_offer *offer)
{
	struct tcphdr *th = tcp_hdr(skb);
	bool eol;
	int off;
	u8 *p;

	offer->seen = false;
	offer->codecs = 0;
	offer->v2 = false;
	off = tcpopt_find(th, 0, 0, &eol);
	if (off < 0)
		return;
	p = (u8 *)th + off;
	offer->seen = true;
	if (p[1] == INCNN_TCPOPT_LEN && (p[4] & BIT(INCNN_FRAME_VERSION)) &&
	    !p[5])
		offer->codecs = get_unaligned_be16(p + 6) &
				GENMASK(INCNN_CODEC_MAX, 1);
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
	const struct tcphdr *th = tcp_hdr(skb);
	bool eol;
	int off;

	if (th->doff <= 5)
		return -1;
	off = tcpopt_find(th, INCNN_TCPOPT_FRAME_LEN, INCNN_TCPOPT_FRAME_EXID,
			  &eol);
	return off < 0 ? -1 : skb_transport_offset(skb) + off;
}

/*
 * Can the frame option be appended to the segment's TCP header: room
 * left, and no EOL that would hide it from the receiver?
 */
bool incnn_tcpopt_frame_room(const struct sk_buff *skb)
{
	const struct tcphdr *th = tcp_hdr(skb);
	bool eol;

	if (th->doff * 4 + INCNN_TCPOPT_FRAME_LEN > 60)
		return false;
	tcpopt_find(th, INCNN_TCPOPT_FRAME_LEN, INCNN_TCPOPT_FRAME_EXID, &eol);
	return !eol;
}
