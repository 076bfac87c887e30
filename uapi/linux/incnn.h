/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * incnn: in-network gradient compression for marked TCP streams.
 *
 * This header is shared by the kernel module (kmod/) and userspace
 * (userspace/, selftests/). It defines:
 *
 *  - the codec identifiers and their parameter ranges;
 *  - the wire frame that replaces the payload of a compressed TCP segment
 *    (see docs/wire-format.md for the normative description).
 */
#ifndef _UAPI_LINUX_INCNN_H
#define _UAPI_LINUX_INCNN_H

#include <linux/types.h>

/*
 * Codec identifiers, carried in byte 1 of the wire frame.
 *
 * INCNN_CODEC_INCEPTIONN: the INCEPTIONN paper's lossy fp32 codec
 *	(Algorithms 2 and 3). Parameter: k, error bound 2^-k, 1 <= k <= 30.
 * INCNN_CODEC_EBQ: error-bounded quantisation, |decode(x) - x| <= 2^-k
 *	for every finite x. Parameter: k, 1 <= k <= 30.
 * INCNN_CODEC_TRUNC: keep the top 8, 16 or 24 bits of each fp32.
 *	Parameter: number of bits kept (8, 16 or 24).
 * INCNN_CODEC_LZ4: lossless LZ4 block. Parameter: 0.
 * INCNN_CODEC_ZEBQ: ebq's values, bit for bit, in a container where a group
 *	of 8 values that all quantise to 0 costs one bit. Parameter: k,
 *	1 <= k <= 30.
 */
enum incnn_codec_id {
	INCNN_CODEC_NONE = 0,
	INCNN_CODEC_INCEPTIONN = 1,
	INCNN_CODEC_EBQ = 2,
	INCNN_CODEC_TRUNC = 3,
	INCNN_CODEC_LZ4 = 4,
	INCNN_CODEC_ZEBQ = 5,
	__INCNN_CODEC_MAX
};

#define INCNN_CODEC_MAX (__INCNN_CODEC_MAX - 1)

#define INCNN_BOUND_MIN_K	1
#define INCNN_BOUND_MAX_K	30

/*
 * What a codec's parameter is (INCNN_CODEC_A_PARAM_KIND), with its range
 * INCNN_CODEC_A_PARAM_MIN..INCNN_CODEC_A_PARAM_MAX:
 *
 * INCNN_PARAM_NONE: the codec takes none; the parameter is 0.
 * INCNN_PARAM_BOUND: k of the error bound 2^-k (spelt "ebq:2^-k").
 * INCNN_PARAM_BITS: leading bits kept of each fp32, a multiple of 8
 *	(spelt "trunc:B").
 */
enum incnn_param_kind {
	INCNN_PARAM_NONE = 0,
	INCNN_PARAM_BOUND = 1,
	INCNN_PARAM_BITS = 2,
};

/*
 * Wire frame (8 bytes, network byte order), followed by:
 *
 *	head_len raw bytes      payload bytes copied verbatim (pre-anchor
 *	                        bytes and bytes before the float grid)
 *	codec body              the codec's encoding of the float-aligned part
 *	tail                    (float codecs only) the last
 *	                        (orig_len - head_len) % 4 payload bytes, raw
 *
 *  0               1               2               3
 *  +-------+-------+---------------+---------------+-----------+---+
 *  |version| flags |    codec      |    param      |   dscp    |rsv|
 *  +-------+-------+---------------+---------------+-----------+---+
 *  |          orig_len             |          head_len             |
 *  +-------------------------------+-------------------------------+
 *
 * version:  INCNN_FRAME_VERSION (high nibble of byte 0), or
 *           INCNN_FRAME_VERSION_2 (a superframe: the same layout; orig_len
 *           may exceed the MSS, up to what one IPv4 datagram holds;
 *           sent only to a peer whose capability option lists version 2)
 * flags:    must be zero (low nibble of byte 0)
 * codec:    enum incnn_codec_id
 * param:    codec parameter (see enum incnn_codec_id)
 * dscp:     the segment's original DSCP (bits 7..2 of byte 3); bits 1..0
 *           are reserved and must be zero. ECN is never carried: the
 *           receiver keeps the ECN bits of the IP header as received.
 * orig_len: length of the original TCP payload, 1..65535
 * head_len: number of raw head bytes, 0..orig_len
 */
