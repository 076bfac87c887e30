// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn-gvq: GradiVeQ's single-core throughput and PCA fit time
 * (userspace/collective/gradiveq.c, docs/gradiveq.md).
 *
 *   incnn-gvq bench [-d D] [-k K] [-n FLOATS[K|M|G]] [-N RANKS] [-T T_S]
 *		     [-t SECONDS]
 *	GB/s of fp32 (original) bytes on one core, the fastest call in
 *	thread CPU time, beside memcpy of the same bytes in the same run:
 *	compress (n / d slices into k floats each), one ring hop on the
 *	compressed values (add), decompress; and the time of one fit of
 *	the compressor (covariance of T_S samples of d floats + Jacobi);
 *	and a digest of U, mu and one compress-add-decompress, which must
 *	be the same for every build (rel, asan) and machine.
 *	Defaults: the paper's d = 256, k = 32 (k/d = 1/8), n = 1M, N = 4,
 *	T_S = 100.
 *
 * Bad arguments: one line on stderr, exit status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <incnn/gradiveq.h>

#include "toolutil.h"

static const char *prog = "incnn-gvq";

struct opts {
	struct incnn_gvq_params p;
	uint64_t n;
	long ranks;
	double secs;
};

struct bufs {
	float *x, *dst, *y, *acc, *out, *samples;
	size_t n, ns;
};

enum step { S_MEMCPY, S_COMPRESS, S_ADD, S_DECOMPRESS, S_NSTEPS };

static int usage(void)
{
	printf("usage: %s bench [-d D] [-k K] [-n FLOATS] [-N RANKS] [-T T_S] [-t SECONDS]\n"
	       "GradiVeQ's single-core compress, add and decompress GB/s beside memcpy,\n"
	       "and the compressor's fit time.\n", prog);
	return 0;
}

static void run_step(const struct incnn_gvq_pca *c, struct bufs *b,
		     unsigned int N, enum step s)
{
	unsigned int k = incnn_gvq_pca_k(c);

	switch (s) {
	case S_MEMCPY:
		memcpy(b->dst, b->x, b->n * sizeof(float));
		break;
	case S_COMPRESS:
		incnn_gvq_compress(c, b->x, b->ns, N, b->y);
		break;
	case S_ADD:
		incnn_gvq_add(b->acc, b->y, b->ns * k);
		break;
	case S_DECOMPRESS:
		incnn_gvq_decompress(c, b->acc, b->ns, b->out);
		break;
	case S_NSTEPS:
		break;
	}
}

/* GB/s of the slices' fp32 bytes: the fastest call over @secs */
static double time_step(const struct incnn_gvq_pca *c, struct bufs *b,
			unsigned int N, enum step s, double secs)
{
	double end = tu_now() + secs, best = 1e30, t0, el;
	unsigned int it = 0;

	run_step(c, b, N, s);	/* warm up */
	while (tu_now() < end || it < 3) {
		t0 = tu_cpu_now();
		run_step(c, b, N, s);
		el = tu_cpu_now() - t0;
		if (el < best)
			best = el;
		it++;
	}
	return (double)b->n * sizeof(float) / best / 1e9;
}

/* deterministic gradient-like data: a few directions plus noise */
static void fill(float *x, size_t n, unsigned int d, uint64_t seed)
{
	size_t i;
	uint64_t z;

	for (i = 0; i < n; i++) {
		z = (seed + i / d) * 0x9e3779b97f4a7c15ull;
		z ^= z >> 29;
		x[i] = (float)((int)(z % 2001) - 1000) * 1e-6f *
			(float)(1 + (i % d) % 7) +
			(float)((int)(i * 2654435761u % 201) - 100) * 1e-8f;
	}
}

static int alloc_bufs(struct bufs *b, const struct opts *o)
{
	unsigned int d = o->p.d, k = o->p.k;

	b->ns = o->n / d;
	b->n = b->ns * d;
	b->x = calloc(b->n, sizeof(float));
	b->dst = calloc(b->n, sizeof(float));
	b->out = calloc(b->n, sizeof(float));
	b->y = calloc(b->ns * k, sizeof(float));
	b->acc = calloc(b->ns * k, sizeof(float));
	b->samples = calloc((size_t)o->p.t_s * d, sizeof(float));
	if (!b->x || !b->dst || !b->out || !b->y || !b->acc || !b->samples)
		return -ENOMEM;
	fill(b->x, b->n, d, 1);
	fill(b->samples, (size_t)o->p.t_s * d, d, 2);
	return 0;
}

static void free_bufs(struct bufs *b)
{
	free(b->x);
	free(b->dst);
	free(b->out);
	free(b->y);
	free(b->acc);
	free(b->samples);
}

