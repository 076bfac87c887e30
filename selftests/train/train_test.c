// SPDX-License-Identifier: GPL-2.0
/*
 * incnn-train's model and data code (userspace/train): exp/log against
 * libm, the MLP's backward pass against central finite differences on a
 * tiny network, exact SGD arithmetic, determinism of the initialisation
 * and the shuffle, and the data file reader on good and bad files.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

#include "mlp.h"
#include "data.h"

TEST(exp_log_vs_libm)
{
	double x, worst = 0;

	ASSERT_EQ(1.0, tr_exp(0));
	ASSERT_EQ(0.0, tr_log(1));
	ASSERT_EQ(0.0, tr_exp(-800));
	ASSERT_TRUE(isinf(tr_log(0)) && tr_log(0) < 0);
	ASSERT_TRUE(isnan(tr_log(-1)));
	for (x = -700; x <= 700; x += 0.37) {
		double e = fabs(tr_exp(x) - exp(x)) / exp(x);

		if (e > worst)
			worst = e;
	}
	EXPECT_LT(worst, 2e-15);
	TH_LOG("exp: worst relative error %.3g", worst);
	worst = 0;
	for (x = 1e-300; x < 1e300; x *= 1.37) {
		double e = fabs(tr_log(x) - log(x));

		if (e / fabs(log(x) ? log(x) : 1) > worst)
			worst = e / fabs(log(x) ? log(x) : 1);
	}
	/* around 1 (where the relative error is hardest) and subnormals */
	for (x = 0.5; x < 2; x += 0.001) {
		double e = fabs(tr_log(x) - log(x));

		if (x != 1 && e / fabs(log(x)) > worst)
			worst = e / fabs(log(x));
	}
	EXPECT_LT(fabs(tr_log(4.9406564584124654e-324) - log(4.9406564584124654e-324)),
		  1e-12);
	EXPECT_LT(worst, 2e-15);
	TH_LOG("log: worst relative error %.3g", worst);
}

/* a tiny net: 6-5-4-3, 2 samples */
#define GC_B	2
static const int gc_dims[] = { 6, 5, 4, 3 };
static const uint8_t gc_labels[GC_B] = { 2, 0 };

static void gc_input(float *x)
{
	int i;

	for (i = 0; i < GC_B * gc_dims[0]; i++)
		x[i] = (float)(0.1 + 0.9 * ((i * 7) % 11) / 11.0);
}

static double gc_loss(struct tr_mlp *m, const float *x)
{
	return tr_mlp_forward(m, x, GC_B, gc_labels, NULL) / GC_B;
}

/* largest violation of |fd - an| <= 1e-3 + 2e-2 |an| over all params,
 * with the analytic gradient scaled by @scale (1: as computed) */
static double gradcheck(struct tr_mlp *m, const float *x, double scale)
{
	float *an = malloc(sizeof(float) * m->nparams);
	double worst = 0;
	size_t k;

	gc_loss(m, x);
	tr_mlp_backward(m, GC_B, gc_labels);
	memcpy(an, m->grad, sizeof(float) * m->nparams);
	for (k = 0; k < m->nparams; k++) {
		float w = m->param[k], eps = 1e-3f;
		double lp, lm, fd, a = an[k] * scale, v;

		m->param[k] = w + eps;
		lp = gc_loss(m, x);
		m->param[k] = w - eps;
		lm = gc_loss(m, x);
		m->param[k] = w;
		fd = (lp - lm) / (2.0 * eps);
		v = fabs(fd - a) / (1e-3 + 2e-2 * fabs(a));
		if (v > worst)
			worst = v;
	}
	free(an);
	return worst;
}

TEST(gradient_check)
{
	struct tr_mlp m;
	float x[GC_B * 6];
	size_t k;
	double nz = 0;

	ASSERT_EQ(0, tr_mlp_init(&m, 3, gc_dims, GC_B, 7));
	/* biases away from 0, so some units are off and some on */
	for (k = 0; k < 3; k++) {
		int j;

		for (j = 0; j < gc_dims[k + 1]; j++)
			m.param[m.boff[k] + j] = (float)(0.05 * ((j % 3) - 1));
	}
	gc_input(x);
	ASSERT_EQ(6 * 5 + 5 + 5 * 4 + 4 + 4 * 3 + 3, (int)m.nparams);
	EXPECT_LE(gradcheck(&m, x, 1.0), 1.0);
	/* the check can fail: a gradient 10% off is caught */
	EXPECT_GT(gradcheck(&m, x, 1.1), 1.0);
	for (k = 0; k < m.nparams; k++)
		nz += m.grad[k] != 0;
	EXPECT_GT(nz, m.nparams / 2);	/* most of the net is exercised */
	tr_mlp_free(&m);
}

