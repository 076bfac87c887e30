/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * incnn GradiVeQ: PCA vector quantisation of convolutional-layer gradients
 * whose compressed values add up inside ring allreduce (Yu et al.,
 * "GradiVeQ: Vector Quantization for Bandwidth-Efficient Gradient
 * Aggregation in Distributed CNN Training", NeurIPS 2018). The core only:
 * slicing, the compressor, compress / add / decompress, the loss monitor
 * and the schedule. No I/O; the communicator is not wired yet
 * (docs/gradiveq.md).
 *
 * Slicing (section 2, Fig. 3(a)). A conv layer has M filters of depth D
 * and height x width H x W; its weight gradient g is in the usual layout
 * g[m][c][h][w] (PyTorch's [out][in][kh][kw]). The paper places the M
 * collocated gradients of all filters next to each other and moves the
 * location along depth, then width, then height:
 *
 *   v[((h * W + w) * D + c) * M + m] = g[((m * D + c) * H + h) * W + w]
 *
 * (incnn_gvq_flat_index()). v is cut into nslices = n / d slices of d
 * adjacent floats (n = M D H W); d must be a multiple of M so a slice
 * holds whole collocated groups; the paper prefers a multiple of M D
 * (Fig. 5). The n % d tail floats are not compressed (they take the
 * normal path).
 *
 * Compressor (section 2). From the T_s aggregated (summed over the N
 * ranks) first slices of the sampling iterations x_1..x_T: whitening
 * vector mu = their mean, covariance C = sum (x_t - mu)(x_t - mu)^T /
 * (T - 1), U = the eigenvectors of C of the k largest eigenvalues (d x k).
 * One compressor per layer, computed from the first slice and used for
 * every slice (the paper's reuse factor R = infinity). Per slice, rank i:
 *
 *   compress   y_i = U^T (x_i - mu / N)          (k floats)
 *   ring hop   s  += y_i                         (linear: s = U^T (sum x_i - mu))
 *   decompress x^  = U s + mu                    (once per aggregated slice)
 *
 * Determinism: the eigen-decomposition is a cyclic Jacobi in double
 * precision (fixed sweep order (p, q) = (0,1), (0,2) .. (d-2,d-1), fixed
 * tolerance INCNN_GVQ_JACOBI_TOL, at most INCNN_GVQ_JACOBI_SWEEPS sweeps),
 * eigenpairs sorted by decreasing eigenvalue (ties: lower index first),
 * each eigenvector's sign chosen so that its entry of largest magnitude
 * (first such on ties) is positive. Every float operation is in a fixed
 * order without fused multiply-add, so U, mu and every compress, add and
 * decompress are bit-identical on every rank given identical inputs.
 *
 * Schedule (section 3, Fig. 6): warm-up iterations uncompressed, then
 * repeatedly T_s sampling iterations (uncompressed; the aggregated first
 * slice is a sample) and up to T_c compressed iterations. The loss
 * monitor: each rank decompresses its own compressed slices locally and
 * computes loss = ||x - x^||^2 / ||x||^2; when a majority of ranks have
 * loss > loss_eps, compression stops and sampling starts again.
 *
 * Errors: negative errno values; those of the parameter and layer checks
 * come with a one-line message naming the limit. No global state.
 */
#ifndef INCNN_GRADIVEQ_H
#define INCNN_GRADIVEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* the public API, exported by libincnn.so (built -fvisibility=hidden) */
#pragma GCC visibility push(default)

#define INCNN_GVQ_MAX_D		1024	/* Jacobi is O(d^3) per sweep */
#define INCNN_GVQ_MAX_TS	4096	/* T_s samples of d floats are kept */
#define INCNN_GVQ_MAX_ITERS	0x7fffffffu	/* warm-up, T_c */
#define INCNN_GVQ_MAX_RANKS	65536
#define INCNN_GVQ_MAX_LAYER	(1u << 30)	/* floats per conv layer */
/* Jacobi stops when off(A)^2 <= TOL^2 * ||A||_F^2 */
#define INCNN_GVQ_JACOBI_TOL	1e-13
#define INCNN_GVQ_JACOBI_SWEEPS	64

struct incnn_gvq_params {
	unsigned int d;		/* slice size: 2 .. 1024 (default 256) */
	unsigned int k;		/* compressed size: 1 .. d - 1 (default 32) */
	unsigned int warmup;	/* uncompressed iterations first (1000) */
	unsigned int t_s;	/* sampling iterations: 2 .. 4096 (100) */
	unsigned int t_c;	/* compressed iterations: >= 1 (400) */
	double loss_eps;	/* loss monitor threshold: (0, 1] (0.01) */
};

/* d = 256, k = 32 (ratio 8), warm-up 1000, T_s = 100, T_c = 400, 0.01 */
void incnn_gvq_params_default(struct incnn_gvq_params *p);

/* 0, or -EINVAL with a one-line message in err (may be NULL) */
int incnn_gvq_params_check(const struct incnn_gvq_params *p, char *err,
			   size_t errlen);

/* --- slicing -------------------------------------------------------------- */

struct incnn_gvq_conv {
	unsigned int filters;	/* M */
	unsigned int depth;	/* D, the filters' input channels */
	unsigned int height;	/* H, kernel rows */
	unsigned int width;	/* W, kernel columns */
};

/*
 * 0, or -EINVAL with a one-line message: a zero dimension, more than
 * INCNN_GVQ_MAX_LAYER floats, d not a multiple of M, or fewer than d
 * floats (not even one slice).
 */
int incnn_gvq_conv_check(const struct incnn_gvq_params *p,
			 const struct incnn_gvq_conv *l, char *err,
			 size_t errlen);
/* n = M D H W */
size_t incnn_gvq_conv_size(const struct incnn_gvq_conv *l);
/* the position in v of g[m][c][h][w] (the formula above) */
size_t incnn_gvq_flat_index(const struct incnn_gvq_conv *l, unsigned int m,
			    unsigned int c, unsigned int h, unsigned int w);
/* v = the paper's flattening of g (n floats each, not overlapping) */
void incnn_gvq_flatten(const struct incnn_gvq_conv *l, const float *g,
		       float *v);
/* its inverse */
void incnn_gvq_unflatten(const struct incnn_gvq_conv *l, const float *v,
			 float *g);

/* --- the compressor ------------------------------------------------------- */

struct incnn_gvq_pca;

/* 0 and *out (no compressor yet), or -EINVAL (k < 1, k >= d, d > max) */
int incnn_gvq_pca_create(struct incnn_gvq_pca **out, unsigned int d,
			 unsigned int k, char *err, size_t errlen);
void incnn_gvq_pca_destroy(struct incnn_gvq_pca *c);

/*
 * Compute mu and U from @nsamples (2 .. INCNN_GVQ_MAX_TS) aggregated
 * slices, row-major (sample t at samples + t * d). 0, -EINVAL (bad
 * count), -ERANGE (a non-finite sample), -EDOM (Jacobi did not converge
 * in INCNN_GVQ_JACOBI_SWEEPS sweeps), -ENOMEM. On error the previous
 * compressor, if any, is kept.
 */
int incnn_gvq_pca_fit(struct incnn_gvq_pca *c, const float *samples,
		      unsigned int nsamples);
/* set U (d x k row-major: U[i][j] at u[i * k + j]) and mu (d) directly */
void incnn_gvq_pca_load(struct incnn_gvq_pca *c, const float *u,
			const float *mu);
bool incnn_gvq_pca_ready(const struct incnn_gvq_pca *c);
unsigned int incnn_gvq_pca_d(const struct incnn_gvq_pca *c);
unsigned int incnn_gvq_pca_k(const struct incnn_gvq_pca *c);
/* d x k row-major */
const float *incnn_gvq_pca_u(const struct incnn_gvq_pca *c);
const float *incnn_gvq_pca_mu(const struct incnn_gvq_pca *c);
/* all d eigenvalues of C, decreasing (after a fit; else zeros) */
const double *incnn_gvq_pca_eigenvalues(const struct incnn_gvq_pca *c);
/* Jacobi sweeps of the last fit */
unsigned int incnn_gvq_pca_sweeps(const struct incnn_gvq_pca *c);

/*
 * The paper's choice of k for a loss threshold: the least k with
 * sum_{j >= k} lambda_j <= eps * sum_j lambda_j (eigenvalues decreasing,
 * negative ones counted as 0); 1 if the sum is 0.
 */
unsigned int incnn_gvq_choose_k(const double *eig, unsigned int d,
				double eps);

/*
 * Rank's share of @nslices slices (x: nslices * d floats) among @nranks
 * (>= 1) ranks: y (nslices * k floats), y_s = U^T (x_s - mu / nranks).
 * The compressor must be ready. Summation over i in increasing order.
 */
void incnn_gvq_compress(const struct incnn_gvq_pca *c, const float *x,
			size_t nslices, unsigned int nranks, float *y);
/* acc[i] += y[i], i = 0 .. n-1: the ring hop on compressed segments */
void incnn_gvq_add(float *acc, const float *y, size_t n);
/* x_s = U s_s + mu for each of @nslices aggregated compressed slices */
void incnn_gvq_decompress(const struct incnn_gvq_pca *c, const float *s,
			  size_t nslices, float *x);
/*
 * The loss monitor's local loss of this rank's slices: decompress its own
 * compressed slices (x^ = U U^T (x - mu/N) + mu/N) and return
 * ||x - x^||^2 / ||x||^2 (0 when x is 0).
 */
double incnn_gvq_local_loss(const struct incnn_gvq_pca *c, const float *x,
			    size_t nslices, unsigned int nranks);

/*
 * Ring segments (Algorithm 1): the nslices slices in nranks segments of
 * consecutive slices, the first nslices % nranks one slice longer.
 * Segment @seg starts at slice *first and has the returned count.
 */
size_t incnn_gvq_segment(size_t nslices, unsigned int nranks,
			 unsigned int seg, size_t *first);

/* --- one conv layer: its samples and its compressor ------------------------ */

/*
 * A layer's state across iterations: its shape, the samples of the
 * current sampling phase (the first slice of each aggregated gradient)
 * and its compressor. One per conv layer per rank.
 */
struct incnn_gvq_layer;

/* 0 and *out, or -EINVAL (parameters or layer; message in err) / -ENOMEM */
int incnn_gvq_layer_create(struct incnn_gvq_layer **out,
			   const struct incnn_gvq_params *p,
			   const struct incnn_gvq_conv *l, char *err,
			   size_t errlen);
void incnn_gvq_layer_destroy(struct incnn_gvq_layer *g);
/* floats in the layer (n); compressed slices (n / d), then the tail */
size_t incnn_gvq_layer_size(const struct incnn_gvq_layer *g);
size_t incnn_gvq_layer_nslices(const struct incnn_gvq_layer *g);
/*
 * In a sampling iteration: @v is the aggregated (summed, not averaged)
 * flattened gradient; its first d floats become the next sample. 0, or
 * -ENOSPC when T_s samples are already held.
 */
int incnn_gvq_layer_sample(struct incnn_gvq_layer *g, const float *v);
unsigned int incnn_gvq_layer_nsamples(const struct incnn_gvq_layer *g);
/*
 * Fit the compressor from the samples held (incnn_gvq_pca_fit()'s
 * errors) and drop them, also on error.
 */
int incnn_gvq_layer_fit(struct incnn_gvq_layer *g);
struct incnn_gvq_pca *incnn_gvq_layer_pca(const struct incnn_gvq_layer *g);

/* --- the schedule ---------------------------------------------------------- */

enum incnn_gvq_phase {
	INCNN_GVQ_WARMUP,	/* uncompressed */
	INCNN_GVQ_SAMPLE,	/* uncompressed; the aggregate is a sample */
	INCNN_GVQ_COMPRESSED,	/* compress, add, decompress */
};

struct incnn_gvq_sched {
	struct incnn_gvq_params p;
	enum incnn_gvq_phase phase;	/* of the current iteration */
	uint64_t iter;			/* current iteration, from 0 */
	unsigned int done;		/* iterations done in this phase */
	uint64_t refreshes;		/* loss-monitor triggers so far */
};

/* 0, or -EINVAL with the parameters' one-line message */
int incnn_gvq_sched_init(struct incnn_gvq_sched *s,
			 const struct incnn_gvq_params *p, char *err,
			 size_t errlen);

/*
 * End the current iteration and return the next one's phase. @over: how
 * many of the @nranks ranks had local loss > loss_eps in this iteration
 * (an allreduce-sum of 0/1; ignored outside the compressed phase). After
 * warm-up and after T_c compressed iterations, or when 2 * over > nranks
 * (a majority), sampling starts; after T_s sampling iterations the
 * caller must fit the compressor before the first compressed iteration.
 */
enum incnn_gvq_phase incnn_gvq_sched_next(struct incnn_gvq_sched *s,
					  unsigned int over,
					  unsigned int nranks);

/* "warmup", "sample", "compressed" */
const char *incnn_gvq_phase_name(enum incnn_gvq_phase ph);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* INCNN_GRADIVEQ_H */
