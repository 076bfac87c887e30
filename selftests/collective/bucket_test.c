// SPDX-License-Identifier: GPL-2.0
/*
 * Keyed calls (incnn_allreduce_bucket): scale-relative bounds and error
 * feedback. For 4 ranks and every lossy codec of the codec table, the
 * replicas are bit-identical and equal, bit for bit, to an independent
 * simulation of the rule (collective.h): the first call's agreed e, the
 * per-value order u = x / d + r, u * 2^e, + the received partial sum,
 * q = Q(a), r = (a - q) * 2^-e, the result's unscaling and the next e
 * from its largest value; the same with the bucket in segments of very
 * different magnitudes (incnn_allreduce_bucket_seg: a 2^e per segment,
 * one of them empty, one zero on every rank). Also: settings or segments
 * that differ between ranks fail every rank, a flattened bucket is
 * counted, bad arguments are refused; the same rule with the ring's Q
 * blocks inside its chunks and values cut by sends (replicas_in_q_blocks).
 */
#include <float.h>
#include <limits.h>

#include "kselftest_harness.h"

#include "coll_test.h"

#define BK_CALLS	5
#define BK_N		10007
#define BK_SEGS		6
#define BK_SEG_MAX	8	/* of any layout below */

/* segments of BK_N values across the ring's blocks and chunks, and the
 * factor of each one's inputs (0: zero on every rank) */
static const size_t bk_seg_len[BK_SEGS] = { 4000, 7, 1, 3000, 0, 2999 };
static const double bk_seg_mul[BK_SEGS] = { 1, 300, 0, 1e-3, 1, 1e-6 };

/*
 * BK_BIG_N values in segments that start and end inside the ring's Q
 * blocks (2048 values, ring.c) and chunks (BK_BIG_CHUNK bytes, not a
 * multiple of a block), with 4 ranks' blocks of about 20000 values
 */
#define BK_BIG_N	80021
#define BK_BIG_SEGS	7
#define BK_BIG_CHUNK	40000
static const size_t bk_big_len[BK_BIG_SEGS] = { 9000, 2047, 2049, 1, 30000, 0,
						36924 };
static const double bk_big_mul[BK_BIG_SEGS] = { 1, 1e3, 1e-5, 7, 1e-2, 1, 1 };

struct bk_sweep {
	unsigned int codec, param;
	float div;
	int calls;
	size_t n;
	double scale;		/* of the Laplace inputs */
	size_t nseg;		/* 0: incnn_allreduce_bucket(), else of seg_len */
	const size_t *seg_len;	/* nseg lengths summing to n */
	const double *seg_mul;	/* and their factors */
	float *out[MAX_RANKS][BK_CALLS];
	struct incnn_bucket_info info[MAX_RANKS];
	int32_t exps[MAX_RANKS][BK_SEG_MAX];
	int nexps[MAX_RANKS];	/* incnn_comm_bucket_exps()'s return */
	struct incnn_bucket_stats st[MAX_RANKS];
};

/* rank r's input of call t */
static void bk_input(float *x, size_t n, int r, int t, double scale)
{
	gen_input(x, n, 9000 + (uint64_t)t, r, scale);
}

/* the same, each segment of @s times its factor */
static void bk_input_seg(const struct bk_sweep *s, float *x, int r, int t)
{
	size_t off = 0;

	bk_input(x, s->n, r, t, s->scale);
	for (size_t k = 0; k < s->nseg; k++) {
		for (size_t i = off; i < off + s->seg_len[k]; i++)
			x[i] = (float)(x[i] * s->seg_mul[k]);
		off += s->seg_len[k];
	}
}

/* The segment of value @i (the whole bucket without segments). */
static size_t bk_seg_of(const struct bk_sweep *s, size_t i)
{
	size_t k = 0, end = s->nseg ? s->seg_len[0] : SIZE_MAX;

	while (i >= end)
		end += s->seg_len[++k];
	return k;
}

