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
 * crafted IPv4+TCP segments with the connection's own addresses, ports
 * and next sequence number, the wire ToS (default 0x2c) and a bad frame
 * as payload, through a raw socket (IP_HDRINCL). Finally it sends the
 * rest of IN on the connection and waits for the peer to close.
 *
 * The frames are: fixed cases for every drop reason (short, version,
 * codec, param, length - including a valid frame whose 65535 restored
 * bytes do not fit in an IPv4 datagram - body), RANDOM random frames (valid-looking
 * header, random body) and RANDOM random payloads, each classified with
 * the userspace copy of the receiver's decoder (incnn_frame_decode(),
 * the same code as the module's); a random frame the decoder accepts is
 * not injected. One valid frame goes out with a bad TCP checksum
 * (rx_drop_csum). Every frame carries the frame option (the receiver
 * parses nothing else). -M: the receiver's advertised MSS, the most a
 * frame may restore (default: what fits in an IPv4 datagram).
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
 * IPv4 datagram (rx_drop_length), one at the next sequence number
 * restoring 60000 bytes, past a receive window smaller than that
 * (rx_drop_v2_window; the receiver's tcp_rmem must keep it so), and one
 * whose body does not decode (rx_drop_body). With OFFERED 0 the
 * receiver did not offer version 2 and drops each as rx_drop_version.
 *
 *   incnn_inject -Y COUNT -c ADDR -p PORT [-F A.B]
 *
 * SYN spray: COUNT SYNs to ADDR:PORT carrying incnn's capability option,
 * from random spoofed sources in A.B.0.0/16 (default 10.99) and random
 * ports, through the raw socket; prints "syns COUNT".
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
static unsigned int recv_cap = 65535 - 44;	/* IP + TCP with the option */
static unsigned int isn;
static struct sockaddr_in local, peer;
static unsigned int seq_next;
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

/*
 * Send one segment: from us to the peer with payload @pl and the frame
 * option (@synack 0), or from the peer to us as a SYN-ACK with the
 * capability option and no payload (@synack 2: 8-byte form, 3: the
 * 4-byte form of earlier releases; @ack acknowledges).
 * @bad_csum corrupts the checksum.
 */
static int send_seg(const u8 *pl, size_t len, unsigned int seq,
		    unsigned int ack, int synack, int bad_csum)
{
	static u8 pkt[20 + 28 + 65536];
	struct iphdr *iph = (struct iphdr *)pkt;
	struct tcphdr *th = (struct tcphdr *)(pkt + 20);
	const struct sockaddr_in *from = synack ? &peer : &local;
	const struct sockaddr_in *to = synack ? &local : &peer;
	size_t olen = synack ? 8 : INCNN_TCPOPT_FRAME_LEN;
	size_t tlen = 20 + olen + len;
	u8 *opt = pkt + 40;
	unsigned long sum;
	u8 pseudo[12];

	memset(pkt, 0, 40 + olen);
	iph->version = 4;
	iph->ihl = 5;
	iph->tos = synack ? 0 : wire_tos;
	iph->tot_len = htons(20 + tlen);
	iph->id = htons(ip_id++);
	iph->frag_off = htons(IP_DF);
	iph->ttl = 64;
	iph->protocol = IPPROTO_TCP;
	iph->saddr = from->sin_addr.s_addr;
	iph->daddr = to->sin_addr.s_addr;
	th->source = from->sin_port;
	th->dest = to->sin_port;
	th->seq = htonl(seq);
	th->ack_seq = htonl(ack);
	th->doff = (20 + olen) / 4;
	th->ack = 1;
	th->syn = !!synack;
	th->psh = !synack;
	th->window = htons(1024);
	opt[0] = INCNN_TCPOPT_KIND;
	opt[1] = olen;
	if (synack) {
		/* odd: the 4-byte form of earlier releases, then 2 NOPs */
		opt[1] = synack & 1 ? INCNN_TCPOPT_LEN_V1 : INCNN_TCPOPT_LEN;
		opt[2] = INCNN_TCPOPT_EXID >> 8;
		opt[3] = INCNN_TCPOPT_EXID & 0xff;
		opt[4] = 1 << INCNN_FRAME_VERSION;
		opt[6] = 0xff;
		opt[7] = 0xfe;
		if (synack & 1)
			memset(opt + 4, 1, 4);
	} else {
		opt[2] = INCNN_TCPOPT_FRAME_EXID >> 8;
		opt[3] = INCNN_TCPOPT_FRAME_EXID & 0xff;
	}
	memcpy(pkt + 40 + olen, pl, len);

	memcpy(pseudo, &iph->saddr, 4);
	memcpy(pseudo + 4, &iph->daddr, 4);
	pseudo[8] = 0;
	pseudo[9] = IPPROTO_TCP;
	pseudo[10] = tlen >> 8;
	pseudo[11] = tlen & 0xff;
	sum = csum_add(0, pseudo, sizeof(pseudo));
	sum = csum_add(sum, pkt + 20, tlen);
	th->check = htons(csum_fold(sum));
	if (bad_csum)
		th->check ^= htons(0x0101);

	if (sendto(raw_fd, pkt, 20 + tlen, 0, (const struct sockaddr *)to,
		   sizeof(*to)) != (ssize_t)(20 + tlen))
		return fail("sendto (raw)");
	injected++;
	return 0;
}

/* A frame from us to the peer, with the frame option. */
static int inject(const u8 *pl, size_t len, unsigned int seq, int bad_csum)
{
	return send_seg(pl, len, seq, 0, 0, bad_csum);
}

/* -Y: @count spoofed SYNs with the capability option. */
static int syn_spray(unsigned long count, unsigned int src_net)
{
	u8 pkt[20 + 20 + 4 + 40];
	struct iphdr *iph = (struct iphdr *)pkt;
	struct tcphdr *th = (struct tcphdr *)(pkt + 20);
	u8 *opt = pkt + 40, pseudo[12];
	size_t olen = (INCNN_TCPOPT_LEN + 4 + 3) & ~3u, tlen = 20 + olen;
	unsigned long i, sum;

	for (i = 0; i < count; i++) {
		memset(pkt, 0, sizeof(pkt));
		iph->version = 4;
		iph->ihl = 5;
		iph->tot_len = htons(20 + tlen);
		iph->id = htons(ip_id++);
		iph->frag_off = htons(IP_DF);
		iph->ttl = 64;
		iph->protocol = IPPROTO_TCP;
		iph->saddr = htonl(src_net << 16 | (rnd() & 0xffff));
		iph->daddr = peer.sin_addr.s_addr;
		th->source = htons(1024 + rnd() % 60000);
		th->dest = peer.sin_port;
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
		opt[4] = INCNN_TCPOPT_KIND;
		opt[5] = INCNN_TCPOPT_LEN;
		opt[6] = INCNN_TCPOPT_EXID >> 8;
		opt[7] = INCNN_TCPOPT_EXID & 0xff;
		/* offering frame version 1 and every codec */
		opt[8] = 1 << INCNN_FRAME_VERSION;
		opt[9] = 0;
		opt[10] = 0xff;
		opt[11] = 0xfe;

		memcpy(pseudo, &iph->saddr, 4);
		memcpy(pseudo + 4, &iph->daddr, 4);
		pseudo[8] = 0;
		pseudo[9] = IPPROTO_TCP;
		pseudo[10] = tlen >> 8;
		pseudo[11] = tlen & 0xff;
		sum = csum_add(0, pseudo, sizeof(pseudo));
		sum = csum_add(sum, pkt + 20, tlen);
		th->check = htons(csum_fold(sum));
		if (sendto(raw_fd, pkt, 20 + tlen, 0, (struct sockaddr *)&peer,
			   sizeof(peer)) != (ssize_t)(20 + tlen))
			return fail("sendto (raw)");
	}
	printf("syns %lu\n", count);
	return 0;
}

/*
 * What the receiver's decoder says. Like the module, it can hold a
 * restored payload only as long as still fits in an IPv4 datagram with
 * our 20-byte IP and 20-byte TCP headers.
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
	/* LENGTH: a valid frame of 65535 bytes, more than an IPv4 datagram
	 * can carry after the headers (its 16-bit total length would wrap)
	 */
	{
		static u8 zeros[65535];

		len = valid_frame(lz4, 0, zeros, sizeof(zeros), f, sizeof(f));
		if (len < 12 || len > 1400) {
			errno = EINVAL;
			return fail("lz4 encode (65535 bytes)");
		}
		if (bad("orig_len beyond an IPv4 datagram", f, len,
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

/* A valid frame of (up to) 1448 bytes of @data, into @f. */
static ssize_t valid_1448(const u8 *data, size_t avail, u8 *f, size_t cap)
{
	const struct incnn_codec *inc = incnn_codec_get(INCNN_CODEC_INCEPTIONN);
	size_t n = avail < 1448 ? avail & ~3u : 1448;
	ssize_t len = valid_frame(inc, 10, data, n, f, cap);

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

/* The next sequence number to send, read in TCP repair mode. */
static int write_seq(int fd, unsigned int *seq)
{
	int on = 1, off = 0, q = TCP_SEND_QUEUE;
	socklen_t len = sizeof(*seq);
	int err = 0;

	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &on, sizeof(on)))
		return -1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR_QUEUE, &q, sizeof(q)) ||
	    getsockopt(fd, IPPROTO_TCP, TCP_QUEUE_SEQ, seq, &len))
		err = -1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_REPAIR, &off, sizeof(off)))
		err = -1;
	return err;
}

