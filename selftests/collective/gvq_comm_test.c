// SPDX-License-Identifier: GPL-2.0
/*
 * GradiVeQ inside the communicator (userspace/collective/gvq_comm.c): N
 * ranks as threads on 127.0.0.1 with method GRADIVEQ calling
 * incnn_allreduce_layers() on a layer set of two conv layers that fit the
 * slice size (one with a tail), an unshaped layer and a conv layer that
 * does not fit. Every call's result must equal, bit for bit on every
 * rank, a reference computed here with the gradiveq.h core alone and the
 * ring's summation order (sim_ring): plain sums in the warm-up and
 * sampling calls, then compress (each rank), sum in ring order,
 * decompress: compress-sum-decompress equals decompress of the ring sum
 * formed in the same order. The compressors (digest of U and mu) are the
 * same on every rank and equal the reference fit. Also: the data sockets
 * are unmarked, the flat calls are refused, fully-connected layers are
 * compressed only with gvq_fc, the loss monitor refreshes, and bad
 * parameters fail in one line naming the limit.
 */
#include <netinet/in.h>

#include "kselftest_harness.h"

#include "coll_test.h"
#include "coll.h"	/* white-box: the sockets' marks */
#include <incnn/gradiveq.h>
#include <incnn/wfbp.h>

#define GD	32	/* slice size */
#define GK	4	/* compressed size */
#define NCALLS	6	/* warm-up 1, sampling 3, compressed 2 */
#define NL	4

struct lshape {
	unsigned int shape, out, in, kh, kw;
	size_t count;
};

static const struct lshape shapes[NL] = {
	{ INCNN_LAYER_SHAPE_CONV, 8, 4, 3, 3, 288 + 8 },  /* 9 slices */
	{ 0, 0, 0, 0, 0, 50 },				  /* plain */
	{ INCNN_LAYER_SHAPE_CONV, 16, 5, 1, 3, 240 + 16 }, /* 7 + tail 16 */
	{ INCNN_LAYER_SHAPE_CONV, 12, 2, 3, 3, 216 + 12 }, /* 32 % 12: plain */
};

static size_t total(void)
{
	size_t n = 0, i;

	for (i = 0; i < NL; i++)
		n += shapes[i].count;
	return n;
}

static void layers_over(float *b, struct incnn_layer *ly)
{
	size_t off = 0, i;

	for (i = 0; i < NL; i++) {
		ly[i] = (struct incnn_layer){ .grad = b + off,
					      .count = shapes[i].count,
					      .shape = shapes[i].shape,
					      .out_ch = shapes[i].out,
					      .in_ch = shapes[i].in,
					      .kh = shapes[i].kh,
					      .kw = shapes[i].kw };
		off += shapes[i].count;
	}
}

static bool compressed(size_t i)
{
	return i == 0 || i == 2;
}

static struct incnn_gvq_conv conv_of(size_t i)
{
	return (struct incnn_gvq_conv){ shapes[i].out, shapes[i].in,
					shapes[i].kh, shapes[i].kw };
}

struct gjob {
	float *out[MAX_RANKS];		/* NCALLS x n per rank */
	uint64_t wire[MAX_RANKS][NCALLS];
	struct incnn_gvq_status st[MAX_RANKS];
};

static void gvq_fn(struct rank_ctx *x)
{
	struct gjob *t = x->user;
	struct incnn_layer ly[NL];
	size_t n = total();
	int call;

	for (call = 0; call < NCALLS; call++) {
		float *b = t->out[x->rank] + (size_t)call * n;
		uint64_t w0 = incnn_comm_wire_bytes(x->comm);

		gen_input(b, n, 100 + (uint64_t)call, x->rank, 1.0);
		layers_over(b, ly);
		x->ret = incnn_allreduce_layers(x->comm, ly, NL,
						INCNN_SCHED_SINGLE, NULL, NULL);
		t->wire[x->rank][call] = incnn_comm_wire_bytes(x->comm) - w0;
		if (x->ret)
			return;
	}
	incnn_comm_gvq_status(x->comm, &t->st[x->rank]);
}

static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	while (len--) {
		h ^= *b++;
		h *= 0x100000001b3ull;
	}
	return h;
}

