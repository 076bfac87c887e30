// SPDX-License-Identifier: GPL-2.0
/*
 * Gradient buckets (userspace/collective/{plan,models,layers}.c): the
 * planner on hand-computed cases and against exhaustive search, the
 * timeline simulator's exact times, the model tables' exact parameter
 * counts, and incnn_allreduce_layers() over 127.0.0.1 with 4 ranks for
 * every schedule (bit-identical replicas, each bucket equal to a plain
 * allreduce of the packed bucket, codec emulation, ready times, plan
 * mismatch -> error on every rank).
 */
#include <sanitizer/lsan_interface.h>

#include "kselftest_harness.h"

#include "coll_test.h"
#include <incnn/wfbp.h>

/* exact equality of doubles, with both values in the log */
#define ASSERT_DEQ(want, got) do { \
	double __w = (want), __g = (got); \
	ASSERT_TRUE(__w == __g) TH_LOG("%s: want %.17g, got %.17g", #got, __w, __g); \
} while (0)

static int plan(const struct incnn_plan_layer *ly, size_t L,
		enum incnn_sched s, double a, double b, uint64_t bb,
		struct incnn_bucket *out, size_t *nb)
{
	return incnn_plan(ly, L, s, a, b, bb, out, nb);
}

/* "0-1,2,3-4": the buckets as first-last ranges */
static void bucket_str(const struct incnn_bucket *bk, size_t nb, char *buf,
		       size_t len)
{
	size_t k, o = 0;

	buf[0] = '\0';
	for (k = 0; k < nb && o < len; k++) {
		size_t f = bk[k].first, e = f + bk[k].nlayers - 1;

		if (f == e)
			o += snprintf(buf + o, len - o, "%s%zu", k ? "," : "", f);
		else
			o += snprintf(buf + o, len - o, "%s%zu-%zu", k ? "," : "",
				      f, e);
	}
}

/* --- planner --------------------------------------------------------------- */

/*
 * Hand case, a = 1 s, b = 0.25 s/B (1 s per float), 4 layers of 2 floats
 * ready at 0, 0.5, 3, 3 (backward order):
 *
 *	buckets		communication (start-end per bucket)	end
 *	0,1,2,3		0-3, 3-6, 6-9, 9-12			12
 *	0-1,2-3		0.5-5.5, 5.5-10.5			10.5
 *	0,1-3		0-3, 3-10				10  <- optimum
 *	0-2,3		3-10, 10-13				13
 *	0-3		3-12					12
 *	0,1,2-3		0-3, 3-6, 6-11				11
 *	0,1-2,3		0-3, 3-8, 8-11				11
 *	0-1,2,3		0.5-5.5, 5.5-8.5, 8.5-11.5		11.5
 *
 * The one-pass pairwise rule (merge the next layer when it is ready before
 * the open bucket's start + a) merges 1 into 0 (0.5 < 0 + 1) and ends at
 * 10.5; the exact optimum keeps 0 alone so that 1-3 go together at 3.
 */
TEST(plan_hand_mgwfbp)
{
	const struct incnn_plan_layer ly[] = {
		{ 2, 0 }, { 2, 0.5 }, { 2, 3 }, { 2, 3 },
	};
	struct incnn_bucket bk[4];
	struct incnn_sim sim;
	double start[4], end[4];
	char s[64];
	size_t nb;

	/* the paper's one-pass rule */
	ASSERT_EQ(0, incnn_plan_mg_pairwise(ly, 4, 1, 0.25, bk, &nb));
	bucket_str(bk, nb, s, sizeof(s));
	ASSERT_STREQ("0-1,2-3", s);
	ASSERT_EQ(0, incnn_simulate(ly, 4, bk, nb, 0, 3, 1, 0.25, &sim, start,
				    end));
	ASSERT_DEQ(0.5, start[0]);
	ASSERT_DEQ(5.5, end[0]);
	ASSERT_DEQ(10.5, sim.iter);

	ASSERT_EQ(0, plan(ly, 4, INCNN_SCHED_MGWFBP, 1, 0.25, 0, bk, &nb));
	bucket_str(bk, nb, s, sizeof(s));
	ASSERT_STREQ("0,1-3", s);
	ASSERT_EQ(6ull, bk[1].count);
	ASSERT_EQ(0, incnn_simulate(ly, 4, bk, nb, 0, 3, 1, 0.25, &sim, start,
				    end));
	ASSERT_DEQ(0, start[0]);
	ASSERT_DEQ(3, end[0]);
	ASSERT_DEQ(3, start[1]);
	ASSERT_DEQ(10, end[1]);
	ASSERT_DEQ(10, sim.iter);
	ASSERT_DEQ(10, sim.comm);
	ASSERT_DEQ(7, sim.exposed);
	ASSERT_DEQ(3, sim.compute);
	ASSERT_EQ(2ull, sim.nbuckets);
}

