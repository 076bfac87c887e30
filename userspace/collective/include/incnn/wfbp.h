/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * incnn gradient buckets: scheduling the allreduce of a model's layer
 * gradients during the backward pass (WFBP, one bucket, fixed-size
 * DDP-style buckets, MG-WFBP's merge), a timeline simulator, and layer
 * tables of real models.
 *
 * Conventions. Layers are numbered in BACKWARD order: layer 0 is the
 * first whose gradient becomes ready (the model's last layer), layer L-1
 * the last (the model's first). A bucket is a run of consecutive layers
 * [first, first + nlayers), communicated as one allreduce of the layers'
 * gradients packed in that order. Times are seconds; ready times are
 * relative to the start of the backward pass (the planner and simulator)
 * or to the start of the incnn_allreduce_layers() call.
 *
 * Cost model: one allreduce of M bytes takes T(M) = a + b * M (a in
 * seconds, b in seconds per byte). For the ring over N ranks with link
 * bandwidth B (bytes/s) and one-way latency d per message:
 *	a = 2 (N - 1) d,	b = 2 (N - 1) / (N B)
 * (2(N-1) steps, each moving M/N bytes per link), see incnn_ring_cost().
 *
 * Timeline (the simulator, and the model the planner optimises): one
 * compute stream and one communication stream. Bucket k may start when
 * its last layer is ready and the previous bucket has finished:
 *	start_k = max(end_{k-1}, ready(last layer of k)),
 *	end_k = start_k + a + b * bytes_k,
 * iteration = forward + max(backward, end of the last bucket).
 *
 * MG-WFBP (Shi, Chu, Li: "MG-WFBP: Efficient Data Communication for
 * Distributed Synchronous SGD Algorithms", IEEE INFOCOM 2019, arXiv
 * 1811.11141) picks the buckets that minimise the iteration time under
 * this model. The paper (and its authors' implementation,
 * github.com/HKBU-HPML/MG-WFBP) decides layer by layer: the next layer
 * joins the open bucket when its gradient is ready before the open
 * bucket's communication has got past its startup a (ready < comm start
 * + a), since sending both together then saves one a and delays nothing
 * (incnn_plan_mg_pairwise()). A
 * brute-force check of this timeline found cases where that one-pass
 * rule is not optimal, so the planner solves the same problem exactly:
 * a dynamic programme over the bucket boundaries (f(j) = the earliest
 * end of the communication of layers 0..j-1 = min over i < j of
 * max(f(i), ready(j-1)) + a + b * bytes(i..j-1)), O(L^2), verified
 * against exhaustive search in the tests. Merges that gain nothing are
 * not made, so a = 0 gives WFBP and a very large a one bucket.
 */
#ifndef INCNN_WFBP_H
#define INCNN_WFBP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collective.h"

#ifdef __cplusplus
extern "C" {
#endif

/* libincnn.so exports what this header declares, and nothing else */
#pragma GCC visibility push(default)

enum incnn_sched {
	INCNN_SCHED_WFBP,	/* one allreduce per layer, as soon as ready */
	INCNN_SCHED_SINGLE,	/* one bucket, after the whole backward */
	INCNN_SCHED_FIXED,	/* DDP-style buckets of bucket_bytes */
	INCNN_SCHED_MGWFBP,	/* MG-WFBP's merge for the cost a + b M */
	INCNN_SCHED_COUNT,
};

#define INCNN_WFBP_DEFAULT_BUCKET_BYTES	(25ull << 20)	/* DDP's 25 MB */

/* "wfbp", "single", "fixed", "mgwfbp"; NULL when out of range */
const char *incnn_sched_name(enum incnn_sched s);
/* The schedule of that name, or -1. */
int incnn_sched_parse(const char *name);

/* --- planner (pure) -------------------------------------------------------- */

struct incnn_plan_layer {
	uint64_t count;		/* gradient floats */
	double ready;		/* seconds: when the gradient is ready */
};

struct incnn_bucket {
	size_t first;		/* first layer (backward order) */
	size_t nlayers;		/* >= 1 */
	uint64_t count;		/* floats: sum of the layers' counts */
};

/*
 * Split @L layers into buckets (at most L) for schedule @s into @out,
 * their number in *nbuckets. Ready times must be finite and
 * non-decreasing (backward order). @a, @b: the cost model (MG-WFBP only;
 * finite, >= 0). @bucket_bytes: FIXED only (> 0): layers are appended in
 * backward order and a bucket is closed as soon as it holds at least
 * @bucket_bytes (DDP's rule; a layer larger than that is a bucket alone).
 * L = 0 gives no bucket. Returns 0 or -EINVAL.
 */
int incnn_plan(const struct incnn_plan_layer *layers, size_t L,
	       enum incnn_sched s, double a, double b, uint64_t bucket_bytes,
	       struct incnn_bucket *out, size_t *nbuckets);

/*
 * The MG-WFBP paper's one-pass merge rule (see above), for comparison:
 * merge the next layer when it is ready before the open bucket's start
 * + a. Never worse than WFBP, not always optimal. 0 or -EINVAL.
 */
int incnn_plan_mg_pairwise(const struct incnn_plan_layer *layers, size_t L,
			   double a, double b, struct incnn_bucket *out,
			   size_t *nbuckets);

/* --- timeline simulator (pure) ----------------------------------------------- */

struct incnn_sim {
	size_t nbuckets;
	double iter;		/* forward + max(backward, end of comm) */
	double compute;		/* forward + backward */
	double comm;		/* sum of a + b * bytes over the buckets */
	double exposed;		/* iter - compute: comm not hidden */
};

/*
 * Simulate the timeline above. @backward: the end of the backward pass
 * (>= every ready time; the ready times are relative to its start).
 * @start, @end: NULL or nbuckets entries, each bucket's start and end
 * relative to the start of backward. Returns 0 or -EINVAL (buckets that
 * do not cover the layers in order, bad numbers).
 */
int incnn_simulate(const struct incnn_plan_layer *layers, size_t L,
		   const struct incnn_bucket *bk, size_t nbuckets,
		   double forward, double backward, double a, double b,
		   struct incnn_sim *res, double *start, double *end);

/*
 * Ring allreduce cost for @N ranks, link bandwidth @bytes_per_s and
 * per-message latency @latency_s (see above); N = 1 costs nothing.
 */
void incnn_ring_cost(int N, double bytes_per_s, double latency_s,
		     double *a, double *b);

/* --- model tables ------------------------------------------------------------ */

enum incnn_layer_kind {
	INCNN_LAYER_CONV,
	INCNN_LAYER_FC,
	INCNN_LAYER_BN,
};

struct incnn_model_layer {
	char name[40];
	enum incnn_layer_kind kind;
	uint64_t params;	/* weights + bias (BN: scale + shift) */
	double flops;		/* forward, 2 per multiply-add */
};

struct incnn_model {
	const char *name;
	size_t nlayers;		/* layers with parameters, FORWARD order */
	struct incnn_model_layer *layer;
	uint64_t params;
	double flops;
};

/*
 * Build the layer table of "alexnet", "vgg16", "resnet50" or "googlenet"
 * (torchvision's definitions, 224x224 input, 1000 classes; GoogLeNet
 * without the auxiliary classifiers) from the architecture. 0, -ENOENT
 * (unknown name) or -ENOMEM. Free with incnn_model_free().
 */
int incnn_model_build(const char *name, struct incnn_model **out);
void incnn_model_free(struct incnn_model *m);
/* The i-th model name, NULL past the end. */
const char *incnn_model_name(size_t i);

/*
 * The planner's input for @m: out[i] is layer L-1-i of the model (backward
 * order), its count = params, ready = the sum of the backward times of
 * out[0..i], a layer's backward time being @backward * flops / total
 * flops. @out has m->nlayers entries.
 */
void incnn_model_timeline(const struct incnn_model *m, double backward,
			  struct incnn_plan_layer *out);

/* --- the layers API (needs a communicator) ------------------------------------- */

/*
 * A layer's shape (added later, at the end; zero: none), used by a
 * GradiVeQ communicator (docs/gradiveq.md), ignored by the others:
 *	INCNN_LAYER_SHAPE_CONV: the first out_ch * in_ch * kh * kw floats of
 *		grad are a convolution's weight gradient, [out_ch][in_ch][kh][kw]
 *		(PyTorch's layout); the rest (a bias) is not compressed;
 *	INCNN_LAYER_SHAPE_FC: the first out_ch * in_ch floats are a
 *		fully-connected layer's weight gradient, input-major
 *		[in_ch][out_ch] (incnn-train's MLP; the transpose of PyTorch's
 *		Linear), which is a 1x1 convolution's flattened order already;
 *		compressed only when the communicator's gvq_fc is set (our
 *		extension: the paper compresses conv layers only), with slices
 *		of d consecutive floats (d need not be a multiple of out_ch).
 */
#define INCNN_LAYER_SHAPE_NONE	0
#define INCNN_LAYER_SHAPE_CONV	1
#define INCNN_LAYER_SHAPE_FC	2

struct incnn_layer {
	float *grad;
	size_t count;
	double ready;		/* seconds after the call starts */
	/* added later: the shape (see above), all 0 when unknown */
	unsigned int shape;
	unsigned int out_ch, in_ch, kh, kw;
};

struct incnn_layers_opts {
	bool ps;			/* incnn_allreduce_ps, not the ring */
	uint64_t bucket_bytes;		/* FIXED; 0: 25 MB */
	bool have_cost;			/* use alpha/beta below ... */
	double alpha, beta;		/* ... else the probed cost */
	/* added later, at the end to keep the layout of the fields above */
	bool no_wait;			/* ready times shape the plan only */
};

struct incnn_bucket_stat {
	size_t first, nlayers;
	uint64_t count;
	double ready;		/* latest ready time of its layers */
	double start, end;	/* seconds after the call started */
};

struct incnn_layers_stats {
	struct incnn_bucket_stat *bucket;	/* caller's array, or NULL */
	size_t cap;				/* its entries */
	size_t nbuckets;			/* of the plan (even > cap) */
	double total;		/* the call, seconds */
	double comm;		/* sum of the buckets' end - start */
	double alpha, beta;	/* the cost model used (MG-WFBP) */
};

void incnn_layers_opts_init(struct incnn_layers_opts *o);

/*
 * Allreduce (sum, in place) the gradients of @L layers given in backward
 * order, bucketed by schedule @s. Every rank must pass the same layer
 * counts, schedule and options.
 *
 * Backward emulation: the call does not start a bucket before
 * every one of its layers' ready times (seconds after the call started,
 * on this rank's clock) has passed: it sleeps until then. The caller's
 * gradients must therefore be final when the call is made; the ready
 * times only shape the schedule. (A real training loop would call the
 * planner and issue the buckets from its backward hooks.) With
 * @opts->no_wait the call never sleeps: the ready times only shape the
 * plan, and the buckets go back to back (a caller whose backward pass has
 * already run, e.g. incnn-train --buckets mgwfbp).
 *
 * Each bucket of several layers is packed into a staging buffer,
 * allreduced with incnn_allreduce() (or _ps) and unpacked; a bucket of
 * one layer is reduced in place (the same thing). The result of a layer
 * is thus bit for bit the result of allreducing its packed bucket.
 *
 * Plan agreement: MG-WFBP uses the cost model of @opts (have_cost), or
 * else the communicator's probed cost (incnn_comm_probe_cost(), run at
 * the first MG-WFBP call, which makes every rank use rank 0's values).
 * Before any data moves the ranks exchange a digest of their plans
 * (schedule, counts, a, b, bucket boundaries) through the store: if any
 * two differ every rank returns -EPROTO ("ranks computed different bucket
 * plans"; -ECONNABORTED with that message relayed when another rank's
 * report arrives first), no hang, no gradient sent.
 *
 * @stats (or NULL): per-bucket timings for up to stats->cap buckets.
 * Returns 0 or the errors of incnn_allreduce(), -EINVAL for bad
 * arguments (which fails the job on every rank, as a collective error).
 */
int incnn_allreduce_layers(struct incnn_comm *comm,
			   const struct incnn_layer *layers, size_t L,
			   enum incnn_sched s,
			   const struct incnn_layers_opts *opts,
			   struct incnn_layers_stats *stats);

/*
 * Measure the cost model of this communicator's allreduce (ring, or PS
 * with @ps): a few allreduces of 4 KiB .. 4 MiB, the fastest of three
 * per size on rank 0, a least-squares fit of a + b * bytes weighted by
 * 1/time^2 (relative errors, so the small sizes pin a), both >= 0.
 * A collective call: every rank gets rank 0's values (through the
 * store), which are also kept for MG-WFBP. 0 or an error as
 * incnn_allreduce().
 */
int incnn_comm_probe_cost(struct incnn_comm *comm, bool ps, double *a,
			  double *b);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* INCNN_WFBP_H */
