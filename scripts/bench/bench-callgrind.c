// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Driver for scripts/bench/bench-callgrind.sh: encodes and decodes Laplace
 * gradients (or the fp32 files given) with inceptionn, ebq and zebq,
 * scalar and SIMD, and brackets each
 * measured loop with callgrind client requests, so that each loop gets
 * its own dump (named after it) whose instruction count, divided by the
 * floats processed, is instructions per float. Outside valgrind the
 * requests do nothing.
 *
 * Usage: bench-callgrind [FILE...]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <valgrind/callgrind.h>

#include "codec.h"
#include <incnn/gen.h>

#define TOTAL	(1u << 20)	/* input bytes per measured loop */

/* TOTAL bytes of @path into @buf, the file repeated as needed */
static int load(const char *path, unsigned char *buf)
{
	FILE *f = fopen(path, "rb");
	size_t got = 0, n;

	if (!f) {
		perror(path);
		return 1;
	}
	while (got < TOTAL) {
		n = fread(buf + got, 1, TOTAL - got, f);
		if (!n && (ferror(f) || !got || fseek(f, 0, SEEK_SET)))
			break;
		got += n;
	}
	fclose(f);
	if (got < TOTAL) {
		fprintf(stderr, "%s: cannot read fp32 data\n", path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct incnn_codec *const cs[] = {
		&incnn_codec_inceptionn, &incnn_codec_ebq, &incnn_codec_zebq,
	};
	static const double scales[] = { 1e-3, 1e-2 };
	static const unsigned int ks[] = { 6, 8, 10 };
	static const size_t sizes[] = { 1448, 65536 };
	enum incnn_simd best = incnn_simd_level();
	static _Alignas(64) unsigned char scratch[INCNN_CODEC_SCRATCH];
	unsigned char *in = malloc(TOTAL + 65536), *dec = malloc(TOTAL + 65536);
	unsigned char *enc = malloc(2 * TOTAL + 65536);
	size_t *lens = malloc(sizeof(size_t) * (TOTAL / 1448 + 1));
	struct incnn_rng r;

	if (!in || !dec || !enc || !lens)
		return 1;
	for (int si = 0; si < (argc > 1 ? argc - 1 : 2); si++) {
		char dname[64];

		if (argc > 1) {
			if (load(argv[si + 1], in))
				return 1;
			snprintf(dname, sizeof(dname), "file%d", si + 1);
		} else {
			incnn_rng_seed(&r, 1);
			incnn_gen_f32(&r, INCNN_DIST_LAPLACE, scales[si],
				      (float *)in, TOTAL / 4);
			snprintf(dname, sizeof(dname), "laplace:%g",
				 scales[si]);
		}
		for (unsigned int z = 0; z < 2; z++)
		for (unsigned int c = 0; c < ARRAY_SIZE(cs); c++)
		for (unsigned int ki = 0; ki < 3; ki++)
		for (int simd = 0; simd <= (best != INCNN_SIMD_NONE); simd++) {
			enum incnn_simd path = simd ? best : INCNN_SIMD_NONE;
			size_t size = sizes[z], n = TOTAL / size, slot;
			char name[128];

			slot = cs[c]->bound(size);
			snprintf(name, sizeof(name), "%s/%s/k=%u/%s/%zu/enc/floats=%zu",
				 cs[c]->name, simd ? incnn_simd_name(path) :
				 "scalar", ks[ki], dname, size, n * size / 4);
			CALLGRIND_ZERO_STATS;
			for (size_t i = 0; i < n; i++) {
				ssize_t l = incnn_codec_encode(cs[c], path,
					ks[ki], in + i * size, size,
					enc + i * slot, slot, scratch, NULL);

				if (l < 0)
					return 1;
				lens[i] = l;
			}
			CALLGRIND_DUMP_STATS_AT(name);
			memcpy(strstr(name, "/enc/"), "/dec/", 5);
			CALLGRIND_ZERO_STATS;
			for (size_t i = 0; i < n; i++)
				if (incnn_codec_decode(cs[c], path, ks[ki],
						       enc + i * slot, lens[i],
						       dec + i * size, size))
					return 1;
			CALLGRIND_DUMP_STATS_AT(name);
		}
	}
	free(in);
	free(dec);
	free(enc);
	free(lens);
	return 0;
}
