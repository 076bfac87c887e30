// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink family "incnn": configuration, rules, statistics, flows
 * and codecs. The attribute tree is documented in uapi/linux/incnn.h.
 */
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/netlink.h>
#include <net/sock.h>

#include "incnn.h"

static const struct nla_policy incnn_rule_policy[INCNN_RULE_A_MAX + 1] = {
	[INCNN_RULE_A_DSCP] = NLA_POLICY_MAX(NLA_U8, 63),
	[INCNN_RULE_A_CODEC] = NLA_POLICY_RANGE(NLA_U8, 1, INCNN_CODEC_MAX),
	[INCNN_RULE_A_PARAM] = { .type = NLA_U8 },
};

static struct netlink_range_validation incnn_flow_max_range = {
	.min = 1,
	.max = INCNN_FLOW_MAX_LIMIT,
};

static struct netlink_range_validation incnn_idle_range = {
	.min = 1,
	.max = 86400,
};

static struct netlink_range_validation incnn_close_range = {
	.min = 1,
	.max = 3600,
};

static const struct nla_policy incnn_policy[INCNN_A_MAX + 1] = {
	[INCNN_A_TX_ENABLED] = NLA_POLICY_MAX(NLA_U8, 1),
	[INCNN_A_RX_ENABLED] = NLA_POLICY_MAX(NLA_U8, 1),
	[INCNN_A_WIRE_DSCP] = NLA_POLICY_MAX(NLA_U8, 63),
	[INCNN_A_FLOW_MAX] = NLA_POLICY_FULL_RANGE(NLA_U32,
						   &incnn_flow_max_range),
	[INCNN_A_FLOW_IDLE_TIMEOUT] = NLA_POLICY_FULL_RANGE(NLA_U32,
							    &incnn_idle_range),
	[INCNN_A_FLOW_CLOSE_TIMEOUT] = NLA_POLICY_FULL_RANGE(NLA_U32,
							     &incnn_close_range),
	[INCNN_A_RULE] = NLA_POLICY_NESTED(incnn_rule_policy),
	[INCNN_A_SUPERFRAMES] = NLA_POLICY_MAX(NLA_U8, 1),
};

static struct genl_family incnn_genl_family;

static void *incnn_genl_put(struct sk_buff *msg, struct genl_info *info)
{
	return genlmsg_put(msg, info->snd_portid, info->snd_seq,
			   &incnn_genl_family, 0, info->genlhdr->cmd);
}

static int incnn_put_rules(struct sk_buff *msg, const struct incnn_config *c)
{
	struct nlattr *rules, *rule;
	unsigned int d;

	rules = nla_nest_start(msg, INCNN_A_RULES);
	if (!rules)
		return -EMSGSIZE;
	for (d = 0; d < ARRAY_SIZE(c->rules); d++) {
		if (!c->rules[d].codec)
			continue;
		rule = nla_nest_start(msg, INCNN_A_RULE);
		if (!rule || nla_put_u8(msg, INCNN_RULE_A_DSCP, d) ||
		    nla_put_u8(msg, INCNN_RULE_A_CODEC, c->rules[d].codec) ||
		    nla_put_u8(msg, INCNN_RULE_A_PARAM, c->rules[d].param))
			return -EMSGSIZE;
		nla_nest_end(msg, rule);
	}
	nla_nest_end(msg, rules);
	return 0;
}

static int incnn_get_config(struct sk_buff *skb, struct genl_info *info)
{
	struct incnn_net *in = incnn_pernet(genl_info_net(info));
	const struct incnn_config *c;
	struct sk_buff *msg;
	void *hdr;
	int err = -EMSGSIZE;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = incnn_genl_put(msg, info);
	if (!hdr)
		goto err;
	mutex_lock(&in->cfg_lock);
	c = rcu_dereference_protected(in->cfg, lockdep_is_held(&in->cfg_lock));
	if (nla_put_u8(msg, INCNN_A_TX_ENABLED, c->tx) ||
	    nla_put_u8(msg, INCNN_A_RX_ENABLED, c->rx) ||
	    nla_put_u8(msg, INCNN_A_WIRE_DSCP, c->wire_dscp) ||
	    nla_put_u32(msg, INCNN_A_FLOW_MAX, c->flow_max) ||
	    nla_put_u32(msg, INCNN_A_FLOW_IDLE_TIMEOUT, c->idle_timeout) ||
	    nla_put_u32(msg, INCNN_A_FLOW_CLOSE_TIMEOUT, c->close_timeout) ||
	    nla_put_u32(msg, INCNN_A_FLOW_COUNT, READ_ONCE(in->flows->count)) ||
	    incnn_put_rules(msg, c) ||
	    nla_put_u8(msg, INCNN_A_SUPERFRAMES, c->superframes)) {
		mutex_unlock(&in->cfg_lock);
		goto err;
	}
	mutex_unlock(&in->cfg_lock);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
err:
	nlmsg_free(msg);
	return err;
}