/*
 * 3 layers, a = 1, b = 0.25 (1 s per float): counts 1, 1, 4 ready at 0,
 * 0.5, 3. WFBP: 0-2, 2-4, 4-9 -> 9. 0-1,2: 0.5-3.5, 3.5-8.5 -> 8.5 (the
 * optimum: 0,1-2 gives 0-2, 3-9 and 0-2 gives 3-10). With a forward pass
 * of 2 s: WFBP iteration 11, comm 9, exposed 6.
 */
TEST(plan_hand_three_layers)
{
	const struct incnn_plan_layer ly[] = { { 1, 0 }, { 1, 0.5 }, { 4, 3 } };
	struct incnn_bucket bk[3];
	struct incnn_sim sim;
	double end[3];
	char s[64];
	size_t nb;

	ASSERT_EQ(0, plan(ly, 3, INCNN_SCHED_MGWFBP, 1, 0.25, 0, bk, &nb));
	bucket_str(bk, nb, s, sizeof(s));
	ASSERT_STREQ("0-1,2", s);
	/* here the pairwise rule finds it too: 0.5 < 0 + a */
	ASSERT_EQ(0, incnn_plan_mg_pairwise(ly, 3, 1, 0.25, bk, &nb));
	bucket_str(bk, nb, s, sizeof(s));
	ASSERT_STREQ("0-1,2", s);
	ASSERT_EQ(0, plan(ly, 3, INCNN_SCHED_MGWFBP, 1, 0.25, 0, bk, &nb));
	ASSERT_EQ(0, incnn_simulate(ly, 3, bk, nb, 2, 3, 1, 0.25, &sim, NULL,
				    end));
	ASSERT_DEQ(3.5, end[0]);
	ASSERT_DEQ(10.5, sim.iter);

	ASSERT_EQ(0, plan(ly, 3, INCNN_SCHED_WFBP, 0, 0, 0, bk, &nb));
	bucket_str(bk, nb, s, sizeof(s));
	ASSERT_STREQ("0,1,2", s);
	ASSERT_EQ(0, incnn_simulate(ly, 3, bk, nb, 2, 3, 1, 0.25, &sim, NULL,
				    end));
	ASSERT_DEQ(2, end[0]);
	ASSERT_DEQ(4, end[1]);
	ASSERT_DEQ(9, end[2]);
	ASSERT_DEQ(11, sim.iter);
	ASSERT_DEQ(9, sim.comm);
	ASSERT_DEQ(6, sim.exposed);
	ASSERT_DEQ(5, sim.compute);

	ASSERT_EQ(0, plan(ly, 3, INCNN_SCHED_SINGLE, 0, 0, 0, bk, &nb));
	ASSERT_EQ(1ull, nb);
	ASSERT_EQ(6ull, bk[0].count);
	ASSERT_EQ(0, incnn_simulate(ly, 3, bk, nb, 2, 3, 1, 0.25, &sim, NULL,
				    end));
	ASSERT_DEQ(3 + 1 + 6, end[0]);
	ASSERT_DEQ(12, sim.iter);
}

/* a = 0: merging never gains, WFBP; a huge: one bucket */
TEST(plan_limits)
{
	struct incnn_plan_layer ly[200];
	struct incnn_bucket bk[200];
	size_t nb, i, m;

	for (m = 0; incnn_model_name(m); m++) {
		struct incnn_model *md;

		ASSERT_EQ(0, incnn_model_build(incnn_model_name(m), &md));
		ASSERT_GE(200ull, md->nlayers);
		incnn_model_timeline(md, 0.1, ly);
		ASSERT_EQ(0, plan(ly, md->nlayers, INCNN_SCHED_MGWFBP, 0, 1e-9,
				  0, bk, &nb));
		ASSERT_EQ(md->nlayers, nb) TH_LOG("%s", md->name);
		for (i = 0; i < nb; i++)
			ASSERT_EQ(1ull, bk[i].nlayers);
		/* also when the link is so slow that comm is always behind */
		ASSERT_EQ(0, plan(ly, md->nlayers, INCNN_SCHED_MGWFBP, 0, 1e-3,
				  0, bk, &nb));
		ASSERT_EQ(md->nlayers, nb) TH_LOG("%s", md->name);
		ASSERT_EQ(0, plan(ly, md->nlayers, INCNN_SCHED_MGWFBP, 1e6,
				  1e-9, 0, bk, &nb));
		ASSERT_EQ(1ull, nb) TH_LOG("%s", md->name);
		ASSERT_EQ(md->params, bk[0].count);
		incnn_model_free(md);
	}
}