#define INCNN_FRAME_VERSION	1
#define INCNN_FRAME_VERSION_2	2	/* superframes, docs/design.md */
#define INCNN_FRAME_HDR_LEN	8

struct incnn_frame_hdr {
	__u8	ver_flags;
	__u8	codec;
	__u8	param;
	__u8	dscp;
	__be16	orig_len;
	__be16	head_len;
};

/* Default marking: applications set IP ToS 0x28 (DSCP 10, AF11). */
#define INCNN_DEFAULT_TOS	0x28
/*
 * Framed segments leave with this ToS (DSCP 11) unless configured. The
 * wire DSCP only marks framed segments for QoS on the path: receivers
 * recognise frames by the frame option, so it may differ between hosts,
 * be rewritten on the path, or be changed while flows are alive.
 */
#define INCNN_DEFAULT_WIRE_TOS	0x2c

/*
 * Why a received frame was rejected. A receiver drops the segment and
 * counts it under one of these reasons.
 */
enum incnn_frame_error {
	INCNN_FRAME_OK = 0,
	INCNN_FRAME_ERR_SHORT,		/* payload shorter than the header */
	INCNN_FRAME_ERR_VERSION,	/* unknown version or flags set */
	INCNN_FRAME_ERR_CODEC,		/* unknown codec id */
	INCNN_FRAME_ERR_PARAM,		/* parameter invalid for the codec */
	INCNN_FRAME_ERR_LENGTH,		/* lengths do not add up */
	INCNN_FRAME_ERR_BODY,		/* body does not decode to orig_len */
	__INCNN_FRAME_ERR_MAX
};

/*
 * Generic netlink family "incnn", version 1, one instance per network
 * namespace. Reads are open to everyone; commands marked (admin) need
 * CAP_NET_ADMIN in the namespace's user namespace.
 *
 * INCNN_CMD_GET_CONFIG
 *	request: nothing
 *	reply:	INCNN_A_TX_ENABLED, INCNN_A_RX_ENABLED, INCNN_A_WIRE_DSCP,
 *		INCNN_A_FLOW_MAX, INCNN_A_FLOW_IDLE_TIMEOUT,
 *		INCNN_A_FLOW_CLOSE_TIMEOUT, INCNN_A_FLOW_COUNT,
 *		INCNN_A_RULES: nest of INCNN_A_RULE: nest of
 *			INCNN_RULE_A_DSCP, INCNN_RULE_A_CODEC, INCNN_RULE_A_PARAM,
 *		INCNN_A_SUPERFRAMES (kernels before it lack it)
 *
 * INCNN_CMD_SET_CONFIG (admin)
 *	request: any of INCNN_A_TX_ENABLED, INCNN_A_RX_ENABLED,
 *		INCNN_A_WIRE_DSCP, INCNN_A_FLOW_MAX, INCNN_A_FLOW_IDLE_TIMEOUT,
 *		INCNN_A_FLOW_CLOSE_TIMEOUT, INCNN_A_SUPERFRAMES
 *
 * INCNN_CMD_ADD_RULE (admin)
 *	request: INCNN_A_RULE: nest of INCNN_RULE_A_DSCP, INCNN_RULE_A_CODEC,
 *		 INCNN_RULE_A_PARAM (optional: the codec's default).
 *		 Replaces an existing rule for the same DSCP.
 * INCNN_CMD_DEL_RULE (admin)
 *	request: INCNN_A_RULE: nest of INCNN_RULE_A_DSCP
 *
 * INCNN_CMD_GET_STATS
 *	reply:	INCNN_A_STATS: nest of u64 counters, attribute type =
 *		enum incnn_stat + 1 (alignment padding inside it has type 0);
 *		INCNN_A_CODEC_STATS: nest of INCNN_A_CODEC_STAT (one per codec):
 *		nest of INCNN_CSTAT_A_CODEC, INCNN_CSTAT_A_FRAMES,
 *		INCNN_CSTAT_A_BYTES_IN, INCNN_CSTAT_A_BYTES_OUT,
 *		INCNN_CSTAT_A_HIST_0, _8, _16, _32 (values per size class)
 * INCNN_CMD_RESET_STATS (admin)
 *
 * INCNN_CMD_GET_FLOWS (dump)
 *	reply, one message per flow: INCNN_A_FLOW: nest of INCNN_FLOW_A_*
 *
 * INCNN_CMD_GET_CODECS
 *	reply:	INCNN_A_CODECS: nest of INCNN_A_CODEC: nest of
 *		INCNN_CODEC_A_ID, INCNN_CODEC_A_NAME, INCNN_CODEC_A_LOSSY,
 *		INCNN_CODEC_A_PARAM_MIN, INCNN_CODEC_A_PARAM_MAX,
 *		INCNN_CODEC_A_PARAM_DEFAULT, INCNN_CODEC_A_PARAM_KIND
 *		(enum incnn_param_kind; kernels before it lack it),
 *		INCNN_CODEC_A_{ENC,DEC}_MBPS_{NONE,AVX2} (the load-time
 *		self-benchmark); INCNN_A_SIMD (the path it chose)
 */
