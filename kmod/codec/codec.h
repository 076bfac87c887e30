/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The codec interface: one table of stateless, deterministic codecs shared
 * by the kernel module and userspace. See docs/codecs.md.
 */
#ifndef _INCNN_CODEC_H
#define _INCNN_CODEC_H

#include "compat.h"
#include <linux/incnn.h>

/*
 * Share of values per size class (the INCEPTIONN paper's Table III):
 * n[0] values sent as 0 bits, n[1] as 8, n[2] as 16, n[3] as 32.
 * Encoders add to it; float codecs without classes leave it alone.
 */
struct incnn_hist {
	u64 n[4];
};

/*
 * SIMD paths, in increasing order. The AVX2 codecs are built for x86-64
 * (not for sparse, which does not know the vector builtins).
 */
enum incnn_simd {
	INCNN_SIMD_NONE,
	INCNN_SIMD_AVX2,
};

#if defined(__x86_64__) && !defined(__CHECKER__)
#define INCNN_CODEC_AVX2	1
#endif

/* Scratch memory an encoder may need (the larger of all codecs' needs). */
#define INCNN_CODEC_SCRATCH	INCNN_LZ4_SCRATCH

/*
 * What a codec's parameter is (the codec dump of INCNN_CMD_GET_CODECS
 * carries the same): @kind is an enum incnn_param_kind; a valid value is
 * in @min..@max, and for INCNN_PARAM_BITS a multiple of 8; @def is what
 * a rule without one gets.
 */
struct incnn_codec_param {
	u8 kind;
	u8 min;
	u8 max;
	u8 def;
};

/* The parameter of a 2^-k codec, default 2^-@def_k */
#define INCNN_CODEC_PARAM_BOUND(def_k) {				\
	.kind = INCNN_PARAM_BOUND,					\
	.min = INCNN_BOUND_MIN_K,					\
	.max = INCNN_BOUND_MAX_K,					\
	.def = (def_k),							\
}

/*
 * What incnn_codec.max_err() returns besides k >= 0 (every finite value
 * comes back within 2^-k of itself).
 */
#define INCNN_MAX_ERR_EXACT	(-1)	/* lossless: values come back as sent */
#define INCNN_MAX_ERR_NONE	(-2)	/* no absolute bound (trunc: relative) */

struct incnn_codec {
	u8 id;
	const char *name;
	/* the codec may change values */
	bool lossy;
	/*
	 * The codec works on whole fp32 values: the body covers the largest
	 * multiple of 4 bytes, and a raw tail of 0..3 bytes follows it.
	 */
	bool floats;
	/* its parameter, see incnn_codec_check_param() */
	struct incnn_codec_param param;
	/*
	 * The error bound of a valid @param: k when every finite value comes
	 * back within 2^-k of itself (k >= 0), else INCNN_MAX_ERR_EXACT or
	 * INCNN_MAX_ERR_NONE. Never NULL.
	 */
	int (*max_err)(u8 param);
	/* the encoder counts its values' size classes in struct incnn_hist */
	bool hist;
	/* worst-case body length for @len input bytes */
	size_t (*bound)(size_t len);
	/*
	 * Encode @len bytes (a multiple of 4 for float codecs) into at most
	 * @cap bytes. Returns the body length, -ENOSPC when it does not fit
	 * in @cap, -EINVAL for a bad length. @scratch holds
	 * INCNN_CODEC_SCRATCH bytes, 8-byte aligned. @hist may be NULL.
	 */
	ssize_t (*encode)(u8 param, const u8 *in, size_t len, u8 *out,
			  size_t cap, void *scratch, struct incnn_hist *hist);
	/*
	 * Decode the @len byte body @in into exactly @out_len bytes.
	 * Returns 0, or -EBADMSG when the body is truncated, too long or
	 * otherwise inconsistent. Never reads or writes out of bounds.
	 */
	int (*decode)(u8 param, const u8 *in, size_t len, u8 *out,
		      size_t out_len);
	/*
	 * The same with AVX2, bit for bit the same results (bodies, return
	 * values, hist counts, output bytes); NULL where there is none. Only
	 * for a caller whose incnn_simd_level() is INCNN_SIMD_AVX2 (kernel:
	 * inside kernel_fpu_begin()). @encode and @decode stay the scalar
	 * reference and never use SIMD.
	 */
	ssize_t (*encode_avx2)(u8 param, const u8 *in, size_t len, u8 *out,
			       size_t cap, void *scratch,
			       struct incnn_hist *hist);
	int (*decode_avx2)(u8 param, const u8 *in, size_t len, u8 *out,
			   size_t out_len);
	/*
	 * Float codecs, optional: replace the @len bytes at @buf (a multiple
	 * of 4, else -EINVAL) by decode(encode(buf)) in place, bit for bit,
	 * in one pass and without a body. Returns 0. NULL where there is
	 * none; @quantise_avx2 as @encode_avx2 (the same bytes, NULL where
	 * there is none).
	 */
	int (*quantise)(u8 param, u8 *buf, size_t len);
	int (*quantise_avx2)(u8 param, u8 *buf, size_t len);
};