static void bk_fn(struct rank_ctx *x)
{
	struct bk_sweep *s = x->user;

	for (int t = 0; t < s->calls && !x->ret; t++) {
		float *b = malloc(4 * s->n + 4);

		bk_input_seg(s, b, x->rank, t);
		x->ret = s->nseg ?
			 incnn_allreduce_bucket_seg(x->comm, b, s->n, 42,
						    s->div, s->seg_len,
						    s->nseg) :
			 incnn_allreduce_bucket(x->comm, b, s->n, 42, s->div);
		s->out[x->rank][t] = b;
	}
	if (!x->ret)
		x->ret = incnn_comm_bucket_info(x->comm, 42, &s->info[x->rank]);
	s->nexps[x->rank] = incnn_comm_bucket_exps(x->comm, 42,
						   s->exps[x->rank], BK_SEG_MAX);
	incnn_comm_bucket_stats(x->comm, &s->st[x->rank]);
}

static int bk_clamp(long e)
{
	return e > INCNN_SCALE_EXP_MAX ? INCNN_SCALE_EXP_MAX :
	       e < -INCNN_SCALE_EXP_MAX ? -INCNN_SCALE_EXP_MAX : (int)e;
}

/* largest finite |x[i]|, 0 when none */
static float bk_absmax(const float *x, size_t n)
{
	float m = 0;

	for (size_t i = 0; i < n; i++)
		if (isfinite(x[i]) && fabsf(x[i]) > m)
			m = fabsf(x[i]);
	return m;
}

/* The exponent of max |x| / |d| of rank inputs @in over [lo, hi), the
 * largest over the ranks; LONG_MIN when all zero. */
static long bk_top(float **in, int N, size_t lo, size_t hi, float div)
{
	long top = LONG_MIN;

	for (int r = 0; r < N; r++) {
		double m = bk_absmax(in[r] + lo, hi - lo);

		if (m && ilogb(div ? m / fabs(div) : m) > top)
			top = ilogb(div ? m / fabs(div) : m);
	}
	return top;
}

/* The first call's agreement, simulated: each segment's e; false when
 * the inputs are all zero (with scale). */
static bool bk_sim_agree(const struct bk_sweep *s, float **in, int N,
			 bool scale, int *e)
{
	size_t ns = s->nseg ? s->nseg : 1, lo = 0;
	long top[BK_SEG_MAX], all = LONG_MIN;
	int lg = 0;

	while ((1 << lg) < N)
		lg++;
	for (size_t k = 0; k < ns; k++) {
		size_t hi = s->nseg ? lo + s->seg_len[k] : s->n;

		top[k] = bk_top(in, N, lo, hi, s->div);
		if (top[k] > all)
			all = top[k];
		lo = hi;
	}
	for (size_t k = 0; k < ns; k++) {
		long t = top[k] != LONG_MIN ? top[k] : all;

		e[k] = scale && t != LONG_MIN ? bk_clamp(-1 - (t + lg)) : 0;
	}
	return all != LONG_MIN || !scale;
}

/* After a call, simulated: each segment's next e from the result @v
 * (kept where it is zero); false when all of it is zero. */
static bool bk_sim_next(const struct bk_sweep *s, const float *v, int *e)
{
	size_t ns = s->nseg ? s->nseg : 1, lo = 0;
	bool any = false;

	for (size_t k = 0; k < ns; k++) {
		size_t hi = s->nseg ? lo + s->seg_len[k] : s->n;
		float m = bk_absmax(v + lo, hi - lo);

		if (m)
			e[k] = bk_clamp(-1L - ilogbf(m));
		any |= m != 0;
		lo = hi;
	}
	return any;
}

/* One hop of the ring, simulated: rank @r adds its values of block
 * [off, off + len) to the partial sums @v (k: the hop), Q, residuals. */