/* rank @r's packed bucket of a compressed call (the core's calls only) */
static size_t ref_pack(struct incnn_gvq_layer **g, const float *in, int N,
		       float *out)
{
	float v[1024];
	size_t off = 0, o = 0, i, n, ns;

	for (i = 0; i < NL; i++) {
		const float *x = in + off;
		struct incnn_gvq_conv cv = conv_of(i);

		off += shapes[i].count;
		if (!compressed(i)) {
			memcpy(out + o, x, 4 * shapes[i].count);
			o += shapes[i].count;
			continue;
		}
		n = incnn_gvq_conv_size(&cv);
		ns = n / GD;
		incnn_gvq_flatten(&cv, x, v);
		incnn_gvq_compress(incnn_gvq_layer_pca(g[i]), v, ns,
				   (unsigned int)N, out + o);
		o += ns * GK;
		memcpy(out + o, v + ns * GD, 4 * (n - ns * GD));
		o += n - ns * GD;
		memcpy(out + o, x + n, 4 * (shapes[i].count - n));
		o += shapes[i].count - n;
	}
	return o;
}

/* the summed pack back into layers */
static void ref_unpack(struct incnn_gvq_layer **g, const float *s, float *out)
{
	float v[1024];
	size_t off = 0, o = 0, i, n, ns;

	for (i = 0; i < NL; i++) {
		float *x = out + off;
		struct incnn_gvq_conv cv = conv_of(i);

		off += shapes[i].count;
		if (!compressed(i)) {
			memcpy(x, s + o, 4 * shapes[i].count);
			o += shapes[i].count;
			continue;
		}
		n = incnn_gvq_conv_size(&cv);
		ns = n / GD;
		incnn_gvq_decompress(incnn_gvq_layer_pca(g[i]), s + o, ns, v);
		o += ns * GK;
		memcpy(v + ns * GD, s + o, 4 * (n - ns * GD));
		o += n - ns * GD;
		incnn_gvq_unflatten(&cv, v, x);
		memcpy(x + n, s + o, 4 * (shapes[i].count - n));
		o += shapes[i].count - n;
	}
}

/* sample the aggregate's conv layers; fit after the last sampling call */
static void ref_sample(struct incnn_gvq_layer **g, const float *agg)
{
	float v[1024];
	size_t off = 0, i;

	for (i = 0; i < NL; i++) {
		struct incnn_gvq_conv cv = conv_of(i);

		if (compressed(i)) {
			incnn_gvq_flatten(&cv, agg + off, v);
			if (incnn_gvq_layer_sample(g[i], v))
				abort();
		}
		off += shapes[i].count;
	}
}

static uint64_t ref_fit(struct incnn_gvq_layer **g)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < NL; i++) {
		const struct incnn_gvq_pca *p;

		if (!compressed(i))
			continue;
		if (incnn_gvq_layer_fit(g[i]))
			abort();
		p = incnn_gvq_layer_pca(g[i]);
		h = fnv(h, incnn_gvq_pca_u(p), 4 * GD * GK);
		h = fnv(h, incnn_gvq_pca_mu(p), 4 * GD);
	}
	return h;
}

/*
 * Every call's expected result (NCALLS x n) and the compressors' digest;
 * the uncompressed calls quantised with @codec:@param (0: none), the
 * samples taken from what they deliver.
 */
static uint64_t reference(int N, float *exp, unsigned int codec,
			  unsigned int param)
{
	struct incnn_gvq_params p;
	struct incnn_gvq_layer *g[NL] = { 0 };
	size_t n = total(), i, m = 0;
	float *in[MAX_RANKS], *pk[MAX_RANKS], *sum = calloc(n, 4);
	uint64_t h = 0;
	int r, call;

	incnn_gvq_params_default(&p);
	p.d = GD;
	p.k = GK;
	for (i = 0; i < NL; i++) {
		struct incnn_gvq_conv cv = conv_of(i);

		if (compressed(i) && incnn_gvq_layer_create(&g[i], &p, &cv,
							    NULL, 0))
			abort();
	}
	for (r = 0; r < N; r++) {
		in[r] = malloc(4 * n);
		pk[r] = malloc(4 * n);
	}
	for (call = 0; call < NCALLS; call++) {
		float *e = exp + (size_t)call * n;

		for (r = 0; r < N; r++)
			gen_input(in[r], n, 100 + (uint64_t)call, r, 1.0);
		if (call < 4) {			/* warm-up, sampling */
			sim_ring(in, N, n, codec, param, e);
			if (call >= 1)
				ref_sample(g, e);
			if (call == 3)
				h = ref_fit(g);
			continue;
		}
		for (r = 0; r < N; r++)
			m = ref_pack(g, in[r], N, pk[r]);
		sim_ring(pk, N, m, 0, 0, sum);
		ref_unpack(g, sum, e);
	}
	for (r = 0; r < N; r++) {
		free(in[r]);
		free(pk[r]);
	}
	for (i = 0; i < NL; i++)
		incnn_gvq_layer_destroy(g[i]);
	free(sum);
	return h;
}

