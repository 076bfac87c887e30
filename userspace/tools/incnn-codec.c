// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * incnn-codec: run the incnn codecs over fp32 files.
 *
 *	incnn-codec encode    --codec NAME [options] IN OUT
 *	incnn-codec decode    IN OUT
 *	incnn-codec roundtrip --codec NAME [options] IN OUT
 *	incnn-codec gen       [--dist D] [--scale X] --count N [--seed S] OUT
 *
 * IN and OUT are raw little-endian fp32 files ("-" is stdin/stdout);
 * encode writes, and decode reads, the container below. roundtrip writes
 * decode(encode(IN)), byte for byte what encode followed by decode gives,
 * and reports ratio, error and the share of values per size class.
 *
 * Container layout (all integers little-endian):
 *
 *	header, 36 bytes
 *	  off len
 *	    0   4  magic "INCN"
 *	    4   1  version, CONT_VERSION (1)
 *	    5   1  codec id (enum incnn_codec_id)
 *	    6   1  codec parameter (k for 2^-k codecs, bits for trunc, 0)
 *	    7   1  flags, 0
 *	    8   4  chunk_len: input bytes per chunk, a multiple of 4 in
 *		   CHUNK_MIN..CHUNK_MAX
 *	   12   4  reserved, 0
 *	   16   8  orig_len: input bytes (the element count is orig_len / 4;
 *		   float codecs need a multiple of 4, lz4 takes any length)
 *	   24   8  body_len: bytes after the header, that is the sum of the
 *		   chunk records' lengths
 *	   32   4  CRC-32 (zlib's) of header bytes 0..31
 *
 *	then ceil(orig_len / chunk_len) chunk records, in input order
 *	    0   4  blen: codec body length, at most codec->bound(input len)
 *	    4   4  CRC-32 of record bytes 0..3 followed by the body
 *	    8 blen body: the codec's encode of the chunk's input bytes
 *
 * Chunk i holds input bytes [i * chunk_len, min((i + 1) * chunk_len,
 * orig_len)). The codecs work per packet, so every chunk is encoded on
 * its own like a packet payload; the default chunk is 64 KiB (a wire
 * frame carries at most 65535 bytes, --chunk 1448 models one TCP segment
 * of a 1500-byte MTU). Bodies are stored even when they are not smaller
 * than their input: unlike the wire, the container has no raw fallback.
 * Nothing after the last record is allowed.
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

#include <linux/incnn.h>
#include <incnn/gen.h>
#include "codec.h"
#include "toolutil.h"

#define PROG		"incnn-codec"

#define CONT_MAGIC	"INCN"
#define CONT_VERSION	1
#define CONT_HDR_LEN	36
#define REC_HDR_LEN	8

#define CHUNK_MIN	4
#define CHUNK_MAX	(1u << 20)
#define CHUNK_DEFAULT	65536

#define GEN_BLOCK	16384	/* floats per write for gen */

enum cmd {
	CMD_ENCODE,
	CMD_DECODE,
	CMD_ROUNDTRIP,
	CMD_GEN,
};

static const char *const cmd_names[] = {
	[CMD_ENCODE] = "encode",
	[CMD_DECODE] = "decode",
	[CMD_ROUNDTRIP] = "roundtrip",
	[CMD_GEN] = "gen",
};

struct opts {
	enum cmd cmd;
	const struct incnn_codec *codec;
	u8 param;
	unsigned int k;			/* --bound */
	unsigned int bits;		/* --bits */
	size_t chunk;			/* --chunk */
	bool have_k, have_bits, have_chunk, json;
	/* gen */
	int dist;
	double scale;
	u64 count, seed;
	bool have_dist, have_scale, have_count, have_seed;
	const char *in, *out;
};

/* What encode and roundtrip report. */
struct report {
	u64 in_bytes;
	u64 body_bytes;			/* sum of codec body lengths */
	u64 cont_bytes;			/* the whole container */
	u64 chunks;
	struct incnn_hist hist;
	/* roundtrip */
	u64 values, finite, nonfinite, nonfinite_bad, over_bound;
	double max_err, sum_err;
};

/* Buffers for one chunk. */
struct work {
	size_t chunk;
	u8 *in;				/* chunk bytes of input */
	u8 *rec;			/* a chunk record */
	size_t rec_cap;
	u8 *dec;			/* chunk bytes of output */
	void *scratch;
};

/* The container being written by encode. */
struct sink {
	int fd;
	bool direct;		/* seekable: stream, then pwrite the header */
	off_t start;
	u8 *mem;		/* otherwise: the whole container in memory */
	size_t len, cap;
};

struct file {
	int fd;
	const char *name;
	bool is_std;
	bool unlink_on_error;	/* a regular file we created or truncated */
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: " PROG " encode    --codec NAME [--bound 2^-K | --bits N] [--chunk BYTES]\n"
"                          [--json] IN OUT\n"
"       " PROG " decode    [--codec NAME [--bound 2^-K | --bits N]] IN OUT\n"
"       " PROG " roundtrip --codec NAME [--bound 2^-K | --bits N] [--chunk BYTES]\n"
"                          [--json] IN OUT\n"
"       " PROG " gen       [--dist NAME] [--scale X] --count N [--seed S] OUT\n"
"\n"
"IN and OUT are raw little-endian fp32 files, '-' for stdin/stdout.\n"
"  encode     write IN as an incnn container (header + 64 KiB chunks)\n"
"  decode     check a container and write the fp32 data it holds\n"
"  roundtrip  write decode(encode(IN)) and report ratio, error and the\n"
"             share of values sent as 0/8/16/32 bits (on stdout, or on\n"
"             stderr when OUT is '-')\n"
"  gen        write N synthetic fp32 values (deterministic for a seed)\n"
"\n"
"  -c, --codec NAME    inceptionn, ebq, zebq, trunc or lz4 (decode: check\n"
"                      that the container holds this codec)\n"
"  -b, --bound B       error bound for inceptionn, ebq and zebq: 2^-K, K, or\n"
"                      an exact decimal such as 0.0009765625; K = 1..30\n"
"                      (default 2^-10)\n"
"      --bits N        bits kept by trunc: 8, 16 or 24 (default 16)\n"
"      --chunk BYTES   input bytes per independently encoded chunk, a\n"
"                      multiple of 4 from 4 to 1M (default 64K; 1448 is\n"
"                      one TCP segment; K and M suffixes are binary)\n"
"  -j, --json          print the report as one JSON object on stdout\n"
"      --dist NAME     gen: laplace (default), normal, uniform,\n"
"                      loguniform or bits\n"
"      --scale X       gen: the distribution's scale (default 1e-3)\n"
"  -n, --count N       gen: number of fp32 values\n"
"      --seed S        gen: random seed (default 1)\n"
"  -h, --help          this text\n"
"\n"
"Exit status: 0 success, 1 runtime error (I/O, bad container), 2 usage.\n");
}