static void bk_sim_hop(const struct bk_sweep *s, const float *in, float *res,
		       float *v, size_t off, size_t len, int k, bool ef,
		       const int *e)
{
	float *pre = malloc(4 * len + 4);

	for (size_t i = off; i < off + len; i++) {
		float u = in[i], a;
		int ei = e[bk_seg_of(s, i)];

		if (s->div)
			u = u / s->div;
		if (ef)
			u = u + res[i];
		u = u * ldexpf(1, ei);
		a = k ? u + v[i] : u;
		v[i] = a;
	}
	memcpy(pre, v + off, 4 * len);
	q_apply(s->codec, s->param, v + off, len);
	for (size_t i = 0; ef && i < len; i++)
		res[off + i] = (pre[i] - v[off + i]) *
			       ldexpf(1, -e[bk_seg_of(s, off + i)]);
	free(pre);
}

/* The rule, simulated: @calls results of N ranks (rank 0's view). */
static void bk_sim(const struct bk_sweep *s, int N, bool scale, bool ef,
		   float **want, int *e)
{
	float *in[MAX_RANKS], *res[MAX_RANKS], *v = malloc(4 * s->n + 4);
	bool have = false;

	for (int r = 0; r < N; r++) {
		in[r] = malloc(4 * s->n + 4);
		res[r] = calloc(s->n + 1, 4);
	}
	for (int t = 0; t < s->calls; t++) {
		for (int r = 0; r < N; r++)
			bk_input_seg(s, in[r], r, t);
		if (!have)
			have = bk_sim_agree(s, in, N, scale, e);
		for (int b = 0; b < N; b++) {
			size_t off = blk_off(s->n, N, b), len = blk_len(s->n, N, b);

			for (int k = 0; k < N; k++)
				bk_sim_hop(s, in[(b + k) % N], res[(b + k) % N],
					   v, off, len, k, ef, e);
		}
		for (size_t i = 0; i < s->n; i++)
			want[t][i] = v[i] * ldexpf(1, -e[bk_seg_of(s, i)]);
		if (scale)
			have = bk_sim_next(s, want[t], e);
	}
	for (int r = 0; r < N; r++) {
		free(in[r]);
		free(res[r]);
	}
	free(v);
}

/* A job of @N ranks emulating ebq 2^-@k with the given settings. */
static void ebq_job(struct job *j, int N, unsigned int k, int scale, int ef)
{
	job_init(j, N);
	j->cfg.codec_mode = INCNN_COLL_CODEC_EMULATE;
	j->cfg.codec_id = INCNN_CODEC_EBQ;
	j->cfg.codec_param = k;
	j->cfg.scale = scale;
	j->cfg.error_feedback = ef;
}

/* A bucket's values, its segments and the ring's chunk */
struct bk_layout {
	size_t n, nseg;		/* nseg 0: incnn_allreduce_bucket() */
	const size_t *len;
	const double *mul;
	size_t chunk;		/* bytes */
	int sockbuf;		/* bytes (0: the library's default) */
};

static const struct bk_layout bk_whole = { BK_N, 0, bk_seg_len, bk_seg_mul,
					   4096, 0 };
static const struct bk_layout bk_segs = { BK_N, BK_SEGS, bk_seg_len,
					  bk_seg_mul, 4096, 0 };
/* the ring's Q blocks inside chunks; with socket buffers so small that
 * sends end inside a value */
static const struct bk_layout bk_big_whole = { BK_BIG_N, 0, bk_big_len,
					       bk_big_mul, BK_BIG_CHUNK, 0 };
static const struct bk_layout bk_big_segs = { BK_BIG_N, BK_BIG_SEGS,
					      bk_big_len, bk_big_mul,
					      BK_BIG_CHUNK, 3001 };