static void gvq_config(struct job *j)
{
	j->cfg.method = INCNN_COLL_METHOD_GRADIVEQ;
	j->cfg.gvq_d = GD;
	j->cfg.gvq_k = GK;
	j->cfg.gvq_warmup = 1;
	j->cfg.gvq_ts = 3;
	j->cfg.gvq_tc = 100;
	j->cfg.gvq_eps = INFINITY;
}

/* the uncompressed calls through ebq 2^-4 (coarse: it shows) */
#define QK	4

static void q_plain(struct rank_ctx *x, struct incnn_comm_config *cfg)
{
	(void)x;
	cfg->codec_mode = INCNN_COLL_CODEC_EMULATE;
	cfg->codec_id = INCNN_CODEC_EBQ;
	cfg->codec_param = QK;
	cfg->scale = INCNN_COLL_SCALE_OFF;
	cfg->error_feedback = 0;
}

/* NCALLS layers calls on N ranks (gvq_fn), @tweak applied: job_run's */
static int gvq_job(struct gjob *t, struct rank_ctx *x, int N,
		   void (*tweak)(struct rank_ctx *, struct incnn_comm_config *))
{
	struct job j;
	int r;

	memset(t, 0, sizeof(*t));
	for (r = 0; r < N; r++)
		t->out[r] = malloc(4 * total() * NCALLS);
	job_init(&j, N);
	gvq_config(&j);
	j.fn = gvq_fn;
	j.arg = t;
	j.tweak = tweak;
	return job_run(&j, x);
}

