// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Reading incnn's TCP options: see tcpopt_scan.h.
 */
#include "tcpopt_scan.h"
#include "codec.h"

static bool opt_is_cap(const u8 *p, u8 len)
{
	return (len == INCNN_TCPOPT_LEN || len == INCNN_TCPOPT_LEN_V1) &&
	       get_unaligned_be16(p + 2) == INCNN_TCPOPT_EXID;
}

static bool opt_is_frame(const u8 *p, u8 len)
{
	return len == INCNN_TCPOPT_FRAME_LEN &&
	       get_unaligned_be16(p + 2) == INCNN_TCPOPT_FRAME_EXID;
}

void incnn_tcpopt_scan(const u8 *opt, unsigned int len,
		       struct incnn_tcpopt_scan *s)
{
	unsigned int i = 0;

	s->cap = -1;
	s->frame = -1;
	s->eol = false;
	s->sig = false;
	while (i < len) {
		u8 kind = opt[i], olen;

		if (kind == INCNN_OPT_EOL) {
			s->eol = true;
			return;
		}
		if (kind == INCNN_OPT_NOP) {
			i++;
			continue;
		}
		if (len - i < 2)
			return;
		olen = opt[i + 1];
		if (olen < 2 || olen > len - i)
			return;
		if (kind == INCNN_OPT_MD5 || kind == INCNN_OPT_AO)
			s->sig = true;
		if (kind == INCNN_TCPOPT_KIND && olen >= 4) {
			if (s->cap < 0 && opt_is_cap(opt + i, olen))
				s->cap = i;
			if (s->frame < 0 && opt_is_frame(opt + i, olen))
				s->frame = i;
		}
		i += olen;
	}
}

u16 incnn_tcpopt_cap_codecs(const u8 *p)
{
	if (p[1] != INCNN_TCPOPT_LEN || !(p[4] & (1u << INCNN_FRAME_VERSION)) ||
	    p[5])
		return 0;
	/* bit 0 (no codec) and unknown codec ids are ignored */
	return get_unaligned_be16(p + 6) & ((1u << (INCNN_CODEC_MAX + 1)) - 2);
}