/* DDP rule: append, close once the bucket holds >= bucket_bytes */
TEST(plan_fixed_boundaries)
{
	const struct incnn_plan_layer ly[] = {
		{ 10, 0 }, { 20, 0 }, { 30, 0 }, { 5, 0 }, { 100, 0 }, { 1, 0 },
	};
	struct incnn_bucket bk[6];
	char s[64];
	size_t nb;

	/* 120 B = 30 floats: 10+20 reaches it, 30 alone, 5+100, 1 */
	ASSERT_EQ(0, plan(ly, 6, INCNN_SCHED_FIXED, 0, 0, 120, bk, &nb));
	bucket_str(bk, nb, s, sizeof(s));
	ASSERT_STREQ("0-1,2,3-4,5", s);
	ASSERT_EQ(30ull, bk[0].count);
	ASSERT_EQ(105ull, bk[2].count);
	/* one byte more: 10+20 = 120 B is not enough, 10+20+30 is */
	ASSERT_EQ(0, plan(ly, 6, INCNN_SCHED_FIXED, 0, 0, 121, bk, &nb));
	bucket_str(bk, nb, s, sizeof(s));
	ASSERT_STREQ("0-2,3-4,5", s);
	/* tiny buckets: one layer each; huge: one */
	ASSERT_EQ(0, plan(ly, 6, INCNN_SCHED_FIXED, 0, 0, 1, bk, &nb));
	ASSERT_EQ(6ull, nb);
	ASSERT_EQ(0, plan(ly, 6, INCNN_SCHED_FIXED, 0, 0, 1 << 30, bk, &nb));
	ASSERT_EQ(1ull, nb);
	ASSERT_EQ(166ull, bk[0].count);
	/* the default 25 MiB on ResNet-50's fc (8,196,000 B) + layer4 */
	ASSERT_EQ(26214400ull, INCNN_WFBP_DEFAULT_BUCKET_BYTES);
}

TEST(plan_bad_input)
{
	struct incnn_plan_layer ly[2] = { { 1, 1 }, { 1, 0.5 } };
	struct incnn_bucket bk[2];
	size_t nb = 7;

	/* ready times must not decrease */
	ASSERT_EQ(-EINVAL, plan(ly, 2, INCNN_SCHED_WFBP, 0, 0, 0, bk, &nb));
	ly[1].ready = 2;
	ASSERT_EQ(-EINVAL, plan(ly, 2, INCNN_SCHED_MGWFBP, -1, 0, 0, bk, &nb));
	ASSERT_EQ(-EINVAL, plan(ly, 2, INCNN_SCHED_MGWFBP, 0, NAN, 0, bk, &nb));
	ASSERT_EQ(-EINVAL, plan(ly, 2, INCNN_SCHED_FIXED, 0, 0, 0, bk, &nb));
	ASSERT_EQ(-EINVAL, plan(ly, 2, INCNN_SCHED_COUNT, 0, 0, 0, bk, &nb));
	ASSERT_EQ(0, plan(ly, 0, INCNN_SCHED_MGWFBP, 1, 1, 0, bk, &nb));
	ASSERT_EQ(0ull, nb);
	ASSERT_EQ(INCNN_SCHED_MGWFBP, incnn_sched_parse("mgwfbp"));
	ASSERT_EQ(-1, incnn_sched_parse("MGWFBP"));
	ASSERT_STREQ("fixed", incnn_sched_name(INCNN_SCHED_FIXED));
}

static int rnd(uint64_t *x, int n)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return (int)((*x >> 33) % (uint64_t)n);
}

/* exhaustive search over all 2^(L-1) bucketings of small random cases */
TEST(plan_mgwfbp_optimal)
{
	uint64_t x = 12345;
	int t, better = 0, pairwise_worse = 0;

	for (t = 0; t < 3000; t++) {
		struct incnn_plan_layer ly[9];
		struct incnn_bucket bk[9], q[9];
		struct incnn_sim sim, s2;
		double r = 0, a, b, best = INFINITY;
		size_t L, nb, i, k;
		unsigned int m;

		L = 1 + rnd(&x, 9);
		for (i = 0; i < L; i++) {
			r += 0.1 * rnd(&x, 5) * rnd(&x, 3);
			ly[i].ready = r;
			ly[i].count = rnd(&x, 100);
		}
		a = 0.05 * rnd(&x, 10);
		b = 0.0005 * rnd(&x, 10);
		ASSERT_EQ(0, plan(ly, L, INCNN_SCHED_MGWFBP, a, b, 0, bk, &nb));
		ASSERT_EQ(0, incnn_simulate(ly, L, bk, nb, 0, ly[L - 1].ready,
					    a, b, &sim, NULL, NULL));
		for (m = 0; m < 1u << (L - 1); m++) {
			k = 0;
			q[0] = (struct incnn_bucket){ 0, 1, ly[0].count };
			for (i = 1; i < L; i++) {
				if (m >> (i - 1) & 1) {
					q[k].nlayers++;
					q[k].count += ly[i].count;
				} else {
					q[++k] = (struct incnn_bucket){
						i, 1, ly[i].count };
				}
			}
			ASSERT_EQ(0, incnn_simulate(ly, L, q, k + 1, 0,
						    ly[L - 1].ready, a, b, &s2,
						    NULL, NULL));
			if (s2.iter < best)
				best = s2.iter;
		}
		ASSERT_TRUE(sim.iter <= best + 1e-9)
			TH_LOG("case %d: L=%zu a=%g b=%g: %.9g > optimum %.9g",
			       t, L, a, b, sim.iter, best);
		better += best < sim.iter - 1e-9;
		/* the paper's one pass: between the optimum and WFBP */
		ASSERT_EQ(0, incnn_plan_mg_pairwise(ly, L, a, b, q, &nb));
		ASSERT_EQ(0, incnn_simulate(ly, L, q, nb, 0, ly[L - 1].ready,
					    a, b, &s2, NULL, NULL));
		ASSERT_TRUE(s2.iter >= best - 1e-9);
		pairwise_worse += s2.iter > best + 1e-9;
		ASSERT_EQ(0, plan(ly, L, INCNN_SCHED_WFBP, a, b, 0, q, &nb));
		ASSERT_EQ(0, incnn_simulate(ly, L, q, nb, 0, ly[L - 1].ready,
					    a, b, &sim, NULL, NULL));
		ASSERT_TRUE(s2.iter <= sim.iter + 1e-9);
	}
	ASSERT_EQ(0, better);
	/* it does happen, in about one case in ten here */
	ASSERT_LT(0, pairwise_worse);
	TH_LOG("pairwise rule above the optimum in %d of 3000 cases",
	       pairwise_worse);
}

