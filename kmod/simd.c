// SPDX-License-Identifier: GPL-2.0
/*
 * The codecs' SIMD path in the kernel: which one runs, the FPU sections
 * the datapath runs it in, and the load-time self-benchmark that picks it
 * (like lib/raid6 and crypto/xor): where the CPU offers AVX2, every codec
 * with an AVX2 version encodes and decodes a 1448-byte packet of
 * gradient-like values, one call per FPU section as on the datapath,
 * with both paths; the faster in total wins. The figures go to the
 * kernel log and to INCNN_CMD_GET_CODECS (incctl codecs).
 *
 * The read-only module parameter "simd" shows the path in use ("avx2" or
 * "none"); loading with simd=none or simd=avx2 overrides the benchmark
 * (simd=auto, the default, follows it).
 */
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#endif

#include "incnn.h"
#include "codec/frame.h"

enum simd_mode { SIMD_AUTO, SIMD_FORCE_NONE, SIMD_FORCE_AVX2 };

static enum simd_mode simd_mode;	/* the simd= parameter at load time */
static enum incnn_simd simd_level;	/* decided by incnn_simd_init() */

/* the self-benchmark's figures, MB/s, [codec id][path][0: enc, 1: dec] */
static u32 simd_mbps[INCNN_CODEC_MAX + 1][2][2];

static int simd_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "none"))
		simd_mode = SIMD_FORCE_NONE;
	else if (sysfs_streq(val, "avx2"))
		simd_mode = SIMD_FORCE_AVX2;
	else if (sysfs_streq(val, "auto"))
		simd_mode = SIMD_AUTO;
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
		 "codec SIMD path in use: avx2 or none (at load time: auto, the default, picks the faster by a self-benchmark; none or avx2 force one)");

#ifdef CONFIG_X86_64
#define BENCH_LEN	1448
#define BENCH_ITERS	32
#define BENCH_ROUNDS	3
#define BENCH_K		10

struct simd_bench_buf {
	u8 in[BENCH_LEN];
	u8 enc[2 * BENCH_LEN];
	u8 out[BENCH_LEN];
	ssize_t elen;
};

/* gradient-like fp32 values: random signs and mantissas, 2^-18..2^-6 */
static void simd_bench_fill(u8 *p, size_t len)
{
	u32 r = 0x2545f491;
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		r ^= r << 13;
		r ^= r >> 17;
		r ^= r << 5;
		put_unaligned_le32((r & 0x807fffff) | (109 + r % 13) << 23,
				   p + i);
	}
}

/* One call of @c on @b with path @simd in its own section; 0 or error. */
static int simd_bench_call(const struct incnn_codec *c, enum incnn_simd simd,
			   bool dec, struct simd_bench_buf *b)
{
	int err = 0;

	if (simd != INCNN_SIMD_NONE)
		kernel_fpu_begin();
	else
		preempt_disable();
	if (dec) {
		err = incnn_codec_decode(c, simd, BENCH_K, b->enc, b->elen,
					 b->out, BENCH_LEN);
	} else {
		b->elen = incnn_codec_encode(c, simd, BENCH_K, b->in, BENCH_LEN,
					     b->enc, sizeof(b->enc), NULL,
					     NULL);
		if (b->elen < 0)
			err = b->elen;
	}
	if (simd != INCNN_SIMD_NONE)
		kernel_fpu_end();
	else
		preempt_enable();
	return err;
}

/* MB/s of BENCH_ITERS calls, the best of BENCH_ROUNDS; 0 on an error */
static u32 simd_bench_one(const struct incnn_codec *c, enum incnn_simd simd,
			  bool dec, struct simd_bench_buf *b, u64 *total_ns)
{
	u64 best = U64_MAX, t;
	unsigned int r, i;

	for (r = 0; r < BENCH_ROUNDS; r++) {
		t = ktime_get_ns();
		for (i = 0; i < BENCH_ITERS; i++)
			if (simd_bench_call(c, simd, dec, b))
				return 0;
		t = ktime_get_ns() - t;
		best = min(best, t);
	}
	*total_ns += best;
	return div64_u64((u64)BENCH_LEN * BENCH_ITERS * 1000, max(best, 1ULL));
}

/* Benchmark both paths; true if AVX2 was faster in total. */
static bool simd_bench(void)
{
	u64 ns[2] = { 0, 0 };
	struct simd_bench_buf *b;
	unsigned int id, p, d;

	b = kmalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return true;	/* no figures; AVX2 by default */
	simd_bench_fill(b->in, BENCH_LEN);
	for (id = 1; id <= INCNN_CODEC_MAX; id++) {
		const struct incnn_codec *c = incnn_codec_get(id);

		if (!c || !c->encode_avx2 || !c->decode_avx2)
			continue;
		/* encode first: its body is what decode reads */
		for (p = 0; p < 2; p++)
			for (d = 0; d < 2; d++)
				simd_mbps[id][p][d] =
					simd_bench_one(c, p, d, b, &ns[p]);
		pr_info("codec %s self-test at %u B, MB/s enc/dec: avx2 %u/%u, none %u/%u\n",
			c->name, BENCH_LEN, simd_mbps[id][1][0],
			simd_mbps[id][1][1], simd_mbps[id][0][0],
			simd_mbps[id][0][1]);
	}
	kfree(b);
	return ns[1] <= ns[0];
}
#endif /* CONFIG_X86_64 */

void incnn_simd_init(void)
{
	const char *why = "no AVX2";

	simd_level = INCNN_SIMD_NONE;
#ifdef CONFIG_X86_64
	/* the AVX2 codecs use popcnt too (every AVX2 CPU has it) */
	if (boot_cpu_has(X86_FEATURE_AVX) && boot_cpu_has(X86_FEATURE_AVX2) &&
	    boot_cpu_has(X86_FEATURE_POPCNT) &&
	    cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM, NULL)) {
		bool faster = simd_bench();

		if (simd_mode == SIMD_FORCE_NONE)
			why = "simd=none";
		else if (simd_mode == SIMD_FORCE_AVX2)
			why = "simd=avx2";
		else
			why = faster ? "faster" : "scalar faster";
		if (simd_mode == SIMD_FORCE_AVX2 ||
		    (simd_mode == SIMD_AUTO && faster))
			simd_level = INCNN_SIMD_AVX2;
	}
#endif
	pr_info("codec SIMD path: %s (%s)\n", incnn_simd_name(simd_level), why);
}

enum incnn_simd incnn_simd_level(void)
{
	return simd_level;
}

u32 incnn_simd_mbps(unsigned int id, enum incnn_simd simd, bool dec)
{
	if (id > INCNN_CODEC_MAX || simd > INCNN_SIMD_AVX2)
		return 0;
	return simd_mbps[id][simd][dec];
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

/*
 * incnn_frame_decode_simd() in an FPU section of its own: the frame at
 * @frame, @len bytes, into @out, @cap bytes at most (the ingress hook's
 * restore steps, rx.c and sframe_rx.c).
 */
int incnn_frame_decode_fpu(const u8 *frame, unsigned int len, u8 *out,
			   unsigned int cap, struct incnn_frame_info *fi)
{
	enum incnn_simd simd = incnn_simd_begin();
	int err;

	err = incnn_frame_decode_simd(simd, frame, len, out, cap, fi);
	incnn_simd_end(simd);
	return err;
}