static void run_gvq(struct __test_metadata *_metadata, int N, bool q)
{
	size_t n = total();
	struct rank_ctx x[MAX_RANKS];
	float *exp = malloc(4 * n * NCALLS);
	struct gjob t;
	uint64_t h;
	int r, call;

	ASSERT_EQ(0, gvq_job(&t, x, N, q ? q_plain : NULL));
	h = reference(N, exp, q ? INCNN_CODEC_EBQ : 0, q ? QK : 0);
	for (r = 0; r < N; r++) {
		ASSERT_EQ(0, x[r].create_ret) TH_LOG("%s", x[r].create_err);
		ASSERT_EQ(0, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
		for (call = 0; call < NCALLS; call++)
			EXPECT_EQ(0, memcmp(exp + (size_t)call * n,
					    t.out[r] + (size_t)call * n, 4 * n))
				TH_LOG("N %d call %d rank %d differs from the reference",
				       N, call, r);
		EXPECT_EQ(h, t.st[r].u_digest) TH_LOG("N %d rank %d: U", N, r);
		EXPECT_NE(0, t.st[r].u_digest);
		EXPECT_EQ(NCALLS, t.st[r].calls);
		EXPECT_EQ(2, t.st[r].compressed_calls);
		EXPECT_EQ(1, t.st[r].fits);
		EXPECT_EQ(2, t.st[r].layers_compressed);
		EXPECT_EQ(2, t.st[r].layers_plain);
		EXPECT_EQ(INCNN_GVQ_COMPRESSED, t.st[r].phase);
		EXPECT_NE(NULL, strstr(t.st[r].note, "layer 3: gradiveq: slice size d 32: must be a multiple of the layer's 12 filters"))
			TH_LOG("%s", t.st[r].note);
		/* compressed calls: 382 of the 830 floats on the ring */
		EXPECT_EQ(t.wire[r][0], t.wire[r][1]);
		EXPECT_EQ(t.wire[r][4], t.wire[r][5]);
		EXPECT_LT(t.wire[r][4] * 2, t.wire[r][0]);
		free(t.out[r]);
	}
	free(exp);
}

TEST(gvq_ring_2_to_8)
{
	int N;

	for (N = 2; N <= 8; N++)
		run_gvq(_metadata, N, false);
}

/*
 * Quantised warm-up and sampling (the paper's scalar quantisation of the
 * uncompressed iterations): ebq 2^-4 emulated, scale and error feedback
 * off: those calls equal the quantised ring's sums, the fit is made on
 * them, the compressed calls stay unquantised; bit for bit.
 */
TEST(gvq_quantised_sampling_exact)
{
	int N;

	for (N = 2; N <= 5; N++)
		run_gvq(_metadata, N, true);
}

static void q_keyed(struct rank_ctx *x, struct incnn_comm_config *cfg)
{
	q_plain(x, cfg);
	cfg->codec_param = 8;
	cfg->scale = INCNN_COLL_SCALE_AUTO;
	cfg->error_feedback = 1;
}

/*
 * The same with scale and error feedback (keyed per bucket): every
 * rank's results and compressors are identical, the uncompressed calls
 * differ from the plain sums (they were quantised: the residuals of
 * call 0 enter call 1).
 */
TEST(gvq_quantised_sampling_replicas)
{
	size_t n = total();
	struct rank_ctx x[MAX_RANKS];
	float *exp = malloc(4 * n * NCALLS);
	struct gjob t;
	int r, N = 4;

	ASSERT_EQ(0, gvq_job(&t, x, N, q_keyed));
	reference(N, exp, 0, 0);
	for (r = 0; r < N; r++) {
		ASSERT_EQ(0, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
		EXPECT_EQ(0, memcmp(t.out[0], t.out[r], 4 * n * NCALLS))
			TH_LOG("rank %d's results differ from rank 0's", r);
		EXPECT_EQ(t.st[0].u_digest, t.st[r].u_digest);
		EXPECT_EQ(2, t.st[r].compressed_calls);
		EXPECT_EQ(1, t.st[r].fits);
	}
	EXPECT_NE(0, memcmp(exp, t.out[0], 4 * n * 4));
	for (r = 0; r < N; r++)
		free(t.out[r]);
	free(exp);
}

static int tos_of(int fd)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (fd < 0 || getsockopt(fd, IPPROTO_IP, IP_TOS, &v, &len))
		return -1;
	return v;
}

static void marks_fn(struct rank_ctx *x)
{
	int *m = x->user;
	struct incnn_comm *c = x->comm;
	float v[3] = { 1, 2, 3 };

	m[3 * x->rank] = tos_of(c->link.ring_send_fd);
	m[3 * x->rank + 1] = tos_of(c->link.ring_recv_fd);
	m[3 * x->rank + 2] = (int)incnn_comm_method(c);
	x->ret = incnn_allreduce(c, v, 3);
}

/* unmarked whatever tos says; the flat call is refused, in one line */
TEST(gvq_unmarked_flat_refused)
{
	struct rank_ctx x[MAX_RANKS];
	int m[3 * 3], r;
	struct job j;

	memset(m, 0, sizeof(m));
	job_init(&j, 3);
	gvq_config(&j);
	j.cfg.tos = 0x28;
	j.fn = marks_fn;
	j.arg = m;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 3; r++) {
		ASSERT_EQ(0, x[r].create_ret) TH_LOG("%s", x[r].create_err);
		EXPECT_EQ(0, m[3 * r]);
		EXPECT_EQ(0, m[3 * r + 1]);
		EXPECT_EQ(INCNN_COLL_METHOD_GRADIVEQ, m[3 * r + 2]);
		EXPECT_NE(0, x[r].ret);
		EXPECT_NE(NULL, strstr(x[r].err, "incnn_allreduce_layers()"))
			TH_LOG("%s", x[r].err);
		EXPECT_EQ(NULL, strchr(x[r].err, '\n'));
	}
}

/* an MLP: FC layers are plain without gvq_fc, compressed with it */
struct fcjob {
	bool fc;
	float *in[MAX_RANKS], *out[MAX_RANKS];
	struct incnn_gvq_status st[MAX_RANKS];
};

#define FC_N	(64 * 32 + 32)

static void fc_fn(struct rank_ctx *x)
{
	struct fcjob *t = x->user;
	struct incnn_layer ly = { .count = FC_N,
				  .shape = INCNN_LAYER_SHAPE_FC,
				  .out_ch = 32, .in_ch = 64 };
	int call;

	for (call = 0; call < 5 && !x->ret; call++) {
		ly.grad = t->out[x->rank];
		memcpy(ly.grad, t->in[x->rank], 4 * FC_N);
		x->ret = incnn_allreduce_layers(x->comm, &ly, 1,
						INCNN_SCHED_SINGLE, NULL, NULL);
	}
	incnn_comm_gvq_status(x->comm, &t->st[x->rank]);
}