/*
 * Copy, change and publish the configuration. @fn applies the request to
 * the copy and returns 0 or an error (with extack set).
 */
static int incnn_update_config(struct genl_info *info,
			       int (*fn)(struct incnn_config *c,
					 struct genl_info *info))
{
	struct incnn_net *in = incnn_pernet(genl_info_net(info));
	struct incnn_config *old, *c;
	int err;

	mutex_lock(&in->cfg_lock);
	old = rcu_dereference_protected(in->cfg,
					lockdep_is_held(&in->cfg_lock));
	c = kmemdup(old, sizeof(*old), GFP_KERNEL);
	if (!c) {
		err = -ENOMEM;
		goto out;
	}
	err = fn(c, info);
	if (err) {
		kfree(c);
		goto out;
	}
	rcu_assign_pointer(in->cfg, c);
	kfree_rcu(old, rcu);
out:
	mutex_unlock(&in->cfg_lock);
	return err;
}

static int incnn_apply_config(struct incnn_config *c, struct genl_info *info)
{
	struct nlattr **a = info->attrs;

	if (a[INCNN_A_WIRE_DSCP]) {
		u8 w = nla_get_u8(a[INCNN_A_WIRE_DSCP]);

		if (c->rules[w].codec) {
			NL_SET_ERR_MSG_ATTR(info->extack, a[INCNN_A_WIRE_DSCP],
					    "wire DSCP is used by a rule");
			return -EINVAL;
		}
		c->wire_dscp = w;
	}
	if (a[INCNN_A_TX_ENABLED])
		c->tx = nla_get_u8(a[INCNN_A_TX_ENABLED]);
	if (a[INCNN_A_RX_ENABLED])
		c->rx = nla_get_u8(a[INCNN_A_RX_ENABLED]);
	if (a[INCNN_A_FLOW_MAX])
		c->flow_max = nla_get_u32(a[INCNN_A_FLOW_MAX]);
	if (a[INCNN_A_FLOW_IDLE_TIMEOUT])
		c->idle_timeout = nla_get_u32(a[INCNN_A_FLOW_IDLE_TIMEOUT]);
	if (a[INCNN_A_FLOW_CLOSE_TIMEOUT])
		c->close_timeout = nla_get_u32(a[INCNN_A_FLOW_CLOSE_TIMEOUT]);
	if (a[INCNN_A_SUPERFRAMES])
		c->superframes = nla_get_u8(a[INCNN_A_SUPERFRAMES]);
	return 0;
}

/*
 * Flows are kernel memory: beyond the default table size, flow-max needs
 * CAP_NET_ADMIN in the initial user namespace (an unprivileged user
 * namespace's root may lower it, or raise it up to the default).
 */
static int incnn_set_config(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *max = info->attrs[INCNN_A_FLOW_MAX];

	if (max && nla_get_u32(max) > INCNN_DEFAULT_FLOW_MAX &&
	    !netlink_capable(skb, CAP_NET_ADMIN)) {
		NL_SET_ERR_MSG_ATTR(info->extack, max,
				    "flow-max above the default needs CAP_NET_ADMIN in the initial user namespace");
		return -EPERM;
	}
	return incnn_update_config(info, incnn_apply_config);
}

static int incnn_parse_rule(struct genl_info *info, struct nlattr **tb)
{
	struct nlattr *rule = info->attrs[INCNN_A_RULE];
	int err;

	if (!rule) {
		NL_SET_ERR_MSG(info->extack, "missing rule");
		return -EINVAL;
	}
	err = nla_parse_nested(tb, INCNN_RULE_A_MAX, rule, incnn_rule_policy,
			       info->extack);
	if (err)
		return err;
	if (!tb[INCNN_RULE_A_DSCP]) {
		NL_SET_ERR_MSG_ATTR(info->extack, rule, "rule needs a DSCP");
		return -EINVAL;
	}
	return 0;
}