/* one-line errors: "PROG: message", with the exit status to return */
#define usage_err(...)	tu_error(PROG, TU_EXIT_USAGE, __VA_ARGS__)
#define fail(...)	tu_error(PROG, TU_EXIT_RUNTIME, __VA_ARGS__)

/* --- options ------------------------------------------------------------ */

enum {
	OPT_BITS = 256,
	OPT_CHUNK,
	OPT_DIST,
	OPT_SCALE,
	OPT_SEED,
};

static const struct option long_opts[] = {
	{ "codec", required_argument, NULL, 'c' },
	{ "bound", required_argument, NULL, 'b' },
	{ "bits", required_argument, NULL, OPT_BITS },
	{ "chunk", required_argument, NULL, OPT_CHUNK },
	{ "json", no_argument, NULL, 'j' },
	{ "dist", required_argument, NULL, OPT_DIST },
	{ "scale", required_argument, NULL, OPT_SCALE },
	{ "count", required_argument, NULL, 'n' },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_codec(const char *name, struct opts *o)
{
	char names[128];

	o->codec = incnn_codec_find(name);
	if (o->codec)
		return 0;
	tu_codec_names(names, sizeof(names));
	return usage_err("unknown codec '%s' (known: %s)", name, names);
}

static int parse_option(int c, const char *arg, struct opts *o)
{
	char range[32];
	uint64_t v;
	int r;

	switch (c) {
	case 'c':
		return parse_codec(arg, o);
	case 'b':
		r = tu_parse_bound(arg, &o->k);
		if (r == -ERANGE)
			return usage_err("--bound %s is out of range: it must be 2^-%d .. 2^-%d",
					 arg, INCNN_BOUND_MIN_K,
					 INCNN_BOUND_MAX_K);
		if (r)
			return usage_err("--bound %s is not an exact power of two 2^-K (write 2^-K, K, or e.g. 0.0009765625)",
					 arg);
		o->have_k = true;
		return 0;
	case OPT_BITS:
		/* trunc's is the one codec setting in bits */
		if (incnn_codec_param_parse(&incnn_codec_trunc.param, arg,
					    &o->bits))
			return usage_err("--bits %s: must be %s", arg,
					 incnn_codec_param_range(&incnn_codec_trunc.param,
								 range,
								 sizeof(range)));
		o->have_bits = true;
		return 0;
	case OPT_CHUNK:
		if (tu_parse_u64(arg, &v) || v < CHUNK_MIN || v > CHUNK_MAX ||
		    v % 4)
			return usage_err("--chunk %s: must be a multiple of 4 from %u to %u",
					 arg, CHUNK_MIN, CHUNK_MAX);
		o->chunk = v;
		o->have_chunk = true;
		return 0;
	case 'j':
		o->json = true;
		return 0;
	case OPT_DIST:
		o->dist = incnn_dist_parse(arg);
		if (o->dist < 0)
			return usage_err("unknown --dist '%s' (known: laplace, normal, uniform, loguniform, bits)",
					 arg);
		o->have_dist = true;
		return 0;
	case OPT_SCALE:
		if (tu_parse_double(arg, &o->scale) || !(o->scale > 0))
			return usage_err("--scale %s: must be a positive number",
					 arg);
		o->have_scale = true;
		return 0;
	case 'n':
		if (tu_parse_u64(arg, &o->count) ||
		    o->count > (UINT64_MAX >> 2))
			return usage_err("--count %s: must be a non-negative integer",
					 arg);
		o->have_count = true;
		return 0;
	case OPT_SEED:
		if (tu_parse_u64(arg, &o->seed))
			return usage_err("--seed %s: must be a non-negative integer",
					 arg);
		o->have_seed = true;
		return 0;
	}
	return usage_err("internal error: option %d", c);
}

/* Check that the options make sense for the command; fill o->param. */
static int check_options(struct opts *o)
{
	if (o->cmd == CMD_GEN) {
		if (o->codec || o->have_k || o->have_bits || o->have_chunk ||
		    o->json)
			return usage_err("gen takes only --dist, --scale, --count and --seed");
		if (!o->have_count)
			return usage_err("gen needs --count N");
		return 0;
	}
	if (o->have_dist || o->have_scale || o->have_count || o->have_seed)
		return usage_err("--dist, --scale, --count and --seed apply to gen only");
	if (o->cmd == CMD_DECODE && (o->json || o->have_chunk))
		return usage_err("--json and --chunk apply to encode and roundtrip; decode reads the chunk size from the container");
	if (!o->codec) {
		if (o->cmd != CMD_DECODE)
			return usage_err("%s needs --codec NAME",
					 cmd_names[o->cmd]);
		if (o->have_k || o->have_bits)
			return usage_err("--bound and --bits need --codec");
		return 0;
	}
	if (o->have_k && !tu_codec_takes_bound(o->codec))
		return usage_err("--bound does not apply to codec %s%s",
				 o->codec->name,
				 tu_codec_takes_bits(o->codec) ?
				 " (use --bits)" : "");
	if (o->have_bits && !tu_codec_takes_bits(o->codec))
		return usage_err("--bits applies to codec trunc only, not %s",
				 o->codec->name);
	o->param = o->codec->param.def;
	if (o->have_k)
		o->param = o->k;
	if (o->have_bits)
		o->param = o->bits;
	if (incnn_codec_check_param(o->codec, o->param))
		return usage_err("parameter %u is not valid for codec %s",
				 o->param, o->codec->name);
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	unsigned int i;
	int c, r;

	memset(o, 0, sizeof(*o));
	o->chunk = CHUNK_DEFAULT;
	o->dist = INCNN_DIST_LAPLACE;
	o->scale = 1e-3;
	o->seed = 1;

	for (i = 0; i < ARRAY_SIZE(cmd_names); i++)
		if (!strcmp(argv[1], cmd_names[i]))
			break;
	if (i == ARRAY_SIZE(cmd_names))
		return usage_err("unknown command '%s' (known: encode, decode, roundtrip, gen; see --help)",
				 argv[1]);
	o->cmd = i;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, ":c:b:jn:h", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
		case '?':
			return tu_getopt_error(PROG, c, argv + 1);
		default:
			r = parse_option(c, optarg, o);
			if (r)
				return r;
		}
	}
	/* optind counts from argv + 1 */
	argc -= optind + 1;
	argv += optind + 1;
	if (o->cmd == CMD_GEN) {
		if (argc != 1)
			return usage_err("gen needs exactly one OUT file (got %d file arguments)",
					 argc);
		o->out = argv[0];
	} else {
		if (argc != 2)
			return usage_err("%s needs IN and OUT files (got %d file arguments)",
					 cmd_names[o->cmd], argc);
		o->in = argv[0];
		o->out = argv[1];
	}
	if (!*(o->out) || (o->in && !*(o->in)))
		return usage_err("empty file name");
	return check_options(o);
}

