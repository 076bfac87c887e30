// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A stand-in for the incnn kernel module, for testing incctl's netlink
 * code without the module. Linked into the test binary incctl-fake, it
 * replaces libmnl's socket functions (the executable's definitions win
 * over libmnl.so's), answers requests the way the kernel would per
 * <linux/incnn.h>, and logs every request it gets.
 *
 * Environment:
 *   INCCTL_FAKE      scenario (default "ok"):
 *                    ok        everything succeeds, canned state
 *                    nomod     no "incnn" family (ENOENT)
 *                    eperm     admin commands fail with EPERM
 *                    extack    admin commands fail with EINVAL and an
 *                              extack message; the socket ignores
 *                              NETLINK_CAP_ACK (request echoed)
 *                    noext     as extack, but no extack message at all
 *                    warn      admin commands succeed with an extack
 *                              message (a warning)
 *                    malformed GET_CONFIG sends TX_ENABLED as a u32
 *                    dumperr   the flow dump ends with an error + extack
 *                    intr      the flow dump is flagged NLM_F_DUMP_INTR
 *                    nocodecs  GET_CODECS is not supported (EOPNOTSUPP)
 *                    oldcodecs GET_CODECS without INCNN_CODEC_A_PARAM_KIND
 *                    newcodec  codec 9 "zfuture" takes a bound 2^-1..2^-9
 *                    simd      GET_CODECS with the SIMD path ("avx2") and
 *                              self-benchmark figures for codecs 1, 2
 *                    empty     no rules, no flows, no codec stats
 *                    v6        the second flow is IPv6 (FAMILY, SADDR6,
 *                              DADDR6 instead of SADDR, DADDR)
 *   INCCTL_FAKE_LOG  file the decoded requests are appended to
 *
 * Unlike a real kernel, recvfrom() with nothing queued fails with EAGAIN
 * instead of blocking, so a missing ACK shows up as an error.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <linux/incnn.h>
#include <linux/netlink.h>

#define FAMILY_ID	0x1d
#define PORTID		4242
#define MAXQ		16
#define DGRAM		16384

struct mnl_socket {
	int bus;
	bool cap_ack, ext_ack;
};

static struct {
	const char *scenario;
	unsigned int pads;		/* pad attributes in the last reply */
	size_t nq, head;
	size_t len[MAXQ];
	_Alignas(8) char q[MAXQ][DGRAM];
} fk;

static bool sc(const char *name)
{
	return !strcmp(fk.scenario, name);
}

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	const char *path = getenv("INCCTL_FAKE_LOG");
	va_list ap;
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

struct mnl_socket *mnl_socket_open(int bus)
{
	struct mnl_socket *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->bus = bus;
	fk.scenario = getenv("INCCTL_FAKE") ? getenv("INCCTL_FAKE") : "ok";
	return s;
}

int mnl_socket_bind(struct mnl_socket *nl, unsigned int groups, pid_t pid)
{
	(void)nl;
	(void)groups;
	(void)pid;
	return 0;
}

unsigned int mnl_socket_get_portid(const struct mnl_socket *nl)
{
	(void)nl;
	return PORTID;
}

int mnl_socket_setsockopt(const struct mnl_socket *nl, int type, void *buf,
			  socklen_t len)
{
	struct mnl_socket *s = (struct mnl_socket *)nl;
	int on = len >= sizeof(int) ? *(int *)buf : 0;

	if (type == NETLINK_CAP_ACK && !sc("extack"))
		s->cap_ack = on;
	if (type == NETLINK_EXT_ACK)
		s->ext_ack = on;
	return 0;
}

int mnl_socket_close(struct mnl_socket *nl)
{
	free(nl);
	return 0;
}

ssize_t mnl_socket_recvfrom(const struct mnl_socket *nl, void *buf,
			    size_t siz)
{
	size_t n;

	(void)nl;
	if (fk.head >= fk.nq) {
		fprintf(stderr, "fake: recvfrom with nothing queued\n");
		errno = EAGAIN;
		return -1;
	}
	n = fk.len[fk.head];
	if (n > siz) {
		errno = ENOSPC;
		return -1;
	}
	memcpy(buf, fk.q[fk.head++], n);
	return (ssize_t)n;
}

