// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn-bench: single-thread throughput of the incnn codecs, with memcpy,
 * liblz4 and libzstd as baselines. A benchmark that prints figures; it
 * checks round trips but passes or fails nothing.
 *
 * For every data set and size, every codec and parameter (inceptionn,
 * ebq and zebq at k = 6, 8, 10, scalar and, where the CPU has it, AVX2; trunc 8
 * and 16 bits; lz4) and every baseline
 * (memcpy, liblz4 LZ4_compress_default / LZ4_decompress_safe, libzstd
 * level 1 with reused contexts) encodes and decodes the same buffer in
 * independent calls of a fixed chunk size:
 *
 *	size <= 1 MiB	one call per size-byte packet; a pool of at least
 *			POOL_BYTES of distinct packets is cycled through so
 *			that one packet's branches are not learnt
 *	size > 1 MiB	one size-byte buffer in BIG_CHUNK-byte calls
 *
 * Throughput is GB/s (1e9 bytes/s) of uncompressed bytes, encode and
 * decode separately: the median of N repeats (N = 3 at most for sizes
 * above 1 MiB), each repeat as many passes over the buffer as take at
 * least --min-ms (CLOCK_MONOTONIC; with --cpu-time the thread's CPU
 * clock, which a busy shared machine disturbs less). Every figure is also given relative
 * to memcpy at the same size and chunk. Ratio is input bytes / encoded
 * bytes; max err is the largest |decode(x) - x| over finite inputs.
 * For a codec with a quantise op (decode(encode(x)) in place, one pass:
 * what the collective library's emulation runs), "qnt" is its rate on
 * the decoded buffer (a fixed point: the same classes as the input).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4.h>
#include <zstd.h>

#include <linux/incnn.h>
#include <incnn/gen.h>
#include "codec.h"
#include "toolutil.h"

#define PROG		"incnn-bench"

#define POOL_BYTES	(128u << 10)	/* distinct data behind small sizes */
#define SMALL_MAX	(1u << 20)	/* larger sizes are split ... */
#define BIG_CHUNK	65536u		/* ... into calls of this size */
#define BIG_REPEATS	3		/* at most, for sizes > SMALL_MAX */
#define MAX_REPEATS	101
#define MAX_SIZES	16
#define MAX_SETS	32
#define MAX_FILES	8
#define ZSTD_LEVEL	1
#define LZ4_ACCEL	1

static const size_t default_sizes[] = { 1448, 65536, 64u << 20 };
static const size_t quick_sizes[] = { 1448, 65536 };

enum algo_kind {
	ALGO_MEMCPY,
	ALGO_LZ4,
	ALGO_ZSTD,
	ALGO_CODEC,
};

struct algo {
	enum algo_kind kind;
	const char *name;
	const struct incnn_codec *c;
	u8 param;
	enum incnn_simd simd;	/* the codec path measured */
	char label[16];		/* the param column */
};

struct dataset {
	char label[64];		/* the dist column */
	int dist;		/* enum incnn_dist, or -1 for a file */
	double scale;
	const char *path;
	u8 *data;
	size_t len;
};

/* One buffer cut into chunks, with room for every algorithm's output. */
struct buf {
	const u8 *in;
	size_t len, chunk, nchunks;
	u8 *enc;
	size_t slot;		/* bytes per chunk in enc */
	u32 *enc_len;
	u8 *dec;
};

struct result {
	const struct algo *a;
	const struct dataset *d;
	size_t size, chunk;
	unsigned int repeats;
	u64 in_bytes, out_bytes;
	double enc, dec, qnt;	/* GB/s; qnt NAN without a quantise op */
	double enc_ns, dec_ns, qnt_ns;	/* per call */
	double max_err;
};

struct bench {
	size_t sizes[MAX_SIZES];
	unsigned int nsizes;
	unsigned int repeats;
	double min_time;	/* seconds per repeat */
	bool json, quick;
	bool cpu_time;		/* --cpu-time: the thread's CPU clock */
	u64 seed;
	struct dataset sets[MAX_SETS];
	unsigned int nsets;
	struct algo algos[32];
	unsigned int nalgos;
	void *scratch;
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
	unsigned int rows;
	volatile u32 sink;	/* keeps results observable */
};

typedef int (*pass_fn)(struct bench *b, const struct algo *a,
		       struct buf *x);

/* one-line errors: "PROG: message", with the exit status to return */
#define usage_err(...)	tu_error(PROG, TU_EXIT_USAGE, __VA_ARGS__)
#define fail(...)	tu_error(PROG, TU_EXIT_RUNTIME, __VA_ARGS__)

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " [--quick] [--sizes N,N,...] [--repeats N] [--min-ms MS]\n"
"                   [--dist D,D,...] [--scale X,X,...] [--seed S]\n"
"                   [--file F]... [--json]\n"
"\n"
"Single-thread encode and decode throughput (GB/s of uncompressed bytes)\n"
"of the incnn codecs and of memcpy, liblz4 and libzstd level 1, and the\n"
"rate of each codec's quantise op (decode(encode(x)) in place: qnt).\n"
"\n"
"  --sizes LIST    bytes per call, multiples of 4 (K, M suffixes are binary;\n"
"                  default 1448,64K,64M); sizes above 1M are one buffer\n"
"                  encoded in 64K calls\n"
"  --repeats N     median of N repeats (default 5; at most 3 above 1M)\n"
"  --min-ms MS     minimum duration of one repeat (default 20)\n"
"  --dist LIST     synthetic data: laplace, normal, uniform, loguniform,\n"
"                  bits, or none (default: laplace:1e-3, laplace:1e-2 and\n"
"                  normal:1e-2; with --dist or --scale, every dist with\n"
"                  every scale, defaults laplace and 1e-3)\n"
"  --scale LIST    distribution scales\n"
"  --seed S        random seed for the synthetic data (default 1)\n"
"  --file F        also measure on the fp32 file F, in calls of each size\n"
"                  (may be repeated)\n"
"  --quick         sizes 1448 and 64K, 3 repeats of 2 ms (CI smoke test)\n"
"  --json          print a JSON array of result objects on stdout (the\n"
"                  header goes to stderr)\n"
"  --cpu-time      time by the thread's CPU clock instead of the wall\n"
"                  clock (less disturbed on a busy machine)\n"
"  -h, --help      this text\n");
}

