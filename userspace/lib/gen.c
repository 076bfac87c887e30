// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Deterministic synthetic fp32 data (splitmix64).
 */
#include <math.h>
#include <string.h>

#include <incnn/gen.h>

static const char *const dist_names[__INCNN_DIST_MAX] = {
	[INCNN_DIST_LAPLACE] = "laplace",
	[INCNN_DIST_NORMAL] = "normal",
	[INCNN_DIST_UNIFORM] = "uniform",
	[INCNN_DIST_LOGUNIFORM] = "loguniform",
	[INCNN_DIST_BITS] = "bits",
};

void incnn_rng_seed(struct incnn_rng *r, uint64_t seed)
{
	r->s = seed;
}

uint64_t incnn_rng_next(struct incnn_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double incnn_rng_unit(struct incnn_rng *r)
{
	return ((incnn_rng_next(r) >> 11) + 0.5) * 0x1p-53;
}

static float gen_one(struct incnn_rng *r, enum incnn_dist d, double scale)
{
	double u = incnn_rng_unit(r), v;
	uint32_t bits;
	float f;

	switch (d) {
	case INCNN_DIST_LAPLACE:
		return (float)(u < 0.5 ? scale * log(2 * u) :
				-scale * log(2 * (1 - u)));
	case INCNN_DIST_NORMAL:
		v = incnn_rng_unit(r);
		return (float)(scale * sqrt(-2 * log(u)) * cos(2 * M_PI * v));
	case INCNN_DIST_UNIFORM:
		return (float)(scale * (2 * u - 1));
	case INCNN_DIST_LOGUNIFORM:
		v = -40 + u * (log2(scale) + 40);
		f = (float)exp2(v);
		return incnn_rng_next(r) & 1 ? -f : f;
	case INCNN_DIST_BITS:
	default:
		bits = (uint32_t)incnn_rng_next(r);
		memcpy(&f, &bits, sizeof(f));
		return f;
	}
}

void incnn_gen_f32(struct incnn_rng *r, enum incnn_dist d, double scale,
		   float *out, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = gen_one(r, d, scale);
}

const char *incnn_dist_name(enum incnn_dist d)
{
	return (unsigned int)d < __INCNN_DIST_MAX ? dist_names[d] : "?";
}

int incnn_dist_parse(const char *name)
{
	int d;

	for (d = 0; d < __INCNN_DIST_MAX; d++)
		if (!strcmp(name, dist_names[d]))
			return d;
	return -1;
}
