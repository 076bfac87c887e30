// SPDX-License-Identifier: GPL-2.0
/*
 * incnn: in-network gradient compression for marked TCP streams.
 *
 * Module init and exit: per-CPU scratch, per-namespace state, generic
 * netlink.
 */
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <net/genetlink.h>

#include "incnn.h"

static DEFINE_PER_CPU(struct incnn_scratch *, incnn_scratch);

struct incnn_scratch *incnn_scratch_get(void)
{
	return this_cpu_read(incnn_scratch);
}

int incnn_scratch_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct incnn_scratch *s = kvmalloc_node(sizeof(*s), GFP_KERNEL,
							cpu_to_node(cpu));

		if (!s) {
			incnn_scratch_exit();
			return -ENOMEM;
		}
		per_cpu(incnn_scratch, cpu) = s;
	}
	return 0;
}

void incnn_scratch_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		kvfree(per_cpu(incnn_scratch, cpu));
		per_cpu(incnn_scratch, cpu) = NULL;
	}
}

/*
 * default_rule=TOS:CODEC[:PARAM] gives every network namespace a rule at
 * creation (e.g. 0x28:inceptionn:10). Without it there is none: nothing
 * is compressed, lossy or not, until an administrator adds a rule.
 */
static char *default_rule = "";
module_param(default_rule, charp, 0444);
MODULE_PARM_DESC(default_rule,
		 "rule of every new netns, TOS:CODEC[:PARAM] (e.g. 0x28:inceptionn:10); default: none");

static int __init incnn_parse_default_rule(void)
{
	char buf[64], label[48], *p = buf, *tos, *name, *param;
	const struct incnn_codec *c;
	u8 t, v;

	if (!default_rule || !*default_rule)
		return 0;
	if (strscpy(buf, default_rule, sizeof(buf)) < 0)
		goto bad;
	tos = strsep(&p, ":");
	name = strsep(&p, ":");
	param = strsep(&p, ":");
	if (!name || p || kstrtou8(tos, 0, &t) || t & 3 ||
	    t >> 2 == INCNN_DEFAULT_WIRE_TOS >> 2)
		goto bad;
	c = incnn_codec_find(name);
	if (!c)
		goto bad;
	v = c->param.def;
	if ((param && kstrtou8(param, 0, &v)) ||
	    incnn_codec_check_param(c, v))
		goto bad;
	incnn_default_rule_dscp = t >> 2;
	incnn_default_rule.codec = c->id;
	incnn_default_rule.param = v;
	/* the codec as every tool prints it: ebq:2^-10, trunc:16, lz4 */
	pr_info("default rule tos 0x%02x codec %s\n", t,
		incnn_codec_param_label(c->name, &c->param, v, label,
					sizeof(label)));
	return 0;
bad:
	pr_err("bad default_rule \"%s\" (TOS:CODEC[:PARAM])\n",
	       default_rule);
	return -EINVAL;
}

static int __init incnn_init(void)
{
	int err;

	err = incnn_parse_default_rule();
	if (err)
		return err;
	incnn_simd_init();
	err = incnn_scratch_init();
	if (err)
		goto err_scratch;
	err = incnn_netns_init();
	if (err)
		goto err_netns;
	err = incnn_genl_init();
	if (err)
		goto err_genl;
	if (!ipv6_mod_enabled())
		pr_info("IPv6 disabled (ipv6.disable=1): IPv4 only\n");
	pr_info("loaded\n");
	return 0;

err_genl:
	incnn_netns_exit();
err_netns:
	incnn_scratch_exit();
err_scratch:
	return err;
}

/*
 * Only runs once no flow holds a module reference (INCNN_FLOW_F_PINNED,
 * flow.c): no peer can still send frames to a flow of ours.
 */
static void __exit incnn_exit(void)
{
	incnn_genl_exit();
	incnn_netns_exit();
	/* the flows' RCU callbacks are module code */
	rcu_barrier();
	incnn_scratch_exit();
}

module_init(incnn_init);
module_exit(incnn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("incnn: in-network gradient compression for marked TCP streams");
MODULE_AUTHOR("incnn developers");
MODULE_ALIAS_GENL_FAMILY(INCNN_GENL_NAME);
