/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the codec unit tests.
 */
#ifndef INCNN_TEST_CODEC_UTIL_H
#define INCNN_TEST_CODEC_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "codec.h"
#include "frame.h"
#include "fp32.h"
#include <incnn/gen.h>
#include <incnn/codec_param.h>

/* the CPU runs the codecs' AVX2 paths (built in, and the CPU has AVX2) */
static inline bool have_avx2(void)
{
#ifdef INCNN_CODEC_AVX2
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
#else
	return false;
#endif
}

static inline uint32_t f2u(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	return u;
}

static inline float u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, 4);
	return f;
}

/* Scratch for encoders, aligned as the codecs require. */
static inline void *test_scratch(void)
{
	static _Alignas(64) unsigned char scratch[INCNN_CODEC_SCRATCH];

	return scratch;
}

/*
 * Encode @n floats with @c/@param into a fresh buffer of exactly the
 * codec's bound (so ASan sees any overrun). Returns the body length.
 */
static inline ssize_t enc_floats(const struct incnn_codec *c, uint8_t param,
				 const uint32_t *in, size_t n, uint8_t **body,
				 struct incnn_hist *hist)
{
	size_t cap = c->bound(4 * n);
	ssize_t r;

	*body = malloc(cap ? cap : 1);
	r = c->encode(param, (const uint8_t *)in, 4 * n, *body, cap,
		      test_scratch(), hist);
	return r;
}

/* Decode a body of exactly @len bytes (heap copy) into @n floats. */
static inline int dec_floats(const struct incnn_codec *c, uint8_t param,
			     const uint8_t *body, size_t len, uint32_t *out,
			     size_t n)
{
	uint8_t *copy = malloc(len ? len : 1);
	int r;

	memcpy(copy, body, len);
	r = c->decode(param, copy, len, (uint8_t *)out, 4 * n);
	free(copy);
	return r;
}

/* Encode @n values and compare the body with @expect. */
static inline int body_is(const struct incnn_codec *c, uint8_t param,
		   const uint32_t *in, size_t n, const uint8_t *expect,
		   size_t expect_len)
{
	uint8_t *body;
	ssize_t r = enc_floats(c, param, in, n, &body, NULL);
	int ok = r == (ssize_t)expect_len && !memcmp(body, expect, r);

	if (!ok) {
		fprintf(stderr, "# body (%zd):", r);
		for (ssize_t i = 0; i < r; i++)
			fprintf(stderr, " %02x", body[i]);
		fprintf(stderr, "\n");
	}
	free(body);
	return ok;
}

static inline void gen_bits(struct incnn_rng *r, enum incnn_dist d,
			    double scale, uint32_t *out, size_t n)
{
	incnn_gen_f32(r, d, scale, (float *)out, n);
}

#endif
