// SPDX-License-Identifier: GPL-2.0
/*
 * A tight loop of one codec's AVX2 calls against memcpy in the same loop:
 * encode and decode of 256 KiB of Laplace data in calls of 1448 B and
 * 64 KiB, 300 repeats per round, CPU time; prints, per codec and size,
 * the median over the rounds of memcpy's time over the codec's (the
 * ratio to memcpy). Quicker than incnn-bench (three codecs, one k) for
 * an A/B of two builds: link it against each build's libraries and run
 * the two binaries alternately, as docs/results.md's third pass of
 * issue 24 did.
 *
 *   cc -O2 -Iuapi -Ikmod/codec -Iuserspace/include \
 *	scripts/bench/codec-loop.c build/rel/lib/libincnn-codec.a \
 *	build/rel/lib/libincnn.a -llz4 -lm -o /tmp/codec-loop
 *   /tmp/codec-loop [K [SCALE [ROUNDS]]]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-time.h"
#include "codec.h"
#include <incnn/gen.h>

#define TOTAL	(256 * 1024)
#define REPEATS	300

/* one round: memcpy's time over encode's (*re) and decode's (*rd) */
static int round_of(const struct incnn_codec *c, unsigned int k,
		    const unsigned char *in, size_t size, unsigned char *enc,
		    unsigned char *dec, double *re, double *rd)
{
	static ssize_t lens[TOTAL / 1448 + 1];
	size_t n = TOTAL / size, slot = c->bound(size), i;
	double tm = 0, te = 0, td = 0;

	for (int rep = 0; rep < REPEATS; rep++) {
		double t0 = bench_cpu_now(), t1, t2, t3;

		for (i = 0; i < n; i++)
			memcpy(dec + i * size, in + i * size, size);
		__asm__ volatile("" : : "r"(dec) : "memory");
		t1 = bench_cpu_now();
		for (i = 0; i < n; i++) {
			lens[i] = incnn_codec_encode(c, INCNN_SIMD_AVX2, k,
						     in + i * size, size,
						     enc + i * slot, slot,
						     NULL, NULL);
			if (lens[i] < 0)
				return -1;
		}
		t2 = bench_cpu_now();
		for (i = 0; i < n; i++)
			if (incnn_codec_decode(c, INCNN_SIMD_AVX2, k,
					       enc + i * slot, lens[i],
					       dec + i * size, size))
				return -1;
		t3 = bench_cpu_now();
		tm += t1 - t0;
		te += t2 - t1;
		td += t3 - t2;
	}
	*re = tm / te;
	*rd = tm / td;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct incnn_codec *const cs[] = {
		&incnn_codec_inceptionn, &incnn_codec_ebq, &incnn_codec_zebq,
	};
	static const size_t sizes[] = { 1448, 65536 };
	unsigned int k = argc > 1 ? atoi(argv[1]) : 10;
	double scale = argc > 2 ? atof(argv[2]) : 1e-3;
	int rounds = argc > 3 ? atoi(argv[3]) : 7;
	unsigned char *in = malloc(TOTAL), *dec = malloc(TOTAL);
	unsigned char *enc = malloc(3 * TOTAL);
	struct incnn_rng r;

	if (!in || !dec || !enc || k < 1 || k > 30 || rounds < 1 ||
	    rounds > 31 || incnn_simd_level() != INCNN_SIMD_AVX2) {
		fprintf(stderr, "usage: codec-loop [K [SCALE [ROUNDS <= 31]]] (needs AVX2)\n");
		return 2;
	}
	incnn_rng_seed(&r, 1);
	incnn_gen_f32(&r, INCNN_DIST_LAPLACE, scale, (float *)in, TOTAL / 4);
	for (size_t z = 0; z < ARRAY_SIZE(sizes); z++)
		for (size_t c = 0; c < ARRAY_SIZE(cs); c++) {
			double re[32], rd[32];

			for (int i = 0; i < rounds; i++)
				if (round_of(cs[c], k, in, sizes[z], enc, dec,
					     &re[i], &rd[i])) {
					fprintf(stderr, "codec-loop: %s failed\n",
						cs[c]->name);
					return 1;
				}
			qsort(re, rounds, sizeof(double), bench_cmp_double);
			qsort(rd, rounds, sizeof(double), bench_cmp_double);
			printf("%-10s k=%u %6zu enc %.3f dec %.3f\n",
			       cs[c]->name, k, sizes[z], re[rounds / 2],
			       rd[rounds / 2]);
		}
	free(in);
	free(dec);
	free(enc);
	return 0;
}