/* --- simulator --------------------------------------------------------------- */

TEST(sim_bad_input)
{
	const struct incnn_plan_layer ly[] = { { 1, 0 }, { 1, 1 } };
	struct incnn_bucket bk[2] = { { 0, 1, 1 }, { 1, 1, 1 } };
	struct incnn_sim sim;

	ASSERT_EQ(0, incnn_simulate(ly, 2, bk, 2, 0, 1, 0, 0, &sim, NULL, NULL));
	ASSERT_DEQ(1, sim.iter);
	/* backward ends before the last layer is ready */
	ASSERT_EQ(-EINVAL, incnn_simulate(ly, 2, bk, 2, 0, 0.5, 0, 0, &sim,
					  NULL, NULL));
	/* buckets that skip or overlap layers, wrong counts */
	ASSERT_EQ(-EINVAL, incnn_simulate(ly, 2, bk, 1, 0, 1, 0, 0, &sim,
					  NULL, NULL));
	bk[1].first = 0;
	ASSERT_EQ(-EINVAL, incnn_simulate(ly, 2, bk, 2, 0, 1, 0, 0, &sim,
					  NULL, NULL));
	bk[1] = (struct incnn_bucket){ 1, 1, 2 };
	ASSERT_EQ(-EINVAL, incnn_simulate(ly, 2, bk, 2, 0, 1, 0, 0, &sim,
					  NULL, NULL));
}

/* ring cost: a = 2(N-1) latency, b = 2(N-1)/N / bandwidth */
TEST(sim_ring_cost)
{
	double a, b;

	incnn_ring_cost(4, 1.25e9, 50e-6, &a, &b);
	ASSERT_DEQ(6 * 50e-6, a);
	ASSERT_DEQ(6.0 / 4 / 1.25e9, b);
	incnn_ring_cost(1, 1.25e9, 50e-6, &a, &b);
	ASSERT_DEQ(0, a);
	ASSERT_DEQ(0, b);
}

/* MG-WFBP is never worse than the other schedules, on every model */
TEST(sim_mgwfbp_never_worse)
{
	static const double cost[][2] = {	/* a (s), b (s/B) */
		{ 0, 1.2e-9 }, { 300e-6, 1.2e-9 }, { 3e-3, 1.2e-9 },
		{ 300e-6, 1.2e-8 }, { 300e-6, 1.2e-10 }, { 1e-3, 1.2e-9 / 4 },
		{ 50e-3, 1e-12 },
	};
	static const double bwd[] = { 0.01, 0.1, 1 };
	size_t m, c, w, s;

	for (m = 0; incnn_model_name(m); m++) {
		struct incnn_model *md;
		struct incnn_plan_layer *ly;
		struct incnn_bucket *bk;

		ASSERT_EQ(0, incnn_model_build(incnn_model_name(m), &md));
		ly = calloc(md->nlayers, sizeof(*ly));
		bk = calloc(md->nlayers, sizeof(*bk));
		ASSERT_TRUE(ly && bk);
		for (w = 0; w < ARRAY_SIZE(bwd); w++) {
			incnn_model_timeline(md, bwd[w], ly);
			for (c = 0; c < ARRAY_SIZE(cost); c++) {
				double it[INCNN_SCHED_COUNT];

				for (s = 0; s < INCNN_SCHED_COUNT; s++) {
					struct incnn_sim sim;
					size_t nb;

					ASSERT_EQ(0, plan(ly, md->nlayers, s,
							  cost[c][0], cost[c][1],
							  INCNN_WFBP_DEFAULT_BUCKET_BYTES,
							  bk, &nb));
					ASSERT_EQ(0, incnn_simulate(ly, md->nlayers,
								    bk, nb, 0.01,
								    bwd[w],
								    cost[c][0],
								    cost[c][1],
								    &sim, NULL,
								    NULL));
					it[s] = sim.iter;
					ASSERT_TRUE(sim.iter >= sim.compute);
				}
				for (s = 0; s < INCNN_SCHED_COUNT; s++)
					ASSERT_TRUE(it[INCNN_SCHED_MGWFBP] <=
						    it[s] * (1 + 1e-12))
						TH_LOG("%s a=%g b=%g: mgwfbp %g > %s %g",
						       md->name, cost[c][0],
						       cost[c][1],
						       it[INCNN_SCHED_MGWFBP],
						       incnn_sched_name(s), it[s]);
			}
		}
		free(ly);
		free(bk);
		incnn_model_free(md);
	}
}

