// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn-thc: THC's lookup table and single-core throughput
 * (userspace/collective/thc.c, docs/thc.md).
 *
 *   incnn-thc table [-b BITS] [-g GRAN] [-p P]
 *	the optimal table T_{b,g,p} as computed by the library, one line
 *	(compare: scripts/gen/thc-table.py -b BITS -g GRAN -p P)
 *   incnn-thc bench [-n FLOATS[K|M|G]] [-N WORKERS] [-t SECONDS] [--scalar]
 *	GB/s on one core (the fastest call, in thread CPU time), beside
 *	memcpy of the same bytes in the same run:
 *	compress (prepare + encode, and with error feedback), decompress
 *	(decode) in fp32 bytes, and one aggregation hop (lanes of N - 1
 *	workers + one worker's indices) in original-equivalent fp32 bytes
 *
 * Bad arguments: one line on stderr, exit status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <incnn/thc.h>

#include "toolutil.h"

static const char *prog = "incnn-thc";

struct opts {
	struct incnn_thc_params p;
	uint64_t n;
	unsigned long workers;
	double secs;
	bool scalar;
};

static void *page_alloc(size_t n)
{
	void *p = aligned_alloc(4096, (n + 4095) / 4096 * 4096);

	if (p)
		memset(p, 0, (n + 4095) / 4096 * 4096);
	return p;
}

static int usage(void)
{
	printf("usage: %s table [-b BITS] [-g GRAN] [-p P] [-B LOG2]\n"
	       "       %s bench [-n FLOATS] [-N WORKERS] [-t SECONDS] [--scalar]\n"
	       "THC's lookup table, and its single-core throughput beside memcpy.\n",
	       prog, prog);
	return 0;
}

struct bufs {
	float *grad, *ef, *work, *norms, *out, *scratch, *dst;
	uint8_t *idx, *lanes, *lanes2;
};

enum step { S_MEMCPY, S_COMPRESS, S_COMPRESS_EF, S_DECODE, S_HOP, S_HOP1 };

static int run_step(const struct incnn_thc *t, struct bufs *b, size_t n,
		    unsigned int N, enum step s, uint64_t it)
{
	size_t np = incnn_thc_padded(t, n);
	int lb = incnn_thc_lane_bits(t, N, NULL, 0);
	int rc = 0;

	switch (s) {
	case S_MEMCPY:
		memcpy(b->dst, b->grad, n * sizeof(float));
		break;
	case S_COMPRESS:
		rc = incnn_thc_prepare(t, b->grad, NULL, n, it, b->work, b->norms);
		rc = rc ? rc : incnn_thc_encode(t, b->work, n, b->norms, it, 0,
						b->idx);
		break;
	case S_COMPRESS_EF:
		rc = incnn_thc_prepare(t, b->grad, b->ef, n, it, b->work, b->norms);
		rc = rc ? rc : incnn_thc_encode(t, b->work, n, b->norms, it, 0,
						b->idx);
		rc = rc ? rc : incnn_thc_ef_update(t, b->ef, n, b->work, b->idx,
						   b->norms, it, b->scratch);
		break;
	case S_DECODE:
		rc = incnn_thc_decode(t, b->out, n, b->lanes, lb, N, b->norms, it);
		break;
	case S_HOP:	/* partial sums of N - 1 workers + ours */
		rc = incnn_thc_add_idx(t, b->lanes2, lb, b->lanes, lb, N - 1,
				       b->idx, np);
		break;
	case S_HOP1:	/* the first ring hop: two workers' indices */
		rc = incnn_thc_add_idx2(t, b->lanes2, incnn_thc_ring_bits(t, N, 1),
					b->idx, b->idx, np);
		break;
	}
	return rc;
}

/*
 * GB/s of n floats per call: the fastest call (this thread's CPU time,
 * so other processes on the machine do not count) over @secs of calls
 */
static double time_step(const struct incnn_thc *t, struct bufs *b, size_t n,
			unsigned int N, enum step s, double secs, int *rc)
{
	double end = tu_now() + secs, best = 1e30;
	uint64_t it = 0;

	*rc = run_step(t, b, n, N, s, it++);	/* warm up */
	while (!*rc && (tu_now() < end || it < 3)) {
		double t0 = tu_cpu_now(), el;

		*rc = run_step(t, b, n, N, s, it++);
		el = tu_cpu_now() - t0;
		if (el < best)
			best = el;
	}
	return (double)n * sizeof(float) / best / 1e9;
}

static int alloc_bufs(const struct incnn_thc *t, struct bufs *b, size_t n)
{
	size_t np = incnn_thc_padded(t, n), i;

	b->grad = page_alloc(np * 4);
	b->ef = page_alloc(np * 4);
	b->work = page_alloc(np * 4);
	b->norms = page_alloc(incnn_thc_nblocks(t, n) * 4);
	b->out = page_alloc(np * 4);
	b->scratch = page_alloc(np * 4);
	b->dst = page_alloc(np * 4);
	b->idx = page_alloc(incnn_thc_idx_bytes(t, n));
	b->lanes = page_alloc(np * 4);
	b->lanes2 = page_alloc(np * 4);
	if (!b->grad || !b->ef || !b->work || !b->norms || !b->out ||
	    !b->scratch || !b->dst || !b->idx || !b->lanes || !b->lanes2)
		return -ENOMEM;
	for (i = 0; i < n; i++)	/* something gradient-like, deterministic */
		b->grad[i] = (float)((int)(i * 2654435761u % 2001) - 1000) * 1e-6f;
	return 0;
}

static void free_bufs(struct bufs *b)
{
	free(b->grad);
	free(b->ef);
	free(b->work);
	free(b->norms);
	free(b->out);
	free(b->scratch);
	free(b->dst);
	free(b->idx);
	free(b->lanes);
	free(b->lanes2);
}

static int bench(struct incnn_thc *t, const struct opts *o)
{
	static const char *const names[] = {
		"memcpy", "compress", "compress+ef", "decompress",
		"agg hop (lanes+idx)", "agg hop 1 (idx+idx)",
	};
	unsigned int N = (unsigned int)o->workers;
	struct bufs b = { 0 };
	size_t n = o->n;
	char err[256];
	int lb = incnn_thc_lane_bits(t, N, err, sizeof(err)), rc, s;

	if (lb < 0)
		return tu_error(prog, TU_EXIT_USAGE, "%s", err + 5);
	if (o->scalar)
		incnn_thc_set_simd(t, false);
	if (alloc_bufs(t, &b, n))
		return tu_error(prog, TU_EXIT_RUNTIME, "out of memory");
	/* realistic lanes for decode and hops: the sums of N encodes */
	rc = run_step(t, &b, n, N, S_COMPRESS, 0);
	rc = rc ? rc : incnn_thc_add_idx(t, b.lanes, lb, NULL, 0, 0, b.idx,
					 incnn_thc_padded(t, n));
	for (s = 1; !rc && s < (int)N - 1; s++)
		rc = incnn_thc_add_idx(t, b.lanes, lb, b.lanes, lb, s, b.idx,
				       incnn_thc_padded(t, n));
	printf("# incnn-thc bench: n=%zu floats (%.1f MB), N=%u (%d-bit lanes), "
	       "b=%u g=%u p=%g B=%u, %s, one core\n", n, n * 4 / 1e6, N, lb,
	       o->p.bits, o->p.gran, o->p.p, 1u << o->p.block_log2,
	       incnn_thc_set_simd(t, !o->scalar) ? "avx2" : "scalar");
	printf("# %-22s %8s\n", "step", "GB/s");
	for (s = S_MEMCPY; !rc && s <= S_HOP1; s++) {
		double gbs = time_step(t, &b, n, N, s, o->secs, &rc);

		if (!rc)
			printf("  %-22s %8.2f\n", names[s], gbs);
	}
	free_bufs(&b);
	if (rc)
		return tu_error(prog, TU_EXIT_RUNTIME, "%s", strerror(-rc));
	return 0;
}

static int table(struct incnn_thc *t)
{
	const uint8_t *T = incnn_thc_table(t);
	unsigned int z, k = 1u << incnn_thc_params(t)->bits;

	for (z = 0; z < k; z++)
		printf("%s%u", z ? " " : "", T[z]);
	printf("\n");
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "scalar", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	long v;
	int c, rc;

	while ((c = getopt_long(argc, argv, ":b:g:p:B:n:N:t:h", lo, NULL)) != -1) {
		rc = tu_bench_opt(prog, c, optarg, INCNN_THC_MAX_N, &o->n,
				  &o->secs);
		if (rc >= 0) {
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case 'b': case 'g': case 'B': case 'N':
			if (tu_parse_long(optarg, 1, 1L << 30, &v))
				return tu_error(prog, TU_EXIT_USAGE,
						"-%c %s: not an integer in [1, 2^30]",
						c, optarg);
			if (c == 'b')
				o->p.bits = v;
			else if (c == 'g')
				o->p.gran = v;
			else if (c == 'B')
				o->p.block_log2 = v;
			else
				o->workers = v;
			break;
		case 'p':
			if (tu_parse_double(optarg, &o->p.p))
				return tu_error(prog, TU_EXIT_USAGE,
						"-p %s: not a number", optarg);
			break;
		case 'S':
			o->scalar = true;
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
	struct opts o = { .n = 1 << 20, .workers = 4, .secs = 0.5 };
	struct incnn_thc *t;
	const char *cmd;
	char err[256];
	int rc;

	incnn_thc_params_default(&o.p);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return argc < 2 ? (usage(), TU_EXIT_USAGE) : usage();
	cmd = argv[1];
	if (strcmp(cmd, "table") && strcmp(cmd, "bench"))
		return tu_error(prog, TU_EXIT_USAGE,
				"%s: unknown command (table, bench)", cmd);
	rc = parse(argc - 1, argv + 1, &o);
	if (rc)
		return rc < 0 ? usage() : rc;
	if (optind != argc - 1)
		return tu_error(prog, TU_EXIT_USAGE, "%s: unexpected argument",
				argv[optind + 1]);
	if (o.workers < 2 && !strcmp(cmd, "bench"))
		return tu_error(prog, TU_EXIT_USAGE, "-N %lu: at least 2",
				o.workers);
	rc = incnn_thc_create(&t, &o.p, err, sizeof(err));
	if (rc)	/* "thc: ..." */
		return tu_error(prog, TU_EXIT_USAGE, "%s", err + 5);
	rc = !strcmp(cmd, "table") ? table(t) : bench(t, &o);
	incnn_thc_destroy(t);
	return rc;
}
