// SPDX-License-Identifier: GPL-2.0
/*
 * THC inside the communicator (userspace/collective/thc_comm.c): N ranks
 * as threads on 127.0.0.1 with method THC. The ring's result must equal,
 * bit for bit on every rank, N times the decode of the integer sum of the
 * ranks' table values computed here with the thc.h core alone (32-bit
 * lanes, one pass); its error against the exact sum must be THC's; the
 * data sockets must be unmarked whatever tos says; bad parameters fail in
 * one line.
 */
#include <netinet/in.h>

#include "kselftest_harness.h"

#include "coll_test.h"
#include "coll.h"	/* white-box: the sockets' marks */
#include <incnn/thc.h>
#include <incnn/wfbp.h>

static const size_t sizes[] = { 1, 100, 4096, 3 * 4096 + 7 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct tjob {
	bool ps;			/* incnn_allreduce_ps() */
	float *in[MAX_RANKS];		/* the largest size's inputs */
	float *out[MAX_RANKS][NSIZES];
	int ret[MAX_RANKS];
	uint64_t wire[MAX_RANKS];
};

static void thc_fn(struct rank_ctx *x)
{
	struct tjob *t = x->user;
	size_t k;

	for (k = 0; k < NSIZES; k++) {
		float *b = t->out[x->rank][k];

		memcpy(b, t->in[x->rank], 4 * sizes[k]);
		x->ret = t->ps ? incnn_allreduce_ps(x->comm, b, sizes[k]) :
			 incnn_allreduce(x->comm, b, sizes[k]);
		if (x->ret)
			return;
	}
	t->wire[x->rank] = incnn_comm_wire_bytes(x->comm);
}

/* N times decode(sum of T[idx_r]), nonce @nonce, from thc.h alone */
static void reference(struct incnn_thc *t, float *const *in, int N, size_t n,
		      uint64_t nonce, float *out)
{
	size_t P = incnn_thc_padded(t, n), K = incnn_thc_nblocks(t, n), i;
	float *work = calloc(P * (size_t)N, 4), *norms = calloc(K * N, 4);
	float *lmax = calloc(K, 4), *dec = calloc(P, 4);
	uint8_t *idx = calloc(incnn_thc_idx_bytes(t, n), 1);
	uint32_t *lanes = calloc(P, 4);
	int r;

	for (r = 0; r < N; r++)
		if (incnn_thc_prepare(t, in[r], NULL, n, nonce, work + P * r,
				      norms + K * r))
			abort();
	for (i = 0; i < K; i++)
		for (r = 0; r < N; r++)
			if (norms[K * r + i] > lmax[i])
				lmax[i] = norms[K * r + i];
	for (r = 0; r < N; r++)
		if (incnn_thc_encode(t, work + P * r, n, lmax, nonce,
				     (uint32_t)r, idx) ||
		    incnn_thc_add_idx(t, lanes, 32, r ? lanes : NULL,
				      r ? 32 : 0, (unsigned int)r, idx, P))
			abort();
	if (incnn_thc_decode(t, dec, n, lanes, 32, (unsigned int)N, lmax,
			     nonce))
		abort();
	for (i = 0; i < n; i++)
		out[i] = dec[i] * (float)N;
	free(work);
	free(norms);
	free(lmax);
	free(dec);
	free(idx);
	free(lanes);
}

/* normalised squared error against the exact sum */
static double nmse(float *const *in, int N, size_t n, const float *out)
{
	double e = 0, s2 = 0;
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		double s = 0;

		for (r = 0; r < N; r++)
			s += in[r][i];
		e += (out[i] - s) * (out[i] - s);
		s2 += s * s;
	}
	return s2 > 0 ? e / s2 : e;
}