/* --- models ------------------------------------------------------------------ */

static const struct incnn_model_layer *find_layer(const struct incnn_model *m,
						  const char *name)
{
	size_t i;

	for (i = 0; i < m->nlayers; i++)
		if (!strcmp(m->layer[i].name, name))
			return &m->layer[i];
	return NULL;
}

TEST(models_totals)
{
	static const struct {
		const char *name;
		size_t layers;
		uint64_t params;
	} want[] = {
		/* torchvision's counts */
		{ "alexnet", 8, 61100840 },		/* 5 conv, 3 fc */
		{ "vgg16", 16, 138357544 },		/* 13 conv, 3 fc */
		{ "resnet50", 107, 25557032 },		/* 53 conv, 53 bn, fc */
		{ "googlenet", 115, 6624904 },		/* 57 conv, 57 bn, fc */
	};
	struct incnn_model *m;
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		uint64_t sum = 0;

		ASSERT_STREQ(want[i].name, incnn_model_name(i));
		ASSERT_EQ(0, incnn_model_build(want[i].name, &m));
		EXPECT_EQ(want[i].layers, m->nlayers) TH_LOG("%s", m->name);
		EXPECT_EQ(want[i].params, m->params) TH_LOG("%s", m->name);
		for (j = 0; j < m->nlayers; j++) {
			sum += m->layer[j].params;
			ASSERT_LT(0ull, m->layer[j].params);
			ASSERT_LT(0, m->layer[j].flops);
		}
		ASSERT_EQ(m->params, sum);
		incnn_model_free(m);
	}
	ASSERT_EQ(NULL, incnn_model_name(4));
	ASSERT_EQ(-ENOENT, incnn_model_build("lenet", &m));
	ASSERT_EQ(NULL, m);
}

TEST(models_layers)
{
	const struct incnn_model_layer *l;
	struct incnn_plan_layer ly[16];
	struct incnn_model *m;

	ASSERT_EQ(0, incnn_model_build("alexnet", &m));
	l = find_layer(m, "features.0");	/* 11x11x3x64 + 64, 55x55 out */
	ASSERT_NE(NULL, l);
	ASSERT_EQ(23296ull, l->params);
	ASSERT_DEQ(2.0 * 11 * 11 * 3 * 64 * 55 * 55, l->flops);
	l = find_layer(m, "classifier.1");	/* 256*6*6 -> 4096 */
	ASSERT_NE(NULL, l);
	ASSERT_EQ(9216ull * 4096 + 4096, l->params);
	/* the backward order and ready times: the last fc first */
	incnn_model_timeline(m, 2.0, ly);
	ASSERT_EQ(4097000ull, ly[0].count);
	ASSERT_DEQ(2.0 * m->layer[7].flops / m->flops, ly[0].ready);
	ASSERT_EQ(23296ull, ly[7].count);
	ASSERT_DEQ(2.0, ly[7].ready);
	incnn_model_free(m);

	ASSERT_EQ(0, incnn_model_build("vgg16", &m));
	ASSERT_EQ(1792ull, m->layer[0].params);
	ASSERT_STREQ("features.28", m->layer[12].name);
	ASSERT_EQ(25088ull * 4096 + 4096, find_layer(m, "classifier.0")->params);
	incnn_model_free(m);

	ASSERT_EQ(0, incnn_model_build("resnet50", &m));
	ASSERT_EQ(2049000ull, find_layer(m, "fc")->params);
	ASSERT_EQ(64ull * 3 * 49, find_layer(m, "conv1")->params);
	ASSERT_EQ(1024ull * 2048, find_layer(m, "layer4.0.downsample.0")->params);
	ASSERT_EQ(4096ull, find_layer(m, "layer4.2.bn3")->params);
	/* layer4's 3x3 conv at 7x7 */
	ASSERT_DEQ(2.0 * 9 * 512 * 512 * 7 * 7,
		   find_layer(m, "layer4.1.conv2")->flops);
	incnn_model_free(m);

	ASSERT_EQ(0, incnn_model_build("googlenet", &m));
	ASSERT_EQ(1025000ull, find_layer(m, "fc")->params);
	/* inception5b branch3: 832 -> 48 (1x1), 48 -> 128 (3x3) */
	ASSERT_EQ(48ull * 128 * 9, find_layer(m, "inception5b.branch3.1.conv")->params);
	ASSERT_DEQ(2.0 * 9 * 48 * 128 * 7 * 7,
		   find_layer(m, "inception5b.branch3.1.conv")->flops);
	incnn_model_free(m);
}

