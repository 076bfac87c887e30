// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Codec names and labels as the tools print them, and encoder scratch.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tu_codec.h"

void tu_codec_names(char *buf, size_t len)
{
	unsigned int id;
	size_t pos = 0;

	buf[0] = '\0';
	for (id = 0; id <= INCNN_CODEC_MAX; id++) {
		const struct incnn_codec *c = incnn_codec_get(id);
		int r;

		if (!c)
			continue;
		r = snprintf(buf + pos, len - pos, "%s%s", pos ? ", " : "",
			     c->name);
		if (r < 0 || (size_t)r >= len - pos)
			break;
		pos += r;
	}
}

void *tu_scratch_alloc(void)
{
	size_t sz = (INCNN_CODEC_SCRATCH + 63) / 64 * 64;

	return aligned_alloc(64, sz);
}
