// SPDX-License-Identifier: GPL-2.0
/*
 * Per network namespace state: configuration, statistics, flow table and
 * the netfilter hooks (IPv4 here, IPv6 in ipv6.c).
 */
#include <linux/netfilter_ipv4.h>
#include <linux/slab.h>
#include <linux/percpu.h>
#include <net/netfilter/ipv4/nf_defrag_ipv4.h>

#include "incnn.h"

unsigned int incnn_net_id __read_mostly;

/*
 * The rule every new namespace starts with: none unless the administrator
 * loads the module with default_rule= (main.c). Nothing is lossy unless
 * asked for.
 */
struct incnn_rule incnn_default_rule __read_mostly;
u8 incnn_default_rule_dscp __read_mostly;

/*
 * Superframes (frame version 2) in every new namespace: offered at each
 * handshake, used only toward a peer that offered them too, so a peer
 * with an older module or with them off keeps version 1 both ways.
 */
static bool superframes = true;
module_param(superframes, bool, 0444);
MODULE_PARM_DESC(superframes,
		 "Offer and send frame version 2 in every new netns (default: on; incctl set superframes per netns)");

/*
 * Egress: late in POST_ROUTING, after NAT (100) and SELinux (225), before
 * the conntrack helper (300) and confirm (INT_MAX), which still see every
 * segment. Ingress: in PRE_ROUTING after defrag (-400), before the raw
 * table (-300) and conntrack (-200).
 */
#define INCNN_PRI_RX	(NF_IP_PRI_RAW - 10)

static const struct nf_hook_ops incnn_nf_ops[] = {
	{
		/* first of all, under the socket lock: see align.c */
		.hook = incnn_tx_align_hook,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_LOCAL_OUT,
		.priority = NF_IP_PRI_FIRST,
	},
	{
		.hook = incnn_tx_hook,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_POST_ROUTING,
		.priority = INCNN_PRI_TX,
	},
	{
		.hook = incnn_rx_hook,
		.pf = NFPROTO_IPV4,
		.hooknum = NF_INET_PRE_ROUTING,
		.priority = INCNN_PRI_RX,
	},
};

static struct incnn_config *incnn_config_default(void)
{
	struct incnn_config *cfg = kzalloc(sizeof(*cfg), GFP_KERNEL);

	if (!cfg)
		return NULL;
	cfg->tx = true;
	cfg->rx = true;
	cfg->wire_dscp = INCNN_DEFAULT_WIRE_TOS >> 2;
	cfg->flow_max = INCNN_DEFAULT_FLOW_MAX;
	cfg->idle_timeout = INCNN_DEFAULT_IDLE_TIMEOUT;
	cfg->close_timeout = INCNN_DEFAULT_CLOSE_TIMEOUT;
	cfg->superframes = superframes;
	cfg->rules[incnn_default_rule_dscp] = incnn_default_rule;
	return cfg;
}

static int __net_init incnn_net_init(struct net *net)
{
	struct incnn_net *in = incnn_pernet(net);
	struct incnn_config *cfg;
	int err = -ENOMEM;

	in->net = net;
	mutex_init(&in->cfg_lock);
	cfg = incnn_config_default();
	if (!cfg)
		goto err_cfg;
	RCU_INIT_POINTER(in->cfg, cfg);
	in->stats = alloc_percpu(struct incnn_pcpu_stats);
	if (!in->stats)
		goto err_stats;
	err = incnn_flows_init(in);
	if (err)
		goto err_flows;
	/*
	 * Reassemble IPv4 fragments before the ingress hook (at priority
	 * NF_IP_PRI_CONNTRACK_DEFRAG), conntrack or not: a framed segment
	 * fragmented on the path must be decoded whole, never reach TCP as
	 * a frame.
	 */
	err = nf_defrag_ipv4_enable(net);
	if (err)
		goto err_defrag;
	err = nf_register_net_hooks(net, incnn_nf_ops,
				    ARRAY_SIZE(incnn_nf_ops));
	if (err)
		goto err_hooks;
	err = incnn_ipv6_net_init(net);
	if (err)
		goto err_ipv6;
	return 0;

err_ipv6:
	nf_unregister_net_hooks(net, incnn_nf_ops, ARRAY_SIZE(incnn_nf_ops));
err_hooks:
	nf_defrag_ipv4_disable(net);
err_defrag:
	incnn_flows_exit(in);
err_flows:
	free_percpu(in->stats);
err_stats:
	kfree(cfg);
err_cfg:
	return err;
}

/*
 * nf_unregister_net_hooks() does not wait for hook invocations in flight
 * (the old entries are freed by RCU): unregister in pre_exit, so that
 * the synchronize_rcu() the netns core runs between ->pre_exit and
 * ->exit (netns cleanup and unregister_pernet_subsys() alike) lets every
 * running hook finish before ->exit frees what they use.
 */
static void __net_exit incnn_net_pre_exit(struct net *net)
{
	incnn_ipv6_net_exit(net);
	nf_unregister_net_hooks(net, incnn_nf_ops, ARRAY_SIZE(incnn_nf_ops));
	nf_defrag_ipv4_disable(net);
}

static void __net_exit incnn_net_exit(struct net *net)
{
	struct incnn_net *in = incnn_pernet(net);

	/* no hook runs any more: see incnn_net_pre_exit() */
	incnn_flows_exit(in);
	free_percpu(in->stats);
	kfree(rcu_dereference_protected(in->cfg, true));
}

static struct pernet_operations incnn_net_ops = {
	.init = incnn_net_init,
	.pre_exit = incnn_net_pre_exit,
	.exit = incnn_net_exit,
	.id = &incnn_net_id,
	.size = sizeof(struct incnn_net),
};

int incnn_netns_init(void)
{
	return register_pernet_subsys(&incnn_net_ops);
}

void incnn_netns_exit(void)
{
	unregister_pernet_subsys(&incnn_net_ops);
}
