// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * GradiVeQ inside the communicator (docs/gradiveq.md, "In the
 * communicator"): incnn_allreduce_layers() on a GradiVeQ communicator.
 * One layers call is one iteration of the paper's schedule:
 *
 *   warm-up, sampling: every bucket takes the plain fp32 ring; in a
 *	sampling call each compressed layer's aggregated (summed) gradient,
 *	flattened, gives the layer its next sample (its first slice);
 *	after the T_s-th sampling call every rank fits every layer's
 *	compressor from the same samples (deterministic Jacobi), so U and mu
 *	are bit-identical on every rank;
 *   compressed: each compressed layer's weight gradient is flattened and
 *	cut into d-float slices, each compressed to k floats
 *	y = U^T (x - mu / N); a bucket is packed as [y of its compressed
 *	layers, their n % d tails and the rest (biases, plain layers) as
 *	fp32] and goes round the plain fp32 ring (Q = identity), which sums
 *	y elementwise in a fixed order (linear: the sum is U^T (sum x - mu));
 *	every rank then decompresses each slice once, x = U s + mu, and
 *	unflattens. The loss monitor: each rank's local loss over its
 *	compressed layers, its mean over a window of calls against the
 *	fresh compressor's (gv_large()); after the call the ranks count
 *	(through the store) how many are large; a majority stops
 *	compression.
 *
 * Compressed layers: those with a conv shape that fits the slice size
 * (incnn_gvq_conv_check()), and with gvq_fc those with a fully-connected
 * shape (our extension: their [in][out] weights are already a 1x1
 * convolution's flattened order, sliced as they are). Every other float
 * takes the plain ring. The layer state lives as long as the calls pass
 * the same layer set (counts and shapes); another set restarts the
 * schedule from warm-up.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "coll.h"
#include "include/incnn/wfbp.h"

#define GV_FNV_OFFSET	0xcbf29ce484222325ull
#define GV_FNV_PRIME	0x100000001b3ull

static uint64_t gv_hash(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len--) {
		h ^= *b++;
		h *= GV_FNV_PRIME;
	}
	return h;
}

int incnn_coll_gvq_init(struct incnn_comm *c, const struct coll_cfg *k,
			char *err, size_t errlen)
{
	struct incnn_gvq_params *p = &c->gvq.p;

	if (k->method != INCNN_COLL_METHOD_GRADIVEQ)
		return 0;
	incnn_gvq_params_default(p);
	p->d = (unsigned int)k->gvq_d;
	p->k = (unsigned int)k->gvq_k;
	p->warmup = (unsigned int)k->gvq_warmup;
	p->t_s = (unsigned int)k->gvq_ts;
	p->t_c = (unsigned int)k->gvq_tc;
	c->gvq.eps = k->gvq_eps;
	p->loss_eps = isinf(k->gvq_eps) ? 1 : k->gvq_eps;
	c->gvq.fc = k->gvq_fc;
	c->gvq.st.loss_ref = -1;	/* no reference yet */
	return incnn_gvq_params_check(p, err, errlen);
}

static void gv_drop_layers(struct incnn_comm *c)
{
	size_t i;

	for (i = 0; i < c->gvq.nlayers && c->gvq.l; i++)
		incnn_gvq_layer_destroy(c->gvq.l[i]);
	free(c->gvq.l);
	free(c->gvq.cv);
	c->gvq.l = NULL;
	c->gvq.cv = NULL;
	c->gvq.nlayers = 0;
	c->gvq.set_hash = 0;
}

void incnn_coll_gvq_free(struct incnn_comm *c)
{
	gv_drop_layers(c);
	free(c->gvq.v);
	free(c->gvq.pack);
}

void incnn_comm_gvq_status(const struct incnn_comm *c,
			   struct incnn_gvq_status *st)
{
	memset(st, 0, sizeof(*st));
	if (c && c->method == INCNN_COLL_METHOD_GRADIVEQ) {
		*st = c->gvq.st;
		st->phase = (int)c->gvq.s.phase;
	}
}