static void run_thc(struct __test_metadata *_metadata, int N, bool ps)
{
	const size_t nmax = sizes[NSIZES - 1];
	struct rank_ctx x[MAX_RANKS];
	struct incnn_thc_params p;
	struct incnn_thc *t;
	struct tjob tj;
	struct job j;
	float *ref = calloc(nmax, 4);
	size_t k;
	int r;

	incnn_thc_params_default(&p);
	ASSERT_EQ(0, incnn_thc_create(&t, &p, NULL, 0));
	memset(&tj, 0, sizeof(tj));
	tj.ps = ps;
	for (r = 0; r < N; r++) {
		tj.in[r] = malloc(4 * nmax);
		gen_input(tj.in[r], nmax, 77, r, 1.0);
		for (k = 0; k < NSIZES; k++)
			tj.out[r][k] = malloc(4 * sizes[k]);
	}
	job_init(&j, N);
	j.cfg.method = INCNN_COLL_METHOD_THC;
	j.fn = thc_fn;
	j.arg = &tj;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < N; r++) {
		ASSERT_EQ(0, x[r].create_ret) TH_LOG("%s", x[r].create_err);
		ASSERT_EQ(0, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
		EXPECT_GT(tj.wire[r], 0);
	}
	for (k = 0; k < NSIZES; k++) {
		reference(t, tj.in, N, sizes[k], k + 1, ref);
		for (r = 0; r < N; r++)
			EXPECT_EQ(0, memcmp(ref, tj.out[r][k], 4 * sizes[k]))
				TH_LOG("%s N %d size %zu rank %d differs from the reference",
				       ps ? "ps" : "ring", N, sizes[k], r);
		if (sizes[k] >= 4096)
			EXPECT_LT(nmse(tj.in, N, sizes[k], tj.out[0][k]), 0.1)
				TH_LOG("N %d size %zu: nmse %g", N, sizes[k],
				       nmse(tj.in, N, sizes[k], tj.out[0][k]));
	}
	/* 4-bit indices, then 8-bit lanes (N <= 8): about 1/4 of fp32 */
	for (r = 0; r < N; r++) {
		uint64_t fp32 = 0;

		for (k = 0; k < NSIZES; k++)	/* fp32 ring, fp32 ps */
			fp32 += !ps ? 2 * 4 * (uint64_t)sizes[k] * (N - 1) / N :
				r ? 4 * sizes[k] : 4 * sizes[k] * (N - 1);
		EXPECT_LT(tj.wire[r] * 3, fp32) TH_LOG("rank %d wire %llu", r,
			(unsigned long long)tj.wire[r]);
	}
	for (r = 0; r < N; r++) {
		free(tj.in[r]);
		for (k = 0; k < NSIZES; k++)
			free(tj.out[r][k]);
	}
	free(ref);
	incnn_thc_destroy(t);
}

TEST(thc_ring_2_to_8)
{
	int N;

	for (N = 2; N <= 8; N++)
		run_thc(_metadata, N, false);
}

/* the paper's worker-aggregator: the same integer sums, the same result */
TEST(thc_ps_2_to_8)
{
	int N;

	for (N = 2; N <= 8; N++)
		run_thc(_metadata, N, true);
}

/*
 * The layers API on a THC communicator: every bucket goes through THC
 * (DDP-style buckets of 12000 bytes here: [1000 3000] [500 4096] [7]),
 * bucket k with nonce k + 1; each equals the reference of its packed
 * floats, bit for bit on every rank.
 */
static const size_t lcounts[] = { 1000, 3000, 500, 4096, 7 };
#define NLC	(sizeof(lcounts) / sizeof(lcounts[0]))
#define LTOTAL	(1000 + 3000 + 500 + 4096 + 7)

struct ljob {
	float *in[MAX_RANKS], *out[MAX_RANKS];
	size_t nbuckets[MAX_RANKS];
};

static void layers_fn(struct rank_ctx *x)
{
	struct ljob *t = x->user;
	struct incnn_layer ly[NLC];
	struct incnn_layers_opts o;
	struct incnn_layers_stats st = { 0 };
	size_t i, off = 0;

	memcpy(t->out[x->rank], t->in[x->rank], 4 * LTOTAL);
	for (i = 0; i < NLC; i++) {
		ly[i] = (struct incnn_layer){ .grad = t->out[x->rank] + off,
					      .count = lcounts[i] };
		off += lcounts[i];
	}
	incnn_layers_opts_init(&o);
	o.bucket_bytes = 12000;
	x->ret = incnn_allreduce_layers(x->comm, ly, NLC, INCNN_SCHED_FIXED,
					&o, &st);
	t->nbuckets[x->rank] = st.nbuckets;
}

