// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn-cmp: compare two fp32 files value by value.
 *
 *   incnn-cmp [--skip BYTES] [--pieces] [--json] EXPECTED GOT
 *
 * Compares the common prefix after --skip bytes (e.g. a preamble) as
 * little-endian fp32 values and prints how many bytes were compared, how
 * many values differ, and the maximum and mean absolute difference over
 * finite values. Exit status: 0 when the compared bytes are identical and
 * the files have the same length, 3 when they differ, 1 on an I/O error,
 * 2 on bad arguments.
 *
 * --pieces: GOT need only consist of 4-byte aligned pieces of EXPECTED, in
 * any order (iperf3 -F sends file blocks out of order and repeats some
 * after partial writes). Exit status 0 then means every byte of GOT is
 * covered by such a piece; bytes_differ counts those that are not.
 */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "toolutil.h"

static int load(const char *name, unsigned char **buf, size_t *len)
{
	struct stat st;
	int fd = open(name, O_RDONLY);

	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "incnn-cmp: %s: cannot open\n", name);
		return -1;
	}
	*len = st.st_size;
	*buf = malloc(*len + 1);
	if (!*buf || tu_read_full(fd, *buf, *len) != (ssize_t)*len) {
		fprintf(stderr, "incnn-cmp: %s: cannot read\n", name);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

#define WINDOW	32	/* bytes looked up at a time */

static uint64_t window_hash(const unsigned char *p)
{
	uint64_t h = 0xcbf29ce484222325ull;
	int i;

	for (i = 0; i < WINDOW; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/*
 * GOT as pieces of EXPECTED: index EXPECTED's 4-byte aligned windows by
 * hash (first position wins), then cover GOT greedily.
 */
static int cmp_pieces(const unsigned char *a, size_t la,
		      const unsigned char *b, size_t lb, size_t skip, int json)
{
	size_t nw, cap = 1, i, pieces = 0, differ = 0;
	size_t *slot;

	if (la < skip + WINDOW || lb < skip) {
		fprintf(stderr, "incnn-cmp: files too short for --pieces\n");
		return 1;
	}
	nw = (la - skip - WINDOW) / 4 + 1;
	while (cap < 2 * nw)
		cap <<= 1;
	slot = malloc(cap * sizeof(*slot));
	if (!slot) {
		fprintf(stderr, "incnn-cmp: out of memory\n");
		return 1;
	}
	for (i = 0; i < cap; i++)
		slot[i] = SIZE_MAX;
	for (i = skip; i + WINDOW <= la; i += 4) {
		size_t h = window_hash(a + i) & (cap - 1);

		while (slot[h] != SIZE_MAX &&
		       memcmp(a + slot[h], a + i, WINDOW))
			h = (h + 1) & (cap - 1);
		if (slot[h] == SIZE_MAX)
			slot[h] = i;
	}

	for (i = skip; i < lb;) {
		size_t h, p, k;

		if (lb - i < WINDOW) {
			/* short tail: it must continue the last piece */
			differ += lb - i;
			break;
		}
		h = window_hash(b + i) & (cap - 1);
		while (slot[h] != SIZE_MAX && memcmp(a + slot[h], b + i, WINDOW))
			h = (h + 1) & (cap - 1);
		if (slot[h] == SIZE_MAX) {
			differ += 4;
			i += 4;
			continue;
		}
		p = slot[h];
		for (k = WINDOW; i + k + 4 <= lb && p + k + 4 <= la &&
		     !memcmp(a + p + k, b + i + k, 4); k += 4)
			;
		pieces++;
		i += k;
	}
	free(slot);
	if (json)
		printf("{\"got_bytes\":%zu,\"expected_bytes\":%zu,\"pieces\":%zu,\"bytes_differ\":%zu}\n",
		       lb, la, pieces, differ);
	else
		printf("got %zu bytes as %zu pieces of %zu expected: %zu bytes differ\n",
		       lb, pieces, la, differ);
	return differ ? 3 : 0;
}

/*
 * Compare @n bytes as fp32 values: how many differ (a trailing partial
 * value counts as one); the largest and the summed absolute error of
 * those that are finite on both sides.
 */
static size_t cmp_values(const unsigned char *a, const unsigned char *b,
			 size_t n, double *maxerr, double *sumerr)
{
	size_t i, differ = 0;

	*maxerr = *sumerr = 0;
	for (i = 0; i + 4 <= n; i += 4) {
		uint32_t x = tu_get_le32(a + i);
		uint32_t y = tu_get_le32(b + i);
		double d;

		if (x == y)
			continue;
		differ++;
		if (tu_f32_nonfinite(x) || tu_f32_nonfinite(y))
			continue;
		d = fabs((double)tu_u2f(x) - (double)tu_u2f(y));
		*sumerr += d;
		if (d > *maxerr)
			*maxerr = d;
	}
	if (memcmp(a + i, b + i, n - i))
		differ++;
	return differ;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "skip", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "pieces", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned char *a, *b;
	size_t la, lb, n, differ;
	double maxerr = 0, sumerr = 0;
	uint64_t skip = 0;
	int json = 0, resync = 0, c;

	while ((c = getopt_long(argc, argv, "s:jrh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (tu_parse_u64(optarg, &skip)) {
				fprintf(stderr, "incnn-cmp: bad --skip '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'j':
			json = 1;
			break;
		case 'r':
			resync = 1;
			break;
		case 'h':
			printf("usage: incnn-cmp [--skip BYTES] [--pieces] [--json] EXPECTED GOT\n");
			return 0;
		default:
			fprintf(stderr, "incnn-cmp: usage: incnn-cmp [--skip BYTES] [--pieces] [--json] EXPECTED GOT\n");
			return 2;
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "incnn-cmp: usage: incnn-cmp [--skip BYTES] [--pieces] [--json] EXPECTED GOT\n");
		return 2;
	}
	if (load(argv[optind], &a, &la) || load(argv[optind + 1], &b, &lb))
		return 1;

	if (resync) {
		c = cmp_pieces(a, la, b, lb, skip, json);
		free(a);
		free(b);
		return c;
	}

	n = la < lb ? la : lb;
	n = n > skip ? n - skip : 0;
	differ = cmp_values(a + skip, b + skip, n, &maxerr, &sumerr);

	if (json)
		printf("{\"compared_bytes\":%zu,\"expected_bytes\":%zu,\"got_bytes\":%zu,\"values_differ\":%zu,\"max_abs_err\":%.10g,\"mean_abs_err\":%.10g}\n",
		       n, la, lb, differ, maxerr, n ? sumerr / (n / 4) : 0);
	else
		printf("compared %zu bytes (expected %zu, got %zu): %zu values differ, max abs err %.6g, mean %.6g\n",
		       n, la, lb, differ, maxerr, n ? sumerr / (n / 4) : 0);
	free(a);
	free(b);
	return differ || la != lb ? 3 : 0;
}