int main(int argc, char **argv)
{
	const char *addr = NULL;
	int port = 0, tos = INCNN_DEFAULT_TOS, nrandom = 200, opt, fd, f, i;
	int window = 0, spoof = 0, v2 = -1;
	unsigned long spray = 0;
	unsigned int src_net = 10 << 8 | 99;
	socklen_t sl = sizeof(local);
	size_t half;
	struct stat st;
	u8 *buf;

	while ((opt = getopt(argc, argv, "c:p:T:w:n:s:M:WS:Y:F:V:")) != -1) {
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
			if ((unsigned int)atoi(optarg) < recv_cap)
				recv_cap = atoi(optarg);
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
	if (spray && addr && port > 0 && optind == argc) {
		peer.sin_family = AF_INET;
		peer.sin_port = htons(port);
		if (inet_pton(AF_INET, addr, &peer.sin_addr) != 1) {
			errno = EINVAL;
			return fail(addr);
		}
		raw_fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
		if (raw_fd < 0)
			return fail("raw socket");
		return syn_spray(spray, src_net);
	}
	if (optind != argc - 1 || !addr || port <= 0) {
		fprintf(stderr, "usage: incnn_inject -c ADDR -p PORT [-T TOS] [-w WIRE_TOS] [-n RANDOM] [-s SEED] [-M MSS] [-W | -S COUNT | -V OFFERED] IN\n       incnn_inject -Y COUNT -c ADDR -p PORT [-F A.B]\n");
		return 2;
	}

	f = open(argv[optind], O_RDONLY);
	if (f < 0 || fstat(f, &st))
		return fail(argv[optind]);
	buf = malloc(st.st_size + 1);
	if (!buf || read(f, buf, st.st_size) != st.st_size)
		return fail(argv[optind]);
	close(f);
	half = (st.st_size / 2) & ~(size_t)3;

	peer.sin_family = AF_INET;
	peer.sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &peer.sin_addr) != 1) {
		errno = EINVAL;
		return fail(addr);
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return fail("socket");
	if (setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)))
		return fail("IP_TOS");
	if (connect(fd, (struct sockaddr *)&peer, sizeof(peer)))
		return fail("connect");
	if (getsockname(fd, (struct sockaddr *)&local, &sl))
		return fail("getsockname");
	raw_fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (raw_fd < 0)
		return fail("raw socket");

	if (send_all(fd, buf, half) || wait_acked(fd, 20000))
		return fail("first half");
	if (write_seq(fd, &seq_next)) {
		fprintf(stderr, "incnn_inject: TCP_REPAIR: %s (using a guessed sequence number)\n",
			strerror(errno));
		seq_next = rnd();
	}

	isn = seq_next - half - 1;
	if (v2 >= 0) {
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
	printf("injected %lu\n", injected);
	printf("skipped_valid %lu\n", skipped);
	free(buf);
	return 0;
}