TEST(thc_layers_buckets_2_to_8)
{
	static const size_t bfirst[] = { 0, 4000, 8596 }, blen[] = { 4000,
								     4596, 7 };
	struct rank_ctx x[MAX_RANKS];
	struct incnn_thc_params p;
	struct incnn_thc *t;
	float *ref = calloc(LTOTAL, 4), *in[MAX_RANKS];
	struct ljob lj;
	struct job j;
	size_t k;
	int r, N;

	incnn_thc_params_default(&p);
	ASSERT_EQ(0, incnn_thc_create(&t, &p, NULL, 0));
	for (N = 2; N <= 8; N++) {
		memset(&lj, 0, sizeof(lj));
		for (r = 0; r < N; r++) {
			lj.in[r] = malloc(4 * LTOTAL);
			lj.out[r] = malloc(4 * LTOTAL);
			gen_input(lj.in[r], LTOTAL, 31, r, 1.0);
		}
		job_init(&j, N);
		j.cfg.method = INCNN_COLL_METHOD_THC;
		j.fn = layers_fn;
		j.arg = &lj;
		ASSERT_EQ(0, job_run(&j, x));
		for (k = 0; k < 3; k++) {
			for (r = 0; r < N; r++)
				in[r] = lj.in[r] + bfirst[k];
			reference(t, in, N, blen[k], k + 1, ref + bfirst[k]);
		}
		for (r = 0; r < N; r++) {
			ASSERT_EQ(0, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
			EXPECT_EQ(3, lj.nbuckets[r]);
			EXPECT_EQ(0, memcmp(ref, lj.out[r], 4 * LTOTAL))
				TH_LOG("N %d rank %d differs from THC per bucket",
				       N, r);
			EXPECT_EQ(0, memcmp(lj.out[0], lj.out[r], 4 * LTOTAL));
		}
		for (r = 0; r < N; r++) {
			free(lj.in[r]);
			free(lj.out[r]);
		}
	}
	free(ref);
	incnn_thc_destroy(t);
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

	m[4 * x->rank] = tos_of(c->link.ring_send_fd);
	m[4 * x->rank + 1] = tos_of(c->link.ps_fd);
	m[4 * x->rank + 2] = (int)incnn_comm_method(c);
	m[4 * x->rank + 3] = incnn_allreduce_ps(c, v, 3);
	x->ret = incnn_allreduce(c, v, 3);
}

TEST(thc_unmarked)
{
	struct rank_ctx x[MAX_RANKS];
	int m[4 * 3], r;
	struct job j;

	memset(m, 0, sizeof(m));
	job_init(&j, 3);
	j.cfg.tos = 0x28;
	j.cfg.method = INCNN_COLL_METHOD_THC;
	j.fn = marks_fn;
	j.arg = m;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 3; r++) {
		ASSERT_EQ(0, x[r].create_ret) TH_LOG("%s", x[r].create_err);
		EXPECT_EQ(0, x[r].ret) TH_LOG("%s", x[r].err);
		EXPECT_EQ(0, m[4 * r]);
		if (r)
			EXPECT_EQ(0, m[4 * r + 1]);
		EXPECT_EQ(INCNN_COLL_METHOD_THC, m[4 * r + 2]);
		EXPECT_EQ(0, m[4 * r + 3]);
	}
}

static void marked_fn(struct rank_ctx *x)
{
	float v[3] = { 1, 2, 3 };

	x->ret = incnn_allreduce_thc(x->comm, v, 3);
}

/* THC payloads never go on marked sockets: the call fails the job */
TEST(thc_refuses_marked)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	int r;

	job_init(&j, 2);
	j.cfg.tos = 0x28;
	j.fn = marked_fn;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 2; r++) {
		ASSERT_EQ(0, x[r].create_ret) TH_LOG("%s", x[r].create_err);
		EXPECT_NE(0, x[r].ret);
		EXPECT_NE(NULL, strstr(x[r].err, "unmarked")) TH_LOG("%s",
								   x[r].err);
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

TEST(thc_bad_params)
{
	struct incnn_comm_config cfg;
	char err[256];

	incnn_comm_config_init(&cfg);
	cfg.master_addr = "127.0.0.1";
	cfg.master_port = 1;
	cfg.rank = 1;
	cfg.world_size = 2;
	cfg.init_timeout_ms = 300;	/* a bug would time out, not hang */
	cfg.method = INCNN_COLL_METHOD_THC;
	cfg.thc_bits = 3;
	EXPECT_EQ(-EINVAL, bad(&cfg, err, sizeof(err)));
	EXPECT_EQ(NULL, strchr(err, '\n'));
	EXPECT_NE(0, err[0]);
	TH_LOG("bits 3: %s", err);
	cfg.thc_bits = 4;
	cfg.thc_gran = 10;	/* < 2^4 - 1 */
	EXPECT_EQ(-EINVAL, bad(&cfg, err, sizeof(err)));
	EXPECT_NE(0, err[0]);
	TH_LOG("gran 10: %s", err);
	cfg.thc_gran = 300;
	EXPECT_EQ(-EINVAL, bad(&cfg, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "1..255")) TH_LOG("gran 300: %s", err);
	cfg.thc_gran = 0;
	cfg.method = INCNN_COLL_METHOD_GRADIVEQ;
	cfg.gvq_k = 256;	/* not below the default d */
	EXPECT_EQ(-EINVAL, bad(&cfg, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "gradiveq: compressed size k 256")) TH_LOG("%s", err);
	cfg.gvq_k = 0;
	cfg.method = INCNN_COLL_METHOD_UNSET;
	setenv("INCNN_METHOD", "thx", 1);
	EXPECT_EQ(-EINVAL, bad(&cfg, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "INCNN_METHOD=thx")) TH_LOG("%s", err);
	cfg.thc_bits = 0;
	setenv("INCNN_THC_BITS", "5", 1);
	setenv("INCNN_METHOD", "thc", 1);
	EXPECT_EQ(-EINVAL, bad(&cfg, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "bits 5")) TH_LOG("%s", err);
	unsetenv("INCNN_THC_BITS");
	unsetenv("INCNN_METHOD");
}

TEST_HARNESS_MAIN