/* --- files -------------------------------------------------------------- */

static const char *in_name(const char *name)
{
	return strcmp(name, "-") ? name : "stdin";
}

static int open_in(const char *name, struct file *f)
{
	f->name = in_name(name);
	f->is_std = !strcmp(name, "-");
	f->unlink_on_error = false;
	if (f->is_std) {
		f->fd = STDIN_FILENO;
		return 0;
	}
	f->fd = open(name, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
		return fail("cannot open %s: %s", name, strerror(errno));
	return 0;
}

/* Refuse IN == OUT (OUT would be truncated before IN is read). */
static int check_distinct(const char *in, const char *out)
{
	struct stat si, so;

	if (!strcmp(in, "-") || !strcmp(out, "-"))
		return 0;
	if (stat(in, &si) || stat(out, &so))
		return 0;
	if (si.st_dev == so.st_dev && si.st_ino == so.st_ino)
		return usage_err("IN and OUT are the same file (%s)", out);
	return 0;
}

static int open_out(const char *name, struct file *f)
{
	struct stat st;

	f->name = strcmp(name, "-") ? name : "stdout";
	f->is_std = !strcmp(name, "-");
	f->unlink_on_error = false;
	if (f->is_std) {
		f->fd = STDOUT_FILENO;
		if (isatty(f->fd))
			return usage_err("refusing to write binary data to a terminal");
		return 0;
	}
	f->fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (f->fd < 0)
		return fail("cannot create %s: %s", name, strerror(errno));
	if (!fstat(f->fd, &st) && S_ISREG(st.st_mode))
		f->unlink_on_error = true;
	return 0;
}

/* Close @f; on error, remove a partly written regular output file. */
static int close_out(struct file *f, int status)
{
	if (!f->is_std && close(f->fd) && !status)
		status = fail("cannot write %s: %s", f->name, strerror(errno));
	if (status && f->unlink_on_error)
		unlink(f->name);
	return status;
}

static void close_in(struct file *f)
{
	if (!f->is_std)
		close(f->fd);
}

/* Read up to @len bytes; -1 after reporting an error. */
static ssize_t read_in(struct file *f, void *buf, size_t len)
{
	ssize_t r = tu_read_full(f->fd, buf, len);

	if (r < 0)
		fail("cannot read %s: %s", f->name, strerror(errno));
	return r;
}

static int write_out(struct file *f, const void *buf, size_t len)
{
	if (tu_write_full(f->fd, buf, len))
		return fail("cannot write %s: %s", f->name, strerror(errno));
	return 0;
}

/*
 * For float codecs, reject a regular input file whose size is not a
 * multiple of 4 before OUT is touched. Streams are checked at the end.
 */
static int check_in_size(const struct opts *o, struct file *in)
{
	struct stat st;

	if (!o->codec->floats || fstat(in->fd, &st) || !S_ISREG(st.st_mode))
		return 0;
	if (st.st_size % 4)
		return fail("%s: %lld bytes is not a whole number of fp32 values (codec %s needs a multiple of 4)",
			    in->name, (long long)st.st_size, o->codec->name);
	return 0;
}

/* --- container output ----------------------------------------------------- */

static int sink_init(struct sink *s, int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->start = lseek(fd, 0, SEEK_CUR);
	s->direct = !fstat(fd, &st) && S_ISREG(st.st_mode) && s->start >= 0 &&
		    fl >= 0 && !(fl & O_APPEND);
	return 0;
}

static int sink_write(struct sink *s, struct file *f, const void *buf,
		      size_t len)
{
	if (s->direct)
		return write_out(f, buf, len);
	if (s->cap - s->len < len) {
		size_t cap = s->cap ? s->cap : 1 << 20;
		u8 *p;

		while (cap - s->len < len) {
			if (cap > SIZE_MAX / 2)
				return fail("container too large to buffer for %s",
					    f->name);
			cap *= 2;
		}
		p = realloc(s->mem, cap);
		if (!p)
			return fail("out of memory buffering the container for %s (write to a file instead)",
				    f->name);
		s->mem = p;
		s->cap = cap;
	}
	memcpy(s->mem + s->len, buf, len);
	s->len += len;
	return 0;
}

/* Put the final header in place and flush a buffered container. */
static int sink_finish(struct sink *s, struct file *f, const u8 *hdr)
{
	int r = 0;

	if (s->direct) {
		if (pwrite(s->fd, hdr, CONT_HDR_LEN, s->start) != CONT_HDR_LEN)
			r = fail("cannot write %s: %s", f->name,
				 strerror(errno));
	} else {
		memcpy(s->mem, hdr, CONT_HDR_LEN);
		r = write_out(f, s->mem, s->len);
	}
	return r;
}

static void cont_header(u8 *h, const struct incnn_codec *c, u8 param,
			size_t chunk, u64 orig_len, u64 body_len)
{
	memset(h, 0, CONT_HDR_LEN);
	memcpy(h, CONT_MAGIC, 4);
	h[4] = CONT_VERSION;
	h[5] = c->id;
	h[6] = param;
	h[7] = 0;
	tu_put_le32(chunk, h + 8);
	tu_put_le64(orig_len, h + 16);
	tu_put_le64(body_len, h + 24);
	tu_put_le32(tu_crc32(0, h, 32), h + 32);
}

static u32 rec_crc(const u8 *rec, size_t blen)
{
	return tu_crc32(tu_crc32(0, rec, 4), rec + REC_HDR_LEN, blen);
}

/* --- chunk work ----------------------------------------------------------- */

static int work_init(struct work *w, const struct incnn_codec *c,
		     size_t chunk)
{
	memset(w, 0, sizeof(*w));
	w->chunk = chunk;
	w->rec_cap = REC_HDR_LEN + c->bound(chunk);
	w->in = malloc(chunk);
	w->rec = malloc(w->rec_cap);
	w->dec = malloc(chunk);
	w->scratch = tu_scratch_alloc();
	if (!w->in || !w->rec || !w->dec || !w->scratch)
		return fail("out of memory");
	return 0;
}

static void work_free(struct work *w)
{
	free(w->in);
	free(w->rec);
	free(w->dec);
	free(w->scratch);
}

/* Encode @n bytes of w->in into the record w->rec. Returns its length. */
static ssize_t encode_chunk(const struct opts *o, struct work *w, size_t n,
			    struct incnn_hist *hist)
{
	ssize_t r;

	r = incnn_codec_encode(o->codec, incnn_simd_auto(), o->param, w->in, n,
			       w->rec + REC_HDR_LEN, w->rec_cap - REC_HDR_LEN,
			       w->scratch, hist);
	if (r < 0) {
		fail("%s encode of a %zu-byte chunk failed: %s",
		     o->codec->name, n, strerror((int)-r));
		return -1;
	}
	if ((size_t)r > o->codec->bound(n)) {
		fail("%s encode returned %zd bytes, above its bound %zu",
		     o->codec->name, r, o->codec->bound(n));
		return -1;
	}
	tu_put_le32(r, w->rec);
	tu_put_le32(rec_crc(w->rec, r), w->rec + 4);
	return REC_HDR_LEN + r;
}

/*
 * Check and decode the record in w->rec (header already read, @blen body
 * bytes) into @n bytes of w->dec. decode and roundtrip share this path.
 */
static int decode_chunk(const struct incnn_codec *c, u8 param,
			struct work *w, size_t blen, size_t n, u64 idx,
			const char *name)
{
	if (rec_crc(w->rec, blen) != tu_get_le32(w->rec + 4))
		return fail("%s: chunk %llu: checksum mismatch (corrupt body)",
			    name, (unsigned long long)idx);
	if (incnn_codec_decode(c, incnn_simd_auto(), param, w->rec + REC_HDR_LEN,
			       blen, w->dec, n))
		return fail("%s: chunk %llu: %zu-byte %s body does not decode to %zu bytes",
			    name, (unsigned long long)idx, blen, c->name, n);
	return 0;
}

/* Accumulate the error statistics of one decoded chunk. */
static void compare_chunk(const struct opts *o, const u8 *in, const u8 *out,
			  size_t n, struct report *rep)
{
	double bound = tu_codec_takes_bound(o->codec) ?
		       ldexp(1.0, -(int)o->param) : INFINITY;
	size_t i;

	for (i = 0; i + 4 <= n; i += 4) {
		u32 x = tu_get_le32(in + i), y = tu_get_le32(out + i);
		double err;

		rep->values++;
		if (tu_f32_nonfinite(x)) {
			rep->nonfinite++;
			if (x != y)
				rep->nonfinite_bad++;
			continue;
		}
		rep->finite++;
		err = fabs((double)tu_u2f(y) - (double)tu_u2f(x));
		if (!(err <= rep->max_err))
			rep->max_err = err;	/* also catches NaN */
		rep->sum_err += err;
		if (!(err <= bound))
			rep->over_bound++;
	}
}

/* --- reports ---------------------------------------------------------------- */

static double ratio(u64 a, u64 b)
{
	return b ? (double)a / (double)b : NAN;
}

static void report_json(FILE *f, const struct opts *o,
			const struct report *rep)
{
	static const char *const cls[4] = { "0", "8", "16", "32" };
	u64 tot = 0;
	int i;

	for (i = 0; i < 4; i++)
		tot += rep->hist.n[i];
	fprintf(f, "{\"op\":");
	tu_json_str(f, cmd_names[o->cmd]);
	fprintf(f, ",\"codec\":");
	tu_json_str(f, o->codec->name);
	fprintf(f, ",\"codec_id\":%u,\"param\":%u,\"bound\":", o->codec->id,
		o->param);
	if (tu_codec_takes_bound(o->codec))
		fprintf(f, "%.17g", ldexp(1.0, -(int)o->param));
	else
		fputs("null", f);
	fprintf(f, ",\"bits\":");
	if (tu_codec_takes_bits(o->codec))
		fprintf(f, "%u", o->param);
	else
		fputs("null", f);
	fprintf(f, ",\"chunk\":%zu,\"chunks\":%llu,\"in_bytes\":%llu,"
		"\"out_bytes\":%llu,\"container_bytes\":%llu,\"ratio\":",
		o->chunk, (unsigned long long)rep->chunks,
		(unsigned long long)rep->in_bytes,
		(unsigned long long)rep->body_bytes,
		(unsigned long long)rep->cont_bytes);
	tu_json_num(f, ratio(rep->in_bytes, rep->body_bytes));
	if (o->cmd == CMD_ROUNDTRIP) {
		fprintf(f, ",\"values\":%llu,\"max_abs_err\":",
			(unsigned long long)rep->values);
		tu_json_num(f, rep->max_err);
		fprintf(f, ",\"mean_abs_err\":");
		tu_json_num(f, rep->finite ? rep->sum_err / rep->finite : 0);
		fprintf(f, ",\"over_bound\":%llu,\"nonfinite\":%llu,"
			"\"nonfinite_mismatch\":%llu",
			(unsigned long long)rep->over_bound,
			(unsigned long long)rep->nonfinite,
			(unsigned long long)rep->nonfinite_bad);
	}
	fprintf(f, ",\"hist\":");
	if (o->codec->hist) {
		fputc('{', f);
		for (i = 0; i < 4; i++)
			fprintf(f, "%s\"%s\":%llu", i ? "," : "", cls[i],
				(unsigned long long)rep->hist.n[i]);
		fprintf(f, "},\"hist_pct\":{");
		for (i = 0; i < 4; i++) {
			fprintf(f, "%s\"%s\":", i ? "," : "", cls[i]);
			tu_json_num(f, tot ? 100.0 * rep->hist.n[i] / tot : 0);
		}
		fputc('}', f);
	} else {
		fputs("null,\"hist_pct\":null", f);
	}
	fputs("}\n", f);
}

#define ROW	"%-17s "

static void report_human(FILE *f, const struct opts *o,
			 const struct report *rep)
{
	char spec[48];
	u64 tot = 0;
	int i;

	fprintf(f, ROW "%s\n", "codec",
		incnn_codec_label(o->codec->id, o->param, spec, sizeof(spec)));
	if (tu_codec_takes_bound(o->codec))
		fprintf(f, ROW "k = %u (bound 2^-%u = %.10g)\n", "parameter",
			o->param, o->param, ldexp(1.0, -(int)o->param));
	else if (tu_codec_takes_bits(o->codec))
		fprintf(f, ROW "%u bits kept\n", "parameter", o->param);
	else
		fprintf(f, ROW "%u (lossless)\n", "parameter", o->param);
	fprintf(f, ROW "%zu bytes (%llu chunks)\n", "chunk", o->chunk,
		(unsigned long long)rep->chunks);
	fprintf(f, ROW "%llu bytes (%llu values)\n", "input",
		(unsigned long long)rep->in_bytes,
		(unsigned long long)(rep->in_bytes / 4));
	fprintf(f, ROW "%llu bytes\n", "encoded body",
		(unsigned long long)rep->body_bytes);
	fprintf(f, ROW "%llu bytes (header and chunk records)\n", "container",
		(unsigned long long)rep->cont_bytes);
	if (rep->body_bytes)
		fprintf(f, ROW "%.4f (input / encoded body)\n", "ratio",
			ratio(rep->in_bytes, rep->body_bytes));
	else
		fprintf(f, ROW "n/a (empty input)\n", "ratio");
	if (o->cmd == CMD_ROUNDTRIP) {
		fprintf(f, ROW "%.6e\n", "max abs error", rep->max_err);
		fprintf(f, ROW "%.6e\n", "mean abs error",
			rep->finite ? rep->sum_err / rep->finite : 0.0);
		if (tu_codec_takes_bound(o->codec))
			fprintf(f, ROW "%llu values with error > 2^-%u\n",
				"over bound",
				(unsigned long long)rep->over_bound, o->param);
		fprintf(f, ROW "%llu NaN/Inf values, %llu not preserved bit-exactly\n",
			"non-finite",
			(unsigned long long)rep->nonfinite,
			(unsigned long long)rep->nonfinite_bad);
	}
	if (!o->codec->hist) {
		fprintf(f, ROW "n/a (%s has no size classes)\n",
			"sent as 0/8/16/32", o->codec->name);
		return;
	}
	for (i = 0; i < 4; i++)
		tot += rep->hist.n[i];
	for (i = 0; i < 4; i++) {
		char label[32];

		snprintf(label, sizeof(label), "sent as %2d bits",
			 i == 3 ? 32 : 8 * i);
		fprintf(f, ROW "%6.2f %%  (%llu)\n", label,
			tot ? 100.0 * rep->hist.n[i] / tot : 0.0,
			(unsigned long long)rep->hist.n[i]);
	}
}

/* --- commands --------------------------------------------------------------- */

/*
 * encode and roundtrip: read IN chunk by chunk, encode each chunk into a
 * record and either write the container (encode) or decode the record
 * and write the result (roundtrip).
 */
/* Encode @n bytes of w.in into the record w.rec: its length, or -1. */
static ssize_t encode_one(const struct opts *o, struct work *w,
			  const struct file *in, ssize_t n, struct report *rep)
{
	if (o->codec->floats && n % 4) {
		fail("%s: %llu bytes is not a whole number of fp32 values (codec %s needs a multiple of 4)",
		     in->name, (unsigned long long)(rep->in_bytes + n),
		     o->codec->name);
		return -1;
	}
	return encode_chunk(o, w, n, &rep->hist);
}

/* roundtrip: decode the record just encoded, write and compare it. */
static int roundtrip_one(const struct opts *o, struct work *w,
			 const struct file *in, struct file *out, ssize_t n,
			 ssize_t rl, struct report *rep)
{
	int status = decode_chunk(o->codec, o->param, w, rl - REC_HDR_LEN, n,
				  rep->chunks, in->name);

	if (!status && !o->codec->lossy && memcmp(w->in, w->dec, n))
		status = fail("%s: chunk %llu: lossless codec %s changed the data",
			      in->name, (unsigned long long)rep->chunks,
			      o->codec->name);
	if (!status)
		status = write_out(out, w->dec, n);
	if (!status)
		compare_chunk(o, w->in, w->dec, n, rep);
	return status;
}

/* Every chunk of @in: encoded into the container, or roundtripped. */
static int encode_all(const struct opts *o, struct work *w, struct file *in,
		      struct file *out, struct sink *sink, struct report *rep)
{
	bool rt = o->cmd == CMD_ROUNDTRIP;
	int status;

	for (;;) {
		ssize_t n = read_in(in, w->in, w->chunk), rl;

		if (n < 0)
			return TU_EXIT_RUNTIME;
		if (!n)
			return 0;
		rl = encode_one(o, w, in, n, rep);
		if (rl < 0)
			return TU_EXIT_RUNTIME;
		if (rt)
			status = roundtrip_one(o, w, in, out, n, rl, rep);
		else
			status = sink_write(sink, out, w->rec, rl);
		if (status)
			return status;
		rep->in_bytes += n;
		rep->body_bytes += rl - REC_HDR_LEN;
		rep->cont_bytes += rl;
		rep->chunks++;
		if ((size_t)n < w->chunk)
			return 0;
	}
}

static int cmd_encode(const struct opts *o)
{
	bool rt = o->cmd == CMD_ROUNDTRIP;
	struct file in, out;
	struct report rep;
	struct sink sink;
	struct work w;
	u8 hdr[CONT_HDR_LEN];
	int status;

	memset(&rep, 0, sizeof(rep));
	memset(&sink, 0, sizeof(sink));
	status = check_distinct(o->in, o->out);
	if (status)
		return status;
	if (o->json && !strcmp(o->out, "-"))
		return usage_err("--json prints on stdout: OUT must not be '-'");
	status = open_in(o->in, &in);
	if (status)
		return status;
	status = check_in_size(o, &in);
	if (status)
		goto out_in;
	status = open_out(o->out, &out);
	if (status)
		goto out_in;
	status = work_init(&w, o->codec, o->chunk);
	if (status)
		goto out_work;

	memset(hdr, 0, sizeof(hdr));
	if (!rt) {
		sink_init(&sink, out.fd);
		status = sink_write(&sink, &out, hdr, sizeof(hdr));
		if (status)
			goto out_work;
	}
	rep.cont_bytes = CONT_HDR_LEN;

	status = encode_all(o, &w, &in, &out, &sink, &rep);
	if (status)
		goto out_work;

	if (!rt) {
		cont_header(hdr, o->codec, o->param, o->chunk, rep.in_bytes,
			    rep.cont_bytes - CONT_HDR_LEN);
		status = sink_finish(&sink, &out, hdr);
		if (status)
			goto out_work;
	}
	if (o->json)
		report_json(stdout, o, &rep);
	else if (rt)
		report_human(out.is_std ? stderr : stdout, o, &rep);

out_work:
	work_free(&w);
	if (!rt)
		free(sink.mem);
	status = close_out(&out, status);
out_in:
	close_in(&in);
	if (!status && (fflush(stdout) || ferror(stdout)))
		status = fail("cannot write the report: %s", strerror(errno));
	return status;
}

/* A parsed container header. */
struct cont {
	const struct incnn_codec *c;
	u8 param;
	size_t chunk;
	u64 orig_len;
	u64 body_len;
};

/* Parse and check a container header. */
static int parse_header(const struct opts *o, const u8 *h, const char *name,
			struct cont *ct)
{
	const struct incnn_codec *c;
	u64 nchunks, max_rec;

	memset(ct, 0, sizeof(*ct));
	if (memcmp(h, CONT_MAGIC, 4))
		return fail("%s: not an incnn container (bad magic)", name);
	if (h[4] != CONT_VERSION)
		return fail("%s: unsupported container version %u", name,
			    h[4]);
	if (tu_crc32(0, h, 32) != tu_get_le32(h + 32))
		return fail("%s: header checksum mismatch (corrupt header)",
			    name);
	c = incnn_codec_get(h[5]);
	if (!c)
		return fail("%s: unknown codec id %u", name, h[5]);
	if (incnn_codec_check_param(c, h[6]))
		return fail("%s: parameter %u is not valid for codec %s", name,
			    h[6], c->name);
	if (h[7] || tu_get_le32(h + 12))
		return fail("%s: unsupported flags or reserved bits set", name);
	ct->chunk = tu_get_le32(h + 8);
	if (ct->chunk < CHUNK_MIN || ct->chunk > CHUNK_MAX || ct->chunk % 4)
		return fail("%s: bad chunk length %zu", name, ct->chunk);
	ct->orig_len = tu_get_le64(h + 16);
	ct->body_len = tu_get_le64(h + 24);
	if (c->floats && ct->orig_len % 4)
		return fail("%s: original length %llu is not a multiple of 4 for float codec %s",
			    name, (unsigned long long)ct->orig_len, c->name);
	nchunks = ct->orig_len / ct->chunk + !!(ct->orig_len % ct->chunk);
	max_rec = REC_HDR_LEN + c->bound(ct->chunk);
	if (nchunks > ct->body_len / REC_HDR_LEN ||
	    nchunks > UINT64_MAX / max_rec ||
	    ct->body_len > nchunks * max_rec)
		return fail("%s: body length %llu is inconsistent with %llu chunks of %s",
			    name, (unsigned long long)ct->body_len,
			    (unsigned long long)nchunks, c->name);
	if (o->codec && o->codec != c)
		return fail("%s: container holds codec %s, not %s", name,
			    c->name, o->codec->name);
	if (o->codec && (o->have_k || o->have_bits) && o->param != h[6])
		return fail("%s: container holds %s with parameter %u, not %u",
			    name, c->name, h[6], o->param);
	ct->c = c;
	ct->param = h[6];
	return 0;
}

/* When IN is a regular file, check its size against the header. */
static int check_cont_size(struct file *in, u64 body_len)
{
	struct stat st;
	off_t pos;

	if (fstat(in->fd, &st) || !S_ISREG(st.st_mode))
		return 0;
	pos = lseek(in->fd, 0, SEEK_CUR);
	if (pos < 0 || st.st_size < pos)
		return 0;
	if ((u64)(st.st_size - pos) < body_len)
		return fail("%s: truncated container: header promises %llu body bytes, file has %llu",
			    in->name, (unsigned long long)body_len,
			    (unsigned long long)(st.st_size - pos));
	if ((u64)(st.st_size - pos) > body_len)
		return fail("%s: %llu bytes of trailing data after the container",
			    in->name,
			    (unsigned long long)(st.st_size - pos - body_len));
	return 0;
}

/* Read the container header of @in into @ct. */
static int read_header(const struct opts *o, struct file *in, struct cont *ct)
{
	u8 hdr[CONT_HDR_LEN];
	ssize_t n = read_in(in, hdr, sizeof(hdr));
	int status;

	if (n < 0)
		return TU_EXIT_RUNTIME;
	if (!n)
		return fail("%s: empty file, not an incnn container", in->name);
	if (n < CONT_HDR_LEN)
		return fail("%s: truncated container header (%zd of %d bytes)",
			    in->name, n, CONT_HDR_LEN);
	status = parse_header(o, hdr, in->name, ct);
	if (!status)
		status = check_cont_size(in, ct->body_len);
	return status;
}

/*
 * Read record @idx (@len original bytes) into w->rec and decode it into
 * w->dec; *@body_left: container body bytes not yet read.
 */
static int decode_record(const struct cont *ct, struct work *w,
			 struct file *in, u64 idx, size_t len, u64 *body_left)
{
	const struct incnn_codec *c = ct->c;
	ssize_t n;
	u32 blen;

	if (*body_left < REC_HDR_LEN)
		return fail("%s: chunk %llu: records overrun the header's body length",
			    in->name, (unsigned long long)idx);
	n = read_in(in, w->rec, REC_HDR_LEN);
	if (n >= 0 && n < REC_HDR_LEN)
		fail("%s: truncated container (chunk %llu header)", in->name,
		     (unsigned long long)idx);
	if (n < REC_HDR_LEN)
		return TU_EXIT_RUNTIME;
	*body_left -= REC_HDR_LEN;
	blen = tu_get_le32(w->rec);
	if (blen > c->bound(len) || blen > *body_left)
		return fail("%s: chunk %llu: body length %u is larger than %s",
			    in->name, (unsigned long long)idx, blen,
			    blen > *body_left ? "the rest of the container" :
			    "the codec's bound");
	n = read_in(in, w->rec + REC_HDR_LEN, blen);
	if (n >= 0 && (size_t)n < blen)
		fail("%s: truncated container (chunk %llu body)", in->name,
		     (unsigned long long)idx);
	if (n < 0 || (size_t)n < blen)
		return TU_EXIT_RUNTIME;
	*body_left -= blen;
	return decode_chunk(c, ct->param, w, blen, len, idx, in->name);
}

/* After the last record: nothing may be left, in the body or after it. */
static int check_end(struct file *in, u64 body_left)
{
	ssize_t n;
	u8 extra;

	if (body_left)
		return fail("%s: %llu body bytes left after the last chunk",
			    in->name, (unsigned long long)body_left);
	n = read_in(in, &extra, 1);
	if (!n)
		return 0;
	if (n > 0)
		fail("%s: trailing data after the container", in->name);
	return TU_EXIT_RUNTIME;
}

static int cmd_decode(const struct opts *o)
{
	u64 left, body_left, idx;
	struct file in, out;
	struct cont ct;
	struct work w;
	int status;

	status = check_distinct(o->in, o->out);
	if (status)
		return status;
	status = open_in(o->in, &in);
	if (status)
		return status;
	status = read_header(o, &in, &ct);
	if (status)
		goto out_in;
	status = open_out(o->out, &out);
	if (status)
		goto out_in;
	status = work_init(&w, ct.c, ct.chunk);
	left = ct.orig_len;
	body_left = ct.body_len;
	for (idx = 0; !status && left; idx++) {
		size_t len = left < ct.chunk ? left : ct.chunk;

		status = decode_record(&ct, &w, &in, idx, len, &body_left);
		if (!status)
			status = write_out(&out, w.dec, len);
		left -= len;
	}
	if (!status)
		status = check_end(&in, body_left);
	work_free(&w);
	status = close_out(&out, status);
out_in:
	close_in(&in);
	return status;
}

static int cmd_gen(const struct opts *o)
{
	struct incnn_rng rng;
	struct file out;
	u64 left = o->count;
	float *buf;
	int status;

	status = open_out(o->out, &out);
	if (status)
		return status;
	buf = malloc(GEN_BLOCK * sizeof(*buf));
	if (!buf) {
		status = fail("out of memory");
		goto out;
	}
	incnn_rng_seed(&rng, o->seed);
	while (left && !status) {
		size_t n = left < GEN_BLOCK ? left : GEN_BLOCK;

		incnn_gen_f32(&rng, o->dist, o->scale, buf, n);
		status = write_out(&out, buf, n * sizeof(*buf));
		left -= n;
	}
	free(buf);
out:
	return close_out(&out, status);
}

int main(int argc, char **argv)
{
	struct opts o;
	int status;

	if (argc < 2) {
		usage(stderr);
		return TU_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	status = parse_args(argc, argv, &o);
	if (status)
		return status;

	switch (o.cmd) {
	case CMD_ENCODE:
	case CMD_ROUNDTRIP:
		return cmd_encode(&o);
	case CMD_DECODE:
		return cmd_decode(&o);
	case CMD_GEN:
		return cmd_gen(&o);
	}
	return TU_EXIT_USAGE;
}