static void run_fc(struct __test_metadata *_metadata, bool fc)
{
	struct rank_ctx x[MAX_RANKS];
	float *exp = malloc(4 * FC_N);
	struct fcjob t = { .fc = fc };
	struct job j;
	int r, N = 3;

	for (r = 0; r < N; r++) {
		t.in[r] = malloc(4 * FC_N);
		t.out[r] = malloc(4 * FC_N);
		gen_input(t.in[r], FC_N, 5, r, 1.0);
	}
	job_init(&j, N);
	gvq_config(&j);
	j.cfg.gvq_warmup = 0;
	j.cfg.gvq_ts = 2;
	j.cfg.gvq_fc = fc;
	j.fn = fc_fn;
	j.arg = &t;
	ASSERT_EQ(0, job_run(&j, x));
	sim_ring(t.in, N, FC_N, 0, 0, exp);
	for (r = 0; r < N; r++) {
		ASSERT_EQ(0, x[r].create_ret) TH_LOG("%s", x[r].create_err);
		ASSERT_EQ(0, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
		EXPECT_EQ(fc ? 1 : 0, t.st[r].layers_compressed);
		EXPECT_EQ(fc ? 3 : 0, t.st[r].compressed_calls);
		EXPECT_EQ(0, memcmp(t.out[0], t.out[r], 4 * FC_N));
		/* plain: the fp32 ring's sum exactly; compressed: not */
		EXPECT_EQ(fc, memcmp(exp, t.out[r], 4 * FC_N) != 0);
		if (!fc)
			EXPECT_NE(NULL, strstr(t.st[r].note, "fully connected"));
	}
	for (r = 0; r < N; r++) {
		free(t.in[r]);
		free(t.out[r]);
	}
	free(exp);
}

TEST(gvq_fc_only_with_opt_in)
{
	run_fc(_metadata, false);
	run_fc(_metadata, true);
}

/*
 * The loss monitor: 2 sampling calls and 10 compressed ones on an input
 * that is the same on every rank and in every slice (the compressor
 * reproduces it: the reference loss is ~0), then rank-specific random
 * inputs (loss well above eps = 0.5 each): the first does not refresh
 * (the window's mean does not reach ref + eps yet), a later one does,
 * exactly when the window's mean first exceeds ref + eps.
 */
#define LM_CALLS	22
#define LM_SAME		12

struct lmjob {
	struct incnn_gvq_status st[MAX_RANKS][LM_CALLS];
};

static void lm_fn(struct rank_ctx *x)
{
	struct lmjob *t = x->user;
	float *b = malloc(4 * FC_N);
	struct incnn_layer ly = { .grad = b, .count = FC_N,
				  .shape = INCNN_LAYER_SHAPE_FC,
				  .out_ch = 32, .in_ch = 64 };
	int call, i;

	for (call = 0; call < LM_CALLS && !x->ret; call++) {
		if (call < LM_SAME) {
			/* every slice alike: the first slice's compressor
			 * reproduces them all */
			gen_input(b, FC_N, 9, 0, 1.0);
			for (i = 1; i < 64; i++)
				memcpy(b + i * GD, b, 4 * GD);
		} else {
			gen_input(b, FC_N, 100 + (uint64_t)call, x->rank, 1.0);
		}
		x->ret = incnn_allreduce_layers(x->comm, &ly, 1,
						INCNN_SCHED_SINGLE, NULL, NULL);
		incnn_comm_gvq_status(x->comm, &t->st[x->rank][call]);
	}
	free(b);
}

static void loss_tweak(struct rank_ctx *x, struct incnn_comm_config *cfg)
{
	(void)x;
	cfg->gvq_eps = 0.5;
	cfg->gvq_warmup = 0;
	cfg->gvq_ts = 2;
	cfg->gvq_fc = 1;
}

TEST(gvq_loss_monitor_refreshes)
{
	struct rank_ctx x[MAX_RANKS];
	struct lmjob *t = calloc(1, sizeof(*t));
	struct job j;
	int r, c, N = 3;

	job_init(&j, N);
	gvq_config(&j);
	j.tweak = loss_tweak;
	j.fn = lm_fn;
	j.arg = t;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < N; r++) {
		const struct incnn_gvq_status *st = t->st[r];
		int hit = -1;

		ASSERT_EQ(0, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
		EXPECT_EQ(-1, st[LM_SAME - 2].loss_ref);
		EXPECT_LE(0, st[LM_SAME - 1].loss_ref);
		EXPECT_GT(1e-6, st[LM_SAME - 1].loss_ref);
		/* one large loss alone does not refresh */
		EXPECT_LT(0.5 + st[LM_SAME - 1].loss_ref, st[LM_SAME].loss);
		EXPECT_EQ(0, st[LM_SAME].refreshes);
		for (c = LM_SAME; c < LM_CALLS && hit < 0; c++)
			if (st[c].refreshes)
				hit = c;
		ASSERT_LT(LM_SAME, hit) TH_LOG("rank %d: no refresh", r);
		EXPECT_LT(st[hit].loss_ref + 0.5, st[hit].loss_avg);
		EXPECT_GE(st[hit].loss_ref + 0.5, st[hit - 1].loss_avg);
		EXPECT_EQ(1, st[LM_CALLS - 1].refreshes);
		EXPECT_EQ(hit + 2 < LM_CALLS ? 2 : 1, st[LM_CALLS - 1].fits);
	}
	free(t);
}

/* rank 2 compresses to k = 8: every rank fails, naming it, no hang */
static void odd_k(struct rank_ctx *x, struct incnn_comm_config *cfg)
{
	if (x->rank == 2)
		cfg->gvq_k = 8;
}

TEST(gvq_ranks_disagree)
{
	struct rank_ctx x[MAX_RANKS];
	struct gjob t;
	struct job j;
	int r;

	memset(&t, 0, sizeof(t));
	for (r = 0; r < 3; r++)
		t.out[r] = malloc(4 * total() * NCALLS);
	job_init(&j, 3);
	gvq_config(&j);
	j.tweak = odd_k;
	j.fn = gvq_fn;
	j.arg = &t;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 3; r++) {
		ASSERT_EQ(0, x[r].create_ret) TH_LOG("%s", x[r].create_err);
		EXPECT_NE(0, x[r].ret);
		EXPECT_NE(NULL, strstr(x[r].err, "rank 2's settings or layer shapes differ"))
			TH_LOG("rank %d: %s", r, x[r].err);
		free(t.out[r]);
	}
}

