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

static int __init incnn_init(void)
{
	int err;

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
	pr_info("loaded\n");
	return 0;

err_genl:
	incnn_netns_exit();
err_netns:
	incnn_scratch_exit();
err_scratch:
	return err;
}

static void __exit incnn_exit(void)
{
	incnn_genl_exit();
	incnn_netns_exit();
	incnn_scratch_exit();
}

module_init(incnn_init);
module_exit(incnn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("incnn: in-network gradient compression for marked TCP streams");
MODULE_AUTHOR("incnn developers");
MODULE_ALIAS_GENL_FAMILY(INCNN_GENL_NAME);