static int incnn_apply_add_rule(struct incnn_config *c,
				struct genl_info *info)
{
	struct nlattr *tb[INCNN_RULE_A_MAX + 1];
	const struct incnn_codec *codec;
	u8 dscp, param;
	int err;

	err = incnn_parse_rule(info, tb);
	if (err)
		return err;
	if (!tb[INCNN_RULE_A_CODEC]) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[INCNN_A_RULE],
				    "rule needs a codec");
		return -EINVAL;
	}
	dscp = nla_get_u8(tb[INCNN_RULE_A_DSCP]);
	codec = incnn_codec_get(nla_get_u8(tb[INCNN_RULE_A_CODEC]));
	param = tb[INCNN_RULE_A_PARAM] ? nla_get_u8(tb[INCNN_RULE_A_PARAM]) :
					 codec->param.def;
	if (incnn_codec_check_param(codec, param)) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[INCNN_RULE_A_PARAM],
				    "invalid parameter for this codec");
		return -EINVAL;
	}
	if (dscp == c->wire_dscp) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[INCNN_RULE_A_DSCP],
				    "DSCP is the wire DSCP");
		return -EINVAL;
	}
	c->rules[dscp].codec = codec->id;
	c->rules[dscp].param = param;
	return 0;
}

static int incnn_add_rule(struct sk_buff *skb, struct genl_info *info)
{
	return incnn_update_config(info, incnn_apply_add_rule);
}

static int incnn_apply_del_rule(struct incnn_config *c,
				struct genl_info *info)
{
	struct nlattr *tb[INCNN_RULE_A_MAX + 1];
	u8 dscp;
	int err;

	err = incnn_parse_rule(info, tb);
	if (err)
		return err;
	dscp = nla_get_u8(tb[INCNN_RULE_A_DSCP]);
	if (!c->rules[dscp].codec) {
		NL_SET_ERR_MSG_ATTR(info->extack, tb[INCNN_RULE_A_DSCP],
				    "no rule for this DSCP");
		return -ENOENT;
	}
	c->rules[dscp].codec = INCNN_CODEC_NONE;
	c->rules[dscp].param = 0;
	return 0;
}

static int incnn_del_rule(struct sk_buff *skb, struct genl_info *info)
{
	return incnn_update_config(info, incnn_apply_del_rule);
}

static int incnn_put_codec_stats(struct sk_buff *msg,
				 const struct incnn_pcpu_stats *sum)
{
	struct nlattr *all, *one;
	unsigned int id;

	all = nla_nest_start(msg, INCNN_A_CODEC_STATS);
	if (!all)
		return -EMSGSIZE;
	for (id = 1; id <= INCNN_CODEC_MAX; id++) {
		const struct incnn_codec_stats *cs = &sum->codec[id];

		one = nla_nest_start(msg, INCNN_A_CODEC_STAT);
		if (!one ||
		    nla_put_u8(msg, INCNN_CSTAT_A_CODEC, id) ||
		    nla_put_u64_64bit(msg, INCNN_CSTAT_A_FRAMES, cs->frames,
				      INCNN_CSTAT_A_PAD) ||
		    nla_put_u64_64bit(msg, INCNN_CSTAT_A_BYTES_IN, cs->bytes_in,
				      INCNN_CSTAT_A_PAD) ||
		    nla_put_u64_64bit(msg, INCNN_CSTAT_A_BYTES_OUT,
				      cs->bytes_out, INCNN_CSTAT_A_PAD) ||
		    nla_put_u64_64bit(msg, INCNN_CSTAT_A_HIST_0, cs->hist[0],
				      INCNN_CSTAT_A_PAD) ||
		    nla_put_u64_64bit(msg, INCNN_CSTAT_A_HIST_8, cs->hist[1],
				      INCNN_CSTAT_A_PAD) ||
		    nla_put_u64_64bit(msg, INCNN_CSTAT_A_HIST_16, cs->hist[2],
				      INCNN_CSTAT_A_PAD) ||
		    nla_put_u64_64bit(msg, INCNN_CSTAT_A_HIST_32, cs->hist[3],
				      INCNN_CSTAT_A_PAD))
			return -EMSGSIZE;
		nla_nest_end(msg, one);
	}
	nla_nest_end(msg, all);
	return 0;
}

