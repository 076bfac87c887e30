/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Reading the TCP options incnn cares about (uapi/linux/incnn.h,
 * docs/wire-format.md): its capability and frame options, an EOL, and a
 * TCP-MD5 or TCP-AO signature. Shared by the module (kmod/tcpopt.c) and
 * the fuzzer (selftests/fuzz/fuzz_tcpopt.c).
 */
#ifndef _INCNN_TCPOPT_SCAN_H
#define _INCNN_TCPOPT_SCAN_H

#include "compat.h"

/* TCP option kinds (RFC 793, RFC 2385, RFC 5925) */
#define INCNN_OPT_EOL	0
#define INCNN_OPT_NOP	1
#define INCNN_OPT_MD5	19
#define INCNN_OPT_AO	29

struct incnn_tcpopt_scan {
	int cap;	/* offset of the first capability option (any form), or -1 */
	int frame;	/* offset of the first frame option, or -1 */
	bool eol;	/* an EOL ends the options */
	bool sig;	/* a TCP-MD5 or TCP-AO option */
};

/*
 * Walk @len bytes of TCP options (those after the 20-byte header) up to
 * an EOL or the first malformed option (what follows it is not read, as
 * TCP reads it).
 */
void incnn_tcpopt_scan(const u8 *opt, unsigned int len,
		       struct incnn_tcpopt_scan *s);

/*
 * The codecs (bits 1..INCNN_CODEC_MAX) the capability option at @p offers:
 * 0 for the earlier 4-byte form, no frame version we decode, or reserved
 * bits set. @p is an option incnn_tcpopt_scan() found (p[1] bytes).
 */
u16 incnn_tcpopt_cap_codecs(const u8 *p);

#endif /* _INCNN_TCPOPT_SCAN_H */