/* FNV-1a over the bytes: compare builds (rel -O2 vectorised, asan -O1) */
static uint64_t digest(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* U, mu, and one compress-add-decompress of the data, as a digest */
static uint64_t result_digest(const struct incnn_gvq_pca *c, struct bufs *b,
			      unsigned int N)
{
	unsigned int d = incnn_gvq_pca_d(c), k = incnn_gvq_pca_k(c);
	uint64_t h = 0xcbf29ce484222325ull;

	h = digest(h, incnn_gvq_pca_u(c), (size_t)d * k * sizeof(float));
	h = digest(h, incnn_gvq_pca_mu(c), d * sizeof(float));
	incnn_gvq_compress(c, b->x, b->ns, N, b->y);
	memcpy(b->acc, b->y, b->ns * k * sizeof(float));
	incnn_gvq_add(b->acc, b->y, b->ns * k);
	incnn_gvq_decompress(c, b->acc, b->ns, b->out);
	return digest(h, b->out, b->n * sizeof(float));
}

static int bench(const struct opts *o)
{
	static const char *const names[] = {
		"memcpy", "compress", "add (ring hop)", "decompress",
	};
	struct incnn_gvq_pca *c = NULL;
	struct bufs b = { 0 };
	double t0, fit_ms;
	char err[256];
	int rc, s;

	rc = incnn_gvq_pca_create(&c, o->p.d, o->p.k, err, sizeof(err));
	if (rc)	/* "gradiveq: ..." */
		return tu_error(prog, TU_EXIT_USAGE, "%s", err + 10);
	if (alloc_bufs(&b, o)) {
		free_bufs(&b);
		incnn_gvq_pca_destroy(c);
		return tu_error(prog, TU_EXIT_RUNTIME, "out of memory");
	}
	t0 = tu_cpu_now();
	rc = incnn_gvq_pca_fit(c, b.samples, o->p.t_s);
	fit_ms = (tu_cpu_now() - t0) * 1e3;
	if (!rc) {
		printf("# incnn-gvq bench: n=%zu floats (%.1f MB, %zu slices), d=%u k=%u (ratio %.2f), N=%ld, portable C, one core\n",
		       b.n, b.n * 4 / 1e6, b.ns, o->p.d, o->p.k,
		       (double)o->p.d / o->p.k, o->ranks);
		printf("# fit: T_s=%u samples, %u Jacobi sweeps, %.1f ms\n",
		       o->p.t_s, incnn_gvq_pca_sweeps(c), fit_ms);
		printf("# digest of U, mu and compress-add-decompress: %016llx\n",
		       (unsigned long long)result_digest(c, &b, o->ranks));
		printf("# %-22s %8s\n", "step", "GB/s");
		for (s = S_MEMCPY; s < S_NSTEPS; s++)
			printf("  %-22s %8.2f\n", names[s],
			       time_step(c, &b, o->ranks, s, o->secs));
	}
	free_bufs(&b);
	incnn_gvq_pca_destroy(c);
	if (rc)
		return tu_error(prog, TU_EXIT_RUNTIME, "fit: %s", strerror(-rc));
	return 0;
}

static int parse_int(int c, const char *arg, struct opts *o)
{
	long v;

	if (tu_parse_long(arg, 1, 1L << 30, &v))
		return tu_error(prog, TU_EXIT_USAGE,
				"-%c %s: not an integer in [1, 2^30]", c, arg);
	if (c == 'd')
		o->p.d = v;
	else if (c == 'k')
		o->p.k = v;
	else if (c == 'T')
		o->p.t_s = v;
	else
		o->ranks = v;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	while ((c = getopt_long(argc, argv, ":d:k:n:N:T:t:h", lo, NULL)) != -1) {
		rc = tu_bench_opt(prog, c, optarg, INCNN_GVQ_MAX_LAYER, &o->n,
				  &o->secs);
		if (rc >= 0) {
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case 'd': case 'k': case 'N': case 'T':
			rc = parse_int(c, optarg, o);
			if (rc)
				return rc;
			break;
		case 'h':
			return -1;
		default:
			return tu_getopt_error(prog, c, argv);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .n = 1 << 20, .ranks = 4, .secs = 0.5 };
	char err[256];
	int rc;

	incnn_gvq_params_default(&o.p);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return argc < 2 ? (usage(), TU_EXIT_USAGE) : usage();
	if (strcmp(argv[1], "bench"))
		return tu_error(prog, TU_EXIT_USAGE,
				"%s: unknown command (bench)", argv[1]);
	rc = parse(argc - 1, argv + 1, &o);
	if (rc)
		return rc < 0 ? usage() : rc;
	if (optind != argc - 1)
		return tu_error(prog, TU_EXIT_USAGE, "%s: unexpected argument",
				argv[optind + 1]);
	if (o.ranks > INCNN_GVQ_MAX_RANKS)
		return tu_error(prog, TU_EXIT_USAGE, "-N %ld: at most %d",
				o.ranks, INCNN_GVQ_MAX_RANKS);
	if (incnn_gvq_params_check(&o.p, err, sizeof(err)))
		return tu_error(prog, TU_EXIT_USAGE, "%s", err + 10);
	if (o.n < o.p.d)
		return tu_error(prog, TU_EXIT_USAGE,
				"-n %llu: less than one slice of d = %u",
				(unsigned long long)o.n, o.p.d);
	return bench(&o);
}