/* --- the layers API over loopback ------------------------------------------- */

#define LMAX	16

struct lt {
	enum incnn_sched sched;
	size_t L;
	size_t count[LMAX];
	double ready[LMAX];
	struct incnn_layers_opts opts;
	int odd_rank;			/* uses odd_bucket_bytes, -1: none */
	uint64_t odd_bucket_bytes;	/* when not 0 */
	double odd_alpha;		/* when >= 0 */
	bool check_buckets;
	uint64_t seed;
	/* results per rank */
	float *out[MAX_RANKS];
	struct incnn_bucket_stat st[MAX_RANKS][LMAX];
	size_t nb[MAX_RANKS];
	int bucket_diff[MAX_RANKS];	/* buckets unlike a plain allreduce */
	double alpha[MAX_RANKS], beta[MAX_RANKS];
	double took[MAX_RANKS];
};

static size_t lt_total(const struct lt *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->L; i++)
		n += t->count[i];
	return n;
}

/* layer i's input on rank r, at @x */
static void lt_input(const struct lt *t, int r, float *x)
{
	size_t i, off = 0;

	for (i = 0; i < t->L; i++) {
		gen_input(x + off, t->count[i], t->seed + i, r, 0.01);
		off += t->count[i];
	}
}

static void lt_fn(struct rank_ctx *x)
{
	struct lt *t = x->user;
	struct incnn_layers_opts o = t->opts;
	struct incnn_layers_stats st = { .bucket = t->st[x->rank],
					 .cap = LMAX };
	struct incnn_layer ly[LMAX];
	size_t n = lt_total(t), i, k, off = 0;
	float *buf = malloc(4 * n + 4), *in = malloc(4 * n + 4);

	lt_input(t, x->rank, buf);
	memcpy(in, buf, 4 * n);
	for (i = 0; i < t->L; i++) {
		ly[i] = (struct incnn_layer){ .grad = buf + off,
					      .count = t->count[i],
					      .ready = t->ready[i] };
		off += t->count[i];
	}
	if (x->rank == t->odd_rank && t->odd_bucket_bytes)
		o.bucket_bytes = t->odd_bucket_bytes;
	if (x->rank == t->odd_rank && t->odd_alpha >= 0)
		o.alpha = t->odd_alpha;
	x->t0 = now_s();
	x->ret = incnn_allreduce_layers(x->comm, ly, t->L, t->sched, &o, &st);
	x->t1 = now_s();
	t->took[x->rank] = x->t1 - x->t0;
	t->nb[x->rank] = st.nbuckets;
	t->alpha[x->rank] = st.alpha;
	t->beta[x->rank] = st.beta;
	if (x->ret) {
		free(buf);
		free(in);
		return;
	}
	/* each bucket again, packed by hand, through a plain allreduce */
	for (k = 0; t->check_buckets && k < st.nbuckets; k++) {
		const struct incnn_bucket_stat *b = &st.bucket[k];
		size_t first_off = 0;
		float *p = malloc(4 * b->count + 4);

		for (i = 0; i < b->first; i++)
			first_off += t->count[i];
		memcpy(p, in + first_off, 4 * b->count);
		x->ret = o.ps ? incnn_allreduce_ps(x->comm, p, b->count) :
			 incnn_allreduce(x->comm, p, b->count);
		if (!x->ret && memcmp(p, buf + first_off, 4 * b->count))
			t->bucket_diff[x->rank]++;
		free(p);
		if (x->ret)
			break;
	}
	t->out[x->rank] = buf;
	free(in);
}

static void lt_init(struct lt *t, enum incnn_sched s)
{
	/* odd sizes, an empty layer, one float, ready over ~30 ms */
	static const size_t count[] = { 1000, 3, 50021, 0, 1, 7777, 12000,
					64, 30011, 5, 999, 100003 };
	size_t i;

	memset(t, 0, sizeof(*t));
	t->sched = s;
	t->L = ARRAY_SIZE(count);
	for (i = 0; i < t->L; i++) {
		t->count[i] = count[i];
		t->ready[i] = 0.0025 * (double)i;
	}
	/* out of order on purpose: a bucket waits for the latest */
	t->ready[4] = 0.02;
	incnn_layers_opts_init(&t->opts);
	t->opts.bucket_bytes = 128 * 1024;
	t->odd_rank = -1;
	t->odd_alpha = -1;
	t->seed = 77 + s;
	t->check_buckets = true;
}

static void lt_free(struct lt *t)
{
	int r;

	for (r = 0; r < MAX_RANKS; r++) {
		free(t->out[r]);
		t->out[r] = NULL;
	}
}