#define INCNN_GENL_NAME		"incnn"
#define INCNN_GENL_VERSION	1

enum incnn_cmd {
	INCNN_CMD_UNSPEC,
	INCNN_CMD_GET_CONFIG,
	INCNN_CMD_SET_CONFIG,
	INCNN_CMD_ADD_RULE,
	INCNN_CMD_DEL_RULE,
	INCNN_CMD_GET_STATS,
	INCNN_CMD_RESET_STATS,
	INCNN_CMD_GET_FLOWS,
	INCNN_CMD_GET_CODECS,
	__INCNN_CMD_MAX
};

#define INCNN_CMD_MAX (__INCNN_CMD_MAX - 1)

enum incnn_attr {
	INCNN_A_UNSPEC,
	INCNN_A_PAD,
	INCNN_A_TX_ENABLED,		/* u8: 0 or 1 */
	INCNN_A_RX_ENABLED,		/* u8: 0 or 1 */
	INCNN_A_WIRE_DSCP,		/* u8: 0..63 */
	INCNN_A_FLOW_MAX,		/* u32: 1..INCNN_FLOW_MAX_LIMIT */
	INCNN_A_FLOW_IDLE_TIMEOUT,	/* u32: seconds, 1..86400 */
	INCNN_A_FLOW_CLOSE_TIMEOUT,	/* u32: seconds after FIN/RST, 1..3600 */
	INCNN_A_FLOW_COUNT,		/* u32: flows tracked now (read only) */
	INCNN_A_RULES,			/* nest of INCNN_A_RULE */
	INCNN_A_RULE,			/* nest of INCNN_RULE_A_* */
	INCNN_A_STATS,			/* nest of u64, type = incnn_stat + 1 */
	INCNN_A_CODEC_STATS,		/* nest of INCNN_A_CODEC_STAT */
	INCNN_A_CODEC_STAT,		/* nest of INCNN_CSTAT_A_* */
	INCNN_A_FLOW,			/* nest of INCNN_FLOW_A_* */
	INCNN_A_CODECS,			/* nest of INCNN_A_CODEC */
	INCNN_A_CODEC,			/* nest of INCNN_CODEC_A_* */
	INCNN_A_SUPERFRAMES,		/* u8: 0 or 1, frame version 2 (default 0) */
	INCNN_A_SIMD,			/* string: the codecs' SIMD path in use */
	__INCNN_A_MAX
};

