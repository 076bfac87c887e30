// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the receive path's reading of TCP options
 * (kmod/codec/tcpopt_scan.c: the capability option of SYNs and SYN-ACKs,
 * the frame option of data segments, EOL, TCP-MD5/AO) on hostile option
 * bytes. The input is the option space of one TCP header (at most 40
 * bytes; the rest is ignored), copied into an exact-size buffer so that
 * ASan catches any read past it. Checked:
 *  - the scan agrees with a reference reader written here on its own
 *    (every option listed first, then searched);
 *  - what it finds lies inside the options and is what it claims to be;
 *  - a capability option offers only known codecs, and only in its 8-byte
 *    form with our frame version and a zero reserved byte;
 *  - after the receive path's strip (the option overwritten with NOPs) the
 *    options read the same except that the next capability option, if
 *    any, comes later.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tcpopt_scan.h"
#include "codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct ref_opt {
	unsigned int off;
	uint8_t kind, len;
};

/* List the options as TCP reads them; returns how many, *eol */
static unsigned int ref_list(const uint8_t *p, unsigned int len,
			     struct ref_opt *o, bool *eol)
{
	unsigned int n = 0, i;

	*eol = false;
	for (i = 0; i < len;) {
		if (p[i] == INCNN_OPT_EOL) {
			*eol = true;
			break;
		}
		if (p[i] == INCNN_OPT_NOP) {
			i++;
			continue;
		}
		if (i + 1 >= len || p[i + 1] < 2 || i + p[i + 1] > len)
			break;
		o[n].off = i;
		o[n].kind = p[i];
		o[n].len = p[i + 1];
		n++;
		i += p[i + 1];
	}
	return n;
}

static void ref_scan(const uint8_t *p, unsigned int len,
		     struct incnn_tcpopt_scan *s)
{
	struct ref_opt o[40];
	unsigned int n = ref_list(p, len, o, &s->eol), k;

	s->cap = -1;
	s->frame = -1;
	s->sig = false;
	for (k = 0; k < n; k++) {
		unsigned int exid = o[k].len >= 4 ?
				    (unsigned int)p[o[k].off + 2] << 8 |
				    p[o[k].off + 3] : 0;

		if (o[k].kind == INCNN_OPT_MD5 || o[k].kind == INCNN_OPT_AO)
			s->sig = true;
		if (o[k].kind != INCNN_TCPOPT_KIND)
			continue;
		if (s->cap < 0 && exid == INCNN_TCPOPT_EXID &&
		    (o[k].len == 8 || o[k].len == 4))
			s->cap = (int)o[k].off;
		if (s->frame < 0 && exid == INCNN_TCPOPT_FRAME_EXID &&
		    o[k].len == 4)
			s->frame = (int)o[k].off;
	}
}

static bool same_scan(const struct incnn_tcpopt_scan *a,
		      const struct incnn_tcpopt_scan *b)
{
	return a->cap == b->cap && a->frame == b->frame && a->eol == b->eol &&
	       a->sig == b->sig;
}

static void check_cap(uint8_t *opt, unsigned int len,
		      const struct incnn_tcpopt_scan *s)
{
	const unsigned int known = (1u << (INCNN_CODEC_MAX + 1)) - 2;
	struct incnn_tcpopt_scan t;
	uint8_t *p = opt + s->cap;
	unsigned int codecs;

	if (p[0] != INCNN_TCPOPT_KIND || s->cap + p[1] > (int)len)
		abort();
	codecs = incnn_tcpopt_cap_codecs(p);
	if (codecs & ~known)
		abort();
	if (codecs && (p[1] != INCNN_TCPOPT_LEN || p[5] ||
		       !(p[4] & (1u << INCNN_FRAME_VERSION))))
		abort();
	/* the receive path's strip */
	memset(p, INCNN_OPT_NOP, p[1]);
	incnn_tcpopt_scan(opt, len, &t);
	if ((t.cap >= 0 && t.cap <= s->cap) || t.frame != s->frame ||
	    t.eol != s->eol || t.sig != s->sig)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int len = size > 40 ? 40 : (unsigned int)size;
	struct incnn_tcpopt_scan s, r;
	uint8_t *opt = malloc(len ? len : 1);

	memcpy(opt, data, len);
	incnn_tcpopt_scan(opt, len, &s);
	ref_scan(opt, len, &r);
	if (!same_scan(&s, &r))
		abort();
	if (s.frame >= 0 && (opt[s.frame] != INCNN_TCPOPT_KIND ||
			     s.frame + INCNN_TCPOPT_FRAME_LEN > (int)len))
		abort();
	if (s.cap >= 0)
		check_cap(opt, len, &s);
	free(opt);
	return 0;
}
