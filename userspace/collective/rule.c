// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Which codec the wire applies, and its emulation.
 *
 * The rule lookup asks the module for its configuration over generic
 * netlink (INCNN_CMD_GET_CONFIG, open to unprivileged users) with the
 * client and parser incctl uses (incnn/genl.h, incnn/nl_config.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include <incnn/nl_config.h>

#include "coll.h"

#define NL_TIMEOUT_MS	2000

/* The codec and parameter of @rule (the codec's default without one). */
static int rule_codec(const struct incnn_nl_rule *rule,
		      unsigned int *codec_id, unsigned int *param)
{
	const struct incnn_codec *c;

	if (!rule->has_codec)
		return -EBADMSG;
	c = incnn_codec_get(rule->codec);
	*codec_id = rule->codec;
	*param = rule->has_param ? rule->param : c ? c->param.def : 0;
	return 1;
}

int incnn_coll_rule_parse(const uint8_t *attrs, size_t len, int dscp,
			  unsigned int *codec_id, unsigned int *param)
{
	size_t hdr = MNL_NLMSG_HDRLEN + MNL_ALIGN(GENL_HDRLEN);
	struct incnn_nl_config *cfg = calloc(1, sizeof(*cfg));
	const struct incnn_nl_rule *rule;
	struct nlmsghdr *nlh = calloc(1, hdr + len);
	int ret = -ENOMEM;

	if (!cfg || !nlh)
		goto out;
	/* the reply message these attributes came in */
	nlh->nlmsg_len = (uint32_t)(hdr + len);
	memcpy((char *)nlh + hdr, attrs, len);
	ret = incnn_nl_config_cb(nlh, cfg);
	if (ret)
		goto out;
	rule = incnn_nl_config_rule(cfg, (unsigned int)dscp);
	ret = rule ? rule_codec(rule, codec_id, param) : 0;
out:
	free(nlh);
	free(cfg);
	return ret;
}

/* The rule for @dscp: 1, 0 (none or no module), or -errno with @msg. */
static int rule_ask(int dscp, unsigned int *codec_id, unsigned int *param,
		    char *msg, size_t msglen)
{
	struct incnn_nl_config *cfg = calloc(1, sizeof(*cfg));
	const struct incnn_nl_rule *rule;
	struct genl g;
	int ret;

	if (!cfg)
		return -ENOMEM;
	if (genl_open(&g)) {
		free(cfg);
		return 0;	/* no generic netlink here: no module either */
	}
	genl_set_timeout(&g, NL_TIMEOUT_MS);
	ret = genl_resolve(&g, INCNN_GENL_NAME);
	if (ret == -ENOENT) {
		ret = 0;	/* the module is not loaded: the identity */
		goto out;
	}
	if (ret) {
		snprintf(msg, msglen,
			 "asking the incnn module for its rules (genetlink): %s (override with INCNN_CODEC=none or NAME:SETTING)",
			 strerror(ret == -EAGAIN ? ETIMEDOUT : -ret));
		goto out;
	}
	ret = incnn_nl_config_get(&g, cfg);
	if (ret) {
		snprintf(msg, msglen,
			 "reading the incnn module's configuration: %s (override with INCNN_CODEC=none or NAME:SETTING)",
			 strerror(ret == -EAGAIN ? ETIMEDOUT : -ret));
		goto out;
	}
	rule = incnn_nl_config_rule(cfg, (unsigned int)dscp);
	ret = rule ? rule_codec(rule, codec_id, param) : 0;
	if (ret < 0)
		snprintf(msg, msglen,
			 "reading the incnn module's configuration: %s (override with INCNN_CODEC=none or NAME:SETTING)",
			 strerror(-ret));
out:
	genl_close(&g);
	free(cfg);
	return ret;
}

int incnn_coll_rule_lookup(int tos, unsigned int *codec_id,
			   unsigned int *param, char *msg, size_t msglen)
{
	unsigned int codec = 0, p = 0;
	int ret;

	*codec_id = *param = 0;
	ret = rule_ask(tos >> 2, &codec, &p, msg, msglen);
	if (ret <= 0)
		return ret;
	if (!incnn_codec_get(codec)) {
		snprintf(msg, msglen,
			 "the incnn module's rule for tos 0x%02x uses codec %u, unknown to this library",
			 tos, codec);
		return -EPROTO;
	}
	if (incnn_codec_get(codec)->lossy) {
		*codec_id = codec;
		*param = p;
	}
	return 0;
}

/* --- emulation ---------------------------------------------------------- */

#define Q_PIECE	COLL_Q_PIECE

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
	q->codec = c;
	q->param = (uint8_t)param;
	/* one pass in place: no body to encode into */
	if (c->quantise)
		return 0;
	q->enc_cap = c->bound(4 * Q_PIECE);
	q->enc = malloc(q->enc_cap);
	q->scratch = aligned_alloc(64, (INCNN_CODEC_SCRATCH + 63) / 64 * 64);
	if (!q->enc || !q->scratch) {
		incnn_coll_q_free(q);
		return -ENOMEM;
	}
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
	if (q->codec && q->codec->quantise)
		return incnn_codec_quantise(q->codec, incnn_simd_auto(),
					    q->param, (u8 *)x, 4 * n);
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