extern const struct incnn_codec incnn_codec_inceptionn;
extern const struct incnn_codec incnn_codec_ebq;
extern const struct incnn_codec incnn_codec_trunc;
extern const struct incnn_codec incnn_codec_lz4;
extern const struct incnn_codec incnn_codec_zebq;

/* incnn_codec.max_err() of a codec whose bound is its parameter 2^-k */
int incnn_codec_max_err_param(u8 param);

/* NULL for an unknown id or name. */
const struct incnn_codec *incnn_codec_get(unsigned int id);
const struct incnn_codec *incnn_codec_find(const char *name);

/*
 * The best SIMD path the CPU offers and the user allows (userspace: the
 * environment variable INCNN_SIMD=0 forces scalar; kernel: the module
 * parameter simd=none), and the path callers get without asking
 * (userspace: incnn_simd_level(); kernel: none, callers opt in inside a
 * kernel_fpu_begin() section).
 */
enum incnn_simd incnn_simd_level(void);
enum incnn_simd incnn_simd_auto(void);
const char *incnn_simd_name(enum incnn_simd simd);

/* c->encode / c->decode, or their version for @simd if there is one */
ssize_t incnn_codec_encode(const struct incnn_codec *c, enum incnn_simd simd,
			   u8 param, const u8 *in, size_t len, u8 *out,
			   size_t cap, void *scratch, struct incnn_hist *hist);
int incnn_codec_decode(const struct incnn_codec *c, enum incnn_simd simd,
		       u8 param, const u8 *in, size_t len, u8 *out,
		       size_t out_len);
/*
 * c->quantise, or its version for @simd if there is one; -EOPNOTSUPP
 * when @c has none (the caller encodes and decodes instead)
 */
int incnn_codec_quantise(const struct incnn_codec *c, enum incnn_simd simd,
			 u8 param, u8 *buf, size_t len);
/* the codecs have the quantise op (for drivers built against old trees) */
#define INCNN_CODEC_QUANTISE	1

/*
 * Codec @name, whose parameter @p describes, with parameter @param as one
 * word, the one spelling of every tool and of the kernel log:
 * "ebq:2^-10", "trunc:16", "lz4"; "NAME param P" for a parameter @p does
 * not accept, or of a kind this library does not know. Returns @buf.
 */
const char *incnn_codec_param_label(const char *name,
				    const struct incnn_codec_param *p,
				    unsigned int param, char *buf, size_t len);

/* 0 if @p is a valid parameter of @c, else -EINVAL */
static inline int incnn_codec_check_param(const struct incnn_codec *c, u8 p)
{
	const struct incnn_codec_param *cp = &c->param;

	if (p < cp->min || p > cp->max)
		return -EINVAL;
	if (cp->kind == INCNN_PARAM_BITS && p % 8)
		return -EINVAL;
	return 0;
}

#endif /* _INCNN_CODEC_H */