/* The layer's shape for the core; false: it takes the plain ring. */
static bool gv_shape(const struct incnn_comm *c, const struct incnn_layer *ly,
		     struct incnn_gvq_conv *cv)
{
	uint64_t w;

	if (ly->shape == INCNN_LAYER_SHAPE_CONV) {
		*cv = (struct incnn_gvq_conv){ ly->out_ch, ly->in_ch, ly->kh,
					       ly->kw };
		return true;
	}
	if (ly->shape != INCNN_LAYER_SHAPE_FC || !c->gvq.fc)
		return false;
	/* [in][out] is the flattened order: one "filter" of that depth */
	w = (uint64_t)ly->out_ch * ly->in_ch;
	*cv = (struct incnn_gvq_conv){ 1, w > UINT32_MAX ? 0 : (unsigned int)w,
				       1, 1 };
	return true;
}

/* The digest of a layer set: what must not change between calls. */
static uint64_t gv_set_hash(const struct incnn_layer *layers, size_t L)
{
	uint64_t h = gv_hash(GV_FNV_OFFSET, &L, sizeof(L));
	size_t i;

	for (i = 0; i < L; i++) {
		unsigned int sh[5] = { layers[i].shape, layers[i].out_ch,
				       layers[i].in_ch, layers[i].kh,
				       layers[i].kw };

		h = gv_hash(h, &layers[i].count, sizeof(layers[i].count));
		h = gv_hash(h, sh, sizeof(sh));
	}
	return h | 1;
}

/* One layer of a new set: compressed (*out set) or plain (note why). */
static int gv_new_layer(struct incnn_comm *c, const struct incnn_layer *ly,
			size_t i, struct incnn_gvq_layer **out)
{
	struct incnn_gvq_status *st = &c->gvq.st;
	char msg[128];
	int ret;

	*out = NULL;
	if (!gv_shape(c, ly, &c->gvq.cv[i])) {
		if (!st->note[0] && ly->shape == INCNN_LAYER_SHAPE_FC)
			snprintf(st->note, sizeof(st->note),
				 "layer %zu: fully connected (gvq_fc / INCNN_GVQ_FC=1 compresses it)",
				 i);
		st->layers_plain++;
		return 0;
	}
	ret = incnn_gvq_conv_check(&c->gvq.p, &c->gvq.cv[i], msg, sizeof(msg));
	if (!ret && incnn_gvq_conv_size(&c->gvq.cv[i]) > ly->count)
		return incnn_coll_fail(c, -EINVAL, false,
				       "incnn_allreduce_layers: layer %zu: shape of %zu floats, count %zu",
				       i, incnn_gvq_conv_size(&c->gvq.cv[i]),
				       ly->count);
	if (ret == -EINVAL) {
		/* does not fit the slice size: plain, and say why */
		if (!st->note[0])
			snprintf(st->note, sizeof(st->note), "layer %zu: %s", i,
				 msg);
		st->layers_plain++;
		return 0;
	}
	ret = ret ? ret : incnn_gvq_layer_create(out, &c->gvq.p,
						 &c->gvq.cv[i], msg,
						 sizeof(msg));
	if (ret)
		return incnn_coll_fail(c, ret, false, "%s", msg);
	st->layers_compressed++;
	return 0;
}

/*
 * The ranks must agree on the settings and the layer set (shapes
 * included: the compressed lengths must match): one digest through the
 * store per new layer set.
 */