static int incnn_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct incnn_net *in = incnn_pernet(genl_info_net(info));
	struct incnn_pcpu_stats *sum;
	struct nlattr *stats;
	struct sk_buff *msg;
	unsigned int i;
	void *hdr;
	int err = -EMSGSIZE;

	sum = kmalloc(sizeof(*sum), GFP_KERNEL);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!sum || !msg) {
		err = -ENOMEM;
		goto err;
	}
	incnn_stats_sum(in, sum);
	hdr = incnn_genl_put(msg, info);
	if (!hdr)
		goto err;
	stats = nla_nest_start(msg, INCNN_A_STATS);
	if (!stats)
		goto err;
	/* counter i has type i + 1; padding, if any, type 0 */
	for (i = 0; i < __INCNN_STAT_MAX; i++)
		if (nla_put_u64_64bit(msg, i + 1, sum->stat[i], 0))
			goto err;
	nla_nest_end(msg, stats);
	if (incnn_put_codec_stats(msg, sum))
		goto err;
	kfree(sum);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
err:
	kfree(sum);
	nlmsg_free(msg);
	return err;
}

static int incnn_reset_stats(struct sk_buff *skb, struct genl_info *info)
{
	incnn_stats_reset(incnn_pernet(genl_info_net(info)));
	return 0;
}

/*
 * A flow's family and addresses: an IPv4 flow's as INCNN_FLOW_A_SADDR and
 * _DADDR (as before IPv6), an IPv6 flow's as _SADDR6 and _DADDR6.
 */
static int incnn_put_flow_addrs(struct sk_buff *msg,
				const struct incnn_tuple *t)
{
	if (nla_put_u8(msg, INCNN_FLOW_A_FAMILY, t->family))
		return -EMSGSIZE;
	if (t->family == AF_INET6)
		return nla_put_in6_addr(msg, INCNN_FLOW_A_SADDR6, &t->saddr) ||
		       nla_put_in6_addr(msg, INCNN_FLOW_A_DADDR6, &t->daddr) ?
		       -EMSGSIZE : 0;
	return nla_put_in_addr(msg, INCNN_FLOW_A_SADDR,
			       t->saddr.s6_addr32[0]) ||
	       nla_put_in_addr(msg, INCNN_FLOW_A_DADDR,
			       t->daddr.s6_addr32[0]) ? -EMSGSIZE : 0;
}

static int incnn_put_flow(struct sk_buff *msg, struct incnn_flow *f)
{
	struct nlattr *nest = nla_nest_start(msg, INCNN_A_FLOW);
	u32 flags, anchor;
	u64 orig, wire;

	if (!nest)
		return -EMSGSIZE;
	spin_lock_bh(&f->lock);
	flags = f->flags & 0xffff;
	anchor = f->anchor;
	orig = f->bytes_orig;
	wire = f->bytes_wire;
	spin_unlock_bh(&f->lock);
	if (incnn_put_flow_addrs(msg, &f->t) ||
	    nla_put_be16(msg, INCNN_FLOW_A_SPORT, f->t.sport) ||
	    nla_put_be16(msg, INCNN_FLOW_A_DPORT, f->t.dport) ||
	    nla_put_u32(msg, INCNN_FLOW_A_FLAGS, flags) ||
	    nla_put_u32(msg, INCNN_FLOW_A_ANCHOR, anchor) ||
	    nla_put_u8(msg, INCNN_FLOW_A_DSCP, f->dscp) ||
	    nla_put_u8(msg, INCNN_FLOW_A_CODEC, f->rule.codec) ||
	    nla_put_u8(msg, INCNN_FLOW_A_PARAM, f->rule.param) ||
	    nla_put_u64_64bit(msg, INCNN_FLOW_A_BYTES_ORIG, orig,
			      INCNN_FLOW_A_PAD) ||
	    nla_put_u64_64bit(msg, INCNN_FLOW_A_BYTES_WIRE, wire,
			      INCNN_FLOW_A_PAD) ||
	    nla_put_u32(msg, INCNN_FLOW_A_IDLE_MS,
			jiffies_to_msecs(jiffies - READ_ONCE(f->last)))) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/* cb->args[0]: bucket, cb->args[1]: entries of that bucket already sent */
static int incnn_get_flows(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct incnn_net *in = incnn_pernet(sock_net(skb->sk));
	struct incnn_flow_table *t = in->flows;
	unsigned long b, skip;
	struct incnn_flow *f;
	void *hdr;

	rcu_read_lock();
	for (b = cb->args[0]; b < ARRAY_SIZE(t->buckets); b++) {
		skip = cb->args[1];
		hlist_for_each_entry_rcu(f, &t->buckets[b], node) {
			if (skip) {
				skip--;
				continue;
			}
			hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
					  cb->nlh->nlmsg_seq,
					  &incnn_genl_family, NLM_F_MULTI,
					  INCNN_CMD_GET_FLOWS);
			if (!hdr)
				goto full;
			if (incnn_put_flow(skb, f)) {
				genlmsg_cancel(skb, hdr);
				goto full;
			}
			genlmsg_end(skb, hdr);
			cb->args[1]++;
		}
		cb->args[1] = 0;
	}
full:
	rcu_read_unlock();
	cb->args[0] = b;
	return skb->len;
}

