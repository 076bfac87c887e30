/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the collective tests: a job of N ranks as threads (or
 * processes) on 127.0.0.1, deterministic inputs, and the expected results
 * computed independently: the ring's and the aggregator's summation order,
 * with the codec applied where the wire applies it.
 */
#ifndef INCNN_COLL_TEST_H
#define INCNN_COLL_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <incnn/collective.h>
#include <incnn/gen.h>
#include "codec.h"

#define MAX_RANKS	16

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A listening socket on 127.0.0.1:0 (or ::1 when @v6) for rank 0's
 * store; its port. -1 and errno when it cannot be had. */
static inline int store_listen(int *port, bool v6)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr *a = v6 ? (struct sockaddr *)&a6 :
			     (struct sockaddr *)&a4;
	socklen_t len = v6 ? sizeof(a6) : sizeof(a4);
	int fd = socket(a->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0), e;

	if (fd < 0 || bind(fd, a, len) || listen(fd, 64) ||
	    getsockname(fd, a, &len)) {
		e = errno;
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	*port = ntohs(v6 ? a6.sin6_port : a4.sin_port);
	return fd;
}

/* Rank r's input: Laplace(scale) values, seeded by (seed, r). */
static inline void gen_input(float *x, size_t n, uint64_t seed, int r,
			     double scale)
{
	struct incnn_rng rng;

	incnn_rng_seed(&rng, seed * 1000003 + (uint64_t)r);
	incnn_gen_f32(&rng, INCNN_DIST_LAPLACE, scale, x, n);
}

/* decode(encode(x)) with the codec library itself, in pieces of 1 KiB */
static inline void q_apply(unsigned int codec, unsigned int param, float *x,
			   size_t n)
{
	static _Thread_local _Alignas(64) unsigned char scratch[INCNN_CODEC_SCRATCH];
	const struct incnn_codec *c = incnn_codec_get(codec);
	uint8_t body[4096];

	if (!codec)
		return;
	while (n) {
		size_t k = n < 256 ? n : 256;
		ssize_t len = c->encode((u8)param, (const u8 *)x, 4 * k, body,
					sizeof(body), scratch, NULL);

		if (len < 0 || c->decode((u8)param, body, (size_t)len,
					 (u8 *)x, 4 * k))
			abort();
		x += k;
		n -= k;
	}
}

static inline size_t blk_off(size_t n, int N, int b)
{
	size_t base = n / N, rem = n % N;

	return (size_t)b * base + ((size_t)b < rem ? (size_t)b : rem);
}

static inline size_t blk_len(size_t n, int N, int b)
{
	return n / N + ((size_t)b < n % N);
}

/*
 * The ring's result: block b is summed along the ring from rank b,
 * v = Q(g_b); v = Q(g_{b+1} + v); ... ; v = Q(g_{b+N-1} + v). One rank
 * is the identity.
 */
static inline void sim_ring(float *const *in, int N, size_t n,
			    unsigned int codec, unsigned int param, float *out)
{
	int b, k;
	size_t i;

	if (N == 1) {
		memcpy(out, in[0], 4 * n);
		return;
	}
	for (b = 0; b < N; b++) {
		size_t off = blk_off(n, N, b), len = blk_len(n, N, b);
		float *v = out + off;

		memcpy(v, in[b] + off, 4 * len);
		q_apply(codec, param, v, len);
		for (k = 1; k < N; k++) {
			const float *g = in[(b + k) % N] + off;

			for (i = 0; i < len; i++)
				v[i] = g[i] + v[i];
			q_apply(codec, param, v, len);
		}
	}
}

/* The aggregator's: ((g_0 + Q(g_1)) + Q(g_2)) + ... */
static inline void sim_ps(float *const *in, int N, size_t n,
			  unsigned int codec, unsigned int param, float *out)
{
	float *t = malloc(4 * n + 4);
	size_t i;
	int w;

	memcpy(out, in[0], 4 * n);
	for (w = 1; w < N; w++) {
		memcpy(t, in[w], 4 * n);
		q_apply(codec, param, t, n);
		for (i = 0; i < n; i++)
			out[i] = out[i] + t[i];
	}
	free(t);
}