/* the batch gradient is the mean of the per-sample gradients */
TEST(batch_mean)
{
	struct tr_mlp m;
	float x[GC_B * 6], *g0, *g1;
	size_t k;

	ASSERT_EQ(0, tr_mlp_init(&m, 3, gc_dims, GC_B, 3));
	gc_input(x);
	g0 = malloc(sizeof(float) * m.nparams);
	g1 = malloc(sizeof(float) * m.nparams);
	tr_mlp_forward(&m, x, 1, gc_labels, NULL);
	tr_mlp_backward(&m, 1, gc_labels);
	memcpy(g0, m.grad, sizeof(float) * m.nparams);
	tr_mlp_forward(&m, x + 6, 1, gc_labels + 1, NULL);
	tr_mlp_backward(&m, 1, gc_labels + 1);
	memcpy(g1, m.grad, sizeof(float) * m.nparams);
	tr_mlp_forward(&m, x, 2, gc_labels, NULL);
	tr_mlp_backward(&m, 2, gc_labels);
	for (k = 0; k < m.nparams; k++)
		ASSERT_LE(fabs(m.grad[k] - (g0[k] + g1[k]) / 2),
			  1e-6 * (fabs(g0[k]) + fabs(g1[k])) + 1e-30);
	free(g0);
	free(g1);
	tr_mlp_free(&m);
}

TEST(forward_loss_and_accuracy)
{
	static const int dims[] = { 2, 3 };
	uint8_t labels[2] = { 1, 0 };
	float x[4] = { 1, 0, 0, 1 };
	struct tr_mlp m;
	long correct = 0;
	double loss;

	ASSERT_EQ(0, tr_mlp_init(&m, 1, dims, 2, 1));
	/* W = [[0, ln 2, 0], [0, 0, 0]]: sample 0 logits (0, ln2, 0) */
	memset(m.param, 0, sizeof(float) * m.nparams);
	m.param[1] = (float)log(2);
	loss = tr_mlp_forward(&m, x, 2, labels, &correct);
	/* sample 0: p(1) = 2/4, loss ln 2; sample 1: p(0) = 1/3, ln 3 */
	EXPECT_LT(fabs(loss - (log(2) + log(3))), 1e-7);
	/* sample 0 right (argmax 1), sample 1: ties -> class 0, right */
	EXPECT_EQ(2, correct);
	tr_mlp_free(&m);
}

TEST(sgd_exact)
{
	static const int dims[] = { 1, 1 };
	struct tr_mlp m;

	ASSERT_EQ(0, tr_mlp_init(&m, 1, dims, 1, 1));
	ASSERT_EQ(2, (int)m.nparams);
	m.param[0] = 1.0f;
	m.param[1] = -2.0f;
	m.grad[0] = 0.5f;
	m.grad[1] = 0.25f;
	tr_mlp_sgd(&m, 0.5f, 0.5f, 0.0f);
	EXPECT_EQ(0.75f, m.param[0]);		/* v = 0.5 */
	EXPECT_EQ(-2.125f, m.param[1]);		/* v = 0.25 */
	tr_mlp_sgd(&m, 0.5f, 0.5f, 0.0f);
	EXPECT_EQ(0.375f, m.param[0]);		/* v = 0.25 + 0.5 */
	/* weight decay: g = 0 + 0.5 * w */
	m.grad[0] = 0;
	m.mom[0] = 0;
	m.param[0] = 2.0f;
	tr_mlp_sgd(&m, 1.0f, 0.0f, 0.5f);
	EXPECT_EQ(1.0f, m.param[0]);
	tr_mlp_free(&m);
}

TEST(init_deterministic)
{
	static const int dims[] = { 784, 50, 10 };
	struct tr_mlp a, b, c;
	size_t k;
	double lim = sqrt(6.0 / 784), mx = 0;

	ASSERT_EQ(0, tr_mlp_init(&a, 2, dims, 25, 1));
	ASSERT_EQ(0, tr_mlp_init(&b, 2, dims, 25, 1));
	ASSERT_EQ(0, tr_mlp_init(&c, 2, dims, 25, 2));
	EXPECT_EQ(tr_mlp_digest(&a), tr_mlp_digest(&b));
	EXPECT_NE(tr_mlp_digest(&a), tr_mlp_digest(&c));
	for (k = 0; k < a.boff[0]; k++)
		if (fabs(a.param[k]) > mx)
			mx = fabs(a.param[k]);
	EXPECT_LE(mx, lim);
	EXPECT_GT(mx, 0.99 * lim);
	EXPECT_EQ(0.0f, a.param[a.boff[0]]);
	ASSERT_EQ(-EINVAL, tr_mlp_init(&c, 0, dims, 25, 1));
	tr_mlp_free(&a);
	tr_mlp_free(&b);
	tr_mlp_free(&c);
}