/* --- set-up ----------------------------------------------------------------- */

/*
 * Page-aligned memory for every timed buffer. Relative alignment matters:
 * glibc's memcpy ("rep movsb" on some AMD parts) runs ~20x slower when
 * source and destination are a few bytes apart modulo 4096, which plain
 * malloc() produces or not depending on heap history.
 */
static void *page_alloc(size_t n)
{
	return aligned_alloc(4096, (n + 4095) / 4096 * 4096);
}

static void add_algo(struct bench *b, enum algo_kind kind, const char *name,
		     const struct incnn_codec *c, u8 param, const char *key,
		     unsigned int v)
{
	struct algo *a = &b->algos[b->nalgos++];

	a->kind = kind;
	a->name = name;
	a->c = c;
	a->param = param;
	a->simd = INCNN_SIMD_NONE;
	/* the setting as key=value, or "-" for none */
	if (key)
		snprintf(a->label, sizeof(a->label), "%s=%u", key, v);
	else
		snprintf(a->label, sizeof(a->label), "-");
}

static void init_algos(struct bench *b)
{
	static const u8 ks[] = { 6, 8, 10 };
	static const struct incnn_codec *const bounded[] = {
		&incnn_codec_inceptionn, &incnn_codec_ebq, &incnn_codec_zebq,
	};
	enum incnn_simd simd = incnn_simd_level();
	unsigned int i;

	add_algo(b, ALGO_MEMCPY, "memcpy", NULL, 0, NULL, 0);
	add_algo(b, ALGO_LZ4, "liblz4", NULL, 0, "acc", LZ4_ACCEL);
	add_algo(b, ALGO_ZSTD, "zstd", NULL, 0, "lvl", ZSTD_LEVEL);
	/* each codec and k: scalar, then the SIMD path if there is one */
	for (i = 0; i < 2 * sizeof(ks) * ARRAY_SIZE(bounded); i++) {
		const struct incnn_codec *c = bounded[i / (2 * sizeof(ks))];
		u8 k = ks[i / 2 % sizeof(ks)];

		add_algo(b, ALGO_CODEC, c->name, c, k, "k", k);
		if (i % 2 && !simd)
			b->nalgos--;
		else
			b->algos[b->nalgos - 1].simd = i % 2 ? simd : 0;
	}
	add_algo(b, ALGO_CODEC, "trunc", &incnn_codec_trunc, 8, "bits", 8);
	add_algo(b, ALGO_CODEC, "trunc", &incnn_codec_trunc, 16, "bits",
		 16);
	add_algo(b, ALGO_CODEC, "lz4", &incnn_codec_lz4, 0, NULL, 0);
}

static size_t algo_bound(const struct algo *a, size_t len)
{
	switch (a->kind) {
	case ALGO_MEMCPY:
		return len;
	case ALGO_LZ4:
		return LZ4_compressBound(len);
	case ALGO_ZSTD:
		return ZSTD_compressBound(len);
	case ALGO_CODEC:
		return a->c->bound(len);
	}
	return 0;
}