static void bk_case(struct __test_metadata *_metadata,
		    const struct incnn_codec *c, unsigned int param,
		    bool scale, bool ef, float div, double in_scale,
		    const struct bk_layout *ly)
{
	struct rank_ctx x[MAX_RANKS];
	struct bk_sweep s = { .codec = c->id, .param = param, .div = div,
			      .calls = BK_CALLS, .n = ly->n,
			      .scale = in_scale, .nseg = ly->nseg,
			      .seg_len = ly->len, .seg_mul = ly->mul };
	int e[BK_SEG_MAX] = { 0 };
	float *want[BK_CALLS];
	const size_t nseg = ly->nseg, n = ly->n;
	const int N = 4;
	struct job j;

	job_init(&j, N);
	j.cfg.codec_mode = INCNN_COLL_CODEC_EMULATE;
	j.cfg.codec_id = c->id;
	j.cfg.codec_param = param;
	j.cfg.chunk_bytes = ly->chunk;
	if (ly->sockbuf)
		j.cfg.sockbuf = ly->sockbuf;
	j.cfg.scale = scale;
	j.cfg.error_feedback = ef;
	j.fn = bk_fn;
	j.arg = &s;
	ASSERT_EQ(0, job_run(&j, x));
	for (int t = 0; t < BK_CALLS; t++)
		want[t] = malloc(4 * n);
	bk_sim(&s, N, scale, ef, want, e);
	for (int r = 0; r < N; r++) {
		ASSERT_EQ(0, x[r].create_ret) TH_LOG("%s", x[r].create_err);
		ASSERT_EQ(0, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
		for (int t = 0; t < BK_CALLS; t++) {
			ASSERT_EQ(0, memcmp(s.out[0][t], s.out[r][t], 4 * n))
				TH_LOG("%s %u scale %d ef %d segments %zu: rank %d differs from rank 0 in call %d",
				       c->name, param, scale, ef, nseg, r, t);
			ASSERT_EQ(0, memcmp(want[t], s.out[r][t], 4 * n))
				TH_LOG("%s %u scale %d ef %d segments %zu: rank %d call %d differs from the simulated rule",
				       c->name, param, scale, ef, nseg, r, t);
		}
		/* the next call's e of every segment, as simulated */
		ASSERT_EQ(nseg ? nseg : 1, s.nexps[r]);
		for (int k = 0; k < s.nexps[r]; k++) {
			EXPECT_EQ(e[k], s.exps[r][k])
				TH_LOG("%s segment %d", c->name, k);
		}
		EXPECT_EQ(e[0], s.info[r].next_exp);
		EXPECT_EQ(BK_CALLS, s.info[r].calls);
		EXPECT_EQ(n, s.info[r].n);
		EXPECT_EQ(ef ? 4 * n : 0, s.info[r].ef_bytes);
		EXPECT_EQ(ef ? 4 * n : 0, s.st[r].ef_bytes);
		EXPECT_EQ(1, s.st[r].buckets);
		EXPECT_EQ(scale, s.st[r].scale);
		EXPECT_EQ(ef, s.st[r].error_feedback);
		/* every rank quantises every element once */
		EXPECT_EQ(n, s.info[r].quantised);
	}
	for (int t = 0; t < BK_CALLS; t++) {
		free(want[t]);
		for (int r = 0; r < N; r++)
			free(s.out[r][t]);
	}
}

/* One case's settings: scale, error feedback, divisor, input scale */
struct bk_set {
	bool scale, ef;
	float div;
	double in_scale;
};

static const struct bk_set bk_sets[] = {
	{ true, false, 0, 1e-4 }, { false, true, 0, 1e-4 },
	{ true, true, 4.0f, 1e-4 }, { true, true, 0, 3.0 },
};

/* Every lossy float codec of the table, whatever its name, with the
 * settings @set[0..nset), in the segments of @ly[0..nset) (or *@ly) */
static void bk_all_codecs(struct __test_metadata *_metadata,
			  const struct bk_set *set, size_t nset,
			  const struct bk_layout *const *ly, bool ly_each)
{
	int cases = 0;

	for (unsigned int id = 1; id <= INCNN_CODEC_MAX; id++) {
		const struct incnn_codec *c = incnn_codec_get(id);

		if (!c || !c->lossy || !c->floats)
			continue;
		for (size_t i = 0; i < nset; i++)
			bk_case(_metadata, c, c->param.def, set[i].scale,
				set[i].ef, set[i].div, set[i].in_scale,
				ly[ly_each ? i : 0]);
		cases++;
	}
	EXPECT_LE(3, cases);
}

/* 16 jobs of 4 ranks each: more than the harness's 30 s on a loaded
 * machine, so with a fixture (nothing in it) and its own timeout */
FIXTURE(bk) {
	int unused;
};

/* (the harness's setup and teardown have no prototypes) */
FIXTURE_SETUP(bk);
FIXTURE_TEARDOWN(bk);

FIXTURE_SETUP(bk)
{
}

FIXTURE_TEARDOWN(bk)
{
}

TEST_F_TIMEOUT(bk, replicas_every_lossy_codec, 300)
{
	const struct bk_layout *ly = &bk_whole;

	bk_all_codecs(_metadata, bk_sets, ARRAY_SIZE(bk_sets), &ly, false);
}

/* The same with a 2^e per segment (incnn_allreduce_bucket_seg) */
TEST_F_TIMEOUT(bk, replicas_every_lossy_codec_per_segment, 300)
{
	const struct bk_layout *ly = &bk_segs;

	bk_all_codecs(_metadata, bk_sets, ARRAY_SIZE(bk_sets), &ly, false);
}

/*
 * Every lossy codec with the ring's Q blocks inside its chunks, segments
 * that start and end inside blocks, a divisor that is not a power of two
 * (a division) and one that is (a multiplication, the same bits), and
 * allgather sends that end inside a value (unscaled once sent)
 */
TEST_F_TIMEOUT(bk, replicas_in_q_blocks, 300)
{
	static const struct bk_set set[] = {
		{ true, true, 3.0f, 1e-4 }, { true, true, 4.0f, 1e-4 },
		{ true, false, 0.5f, 1e-4 },
	};
	const struct bk_layout *ly[] = { &bk_big_segs, &bk_big_whole,
					 &bk_big_segs };

	bk_all_codecs(_metadata, set, ARRAY_SIZE(set), ly, true);
}

static void tweak_scale_off(struct rank_ctx *x, struct incnn_comm_config *cfg)
{
	if (x->rank == 2)
		cfg->scale = INCNN_COLL_SCALE_OFF;
}

/* ranks that disagree on scale: every rank fails, with the reason */
TEST(settings_mismatch)
{
	struct bk_sweep s = { .codec = INCNN_CODEC_EBQ, .param = 8, .calls = 1,
			      .n = 100, .scale = 1e-3 };
	struct rank_ctx x[MAX_RANKS];
	struct job j;

	ebq_job(&j, 4, 8, INCNN_COLL_SCALE_AUTO, 1);
	j.tweak = tweak_scale_off;
	j.fn = bk_fn;
	j.arg = &s;
	ASSERT_EQ(0, job_run(&j, x));
	for (int r = 0; r < 4; r++) {
		/* its own finding, or the first finder's, relayed */
		EXPECT_TRUE(x[r].ret == -EPROTO || x[r].ret == -ECONNABORTED)
			TH_LOG("rank %d: %d %s", r, x[r].ret, x[r].err);
		EXPECT_NE(NULL, strstr(x[r].err, "ranks disagree on keyed-call settings"))
			TH_LOG("rank %d: %s", r, x[r].err);
		free(s.out[r][0]);
	}
}

/* rank 1 cuts the bucket elsewhere (as many segments): every rank fails */
static void seg_mismatch_fn(struct rank_ctx *x)
{
	size_t seg[2] = { 60, 40 };
	float b[100];

	if (x->rank == 1)
		seg[0] = 61, seg[1] = 39;
	for (int i = 0; i < 100; i++)
		b[i] = (float)i;
	x->ret = incnn_allreduce_bucket_seg(x->comm, b, 100, 3, 0, seg, 2);
}

TEST(segments_mismatch)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;

	ebq_job(&j, 3, 8, INCNN_COLL_SCALE_AUTO, 1);
	j.fn = seg_mismatch_fn;
	ASSERT_EQ(0, job_run(&j, x));
	for (int r = 0; r < 3; r++) {
		EXPECT_TRUE(x[r].ret == -EPROTO || x[r].ret == -ECONNABORTED)
			TH_LOG("rank %d: %d %s", r, x[r].ret, x[r].err);
		EXPECT_NE(NULL, strstr(x[r].err, "disagree on a keyed call's segments"))
			TH_LOG("rank %d: %s", r, x[r].err);
	}
}