/* --- building replies -------------------------------------------------- */

/* A new datagram; messages are appended with msg_start(). */
static char *dgram_new(void)
{
	if (fk.nq >= MAXQ)
		abort();
	fk.len[fk.nq] = 0;
	return fk.q[fk.nq++];
}

static struct nlmsghdr *msg_start(const struct nlmsghdr *req, uint16_t type,
				  uint16_t flags, uint8_t cmd)
{
	char *d = fk.q[fk.nq - 1];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(d + fk.len[fk.nq - 1]);

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = flags;
	nlh->nlmsg_seq = req->nlmsg_seq;
	nlh->nlmsg_pid = PORTID;
	if (type >= NLMSG_MIN_TYPE) {
		struct genlmsghdr *gh = mnl_nlmsg_put_extra_header(nlh, sizeof(*gh));

		gh->cmd = cmd;
		gh->version = INCNN_GENL_VERSION;
	}
	return nlh;
}

static void msg_end(struct nlmsghdr *nlh)
{
	fk.len[fk.nq - 1] += NLMSG_ALIGN(nlh->nlmsg_len);
}

/*
 * nla_put_u64_64bit() as on an architecture without efficient unaligned
 * access: a zero-length pad attribute when the value would be misaligned.
 */
static void put_u64(struct nlmsghdr *nlh, uint16_t type, uint16_t pad,
		    uint64_t v)
{
	static const char none[1];

	if (((uintptr_t)mnl_nlmsg_get_payload_tail(nlh) + NLA_HDRLEN) % 8) {
		mnl_attr_put(nlh, pad, 0, none);
		fk.pads++;
	}
	mnl_attr_put_u64(nlh, type, v);
}

static void ack(const struct mnl_socket *s, const struct nlmsghdr *req,
		int err, const char *msg)
{
	bool capped = s->cap_ack || !err;
	uint16_t flags = capped ? NLM_F_CAPPED : 0;
	struct nlmsghdr *nlh;
	struct nlmsgerr *e;
	size_t elen = sizeof(*e);

	if (msg && s->ext_ack)
		flags |= NLM_F_ACK_TLVS;
	if (!capped)
		elen += req->nlmsg_len - sizeof(*req);
	dgram_new();
	nlh = msg_start(req, NLMSG_ERROR, flags, 0);
	e = mnl_nlmsg_put_extra_header(nlh, elen);
	e->error = err;
	memcpy(&e->msg, req, capped ? sizeof(*req) : req->nlmsg_len);
	if (msg && s->ext_ack)
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, msg);
	msg_end(nlh);
}

static void done(const struct mnl_socket *s, const struct nlmsghdr *req,
		 int err, const char *msg)
{
	struct nlmsghdr *nlh;
	int *p;

	dgram_new();
	nlh = msg_start(req, NLMSG_DONE, NLM_F_MULTI |
			(msg && s->ext_ack ? NLM_F_ACK_TLVS : 0), 0);
	p = mnl_nlmsg_put_extra_header(nlh, sizeof(int));
	*p = err;
	if (msg && s->ext_ack)
		mnl_attr_put_strz(nlh, NLMSGERR_ATTR_MSG, msg);
	msg_end(nlh);
}

/* --- the incnn family ---------------------------------------------------- */

static const struct { uint8_t dscp, codec, param; } rules[] = {
	{ 14, INCNN_CODEC_TRUNC, 16 },
	{ 10, INCNN_CODEC_EBQ, 10 },
	{ 12, INCNN_CODEC_LZ4, 0 },
	{ 20, 9, 3 },			/* a codec incctl does not know */
};

static const struct {
	uint8_t id;
	const char *name;
	uint8_t lossy, min, max, def, kind;
} codecs[] = {
	{ INCNN_CODEC_INCEPTIONN, "inceptionn", 1, 1, 30, 10, INCNN_PARAM_BOUND },
	{ INCNN_CODEC_EBQ, "ebq", 1, 1, 30, 10, INCNN_PARAM_BOUND },
	{ INCNN_CODEC_TRUNC, "trunc", 1, 8, 24, 16, INCNN_PARAM_BITS },
	{ INCNN_CODEC_LZ4, "lz4", 0, 0, 0, 0, INCNN_PARAM_NONE },
	/* a parameter kind incctl does not know (newcodec: a bound) */
	{ 9, "zfuture", 0, 1, 9, 3, 7 },
};