/* the self-benchmark's figures of codec @id, where it ran */
static int incnn_put_codec_bench(struct sk_buff *msg, unsigned int id)
{
	static const u16 attr[2][2] = {
		{ INCNN_CODEC_A_ENC_MBPS_NONE, INCNN_CODEC_A_DEC_MBPS_NONE },
		{ INCNN_CODEC_A_ENC_MBPS_AVX2, INCNN_CODEC_A_DEC_MBPS_AVX2 },
	};
	unsigned int p, d;

	for (p = 0; p < 2; p++)
		for (d = 0; d < 2; d++) {
			u32 v = incnn_simd_mbps(id, p, d);

			if (v && nla_put_u32(msg, attr[p][d], v))
				return -EMSGSIZE;
		}
	return 0;
}

static int incnn_get_codecs(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *all, *one;
	struct sk_buff *msg;
	unsigned int id;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = incnn_genl_put(msg, info);
	if (!hdr)
		goto err;
	all = nla_nest_start(msg, INCNN_A_CODECS);
	if (!all)
		goto err;
	for (id = 1; id <= INCNN_CODEC_MAX; id++) {
		const struct incnn_codec *c = incnn_codec_get(id);

		one = nla_nest_start(msg, INCNN_A_CODEC);
		if (!one || nla_put_u8(msg, INCNN_CODEC_A_ID, id) ||
		    nla_put_string(msg, INCNN_CODEC_A_NAME, c->name) ||
		    nla_put_u8(msg, INCNN_CODEC_A_LOSSY, c->lossy) ||
		    nla_put_u8(msg, INCNN_CODEC_A_PARAM_MIN, c->param.min) ||
		    nla_put_u8(msg, INCNN_CODEC_A_PARAM_MAX, c->param.max) ||
		    nla_put_u8(msg, INCNN_CODEC_A_PARAM_DEFAULT, c->param.def) ||
		    nla_put_u8(msg, INCNN_CODEC_A_PARAM_KIND, c->param.kind) ||
		    incnn_put_codec_bench(msg, id))
			goto err;
		nla_nest_end(msg, one);
	}
	nla_nest_end(msg, all);
	if (nla_put_string(msg, INCNN_A_SIMD,
			   incnn_simd_name(incnn_simd_level())))
		goto err;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
err:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static const struct genl_ops incnn_genl_ops[] = {
	{
		.cmd = INCNN_CMD_GET_CONFIG,
		.doit = incnn_get_config,
	},
	{
		.cmd = INCNN_CMD_SET_CONFIG,
		.doit = incnn_set_config,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = INCNN_CMD_ADD_RULE,
		.doit = incnn_add_rule,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = INCNN_CMD_DEL_RULE,
		.doit = incnn_del_rule,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = INCNN_CMD_GET_STATS,
		.doit = incnn_get_stats,
	},
	{
		.cmd = INCNN_CMD_RESET_STATS,
		.doit = incnn_reset_stats,
		.flags = GENL_UNS_ADMIN_PERM,
	},
	{
		.cmd = INCNN_CMD_GET_FLOWS,
		.dumpit = incnn_get_flows,
	},
	{
		.cmd = INCNN_CMD_GET_CODECS,
		.doit = incnn_get_codecs,
	},
};

static struct genl_family incnn_genl_family __ro_after_init = {
	.name = INCNN_GENL_NAME,
	.version = INCNN_GENL_VERSION,
	.maxattr = INCNN_A_MAX,
	.policy = incnn_policy,
	.netnsok = true,
	.module = THIS_MODULE,
	.ops = incnn_genl_ops,
	.n_ops = ARRAY_SIZE(incnn_genl_ops),
	/* strict validation for every command */
	.resv_start_op = INCNN_CMD_UNSPEC + 1,
};

int __init incnn_genl_init(void)
{
	return genl_register_family(&incnn_genl_family);
}

void incnn_genl_exit(void)
{
	genl_unregister_family(&incnn_genl_family);
}
