// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The codec table, and a codec's name with its setting as one word.
 */
#include "codec.h"

static const struct incnn_codec *const incnn_codecs[] = {
	[INCNN_CODEC_INCEPTIONN] = &incnn_codec_inceptionn,
	[INCNN_CODEC_EBQ] = &incnn_codec_ebq,
	[INCNN_CODEC_TRUNC] = &incnn_codec_trunc,
	[INCNN_CODEC_LZ4] = &incnn_codec_lz4,
	[INCNN_CODEC_ZEBQ] = &incnn_codec_zebq,
};

int incnn_codec_max_err_param(u8 param)
{
	return param;
}

const struct incnn_codec *incnn_codec_get(unsigned int id)
{
	if (id >= ARRAY_SIZE(incnn_codecs))
		return NULL;
	return incnn_codecs[id];
}

const struct incnn_codec *incnn_codec_find(const char *name)
{
	unsigned int id;

	for (id = 0; id <= INCNN_CODEC_MAX; id++) {
		const struct incnn_codec *c = incnn_codec_get(id);

		if (c && !strcmp(c->name, name))
			return c;
	}
	return NULL;
}

const char *incnn_codec_param_label(const char *name,
				    const struct incnn_codec_param *p,
				    unsigned int param, char *buf, size_t len)
{
	bool ok = param >= p->min && param <= p->max;

	if (ok && p->kind == INCNN_PARAM_BOUND)
		snprintf(buf, len, "%s:2^-%u", name, param);
	else if (ok && p->kind == INCNN_PARAM_BITS && !(param % 8))
		snprintf(buf, len, "%s:%u", name, param);
	else if (p->kind == INCNN_PARAM_NONE && !param)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%s param %u", name, param);
	return buf;
}

const char *incnn_simd_name(enum incnn_simd simd)
{
	return simd == INCNN_SIMD_AVX2 ? "avx2" : "none";
}

ssize_t incnn_codec_encode(const struct incnn_codec *c, enum incnn_simd simd,
			   u8 param, const u8 *in, size_t len, u8 *out,
			   size_t cap, void *scratch, struct incnn_hist *hist)
{
	if (simd == INCNN_SIMD_AVX2 && c->encode_avx2)
		return c->encode_avx2(param, in, len, out, cap, scratch, hist);
	return c->encode(param, in, len, out, cap, scratch, hist);
}

int incnn_codec_decode(const struct incnn_codec *c, enum incnn_simd simd,
		       u8 param, const u8 *in, size_t len, u8 *out,
		       size_t out_len)
{
	if (simd == INCNN_SIMD_AVX2 && c->decode_avx2)
		return c->decode_avx2(param, in, len, out, out_len);
	return c->decode(param, in, len, out, out_len);
}

int incnn_codec_quantise(const struct incnn_codec *c, enum incnn_simd simd,
			 u8 param, u8 *buf, size_t len)
{
	if (simd == INCNN_SIMD_AVX2 && c->quantise_avx2)
		return c->quantise_avx2(param, buf, len);
	if (!c->quantise)
		return -EOPNOTSUPP;
	return c->quantise(param, buf, len);
}

#ifndef __KERNEL__
/* userspace: the kernel's versions are in kmod/simd.c */

static enum incnn_simd simd_detect(void)
{
	const char *env = getenv("INCNN_SIMD");

	if (env && (!strcmp(env, "0") || !strcmp(env, "none")))
		return INCNN_SIMD_NONE;
#ifdef INCNN_CODEC_AVX2
	__builtin_cpu_init();
	/* the AVX2 files use popcnt too (every AVX2 CPU has it) */
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt"))
		return INCNN_SIMD_AVX2;
#endif
	return INCNN_SIMD_NONE;
}

enum incnn_simd incnn_simd_level(void)
{
	/* a fact of the process, computed once: -1 until then */
	static int level = -1;
	int l = __atomic_load_n(&level, __ATOMIC_RELAXED);

	if (l < 0) {
		l = simd_detect();
		__atomic_store_n(&level, l, __ATOMIC_RELAXED);
	}
	return l;
}

enum incnn_simd incnn_simd_auto(void)
{
	return incnn_simd_level();
}
#endif
