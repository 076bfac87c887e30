// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The tools' one-line error messages.
 */
#include <stdarg.h>
#include <stdio.h>

#include "tu_base.h"

int tu_error(const char *prog, int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return status;
}
