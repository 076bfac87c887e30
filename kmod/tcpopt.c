// SPDX-License-Identifier: GPL-2.0
/*
 * The capability option (RFC 6994 experimental option, see
 * uapi/linux/incnn.h): added to our SYN and SYN-ACK when rx is enabled,
 * stripped from the peer's before TCP sees it.
 */
#include <linux/tcp.h>
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "incnn.h"

/*
 * Append the option to a SYN or SYN-ACK without payload. The skb must be
 * writable and linear. Returns false when there is no room.
 */
bool incnn_tcpopt_add(struct sk_buff *skb)
{
	unsigned int thoff = skb_transport_offset(skb);
	struct tcphdr *th = tcp_hdr(skb);
	u8 *opt;

	if (th->doff * 4 + INCNN_TCPOPT_LEN > 60 ||
	    skb->len != thoff + th->doff * 4)
		return false;
	if (skb_tailroom(skb) < INCNN_TCPOPT_LEN &&
	    pskb_expand_head(skb, 0, INCNN_TCPOPT_LEN, GFP_ATOMIC))
		return false;
	opt = skb_put(skb, INCNN_TCPOPT_LEN);
	opt[0] = INCNN_TCPOPT_KIND;
	opt[1] = INCNN_TCPOPT_LEN;
	put_unaligned_be16(INCNN_TCPOPT_EXID, opt + 2);
	th = tcp_hdr(skb);
	th->doff++;
	incnn_ipv4_set_len(skb);
	incnn_tcp4_fix_csum(skb);
	return true;
}

/*
 * Find our option in a received SYN or SYN-ACK (writable, linear TCP
 * header) and overwrite it with NOPs. Returns whether it was there. The
 * caller fixes the checksum.
 */
bool incnn_tcpopt_strip(struct sk_buff *skb)
{
	struct tcphdr *th = tcp_hdr(skb);
	u8 *p = (u8 *)(th + 1), *end = (u8 *)th + th->doff * 4;

	while (p < end) {
		u8 kind = p[0], len;

		if (kind == TCPOPT_EOL)
			break;
		if (kind == TCPOPT_NOP) {
			p++;
			continue;
		}
		if (end - p < 2)
			break;
		len = p[1];
		if (len < 2 || len > end - p)
			break;
		if (kind == INCNN_TCPOPT_KIND && len == INCNN_TCPOPT_LEN &&
		    get_unaligned_be16(p + 2) == INCNN_TCPOPT_EXID) {
			memset(p, TCPOPT_NOP, INCNN_TCPOPT_LEN);
			return true;
		}
		p += len;
	}
	return false;
}