/* max |out - exact sum| and the rounding slack N * 2^-23 * sum |g| */
static inline double max_err_over(float *const *in, int N, size_t n,
				  const float *out, double budget)
{
	double worst = -INFINITY;
	size_t i;
	int r;

	for (i = 0; i < n; i++) {
		double s = 0, a = 0, e;

		for (r = 0; r < N; r++) {
			s += in[r][i];
			a += fabs(in[r][i]);
		}
		/* budget, plus fp32 rounding of N sums of at most a + budget */
		e = fabs(out[i] - s) - (budget + N * 0x1p-23 * (a + budget));
		if (e > worst)
			worst = e;
	}
	return worst;
}

/* open file descriptors and threads of this process */
#include <dirent.h>

static inline int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - (strcmp(path, "/proc/self/fd") == 0);	/* the DIR's */
}

/* --- a job of threads --------------------------------------------------- */

struct rank_ctx;
typedef void (*rank_fn)(struct rank_ctx *);

struct job {
	int N;
	int port, store_fd;
	int world[MAX_RANKS];		/* per rank world size, 0: N */
	int delay_ms[MAX_RANKS];	/* per rank: start this late */
	struct incnn_comm_config cfg;	/* template */
	enum incnn_coll_fault fault;	/* for rank fault_rank */
	int fault_rank;
	uint64_t fault_after;
	int fault_stall_ms;
	int skip_rank;			/* never started, -1 */
	const char *host;		/* MASTER_ADDR: 127.0.0.1 or ::1 */
	rank_fn fn;
	void *arg;
	/* adjust one rank's configuration */
	void (*tweak)(struct rank_ctx *x, struct incnn_comm_config *cfg);
};

struct rank_ctx {
	struct job *job;
	int rank;
	struct incnn_comm *comm;
	int create_ret;
	char create_err[512];
	int ret;			/* of fn */
	char err[512];
	double t0, t1;			/* around fn's collective call */
	void *user;
};

static void *rank_thread(void *arg)
{
	struct rank_ctx *x = arg;
	struct job *j = x->job;
	struct incnn_comm_config cfg = j->cfg;

	if (j->delay_ms[x->rank])
		usleep(1000 * j->delay_ms[x->rank]);
	cfg.master_addr = j->host;
	cfg.master_port = j->port;
	cfg.rank = x->rank;
	cfg.world_size = j->world[x->rank] ? j->world[x->rank] : j->N;
	cfg.store_fd = x->rank == 0 ? j->store_fd : -1;
	if (x->rank == j->fault_rank) {
		cfg.fault = j->fault;
		cfg.fault_after = j->fault_after;
		cfg.fault_stall_ms = j->fault_stall_ms;
	}
	if (j->tweak)
		j->tweak(x, &cfg);
	x->create_ret = incnn_comm_create(&x->comm, &cfg, x->create_err,
					  sizeof(x->create_err));
	if (!x->create_ret && j->fn)
		j->fn(x);
	if (x->comm && x->ret)
		snprintf(x->err, sizeof(x->err), "%s",
			 incnn_comm_strerror(x->comm));
	incnn_comm_destroy(x->comm);
	x->comm = NULL;
	return NULL;
}

static inline void job_init(struct job *j, int N)
{
	memset(j, 0, sizeof(*j));
	j->N = N;
	j->fault_rank = -1;
	j->skip_rank = -1;
	j->host = "127.0.0.1";
	incnn_comm_config_init(&j->cfg);
	j->cfg.timeout_ms = 10000;
	j->cfg.init_timeout_ms = 10000;
	j->cfg.codec_mode = INCNN_COLL_CODEC_NONE;
}

/* Run the job's ranks as threads; 0, or -1 when the job could not start. */
static inline int job_run(struct job *j, struct rank_ctx *x)
{
	pthread_t t[MAX_RANKS];
	int r;

	j->store_fd = store_listen(&j->port, strchr(j->host, ':') != NULL);
	if (j->store_fd < 0)
		return -1;
	for (r = 0; r < j->N; r++) {
		memset(&x[r], 0, sizeof(x[r]));
		x[r].job = j;
		x[r].rank = r;
		x[r].user = j->arg;
	}
	for (r = 0; r < j->N; r++)
		if (r != j->skip_rank &&
		    pthread_create(&t[r], NULL, rank_thread, &x[r]))
			return -1;
	for (r = 0; r < j->N; r++)
		if (r != j->skip_rank)
			pthread_join(t[r], NULL);
	if (j->skip_rank == 0)
		close(j->store_fd);
	return 0;
}

#endif /* INCNN_COLL_TEST_H */