static int bad(struct incnn_comm_config *cfg, char *err, size_t len)
{
	struct incnn_comm *c = (void *)1;
	int ret = incnn_comm_create(&c, cfg, err, len);

	if (c)
		return -1000;
	return ret;
}

#define EXPECT_BAD(msg) do {						\
	EXPECT_EQ(-EINVAL, bad(&cfg, err, sizeof(err)));		\
	EXPECT_NE(NULL, strstr(err, msg)) TH_LOG("%s", err);		\
	EXPECT_EQ(NULL, strchr(err, '\n'));				\
} while (0)

TEST(gvq_bad_params)
{
	struct incnn_comm_config cfg;
	char err[256];

	incnn_comm_config_init(&cfg);
	cfg.master_addr = "127.0.0.1";
	cfg.master_port = 1;
	cfg.rank = 1;
	cfg.world_size = 2;
	cfg.init_timeout_ms = 300;	/* a bug would time out, not hang */
	cfg.method = INCNN_COLL_METHOD_GRADIVEQ;
	cfg.gvq_d = 2000;
	EXPECT_BAD("GradiVeQ slice size d 2000 is out of range 2..1024");
	cfg.gvq_d = 64;
	cfg.gvq_k = 64;
	EXPECT_BAD("gradiveq: compressed size k 64: must be in [1, d - 1] = [1, 63]");
	cfg.gvq_k = 8;
	cfg.gvq_ts = 1;
	EXPECT_BAD("GradiVeQ T_s 1 is out of range 2..4096");
	cfg.gvq_ts = 0;
	cfg.gvq_eps = 1.5;
	EXPECT_BAD("GradiVeQ loss threshold 1.5 is out of range (0, 1]");
	cfg.gvq_eps = 0;
	setenv("INCNN_GVQ_EPS", "0", 1);
	EXPECT_BAD("INCNN_GVQ_EPS=0: want a number in (0, 1] or off");
	unsetenv("INCNN_GVQ_EPS");
	setenv("INCNN_GVQ_D", "1", 1);
	cfg.gvq_d = 0;
	EXPECT_BAD("INCNN_GVQ_D=1: want 2..1024");
	unsetenv("INCNN_GVQ_D");
}

TEST_HARNESS_MAIN