/*
 * ebq 2^-4 on values around 1e-3, no scale: every value becomes 0, and
 * after INCNN_FLAT_CALLS calls the bucket is counted; with scale it never
 * is.
 */
static void flat_fn(struct rank_ctx *x)
{
	struct bk_sweep *s = x->user;
	float *b = malloc(4 * s->n);

	for (int t = 0; t < INCNN_FLAT_CALLS && !x->ret; t++) {
		bk_input(b, s->n, x->rank, t, s->scale);
		x->ret = incnn_allreduce_bucket(x->comm, b, s->n, 7, 0);
		if (!x->ret && t == INCNN_FLAT_CALLS - 2) {
			incnn_comm_bucket_stats(x->comm, &s->st[x->rank]);
			if (s->st[x->rank].flattened)
				x->ret = -EBADE;	/* counted too early */
		}
	}
	free(b);
	if (!x->ret)
		x->ret = incnn_comm_bucket_info(x->comm, 7, &s->info[x->rank]);
	incnn_comm_bucket_stats(x->comm, &s->st[x->rank]);
}

TEST(flattened_bucket_counted)
{
	for (int scale = 0; scale <= 1; scale++) {
		struct bk_sweep s = { .n = 1000, .scale = 1e-3 };
		struct rank_ctx x[MAX_RANKS];
		struct job j;

		ebq_job(&j, 2, 4, scale, 0);
		j.fn = flat_fn;
		j.arg = &s;
		ASSERT_EQ(0, job_run(&j, x));
		for (int r = 0; r < 2; r++) {
			ASSERT_EQ(0, x[r].ret) TH_LOG("%s", x[r].err);
			EXPECT_EQ(scale ? 0 : 1, s.st[r].flattened);
			EXPECT_EQ(scale ? 0 : 1, s.info[r].flat);
			EXPECT_EQ(scale ? 0 : INCNN_FLAT_CALLS,
				  s.info[r].flat_streak);
			if (!scale)
				EXPECT_EQ(s.info[r].nonzero,
					  s.info[r].flattened);
		}
	}
}

