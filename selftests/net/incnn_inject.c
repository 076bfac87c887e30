// SPDX-License-Identifier: GPL-2.0
/*
 * incnn_inject: malformed-frame injection for the datapath tests.
 *
 *   incnn_inject -c ADDR -p PORT [-T TOS] [-w WIRE_TOS] [-n RANDOM]
 *                [-s SEED] [-M MSS] [-W | -S COUNT] IN
 *
 * Opens a TCP connection to ADDR:PORT marked with TOS (default 0x28)
 * before connect, sends the first half of IN (a multiple of 4 bytes),
 * waits until the peer acknowledged it (SIOCOUTQ == 0), then injects
 * crafted TCP segments with the connection's own addresses, ports and
 * next sequence number, the wire ToS (default 0x2c) and a bad frame as
 * payload, through a raw socket (IPPROTO_RAW: the IP header is ours).
 * Finally it sends the rest of IN on the connection and waits for the
 * peer to close. ADDR is an IPv4 or an IPv6 address (fd00:66:1::2): the
 * connection and the crafted packets are of its family (IPv6: the TOS is
 * the Traffic Class, the TCP checksum covers the IPv6 pseudo-header).
 *
 * The frames are: fixed cases for every drop reason (short, version,
 * codec, param, length - including a valid frame whose 65535 restored
 * bytes do not fit in an IP datagram - body), RANDOM random frames (valid-looking
 * header, random body) and RANDOM random payloads, each classified with
 * the userspace copy of the receiver's decoder (incnn_frame_decode(),
 * the same code as the module's); a random frame the decoder accepts is
 * not injected. One valid frame goes out with a bad TCP checksum
 * (rx_drop_csum). Every frame carries the frame option (the receiver
 * parses nothing else). -M: the receiver's advertised MSS, the most a
 * frame may restore (default: what fits in an IP datagram).
 *
 * -W (window) instead injects valid frames the receiver must not decode:
 * one far in the past and one far beyond the receive window
 * (rx_out_of_window: emptied, TCP answers them), and one at the next
 * sequence number whose orig_len exceeds -M (rx_drop_length).
 *
 * -S COUNT (spoof) instead injects COUNT SYN-ACKs from the peer to the
 * connection, established by then, each with the capability option
 * offering every codec, in the current and the earlier 4-byte form: two
 * acknowledging our SYN, the others with random numbers. The sender
 * must not believe any of them. Then 5 valid frames at the next sequence
 * number, with the frame option: the peer, which did not offer rx, must
 * drop them (rx_drop_not_offered).
 *
 * -V OFFERED (version 2) instead injects version-2 frames (superframes)
 * the receiver must drop: one whose orig_len (65535) does not fit an
 * IP datagram (rx_drop_length), one at the next sequence number
 * restoring 60000 bytes, past a receive window smaller than that
 * (rx_drop_v2_window; the receiver's tcp_rmem must keep it so), and one
 * whose body does not decode (rx_drop_body). With OFFERED 0 the
 * receiver did not offer version 2 and drops each as rx_drop_version.
 *
 * -X COUNT (IPv6 only) instead injects COUNT valid frames at the next
 * sequence number behind an extension header (a hop-by-hop header, then
 * a destination options header, alternating; each 8 bytes, PadN): no
 * incnn sender frames such a segment, and the receiver must drop every
 * one (rx_drop_exthdr) instead of handing the frame to TCP undecoded.
 *
 *   incnn_inject -Y COUNT -c ADDR -p PORT [-F A.B]
 *
 * SYN spray: COUNT SYNs to ADDR:PORT carrying incnn's capability option,
 * from random spoofed sources in A.B.0.0/16 (default 10.99; to an IPv6
 * ADDR: in fd00:99::/64) and random ports, through the raw socket;
 * prints "syns COUNT".
 *
 * Prints, on stdout, one line per counter the receiver must have
 * incremented: "rx_drop_short 3", ... "rx_frames 1", and "injected N".
 * Exit status 0 on success, 1 on a failure (one line on stderr).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sockutil.h"

#include <linux/incnn.h>
#include "frame.h"

#ifndef TCP_REPAIR
#define TCP_REPAIR		19
#define TCP_REPAIR_QUEUE	20
#define TCP_QUEUE_SEQ		21
#endif
#ifndef TCP_SEND_QUEUE
#define TCP_RECV_QUEUE		1
#define TCP_SEND_QUEUE		2
#endif

#define SCRATCH_LEN	(65536 + 64)

static const char *const reason_name[__INCNN_FRAME_ERR_MAX] = {
	[INCNN_FRAME_OK] = "rx_frames",
	[INCNN_FRAME_ERR_SHORT] = "rx_drop_short",
	[INCNN_FRAME_ERR_VERSION] = "rx_drop_version",
	[INCNN_FRAME_ERR_CODEC] = "rx_drop_codec",
	[INCNN_FRAME_ERR_PARAM] = "rx_drop_param",
	[INCNN_FRAME_ERR_LENGTH] = "rx_drop_length",
	[INCNN_FRAME_ERR_BODY] = "rx_drop_body",
};

static unsigned long expect[__INCNN_FRAME_ERR_MAX];
static unsigned long expect_csum, injected, skipped;

static int raw_fd;
static unsigned int recv_cap;		/* see main() */
static unsigned int isn;
static struct xaddr local, peer;
static int ext_hdr = -1;		/* -X: the frames' extension header */
static unsigned int seq_next;
static unsigned int ack_next;	/* what the peer sends next */
static int wire_tos = INCNN_DEFAULT_WIRE_TOS;
static unsigned short ip_id = 1;