#define INCNN_A_MAX (__INCNN_A_MAX - 1)

/* at most one rule per DSCP (GET_CONFIG lists up to this many) */
#define INCNN_MAX_RULES		64
#define INCNN_FLOW_MAX_LIMIT	1048576
#define INCNN_DEFAULT_FLOW_MAX	65536
#define INCNN_DEFAULT_IDLE_TIMEOUT	300
#define INCNN_DEFAULT_CLOSE_TIMEOUT	10

enum incnn_rule_attr {
	INCNN_RULE_A_UNSPEC,
	INCNN_RULE_A_DSCP,		/* u8: 0..63, the application's DSCP */
	INCNN_RULE_A_CODEC,		/* u8: enum incnn_codec_id */
	INCNN_RULE_A_PARAM,		/* u8: codec parameter */
	__INCNN_RULE_A_MAX
};

#define INCNN_RULE_A_MAX (__INCNN_RULE_A_MAX - 1)

/* Datapath counters, summed over CPUs. */
enum incnn_stat {
	INCNN_STAT_TX_SEGS,		/* marked segments with payload seen */
	INCNN_STAT_TX_BYTES,		/* their payload bytes */
	INCNN_STAT_TX_FRAMED,		/* segments sent as frames */
	INCNN_STAT_TX_BYTES_ORIG,	/* payload bytes replaced by frames */
	INCNN_STAT_TX_BYTES_WIRE,	/* frame bytes sent instead */
	INCNN_STAT_TX_GSO_SPLIT,	/* GSO skbs segmented in the hook */
	INCNN_STAT_TX_RAW_UNTRACKED,	/* raw: handshake not seen */
	INCNN_STAT_TX_RAW_NO_PEER,	/* raw: peer did not offer rx */
	INCNN_STAT_TX_RAW_PRE_ANCHOR,	/* raw: only bytes before the anchor */
	INCNN_STAT_TX_RAW_NOT_SMALLER,	/* raw: frame would not be smaller */
	INCNN_STAT_TX_RAW_MARK_TOGGLED,	/* raw: mark went off and on again */
	INCNN_STAT_TX_RAW_TABLE_FULL,	/* raw: flow table full */
	INCNN_STAT_TX_ERRORS,		/* raw: could not rewrite the skb */
	INCNN_STAT_RX_FRAMES,		/* frames decoded */
	INCNN_STAT_RX_BYTES_WIRE,	/* their frame bytes */
	INCNN_STAT_RX_BYTES_ORIG,	/* payload bytes restored */
	INCNN_STAT_RX_DROP_CSUM,	/* dropped: bad TCP checksum */
	INCNN_STAT_RX_DROP_SHORT,	/* dropped: enum incnn_frame_error ... */
	INCNN_STAT_RX_DROP_VERSION,
	INCNN_STAT_RX_DROP_CODEC,
	INCNN_STAT_RX_DROP_PARAM,
	INCNN_STAT_RX_DROP_LENGTH,
	INCNN_STAT_RX_DROP_BODY,
	INCNN_STAT_RX_DROP_NOMEM,	/* dropped: could not grow the skb */
	INCNN_STAT_FLOWS_CREATED,
	INCNN_STAT_FLOWS_EXPIRED,
	INCNN_STAT_TX_RAW_NO_ROOM,	/* quantised: no option room */
	INCNN_STAT_TX_RAW_PEER_CODEC,	/* quantised: peer lacks the codec */
	INCNN_STAT_TX_XMIT_ERRORS,	/* split segments refused after us */
	INCNN_STAT_RX_DROP_NOT_OFFERED,	/* dropped: frame, rx not offered */
	INCNN_STAT_RX_OUT_OF_WINDOW,	/* frame outside the window, emptied */
	INCNN_STAT_FLOWS_RESET,		/* new handshake on a tracked tuple */
	INCNN_STAT_TX_ALIGNED,		/* segments moved to the float grid */
	INCNN_STAT_TX_CUT_RAW,		/* cut floats recorded raw */
	INCNN_STAT_TX_DROP_CUT,		/* dropped: cut float not completable */
	INCNN_STAT_TX_RAW_SIGNED,	/* raw: segment signed (TCP-MD5/AO) */
	INCNN_STAT_TX_WIRE_V1,		/* wire packets sent as version-1 frames */
	INCNN_STAT_TX_WIRE_V2,		/* wire packets sent as version-2 frames */
	INCNN_STAT_TX_SUPERFRAMES,	/* GSO skbs sent as version-2 frames */
	INCNN_STAT_RX_FRAMES_V1,	/* version-1 frames decoded */
	INCNN_STAT_RX_FRAMES_V2,	/* version-2 frames decoded */
	INCNN_STAT_RX_V2_BYTES_ORIG,	/* bytes restored by version-2 frames */
	INCNN_STAT_RX_DROP_ALLOC,	/* dropped: no pages to restore into */
	INCNN_STAT_RX_DROP_V2_WINDOW,	/* dropped: version 2 past the window */
	INCNN_STAT_TX_RAW_EXTHDR,	/* raw: IPv6 extension headers */
	INCNN_STAT_TX_DROP_EXTHDR,	/* dropped: ext. headers, lossy flow */
	INCNN_STAT_RX_DROP_EXTHDR,	/* dropped: frame behind ext. headers */
	__INCNN_STAT_MAX
};