/*
 * Every rank succeeded with the plan incnn_plan() gives, its buckets
 * equal plain allreduces of them, all replicas are identical (and equal
 * to the ring simulation per bucket without a codec), no bucket started
 * before its layers were ready.
 */
static void lt_check(struct __test_metadata *_metadata, struct job *j,
		     struct rank_ctx *x, struct lt *t, unsigned int codec,
		     unsigned int param)
{
	struct incnn_plan_layer pl[LMAX];
	struct incnn_bucket bk[LMAX];
	size_t n = lt_total(t), nb, i, k;
	int r, N = j->N;

	for (r = 0; r < N; r++) {
		ASSERT_EQ(0, x[r].create_ret) TH_LOG("rank %d: %s", r, x[r].create_err);
		ASSERT_EQ(0, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
	}
	for (i = 0; i < t->L; i++) {
		pl[i].count = t->count[i];
		pl[i].ready = i && pl[i - 1].ready > t->ready[i] ?
			      pl[i - 1].ready : t->ready[i];
	}
	ASSERT_EQ(0, incnn_plan(pl, t->L, t->sched, t->alpha[0], t->beta[0],
				t->opts.bucket_bytes, bk, &nb));
	for (r = 0; r < N; r++) {
		ASSERT_EQ(nb, t->nb[r]);
		ASSERT_EQ(0, t->bucket_diff[r]) TH_LOG("rank %d", r);
		ASSERT_EQ(0, memcmp(t->out[0], t->out[r], 4 * n))
			TH_LOG("rank %d differs from rank 0", r);
		ASSERT_DEQ(t->alpha[0], t->alpha[r]);
		ASSERT_DEQ(t->beta[0], t->beta[r]);
		for (k = 0; k < nb; k++) {
			const struct incnn_bucket_stat *s = &t->st[r][k];
			double ready = 0;

			ASSERT_EQ(bk[k].first, s->first);
			ASSERT_EQ(bk[k].nlayers, s->nlayers);
			ASSERT_EQ(bk[k].count, s->count);
			for (i = s->first; i < s->first + s->nlayers; i++)
				if (t->ready[i] > ready)
					ready = t->ready[i];
			/* its layers', and earlier buckets' (in order) */
			ASSERT_DEQ(pl[s->first + s->nlayers - 1].ready, s->ready);
			ASSERT_LE(ready, s->ready);
			ASSERT_LE(ready, s->start) TH_LOG("rank %d bucket %zu", r, k);
			ASSERT_LE(s->start, s->end);
			if (k)
				ASSERT_LE(t->st[r][k - 1].end, s->start);
		}
	}
	/* without the ps leg: the ring's order, bucket by bucket */
	if (!t->opts.ps) {
		float *in[MAX_RANKS], *want = malloc(4 * n + 4), *o = want;

		for (r = 0; r < N; r++) {
			in[r] = malloc(4 * n + 4);
			lt_input(t, r, in[r]);
		}
		for (k = 0; k < nb; k++) {
			float *bin[MAX_RANKS];
			size_t off = o - want;

			for (r = 0; r < N; r++)
				bin[r] = in[r] + off;
			sim_ring(bin, N, bk[k].count, codec, param, o);
			o += bk[k].count;
		}
		EXPECT_EQ(0, memcmp(want, t->out[0], 4 * n));
		for (r = 0; r < N; r++)
			free(in[r]);
		free(want);
	}
}

static void run_sched(struct __test_metadata *_metadata, enum incnn_sched s,
		      bool ps, unsigned int codec, unsigned int param,
		      bool probe)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	struct lt t;

	lt_init(&t, s);
	t.opts.ps = ps;
	if (s == INCNN_SCHED_MGWFBP && !probe) {
		/* a = 1 ms: layers ready within 1 ms of a bucket merge */
		t.opts.have_cost = true;
		t.opts.alpha = 1e-3;
		t.opts.beta = 1e-9;
	}
	job_init(&j, 4);
	if (codec) {
		j.cfg.codec_mode = INCNN_COLL_CODEC_EMULATE;
		j.cfg.codec_id = codec;
		j.cfg.codec_param = param;
	}
	j.fn = lt_fn;
	j.arg = &t;
	ASSERT_EQ(0, job_run(&j, x));
	lt_check(_metadata, &j, x, &t, codec, param);
	if (s == INCNN_SCHED_MGWFBP && !probe) {
		ASSERT_DEQ(1e-3, t.alpha[0]);
		/* the hand-made plan: bucket boundaries where ready gaps > a */
		ASSERT_LT(1ull, t.nb[0]);
		ASSERT_GT(t.L, t.nb[0]);
	}
	if (s == INCNN_SCHED_WFBP)
		ASSERT_EQ(t.L, t.nb[0]);
	if (s == INCNN_SCHED_SINGLE)
		ASSERT_EQ(1ull, t.nb[0]);
	lt_free(&t);
}

TEST(layers_wfbp)
{
	run_sched(_metadata, INCNN_SCHED_WFBP, false, 0, 0, false);
}

