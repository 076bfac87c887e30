/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Small helpers shared by the incnn command-line tools: strict argument
 * parsing, whole-buffer I/O, CRC-32, JSON output and timing.
 */
#ifndef INCNN_TOOLUTIL_H
#define INCNN_TOOLUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "codec.h"
#include <incnn/codec_param.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

/* Exit statuses shared by the tools. */
#define TU_EXIT_RUNTIME	1
#define TU_EXIT_USAGE	2

/*
 * Parse an unsigned decimal integer, optionally followed by a binary
 * suffix K, M or G (x1024, x1024^2, x1024^3). The whole string must be
 * consumed. Returns 0, -EINVAL (syntax) or -ERANGE (overflow).
 */
/* Print "PROG: message" on stderr; returns @status. */
int tu_error(const char *prog, int status, const char *fmt, ...)
	__printf(3, 4);

/*
 * The usage error for getopt_long()'s ':' (missing argument) or '?'
 * (unknown option) result @c; @argv is the vector getopt worked on.
 */
int tu_getopt_error(const char *prog, int c, char *const *argv);

int tu_parse_u64(const char *s, uint64_t *out);

/*
 * Parse an integer in [@min, @max], decimal or 0x hex, without a sign or
 * leading space; the whole string. 0 or -EINVAL.
 */
int tu_parse_long(const char *s, long min, long max, long *out);

/* Parse a finite floating-point number (whole string). 0 or -EINVAL. */
int tu_parse_double(const char *s, double *out);

/*
 * Parse an error bound 2^-K and return K. Accepted forms:
 *	2^-K		e.g. 2^-10
 *	K		a plain decimal integer, e.g. 10
 *	a decimal	that is exactly 2^-K, e.g. 0.0009765625 or 9.765625e-4
 * Returns 0; -ERANGE when the value is an exact power of two but K is
 * outside INCNN_BOUND_MIN_K..INCNN_BOUND_MAX_K; -EINVAL otherwise.
 */
int tu_parse_bound(const char *s, unsigned int *k);

/*
 * Read up to @len bytes, retrying short reads and EINTR. Returns the
 * number of bytes read (less than @len only at end of file) or -1 with
 * errno set.
 */
ssize_t tu_read_full(int fd, void *buf, size_t len);

/* Write all @len bytes. Returns 0 or -1 with errno set. */
int tu_write_full(int fd, const void *buf, size_t len);

/* CRC-32 (IEEE 802.3, as zlib's crc32()); start with @crc = 0. */
uint32_t tu_crc32(uint32_t crc, const void *buf, size_t len);

/* Monotonic time in seconds (CLOCK_MONOTONIC). */
double tu_now(void);
/* This thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID). */
double tu_cpu_now(void);

/*
 * The benchmark tools' (incnn-thc, incnn-gvq) -n FLOATS (1..@max_n) and
 * -t SECONDS ((0, 60]) for getopt's @c: 0 when taken, the usage error's
 * exit status (printed), or -1 when @c is neither.
 */
int tu_bench_opt(const char *prog, int c, const char *arg, uint64_t max_n,
		 uint64_t *n, double *secs);

/* Write @s as a JSON string literal, with quotes. */
void tu_json_str(FILE *f, const char *s);

/* Write @v as a JSON number, or null when it is not finite. */
void tu_json_num(FILE *f, double v);

/* "inceptionn, ebq, trunc, lz4" into @buf. */
void tu_codec_names(char *buf, size_t len);

/*
 * A codec id and parameter as the tools print them: "none" (id 0 or
 * unknown), "trunc 16 bits" or "ebq 2^-10". Returns @buf.
 */
const char *tu_codec_label(unsigned int id, unsigned int param, char *buf,
			   size_t len);

/*
 * The collective tools' shared options. --algo @s: "ring" (*@ps = false)
 * or "ps" (true). --bound @s for the --codec given (@codec, NULL: none or
 * auto): *@param = K. 0, or the usage error (printed) to exit with.
 */
