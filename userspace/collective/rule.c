// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Which codec the wire applies, and its emulation.
 *
 * The rule lookup talks generic netlink to the module (family "incnn",
 * INCNN_CMD_GET_CONFIG, open to unprivileged users) over a plain
 * AF_NETLINK socket: two small requests, every length checked.
 */
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coll.h"

#define NL_BUF		65536
#define NL_TIMEOUT_MS	2000

struct nl_req {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char attrs[64];
};

struct nl_rules {
	int dscp;
	bool found;
	unsigned int codec, param;
};

/* Walk the attributes in [p, p + len): calls @fn for each well-formed one.
 * Returns -EBADMSG for a malformed stream. */
static int nl_attrs(const uint8_t *p, size_t len,
		    int (*fn)(uint16_t type, const uint8_t *data, size_t dlen,
			      void *arg),
		    void *arg)
{
	while (len >= NLA_HDRLEN) {
		struct nlattr a;
		size_t alen, step;
		int ret;

		memcpy(&a, p, sizeof(a));
		alen = a.nla_len;
		if (alen < NLA_HDRLEN || alen > len)
			return -EBADMSG;
		ret = fn(a.nla_type & NLA_TYPE_MASK, p + NLA_HDRLEN,
			 alen - NLA_HDRLEN, arg);
		if (ret)
			return ret;
		step = NLA_ALIGN(alen);
		if (step >= len)
			return 0;
		p += step;
		len -= step;
	}
	return 0;
}

/*
 * Send @req and read replies until the ACK: @fn is called with the
 * payload after the genl header of every data message. Returns 0, the
 * kernel's -errno, or -EBADMSG/-ETIMEDOUT.
 */