static int gv_agree(struct incnn_comm *c, uint64_t set_hash)
{
	const struct incnn_gvq_params *p = &c->gvq.p;
	unsigned int u[5] = { p->d, p->k, p->warmup, p->t_s, p->t_c };
	uint64_t h = gv_hash(set_hash, u, sizeof(u)), *all;
	int ret, r;

	h = gv_hash(h, &c->gvq.eps, sizeof(c->gvq.eps));
	h = gv_hash(h, &c->gvq.fc, sizeof(c->gvq.fc));
	all = calloc((size_t)c->world, sizeof(*all));
	if (!all)
		return incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	ret = incnn_comm_allgather_meta(c, &h, sizeof(h), all);
	for (r = 1; !ret && r < c->world; r++)
		if (all[r] != all[0])
			ret = incnn_coll_fail(c, -EPROTO, false,
					      "gradiveq: rank %d's settings or layer shapes differ from rank 0's",
					      r);
	free(all);
	return ret;
}

/* The loss monitor starts afresh (a new compressor). */
static void gv_loss_reset(struct incnn_comm *c)
{
	c->gvq.lnext = 0;
	c->gvq.lfill = 0;
	c->gvq.st.loss_avg = 0;
	c->gvq.st.loss_ref = -1;
}

/* A new layer set: every layer's state, the schedule from the start. */
static int gv_reset(struct incnn_comm *c, const struct incnn_layer *layers,
		    size_t L, uint64_t h)
{
	size_t i, vmax = 0;
	int ret;

	gv_drop_layers(c);
	incnn_coll_bk_free(c);	/* the old set's keyed state (residuals) */
	memset(&c->gvq.st, 0, sizeof(c->gvq.st));
	gv_loss_reset(c);
	ret = gv_agree(c, h);
	if (ret)
		return ret;
	c->gvq.l = calloc(L ? L : 1, sizeof(*c->gvq.l));
	c->gvq.cv = calloc(L ? L : 1, sizeof(*c->gvq.cv));
	if (!c->gvq.l || !c->gvq.cv)
		return incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	c->gvq.nlayers = L;
	for (i = 0; i < L; i++) {
		ret = gv_new_layer(c, &layers[i], i, &c->gvq.l[i]);
		if (ret)
			return ret;
		if (c->gvq.l[i] && incnn_gvq_layer_size(c->gvq.l[i]) > vmax)
			vmax = incnn_gvq_layer_size(c->gvq.l[i]);
	}
	if (vmax > c->gvq.v_cap) {
		free(c->gvq.v);
		c->gvq.v = malloc(vmax * sizeof(float));
		c->gvq.v_cap = c->gvq.v ? vmax : 0;
		if (!c->gvq.v)
			return incnn_coll_fail(c, -ENOMEM, false,
					       "out of memory");
	}
	ret = incnn_gvq_sched_init(&c->gvq.s, &c->gvq.p, NULL, 0);
	if (ret)
		return incnn_coll_fail(c, ret, false, "gradiveq: bad schedule");
	c->gvq.set_hash = h;
	return 0;
}

/* The packing buffer for buckets of up to @n floats. */
static int gv_pack_reserve(struct incnn_comm *c, size_t n)
{
	if (n <= c->gvq.pack_cap)
		return 0;
	free(c->gvq.pack);
	c->gvq.pack = malloc((n ? n : 1) * sizeof(float));
	c->gvq.pack_cap = c->gvq.pack ? n : 0;
	if (!c->gvq.pack)
		return incnn_coll_fail(c, -ENOMEM, false,
				       "out of memory (%zu GradiVeQ floats)", n);
	return 0;
}

int incnn_coll_gvq_begin(struct incnn_comm *c,
			 const struct incnn_layer *layers, size_t L, bool ps)
{
	uint64_t h = gv_set_hash(layers, L);
	size_t i, total = 0;
	int ret;

	if (ps)
		return incnn_coll_fail(c, -EINVAL, false,
				       "method gradiveq runs on the ring only (incnn_layers_opts.ps)");
	if (h != c->gvq.set_hash) {
		ret = gv_reset(c, layers, L, h);
		if (ret)
			return ret;
	}
	for (i = 0; i < L; i++)
		total += layers[i].count;
	ret = gv_pack_reserve(c, total);
	if (ret)
		return ret;
	if (!c->gvq.st.layers_compressed && !c->gvq.told && L) {
		c->gvq.told = true;
		fprintf(stderr,
			"incnn: rank %d: gradiveq: no layer to compress (%s): every layer takes the plain fp32 ring\n",
			c->rank, c->gvq.st.note[0] ? c->gvq.st.note :
			"no conv shape in struct incnn_layer");
	}
	c->gvq.ph = c->gvq.s.phase;
	c->gvq.loss_num = 0;
	c->gvq.loss_den = 0;
	return 0;
}

