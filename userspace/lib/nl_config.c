// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The module's configuration (INCNN_CMD_GET_CONFIG): one parser for
 * incctl and the collective.
 */
#include <incnn/nl_config.h>

#include <errno.h>
#include <string.h>

/* Insert @r in DSCP order; past INCNN_MAX_RULES rules, drop it. */
static void rule_insert(struct incnn_nl_config *cfg,
			const struct incnn_nl_rule *r)
{
	size_t i = cfg->nrules;

	if (cfg->nrules >= INCNN_MAX_RULES)
		return;
	while (i > 0 && cfg->rules[i - 1].dscp > r->dscp) {
		cfg->rules[i] = cfg->rules[i - 1];
		i--;
	}
	cfg->rules[i] = *r;
	cfg->nrules++;
}

static int rule_entry(const struct nlattr *nest, struct incnn_nl_config *cfg)
{
	static const enum mnl_attr_data_type pol[INCNN_RULE_A_MAX + 1] = {
		[INCNN_RULE_A_DSCP] = MNL_TYPE_U8,
		[INCNN_RULE_A_CODEC] = MNL_TYPE_U8,
		[INCNN_RULE_A_PARAM] = MNL_TYPE_U8,
	};
	const struct nlattr *tb[INCNN_RULE_A_MAX + 1];
	struct incnn_nl_rule r = { 0 };

	if (genl_parse_nested(nest, tb, INCNN_RULE_A_MAX, pol))
		return -EBADMSG;
	if (!tb[INCNN_RULE_A_DSCP])
		return 0;	/* a rule without its key means nothing */
	r.dscp = mnl_attr_get_u8(tb[INCNN_RULE_A_DSCP]);
	if (tb[INCNN_RULE_A_CODEC]) {
		r.codec = mnl_attr_get_u8(tb[INCNN_RULE_A_CODEC]);
		r.has_codec = true;
	}
	if (tb[INCNN_RULE_A_PARAM]) {
		r.param = mnl_attr_get_u8(tb[INCNN_RULE_A_PARAM]);
		r.has_param = true;
	}
	rule_insert(cfg, &r);
	return 0;
}

static int rules_nest(const struct nlattr *rules, struct incnn_nl_config *cfg)
{
	const struct nlattr *attr;
	int err;

	mnl_attr_for_each_nested(attr, rules) {
		if (mnl_attr_get_type(attr) != INCNN_A_RULE)
			continue;
		if (mnl_attr_validate(attr, MNL_TYPE_NESTED) < 0)
			return -EBADMSG;
		err = rule_entry(attr, cfg);
		if (err)
			return err;
	}
	return genl_nested_end(attr, rules);
}

int incnn_nl_config_cb(const struct nlmsghdr *nlh, void *data)
{
	static const enum mnl_attr_data_type pol[INCNN_A_MAX + 1] = {
		[INCNN_A_TX_ENABLED] = MNL_TYPE_U8,
		[INCNN_A_RX_ENABLED] = MNL_TYPE_U8,
		[INCNN_A_WIRE_DSCP] = MNL_TYPE_U8,
		[INCNN_A_FLOW_MAX] = MNL_TYPE_U32,
		[INCNN_A_FLOW_IDLE_TIMEOUT] = MNL_TYPE_U32,
		[INCNN_A_FLOW_CLOSE_TIMEOUT] = MNL_TYPE_U32,
		[INCNN_A_FLOW_COUNT] = MNL_TYPE_U32,
		[INCNN_A_RULES] = MNL_TYPE_NESTED,
		[INCNN_A_SUPERFRAMES] = MNL_TYPE_U8,
	};
	const struct nlattr *tb[INCNN_A_MAX + 1];
	struct incnn_nl_config *cfg = data;

	if (genl_parse(nlh, tb, INCNN_A_MAX, pol))
		return -EBADMSG;
	for (unsigned int i = 1; i <= INCNN_A_MAX && i < 32; i++)
		if (tb[i])
			cfg->have |= 1U << i;
	if (tb[INCNN_A_TX_ENABLED])
		cfg->tx_enabled = mnl_attr_get_u8(tb[INCNN_A_TX_ENABLED]);
	if (tb[INCNN_A_RX_ENABLED])
		cfg->rx_enabled = mnl_attr_get_u8(tb[INCNN_A_RX_ENABLED]);
	if (tb[INCNN_A_WIRE_DSCP])
		cfg->wire_dscp = mnl_attr_get_u8(tb[INCNN_A_WIRE_DSCP]);
	if (tb[INCNN_A_FLOW_MAX])
		cfg->flow_max = mnl_attr_get_u32(tb[INCNN_A_FLOW_MAX]);
	if (tb[INCNN_A_FLOW_IDLE_TIMEOUT])
		cfg->idle_timeout =
			mnl_attr_get_u32(tb[INCNN_A_FLOW_IDLE_TIMEOUT]);
	if (tb[INCNN_A_FLOW_CLOSE_TIMEOUT])
		cfg->close_timeout =
			mnl_attr_get_u32(tb[INCNN_A_FLOW_CLOSE_TIMEOUT]);
	if (tb[INCNN_A_FLOW_COUNT])
		cfg->flow_count = mnl_attr_get_u32(tb[INCNN_A_FLOW_COUNT]);
	if (tb[INCNN_A_SUPERFRAMES])
		cfg->superframes = mnl_attr_get_u8(tb[INCNN_A_SUPERFRAMES]);
	return tb[INCNN_A_RULES] ? rules_nest(tb[INCNN_A_RULES], cfg) : 0;
}

int incnn_nl_config_get(struct genl *g, struct incnn_nl_config *cfg)
{
	struct nlmsghdr *nlh;

	memset(cfg, 0, sizeof(*cfg));
	nlh = genl_request(g, g->family, INCNN_CMD_GET_CONFIG,
			   INCNN_GENL_VERSION, NLM_F_ACK);
	return genl_talk(g, nlh, incnn_nl_config_cb, cfg);
}

const struct incnn_nl_rule *incnn_nl_config_rule(
	const struct incnn_nl_config *cfg, unsigned int dscp)
{
	for (size_t i = 0; i < cfg->nrules; i++)
		if (cfg->rules[i].dscp == dscp)
			return &cfg->rules[i];
	return NULL;
}