static int parse_sizes(struct bench *b, const char *arg)
{
	char *copy = strdup(arg), *tok, *save = NULL;
	int r = 0;

	if (!copy)
		return fail("out of memory");
	b->nsizes = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (tu_parse_u64(tok, &v) || v < 4 || v % 4 ||
		    v > (1ull << 30)) {
			r = usage_err("--sizes: '%s' is not a multiple of 4 from 4 to 1G",
				      tok);
			break;
		}
		if (b->nsizes == MAX_SIZES) {
			r = usage_err("--sizes: at most %d sizes", MAX_SIZES);
			break;
		}
		b->sizes[b->nsizes++] = v;
	}
	if (!r && !b->nsizes)
		r = usage_err("--sizes: empty list");
	free(copy);
	return r;
}

/* Split a comma list into at most @max strings inside @copy. */
static int split_list(char *copy, char **out, unsigned int max,
		      unsigned int *n, const char *opt)
{
	char *tok, *save = NULL;

	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == max)
			return usage_err("%s: too many values", opt);
		out[(*n)++] = tok;
	}
	if (!*n)
		return usage_err("%s: empty list", opt);
	return 0;
}

static int add_synthetic(struct bench *b, int dist, double scale)
{
	struct dataset *d;

	if (b->nsets == MAX_SETS)
		return usage_err("too many data sets (at most %d)", MAX_SETS);
	d = &b->sets[b->nsets++];
	memset(d, 0, sizeof(*d));
	d->dist = dist;
	d->scale = scale;
	if (dist == INCNN_DIST_BITS)
		snprintf(d->label, sizeof(d->label), "bits");
	else
		snprintf(d->label, sizeof(d->label), "%s:%g",
			 incnn_dist_name(dist), scale);
	return 0;
}

static int setup_synthetic(struct bench *b, const char *dists,
			   const char *scales)
{
	char *dcopy, *scopy, *dv[MAX_SETS], *sv[MAX_SETS];
	unsigned int nd, ns, i, j;
	int r;

	if (!dists && !scales) {
		r = add_synthetic(b, INCNN_DIST_LAPLACE, 1e-3);
		if (!r)
			r = add_synthetic(b, INCNN_DIST_LAPLACE, 1e-2);
		if (!r)
			r = add_synthetic(b, INCNN_DIST_NORMAL, 1e-2);
		return r;
	}
	dcopy = strdup(dists ? dists : "laplace");
	scopy = strdup(scales ? scales : "1e-3");
	if (!dcopy || !scopy) {
		r = fail("out of memory");
		goto out;
	}
	r = split_list(dcopy, dv, MAX_SETS, &nd, "--dist");
	if (!r)
		r = split_list(scopy, sv, MAX_SETS, &ns, "--scale");
	for (i = 0; !r && i < nd; i++) {
		int dist;

		if (!strcmp(dv[i], "none"))
			continue;
		dist = incnn_dist_parse(dv[i]);
		if (dist < 0) {
			r = usage_err("unknown --dist '%s' (known: laplace, normal, uniform, loguniform, bits, none)",
				      dv[i]);
			break;
		}
		for (j = 0; !r && j < ns; j++) {
			double scale;

			if (tu_parse_double(sv[j], &scale) || !(scale > 0)) {
				r = usage_err("--scale %s: must be a positive number",
					      sv[j]);
				break;
			}
			r = add_synthetic(b, dist, scale);
			if (dist == INCNN_DIST_BITS)
				break;	/* scale does not matter */
		}
	}
out:
	free(dcopy);
	free(scopy);
	return r;
}

static int add_file(struct bench *b, const char *path)
{
	struct dataset *d;
	const char *base = strrchr(path, '/');

	if (b->nsets == MAX_SETS)
		return usage_err("too many data sets (at most %d)", MAX_SETS);
	d = &b->sets[b->nsets++];
	memset(d, 0, sizeof(*d));
	d->dist = -1;
	d->path = path;
	snprintf(d->label, sizeof(d->label), "file:%s", base ? base + 1 : path);
	return 0;
}

