/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A small multi-layer perceptron for incnn-train: fully-connected layers,
 * ReLU between them, softmax cross-entropy on the last one, SGD with
 * momentum and weight decay.
 *
 * Determinism: every float sum has a fixed order (documented at each
 * loop in mlp.c), the code is single-threaded, and it calls no libm
 * transcendental function (glibc picks FMA or non-FMA variants of exp
 * and log at run time, which would make results depend on the CPU):
 * tr_exp() and tr_log() below use + - * / only. Built with
 * -ffp-contract=off, the same binary gives bit-identical results on
 * every x86-64 CPU (and under QEMU/TCG).
 */
#ifndef INCNN_TRAIN_MLP_H
#define INCNN_TRAIN_MLP_H

#include <stddef.h>
#include <stdint.h>

#define TR_MAX_LAYERS	8
#define TR_MAX_DIM	8192

struct tr_mlp {
	int nlayers;			/* weight layers */
	int dims[TR_MAX_LAYERS + 1];	/* dims[0] inputs ... dims[L] classes */
	int maxbatch;
	size_t nparams;
	/*
	 * Parameters, gradient and momentum share one layout: for every
	 * layer l, W_l (dims[l] x dims[l+1], row-major: W[i][j] connects
	 * input i to output j) at woff[l], then its bias (dims[l+1]) at
	 * boff[l]. The gradient is the allreduce buffer.
	 */
	float *param, *grad, *mom;
	size_t woff[TR_MAX_LAYERS], boff[TR_MAX_LAYERS];
	/* W_l transposed (dims[l+1] x dims[l]) for l >= 1, backward only */
	float *wt[TR_MAX_LAYERS];
	/* act[0]: the batch's inputs; act[l + 1]: layer l's output (after
	 * ReLU for hidden layers, the logits for the last) */
	float *act[TR_MAX_LAYERS + 1];
	double *prob;			/* softmax of the logits */
	float *delta[2];		/* backward scratch */
};

/*
 * Allocate a network with @nlayers weight layers of sizes @dims
 * (nlayers + 1 entries) for batches of up to @maxbatch samples, weights
 * drawn from U(-a, a), a = sqrt(6 / fan_in) (He uniform) with @seed,
 * biases 0, momentum 0. Returns 0 or -EINVAL / -ENOMEM.
 */
int tr_mlp_init(struct tr_mlp *m, int nlayers, const int *dims, int maxbatch,
		uint64_t seed);
void tr_mlp_free(struct tr_mlp *m);

/*
 * Forward pass of @B samples @x (B x dims[0]) with @labels. Returns the
 * sum over the batch of the cross-entropy losses (double, samples in
 * order) and adds the number of samples whose largest logit (first on
 * ties) is the label to *@correct (when not NULL).
 */
double tr_mlp_forward(struct tr_mlp *m, const float *x, int B,
		      const uint8_t *labels, long *correct);

/*
 * Backward pass for the batch of the last tr_mlp_forward(): grad = the
 * mean over the @B samples of the per-sample gradient of the loss.
 */
void tr_mlp_backward(struct tr_mlp *m, int B, const uint8_t *labels);

/*
 * One SGD step from grad: g = grad + wd * w; mom = momentum * mom + g;
 * w = w - lr * mom (every parameter, biases included).
 */
void tr_mlp_sgd(struct tr_mlp *m, float lr, float momentum, float wd);

/* FNV-1a 64 of the parameters' bytes. */
uint64_t tr_mlp_digest(const struct tr_mlp *m);

/* e^x and ln(x) with + - * / only (relative error below 1e-15). */
double tr_exp(double x);
double tr_log(double x);

/* "784-500-10" into @buf. */
void tr_mlp_arch(const struct tr_mlp *m, char *buf, size_t len);

#endif
