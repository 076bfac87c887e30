/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * incnn THC: tensor homomorphic compression (Li et al., "THC: Accelerating
 * Distributed Deep Learning Using Tensor Homomorphic Compression", NSDI
 * 2024), the core of it: what a worker does to a bucket of fp32 gradients
 * before and after the aggregation, and what an aggregator (the paper's
 * PS, or a ring hop) does with the compressed values. No I/O here; the
 * communicator's transport is not wired yet (docs/thc.md).
 *
 * Parameters: b bits per index (1, 2, 4 or 8; the paper's prototype 4),
 * granularity g (2^b - 1 .. 255; prototype 30), truncation fraction p
 * (prototype 1/32, t_p = Phi^-1(1 - p/2)), RHT block 2^block_log2 floats
 * and a 64-bit seed shared by all ranks.
 *
 * Lookup table T (section 5.2, appendix B): 2^b grid points
 * 0 = T[0] < ... < T[2^b - 1] = g of the uniform grid over [-t_p, t_p]
 * minimising the error of unbiased stochastic quantisation of a truncated
 * N(0, 1). Computed at incnn_thc_create() by an exact dynamic programme
 * (the objective is a sum over consecutive table points), the same one
 * as scripts/gen/thc-table.py, whose committed output the selftests compare.
 *
 * A bucket of n floats is cut into RHT blocks of B = 2^block_log2 floats;
 * the last, partial block is zero-padded to the next power of two, at
 * least 16. n_pad = incnn_thc_padded(), nblk = incnn_thc_nblocks(). The
 * indices and lanes cover n_pad coordinates. Worker, for bucket n and a
 * nonce that is the same on every rank and never reused for this seed
 * (e.g. iteration << 20 | bucket):
 *
 *   1. incnn_thc_prepare(): x = grad (+ ef), per-block norms ||x_k||,
 *      y = H D x per block (D: random signs from seed and nonce, H the
 *      unnormalised Walsh-Hadamard matrix, so y_k has norm sqrt(B)||x_k||
 *      and coordinates of standard deviation about ||x_k||).
 *   2. The preliminary stage (the caller): an allreduce-max of the nblk
 *      norms, giving l_k identical on every rank.
 *   3. incnn_thc_encode(): M_k = t_p l_k; u = (y + M_k) g / (2 M_k),
 *      clamped to [0, g] (truncation at t_p); stochastic rounding to one
 *      of the two neighbouring table points (unbiased; a counter-based
 *      hash of (seed, nonce, rank, coordinate) is the randomness, so
 *      ranks draw independently and runs repeat); b-bit indices packed
 *      little-endian-first (index i in byte i*b/8 at bit (i*b)%8).
 *   4. optional error feedback: incnn_thc_ef_update() sets
 *      ef = x - RHT^-1(own quantised y) (Algorithm 3, line 22).
 *
 * Aggregation without decompression: a partial sum of w workers' table
 * values is at most w*g and travels in lanes of 8, 16 or 32 bits (little
 * endian), the narrowest with w*g <= 255, 65535 or 2^31 - 1 (so that a
 * lane converts to float as a signed integer): incnn_thc_lane_bits().
 * At g = 30, 8 bits hold N <= 8 workers. The adders check every lane they
 * read against its worker count (-EBADMSG: never trust the wire), so an
 * output lane sized for its count cannot overflow. Ring reduce-scatter
 * (not in the paper): the first hop sends the b-bit indices themselves,
 * hop s >= 1 sends partial sums of s + 1 workers in lanes for s + 1, the
 * allgather the full sums in lanes for N: incnn_thc_ring_bits().
 *
 * Decode (incnn_thc_decode()): v = Y (2 M_k / (g N)) - M_k per block,
 * x = D H v / B, the estimate of the average of the N workers' x.
 *
 * Determinism: every function is a pure function of its inputs and the
 * parameters; the AVX2 paths (used when incnn_simd_level() allows, see
 * incnn_thc_set_simd()) give the scalar reference's results bit for bit.
 * Float operations are in a fixed order without fused multiply-add, so
 * every rank decodes the same integer sums to the same floats.
 *
 * Errors: negative errno values; those of create() come with a one-line
 * message naming the limit. No global state; a struct incnn_thc is
 * read-only after creation (but for incnn_thc_set_simd()) and may be
 * shared between threads.
 */
#ifndef INCNN_THC_H
#define INCNN_THC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the public API, exported by libincnn.so (built -fvisibility=hidden) */
#pragma GCC visibility push(default)

#define INCNN_THC_MAX_TABLE	256
#define INCNN_THC_MIN_BLOCK_LOG2	4
#define INCNN_THC_MAX_BLOCK_LOG2	16
/* at most this many floats per bucket */
#define INCNN_THC_MAX_N		(1u << 30)

struct incnn_thc_params {
	unsigned int bits;	/* b: 1, 2, 4 or 8 */
	unsigned int gran;	/* g: 2^b - 1 .. 255 */
	double p;		/* truncation fraction: 1e-9 .. 0.5 */
	unsigned int block_log2;	/* RHT block 2^4 .. 2^16 floats */
	uint64_t seed;		/* shared by all ranks */
};

/* b = 4, g = 30, p = 1/32 (the paper's prototype), B = 4096, seed 0 */
void incnn_thc_params_default(struct incnn_thc_params *p);

/* 0, or -EINVAL with a one-line message in err (may be NULL) */
int incnn_thc_params_check(const struct incnn_thc_params *p, char *err,
			   size_t errlen);

struct incnn_thc;

/* 0 and *out, or -EINVAL (bad parameters, message in err) / -ENOMEM */
int incnn_thc_create(struct incnn_thc **out, const struct incnn_thc_params *p,
		     char *err, size_t errlen);
void incnn_thc_destroy(struct incnn_thc *t);

const struct incnn_thc_params *incnn_thc_params(const struct incnn_thc *t);
/* T[0 .. 2^b - 1] */
const uint8_t *incnn_thc_table(const struct incnn_thc *t);
double incnn_thc_tp(const struct incnn_thc *t);

/*
 * Use the AVX2 paths (only if incnn_simd_level() offers them) or the
 * scalar reference; returns whether AVX2 is now used. Default: on if
 * offered. Not thread-safe against concurrent users of @t.
 */
bool incnn_thc_set_simd(struct incnn_thc *t, bool on);

/* sizes for a bucket of n floats (n <= INCNN_THC_MAX_N) */
size_t incnn_thc_padded(const struct incnn_thc *t, size_t n);
size_t incnn_thc_nblocks(const struct incnn_thc *t, size_t n);
/* bytes of the packed indices: n_pad * b / 8 */
size_t incnn_thc_idx_bytes(const struct incnn_thc *t, size_t n);

/*
 * Lane width for partial sums of @workers table values: 8, 16 or 32, or
 * -EINVAL (workers == 0) / -ERANGE (workers * g > 2^31 - 1; message in
 * err if not NULL, naming the limit).
 */
int incnn_thc_lane_bits(const struct incnn_thc *t, unsigned int workers,
			char *err, size_t errlen);

/*
 * Worker step 1. @grad: n floats; @ef: n floats of error feedback added
 * to grad (NULL: none); @work: n_pad floats, gets y = H D x; @norms: nblk
 * floats, gets ||x_k||. 0, or -ERANGE for a non-finite or too large norm
 * (>= 2^112), -EINVAL for a bad n. The norms are exact to float
 * rounding at every scale (squares below FLT_MIN or above FLT_MAX are
 * summed in double); an all-zero block has norm 0.
 */
int incnn_thc_prepare(const struct incnn_thc *t, const float *grad,
		      const float *ef, size_t n, uint64_t nonce, float *work,
		      float *norms);

/*
 * Worker step 3. @work from prepare (n_pad floats), @lmax the agreed
 * per-block maxima (nblk floats; each >= 0, finite, < 2^112, else
 * -ERANGE), @rank this worker's rank (its random stream), @idx gets
 * idx_bytes. A block with l_k = 0 encodes as all index 0 (and decodes
 * as exact zeros); one with 0 < l_k < 2^-64 is quantised (and dequantised
 * by ef_update and decode) at l_k / 2^E, E = ilogb(l_k), the results
 * scaled by 2^E: the error relative to the input does not depend on its
 * scale.
 */
int incnn_thc_encode(const struct incnn_thc *t, const float *work, size_t n,
		     const float *lmax, uint64_t nonce, uint32_t rank,
		     uint8_t *idx);

/*
 * Worker step 4: ef (n floats) = x - RHT^-1(dequantised own idx),
 * computed as RHT^-1(@work - dequantised idx). @scratch: n_pad floats.
 */
int incnn_thc_ef_update(const struct incnn_thc *t, float *ef, size_t n,
			const float *work, const uint8_t *idx,
			const float *lmax, uint64_t nonce, float *scratch);

/*
 * Aggregation over @n coordinates, a multiple of 16 (-EINVAL): the
 * bucket's n_pad, or a ring chunk (indices at byte off * b / 8, lanes at
 * off).
 *
 * add_idx: dst = src + T[idx], @src holding partial sums of @src_workers
 * workers in @src_bits lanes (NULL with src_workers 0: dst = T[idx]).
 * @dst has @dst_bits lanes and must be wide enough for src_workers + 1
 * (-ERANGE); src == dst is allowed with equal widths. -EBADMSG if a src
 * lane exceeds src_workers * g (dst is then undefined).
 *
 * add_idx2: dst = T[a] + T[b] (the first ring hop), dst_bits >= the
 * width for 2 workers.
 */
int incnn_thc_add_idx(const struct incnn_thc *t, void *dst,
		      unsigned int dst_bits, const void *src,
		      unsigned int src_bits, unsigned int src_workers,
		      const uint8_t *idx, size_t n);
int incnn_thc_add_idx2(const struct incnn_thc *t, void *dst,
		       unsigned int dst_bits, const uint8_t *a,
		       const uint8_t *b, size_t n);

/*
 * Ring over @nranks, reduce-scatter step @step (0 .. nranks - 2): the
 * bits per coordinate on the wire (step 0: b, the indices; step s: the
 * lane width for s + 1 workers); step nranks - 1 and beyond: the
 * allgather's lanes for nranks workers. Negative errno as lane_bits.
 * incnn_thc_ring_chunk(): chunk c (< nranks) of the padded bucket, in
 * coordinates, cut on multiples of 16.
 */
int incnn_thc_ring_bits(const struct incnn_thc *t, unsigned int nranks,
			unsigned int step);
void incnn_thc_ring_chunk(const struct incnn_thc *t, size_t n,
			  unsigned int nranks, unsigned int c, size_t *off,
			  size_t *len);

/*
 * Decode: @lanes (@bits wide) hold the sums of @workers workers' table
 * values over n_pad coordinates; @out (n_pad floats) gets the estimate of
 * the workers' average x (the first n are the bucket). -EBADMSG for a
 * lane above workers * g, -ERANGE for bad lmax, -EINVAL for bad widths.
 */
int incnn_thc_decode(const struct incnn_thc *t, float *out, size_t n,
		     const void *lanes, unsigned int bits, unsigned int workers,
		     const float *lmax, uint64_t nonce);

/* The RHT alone, in place over n_pad floats: y = H D x; x = D H y / B. */
int incnn_thc_rht(const struct incnn_thc *t, float *x, size_t n,
		  uint64_t nonce);
int incnn_thc_rht_inverse(const struct incnn_thc *t, float *x, size_t n,
			  uint64_t nonce);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* INCNN_THC_H */