static int read_file(struct dataset *d)
{
	size_t cap = 1 << 20;
	int fd = open(d->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	u8 *p;

	if (fd < 0)
		return fail("cannot open %s: %s", d->path, strerror(errno));
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = st.st_size + 1;
	d->len = 0;
	d->data = malloc(cap);
	for (;;) {
		ssize_t r;

		if (!d->data) {
			close(fd);
			return fail("%s: out of memory", d->path);
		}
		r = tu_read_full(fd, d->data + d->len, cap - d->len);
		if (r < 0) {
			close(fd);
			return fail("cannot read %s: %s", d->path,
				    strerror(errno));
		}
		d->len += r;
		if (d->len < cap)
			break;
		cap *= 2;
		p = realloc(d->data, cap);
		if (!p)
			free(d->data);
		d->data = p;
	}
	close(fd);
	if (!d->len || d->len % 4)
		return fail("%s: %zu bytes is not a positive whole number of fp32 values",
			    d->path, d->len);
	p = page_alloc(d->len);
	if (!p)
		return fail("%s: out of memory", d->path);
	memcpy(p, d->data, d->len);
	free(d->data);
	d->data = p;
	return 0;
}

static int gen_data(struct bench *b, struct dataset *d, size_t len)
{
	struct incnn_rng rng;

	d->data = page_alloc(len);
	if (!d->data)
		return fail("out of memory for %zu bytes of %s data", len,
			    d->label);
	d->len = len;
	incnn_rng_seed(&rng, b->seed);
	incnn_gen_f32(&rng, d->dist, d->scale, (float *)d->data, len / 4);
	return 0;
}

/* Bytes of data behind size @size for synthetic data, and its chunk. */
static size_t synth_len(size_t size, size_t *chunk)
{
	size_t npk;

	if (size > SMALL_MAX) {
		*chunk = BIG_CHUNK;
		return size;
	}
	*chunk = size;
	npk = (POOL_BYTES + size - 1) / size;
	return npk * size;
}

static int buf_init(struct bench *b, struct buf *x, const u8 *in, size_t len,
		    size_t chunk)
{
	unsigned int i;

	memset(x, 0, sizeof(*x));
	x->in = in;
	x->len = len;
	x->chunk = chunk;
	x->nchunks = (len + chunk - 1) / chunk;
	for (i = 0; i < b->nalgos; i++) {
		size_t s = algo_bound(&b->algos[i], chunk);

		if (s > x->slot)
			x->slot = s;
	}
	x->slot = (x->slot + 63) / 64 * 64;
	x->enc = page_alloc(x->nchunks * x->slot);
	x->enc_len = calloc(x->nchunks, sizeof(*x->enc_len));
	x->dec = page_alloc(len);
	if (!x->enc || !x->enc_len || !x->dec)
		return fail("out of memory for a %zu-byte buffer", len);
	/* fault the pages in before anything is timed */
	memset(x->enc, 0, x->nchunks * x->slot);
	memset(x->dec, 0, len);
	return 0;
}

static void buf_free(struct buf *x)
{
	free(x->enc);
	free(x->enc_len);
	free(x->dec);
}

/* --- the timed work ---------------------------------------------------------- */

static inline void clobber(const void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static inline size_t chunk_len(const struct buf *x, size_t i)
{
	size_t off = i * x->chunk;

	return x->len - off < x->chunk ? x->len - off : x->chunk;
}

static int enc_pass(struct bench *b, const struct algo *a, struct buf *x)
{
	size_t i;

	for (i = 0; i < x->nchunks; i++) {
		const u8 *src = x->in + i * x->chunk;
		u8 *dst = x->enc + i * x->slot;
		size_t n = chunk_len(x, i);
		ssize_t r;

		switch (a->kind) {
		case ALGO_MEMCPY:
			memcpy(dst, src, n);
			r = n;
			break;
		case ALGO_LZ4:
			r = LZ4_compress_default((const char *)src,
						 (char *)dst, n, x->slot);
			if (r <= 0)
				r = -1;
			break;
		case ALGO_ZSTD: {
			size_t z = ZSTD_compressCCtx(b->cctx, dst, x->slot, src,
						     n, ZSTD_LEVEL);

			r = ZSTD_isError(z) ? -1 : (ssize_t)z;
			break;
		}
		case ALGO_CODEC:
		default:
			r = incnn_codec_encode(a->c, a->simd, a->param, src, n,
					       dst, x->slot, b->scratch, NULL);
			break;
		}
		if (r < 0)
			return fail("%s %s: encode of chunk %zu (%zu bytes) failed",
				    a->name, a->label, i, n);
		x->enc_len[i] = r;
		clobber(dst);
	}
	return 0;
}

static int dec_pass(struct bench *b, const struct algo *a, struct buf *x)
{
	size_t i;

	for (i = 0; i < x->nchunks; i++) {
		const u8 *src = x->enc + i * x->slot;
		u8 *dst = x->dec + i * x->chunk;
		size_t n = chunk_len(x, i), len = x->enc_len[i];
		bool ok;

		switch (a->kind) {
		case ALGO_MEMCPY:
			memcpy(dst, src, n);
			ok = true;
			break;
		case ALGO_LZ4:
			ok = LZ4_decompress_safe((const char *)src, (char *)dst,
						 len, n) == (int)n;
			break;
		case ALGO_ZSTD:
			ok = ZSTD_decompressDCtx(b->dctx, dst, n, src, len) ==
			     n;
			break;
		case ALGO_CODEC:
		default:
			ok = !incnn_codec_decode(a->c, a->simd, a->param, src,
						 len, dst, n);
			break;
		}
		if (!ok)
			return fail("%s %s: decode of chunk %zu failed",
				    a->name, a->label, i);
		clobber(dst);
	}
	return 0;
}

/* the quantise op in place on the decoded chunks (floats only) */
static int qnt_pass(struct bench __always_unused *b, const struct algo *a,
		    struct buf *x)
{
#ifdef INCNN_CODEC_QUANTISE
	size_t i;

	for (i = 0; i < x->nchunks; i++) {
		u8 *p = x->dec + i * x->chunk;

		if (incnn_codec_quantise(a->c, a->simd, a->param, p,
					 chunk_len(x, i) & ~(size_t)3))
			return fail("%s %s: quantise of chunk %zu failed",
				    a->name, a->label, i);
		clobber(p);
	}
	return 0;
#else
	(void)x;
	return fail("%s: no quantise op in this tree", a->name);
#endif
}

static bool has_quantise(const struct algo *a)
{
#ifdef INCNN_CODEC_QUANTISE
	return a->kind == ALGO_CODEC && a->c->quantise;
#else
	(void)a;
	return false;
#endif
}

/* Seconds for @iters passes, or a negative value on error. */
static double time_passes(struct bench *b, const struct algo *a,
			  struct buf *x, pass_fn fn, unsigned long iters)
{
	double (*now)(void) = b->cpu_time ? tu_cpu_now : tu_now;
	double t0 = now();
	unsigned long i;

	for (i = 0; i < iters; i++)
		if (fn(b, a, x))
			return -1;
	b->sink += x->enc[0] + x->dec[x->len - 1];
	return now() - t0;
}

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Median GB/s over @repeats repeats of at least b->min_time each. */
static int measure(struct bench *b, const struct algo *a, struct buf *x,
		   pass_fn fn, unsigned int repeats, double *gbps,
		   double *ns_call)
{
	double rates[MAX_REPEATS], t;
	unsigned long iters = 1;
	unsigned int r;

	/* calibrate (and warm up) */
	for (;;) {
		double grow;

		t = time_passes(b, a, x, fn, iters);
		if (t < 0)
			return TU_EXIT_RUNTIME;
		if (t >= b->min_time)
			break;
		grow = t > 0 ? 1.2 * b->min_time / t : 100;
		if (grow < 2)
			grow = 2;
		if (grow > 100)
			grow = 100;
		iters = (unsigned long)ceil(iters * grow);
	}
	for (r = 0; r < repeats; r++) {
		t = time_passes(b, a, x, fn, iters);
		if (t < 0)
			return TU_EXIT_RUNTIME;
		rates[r] = (double)x->len * iters / t;
	}
	qsort(rates, repeats, sizeof(rates[0]), cmp_double);
	t = repeats % 2 ? rates[repeats / 2] :
	    (rates[repeats / 2 - 1] + rates[repeats / 2]) / 2;
	*gbps = t / 1e9;
	*ns_call = (double)x->len / x->nchunks / t * 1e9;
	return 0;
}

/* Compare x->dec with x->in: max |error| over finite inputs. */
static int check_output(const struct algo *a, const struct buf *x,
			double *max_err)
{
	size_t i;

	*max_err = 0;
	if (a->kind != ALGO_CODEC || !a->c->lossy) {
		if (memcmp(x->in, x->dec, x->len))
			return fail("%s: lossless round trip changed the data",
				    a->name);
		return 0;
	}
	for (i = 0; i + 4 <= x->len; i += 4) {
		u32 u = tu_get_le32(x->in + i), v = tu_get_le32(x->dec + i);
		double err;

		if (tu_f32_nonfinite(u))
			continue;
		err = fabs((double)tu_u2f(v) - (double)tu_u2f(u));
		if (!(err <= *max_err))
			*max_err = err;
	}
	return 0;
}

/* --- output ------------------------------------------------------------------- */

static void fmt_size(char *s, size_t len, size_t v)
{
	if (v >= (1u << 30) && !(v % (1u << 30)))
		snprintf(s, len, "%zuG", v >> 30);
	else if (v >= (1u << 20) && !(v % (1u << 20)))
		snprintf(s, len, "%zuM", v >> 20);
	else if (v >= (1u << 10) && !(v % (1u << 10)))
		snprintf(s, len, "%zuK", v >> 10);
	else
		snprintf(s, len, "%zu", v);
}

static void read_cpu_model(char *buf, size_t len)
{
	static const char *const keys[] = { "model name", "Hardware",
					    "cpu model", "Processor" };
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	unsigned int i;

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *v;

		if (!colon)
			continue;
		for (i = 0; i < ARRAY_SIZE(keys); i++)
			if (!strncmp(line, keys[i], strlen(keys[i])))
				break;
		if (i == ARRAY_SIZE(keys))
			continue;
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
		break;
	}
	fclose(f);
}

static const char *compiler_name(void)
{
#if defined(__clang__)
	return "clang " __VERSION__;
#elif defined(__GNUC__)
	return "gcc " __VERSION__;
#else
	return __VERSION__;
#endif
}

static void print_header(struct bench *b)
{
	FILE *f = b->json ? stderr : stdout;
	char cpu[256], s[32];
	unsigned int i;

	read_cpu_model(cpu, sizeof(cpu));
	fprintf(f, "incnn-bench: single-thread codec throughput, GB/s = 1e9 uncompressed bytes/s\n");
	fprintf(f, "cpu:       %s\n", cpu);
	fprintf(f, "compiler:  %s\n", compiler_name());
	fprintf(f, "libraries: liblz4 %s, libzstd %s\n", LZ4_versionString(),
		ZSTD_versionString());
	fprintf(f, "simd:      %s (the path column; INCNN_SIMD=0 forces scalar)\n",
		incnn_simd_name(incnn_simd_level()));
	fprintf(f, "timing:    median of %u repeats (at most %u above 1M), each >= %.0f ms, %s\n",
		b->repeats, BIG_REPEATS, b->min_time * 1e3,
		b->cpu_time ? "CLOCK_THREAD_CPUTIME_ID" : "CLOCK_MONOTONIC");
	fprintf(f, "sizes:    ");
	for (i = 0; i < b->nsizes; i++) {
		fmt_size(s, sizeof(s), b->sizes[i]);
		fprintf(f, " %s", s);
	}
	fprintf(f, " (up to 1M: one call per packet, cycling through >= %uK of packets;\n"
		   "           above: one buffer in %uK calls)\n",
		POOL_BYTES >> 10, BIG_CHUNK >> 10);
	if (!b->json)
		fprintf(f, "\n%-10s %-6s %-7s %-14s %8s %6s %7s %8s %8s %8s %8s %9s %8s %8s\n",
			"codec", "path", "param", "dist", "size", "chunk",
			"ratio",
			"enc GB/s", "dec GB/s", "enc/mcpy", "dec/mcpy",
			"max err", "qnt GB/s", "qnt/mcpy");
	fflush(f);
}

static void print_result(struct bench *b, const struct result *r,
			 const struct result *base)
{
	double ratio = r->out_bytes ? (double)r->in_bytes / r->out_bytes :
		       NAN;
	double er = r->enc / base->enc, dr = r->dec / base->dec;
	const char *path = r->a->kind != ALGO_CODEC ? "-" :
			   r->a->simd ? incnn_simd_name(r->a->simd) : "scalar";
	char sz[32], ch[32];

	if (b->json) {
		fputs(b->rows ? ",\n" : "[\n", stdout);
		fprintf(stdout, "{\"codec\":");
		tu_json_str(stdout, r->a->name);
		fprintf(stdout, ",\"param\":");
		tu_json_str(stdout, r->a->label);
		fprintf(stdout, ",\"path\":");
		tu_json_str(stdout, path);
		fprintf(stdout, ",\"dist\":");
		tu_json_str(stdout, r->d->dist < 0 ? "file" :
				    incnn_dist_name(r->d->dist));
		fprintf(stdout, ",\"scale\":");
		if (r->d->dist < 0)
			fputs("null", stdout);
		else
			tu_json_num(stdout, r->d->scale);
		fprintf(stdout, ",\"file\":");
		if (r->d->dist < 0)
			tu_json_str(stdout, r->d->path);
		else
			fputs("null", stdout);
		fprintf(stdout, ",\"size\":%zu,\"chunk\":%zu,\"in_bytes\":%llu,"
			"\"out_bytes\":%llu,\"ratio\":", r->size, r->chunk,
			(unsigned long long)r->in_bytes,
			(unsigned long long)r->out_bytes);
		tu_json_num(stdout, ratio);
		fprintf(stdout, ",\"enc_gbps\":");
		tu_json_num(stdout, r->enc);
		fprintf(stdout, ",\"dec_gbps\":");
		tu_json_num(stdout, r->dec);
		fprintf(stdout, ",\"enc_vs_memcpy\":");
		tu_json_num(stdout, er);
		fprintf(stdout, ",\"dec_vs_memcpy\":");
		tu_json_num(stdout, dr);
		fprintf(stdout, ",\"enc_ns_per_call\":");
		tu_json_num(stdout, r->enc_ns);
		fprintf(stdout, ",\"dec_ns_per_call\":");
		tu_json_num(stdout, r->dec_ns);
		fprintf(stdout, ",\"max_abs_err\":");
		tu_json_num(stdout, r->max_err);
		fprintf(stdout, ",\"qnt_gbps\":");
		tu_json_num(stdout, r->qnt);
		fprintf(stdout, ",\"qnt_vs_memcpy\":");
		tu_json_num(stdout, r->qnt / base->enc);
		fprintf(stdout, ",\"qnt_ns_per_call\":");
		tu_json_num(stdout, r->qnt_ns);
		fprintf(stdout, ",\"repeats\":%u}", r->repeats);
	} else {
		fmt_size(sz, sizeof(sz), r->size);
		fmt_size(ch, sizeof(ch), r->chunk);
		fprintf(stdout, "%-10s %-6s %-7s %-14s %8s %6s %7.3f %8.2f %8.2f %8.3f %8.3f %9.3g",
			r->a->name, path, r->a->label, r->d->label, sz, ch,
			ratio,
			r->enc, r->dec, er, dr, r->max_err);
		if (isnan(r->qnt))
			fprintf(stdout, " %8s %8s\n", "-", "-");
		else
			fprintf(stdout, " %8.2f %8.3f\n", r->qnt,
				r->qnt / base->enc);
	}
	b->rows++;
	fflush(stdout);
}

/* --- driver -------------------------------------------------------------------- */

/* Every algorithm on one buffer. */
static int run_buffer(struct bench *b, const struct dataset *d, size_t size,
		      const u8 *in, size_t len, size_t chunk)
{
	unsigned int repeats = b->repeats, i;
	struct result base = { 0 }, r;
	struct buf x;
	int status;

	if (size > SMALL_MAX && repeats > BIG_REPEATS)
		repeats = BIG_REPEATS;
	status = buf_init(b, &x, in, len, chunk);
	for (i = 0; !status && i < b->nalgos; i++) {
		const struct algo *a = &b->algos[i];
		size_t j;

		memset(&r, 0, sizeof(r));
		r.a = a;
		r.d = d;
		r.size = size;
		r.chunk = chunk;
		r.repeats = repeats;
		r.in_bytes = len;
		status = measure(b, a, &x, enc_pass, repeats, &r.enc,
				 &r.enc_ns);
		if (status)
			break;
		for (j = 0; j < x.nchunks; j++)
			r.out_bytes += x.enc_len[j];
		status = measure(b, a, &x, dec_pass, repeats, &r.dec,
				 &r.dec_ns);
		if (!status)
			status = check_output(a, &x, &r.max_err);
		r.qnt = r.qnt_ns = NAN;
		if (!status && has_quantise(a))
			status = measure(b, a, &x, qnt_pass, repeats, &r.qnt,
					 &r.qnt_ns);
		if (status)
			break;
		if (a->kind == ALGO_MEMCPY)
			base = r;
		print_result(b, &r, &base);
	}
	buf_free(&x);
	if (!b->json && !status)
		putchar('\n');
	return status;
}

static int run_dataset(struct bench *b, struct dataset *d)
{
	size_t chunks_done[MAX_SIZES], chunk, len, max_len = 0;
	unsigned int i, j, ndone = 0;
	int status;

	if (d->dist < 0) {
		/* main() read the file before the first measurement */
		status = d->data ? 0 : read_file(d);
		for (i = 0; !status && i < b->nsizes; i++) {
			chunk = b->sizes[i] > SMALL_MAX ? BIG_CHUNK :
				b->sizes[i];
			if (chunk > d->len)
				chunk = d->len;
			for (j = 0; j < ndone; j++)
				if (chunks_done[j] == chunk)
					break;
			if (j < ndone)
				continue;
			chunks_done[ndone++] = chunk;
			status = run_buffer(b, d, d->len, d->data, d->len,
					    chunk);
		}
		return status;
	}

	for (i = 0; i < b->nsizes; i++) {
		len = synth_len(b->sizes[i], &chunk);
		if (len > max_len)
			max_len = len;
	}
	status = gen_data(b, d, max_len);
	for (i = 0; !status && i < b->nsizes; i++) {
		len = synth_len(b->sizes[i], &chunk);
		status = run_buffer(b, d, b->sizes[i], d->data, len, chunk);
	}
	return status;
}

enum {
	OPT_SIZES = 256,
	OPT_REPEATS,
	OPT_MIN_MS,
	OPT_DIST,
	OPT_SCALE,
	OPT_SEED,
	OPT_FILE,
	OPT_QUICK,
	OPT_JSON,
	OPT_CPU_TIME,
};

static const struct option long_opts[] = {
	{ "sizes", required_argument, NULL, OPT_SIZES },
	{ "repeats", required_argument, NULL, OPT_REPEATS },
	{ "min-ms", required_argument, NULL, OPT_MIN_MS },
	{ "dist", required_argument, NULL, OPT_DIST },
	{ "scale", required_argument, NULL, OPT_SCALE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "file", required_argument, NULL, OPT_FILE },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "cpu-time", no_argument, NULL, OPT_CPU_TIME },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* --sizes or the defaults; --quick's shorter defaults. */
static int bench_sizes(struct bench *b, const char *sizes, bool have_repeats,
		       bool have_min)
{
	const size_t *s = b->quick ? quick_sizes : default_sizes;
	unsigned int n = b->quick ? ARRAY_SIZE(quick_sizes) :
		ARRAY_SIZE(default_sizes), i;
	int r;

	if (sizes) {
		r = parse_sizes(b, sizes);
		if (r)
			return r;
	} else {
		for (i = 0; i < n; i++)
			b->sizes[i] = s[i];
		b->nsizes = n;
	}
	if (b->quick && !have_repeats)
		b->repeats = 3;
	if (b->quick && !have_min)
		b->min_time = 2e-3;
	return 0;
}

/* --repeats, --min-ms or --seed (@c) of @arg: 0 or usage_err()'s status */
static int parse_number(struct bench *b, int c, const char *arg,
			bool *have_repeats, bool *have_min)
{
	uint64_t v;
	double ms;

	switch (c) {
	case OPT_REPEATS:
		if (tu_parse_u64(arg, &v) || !v || v > MAX_REPEATS)
			return usage_err("--repeats %s: must be 1..%d", arg,
					 MAX_REPEATS);
		b->repeats = v;
		*have_repeats = true;
		return 0;
	case OPT_MIN_MS:
		if (tu_parse_double(arg, &ms) || ms < 0 || ms > 60000)
			return usage_err("--min-ms %s: must be 0..60000", arg);
		b->min_time = ms * 1e-3;
		*have_min = true;
		return 0;
	default:
		if (tu_parse_u64(arg, &b->seed))
			return usage_err("--seed %s: must be a non-negative integer",
					 arg);
		return 0;
	}
}

static int parse_args(struct bench *b, int argc, char **argv)
{
	const char *dists = NULL, *scales = NULL, *sizes = NULL;
	const char *files[MAX_FILES];
	bool have_repeats = false, have_min = false;
	unsigned int nfiles = 0, i;
	int c, r;

	b->repeats = 5;
	b->min_time = 20e-3;
	b->seed = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			exit(0);
		case OPT_SIZES:
			sizes = optarg;
			break;
		case OPT_REPEATS:
		case OPT_MIN_MS:
		case OPT_SEED:
			r = parse_number(b, c, optarg, &have_repeats, &have_min);
			if (r)
				return r;
			break;
		case OPT_DIST:
			dists = optarg;
			break;
		case OPT_SCALE:
			scales = optarg;
			break;
		case OPT_FILE:
			if (nfiles == MAX_FILES)
				return usage_err("at most %d --file options",
						 MAX_FILES);
			files[nfiles++] = optarg;
			break;
		case OPT_QUICK:
			b->quick = true;
			break;
		case OPT_JSON:
			b->json = true;
			break;
		case OPT_CPU_TIME:
			b->cpu_time = true;
			break;
		case ':':
		case '?':
		default:
			return tu_getopt_error(PROG, c, argv);
		}
	}
	if (optind < argc)
		return usage_err("unexpected argument '%s'", argv[optind]);

	r = bench_sizes(b, sizes, have_repeats, have_min);
	if (r)
		return r;
	r = setup_synthetic(b, dists, scales);
	for (i = 0; !r && i < nfiles; i++)
		r = add_file(b, files[i]);
	if (!r && !b->nsets)
		r = usage_err("no data: --dist none and no --file");
	return r;
}