static void reply_family(const struct nlmsghdr *req)
{
	struct nlmsghdr *nlh;

	dgram_new();
	nlh = msg_start(req, GENL_ID_CTRL, 0, CTRL_CMD_NEWFAMILY);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, INCNN_GENL_NAME);
	mnl_attr_put_u16(nlh, CTRL_ATTR_FAMILY_ID, FAMILY_ID);
	mnl_attr_put_u32(nlh, CTRL_ATTR_VERSION, INCNN_GENL_VERSION);
	mnl_attr_put_u32(nlh, CTRL_ATTR_HDRSIZE, 0);
	mnl_attr_put_u32(nlh, CTRL_ATTR_MAXATTR, INCNN_A_MAX);
	msg_end(nlh);
}

static void reply_config(const struct nlmsghdr *req)
{
	struct nlmsghdr *nlh;
	struct nlattr *rs, *r;

	dgram_new();
	nlh = msg_start(req, FAMILY_ID, 0, INCNN_CMD_GET_CONFIG);
	if (sc("malformed"))
		mnl_attr_put_u32(nlh, INCNN_A_TX_ENABLED, 1);
	else
		mnl_attr_put_u8(nlh, INCNN_A_TX_ENABLED, 1);
	mnl_attr_put_u8(nlh, INCNN_A_RX_ENABLED, 0);
	mnl_attr_put_u8(nlh, INCNN_A_WIRE_DSCP, 11);
	mnl_attr_put_u32(nlh, INCNN_A_FLOW_MAX, INCNN_DEFAULT_FLOW_MAX);
	mnl_attr_put_u32(nlh, INCNN_A_FLOW_IDLE_TIMEOUT, 300);
	mnl_attr_put_u32(nlh, INCNN_A_FLOW_CLOSE_TIMEOUT, 10);
	mnl_attr_put_u32(nlh, INCNN_A_FLOW_COUNT, 3);
	mnl_attr_put_u32(nlh, 200, 0xdead);	/* from a newer kernel */
	rs = mnl_attr_nest_start(nlh, INCNN_A_RULES);
	for (size_t i = 0; !sc("empty") && i < sizeof(rules) / sizeof(rules[0]); i++) {
		r = mnl_attr_nest_start(nlh, INCNN_A_RULE);
		mnl_attr_put_u8(nlh, INCNN_RULE_A_DSCP, rules[i].dscp);
		mnl_attr_put_u8(nlh, INCNN_RULE_A_CODEC, rules[i].codec);
		mnl_attr_put_u8(nlh, INCNN_RULE_A_PARAM, rules[i].param);
		mnl_attr_nest_end(nlh, r);
	}
	mnl_attr_nest_end(nlh, rs);
	msg_end(nlh);
}

static void reply_codecs(const struct nlmsghdr *req)
{
	struct nlmsghdr *nlh;
	struct nlattr *cs, *c;

	dgram_new();
	nlh = msg_start(req, FAMILY_ID, 0, INCNN_CMD_GET_CODECS);
	cs = mnl_attr_nest_start(nlh, INCNN_A_CODECS);
	for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++) {
		c = mnl_attr_nest_start(nlh, INCNN_A_CODEC);
		mnl_attr_put_u8(nlh, INCNN_CODEC_A_ID, codecs[i].id);
		mnl_attr_put_strz(nlh, INCNN_CODEC_A_NAME, codecs[i].name);
		mnl_attr_put_u8(nlh, INCNN_CODEC_A_LOSSY, codecs[i].lossy);
		mnl_attr_put_u8(nlh, INCNN_CODEC_A_PARAM_MIN, codecs[i].min);
		mnl_attr_put_u8(nlh, INCNN_CODEC_A_PARAM_MAX, codecs[i].max);
		mnl_attr_put_u8(nlh, INCNN_CODEC_A_PARAM_DEFAULT, codecs[i].def);
		/* oldcodecs: a kernel from before INCNN_CODEC_A_PARAM_KIND */
		if (!sc("oldcodecs"))
			mnl_attr_put_u8(nlh, INCNN_CODEC_A_PARAM_KIND,
					sc("newcodec") && codecs[i].id == 9 ?
					INCNN_PARAM_BOUND : codecs[i].kind);
		/* simd: MB/s 1000 * path + 100 * dec + id */
		for (unsigned int a = 0; sc("simd") && codecs[i].id <= 2 && a < 4;
		     a++)
			mnl_attr_put_u32(nlh, INCNN_CODEC_A_ENC_MBPS_NONE + a,
					 1000 * (a / 2) + 100 * (a % 2) +
					 codecs[i].id);
		mnl_attr_nest_end(nlh, c);
	}
	mnl_attr_nest_end(nlh, cs);
	if (sc("simd"))
		mnl_attr_put_strz(nlh, INCNN_A_SIMD, "avx2");
	msg_end(nlh);
}

