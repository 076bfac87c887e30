/* SPDX-License-Identifier: GPL-2.0 OR MIT */
#ifndef INCNN_TU_TIME_H
#define INCNN_TU_TIME_H

/* Monotonic time in seconds (CLOCK_MONOTONIC). */
double tu_now(void);
/* This thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID). */
double tu_cpu_now(void);

#endif /* INCNN_TU_TIME_H */