/* A layer whose flattening is the identity (FC, or M = H = W = 1). */
static bool gv_identity(const struct incnn_gvq_conv *cv)
{
	return cv->filters == 1 && cv->height == 1 && cv->width == 1;
}

/* Sum of squares of @n floats (double, in order). */
static double gv_sumsq(const float *x, size_t n)
{
	double s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += (double)x[i] * x[i];
	return s;
}

/* Append layer @i of a compressed call to the pack at *@off. */
static void gv_pack_layer(struct incnn_comm *c, const struct incnn_layer *ly,
			  size_t i, size_t *off)
{
	const struct incnn_gvq_layer *g = c->gvq.l[i];
	const struct incnn_gvq_pca *pca;
	size_t n, ns, d, k;
	unsigned int N = (unsigned int)c->world;
	float *out = c->gvq.pack + *off;
	const float *v = c->gvq.v;
	double den, loss;

	if (!g) {
		if (ly->count)
			memcpy(out, ly->grad, ly->count * sizeof(float));
		*off += ly->count;
		return;
	}
	pca = incnn_gvq_layer_pca(g);
	n = incnn_gvq_layer_size(g);
	ns = incnn_gvq_layer_nslices(g);
	d = incnn_gvq_pca_d(pca);
	k = incnn_gvq_pca_k(pca);
	if (gv_identity(&c->gvq.cv[i]))
		v = ly->grad;
	else
		incnn_gvq_flatten(&c->gvq.cv[i], ly->grad, c->gvq.v);
	incnn_gvq_compress(pca, v, ns, N, out);
	memcpy(out + ns * k, v + ns * d, (n - ns * d) * sizeof(float));
	memcpy(out + ns * k + (n - ns * d), ly->grad + n,
	       (ly->count - n) * sizeof(float));
	*off += ns * k + (ly->count - ns * d);
	/* the loss monitor: this rank's slices through U U^T */
	if (isinf(c->gvq.eps))
		return;
	den = gv_sumsq(v, ns * d);
	loss = incnn_gvq_local_loss(pca, v, ns, N);
	c->gvq.loss_num += loss * den;
	c->gvq.loss_den += den;
}

/* Take layer @i back from the summed pack at *@off. */
static void gv_unpack_layer(struct incnn_comm *c, const struct incnn_layer *ly,
			    size_t i, size_t *off)
{
	const struct incnn_gvq_layer *g = c->gvq.l[i];
	const struct incnn_gvq_pca *pca;
	const float *in = c->gvq.pack + *off;
	size_t n, ns, d, k;
	bool id = gv_identity(&c->gvq.cv[i]);
	float *v = id ? ly->grad : c->gvq.v;

	if (!g) {
		if (ly->count)
			memcpy(ly->grad, in, ly->count * sizeof(float));
		*off += ly->count;
		return;
	}
	pca = incnn_gvq_layer_pca(g);
	n = incnn_gvq_layer_size(g);
	ns = incnn_gvq_layer_nslices(g);
	d = incnn_gvq_pca_d(pca);
	k = incnn_gvq_pca_k(pca);
	incnn_gvq_decompress(pca, in, ns, v);
	memcpy(v + ns * d, in + ns * k, (n - ns * d) * sizeof(float));
	if (!id)
		incnn_gvq_unflatten(&c->gvq.cv[i], v, ly->grad);
	memcpy(ly->grad + n, in + ns * k + (n - ns * d),
	       (ly->count - n) * sizeof(float));
	*off += ns * k + (ly->count - ns * d);
}