static void reply_stats(const struct nlmsghdr *req)
{
	struct nlmsghdr *nlh;
	struct nlattr *n, *c;

	dgram_new();
	nlh = msg_start(req, FAMILY_ID, 0, INCNN_CMD_GET_STATS);
	n = mnl_attr_nest_start(nlh, INCNN_A_STATS);
	/* worst case: the pad type collides with stat 0 (type 1) */
	for (unsigned int s = 0; s < __INCNN_STAT_MAX; s++)
		put_u64(nlh, (uint16_t)(s + 1), INCNN_A_PAD, 1000 + s);
	put_u64(nlh, __INCNN_STAT_MAX + 1, INCNN_A_PAD, 77);	/* newer */
	mnl_attr_nest_end(nlh, n);
	if (sc("empty")) {
		msg_end(nlh);
		return;
	}
	n = mnl_attr_nest_start(nlh, INCNN_A_CODEC_STATS);
	for (uint8_t id = 1; id <= 4; id++) {
		c = mnl_attr_nest_start(nlh, INCNN_A_CODEC_STAT);
		mnl_attr_put_u8(nlh, INCNN_CSTAT_A_CODEC, id);
		put_u64(nlh, INCNN_CSTAT_A_FRAMES, INCNN_CSTAT_A_PAD, 10 * id);
		put_u64(nlh, INCNN_CSTAT_A_BYTES_IN, INCNN_CSTAT_A_PAD, 40000);
		put_u64(nlh, INCNN_CSTAT_A_BYTES_OUT, INCNN_CSTAT_A_PAD,
			id == 4 ? 0 : 10000 * id);
		put_u64(nlh, INCNN_CSTAT_A_HIST_0, INCNN_CSTAT_A_PAD,
			id == 4 ? 0 : 6000);
		put_u64(nlh, INCNN_CSTAT_A_HIST_8, INCNN_CSTAT_A_PAD,
			id == 4 ? 0 : 3000);
		put_u64(nlh, INCNN_CSTAT_A_HIST_16, INCNN_CSTAT_A_PAD,
			id == 4 ? 0 : 900);
		put_u64(nlh, INCNN_CSTAT_A_HIST_32, INCNN_CSTAT_A_PAD,
			id == 4 ? 0 : 100);
		mnl_attr_nest_end(nlh, c);
	}
	mnl_attr_nest_end(nlh, n);
	msg_end(nlh);
}