enum incnn_codec_stat_attr {
	INCNN_CSTAT_A_UNSPEC,
	INCNN_CSTAT_A_PAD,
	INCNN_CSTAT_A_CODEC,		/* u8 */
	INCNN_CSTAT_A_FRAMES,		/* u64 */
	INCNN_CSTAT_A_BYTES_IN,		/* u64 */
	INCNN_CSTAT_A_BYTES_OUT,	/* u64 */
	INCNN_CSTAT_A_HIST_0,		/* u64: values sent as 0 bits */
	INCNN_CSTAT_A_HIST_8,		/* u64: ... 8 bits */
	INCNN_CSTAT_A_HIST_16,		/* u64: ... 16 bits */
	INCNN_CSTAT_A_HIST_32,		/* u64: ... 32 bits */
	__INCNN_CSTAT_A_MAX
};

#define INCNN_CSTAT_A_MAX (__INCNN_CSTAT_A_MAX - 1)

/* Flow state bits (INCNN_FLOW_A_FLAGS). */
enum incnn_flow_flag {
	INCNN_FLOW_F_PEER_RX = 1U << 0,		/* peer offered rx */
	INCNN_FLOW_F_ANCHORED = 1U << 1,	/* float grid anchored */
	INCNN_FLOW_F_TOGGLED = 1U << 2,		/* mark off after the anchor */
	INCNN_FLOW_F_CLOSING = 1U << 3,		/* FIN or RST seen */
};

enum incnn_flow_attr {
	INCNN_FLOW_A_UNSPEC,
	INCNN_FLOW_A_PAD,
	INCNN_FLOW_A_SADDR,		/* be32: local address */
	INCNN_FLOW_A_DADDR,		/* be32: peer address */
	INCNN_FLOW_A_SPORT,		/* be16 */
	INCNN_FLOW_A_DPORT,		/* be16 */
	INCNN_FLOW_A_FLAGS,		/* u32: INCNN_FLOW_F_* */
	INCNN_FLOW_A_ANCHOR,		/* u32: stream offset of the anchor */
	INCNN_FLOW_A_DSCP,		/* u8: the marking DSCP */
	INCNN_FLOW_A_CODEC,		/* u8 */
	INCNN_FLOW_A_PARAM,		/* u8 */
	INCNN_FLOW_A_BYTES_ORIG,	/* u64: payload bytes framed */
	INCNN_FLOW_A_BYTES_WIRE,	/* u64: frame bytes sent */
	INCNN_FLOW_A_IDLE_MS,		/* u32: since last segment */
	INCNN_FLOW_A_FAMILY,		/* u8: AF_INET or AF_INET6 */
	INCNN_FLOW_A_SADDR6,		/* struct in6_addr: local (IPv6) */
	INCNN_FLOW_A_DADDR6,		/* struct in6_addr: peer (IPv6) */
	__INCNN_FLOW_A_MAX
};