/* A sampling call: each compressed layer's aggregate gives a sample. */
static void gv_sample(struct incnn_comm *c, const struct incnn_layer *layers,
		      const struct incnn_bucket *q)
{
	size_t i;

	for (i = q->first; i < q->first + q->nlayers; i++) {
		const float *v = layers[i].grad;

		if (!c->gvq.l[i])
			continue;
		if (!gv_identity(&c->gvq.cv[i])) {
			incnn_gvq_flatten(&c->gvq.cv[i], layers[i].grad,
					  c->gvq.v);
			v = c->gvq.v;
		}
		/* never full: the schedule fits after T_s samples */
		(void)incnn_gvq_layer_sample(c->gvq.l[i], v);
	}
}

/*
 * The sum of an uncompressed call's pack of @n floats (bucket @q). With
 * a lossy codec (the paper's scalar quantisation of the iterations that
 * GradiVeQ does not compress, §3) it is a keyed call (bucket.c: scale
 * and error feedback kept per bucket, keyed by its first layer); the
 * keyed path serves the plain method only, so the call runs as that
 * method. Without a codec: the plain fp32 ring.
 */
static int gv_sum_uncompressed(struct incnn_comm *c,
			       const struct incnn_bucket *q, size_t n)
{
	enum incnn_coll_method m = c->method;
	int ret;

	if (!c->codec.q.codec)
		return incnn_coll_allreduce_ring(c, c->gvq.pack, n);
	c->method = INCNN_COLL_METHOD_NONE;
	ret = incnn_allreduce_bucket(c, c->gvq.pack, n, q->first, 0);
	c->method = m;
	return ret;
}

/* The sum of a compressed call's pack: PCA coefficients take the fp32
 * ring as they are, never the codec (the sum must stay linear). */
static int gv_sum_compressed(struct incnn_comm *c, size_t n)
{
	const struct incnn_codec *codec = c->codec.q.codec;
	int ret;

	c->codec.q.codec = NULL;
	ret = incnn_coll_allreduce_ring(c, c->gvq.pack, n);
	c->codec.q.codec = codec;
	return ret;
}

int incnn_coll_gvq_bucket(struct incnn_comm *c,
			  const struct incnn_layer *layers,
			  const struct incnn_bucket *q)
{
	bool comp = c->gvq.ph == INCNN_GVQ_COMPRESSED;
	size_t i, off = 0;
	int ret;

	for (i = q->first; i < q->first + q->nlayers; i++) {
		if (comp) {
			gv_pack_layer(c, &layers[i], i, &off);
		} else if (layers[i].count) {
			memcpy(c->gvq.pack + off, layers[i].grad,
			       layers[i].count * sizeof(float));
			off += layers[i].count;
		}
	}
	ret = comp ? gv_sum_compressed(c, off) :
		     gv_sum_uncompressed(c, q, off);
	if (ret)
		return ret;
	off = 0;
	for (i = q->first; i < q->first + q->nlayers; i++) {
		if (comp) {
			gv_unpack_layer(c, &layers[i], i, &off);
		} else if (layers[i].count) {
			memcpy(layers[i].grad, c->gvq.pack + off,
			       layers[i].count * sizeof(float));
			off += layers[i].count;
		}
	}
	if (c->gvq.ph == INCNN_GVQ_SAMPLE)
		gv_sample(c, layers, q);
	return 0;
}

