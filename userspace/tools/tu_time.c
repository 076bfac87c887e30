// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Monotonic and per-thread CPU clocks in seconds.
 */
#include <time.h>

#include "tu_time.h"

double tu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double tu_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
