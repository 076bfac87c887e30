// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer harness: the wire frame decoder on hostile frames (versions 1
 * and 2; gen_corpus seeds both). The output
 * buffer is exactly orig_len bytes, so ASan catches any overrun; a frame
 * that decodes must have been strictly shorter than what it restores.
 */
#include <stdint.h>
#include <stdlib.h>

#include "frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct incnn_frame_info fi;
	uint8_t *out;
	int r;

	if (incnn_frame_parse(data, size, &fi) != INCNN_FRAME_OK)
		return 0;
	out = malloc(fi.orig_len);
	r = incnn_frame_decode(data, size, out, fi.orig_len, &fi);
	if (r == INCNN_FRAME_OK && fi.orig_len <= size)
		abort();
	free(out);
	return 0;
}
