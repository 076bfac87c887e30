/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What every part of the tools' helpers (toolutil.h) shares: exit
 * statuses, the error message, ARRAY_SIZE and __printf.
 */
#ifndef INCNN_TU_BASE_H
#define INCNN_TU_BASE_H

#include <stdio.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

/* Exit statuses shared by the tools. */
#define TU_EXIT_RUNTIME	1
#define TU_EXIT_USAGE	2

/* Print "PROG: message" on stderr; returns @status. */
int tu_error(const char *prog, int status, const char *fmt, ...)
	__printf(3, 4);

#endif /* INCNN_TU_BASE_H */
