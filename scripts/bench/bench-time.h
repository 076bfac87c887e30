/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the one-file benchmarks in scripts/bench/ share: the calling
 * thread's CPU time, and a qsort() comparison for taking medians.
 */
#ifndef INCNN_BENCH_TIME_H
#define INCNN_BENCH_TIME_H

#include <time.h>

static inline double bench_cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#endif