static void bad_fn(struct rank_ctx *x)
{
	float b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct incnn_bucket_info info;

	if (incnn_comm_bucket_info(x->comm, 5, &info) != -ENOENT ||
	    incnn_comm_bucket_forget(x->comm, 5) != -ENOENT ||
	    incnn_comm_bucket_info(x->comm, 5, NULL) != -EINVAL) {
		x->ret = -EBADE;
		return;
	}
	if (x->rank == 0) {	/* segments that do not sum to n: refused */
		const size_t seg[2] = { 5, 4 };

		x->ret = incnn_allreduce_bucket_seg(x->comm, b, 8, 5, 0, seg, 2);
		return;
	}
	x->ret = incnn_allreduce_bucket(x->comm, b, 8, 5, 1.0f);
}

/* a segment list with a pointer and no segments: refused */
static void bad_seg0_fn(struct rank_ctx *x)
{
	const size_t seg[1] = { 8 };
	float b[8] = { 0 };

	x->ret = incnn_allreduce_bucket_seg(x->comm, b, 8, 5, 0, seg, 0);
}

/* more than INCNN_BUCKET_SEG_MAX segments: refused */
static void bad_segmax_fn(struct rank_ctx *x)
{
	size_t *seg = calloc(INCNN_BUCKET_SEG_MAX + 1, sizeof(*seg));
	float b[8] = { 0 };

	seg[0] = 8;
	x->ret = incnn_allreduce_bucket_seg(x->comm, b, 8, 5, 0, seg,
					    INCNN_BUCKET_SEG_MAX + 1);
	free(seg);
}