#define INCNN_FLOW_A_MAX (__INCNN_FLOW_A_MAX - 1)

enum incnn_codec_attr {
	INCNN_CODEC_A_UNSPEC,
	INCNN_CODEC_A_ID,		/* u8 */
	INCNN_CODEC_A_NAME,		/* string */
	INCNN_CODEC_A_LOSSY,		/* u8 */
	INCNN_CODEC_A_PARAM_MIN,	/* u8 */
	INCNN_CODEC_A_PARAM_MAX,	/* u8 */
	INCNN_CODEC_A_PARAM_DEFAULT,	/* u8 */
	INCNN_CODEC_A_PARAM_KIND,	/* u8: enum incnn_param_kind */
	/*
	 * The load-time self-benchmark (MB/s of fp32 input, one 1448-byte
	 * call at a time) of the scalar path and of the AVX2 path; absent
	 * where it did not run.
	 */
	INCNN_CODEC_A_ENC_MBPS_NONE,	/* u32 */
	INCNN_CODEC_A_DEC_MBPS_NONE,	/* u32 */
	INCNN_CODEC_A_ENC_MBPS_AVX2,	/* u32 */
	INCNN_CODEC_A_DEC_MBPS_AVX2,	/* u32 */
	__INCNN_CODEC_A_MAX
};

#define INCNN_CODEC_A_MAX (__INCNN_CODEC_A_MAX - 1)

/*
 * TCP options (RFC 6994 experimental option kind 253, two ExIDs; see
 * docs/wire-format.md).
 *
 * Capability option, on SYN and SYN-ACK only: incnn adds it to its
 * outgoing SYN and SYN-ACK segments when rx is enabled, and replaces the
 * peer's with NOPs before TCP sees it. 8 bytes:
 *
 *  0               1               2               3
 *  +---------------+---------------+-------------------------------+
 *  |  kind = 253   |  length = 8   |     ExID = 0x1c4e             |
 *  +---------------+---------------+-------------------------------+
 *  |   versions    |  reserved = 0 |     codecs                    |
 *  +---------------+---------------+-------------------------------+
 *
 * versions: bit v set: the receiver decodes frames of version v
 *           (INCNN_FRAME_VERSION is 1: bit 1, 0x02; with superframes on,
 *           also INCNN_FRAME_VERSION_2: 0x06)
 * codecs:   big-endian; bit c set: the receiver decodes codec id c
 *           (enum incnn_codec_id; bit 0 is never set)
 *
 * A sender frames toward a peer only with a frame version and a codec the
 * peer's option lists. The 4-byte form of earlier releases (length 4, the
 * same ExID, nothing else) is stripped and read as "no offer".
 *
 * Frame option, on every framed data segment: 4 bytes, kind 253,
 * length 4, ExID 0x1c4f. A receiver parses a payload as a frame only when
 * the segment carries this option (never by DSCP), and replaces the
 * option with NOPs when it restores the segment. Version and codec are
 * in the frame header.
 */
#define INCNN_TCPOPT_KIND	253
#define INCNN_TCPOPT_LEN	8	/* capability option (SYN, SYN-ACK) */
#define INCNN_TCPOPT_EXID	0x1c4e
#define INCNN_TCPOPT_LEN_V1	4	/* capability option of earlier releases */
#define INCNN_TCPOPT_FRAME_LEN	4	/* frame option (data segments) */
#define INCNN_TCPOPT_FRAME_EXID	0x1c4f

#endif /* _UAPI_LINUX_INCNN_H */