TEST(shuffle)
{
	int p[1000], q[1000], seen[1000] = { 0 }, i, same = 0;

	tr_shuffle(p, 1000, 5, 1);
	tr_shuffle(q, 1000, 5, 1);
	ASSERT_EQ(0, memcmp(p, q, sizeof(p)));
	for (i = 0; i < 1000; i++)
		seen[p[i]]++;
	for (i = 0; i < 1000; i++)
		ASSERT_EQ(1, seen[i]);
	tr_shuffle(q, 1000, 5, 2);
	for (i = 0; i < 1000; i++)
		same += p[i] == q[i];
	EXPECT_LT(same, 20);
}

/* write a data file: @n_train + @n_test records of 2x2 pixels */
static void write_file(const char *path, const char *magic, uint32_t ntr,
		       uint32_t nte, int label, long trim)
{
	FILE *f = fopen(path, "w");
	uint32_t h[4] = { ntr, nte, 2, 2 };
	uint32_t i;

	fwrite(magic, 1, 8, f);
	fwrite(h, 4, 4, f);
	for (i = 0; i < ntr + nte; i++) {
		unsigned char rec[5] = { (unsigned char)i, 0, 255, 51,
					 (unsigned char)(label >= 0 ? (uint32_t)label : i % 10) };

		fwrite(rec, 1, 5, f);
	}
	fclose(f);
	if (trim && truncate(path, 24 + 5 * (ntr + nte) - trim))
		abort();
}

TEST(data_file)
{
	char path[] = "/tmp/incnn-train-test-XXXXXX", err[256];
	struct tr_data d;
	float x[4];
	uint8_t y;
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	close(fd);
	write_file(path, TR_DATA_MAGIC, 3, 2, -1, 0);
	ASSERT_EQ(0, tr_data_load(&d, path, err, sizeof(err)));
	EXPECT_EQ(3, d.n_train);
	EXPECT_EQ(2, d.n_test);
	EXPECT_EQ(4, d.dim);
	tr_data_get(&d, 4, x, &y);		/* the second test sample */
	EXPECT_EQ(4, y);
	EXPECT_EQ(4.0f / 255.0f, x[0]);
	EXPECT_EQ(0.0f, x[1]);
	EXPECT_EQ(1.0f, x[2]);
	EXPECT_EQ(0.2f, x[3]);
	tr_data_free(&d);

	write_file(path, "INCNNMN2", 3, 2, -1, 0);
	EXPECT_EQ(-EINVAL, tr_data_load(&d, path, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "not an incnn-train data file"));
	write_file(path, TR_DATA_MAGIC, 3, 2, -1, 1);
	EXPECT_EQ(-EINVAL, tr_data_load(&d, path, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "the header says"));
	write_file(path, TR_DATA_MAGIC, 3, 2, 10, 0);
	EXPECT_EQ(-EINVAL, tr_data_load(&d, path, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "label 10"));
	write_file(path, TR_DATA_MAGIC, 3, 0, -1, 0);
	EXPECT_EQ(-EINVAL, tr_data_load(&d, path, err, sizeof(err)));
	unlink(path);
	EXPECT_EQ(-ENOENT, tr_data_load(&d, path, err, sizeof(err)));
	EXPECT_EQ(NULL, d.pix);
}

TEST(synthetic)
{
	struct tr_data a, b;
	int count[TR_CLASSES] = { 0 }, i;

	ASSERT_EQ(0, tr_data_synth(&a, 500, 100, 42));
	ASSERT_EQ(0, tr_data_synth(&b, 500, 100, 42));
	EXPECT_EQ(784, a.dim);
	EXPECT_EQ(0, memcmp(a.pix, b.pix, 600 * 784));
	EXPECT_EQ(0, memcmp(a.label, b.label, 600));
	for (i = 0; i < 600; i++)
		count[a.label[i]]++;
	for (i = 0; i < TR_CLASSES; i++)
		EXPECT_GT(count[i], 30);
	tr_data_free(&a);
	tr_data_free(&b);
	EXPECT_EQ(-EINVAL, tr_data_synth(&a, 0, 10, 1));
}

TEST_HARNESS_MAIN
