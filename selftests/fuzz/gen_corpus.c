// SPDX-License-Identifier: GPL-2.0
/*
 * Write the fuzzers' seed corpus: valid frames and codec inputs for every
 * codec on gradient-like and adversarial data, and TCP option spaces as
 * Linux sends them with and without incnn's options.
 * Usage: gen_corpus DIR   (writes DIR/fuzz_frame/, DIR/fuzz_codec/ and
 * DIR/fuzz_tcpopt/)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frame.h"
#include <incnn/gen.h>

static _Alignas(64) uint8_t scratch[INCNN_CODEC_SCRATCH];

static int write_file(const char *dir, const char *sub, int i,
		      const uint8_t *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/seed-%03d", dir, sub, i);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

/* TCP option spaces: a Linux SYN (MSS, SACK_PERM, TS, NOP, WS) with the
 * capability option, the same signed with TCP-MD5, the old 4-byte form, a
 * data segment's timestamps with the frame option, an EOL before it */
static const uint8_t tcpopt_seeds[][40] = {
	{ 2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7,
	  253, 8, 0x1c, 0x4e, 0x02, 0, 0, 0x1e },
	{ 1, 1, 19, 18, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
	  16, 2, 4, 5, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7, 253, 8, 0x1c, 0x4e,
	  0x02, 0, 0, 0x06 },
	{ 2, 4, 5, 0xb4, 253, 4, 0x1c, 0x4e },
	{ 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 253, 4, 0x1c, 0x4f },
	{ 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 253, 4, 0x1c, 0x4f },
};
static const size_t tcpopt_lens[] = { 28, 40, 8, 16, 18 };

int main(int argc, char **argv)
{
	static const double scales[] = { 1e-3, 1e-2, 1 };
	static uint8_t payload[1500], frame[1500], in[1504];
	char path[4096];
	struct incnn_rng r;
	int nf = 0, nc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/fuzz_frame", argv[1]);
	mkdir(argv[1], 0755);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/fuzz_codec", argv[1]);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/fuzz_tcpopt", argv[1]);
	mkdir(path, 0755);
	for (size_t i = 0; i < sizeof(tcpopt_lens) / sizeof(tcpopt_lens[0]);
	     i++)
		if (write_file(argv[1], "fuzz_tcpopt", (int)i, tcpopt_seeds[i],
			       tcpopt_lens[i]))
			return 1;

	incnn_rng_seed(&r, 42);
	for (unsigned int id = 1; id <= INCNN_CODEC_MAX; id++) {
		const struct incnn_codec *c = incnn_codec_get(id);

		for (int d = 0; d < __INCNN_DIST_MAX; d++) {
			for (int s = 0; s < 3; s++) {
				size_t len = 200 + 97 * (d + s), head = s;
				ssize_t n;

				incnn_gen_f32(&r, d, scales[s],
					      (float *)payload, 375);
				n = incnn_frame_encode(c, c->param.def,
						       0x28, payload, len, head,
						       frame, len - 1, scratch,
						       NULL);
				if (n > 0 && write_file(argv[1], "fuzz_frame",
							nf++, frame, n))
					return 1;
				/* the same as a superframe (version 2) */
				n = incnn_frame_encode_ver(incnn_simd_auto(),
							   INCNN_FRAME_VERSION_2,
							   c, c->param.def,
							   0x28, payload, len,
							   head, frame,
							   len - 1, scratch,
							   NULL);
				if (n > 0 && write_file(argv[1], "fuzz_frame",
							nf++, frame, n))
					return 1;
				/* codec input: id, param, length, data */
				in[0] = id - 1;
				in[1] = c->param.def;
				in[2] = len & 0xff;
				in[3] = len >> 8;
				memcpy(in + 4, payload, len);
				if (write_file(argv[1], "fuzz_codec", nc++, in,
					       len + 4))
					return 1;
			}
		}
	}
	printf("gen_corpus: %d frames, %d codec inputs in %s\n", nf, nc,
	       argv[1]);
	return 0;
}