static u8 decode_buf[SCRATCH_LEN];
static u8 scratch[INCNN_CODEC_SCRATCH] __attribute__((aligned(8)));

static int fail(const char *what)
{
	fprintf(stderr, "incnn_inject: %s: %s\n", what, strerror(errno));
	return 1;
}

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;

static unsigned int rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned int)(rng_state >> 11);
}

static unsigned short csum_fold(unsigned long sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (unsigned short)~sum;
}

static unsigned long csum_add(unsigned long sum, const u8 *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	if (len & 1)
		sum += p[len - 1] << 8;
	return sum;
}

static int is_v6(const struct xaddr *a)
{
	return a->u.sa.sa_family == AF_INET6;
}

/*
 * The IPv6 header, at @pkt, of a TCP segment of @tlen bytes (@ext >= 0:
 * behind an 8-byte extension header of that type, PadN); returns the
 * length of both. *@sum: the sum of the TCP pseudo-header.
 */
static size_t ip6_header(u8 *pkt, const struct xaddr *from,
			 const struct xaddr *to, u8 tclass, size_t tlen,
			 int ext, unsigned long *sum)
{
	struct ip6_hdr *h = (struct ip6_hdr *)pkt;
	size_t elen = ext >= 0 ? 8 : 0;
	u8 pseudo[40];

	memset(pkt, 0, 40 + elen);
	h->ip6_flow = htonl(6u << 28 | (unsigned int)tclass << 20);
	h->ip6_plen = htons(elen + tlen);
	h->ip6_nxt = ext >= 0 ? ext : IPPROTO_TCP;
	h->ip6_hlim = 64;
	h->ip6_src = from->u.v6.sin6_addr;
	h->ip6_dst = to->u.v6.sin6_addr;
	if (elen) {
		pkt[40] = IPPROTO_TCP;	/* next header; length 0: 8 bytes */
		pkt[42] = 1;		/* PadN, 4 bytes of padding */
		pkt[43] = 4;
	}
	memcpy(pseudo, &h->ip6_src, 16);
	memcpy(pseudo + 16, &h->ip6_dst, 16);
	memset(pseudo + 32, 0, 8);
	pseudo[34] = tlen >> 8;
	pseudo[35] = tlen & 0xff;
	pseudo[39] = IPPROTO_TCP;
	*sum = csum_add(0, pseudo, sizeof(pseudo));
	return 40 + elen;
}

/*
 * The IP header of the family of @from, at @pkt, of a TCP segment of
 * @tlen bytes (@ext: IPv6 only, see ip6_header()); returns its length.
 * *@sum: the sum of the TCP pseudo-header.
 */
