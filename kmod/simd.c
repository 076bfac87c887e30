// SPDX-License-Identifier: GPL-2.0
/*
 * The codecs' SIMD path in the kernel: which one the CPU offers, shown
 * by the read-only module parameter "simd" ("avx2" or "none"; loading
 * with simd=none forces the scalar codecs), and the FPU sections the
 * datapath runs it in.
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#endif

#include "incnn.h"

static bool simd_off;			/* simd=none at load time */
static enum incnn_simd simd_level;	/* decided by incnn_simd_init() */

static int simd_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "none"))
		simd_off = true;
	else if (sysfs_streq(val, "auto") || sysfs_streq(val, "avx2"))
		simd_off = false;
	else
		return -EINVAL;
	return 0;
}

static int simd_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", incnn_simd_name(simd_level));
}

static const struct kernel_param_ops simd_ops = {
	.set = simd_set,
	.get = simd_get,
};

module_param_cb(simd, &simd_ops, NULL, 0444);
MODULE_PARM_DESC(simd,
		 "codec SIMD path in use: avx2 or none (simd=none at load time forces scalar)");

void incnn_simd_init(void)
{
	simd_level = INCNN_SIMD_NONE;
#ifdef CONFIG_X86_64
	if (!simd_off && boot_cpu_has(X86_FEATURE_AVX) &&
	    boot_cpu_has(X86_FEATURE_AVX2) &&
	    cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM, NULL))
		simd_level = INCNN_SIMD_AVX2;
#endif
	pr_info("codec SIMD path: %s\n", incnn_simd_name(simd_level));
}

enum incnn_simd incnn_simd_level(void)
{
	return simd_level;
}

/* kernel callers opt in with incnn_simd_begin() */
enum incnn_simd incnn_simd_auto(void)
{
	return INCNN_SIMD_NONE;
}

enum incnn_simd incnn_simd_begin(void)
{
#ifdef CONFIG_X86_64
	if (simd_level != INCNN_SIMD_NONE && irq_fpu_usable()) {
		kernel_fpu_begin();
		return simd_level;
	}
#endif
	return INCNN_SIMD_NONE;
}

void incnn_simd_end(enum incnn_simd simd)
{
#ifdef CONFIG_X86_64
	if (simd != INCNN_SIMD_NONE)
		kernel_fpu_end();
#endif
}