int main(int argc, char **argv)
{
	struct bench *b = calloc(1, sizeof(*b));
	unsigned int i;
	int status;

	if (!b)
		return fail("out of memory");
	init_algos(b);
	status = parse_args(b, argc, argv);
	/* every --file is read and checked before anything is measured */
	for (i = 0; !status && i < b->nsets; i++)
		if (b->sets[i].dist < 0)
			status = read_file(&b->sets[i]);
	if (status)
		goto out;

	b->scratch = tu_scratch_alloc();
	b->cctx = ZSTD_createCCtx();
	b->dctx = ZSTD_createDCtx();
	if (!b->scratch || !b->cctx || !b->dctx) {
		status = fail("out of memory");
		goto out;
	}
	print_header(b);
	for (i = 0; !status && i < b->nsets; i++) {
		status = run_dataset(b, &b->sets[i]);
		free(b->sets[i].data);
		b->sets[i].data = NULL;
	}
	if (b->json && b->rows)
		fputs("\n]\n", stdout);
	else if (b->json)
		fputs("[]\n", stdout);
	if (!status && (fflush(stdout) || ferror(stdout)))
		status = fail("cannot write the results: %s", strerror(errno));
out:
	free(b->scratch);
	ZSTD_freeCCtx(b->cctx);
	ZSTD_freeDCtx(b->dctx);
	for (i = 0; i < b->nsets; i++)
		free(b->sets[i].data);
	free(b);
	return status;
}
