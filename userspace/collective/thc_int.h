/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Internal interface of thc.c (everything but the hot loops), thc_ref.c
 * (their scalar reference) and thc_avx2.c (their AVX2 versions). Each AVX2
 * kernel computes exactly what its *_ref twin in thc_ref.c computes: the same
 * float operations in the same order (element-wise, or the same
 * butterflies), so the results are equal bit for bit.
 */
#ifndef INCNN_THC_INT_H
#define INCNN_THC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <incnn/thc.h>

struct thc_simd_ops;

struct incnn_thc {
	struct incnn_thc_params p;
	double tp;
	unsigned int k;			/* 2^b table entries */
	uint8_t table[INCNN_THC_MAX_TABLE];
	/* grid cell c (0 .. g-1): z | T[z] << 8 | (T[z+1] - T[z]) << 16,
	 * z the last table index with T[z] <= c */
	uint32_t cell[INCNN_THC_MAX_TABLE];
	const struct thc_simd_ops *simd;	/* NULL: scalar */
};

/* one block's quantisation: u = y * s + h clamped to [0, gf] */
struct thc_qblk {
	float s, h, gf;
	uint32_t k0, k1;	/* the random stream's keys */
	uint32_t base;		/* coordinate index of the block's start */
};

/* the random stream: 32 bits per coordinate index i */
static inline uint32_t thc_hash32(uint32_t i, uint32_t k0, uint32_t k1)
{
	uint32_t x = (i + k0) * 0x9e3779b1u;

	x ^= k1;
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/* the scalar reference kernels (thc_ref.c) */
float thc_sumsq_ref(const float *x, size_t len);
void thc_fwht_ref(float *x, size_t len);
void thc_quant_ref(const struct incnn_thc *t, const float *y, size_t len,
		   const struct thc_qblk *q, uint8_t *idx);
int thc_add_ref(const struct incnn_thc *t, void *dst, unsigned int dbits,
		const void *src, unsigned int sbits, uint32_t limit,
		const uint8_t *idx, size_t n);
void thc_signs_ref(float *x, size_t len, uint32_t base, uint32_t k0,
		   uint32_t k1, float scale);
void thc_efd_ref(const struct incnn_thc *t, float *d, const float *work,
		 const uint8_t *idx, float sc, float m, size_t len);
bool thc_unlane_ref(float *out, const void *lanes, unsigned int bits,
		    uint32_t limit, float sc, float mb, size_t len);

/*
 * AVX2 kernels, for b = 4 (quant, add) and any block (the others; len a
 * power of two >= 16, base a multiple of 16). quant: idx at the block's
 * first byte. add, unlane_h: the same return value as the reference.
 */
struct thc_simd_ops {
	void (*fwht)(float *x, size_t len);
	void (*quant)(const struct incnn_thc *t, const float *y, size_t len,
		      const struct thc_qblk *q, uint8_t *idx);
	int (*add)(const struct incnn_thc *t, void *dst, unsigned int dbits,
		   const void *src, unsigned int sbits, uint32_t limit,
		   const uint8_t *idx, size_t n);
	void (*signs)(float *x, size_t len, uint32_t base, uint32_t k0,
		      uint32_t k1, float scale);
	/*
	 * Fused: prep = the copy of @valid floats of g (+ ef) into w, zeros
	 * to len, D, and the sum of squares (returned) and the first three
	 * Hadamard stages; unlane_h = unlane and those stages. fwht_rest
	 * then does the stages h >= 8.
	 */
	float (*prep)(const float *g, const float *ef, size_t valid, size_t len,
		      float *w, uint32_t base, uint32_t k0, uint32_t k1);
	bool (*unlane_h)(float *out, const void *lanes, unsigned int bits,
			 uint32_t limit, float sc, float mb, size_t len);
	void (*fwht_rest)(float *x, size_t len);
	/* thc_efd_ref and the first three stages */
	void (*efd_h)(const struct incnn_thc *t, float *d, const float *work,
		      const uint8_t *idx, float sc, float m, size_t len);
};

/* NULL when built without AVX2 (thc_avx2.c) */
const struct thc_simd_ops *thc_avx2_ops(void);

#endif /* INCNN_THC_INT_H */