int tu_parse_algo(const char *prog, const char *s, bool *ps);
int tu_parse_bound_opt(const char *prog, const char *s,
		       const struct incnn_codec *codec, unsigned int *param);

/*
 * The options of the tools on the collective library (incnn-allreduce,
 * incnn-train): -n/--ranks, -a/--algo, -c/--codec, --bound, --tos and
 * --timeout. TU_COLL_LONG_OPTS goes in a tool's long option table (with
 * "n:a:c:" in its short ones); the tool's own long-only options start at
 * TU_OPT_FREE.
 */
#define TU_MAX_LOCAL	64

enum {
	TU_OPT_BOUND = 256,
	TU_OPT_TOS,
	TU_OPT_TIMEOUT,
	TU_OPT_FREE,
};

#define TU_COLL_LONG_OPTS \
	{ "ranks", required_argument, NULL, 'n' }, \
	{ "algo", required_argument, NULL, 'a' }, \
	{ "codec", required_argument, NULL, 'c' }, \
	{ "bound", required_argument, NULL, TU_OPT_BOUND }, \
	{ "tos", required_argument, NULL, TU_OPT_TOS }, \
	{ "timeout", required_argument, NULL, TU_OPT_TIMEOUT }

struct tu_coll_opts {
	int local;			/* -n: ranks to launch, 0: env */
	bool ps;			/* --algo ps */
	const char *codec_name;		/* --codec; NULL: auto */
	const char *bound;		/* --bound: tu_parse_bound_opt() */
	int tos;
	int timeout_ms;
};

/*
 * getopt_long()'s result @c with @arg, for the options the tool does not
 * handle itself: 0 when it is one of these (taken into @co), else the
 * usage error's exit status (printed; tu_getopt_error() with @argv when
 * it is none of them).
 */
int tu_coll_opt(const char *prog, struct tu_coll_opts *co, int c,
		const char *arg, char *const *argv);

/*
 * One rank of a local job (tu_launch_local()), in its own process:
 * rank @rank of @world, the store on 127.0.0.1:@port; @store_fd is the
 * store's listening socket for rank 0, -1 for the others. Returns the
 * rank's exit status.
 */
typedef int tu_rank_fn(void *arg, int rank, int world, int port,
		       int store_fd);

/*
 * Launch @world ranks as processes on 127.0.0.1: bind a listening socket
 * on a free port for rank 0's store, fork, run @fn in every child (the
 * ranks other than 0 with stderr on /dev/null: rank 0 reports the job's
 * error) and exit() with its result; wait for all of them. Returns the
 * first non-zero exit status in rank order (TU_EXIT_RUNTIME when a rank
 * died of a signal, which is reported), or 0.
 */
int tu_launch_local(const char *prog, int world, tu_rank_fn *fn, void *arg);

/* Whether the codec's parameter is an error bound 2^-k. */
static inline bool tu_codec_takes_bound(const struct incnn_codec *c)
{
	return c->param.kind == INCNN_PARAM_BOUND;
}

/* Whether the codec's parameter is a bit count (trunc). */
static inline bool tu_codec_takes_bits(const struct incnn_codec *c)
{
	return c->param.kind == INCNN_PARAM_BITS;
}

static inline uint32_t tu_get_le32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t tu_get_le64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void tu_put_le32(uint32_t v, void *p)
{
	memcpy(p, &v, sizeof(v));
}

static inline void tu_put_le64(uint64_t v, void *p)
{
	memcpy(p, &v, sizeof(v));
}

/* A biased fp32 exponent of 255: NaN or infinity. */
static inline bool tu_f32_nonfinite(uint32_t bits)
{
	return ((bits >> 23) & 0xff) == 0xff;
}

static inline float tu_u2f(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/*
 * Memory for the codecs' encoder scratch: INCNN_CODEC_SCRATCH bytes,
 * 64-byte aligned. Free with free(). NULL when out of memory.
 */
void *tu_scratch_alloc(void);

#endif /* INCNN_TOOLUTIL_H */