static void put_flow(const struct nlmsghdr *req, uint16_t extra, int i)
{
	struct nlmsghdr *nlh;
	struct nlattr *f;
	static const uint32_t flags[] = {
		INCNN_FLOW_F_PEER_RX | INCNN_FLOW_F_ANCHORED,
		0,
		INCNN_FLOW_F_PEER_RX | INCNN_FLOW_F_ANCHORED |
			INCNN_FLOW_F_TOGGLED | INCNN_FLOW_F_CLOSING | 0x40,
	};

	nlh = msg_start(req, FAMILY_ID, NLM_F_MULTI | extra,
			INCNN_CMD_GET_FLOWS);
	f = mnl_attr_nest_start(nlh, INCNN_A_FLOW);
	if (sc("v6") && i == 1) {
		/* an IPv6 flow: fd00:66:1::1 -> fd00:66:1::3 */
		struct in6_addr sa6 = { .s6_addr = { 0xfd, 0, 0, 0x66, 0, 1 } };
		struct in6_addr da6 = sa6;

		sa6.s6_addr[15] = 1;
		da6.s6_addr[15] = 3;
		mnl_attr_put_u8(nlh, INCNN_FLOW_A_FAMILY, AF_INET6);
		mnl_attr_put(nlh, INCNN_FLOW_A_SADDR6, sizeof(sa6), &sa6);
		mnl_attr_put(nlh, INCNN_FLOW_A_DADDR6, sizeof(da6), &da6);
	} else {
		mnl_attr_put_u32(nlh, INCNN_FLOW_A_SADDR, htonl(0x0a000001));
		mnl_attr_put_u32(nlh, INCNN_FLOW_A_DADDR,
				 htonl(0x0a000002 + (uint32_t)i));
	}
	mnl_attr_put_u16(nlh, INCNN_FLOW_A_SPORT, htons(5001));
	mnl_attr_put_u16(nlh, INCNN_FLOW_A_DPORT, htons((uint16_t)(40000 + i)));
	mnl_attr_put_u32(nlh, INCNN_FLOW_A_FLAGS, flags[i]);
	mnl_attr_put_u32(nlh, INCNN_FLOW_A_ANCHOR, i == 1 ? 0 : 1448);
	mnl_attr_put_u8(nlh, INCNN_FLOW_A_DSCP, 10);
	mnl_attr_put_u8(nlh, INCNN_FLOW_A_CODEC, i == 1 ? 0 : INCNN_CODEC_EBQ);
	mnl_attr_put_u8(nlh, INCNN_FLOW_A_PARAM, i == 1 ? 0 : 10);
	put_u64(nlh, INCNN_FLOW_A_BYTES_ORIG, INCNN_FLOW_A_PAD,
		i == 1 ? 0 : 4000000000ULL * (uint64_t)(i + 1));
	put_u64(nlh, INCNN_FLOW_A_BYTES_WIRE, INCNN_FLOW_A_PAD,
		i == 1 ? 0 : 1000000000ULL * (uint64_t)(i + 1));
	mnl_attr_put_u32(nlh, INCNN_FLOW_A_IDLE_MS, 1234u * (uint32_t)i);
	mnl_attr_nest_end(nlh, f);
	msg_end(nlh);
}

static void reply_flows(const struct mnl_socket *s, const struct nlmsghdr *req)
{
	uint16_t intr = sc("intr") ? NLM_F_DUMP_INTR : 0;

	if (!sc("empty")) {
		/* two flows in one datagram, the third in the next */
		dgram_new();
		put_flow(req, 0, 0);
		put_flow(req, 0, 1);
		dgram_new();
		put_flow(req, intr, 2);
	}
	if (sc("dumperr"))
		done(s, req, -ENOBUFS, "flow table changed too fast");
	else
		done(s, req, 0, NULL);
}

/* --- request decoding, for the log -------------------------------------- */

static const char *cmd_name(uint8_t cmd)
{
	static const char *const names[] = {
		[INCNN_CMD_GET_CONFIG] = "GET_CONFIG",
		[INCNN_CMD_SET_CONFIG] = "SET_CONFIG",
		[INCNN_CMD_ADD_RULE] = "ADD_RULE",
		[INCNN_CMD_DEL_RULE] = "DEL_RULE",
		[INCNN_CMD_GET_STATS] = "GET_STATS",
		[INCNN_CMD_RESET_STATS] = "RESET_STATS",
		[INCNN_CMD_GET_FLOWS] = "GET_FLOWS",
		[INCNN_CMD_GET_CODECS] = "GET_CODECS",
	};

	return cmd < sizeof(names) / sizeof(names[0]) && names[cmd] ?
	       names[cmd] : "?";
}