static void bad_div_fn(struct rank_ctx *x)
{
	float b[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	x->ret = incnn_allreduce_bucket(x->comm, b, 8, 5,
					x->rank ? 1.0f : INFINITY);
}

/* segments that do not add up, an infinite divisor: EINVAL, the job
 * fails; NULL is EINVAL */
/* A job of @N ranks running @fn where rank 0 fails with -EINVAL saying
 * @why (and the others fail) */
static void bad_job(struct __test_metadata *_metadata,
		    void (*fn)(struct rank_ctx *), const char *why, int N)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;

	ebq_job(&j, N, 8, -1, -1);
	j.cfg.timeout_ms = 5000;
	j.fn = fn;
	ASSERT_EQ(0, job_run(&j, x));
	EXPECT_EQ(-EINVAL, x[0].ret) TH_LOG("%s", x[0].err);
	for (int r = 1; r < N; r++) {
		EXPECT_NE(0, x[r].ret);
	}
	EXPECT_NE(NULL, strstr(x[0].err, why)) TH_LOG("rank 0: %s", x[0].err);
}

TEST(bad_arguments)
{
	EXPECT_EQ(-EINVAL, incnn_allreduce_bucket(NULL, NULL, 0, 0, 0));
	EXPECT_EQ(-EINVAL, incnn_comm_bucket_exps(NULL, 0, NULL, 0));
	bad_job(_metadata, bad_fn, "invalid segments", 2);
	/* the divisor: one rank's infinite one */
	bad_job(_metadata, bad_div_fn, "invalid divisor", 2);
	bad_job(_metadata, bad_seg0_fn, "invalid segments", 1);
	bad_job(_metadata, bad_segmax_fn, "invalid segments", 1);
}

/* INCNN_SCALE and INCNN_ERROR_FEEDBACK: spelling, and a clear refusal */
TEST(env_settings)
{
	struct incnn_comm_config cfg;
	struct incnn_comm *comm = NULL;
	char err[256];

	incnn_comm_config_init(&cfg);
	EXPECT_EQ(-1, cfg.scale);
	EXPECT_EQ(-1, cfg.error_feedback);
	cfg.master_addr = "127.0.0.1";
	cfg.master_port = 1;
	cfg.rank = 0;
	cfg.world_size = 1;
	setenv("INCNN_SCALE", "sometimes", 1);
	EXPECT_EQ(-EINVAL, incnn_comm_create(&comm, &cfg, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "INCNN_SCALE=sometimes: want auto or off"))
		TH_LOG("%s", err);
	unsetenv("INCNN_SCALE");
	setenv("INCNN_ERROR_FEEDBACK", "maybe", 1);
	EXPECT_EQ(-EINVAL, incnn_comm_create(&comm, &cfg, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "INCNN_ERROR_FEEDBACK=maybe: want on or off"))
		TH_LOG("%s", err);
	unsetenv("INCNN_ERROR_FEEDBACK");
	cfg.scale = 2;
	EXPECT_EQ(-EINVAL, incnn_comm_create(&comm, &cfg, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "scale 2 is out of range"))
		TH_LOG("%s", err);
	EXPECT_EQ(NULL, comm);
}

TEST_HARNESS_MAIN