/* Fit every compressed layer (identical samples: identical U, mu). */
static int gv_fit_all(struct incnn_comm *c)
{
	uint64_t h = GV_FNV_OFFSET;
	size_t i;
	int ret;

	for (i = 0; i < c->gvq.nlayers; i++) {
		const struct incnn_gvq_pca *pca;
		size_t d, k;

		if (!c->gvq.l[i])
			continue;
		ret = incnn_gvq_layer_fit(c->gvq.l[i]);
		if (ret)
			return incnn_coll_fail(c, ret, false,
					       "gradiveq: layer %zu: cannot fit the compressor (%s)",
					       i, ret == -ERANGE ? "a sample is not finite" :
					       ret == -EDOM ? "Jacobi did not converge" :
					       strerror(-ret));
		pca = incnn_gvq_layer_pca(c->gvq.l[i]);
		d = incnn_gvq_pca_d(pca);
		k = incnn_gvq_pca_k(pca);
		h = gv_hash(h, incnn_gvq_pca_u(pca), d * k * sizeof(float));
		h = gv_hash(h, incnn_gvq_pca_mu(pca), d * sizeof(float));
	}
	c->gvq.st.fits++;
	c->gvq.st.u_digest = h;
	gv_loss_reset(c);
	return 0;
}

/*
 * This rank's verdict on a compressed call: its local loss joins the
 * window of the last COLL_GVQ_LOSS_WIN compressed calls (one minibatch's
 * loss is noisy); the first full window after a fit gives the reference
 * (the loss of the fresh compressor on this rank's gradients), and later
 * windows are "large" when their mean is above it by more than eps: the
 * correlations have drifted away from the compressor.
 */
static bool gv_large(struct incnn_comm *c)
{
	struct incnn_gvq_status *st = &c->gvq.st;
	double sum = 0;
	unsigned int i;

	st->loss = c->gvq.loss_den > 0 ? c->gvq.loss_num / c->gvq.loss_den : 0;
	c->gvq.lwin[c->gvq.lnext] = st->loss;
	c->gvq.lnext = (c->gvq.lnext + 1) % COLL_GVQ_LOSS_WIN;
	if (c->gvq.lfill < COLL_GVQ_LOSS_WIN)
		c->gvq.lfill++;
	if (c->gvq.lfill < COLL_GVQ_LOSS_WIN)
		return false;
	for (i = 0; i < COLL_GVQ_LOSS_WIN; i++)
		sum += c->gvq.lwin[i];
	st->loss_avg = sum / COLL_GVQ_LOSS_WIN;
	if (st->loss_ref < 0) {		/* no reference yet */
		st->loss_ref = st->loss_avg;
		return false;
	}
	return st->loss_avg > st->loss_ref + c->gvq.eps;
}

/* How many ranks' loss is large (gv_large(), through the store). */
static int gv_over(struct incnn_comm *c, unsigned int *over)
{
	uint8_t me, *all;
	int ret, r;

	*over = 0;
	if (isinf(c->gvq.eps))
		return 0;	/* the loss monitor is off */
	me = gv_large(c);
	all = calloc((size_t)c->world, 1);
	if (!all)
		return incnn_coll_fail(c, -ENOMEM, false, "out of memory");
	ret = incnn_comm_allgather_meta(c, &me, 1, all);
	for (r = 0; !ret && r < c->world; r++)
		*over += all[r] ? 1 : 0;
	free(all);
	return ret;
}

int incnn_coll_gvq_end(struct incnn_comm *c)
{
	enum incnn_gvq_phase ph = c->gvq.ph, next;
	unsigned int over = 0;
	int ret = 0;

	c->gvq.st.calls++;
	if (!c->gvq.st.layers_compressed)
		return 0;	/* nothing to schedule */
	if (ph == INCNN_GVQ_COMPRESSED) {
		ret = gv_over(c, &over);
		if (ret)
			return ret;
		c->gvq.st.compressed_calls++;
	}
	next = incnn_gvq_sched_next(&c->gvq.s, over, (unsigned int)c->world);
	c->gvq.st.refreshes = c->gvq.s.refreshes;
	if (ph == INCNN_GVQ_SAMPLE && next == INCNN_GVQ_COMPRESSED)
		ret = gv_fit_all(c);
	return ret;
}
