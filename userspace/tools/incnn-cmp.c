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
 * --pieces: GOT need only consist of pieces of EXPECTED that start at
 * 4-byte aligned offsets of EXPECTED, anywhere in GOT, in any order (iperf3
 * -F resends its buffer from the start after a partial write of any
 * length; see cover_pieces()). Exit status 0 then means every byte of GOT is covered
 * by such a piece; bytes_differ counts those that are not.
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
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*len = st.st_size;
	*buf = malloc(*len + 1);
	if (!*buf || tu_read_full(fd, *buf, *len) != (ssize_t)*len) {
		fprintf(stderr, "incnn-cmp: %s: cannot read\n", name);
		free(*buf);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

#define USAGE	"usage: incnn-cmp [--skip BYTES] [--pieces] [--json] EXPECTED GOT\n"

static void usage(void)
{
	fputs(USAGE
"Compare two files of little-endian fp32 values, value by value.\n"
"\n"
"Compares the common prefix of EXPECTED and GOT (after --skip bytes) and\n"
"prints how many bytes were compared, how many values differ, and the\n"
"largest and mean absolute difference over the finite values.\n"
"\n"
"options:\n"
"  -s, --skip BYTES  ignore the first BYTES bytes of both files\n"
"  -r, --pieces      GOT need only consist of pieces of EXPECTED that\n"
"                    start at 4-byte aligned offsets of EXPECTED\n"
"                    (anywhere in GOT), in any order (what iperf3 -F\n"
"                    delivers); a piece shorter than 32 bytes\n"
"                    is searched for in all of EXPECTED (short_pieces\n"
"                    counts them); bytes_differ counts the bytes of GOT\n"
"                    in no piece\n"
"  -j, --json        one JSON object instead of the text line\n"
"  -h, --help        this help\n"
"\n"
"exit status:\n"
"  0  the compared bytes are identical and the files have the same length\n"
"     (--pieces: every byte of GOT is in a piece of EXPECTED)\n"
"  1  a file cannot be read (or is too short for --pieces)\n"
"  2  bad arguments\n"
"  3  the values differ, or the lengths do (--pieces: some bytes of GOT\n"
"     are in no piece of EXPECTED)\n", stdout);
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

/* EXPECTED's 4-byte aligned windows from @skip on, by hash */
struct pindex {
	const unsigned char *a;
	size_t la, cap, *slot;
};

static int pindex_build(struct pindex *x, const unsigned char *a, size_t la,
			size_t skip)
{
	size_t nw = (la - skip - WINDOW) / 4 + 1, i;

	x->a = a;
	x->la = la;
	x->cap = 1;
	while (x->cap < 2 * nw)
		x->cap <<= 1;
	x->slot = malloc(x->cap * sizeof(*x->slot));
	if (!x->slot)
		return -1;
	for (i = 0; i < x->cap; i++)
		x->slot[i] = SIZE_MAX;
	for (i = skip; i + WINDOW <= la; i += 4) {
		size_t h = window_hash(a + i) & (x->cap - 1);

		while (x->slot[h] != SIZE_MAX &&
		       memcmp(a + x->slot[h], a + i, WINDOW))
			h = (h + 1) & (x->cap - 1);
		if (x->slot[h] == SIZE_MAX)
			x->slot[h] = i;
	}
	return 0;
}

/* where in EXPECTED the window at @p is (first position), or SIZE_MAX */
static size_t pindex_find(const struct pindex *x, const unsigned char *p)
{
	size_t h = window_hash(p) & (x->cap - 1);

	while (x->slot[h] != SIZE_MAX && memcmp(x->a + x->slot[h], p, WINDOW))
		h = (h + 1) & (x->cap - 1);
	return x->slot[h];
}

/* the first 4-byte aligned offset >= @from of @a where @n bytes of @p are */
static size_t find_aligned(const unsigned char *a, size_t la, size_t from,
			   const unsigned char *p, size_t n)
{
	size_t o;

	for (o = from; o + n <= la; o += 4)
		if (!memcmp(a + o, p, n))
			return o;
	return SIZE_MAX;
}

#define MAX_SHORT	1000	/* short pieces searched for, at most */

/*
 * GOT as pieces of EXPECTED: a piece starts at a 4-byte aligned offset of
 * EXPECTED, anywhere in GOT (iperf3 -F resends its buffer from the start
 * after a partial write of any length), and is extended a whole value at
 * a time (byte by byte, a piece would run on by chance into the next one:
 * the high bytes of floats repeat). Pieces of at least WINDOW bytes are
 * found through the index; the 1-3 bytes of a value cut by the end of a
 * piece must continue it; a gap shorter than WINDOW between two pieces
 * (or at the end of GOT) is a short piece when it is found at an aligned
 * offset of EXPECTED (e.g. the last bytes of a block); *@nshort counts
 * those. Bytes in no piece differ.
 */
static size_t cover_pieces(const struct pindex *x, const unsigned char *b,
			   size_t lb, size_t skip, size_t *npieces,
			   size_t *nshort)
{
	size_t i, nh = 0, nhp = SIZE_MAX, end = 0, pend = SIZE_MAX;
	size_t differ = 0, k, o;

	for (i = skip; i + 4 <= lb;) {
		/* nh: the next position >= i whose window is in EXPECTED */
		if (nh < i || (nh == i && nhp == SIZE_MAX)) {
			for (nh = i; nh + WINDOW <= lb; nh++) {
				nhp = pindex_find(x, b + nh);
				if (nhp != SIZE_MAX)
					break;
			}
			if (nh + WINDOW > lb) {
				nh = lb;
				nhp = SIZE_MAX;
			}
		}
		if (nh == i && nhp != SIZE_MAX) {
			for (k = WINDOW; i + k + 4 <= lb && nhp + k + 4 <= x->la &&
			     !memcmp(x->a + nhp + k, b + i + k, 4); k += 4)
				;
			end = nhp + k;
			(*npieces)++;
			i += k;
			pend = i;
			continue;
		}
		k = nh - i;
		if (k < 4 && pend == i && end + k <= x->la &&
		    !memcmp(x->a + end, b + i, k)) {
			end += k;	/* a value cut by the piece's end */
			i = pend = nh;
			continue;
		}
		k &= ~(size_t)3;
		o = k && k < WINDOW && *nshort < MAX_SHORT ?
			find_aligned(x->a, x->la, skip, b + i, k) : SIZE_MAX;
		if (o != SIZE_MAX) {
			end = o + k;
			(*npieces)++;
			(*nshort)++;
			i += k;
			pend = i;
			continue;
		}
		k = nh - i < 4 ? nh - i : 4;
		differ += k;
		i += k;
	}
	/* a last partial value (< 4 bytes) continues the last piece */
	if (i < lb && !(pend == i && end + (lb - i) <= x->la &&
			!memcmp(x->a + end, b + i, lb - i)))
		differ += lb - i;
	return differ;
}

static int cmp_pieces(const unsigned char *a, size_t la,
		      const unsigned char *b, size_t lb, size_t skip, int json)
{
	size_t pieces = 0, nshort = 0, differ;
	struct pindex x;

	if (la < skip + WINDOW || lb < skip) {
		fprintf(stderr, "incnn-cmp: files too short for --pieces\n");
		return 1;
	}
	if (pindex_build(&x, a, la, skip)) {
		fprintf(stderr, "incnn-cmp: out of memory\n");
		return 1;
	}
	differ = cover_pieces(&x, b, lb, skip, &pieces, &nshort);
	free(x.slot);
	if (json)
		printf("{\"got_bytes\":%zu,\"expected_bytes\":%zu,\"pieces\":%zu,\"short_pieces\":%zu,\"bytes_differ\":%zu}\n",
		       lb, la, pieces, nshort, differ);
	else
		printf("got %zu bytes as %zu pieces (%zu short) of %zu expected: %zu bytes differ\n",
		       lb, pieces, nshort, la, differ);
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
			usage();
			return 0;
		default:
			fputs("incnn-cmp: " USAGE, stderr);
			return 2;
		}
	}
	if (argc - optind != 2) {
		fputs("incnn-cmp: " USAGE, stderr);
		return 2;
	}
	if (load(argv[optind], &a, &la))
		return 1;
	if (load(argv[optind + 1], &b, &lb)) {
		free(a);
		return 1;
	}

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
