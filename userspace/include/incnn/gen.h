/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Deterministic synthetic fp32 data for tests, fuzz seeds and benchmarks.
 */
#ifndef INCNN_GEN_H
#define INCNN_GEN_H

#include <stddef.h>
#include <stdint.h>

struct incnn_rng {
	uint64_t s;
};

enum incnn_dist {
	INCNN_DIST_LAPLACE,	/* gradient-like: Laplace(0, scale) */
	INCNN_DIST_NORMAL,	/* N(0, scale^2) */
	INCNN_DIST_UNIFORM,	/* U(-scale, scale) */
	INCNN_DIST_LOGUNIFORM,	/* sign * 2^U(-40, log2(scale)): every exponent */
	INCNN_DIST_BITS,	/* random bit patterns: NaN, Inf, denormals too */
	__INCNN_DIST_MAX
};

void incnn_rng_seed(struct incnn_rng *r, uint64_t seed);
uint64_t incnn_rng_next(struct incnn_rng *r);
/* uniform in (0, 1) */
double incnn_rng_unit(struct incnn_rng *r);

void incnn_gen_f32(struct incnn_rng *r, enum incnn_dist d, double scale,
		   float *out, size_t n);
const char *incnn_dist_name(enum incnn_dist d);
/* -1 for an unknown name */
int incnn_dist_parse(const char *name);

#endif