/* "type=value" for every attribute, nests in braces */
static void log_attrs(const struct nlattr *first, const void *tail)
{
	const struct nlattr *a;

	for (a = first; mnl_attr_ok(a, (int)((const char *)tail - (const char *)a));
	     a = mnl_attr_next(a)) {
		uint16_t len = mnl_attr_get_payload_len(a);

		logf_(" %u", mnl_attr_get_type(a));
		if (a->nla_type & NLA_F_NESTED) {
			logf_("{");
			log_attrs(mnl_attr_get_payload(a),
				  (const char *)a + a->nla_len);
			logf_(" }");
		} else if (len == 1) {
			logf_("=%u", mnl_attr_get_u8(a));
		} else if (len == 4) {
			logf_("=%u", mnl_attr_get_u32(a));
		} else {
			logf_("=<%u bytes>", len);
		}
	}
}

ssize_t mnl_socket_sendto(const struct mnl_socket *nl, const void *req,
			  size_t siz)
{
	const struct nlmsghdr *nlh = req;
	const struct genlmsghdr *gh = mnl_nlmsg_get_payload(nlh);
	bool want_ack = nlh->nlmsg_flags & NLM_F_ACK;
	bool admin;

	fk.nq = fk.head = 0;
	if (siz != nlh->nlmsg_len || !(nlh->nlmsg_flags & NLM_F_REQUEST)) {
		errno = EINVAL;
		return -1;
	}
	if (nlh->nlmsg_type == GENL_ID_CTRL) {
		if (sc("nomod")) {
			ack(nl, nlh, -ENOENT, NULL);
			return (ssize_t)siz;
		}
		reply_family(nlh);
		if (want_ack)
			ack(nl, nlh, 0, NULL);
		return (ssize_t)siz;
	}
	if (nlh->nlmsg_type != FAMILY_ID) {
		ack(nl, nlh, -EINVAL, NULL);
		return (ssize_t)siz;
	}

	logf_("%s%s%s v%u", cmd_name(gh->cmd),
	      nlh->nlmsg_flags & NLM_F_DUMP ? " dump" : "",
	      want_ack ? " ack" : "", gh->version);
	log_attrs(mnl_nlmsg_get_payload_offset(nlh, GENL_HDRLEN),
		  mnl_nlmsg_get_payload_tail(nlh));
	logf_("\n");

	admin = gh->cmd == INCNN_CMD_SET_CONFIG || gh->cmd == INCNN_CMD_ADD_RULE ||
		gh->cmd == INCNN_CMD_DEL_RULE || gh->cmd == INCNN_CMD_RESET_STATS;
	if (admin && sc("eperm")) {
		ack(nl, nlh, -EPERM, NULL);
		return (ssize_t)siz;
	}
	if (admin && sc("extack")) {
		ack(nl, nlh, -EINVAL, "codec ebq: bound 2^-31 out of range");
		return (ssize_t)siz;
	}
	if (admin && sc("noext")) {
		ack(nl, nlh, -ERANGE, NULL);
		return (ssize_t)siz;
	}

	fk.pads = 0;
	switch (gh->cmd) {
	case INCNN_CMD_GET_CONFIG:
		reply_config(nlh);
		break;
	case INCNN_CMD_GET_STATS:
		reply_stats(nlh);
		logf_("GET_STATS reply has %u pad attributes\n", fk.pads);
		break;
	case INCNN_CMD_GET_CODECS:
		if (sc("nocodecs")) {
			ack(nl, nlh, -EOPNOTSUPP, NULL);
			return (ssize_t)siz;
		}
		reply_codecs(nlh);
		break;
	case INCNN_CMD_GET_FLOWS:
		if (!(nlh->nlmsg_flags & NLM_F_DUMP)) {
			ack(nl, nlh, -EOPNOTSUPP, NULL);
			return (ssize_t)siz;
		}
		reply_flows(nl, nlh);
		logf_("GET_FLOWS reply has %u pad attributes\n", fk.pads);
		return (ssize_t)siz;	/* no ACK after a dump */
	case INCNN_CMD_SET_CONFIG:
	case INCNN_CMD_ADD_RULE:
	case INCNN_CMD_DEL_RULE:
	case INCNN_CMD_RESET_STATS:
		if (sc("warn")) {
			ack(nl, nlh, 0, "nothing changed");
			return (ssize_t)siz;
		}
		break;
	default:
		ack(nl, nlh, -EOPNOTSUPP, NULL);
		return (ssize_t)siz;
	}
	if (want_ack)
		ack(nl, nlh, 0, NULL);
	return (ssize_t)siz;
}