static int nl_talk(int fd, struct nl_req *req, uint8_t *buf,
		   int (*fn)(const uint8_t *p, size_t len, void *arg),
		   void *arg)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	uint32_t seq = req->n.nlmsg_seq;
	int64_t deadline = coll_now_ms() + NL_TIMEOUT_MS;
	int cb_err = 0;

	if (sendto(fd, req, req->n.nlmsg_len, 0, (struct sockaddr *)&kernel,
		   sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t k;
		size_t off = 0;

		if (poll(&p, 1, coll_left_ms(deadline)) <= 0)
			return -ETIMEDOUT;
		k = recv(fd, buf, NL_BUF, MSG_DONTWAIT);
		if (k < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		while ((size_t)k - off >= NLMSG_HDRLEN) {
			struct nlmsghdr h;
			const uint8_t *m = buf + off;

			memcpy(&h, m, sizeof(h));
			if (h.nlmsg_len < NLMSG_HDRLEN ||
			    h.nlmsg_len > (size_t)k - off)
				return -EBADMSG;
			off += NLMSG_ALIGN(h.nlmsg_len);
			if (off > (size_t)k)
				off = (size_t)k;
			if (h.nlmsg_seq != seq)
				continue;
			if (h.nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr e;

				if (h.nlmsg_len < NLMSG_HDRLEN + sizeof(e))
					return -EBADMSG;
				memcpy(&e, m + NLMSG_HDRLEN, sizeof(e));
				if (e.error)
					return e.error < 0 ? e.error : -e.error;
				return cb_err;
			}
			if (h.nlmsg_type == NLMSG_DONE)
				return cb_err;
			if (h.nlmsg_type < NLMSG_MIN_TYPE)
				continue;
			if (h.nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN)
				return -EBADMSG;
			if (!cb_err)
				cb_err = fn(m + NLMSG_HDRLEN + GENL_HDRLEN,
					    h.nlmsg_len - NLMSG_HDRLEN -
					    GENL_HDRLEN, arg);
		}
	}
}

static int nl_family_attr(uint16_t type, const uint8_t *d, size_t len,
			  void *arg)
{
	if (type == CTRL_ATTR_FAMILY_ID) {
		if (len < 2)
			return -EBADMSG;
		memcpy(arg, d, 2);
	}
	return 0;
}

static int nl_family_cb(const uint8_t *p, size_t len, void *arg)
{
	return nl_attrs(p, len, nl_family_attr, arg);
}

static int nl_rule_attr(uint16_t type, const uint8_t *d, size_t len,
			void *arg)
{
	unsigned int *v = arg;

	if (type == INCNN_RULE_A_DSCP || type == INCNN_RULE_A_CODEC ||
	    type == INCNN_RULE_A_PARAM) {
		if (len < 1)
			return -EBADMSG;
		v[type] = d[0];
		v[0] |= 1u << type;
	}
	return 0;
}

static int nl_rules_attr(uint16_t type, const uint8_t *d, size_t len,
			 void *arg)
{
	struct nl_rules *r = arg;
	unsigned int v[INCNN_RULE_A_MAX + 1] = { 0 };
	int ret;

	if (type != INCNN_A_RULE)
		return 0;
	ret = nl_attrs(d, len, nl_rule_attr, v);
	if (ret)
		return ret;
	if (!(v[0] & (1u << INCNN_RULE_A_DSCP)) ||
	    !(v[0] & (1u << INCNN_RULE_A_CODEC)))
		return -EBADMSG;
	if ((int)v[INCNN_RULE_A_DSCP] == r->dscp) {
		const struct incnn_codec *c = incnn_codec_get(v[INCNN_RULE_A_CODEC]);

		r->found = true;
		r->codec = v[INCNN_RULE_A_CODEC];
		r->param = v[0] & (1u << INCNN_RULE_A_PARAM) ?
			   v[INCNN_RULE_A_PARAM] : c ? c->param.def : 0;
	}
	return 0;
}

static int nl_config_attr(uint16_t type, const uint8_t *d, size_t len,
			  void *arg)
{
	if (type == INCNN_A_RULES)
		return nl_attrs(d, len, nl_rules_attr, arg);
	return 0;
}

static int nl_config_cb(const uint8_t *p, size_t len, void *arg)
{
	return nl_attrs(p, len, nl_config_attr, arg);
}

int incnn_coll_rule_parse(const uint8_t *attrs, size_t len, int dscp,
			  unsigned int *codec_id, unsigned int *param)
{
	struct nl_rules rules = { .dscp = dscp };
	int ret = nl_config_cb(attrs, len, &rules);

	if (ret)
		return ret;
	if (!rules.found)
		return 0;
	*codec_id = rules.codec;
	*param = rules.param;
	return 1;
}

static void nl_req_init(struct nl_req *req, uint16_t type, uint8_t cmd,
			uint8_t version, uint32_t seq)
{
	memset(req, 0, sizeof(*req));
	req->n.nlmsg_len = NLMSG_HDRLEN + GENL_HDRLEN;
	req->n.nlmsg_type = type;
	req->n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req->n.nlmsg_seq = seq;
	req->g.cmd = cmd;
	req->g.version = version;
}

int incnn_coll_rule_lookup(int tos, unsigned int *codec_id,
			   unsigned int *param, char *msg, size_t msglen)
{
	struct nl_rules rules = { .dscp = tos >> 2 };
	struct sockaddr_nl me = { .nl_family = AF_NETLINK };
	const struct incnn_codec *codec;
	struct nl_req req;
	struct nlattr a;
	uint16_t family = 0;
	uint8_t *buf;
	int fd, ret;

	*codec_id = *param = 0;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return 0;	/* no generic netlink here: no module either */
	buf = malloc(NL_BUF);
	if (!buf || bind(fd, (struct sockaddr *)&me, sizeof(me))) {
		free(buf);
		close(fd);
		return 0;
	}

	nl_req_init(&req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1,
		    (uint32_t)coll_now_ms());
	a.nla_type = CTRL_ATTR_FAMILY_NAME;
	a.nla_len = NLA_HDRLEN + sizeof(INCNN_GENL_NAME);
	memcpy(req.attrs, &a, sizeof(a));
	memcpy(req.attrs + NLA_HDRLEN, INCNN_GENL_NAME, sizeof(INCNN_GENL_NAME));
	req.n.nlmsg_len += NLA_ALIGN(a.nla_len);
	ret = nl_talk(fd, &req, buf, nl_family_cb, &family);
	if (ret == -ENOENT || (!ret && !family)) {
		ret = 0;	/* the module is not loaded: the identity */
		goto out;
	}
	if (ret) {
		snprintf(msg, msglen,
			 "asking the incnn module for its rules (genetlink): %s (override with INCNN_CODEC=none or NAME:SETTING)",
			 strerror(-ret));
		goto out;
	}

	nl_req_init(&req, family, INCNN_CMD_GET_CONFIG, INCNN_GENL_VERSION,
		    req.n.nlmsg_seq + 1);
	ret = nl_talk(fd, &req, buf, nl_config_cb, &rules);
	if (ret) {
		snprintf(msg, msglen,
			 "reading the incnn module's configuration: %s (override with INCNN_CODEC=none or NAME:SETTING)",
			 strerror(-ret));
		goto out;
	}
	if (!rules.found)
		goto out;
	codec = incnn_codec_get(rules.codec);
	if (!codec) {
		snprintf(msg, msglen,
			 "the incnn module's rule for tos 0x%02x uses codec %u, unknown to this library",
			 tos, rules.codec);
		ret = -EPROTO;
		goto out;
	}
	if (codec->lossy) {
		*codec_id = rules.codec;
		*param = rules.param;
	}
out:
	free(buf);
	close(fd);
	return ret;
}

/* --- emulation ---------------------------------------------------------- */

/* Floats per codec call: what one 64 KiB frame would carry at most. */
#define Q_PIECE	16384

int incnn_coll_codec_check(unsigned int codec_id, unsigned int param)
{
	const struct incnn_codec *c = incnn_codec_get(codec_id);

	if (!c || !c->lossy || !c->floats || param > 255 ||
	    incnn_codec_check_param(c, (u8)param))
		return -EINVAL;
	return 0;
}

void incnn_coll_codec_why(unsigned int codec_id, unsigned int param,
			  char *buf, size_t len)
{
	const struct incnn_codec *c = incnn_codec_get(codec_id);
	char lossy[64] = "", range[32];
	size_t n = 0;

	if (c && c->lossy && c->floats) {
		snprintf(buf, len, "codec %s with parameter %u cannot be emulated (%s takes %s %s)",
			 c->name, param, c->name,
			 incnn_codec_param_key(c->param.kind) ?: "parameter",
			 incnn_codec_param_range(&c->param, range,
						 sizeof(range)));
		return;
	}
	for (unsigned int id = 1; id <= INCNN_CODEC_MAX && n < sizeof(lossy);
	     id++) {
		const struct incnn_codec *l = incnn_codec_get(id);

		if (l && l->lossy && l->floats)
			n += snprintf(lossy + n, sizeof(lossy) - n, "%s%s",
				      n ? ", " : "", l->name);
	}
	snprintf(buf, len, "codec %u cannot be emulated (want a lossy codec: %s)",
		 codec_id, lossy);
}

int incnn_coll_q_init(struct coll_q *q, unsigned int codec_id,
		      unsigned int param)
{
	const struct incnn_codec *c;

	memset(q, 0, sizeof(*q));
	if (!codec_id)
		return 0;
	if (incnn_coll_codec_check(codec_id, param))
		return -EINVAL;
	c = incnn_codec_get(codec_id);
	q->enc_cap = c->bound(4 * Q_PIECE);
	q->enc = malloc(q->enc_cap);
	q->scratch = aligned_alloc(64, (INCNN_CODEC_SCRATCH + 63) / 64 * 64);
	if (!q->enc || !q->scratch) {
		incnn_coll_q_free(q);
		return -ENOMEM;
	}
	q->codec = c;
	q->param = (uint8_t)param;
	return 0;
}

void incnn_coll_q_free(struct coll_q *q)
{
	free(q->enc);
	free(q->scratch);
	memset(q, 0, sizeof(*q));
}

int incnn_coll_q_apply(struct coll_q *q, float *x, size_t n)
{
	while (q->codec && n) {
		size_t k = n < Q_PIECE ? n : Q_PIECE;
		ssize_t len = incnn_codec_encode(q->codec, incnn_simd_auto(),
						 q->param, (const u8 *)x, 4 * k,
						 q->enc, q->enc_cap,
						 q->scratch, NULL);
		int ret;

		if (len < 0)
			return (int)len;
		ret = incnn_codec_decode(q->codec, incnn_simd_auto(), q->param,
					 q->enc, (size_t)len, (u8 *)x, 4 * k);
		if (ret)
			return ret;
		x += k;
		n -= k;
	}
	return 0;
}

void incnn_coll_codec_desc(unsigned int codec_id, unsigned int param,
			   char *buf, size_t len)
{
	const struct incnn_codec *c = incnn_codec_get(codec_id);

	if (!codec_id)
		snprintf(buf, len, "identity");
	else if (!c)
		snprintf(buf, len, "codec %u param %u", codec_id, param);
	else if (c->param.kind == INCNN_PARAM_BITS)
		snprintf(buf, len, "%s %u bits", c->name, param);
	else if (c->param.kind == INCNN_PARAM_BOUND)
		snprintf(buf, len, "%s 2^-%u", c->name, param);
	else
		snprintf(buf, len, "%s", c->name);
}
