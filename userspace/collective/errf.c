// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The one-line error formatter of the THC and GradiVeQ cores (thc.c,
 * gradiveq.c): their own file, so that a tool linking only a core does
 * not pull the communicator in.
 */
#include <stdarg.h>
#include <stdio.h>

#include "coll.h"

int incnn_coll_errf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}