static size_t ip_header(u8 *pkt, const struct xaddr *from,
			const struct xaddr *to, u8 tos, size_t tlen, int ext,
			unsigned long *sum)
{
	struct iphdr *iph = (struct iphdr *)pkt;
	u8 pseudo[12];

	if (is_v6(from))
		return ip6_header(pkt, from, to, tos, tlen, ext, sum);
	memset(pkt, 0, 20);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = tos;
	iph->tot_len = htons(20 + tlen);
	iph->id = htons(ip_id++);
	iph->frag_off = htons(IP_DF);
	iph->ttl = 64;
	iph->protocol = IPPROTO_TCP;
	iph->saddr = from->u.v4.sin_addr.s_addr;
	iph->daddr = to->u.v4.sin_addr.s_addr;
	memcpy(pseudo, &iph->saddr, 4);
	memcpy(pseudo + 4, &iph->daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_TCP;
	pseudo[10] = tlen >> 8;
	pseudo[11] = tlen & 0xff;
	*sum = csum_add(0, pseudo, sizeof(pseudo));
	return 20;
}

/* Send the @len bytes of @pkt, IP header included, to @to. */
static int send_raw(const u8 *pkt, size_t len, const struct xaddr *to)
{
	struct xaddr dst = *to;

	/* a raw IPv6 socket takes the port as the protocol: none */
	if (is_v6(&dst))
		dst.u.v6.sin6_port = 0;
	else
		dst.u.v4.sin_port = 0;
	if (sendto(raw_fd, pkt, len, 0, &dst.u.sa, dst.len) != (ssize_t)len)
		return fail("sendto (raw)");
	return 0;
}

/* The capability option (8-byte form; @v1: the 4-byte form, 2 NOPs). */
static void cap_option(u8 *opt, int v1)
{
	opt[0] = INCNN_TCPOPT_KIND;
	opt[1] = v1 ? INCNN_TCPOPT_LEN_V1 : INCNN_TCPOPT_LEN;
	opt[2] = INCNN_TCPOPT_EXID >> 8;
	opt[3] = INCNN_TCPOPT_EXID & 0xff;
	opt[4] = 1 << INCNN_FRAME_VERSION;
	opt[5] = 0;
	opt[6] = 0xff;
	opt[7] = 0xfe;
	if (v1)
		memset(opt + 4, 1, 4);
}

/*
 * Send one segment: from us to the peer with payload @pl and the frame
 * option (@synack 0; behind the extension header ext_hdr if set), or
 * from the peer to us as a SYN-ACK with the capability option and no
 * payload (@synack 2: 8-byte form, 3: the 4-byte form of earlier
 * releases; @ack acknowledges). @bad_csum corrupts the checksum.
 */
static int send_seg(const u8 *pl, size_t len, unsigned int seq,
		    unsigned int ack, int synack, int bad_csum)
{
	static u8 pkt[48 + 28 + 65536];
	const struct xaddr *from = synack ? &peer : &local;
	const struct xaddr *to = synack ? &local : &peer;
	size_t olen = synack ? 8 : INCNN_TCPOPT_FRAME_LEN;
	size_t tlen = 20 + olen + len, hl;
	unsigned long sum;
	struct tcphdr *th;
	u8 *opt;

	hl = ip_header(pkt, from, to, synack ? 0 : wire_tos, tlen,
		       synack ? -1 : ext_hdr, &sum);
	th = (struct tcphdr *)(pkt + hl);
	opt = pkt + hl + 20;
	memset(th, 0, 20 + olen);
	th->source = from->u.v4.sin_port;	/* sin6_port: the same place */
	th->dest = to->u.v4.sin_port;
	th->seq = htonl(seq);
	th->ack_seq = htonl(ack);
	th->doff = (20 + olen) / 4;
	th->ack = 1;
	th->syn = !!synack;
	th->psh = !synack;
	th->window = htons(1024);
	if (synack) {
		cap_option(opt, synack & 1);
	} else {
		opt[0] = INCNN_TCPOPT_KIND;
		opt[1] = olen;
		opt[2] = INCNN_TCPOPT_FRAME_EXID >> 8;
		opt[3] = INCNN_TCPOPT_FRAME_EXID & 0xff;
	}
	if (len)
		memcpy(opt + olen, pl, len);

	sum = csum_add(sum, pkt + hl, tlen);
	th->check = htons(csum_fold(sum));
	if (bad_csum)
		th->check ^= htons(0x0101);
	if (send_raw(pkt, hl + tlen, to))
		return 1;
	injected++;
	return 0;
}

/*
 * A frame from us to the peer, with the frame option, acknowledging all
 * the peer sent: TCP would take it as data if incnn let it through.
 */
static int inject(const u8 *pl, size_t len, unsigned int seq, int bad_csum)
{
	return send_seg(pl, len, seq, ack_next, 0, bad_csum);
}

/* -Y: a random spoofed source in @src_net/16 (IPv6: fd00:99::/64). */
static void spoofed_source(struct xaddr *from, unsigned int src_net)
{
	unsigned int r = rnd();

	from->u.sa.sa_family = peer.u.sa.sa_family;
	from->u.v4.sin_port = htons(1024 + rnd() % 60000);
	if (is_v6(&peer)) {
		memset(&from->u.v6.sin6_addr, 0, 16);
		from->u.v6.sin6_addr.s6_addr[0] = 0xfd;
		from->u.v6.sin6_addr.s6_addr[3] = 0x99;
		memcpy(&from->u.v6.sin6_addr.s6_addr[12], &r, 4);
	} else {
		from->u.v4.sin_addr.s_addr = htonl(src_net << 16 |
						   (r & 0xffff));
	}
}

/* -Y: @count spoofed SYNs with the capability option. */
static int syn_spray(unsigned long count, unsigned int src_net)
{
	u8 pkt[40 + 20 + 4 + 40];
	size_t olen = (INCNN_TCPOPT_LEN + 4 + 3) & ~3u, tlen = 20 + olen, hl;
	struct xaddr from = peer;
	struct tcphdr *th;
	unsigned long i, sum;
	u8 *opt;

	for (i = 0; i < count; i++) {
		spoofed_source(&from, src_net);
		hl = ip_header(pkt, &from, &peer, 0, tlen, -1, &sum);
		th = (struct tcphdr *)(pkt + hl);
		opt = pkt + hl + 20;
		memset(th, 0, tlen);
		th->source = from.u.v4.sin_port;
		th->dest = peer.u.v4.sin_port;
		th->seq = htonl(rnd());
		th->doff = (20 + olen) / 4;
		th->syn = 1;
		th->window = htons(65535);
		/* MSS 1460, then the capability option, NOP padded */
		opt[0] = 2;
		opt[1] = 4;
		opt[2] = 1460 >> 8;
		opt[3] = 1460 & 0xff;
		memset(opt + 4, 1, olen - 4);
		/* offering frame version 1 and every codec */
		cap_option(opt + 4, 0);

		sum = csum_add(sum, pkt + hl, tlen);
		th->check = htons(csum_fold(sum));
		if (send_raw(pkt, hl + tlen, &peer))
			return 1;
	}
	printf("syns %lu\n", count);
	return 0;
}

/*
 * What the receiver's decoder says. Like the module, it can hold a
 * restored payload only as long as still fits in an IP datagram with
 * our headers (recv_cap).
 */
static int classify(const u8 *frame, size_t len)
{
	struct incnn_frame_info fi;

	return incnn_frame_decode(frame, len, decode_buf, recv_cap, &fi);
}

static unsigned long expect_v2_window;

/*
 * Inject a frame that the userspace decoder classifies as @dec (checked
 * here) and the receiver must drop with reason @want (-1:
 * rx_drop_v2_window).
 */
static int bad_as(const char *what, const u8 *frame, size_t len, int dec,
		  int want)
{
	int got = classify(frame, len);

	if (got != dec) {
		fprintf(stderr,
			"incnn_inject: case %s: decoder says %s, expected %s\n",
			what, reason_name[got], reason_name[dec]);
		errno = EINVAL;
		return 1;
	}
	if (want < 0)
		expect_v2_window++;
	else
		expect[want]++;
	return inject(frame, len, seq_next, 0);
}

/* Inject a frame the receiver must drop with reason @want (checked here). */
static int bad(const char *what, const u8 *frame, size_t len, int want)
{
	return bad_as(what, frame, len, want, want);
}

static void hdr(u8 *f, u8 ver_flags, u8 codec, u8 param, u8 dscp,
		unsigned int orig, unsigned int head)
{
	f[0] = ver_flags;
	f[1] = codec;
	f[2] = param;
	f[3] = dscp;
	f[4] = orig >> 8;
	f[5] = orig & 0xff;
	f[6] = head >> 8;
	f[7] = head & 0xff;
}

/* A valid frame of @n floats of @data with codec @c, into @out. */
static ssize_t valid_frame(const struct incnn_codec *c, u8 param,
			   const u8 *data, size_t n, u8 *out, size_t cap)
{
	return incnn_frame_encode(c, param, INCNN_DEFAULT_TOS, data, n, 0,
				  out, cap, scratch, NULL);
}

static int fixed_cases(const u8 *data, size_t avail)
{
	const struct incnn_codec *inc = incnn_codec_get(INCNN_CODEC_INCEPTIONN);
	const struct incnn_codec *lz4 = incnn_codec_get(INCNN_CODEC_LZ4);
	static u8 f[70000], lzin[1024];
	size_t n = avail < 1024 ? avail & ~3u : 1024;
	ssize_t len;
	int i;

	/* SHORT: fewer than 8 bytes */
	memset(f, 0x10, 8);
	for (i = 1; i < 8; i += 3)
		if (bad("short", f, i, INCNN_FRAME_ERR_SHORT))
			return 1;
	/*
	 * VERSION: version 0 and 3, flags set, reserved dscp bits (version
	 * 2 depends on the receiver's offer: -V)
	 */
	hdr(f, 0x00, 1, 10, 0x28, 1000, 0);
	if (bad("version 0", f, 100, INCNN_FRAME_ERR_VERSION))
		return 1;
	hdr(f, 0x30, 1, 10, 0x28, 1000, 0);
	if (bad("version 3", f, 100, INCNN_FRAME_ERR_VERSION))
		return 1;
	hdr(f, 0x11, 1, 10, 0x28, 1000, 0);
	if (bad("flags", f, 100, INCNN_FRAME_ERR_VERSION))
		return 1;
	hdr(f, 0x10, 1, 10, 0x29, 1000, 0);
	if (bad("dscp reserved bits", f, 100, INCNN_FRAME_ERR_VERSION))
		return 1;
	/* CODEC: 0 (none), one past the last, 255 */
	hdr(f, 0x10, 0, 10, 0x28, 1000, 0);
	if (bad("codec 0", f, 100, INCNN_FRAME_ERR_CODEC))
		return 1;
	hdr(f, 0x10, INCNN_CODEC_MAX + 1, 10, 0x28, 1000, 0);
	if (bad("codec max+1", f, 100, INCNN_FRAME_ERR_CODEC))
		return 1;
	hdr(f, 0x10, 255, 0, 0x28, 1000, 0);
	if (bad("codec 255", f, 100, INCNN_FRAME_ERR_CODEC))
		return 1;
	/* PARAM */
	hdr(f, 0x10, INCNN_CODEC_INCEPTIONN, 0, 0x28, 1000, 0);
	if (bad("inceptionn k=0", f, 100, INCNN_FRAME_ERR_PARAM))
		return 1;
	hdr(f, 0x10, INCNN_CODEC_INCEPTIONN, 31, 0x28, 1000, 0);
	if (bad("inceptionn k=31", f, 100, INCNN_FRAME_ERR_PARAM))
		return 1;
	hdr(f, 0x10, INCNN_CODEC_EBQ, 200, 0x28, 1000, 0);
	if (bad("ebq k=200", f, 100, INCNN_FRAME_ERR_PARAM))
		return 1;
	hdr(f, 0x10, INCNN_CODEC_TRUNC, 12, 0x28, 1000, 0);
	if (bad("trunc bits=12", f, 100, INCNN_FRAME_ERR_PARAM))
		return 1;
	hdr(f, 0x10, INCNN_CODEC_LZ4, 1, 0x28, 1000, 0);
	if (bad("lz4 param 1", f, 100, INCNN_FRAME_ERR_PARAM))
		return 1;
	/* LENGTH */
	hdr(f, 0x10, INCNN_CODEC_INCEPTIONN, 10, 0x28, 0, 0);
	if (bad("orig_len 0", f, 100, INCNN_FRAME_ERR_LENGTH))
		return 1;
	hdr(f, 0x10, INCNN_CODEC_INCEPTIONN, 10, 0x28, 1000, 1001);
	if (bad("head_len > orig_len", f, 100, INCNN_FRAME_ERR_LENGTH))
		return 1;
	hdr(f, 0x10, INCNN_CODEC_INCEPTIONN, 10, 0x28, 100, 0);
	if (bad("frame as long as orig_len", f, 100, INCNN_FRAME_ERR_LENGTH))
		return 1;
	hdr(f, 0x10, INCNN_CODEC_INCEPTIONN, 10, 0x28, 90, 0);
	if (bad("frame longer than orig_len", f, 100, INCNN_FRAME_ERR_LENGTH))
		return 1;
	hdr(f, 0x10, INCNN_CODEC_INCEPTIONN, 10, 0x28, 1000, 200);
	if (bad("head beyond the frame", f, 100, INCNN_FRAME_ERR_LENGTH))
		return 1;
	hdr(f, 0x10, INCNN_CODEC_INCEPTIONN, 10, 0x28, 1003, 0);
	if (bad("tail beyond the frame", f, 10, INCNN_FRAME_ERR_LENGTH))
		return 1;
	/* BODY: truncated, trailing bytes, corrupt LZ4 */
	len = valid_frame(inc, 10, data, n, f, sizeof(f));
	if (len < 10) {
		errno = EINVAL;
		return fail("encode");
	}
	if (bad("truncated body", f, len - 1, INCNN_FRAME_ERR_BODY))
		return 1;
	f[len] = 0x5a;
	f[len + 1] = 0xa5;
	if (bad("trailing bytes", f, len + 2, INCNN_FRAME_ERR_BODY))
		return 1;
	memset(lzin, 0, sizeof(lzin));
	len = valid_frame(lz4, 0, lzin, sizeof(lzin), f, sizeof(f));
	if (len < 12) {
		errno = EINVAL;
		return fail("lz4 encode");
	}
	hdr(f, 0x10, INCNN_CODEC_LZ4, 0, 0x28, sizeof(lzin) + 8, 0);
	if (bad("lz4 lies about orig_len", f, len, INCNN_FRAME_ERR_BODY))
		return 1;
	memset(f + 8, 0xff, len - 8);
	hdr(f, 0x10, INCNN_CODEC_LZ4, 0, 0x28, sizeof(lzin), 0);
	if (bad("corrupt lz4 block", f, len, INCNN_FRAME_ERR_BODY))
		return 1;
	/* LENGTH: a valid frame of 65535 bytes, more than an IP datagram
	 * can carry after the headers (its 16-bit length would wrap)
	 */
	{
		static u8 zeros[65535];

		len = valid_frame(lz4, 0, zeros, sizeof(zeros), f, sizeof(f));
		if (len < 12 || len > 1400) {
			errno = EINVAL;
			return fail("lz4 encode (65535 bytes)");
		}
		if (bad("orig_len beyond an IP datagram", f, len,
			INCNN_FRAME_ERR_LENGTH))
			return 1;
	}
	return 0;
}

static int random_cases(int count)
{
	static u8 f[4096];
	static const u8 params[] = { 10, 10, 16, 0 };
	int i, kept = 0, tries = 0;

	/* random frames behind a plausible header */
	while (kept < count && tries++ < count * 100) {
		unsigned int len = 9 + rnd() % 1400, c = 1 + rnd() % 4;
		unsigned int orig = len + 1 + rnd() % 3000;
		unsigned int head = rnd() % 4 ? 0 : rnd() % 8;
		unsigned int j;
		int r;

		for (j = 8; j < len; j++)
			f[j] = rnd();
		hdr(f, 0x10, c, params[c - 1], 0x28, orig, head);
		r = classify(f, len);
		if (r == INCNN_FRAME_OK) {
			skipped++;
			continue;
		}
		expect[r]++;
		if (inject(f, len, seq_next, 0))
			return 1;
		kept++;
	}
	/* random payloads */
	for (i = 0; i < count; i++) {
		unsigned int len = 1 + rnd() % 1400, j;
		int r;

		for (j = 0; j < len; j++)
			f[j] = rnd();
		if (rnd() % 2)
			f[0] = 0x10;
		r = classify(f, len);
		if (r == INCNN_FRAME_OK) {
			skipped++;
			continue;
		}
		expect[r]++;
		if (inject(f, len, seq_next, 0))
			return 1;
	}
	return 0;
}

/*
 * A valid frame of (up to) 1448 bytes of @data, no more than the
 * receiver may restore (-M), into @f.
 */
static ssize_t valid_1448(const u8 *data, size_t avail, u8 *f, size_t cap)
{
	const struct incnn_codec *inc = incnn_codec_get(INCNN_CODEC_INCEPTIONN);
	size_t n = avail < 1448 ? avail : 1448;
	ssize_t len;

	if (n > recv_cap)
		n = recv_cap;
	n &= ~(size_t)3;
	len = valid_frame(inc, 10, data, n, f, cap);

	if (len <= 0 || classify(f, len) != INCNN_FRAME_OK) {
		errno = EINVAL;
		return -1;
	}
	return len;
}

/* A valid frame with a bad TCP checksum. */
static int valid_cases(const u8 *data, size_t avail)
{
	static u8 f[4096];
	ssize_t len = valid_1448(data, avail, f, sizeof(f));

	if (len < 0)
		return fail("valid frame");
	expect_csum++;
	return inject(f, len, seq_next, 1);
}

static unsigned long expect_window;

/*
 * Valid frames TCP would not take (long acknowledged, beyond the window)
 * and one at the next sequence number restoring more than the MSS.
 */
static int window_cases(const u8 *data, size_t avail)
{
	const struct incnn_codec *lz4 = incnn_codec_get(INCNN_CODEC_LZ4);
	static u8 f[8192], zeros[4000];
	ssize_t len = valid_1448(data, avail, f, sizeof(f));

	if (len < 0)
		return fail("valid frame");
	expect_window += 2;
	if (inject(f, len, seq_next - (1u << 20), 0) ||
	    inject(f, len, seq_next + (1u << 30), 0))
		return 1;
	len = valid_frame(lz4, 0, zeros, sizeof(zeros), f, sizeof(f));
	if (len < 12) {
		errno = EINVAL;
		return fail("lz4 encode (4000 bytes)");
	}
	return bad("orig_len beyond the MSS", f, len, INCNN_FRAME_ERR_LENGTH);
}

static unsigned long expect_not_offered;

/* -V: malformed version-2 frames (see the top of the file). */
static int v2_cases(int offered, const u8 *data, size_t avail)
{
	const struct incnn_codec *lz4 = incnn_codec_get(INCNN_CODEC_LZ4);
	const struct incnn_codec *inc = incnn_codec_get(INCNN_CODEC_INCEPTIONN);
	static u8 f[70000], zeros[65535];
	int v = INCNN_FRAME_ERR_VERSION;
	ssize_t len;

	len = incnn_frame_encode_ver(INCNN_SIMD_NONE, INCNN_FRAME_VERSION_2,
				     lz4, 0, INCNN_DEFAULT_TOS, zeros,
				     sizeof(zeros), 0, f, sizeof(f), scratch,
				     NULL);
	if (len < 12 ||
	    bad_as("v2 orig_len 65535", f, len, INCNN_FRAME_ERR_LENGTH,
		   offered ? INCNN_FRAME_ERR_LENGTH : v))
		return fail("v2 orig_len 65535");
	len = incnn_frame_encode_ver(INCNN_SIMD_NONE, INCNN_FRAME_VERSION_2,
				     lz4, 0, INCNN_DEFAULT_TOS, zeros, 60000,
				     0, f, sizeof(f), scratch, NULL);
	if (len < 12 || bad_as("v2 past the window", f, len, INCNN_FRAME_OK,
			       offered ? -1 : v))
		return fail("v2 past the window");
	len = incnn_frame_encode_ver(INCNN_SIMD_NONE, INCNN_FRAME_VERSION_2,
				     inc, 10, INCNN_DEFAULT_TOS, data,
				     avail < 2000 ? avail & ~3u : 2000, 0, f,
				     sizeof(f), scratch, NULL);
	if (len < 12)
		return fail("v2 inceptionn");
	f[len++] = 0x5a;	/* a trailing byte: the body is not consumed */
	if (bad_as("v2 body", f, len, INCNN_FRAME_ERR_BODY,
		   offered ? INCNN_FRAME_ERR_BODY : v))
		return fail("v2 body");
	return 0;
}

/*
 * SYN-ACKs with the capability option at our established connection,
 * then valid frames to the peer, which did not offer rx.
 */
static int spoof_cases(int count, const u8 *data, size_t avail)
{
	static u8 f[4096];
	ssize_t len;
	int i;

	for (i = 0; i < count; i++)
		if (send_seg(NULL, 0, rnd(), i < 2 ? isn + 1 : rnd(),
			     2 + (i & 1), 0))
			return 1;
	len = valid_1448(data, avail, f, sizeof(f));
	if (len < 0)
		return fail("valid frame");
	for (i = 0; i < 5; i++) {
		expect_not_offered++;
		if (inject(f, len, seq_next, 0))
			return 1;
	}
	return 0;
}

static unsigned long expect_exthdr;

/* -X: valid frames behind an extension header (see the top). */
static int exthdr_cases(int count, const u8 *data, size_t avail)
{
	static u8 f[4096];
	ssize_t len = valid_1448(data, avail, f, sizeof(f));
	int i, err = 0;

	if (len < 0)
		return fail("valid frame");
	for (i = 0; i < count && !err; i++) {
		ext_hdr = i & 1 ? IPPROTO_DSTOPTS : IPPROTO_HOPOPTS;
		expect_exthdr++;
		err = inject(f, len, seq_next, 0);
	}
	ext_hdr = -1;
	return err;
}

/*
 * The next sequence number to send (@seq) and to receive (@ack), read in
 * TCP repair mode.
 */
static int write_seq(int fd, unsigned int *seq, unsigned int *ack)
{
	int on = 1, off = 0, q = TCP_SEND_QUEUE, rq = TCP_RECV_QUEUE;
	socklen_t len = sizeof(*seq), alen = sizeof(*ack);
	int err = 0;

	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &on, sizeof(on)))
		return -1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, seq, &len) ||
	    setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &rq, sizeof(rq)) ||
	    getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, ack, &alen))
		err = -1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off)))
		err = -1;
	return err;
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	int port = 0, tos = INCNN_DEFAULT_TOS, nrandom = 200, opt, fd, f, i;
	int window = 0, spoof = 0, v2 = -1, exthdr = 0;
	unsigned int mss = 0;
	unsigned long spray = 0;
	unsigned int src_net = 10 << 8 | 99;
	size_t half;
	struct stat st;
	u8 *buf;

	while ((opt = getopt(argc, argv, "c:p:T:w:n:s:M:WS:Y:F:V:X:")) != -1) {
		switch (opt) {
		case 'c':
			addr = optarg;
			break;
		case 'p':
			port = atoi(optarg);
			break;
		case 'T':
			tos = strtol(optarg, NULL, 0);
			break;
		case 'w':
			wire_tos = strtol(optarg, NULL, 0);
			break;
		case 'n':
			nrandom = atoi(optarg);
			break;
		case 's':
			rng_state ^= strtoull(optarg, NULL, 0) * 0x2545f4914f6cdd1dull;
			break;
		case 'M':
			mss = atoi(optarg);
			break;
		case 'W':
			window = 1;
			break;
		case 'S':
			spoof = atoi(optarg);
			break;
		case 'V':
			v2 = !!atoi(optarg);
			break;
		case 'X':
			exthdr = atoi(optarg);
			break;
		case 'Y':
			spray = strtoul(optarg, NULL, 0);
			break;
		case 'F': {
			unsigned int a, b;

			if (sscanf(optarg, "%u.%u", &a, &b) != 2 || a > 255 ||
			    b > 255)
				return 2;
			src_net = a << 8 | b;
			break;
		}
		default:
			return 2;
		}
	}
	if (addr && xaddr_set(&peer, addr, port))
		return fail(addr);
	if (spray && addr && port > 0 && optind == argc) {
		raw_fd = socket(peer.u.sa.sa_family, SOCK_RAW, IPPROTO_RAW);
		if (raw_fd < 0)
			return fail("raw socket");
		return syn_spray(spray, src_net);
	}
	if (optind != argc - 1 || !addr || port <= 0) {
		fprintf(stderr, "usage: incnn_inject -c ADDR -p PORT [-T TOS] [-w WIRE_TOS] [-n RANDOM] [-s SEED] [-M MSS] [-W | -S COUNT | -V OFFERED | -X COUNT] IN\n       incnn_inject -Y COUNT -c ADDR -p PORT [-F A.B]\n");
		return 2;
	}
	if (exthdr && !is_v6(&peer)) {
		fprintf(stderr, "incnn_inject: -X: extension headers are IPv6's\n");
		return 2;
	}
	/* IP (IPv6: no header counted in the length) + TCP + frame option */
	recv_cap = 65535 - (is_v6(&peer) ? 0 : 20) - 20 -
		   INCNN_TCPOPT_FRAME_LEN;
	if (mss && mss < recv_cap)
		recv_cap = mss;

	f = open(argv[optind], O_RDONLY);
	if (f < 0 || fstat(f, &st))
		return fail(argv[optind]);
	buf = malloc(st.st_size + 1);
	if (!buf || read(f, buf, st.st_size) != st.st_size)
		return fail(argv[optind]);
	close(f);
	half = (st.st_size / 2) & ~(size_t)3;

	fd = socket(peer.u.sa.sa_family, SOCK_STREAM, 0);
	if (fd < 0)
		return fail("socket");
	if (set_tos(fd, tos))
		return fail("IP_TOS / IPV6_TCLASS");
	if (connect(fd, &peer.u.sa, peer.len))
		return fail("connect");
	local.len = sizeof(local.u);
	if (getsockname(fd, &local.u.sa, &local.len))
		return fail("getsockname");
	raw_fd = socket(peer.u.sa.sa_family, SOCK_RAW, IPPROTO_RAW);
	if (raw_fd < 0)
		return fail("raw socket");

	if (send_all(fd, buf, half) || wait_acked(fd, 20000))
		return fail("first half");
	if (write_seq(fd, &seq_next, &ack_next)) {
		fprintf(stderr, "incnn_inject: TCP_REPAIR: %s (using a guessed sequence number)\n",
			strerror(errno));
		seq_next = rnd();
	}

	isn = seq_next - half - 1;
	if (exthdr) {
		if (exthdr_cases(exthdr, buf, half))
			return 1;
	} else if (v2 >= 0) {
		if (v2_cases(v2, buf, half))
			return 1;
	} else if (spoof) {
		if (spoof_cases(spoof, buf, half))
			return 1;
	} else if (window) {
		if (window_cases(buf, half))
			return 1;
	} else if (fixed_cases(buf, half) || random_cases(nrandom) ||
		   valid_cases(buf, half)) {
		return 1;
	}

	if (send_all(fd, buf + half, st.st_size - half))
		return fail("second half");
	if (shutdown(fd, SHUT_WR))
		return fail("shutdown");
	while (read(fd, buf, 1) > 0)
		;
	close(fd);

	for (i = 0; i < __INCNN_FRAME_ERR_MAX; i++)
		printf("%s %lu\n", reason_name[i], expect[i]);
	printf("rx_drop_csum %lu\n", expect_csum);
	printf("rx_out_of_window %lu\n", expect_window);
	printf("rx_drop_not_offered %lu\n", expect_not_offered);
	printf("rx_drop_v2_window %lu\n", expect_v2_window);
	printf("rx_drop_exthdr %lu\n", expect_exthdr);
	printf("injected %lu\n", injected);
	printf("skipped_valid %lu\n", skipped);
	free(buf);
	return 0;
}