TEST(layers_single)
{
	run_sched(_metadata, INCNN_SCHED_SINGLE, false, 0, 0, false);
}

TEST(layers_fixed)
{
	run_sched(_metadata, INCNN_SCHED_FIXED, false, 0, 0, false);
}

TEST(layers_mgwfbp)
{
	run_sched(_metadata, INCNN_SCHED_MGWFBP, false, 0, 0, false);
}

/* the cost model measured by the probe, rank 0's values everywhere */
TEST(layers_mgwfbp_probed)
{
	run_sched(_metadata, INCNN_SCHED_MGWFBP, false, 0, 0, true);
}

TEST(layers_codec_ebq)
{
	enum incnn_sched s;

	for (s = 0; s < INCNN_SCHED_COUNT; s++)
		run_sched(_metadata, s, false, INCNN_CODEC_EBQ, 8, false);
}

TEST(layers_codec_inceptionn_mgwfbp)
{
	run_sched(_metadata, INCNN_SCHED_MGWFBP, false, INCNN_CODEC_INCEPTIONN,
		  10, false);
}

TEST(layers_ps)
{
	run_sched(_metadata, INCNN_SCHED_FIXED, true, 0, 0, false);
	run_sched(_metadata, INCNN_SCHED_MGWFBP, true, INCNN_CODEC_EBQ, 6,
		  false);
}

/* one rank */
TEST(layers_one_rank)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	struct lt t;

	lt_init(&t, INCNN_SCHED_MGWFBP);
	job_init(&j, 1);
	j.fn = lt_fn;
	j.arg = &t;
	ASSERT_EQ(0, job_run(&j, x));
	lt_check(_metadata, &j, x, &t, 0, 0);
	lt_free(&t);
}

/* rank 2 plans fixed buckets of another size: every rank fails, fast */
TEST(layers_plan_mismatch)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	struct lt t;
	int r;

	lt_init(&t, INCNN_SCHED_FIXED);
	t.odd_rank = 2;
	t.odd_bucket_bytes = 64 * 1024;
	job_init(&j, 4);
	j.fn = lt_fn;
	j.arg = &t;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 4; r++) {
		ASSERT_EQ(0, x[r].create_ret);
		/* its own finding, or another rank's relayed first */
		ASSERT_TRUE(x[r].ret == -EPROTO || x[r].ret == -ECONNABORTED)
			TH_LOG("rank %d: %d %s", r, x[r].ret, x[r].err);
		ASSERT_NE(NULL, strstr(x[r].err, "different bucket plans"))
			TH_LOG("rank %d: %s", r, x[r].err);
		ASSERT_GT(2.0, t.took[r]);
		ASSERT_EQ(NULL, t.out[r]);
	}
	lt_free(&t);
}

/* rank 1 gives another explicit cost model: every rank fails */
TEST(layers_cost_mismatch)
{
	struct rank_ctx x[MAX_RANKS];
	struct lt t;
	struct job j;
	int r;

	lt_init(&t, INCNN_SCHED_MGWFBP);
	t.opts.have_cost = true;
	t.opts.alpha = 1e-3;
	t.opts.beta = 1e-9;
	t.odd_rank = 1;
	t.odd_alpha = 2e-3;
	job_init(&j, 3);
	j.fn = lt_fn;
	j.arg = &t;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 3; r++) {
		ASSERT_TRUE(x[r].ret == -EPROTO || x[r].ret == -ECONNABORTED)
			TH_LOG("rank %d: %d %s", r, x[r].ret, x[r].err);
		ASSERT_NE(NULL, strstr(x[r].err, "different bucket plans"));
	}
	lt_free(&t);
}

TEST(layers_bad_args)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	struct lt t;
	int r;

	lt_init(&t, INCNN_SCHED_WFBP);
	t.ready[3] = NAN;
	job_init(&j, 2);
	j.fn = lt_fn;
	j.arg = &t;
	ASSERT_EQ(0, job_run(&j, x));
	/* rank 0 and 1 both reject it locally */
	for (r = 0; r < 2; r++)
		ASSERT_EQ(-EINVAL, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
	lt_free(&t);
}

TEST(probe_cost)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	struct lt t;

	/* MG-WFBP without a cost: the probe runs, all ranks agree */
	lt_init(&t, INCNN_SCHED_MGWFBP);
	t.check_buckets = false;
	job_init(&j, 3);
	j.fn = lt_fn;
	j.arg = &t;
	ASSERT_EQ(0, job_run(&j, x));
	lt_check(_metadata, &j, x, &t, 0, 0);
	ASSERT_LE(0, t.alpha[0]);
	ASSERT_LE(0, t.beta[0]);
	ASSERT_GT(1.0, t.alpha[0]);
	ASSERT_TRUE(t.alpha[0] > 0 || t.beta[0] > 0);
	lt_free(&t);
}

TEST(clean)
{
	ASSERT_EQ(0, __lsan_do_recoverable_leak_check());
}

TEST_HARNESS_MAIN
