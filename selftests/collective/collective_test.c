// SPDX-License-Identifier: GPL-2.0
/*
 * incnn collective library: ring and worker-aggregator allreduce on
 * 127.0.0.1 with N ranks as threads (and as processes), exact against the
 * simulated summation order, codec emulation (bit-identical replicas,
 * error budget), rendezvous and call mismatches, and failures (a rank
 * that crashes, is killed, stalls or sends a short stream).
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/netlink.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <sanitizer/lsan_interface.h>

#include "kselftest_harness.h"
/*
 * The harness kills a test after 30 s of wall clock. These tests run up
 * to 8 ranks as processes over loopback sockets under ASan, which on a
 * shared, loaded host (make check next to other builds) takes longer than
 * that without anything being wrong (ring_div_1_to_8 with 4-byte chunks:
 * killed at 30 s on a 2-core host at load 37): a limit for hangs only.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#include "coll_test.h"
#include "coll.h"	/* white-box: the sockets' marks */

/*
 * Nothing left behind: as many descriptors and threads as before, no leak
 * (the harness ends a test with _exit(), so ask LeakSanitizer now).
 */
struct baseline {
	int fds, threads;
};

static struct baseline baseline(void)
{
	return (struct baseline){ count_dir("/proc/self/fd"),
				  count_dir("/proc/self/task") };
}

#define ASSERT_CLEAN(b) do { \
	struct baseline __now = baseline(); \
	ASSERT_EQ((b).fds, __now.fds) TH_LOG("descriptors left open"); \
	ASSERT_EQ((b).threads, __now.threads) TH_LOG("threads left"); \
	ASSERT_EQ(0, __lsan_do_recoverable_leak_check()); \
} while (0)

/* --- sweeps: several calls per communicator ------------------------------ */

#define MAX_SIZES	12

enum call { CALL_RING, CALL_PS };

struct sweep {
	size_t sizes[MAX_SIZES];
	enum call calls[MAX_SIZES];
	int nsizes;
	uint64_t seed;
	double scale;
	float div;	/* incnn_allreduce_div() by this (0: incnn_allreduce) */
	float *out[MAX_RANKS][MAX_SIZES];
	unsigned int codec[MAX_RANKS], param[MAX_RANKS];
};

static void sweep_fn(struct rank_ctx *x)
{
	struct sweep *s = x->user;
	int i;

	incnn_comm_codec(x->comm, &s->codec[x->rank], &s->param[x->rank]);
	for (i = 0; i < s->nsizes; i++) {
		size_t n = s->sizes[i];
		float *b = malloc(4 * n + 4);

		gen_input(b, n, s->seed + i, x->rank, s->scale);
		x->t0 = now_s();
		x->ret = s->calls[i] == CALL_PS ?
			 incnn_allreduce_ps(x->comm, b, n) :
			 s->div ? incnn_allreduce_div(x->comm, b, n, s->div) :
			 incnn_allreduce(x->comm, b, n);
		x->t1 = now_s();
		if (x->ret) {
			free(b);
			return;
		}
		s->out[x->rank][i] = b;
	}
}

static void sweep_free(struct sweep *s)
{
	int r, i;

	for (r = 0; r < MAX_RANKS; r++)
		for (i = 0; i < MAX_SIZES; i++) {
			free(s->out[r][i]);
			s->out[r][i] = NULL;
		}
}

/*
 * Every rank's result equals the simulation bit for bit (so the replicas
 * are identical) and, if @budget >= 0, lies within budget of the exact
 * sum (plus rounding).
 */
static void sweep_check(struct __test_metadata *_metadata, struct job *j,
			struct rank_ctx *x, struct sweep *s,
			unsigned int codec, unsigned int param, double budget)
{
	int N = j->N, r, i;

	for (r = 0; r < N; r++) {
		ASSERT_EQ(0, x[r].create_ret) TH_LOG("rank %d: %s", r, x[r].create_err);
		ASSERT_EQ(0, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
		ASSERT_EQ(codec, s->codec[r]);
		ASSERT_EQ(param, s->param[r]);
	}
	for (i = 0; i < s->nsizes; i++) {
		size_t n = s->sizes[i];
		float *in[MAX_RANKS], *want = malloc(4 * n + 4);
		size_t k;

		for (r = 0; r < N; r++) {
			in[r] = malloc(4 * n + 4);
			gen_input(in[r], n, s->seed + i, r, s->scale);
			/* incnn_allreduce_div(): as if divided first */
			for (k = 0; s->div && k < n; k++)
				in[r][k] = in[r][k] / s->div;
		}
		if (s->calls[i] == CALL_PS)
			sim_ps(in, N, n, codec, param, want);
		else
			sim_ring(in, N, n, codec, param, want);
		for (r = 0; r < N; r++) {
			for (k = 0; k < n; k++)
				if (memcmp(&want[k], &s->out[r][i][k], 4))
					break;
			EXPECT_EQ(n, k) TH_LOG("N=%d %s n=%zu rank %d: element %zu is %a, want %a",
					       N, s->calls[i] == CALL_PS ? "ps" : "ring",
					       n, r, k, k < n ? s->out[r][i][k] : 0.0f,
					       k < n ? want[k] : 0.0f);
		}
		if (budget >= 0 && n)
			EXPECT_GE(0.0, max_err_over(in, N, n, want, budget))
				TH_LOG("n=%zu: error over the budget %g", n, budget);
		for (r = 0; r < N; r++)
			free(in[r]);
		free(want);
	}
}

static void sweep_sizes(struct sweep *s, int N, enum call call)
{
	const size_t sz[] = { 0, 1, (size_t)N - 1, (size_t)N + 1,
			      2 * (size_t)N + 3, 1001, 30011, 100003 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sz); i++) {
		s->sizes[s->nsizes] = sz[i];
		s->calls[s->nsizes++] = call;
	}
}

/* N = 1..8, odd sizes, n < N, small and large chunks: exact */
TEST(ring_exact_1_to_8)
{
	struct baseline b0 = baseline();
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	int N;

	for (N = 1; N <= 8; N++) {
		struct sweep s = { .seed = 100 + N, .scale = 1.0 };

		job_init(&j, N);
		/* chunks of 1 float, 25 floats, 4 KiB, default */
		j.cfg.chunk_bytes = N % 4 == 1 ? 4 : N % 4 == 2 ? 100 :
				    N % 4 == 3 ? 4096 : 0;
		if (N == 1 || N == 5)
			j.cfg.chunk_bytes = 4096;
		j.fn = sweep_fn;
		j.arg = &s;
		sweep_sizes(&s, N, CALL_RING);
		ASSERT_EQ(0, job_run(&j, x));
		sweep_check(_metadata, &j, x, &s, 0, 0, -1);
		sweep_free(&s);
	}
	ASSERT_CLEAN(b0);
}

/* larger than the socket buffers: the pipeline with a 64 KiB chunk */
TEST(ring_exact_large)
{
	struct rank_ctx x[MAX_RANKS];
	struct sweep s = { .seed = 7, .scale = 1e-2, .nsizes = 1,
			   .sizes = { 3000017 } };
	struct job j;

	job_init(&j, 3);
	j.cfg.chunk_bytes = 65536;
	j.fn = sweep_fn;
	j.arg = &s;
	ASSERT_EQ(0, job_run(&j, x));
	sweep_check(_metadata, &j, x, &s, 0, 0, -1);
	sweep_free(&s);
}

/*
 * incnn_allreduce_div() by the world size: bit for bit the ring's sum of
 * the inputs divided first (x / N in fp32, as torch's div_()), N = 1..8,
 * odd sizes, n < N, chunks of 1 float to the default.
 */
TEST(ring_div_1_to_8)
{
	struct baseline b0 = baseline();
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	int N;

	for (N = 1; N <= 8; N++) {
		struct sweep s = { .seed = 300 + N, .scale = 1e-3,
				   .div = (float)N };

		job_init(&j, N);
		j.cfg.chunk_bytes = N % 4 == 1 ? 4 : N % 4 == 2 ? 100 :
				    N % 4 == 3 ? 4096 : 0;
		j.fn = sweep_fn;
		j.arg = &s;
		sweep_sizes(&s, N, CALL_RING);
		ASSERT_EQ(0, job_run(&j, x));
		sweep_check(_metadata, &j, x, &s, 0, 0, -1);
		sweep_free(&s);
	}
	ASSERT_CLEAN(b0);
}

/* with codec emulation (quantise after dividing) and a divisor that is
 * not the world size */
TEST(ring_div_emulation)
{
	const struct incnn_codec *ebq = incnn_codec_find("ebq");
	struct rank_ctx x[MAX_RANKS];
	int N;

	ASSERT_NE(NULL, ebq);
	for (N = 2; N <= 8; N += 3) {
		struct sweep s = { .seed = 400 + N, .scale = 0.05,
				   .div = N == 5 ? 3.0f : (float)N,
				   .nsizes = 3, .sizes = { 7, 1001, 100003 } };
		struct job j;

		job_init(&j, N);
		j.cfg.codec_mode = INCNN_COLL_CODEC_EMULATE;
		j.cfg.codec_id = ebq->id;
		j.cfg.codec_param = 10;
		j.cfg.chunk_bytes = 8192;
		j.fn = sweep_fn;
		j.arg = &s;
		ASSERT_EQ(0, job_run(&j, x));
		sweep_check(_metadata, &j, x, &s, ebq->id, 10, -1);
		sweep_free(&s);
	}
}

static void div_bad_fn(struct rank_ctx *x)
{
	float b[4] = { 1, 2, 3, 4 };

	x->ret = incnn_allreduce_div(x->comm, b, 4, x->rank ? 2.0f : 0.0f);
}

/* a divisor of 0 is EINVAL on the rank that passes it, and fails the job */
TEST(ring_div_bad_divisor)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;

	job_init(&j, 2);
	j.cfg.timeout_ms = 5000;
	j.fn = div_bad_fn;
	ASSERT_EQ(0, job_run(&j, x));
	EXPECT_EQ(-EINVAL, x[0].ret);
	EXPECT_NE(0, x[1].ret);
	EXPECT_NE(NULL, strstr(x[0].err, "invalid divisor 0"))
		TH_LOG("rank 0: %s", x[0].err);
}

static void emulation_case(struct __test_metadata *_metadata, int N,
			   const char *name, unsigned int param,
			   enum call call, double scale)
{
	const struct incnn_codec *codec = incnn_codec_find(name);
	struct rank_ctx x[MAX_RANKS];
	struct sweep s = { .seed = 31 + param, .scale = scale };
	double budget = -1;
	struct job j;
	int hops = call == CALL_PS ? N - 1 : N;

	ASSERT_NE(NULL, codec);
	job_init(&j, N);
	j.cfg.codec_mode = INCNN_COLL_CODEC_EMULATE;
	j.cfg.codec_id = codec->id;
	j.cfg.codec_param = param;
	j.cfg.chunk_bytes = 8192;
	j.fn = sweep_fn;
	j.arg = &s;
	s.sizes[0] = 1;
	s.sizes[1] = 7;
	s.sizes[2] = 100003;
	s.calls[0] = s.calls[1] = s.calls[2] = call;
	s.nsizes = 3;
	/* the budget: one quantisation per hop of 2^-k (ebq), 2^-min(k,7)
	 * (inceptionn's real bound, docs/codecs.md) */
	if (codec->id == INCNN_CODEC_EBQ)
		budget = hops * ldexp(1, -(int)param);
	else if (codec->id == INCNN_CODEC_INCEPTIONN)
		budget = hops * ldexp(1, -(int)(param < 7 ? param : 7));
	ASSERT_EQ(0, job_run(&j, x));
	sweep_check(_metadata, &j, x, &s, codec->id, param, budget);
	sweep_free(&s);
}

/* userspace emulation: identical replicas, equal to the lossy model,
 * within N * 2^-k of the exact sum */
TEST(ring_emulation_ebq)
{
	emulation_case(_metadata, 4, "ebq", 6, CALL_RING, 0.05);
	emulation_case(_metadata, 4, "ebq", 10, CALL_RING, 0.05);
	emulation_case(_metadata, 5, "ebq", 10, CALL_RING, 1e-3);
}

TEST(ring_emulation_inceptionn)
{
	emulation_case(_metadata, 4, "inceptionn", 10, CALL_RING, 0.05);
	emulation_case(_metadata, 3, "inceptionn", 6, CALL_RING, 0.05);
}

TEST(ring_emulation_trunc)
{
	emulation_case(_metadata, 4, "trunc", 16, CALL_RING, 0.05);
	emulation_case(_metadata, 3, "trunc", 8, CALL_RING, 0.05);
}

/* the module's lossy transform applied once more changes nothing */
TEST(codecs_idempotent)
{
	const char *names[] = { "inceptionn", "ebq", "trunc" };
	const unsigned int params[][3] = { { 6, 8, 10 }, { 6, 8, 10 },
					   { 8, 16, 24 } };
	float a[4096], b[4096];
	size_t i, p;

	for (i = 0; i < 3; i++)
		for (p = 0; p < 3; p++) {
			const struct incnn_codec *c = incnn_codec_find(names[i]);

			gen_input(a, 4096, 5 + p, (int)i, 0.1);
			q_apply(c->id, params[i][p], a, 4096);
			memcpy(b, a, sizeof(a));
			q_apply(c->id, params[i][p], b, 4096);
			ASSERT_EQ(0, memcmp(a, b, sizeof(a)))
				TH_LOG("%s %u", names[i], params[i][p]);
		}
}

TEST(ps_exact)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	int N;

	for (N = 1; N <= 5; N++) {
		struct sweep s = { .seed = 200 + N, .scale = 1.0 };

		job_init(&j, N);
		j.cfg.chunk_bytes = N == 3 ? 4 : N == 4 ? 1000 : 0;
		j.fn = sweep_fn;
		j.arg = &s;
		sweep_sizes(&s, N, CALL_PS);
		ASSERT_EQ(0, job_run(&j, x));
		sweep_check(_metadata, &j, x, &s, 0, 0, -1);
		sweep_free(&s);
	}
}

TEST(ps_emulation)
{
	emulation_case(_metadata, 4, "ebq", 8, CALL_PS, 0.05);
	emulation_case(_metadata, 3, "inceptionn", 10, CALL_PS, 0.05);
}

/* ring, aggregator and ring again on one communicator */
TEST(mixed_calls)
{
	struct rank_ctx x[MAX_RANKS];
	struct sweep s = { .seed = 77, .scale = 1.0 };
	struct job j;
	int i;

	job_init(&j, 4);
	j.fn = sweep_fn;
	j.arg = &s;
	for (i = 0; i < 9; i++) {
		s.sizes[i] = 1000 + 997 * i;
		s.calls[i] = i % 3 == 1 ? CALL_PS : CALL_RING;
	}
	s.nsizes = 9;
	ASSERT_EQ(0, job_run(&j, x));
	sweep_check(_metadata, &j, x, &s, 0, 0, -1);
	sweep_free(&s);
}

/* two jobs at once in one process: no shared state */
struct two {
	struct job j;
	struct rank_ctx x[MAX_RANKS];
	struct sweep s;
	int ret;
};

static void *two_thread(void *arg)
{
	struct two *t = arg;

	t->ret = job_run(&t->j, t->x);
	return NULL;
}

TEST(two_communicators)
{
	static struct two t[2];
	pthread_t th[2];
	int i;

	for (i = 0; i < 2; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		job_init(&t[i].j, 3 + i);
		t[i].s.seed = 400 + i;
		t[i].s.scale = 1.0;
		sweep_sizes(&t[i].s, 3 + i, i ? CALL_PS : CALL_RING);
		t[i].j.fn = sweep_fn;
		t[i].j.arg = &t[i].s;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, two_thread, &t[i]));
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		ASSERT_EQ(0, t[i].ret);
		sweep_check(_metadata, &t[i].j, t[i].x, &t[i].s, 0, 0, -1);
		sweep_free(&t[i].s);
	}
}

/* --- the wire: marks ------------------------------------------------------ */

static int tos_of(int fd)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (fd < 0 || getsockopt(fd, IPPROTO_IP, IP_TOS, &v, &len))
		return -1;
	return v;
}

static int nodelay_of(int fd)
{
	int v = -1;
	socklen_t len = sizeof(v);

	if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len))
		return -1;
	return v;
}

struct marks {
	int ring_send[MAX_RANKS], ring_recv[MAX_RANKS], ps_up[MAX_RANKS];
	int ps_down[MAX_RANKS], store[MAX_RANKS], nodelay[MAX_RANKS];
};

static void marks_fn(struct rank_ctx *x)
{
	struct marks *m = x->user;
	struct incnn_comm *c = x->comm;
	int w;

	m->ring_send[x->rank] = tos_of(c->link.ring_send_fd);
	m->ring_recv[x->rank] = tos_of(c->link.ring_recv_fd);
	m->ps_up[x->rank] = tos_of(c->link.ps_fd);
	m->store[x->rank] = tos_of(c->store.fd);
	m->nodelay[x->rank] = nodelay_of(c->link.ring_send_fd) > 0 &&
			      nodelay_of(c->link.ring_recv_fd) > 0;
	if (x->rank == 0)
		for (w = 1; w < x->job->N; w++)
			m->ps_down[w] = tos_of(c->link.ps_fds[w]);
}

TEST(marks)
{
	struct rank_ctx x[MAX_RANKS];
	struct marks m;
	struct job j;
	int r, tos;

	for (tos = 0; tos <= 0x28; tos += 0x28) {
		memset(&m, 0, sizeof(m));
		job_init(&j, 3);
		j.cfg.tos = tos;
		j.fn = marks_fn;
		j.arg = &m;
		ASSERT_EQ(0, job_run(&j, x));
		for (r = 0; r < 3; r++) {
			ASSERT_EQ(0, x[r].create_ret) TH_LOG("%s", x[r].create_err);
			/* only what carries floats towards a peer is marked */
			EXPECT_EQ(tos, m.ring_send[r]);
			EXPECT_EQ(0, m.ring_recv[r]);
			EXPECT_EQ(0, m.store[r]);
			EXPECT_EQ(1, m.nodelay[r]);
			if (r) {
				EXPECT_EQ(tos, m.ps_up[r]);	/* up leg */
				EXPECT_EQ(0, m.ps_down[r]);	/* down leg */
			}
		}
	}
}

/*
 * On the wire (AF_PACKET on lo, received copies; needs CAP_NET_RAW): of
 * every data connection, the connecting side's first 24 bytes (the
 * identification) go unmarked and everything after them marked, in whole
 * floats; the accepting side (ring acknowledgement, aggregator's down
 * leg) and the store are never marked.
 */
#include <linux/if_packet.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <netinet/ip.h>

struct pkt {
	uint32_t saddr, daddr;
	uint16_t sport, dport;
	uint32_t seq, len;
	uint8_t tos, syn;
};

struct capture {
	int fd;
	volatile int stop;
	struct pkt *p;
	size_t n, cap;
};

static void *capture_thread(void *arg)
{
	struct capture *cp = arg;
	uint8_t buf[256];

	while (!cp->stop) {
		struct sockaddr_ll from;
		socklen_t flen = sizeof(from);
		struct pollfd pfd = { .fd = cp->fd, .events = POLLIN };
		ssize_t k;
		size_t ihl;
		struct pkt p;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		k = recvfrom(cp->fd, buf, sizeof(buf), MSG_TRUNC,
			     (struct sockaddr *)&from, &flen);
		if (k < 40 || from.sll_pkttype != PACKET_HOST)
			continue;
		if ((buf[0] >> 4) != 4 || buf[9] != IPPROTO_TCP)
			continue;
		ihl = 4 * (buf[0] & 15);
		if ((size_t)k < ihl + 20 || ihl + 20 > sizeof(buf))
			continue;
		p.tos = buf[1];
		memcpy(&p.saddr, buf + 12, 4);
		memcpy(&p.daddr, buf + 16, 4);
		p.sport = (uint16_t)(buf[ihl] << 8 | buf[ihl + 1]);
		p.dport = (uint16_t)(buf[ihl + 2] << 8 | buf[ihl + 3]);
		p.seq = (uint32_t)buf[ihl + 4] << 24 | buf[ihl + 5] << 16 |
			buf[ihl + 6] << 8 | buf[ihl + 7];
		p.syn = buf[ihl + 13] & 2;
		p.len = (uint32_t)((buf[2] << 8 | buf[3]) - ihl -
				   4 * (buf[ihl + 12] >> 4));
		if (cp->n == cp->cap) {
			cp->cap = cp->cap ? 2 * cp->cap : 4096;
			cp->p = realloc(cp->p, cp->cap * sizeof(*cp->p));
		}
		cp->p[cp->n++] = p;
	}
	return NULL;
}

/* a data connection: local and peer ports, and whether we connected */
struct conn {
	uint16_t lport, pport;
	bool connector;
};

struct wire {
	struct conn c[MAX_RANKS * 4];
	int nc;
	pthread_mutex_t lock;
};

static void wire_add(struct wire *w, int fd, bool connector)
{
	struct sockaddr_in l, p;
	socklen_t ll = sizeof(l), pl = sizeof(p);

	if (fd < 0 || getsockname(fd, (struct sockaddr *)&l, &ll) ||
	    getpeername(fd, (struct sockaddr *)&p, &pl))
		return;
	pthread_mutex_lock(&w->lock);
	w->c[w->nc++] = (struct conn){ ntohs(l.sin_port), ntohs(p.sin_port),
				       connector };
	pthread_mutex_unlock(&w->lock);
}

static void wire_fn(struct rank_ctx *x)
{
	struct wire *w = x->user;
	struct incnn_comm *c = x->comm;
	float b[3001];
	int r;

	wire_add(w, c->link.ring_send_fd, true);
	wire_add(w, c->link.ring_recv_fd, false);
	wire_add(w, c->link.ps_fd, true);
	if (x->rank == 0)
		for (r = 1; r < x->job->N; r++)
			wire_add(w, c->link.ps_fds[r], false);
	gen_input(b, 3001, 1, x->rank, 1.0);
	x->ret = incnn_allreduce(c, b, 3001);
	if (!x->ret)
		x->ret = incnn_allreduce_ps(c, b, 3001);
	if (!x->ret)
		x->ret = incnn_allreduce(c, b, 1);
}

TEST(wire_marks)
{
	struct capture cp = { 0 };
	static struct wire w;
	struct rank_ctx x[MAX_RANKS];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_IP) };
	pthread_t th;
	struct job j;
	int i, r, big = 8 << 20, marked_flows = 0, store_pkts = 0;
	size_t k;

	cp.fd = socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_IP));
	if (cp.fd < 0)
		SKIP(return, "no AF_PACKET socket (needs CAP_NET_RAW): %s",
		     strerror(errno));
	sll.sll_ifindex = (int)if_nametoindex("lo");
	setsockopt(cp.fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	ASSERT_EQ(0, bind(cp.fd, (struct sockaddr *)&sll, sizeof(sll)));
	memset(&w, 0, sizeof(w));
	pthread_mutex_init(&w.lock, NULL);
	ASSERT_EQ(0, pthread_create(&th, NULL, capture_thread, &cp));

	job_init(&j, 3);
	j.cfg.chunk_bytes = 1000;
	j.fn = wire_fn;
	j.arg = &w;
	ASSERT_EQ(0, job_run(&j, x));
	usleep(100000);
	cp.stop = 1;
	pthread_join(th, NULL);
	close(cp.fd);
	for (r = 0; r < 3; r++)
		ASSERT_EQ(0, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
	ASSERT_EQ(3 * 2 + 2 * 2, w.nc);	/* ring 3 x 2 ends, ps 2 x 2 ends */

	/* the store: never marked */
	for (k = 0; k < cp.n; k++)
		if (cp.p[k].sport == j.port || cp.p[k].dport == j.port) {
			store_pkts++;
			EXPECT_EQ(0, cp.p[k].tos & 0xfc);
		}
	EXPECT_LT(10, store_pkts);

	/* each direction of each data connection, from its SYN on */
	for (i = 0; i < w.nc; i++) {
		struct conn *c = &w.c[i];
		uint32_t isn = 0, hi = 0, marked = 0;
		bool have_isn = false;

		for (k = 0; k < cp.n; k++) {
			struct pkt *p = &cp.p[k];
			uint32_t off;

			if (p->sport != c->lport || p->dport != c->pport)
				continue;
			if (p->syn) {
				isn = p->seq;
				have_isn = true;
				continue;
			}
			if (!p->len || !have_isn)
				continue;
			off = p->seq - isn - 1;
			if (!c->connector) {
				/* the acknowledgement, the sums: unmarked */
				EXPECT_EQ(0, p->tos & 0xfc) TH_LOG("port %u off %u",
								   c->lport, off);
			} else if (p->tos & 0xfc) {
				/* floats only, after the identification */
				EXPECT_EQ(0x28, p->tos & 0xfc);
				EXPECT_LE(24u, off) TH_LOG("marked byte %u", off);
				marked += p->len;
			} else {
				/* nothing unmarked after it */
				EXPECT_GE(24u, off + p->len)
					TH_LOG("unmarked bytes %u..%u", off,
					       off + p->len);
			}
			if (off + p->len > hi)
				hi = off + p->len;
		}
		ASSERT_TRUE(have_isn) TH_LOG("no SYN captured for port %u",
					     c->lport);
		if (c->connector) {
			/* 24 + whole floats, all of them marked */
			EXPECT_EQ(0u, (hi - 24) % 4);
			EXPECT_LT(0u, marked);
			EXPECT_EQ(hi - 24, marked) TH_LOG("port %u", c->lport);
			marked_flows++;
		}
	}
	EXPECT_EQ(3 + 2, marked_flows);
	free(cp.p);
}

/* --- store calls ---------------------------------------------------------- */

struct gather {
	uint64_t got[MAX_RANKS][MAX_RANKS];
	int bad_len_rank;
};

static void gather_fn(struct rank_ctx *x)
{
	struct gather *g = x->user;
	uint64_t v = 1000 + (uint64_t)x->rank;
	uint8_t big[16 * MAX_RANKS];

	x->ret = incnn_comm_barrier(x->comm);
	if (!x->ret)
		x->ret = incnn_comm_allgather_meta(x->comm, &v, sizeof(v),
						   g->got[x->rank]);
	if (!x->ret && g->bad_len_rank >= 0)
		x->ret = incnn_comm_allgather_meta(x->comm, big,
			x->rank == g->bad_len_rank ? 16 : 8, big);
}

TEST(allgather_meta)
{
	struct rank_ctx x[MAX_RANKS];
	struct gather g = { .bad_len_rank = -1 };
	struct job j;
	int r, k;

	job_init(&j, 5);
	j.fn = gather_fn;
	j.arg = &g;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 5; r++) {
		ASSERT_EQ(0, x[r].ret) TH_LOG("%s", x[r].err);
		for (k = 0; k < 5; k++)
			EXPECT_EQ(1000 + (uint64_t)k, g.got[r][k]);
	}
	g.bad_len_rank = 2;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 5; r++) {
		EXPECT_EQ(-EPROTO, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
		EXPECT_NE(NULL, strstr(x[r].err, "length mismatch"))
			TH_LOG("rank %d: %s", r, x[r].err);
	}
}

/* --- mismatches ----------------------------------------------------------- */

TEST(world_size_mismatch)
{
	struct baseline b0 = baseline();
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	int r, which;

	for (which = 0; which < 2; which++) {
		double t0 = now_s();

		job_init(&j, 3);
		if (which == 0)
			j.world[2] = 4;		/* one rank thinks it is bigger */
		else
			j.world[0] = 2;		/* rank 0 thinks it is smaller */
		/* a rank outside rank 0's world, late: still told why */
		j.delay_ms[2] = 500;
		ASSERT_EQ(0, job_run(&j, x));
		for (r = 0; r < 3; r++) {
			EXPECT_EQ(-EPROTO, x[r].create_ret)
				TH_LOG("rank %d: %d %s", r, x[r].create_ret,
				       x[r].create_err);
			EXPECT_NE(NULL, strstr(x[r].create_err, "world size mismatch"))
				TH_LOG("rank %d: %s", r, x[r].create_err);
		}
		EXPECT_GT(5.0, now_s() - t0);
	}
	ASSERT_CLEAN(b0);
}

struct mism {
	size_t n[MAX_RANKS];
	enum call call[MAX_RANKS];
};

static void mism_fn(struct rank_ctx *x)
{
	struct mism *m = x->user;
	size_t n = m->n[x->rank];
	float *b = calloc(n + 1, 4);
	int again;

	x->t0 = now_s();
	x->ret = m->call[x->rank] == CALL_PS ? incnn_allreduce_ps(x->comm, b, n) :
		 incnn_allreduce(x->comm, b, n);
	x->t1 = now_s();
	/* a failed communicator keeps failing, at once */
	again = incnn_allreduce(x->comm, b, n);
	if (again != x->ret)
		x->ret = -1000;
	free(b);
}

TEST(count_mismatch)
{
	struct baseline b0 = baseline();
	struct rank_ctx x[MAX_RANKS];
	struct mism m = { .n = { 100000, 100001, 100000 } };
	struct job j;
	int r;

	job_init(&j, 3);
	j.cfg.timeout_ms = 3000;
	j.fn = mism_fn;
	j.arg = &m;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 3; r++) {
		ASSERT_EQ(0, x[r].create_ret);
		EXPECT_EQ(-EPROTO, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
		EXPECT_NE(NULL, strstr(x[r].err, "element count mismatch"))
			TH_LOG("rank %d: %s", r, x[r].err);
		EXPECT_GT(2.0, x[r].t1 - x[r].t0);
	}
	ASSERT_CLEAN(b0);
}

TEST(operation_mismatch)
{
	struct rank_ctx x[MAX_RANKS];
	struct mism m = { .n = { 5000, 5000, 5000, 5000 },
			  .call = { CALL_RING, CALL_RING, CALL_PS, CALL_RING } };
	struct job j;
	int r;

	job_init(&j, 4);
	j.cfg.timeout_ms = 3000;
	j.fn = mism_fn;
	j.arg = &m;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 4; r++) {
		EXPECT_EQ(-EPROTO, x[r].ret) TH_LOG("rank %d: %s", r, x[r].err);
		EXPECT_NE(NULL, strstr(x[r].err, "operation mismatch"))
			TH_LOG("rank %d: %s", r, x[r].err);
	}
}

/* rank 1's config: emulate ebq 2^-@param */
static unsigned int tweak_param;

static void tweak_rank1(struct rank_ctx *x, struct incnn_comm_config *cfg)
{
	if (x->rank != 1)
		return;
	cfg->codec_mode = INCNN_COLL_CODEC_EMULATE;
	cfg->codec_id = INCNN_CODEC_EBQ;
	cfg->codec_param = tweak_param;
}

/* one rank emulates ebq 2^-8, the others nothing: every rank uses it */
TEST(codec_agreement)
{
	struct rank_ctx x[MAX_RANKS];
	struct sweep s = { .seed = 9, .scale = 0.1, .nsizes = 2,
			   .sizes = { 4099, 77 } };
	struct job j;

	job_init(&j, 3);
	j.fn = sweep_fn;
	j.arg = &s;
	j.tweak = tweak_rank1;
	tweak_param = 8;
	ASSERT_EQ(0, job_run(&j, x));
	sweep_check(_metadata, &j, x, &s, INCNN_CODEC_EBQ, 8, 3 * 0x1p-8);
	sweep_free(&s);
}

/* two different lossy codecs: every rank fails */
TEST(codec_mismatch)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	int r;

	job_init(&j, 3);
	j.cfg.codec_mode = INCNN_COLL_CODEC_EMULATE;
	j.cfg.codec_id = INCNN_CODEC_EBQ;
	j.cfg.codec_param = 10;
	j.tweak = tweak_rank1;
	tweak_param = 8;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 3; r++) {
		EXPECT_EQ(-EPROTO, x[r].create_ret) TH_LOG("%s", x[r].create_err);
		EXPECT_NE(NULL, strstr(x[r].create_err, "codec mismatch"))
			TH_LOG("rank %d: %s", r, x[r].create_err);
	}
}

/* --- failures ------------------------------------------------------------- */

static void big_fn(struct rank_ctx *x)
{
	size_t n = (size_t)(uintptr_t)x->user;
	float *b = malloc(4 * n);

	gen_input(b, n, 1, x->rank, 1.0);
	x->t0 = now_s();
	x->ret = incnn_allreduce(x->comm, b, n);
	x->t1 = now_s();
	free(b);
}

static void big_ps_fn(struct rank_ctx *x)
{
	size_t n = (size_t)(uintptr_t)x->user;
	float *b = malloc(4 * n);

	gen_input(b, n, 1, x->rank, 1.0);
	x->t0 = now_s();
	x->ret = incnn_allreduce_ps(x->comm, b, n);
	x->t1 = now_s();
	free(b);
}

/*
 * Every rank fails, within @limit seconds of its call. The limits tell
 * "detected" from "waited for the timeout" with a margin of seconds, not
 * of tenths: on a loaded 2-core host under ASan, a rank can take over 2 s
 * to move its data before the fault (1-2 of these failed at load 17-24
 * with 1-s margins, before and after a change to the ring).
 */
static void all_fail(struct __test_metadata *_metadata, struct job *j,
		     struct rank_ctx *x, double limit)
{
	int r;

	for (r = 0; r < j->N; r++) {
		ASSERT_EQ(0, x[r].create_ret) TH_LOG("%s", x[r].create_err);
		EXPECT_NE(0, x[r].ret) TH_LOG("rank %d succeeded", r);
		EXPECT_NE(0, x[r].err[0]);
		TH_LOG("rank %d: %.2f s, %d: %s", r, x[r].t1 - x[r].t0, x[r].ret,
		       x[r].err);
		if (r != j->fault_rank)
			EXPECT_GT(limit, x[r].t1 - x[r].t0) TH_LOG("rank %d", r);
	}
}

/* the longest call among the ranks that were not the faulty one */
static double longest_healthy_wait(const struct job *j,
				   const struct rank_ctx *x)
{
	double m = 0;
	int r;

	for (r = 0; r < j->N; r++)
		if (r != j->fault_rank && x[r].t1 - x[r].t0 > m)
			m = x[r].t1 - x[r].t0;
	return m;
}

/* a rank closes every socket mid-call, as a crash: detected at once */
TEST(fail_crash)
{
	struct baseline b0 = baseline();
	struct rank_ctx x[MAX_RANKS];
	struct job j;

	job_init(&j, 4);
	j.cfg.timeout_ms = 30000;
	j.fault = INCNN_COLL_FAULT_CLOSE;
	j.fault_rank = 2;
	j.fault_after = 1 << 20;
	j.fn = big_fn;
	j.arg = (void *)(uintptr_t)(1 << 20);
	ASSERT_EQ(0, job_run(&j, x));
	all_fail(_metadata, &j, x, 15.0);
	ASSERT_CLEAN(b0);
}

TEST(fail_crash_ps)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;

	job_init(&j, 4);
	j.cfg.timeout_ms = 30000;
	j.fault = INCNN_COLL_FAULT_CLOSE;
	j.fault_rank = 3;
	j.fault_after = 1 << 20;
	j.fn = big_ps_fn;
	j.arg = (void *)(uintptr_t)(1 << 20);
	ASSERT_EQ(0, job_run(&j, x));
	all_fail(_metadata, &j, x, 15.0);
}

/* a rank stops sending mid-stream (FIN): its successor sees a short stream */
TEST(fail_short_stream)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;

	job_init(&j, 4);
	j.cfg.timeout_ms = 30000;
	j.fault = INCNN_COLL_FAULT_SHORT;
	j.fault_rank = 1;
	j.fault_after = 1 << 20;
	j.fn = big_fn;
	j.arg = (void *)(uintptr_t)(1 << 20);
	ASSERT_EQ(0, job_run(&j, x));
	all_fail(_metadata, &j, x, 15.0);
	EXPECT_NE(NULL, strstr(x[2].err, "closed its connection")) TH_LOG("%s", x[2].err);
}

/*
 * a rank stalls past the timeout: the others fail within timeout + margin,
 * before the stalled rank would have gone on
 */
TEST(fail_stall)
{
	struct baseline b0 = baseline();
	struct rank_ctx x[MAX_RANKS];
	struct job j;

	job_init(&j, 4);
	j.cfg.timeout_ms = 1500;
	j.fault = INCNN_COLL_FAULT_STALL;
	j.fault_rank = 3;
	j.fault_after = 1 << 20;
	j.fault_stall_ms = 8000;
	j.fn = big_fn;
	j.arg = (void *)(uintptr_t)(1 << 20);
	ASSERT_EQ(0, job_run(&j, x));
	all_fail(_metadata, &j, x, 1.5 + 5.0);
	/* it did wait: the first healthy rank to fail timed out itself
	 * (the others may have heard of it sooner, counted from their own
	 * later start) */
	EXPECT_LT(1.4, longest_healthy_wait(&j, x));
	ASSERT_CLEAN(b0);
}

TEST(fail_stall_ps)
{
	struct rank_ctx x[MAX_RANKS];
	struct job j;

	job_init(&j, 3);
	j.cfg.timeout_ms = 1500;
	j.fault = INCNN_COLL_FAULT_STALL;
	j.fault_rank = 0;	/* the aggregator itself */
	j.fault_after = 1 << 20;
	j.fault_stall_ms = 8000;
	j.fn = big_ps_fn;
	j.arg = (void *)(uintptr_t)(1 << 20);
	ASSERT_EQ(0, job_run(&j, x));
	all_fail(_metadata, &j, x, 1.5 + 5.0);
}

/* a rank never shows up: everyone's rendezvous times out */
TEST(missing_rank)
{
	struct baseline b0 = baseline();
	struct rank_ctx x[MAX_RANKS];
	struct job j;
	double t0 = now_s();
	int r;

	job_init(&j, 3);
	j.cfg.init_timeout_ms = 1500;
	j.skip_rank = 2;
	ASSERT_EQ(0, job_run(&j, x));
	for (r = 0; r < 2; r++) {
		EXPECT_NE(0, x[r].create_ret);
		TH_LOG("rank %d: %s", r, x[r].create_err);
	}
	EXPECT_NE(NULL, strstr(x[0].create_err, "not joined: rank 2") ?:
			strstr(x[1].create_err, "not joined: rank 2"));
	EXPECT_GT(1.5 + 8.0, now_s() - t0);	/* a margin for load */
	ASSERT_CLEAN(b0);
}

/* AUTO without the module (the build host never loads it): identity */
TEST(auto_without_module)
{
	struct rank_ctx x[MAX_RANKS];
	struct sweep s = { .seed = 5, .scale = 1.0, .nsizes = 1,
			   .sizes = { 1003 } };
	struct job j;

	if (!access("/sys/module/incnn", F_OK))
		SKIP(return, "the incnn module is loaded here");
	job_init(&j, 2);
	j.cfg.codec_mode = INCNN_COLL_CODEC_AUTO;
	j.fn = sweep_fn;
	j.arg = &s;
	ASSERT_EQ(0, job_run(&j, x));
	sweep_check(_metadata, &j, x, &s, 0, 0, -1);
	sweep_free(&s);
}

/* the module's GET_CONFIG reply, as incnn's kmod/netlink.c builds it */
static size_t put_attr(uint8_t *p, uint16_t type, const void *data,
		       size_t len)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + len),
			    .nla_type = type };

	memcpy(p, &a, sizeof(a));
	memcpy(p + NLA_HDRLEN, data, len);
	memset(p + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	return NLA_HDRLEN + NLA_ALIGN(len);
}

static size_t put_rule(uint8_t *p, uint8_t dscp, uint8_t codec,
		       uint8_t param)
{
	uint8_t in[64];
	size_t n = 0;

	n += put_attr(in + n, INCNN_RULE_A_DSCP, &dscp, 1);
	n += put_attr(in + n, INCNN_RULE_A_CODEC, &codec, 1);
	n += put_attr(in + n, INCNN_RULE_A_PARAM, &param, 1);
	return put_attr(p, INCNN_A_RULE | NLA_F_NESTED, in, n);
}

TEST(rule_parse)
{
	uint8_t rules[256], msg[512], one = 1;
	unsigned int codec = 99, param = 99;
	size_t n = 0, m = 0;

	n += put_rule(rules + n, 10, INCNN_CODEC_INCEPTIONN, 10);
	n += put_rule(rules + n, 12, INCNN_CODEC_EBQ, 8);
	n += put_rule(rules + n, 13, INCNN_CODEC_LZ4, 0);
	m += put_attr(msg + m, INCNN_A_TX_ENABLED, &one, 1);
	m += put_attr(msg + m, INCNN_A_RULES | NLA_F_NESTED, rules, n);
	m += put_attr(msg + m, INCNN_A_RX_ENABLED, &one, 1);

	ASSERT_EQ(1, incnn_coll_rule_parse(msg, m, 0x28 >> 2, &codec, &param));
	EXPECT_EQ((unsigned int)INCNN_CODEC_INCEPTIONN, codec);
	EXPECT_EQ(10u, param);
	ASSERT_EQ(1, incnn_coll_rule_parse(msg, m, 0x30 >> 2, &codec, &param));
	EXPECT_EQ((unsigned int)INCNN_CODEC_EBQ, codec);
	EXPECT_EQ(8u, param);
	EXPECT_EQ(1, incnn_coll_rule_parse(msg, m, 13, &codec, &param));
	EXPECT_EQ((unsigned int)INCNN_CODEC_LZ4, codec);
	EXPECT_EQ(0, incnn_coll_rule_parse(msg, m, 11, &codec, &param));
	EXPECT_EQ(0, incnn_coll_rule_parse(msg, 8, 10, &codec, &param));
	/* a rule nest that claims more than there is */
	msg[8 + 4] = 0xff;
	EXPECT_EQ(-EBADMSG, incnn_coll_rule_parse(msg, m, 10, &codec, &param));
}

/* The setup messages: exact bytes, and every decode checks its length. */
TEST(setup_messages)
{
	static const uint8_t hello_bytes[COLL_HELLO_LEN] = {
		0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 4, 2, 10, 0, 0,
		0, 4, 0x75, 0x30, 0, 0, 0, 0, 10, 0, 0, 7, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0,
	};
	struct coll_hello h = { .version = COLL_PROTO_VERSION, .rank = 3,
				.world = 4, .codec = 2, .param = 10 }, h2;
	struct coll_data_hello d = { .kind = COLL_LINK_PS, .token = 0x1122334455667788ull,
				     .rank = 5 }, d2;
	struct coll_welcome w = { .world = 2, .token = 42, .codec = 1,
				  .param = 8 }, w2;
	union coll_sa addrs[2], sa[2];
	uint8_t buf[128];

	ASSERT_EQ(0, coll_sa_parse("10.0.0.7", 0x7530, &h.addr, NULL, 0));
	coll_hello_encode(&h, buf);
	EXPECT_EQ(0, memcmp(buf, hello_bytes, sizeof(hello_bytes)));
	ASSERT_EQ(0, coll_hello_decode(buf, COLL_HELLO_LEN, &h2));
	/* field by field: the struct's padding is not part of the message */
	EXPECT_EQ(h.version, h2.version);
	EXPECT_EQ(h.rank, h2.rank);
	EXPECT_EQ(h.world, h2.world);
	EXPECT_EQ(h.codec, h2.codec);
	EXPECT_EQ(h.param, h2.param);
	EXPECT_EQ(AF_INET, h2.addr.sa.sa_family);
	EXPECT_EQ(htonl(0x0a000007), h2.addr.v4.sin_addr.s_addr);
	EXPECT_EQ(0x7530, coll_sa_port(&h2.addr));
	EXPECT_EQ(-EPROTO, coll_hello_decode(buf, COLL_HELLO_LEN - 1, &h2));
	EXPECT_EQ(-EPROTO, coll_hello_decode(buf, COLL_HELLO_LEN + 1, &h2));
	/* an unknown family, a non-zero reserved word */
	buf[17] = 5;
	EXPECT_EQ(-EPROTO, coll_hello_decode(buf, COLL_HELLO_LEN, &h2));
	buf[17] = 4;
	buf[23] = 1;
	EXPECT_EQ(-EPROTO, coll_hello_decode(buf, COLL_HELLO_LEN, &h2));
	/* version 1's 24-byte HELLO: its version and rank, for the message */
	memset(buf, 0, 24);
	buf[1] = 1;
	buf[7] = 3;
	ASSERT_EQ(0, coll_hello_decode(buf, 24, &h2));
	EXPECT_EQ(1, h2.version);
	EXPECT_EQ(3u, h2.rank);

	ASSERT_EQ(0, coll_sa_parse("127.0.0.1", 0x1234, &addrs[0], NULL, 0));
	ASSERT_EQ(0, coll_sa_parse("fd00::2", 0x5678, &addrs[1], NULL, 0));
	ASSERT_EQ(72u, coll_welcome_len(2));
	coll_welcome_encode(&w, addrs, buf);
	EXPECT_EQ(2u, coll_get32(buf));
	EXPECT_EQ(42u, coll_get64(buf + 8));
	EXPECT_EQ(6, coll_get16(buf + 48));
	EXPECT_EQ(0x5678, coll_get16(buf + 50));
	EXPECT_EQ(0xfd, buf[56]);
	EXPECT_EQ(2, buf[71]);
	ASSERT_EQ(0, coll_welcome_decode(buf, 72, 2, &w2, sa));
	EXPECT_EQ(42u, w2.token);
	EXPECT_EQ(1, w2.codec);
	EXPECT_EQ(8, w2.param);
	EXPECT_EQ(AF_INET, sa[0].sa.sa_family);
	EXPECT_EQ(htonl(INADDR_LOOPBACK), sa[0].v4.sin_addr.s_addr);
	EXPECT_EQ(0x1234, coll_sa_port(&sa[0]));
	EXPECT_EQ(AF_INET6, sa[1].sa.sa_family);
	EXPECT_EQ(0, memcmp(&sa[1].v6.sin6_addr, &addrs[1].v6.sin6_addr, 16));
	EXPECT_EQ(0x5678, coll_sa_port(&sa[1]));
	EXPECT_EQ(-EPROTO, coll_welcome_decode(buf, 71, 2, &w2, sa));
	EXPECT_EQ(-EPROTO, coll_welcome_decode(buf, 72, 3, &w2, sa));
	EXPECT_EQ(-EPROTO, coll_welcome_decode(buf, 48, 1, &w2, sa));

	coll_data_hello_encode(&d, buf);
	EXPECT_EQ(COLL_DATA_MAGIC, coll_get32(buf));
	ASSERT_EQ(0, coll_data_hello_decode(buf, COLL_DATA_HELLO_LEN, &d2));
	EXPECT_EQ(d.kind, d2.kind);
	EXPECT_EQ(d.token, d2.token);
	EXPECT_EQ(d.rank, d2.rank);
	EXPECT_EQ(-EPROTO, coll_data_hello_decode(buf, COLL_DATA_HELLO_LEN - 1, &d2));
	buf[20] = 1;	/* the reserved word */
	EXPECT_EQ(-EPROTO, coll_data_hello_decode(buf, COLL_DATA_HELLO_LEN, &d2));
	buf[20] = 0;
	buf[0] ^= 1;	/* the magic */
	EXPECT_EQ(-EPROTO, coll_data_hello_decode(buf, COLL_DATA_HELLO_LEN, &d2));
}

/* What a user may write as an address, and what it becomes. */
TEST(address_parse)
{
	union coll_sa a;
	char buf[COLL_ADDR_STRLEN], err[256];

	ASSERT_EQ(0, coll_sa_parse("192.0.2.1", 80, &a, err, sizeof(err)));
	EXPECT_STREQ("192.0.2.1:80", incnn_coll_addr_str(&a, buf, sizeof(buf)));
	ASSERT_EQ(0, coll_sa_parse("::1", 29500, &a, err, sizeof(err)));
	EXPECT_EQ(AF_INET6, a.sa.sa_family);
	EXPECT_STREQ("[::1]:29500", incnn_coll_addr_str(&a, buf, sizeof(buf)));
	ASSERT_EQ(0, coll_sa_parse("[fd00::1]", 7, &a, err, sizeof(err)));
	EXPECT_STREQ("[fd00::1]:7", incnn_coll_addr_str(&a, buf, sizeof(buf)));
	/* IPv4-mapped: the IPv4 flow it is */
	ASSERT_EQ(0, coll_sa_parse("::ffff:192.0.2.9", 1, &a, err, sizeof(err)));
	EXPECT_EQ(AF_INET, a.sa.sa_family);
	EXPECT_STREQ("192.0.2.9:1", incnn_coll_addr_str(&a, buf, sizeof(buf)));
	/* link-local: with a scope (lo is index 1 everywhere), or an error */
	ASSERT_EQ(0, coll_sa_parse("fe80::1%lo", 2, &a, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(1u, a.v6.sin6_scope_id);
	EXPECT_STREQ("[fe80::1%lo]:2", incnn_coll_addr_str(&a, buf, sizeof(buf)));
	EXPECT_EQ(-EINVAL, coll_sa_parse("fe80::1", 2, &a, err, sizeof(err)));
	EXPECT_STREQ("link-local address 'fe80::1' needs a scope: write it as fe80::1%IFNAME (e.g. fe80::1%eth0)",
		     err);
	EXPECT_EQ(-EHOSTUNREACH, coll_sa_parse("[10.0.0.1]", 2, &a, err,
					       sizeof(err)));
	EXPECT_EQ(-EHOSTUNREACH, coll_sa_parse("fd00::1::2", 2, &a, err,
					       sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "cannot resolve address 'fd00::1::2'"))
		TH_LOG("%s", err);
	EXPECT_EQ(-EINVAL, coll_sa_parse("[]", 2, &a, err, sizeof(err)));
	EXPECT_STREQ("address '' is empty", err);
}

static bool have_ipv6_loopback(void)
{
	int port, fd = store_listen(&port, true);

	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

/* A whole job over IPv6 (store, ring and aggregator links on ::1): the
 * same results as over IPv4, bit for bit. */
TEST(ipv6_ring_and_ps)
{
	struct rank_ctx x[MAX_RANKS];
	struct sweep s = { .seed = 77, .scale = 0.05 };
	struct job j;

	if (!have_ipv6_loopback())
		SKIP(return, "no IPv6 loopback (::1) on this host");
	job_init(&j, 4);
	j.host = "::1";
	j.cfg.codec_mode = INCNN_COLL_CODEC_EMULATE;
	j.cfg.codec_id = INCNN_CODEC_EBQ;
	j.cfg.codec_param = 10;
	j.fn = sweep_fn;
	j.arg = &s;
	s.sizes[0] = 7;
	s.sizes[1] = 100003;
	s.calls[0] = CALL_RING;
	s.calls[1] = CALL_PS;
	s.nsizes = 2;
	ASSERT_EQ(0, job_run(&j, x));
	sweep_check(_metadata, &j, x, &s, INCNN_CODEC_EBQ, 10,
		    4 * ldexp(1, -10));
	sweep_free(&s);
}

/* MASTER_ADDR that cannot be used: one line saying why. */
TEST(bad_master_addr)
{
	struct incnn_comm_config cfg;
	struct incnn_comm *c = (void *)1;
	char err[256];

	incnn_comm_config_init(&cfg);
	cfg.master_port = 1;
	cfg.rank = 0;
	cfg.world_size = 2;
	cfg.master_addr = "fe80::1";
	EXPECT_EQ(-EINVAL, incnn_comm_create(&c, &cfg, err, sizeof(err)));
	EXPECT_EQ(NULL, c);
	EXPECT_STREQ("MASTER_ADDR: link-local address 'fe80::1' needs a scope: write it as fe80::1%IFNAME (e.g. fe80::1%eth0)",
		     err);
	cfg.master_addr = "[::1";
	EXPECT_EQ(-EHOSTUNREACH, incnn_comm_create(&c, &cfg, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "MASTER_ADDR: cannot resolve address '[::1'"))
		TH_LOG("%s", err);
	EXPECT_EQ(NULL, strchr(err, '\n'));
}

TEST(bad_config)
{
	struct incnn_comm_config cfg;
	struct incnn_comm *c = (void *)1;
	char err[256];

	incnn_comm_config_init(&cfg);
	cfg.master_addr = "127.0.0.1";
	cfg.master_port = 1;
	cfg.rank = 3;
	cfg.world_size = 3;
	EXPECT_EQ(-EINVAL, incnn_comm_create(&c, &cfg, err, sizeof(err)));
	EXPECT_EQ(NULL, c);
	EXPECT_NE(NULL, strstr(err, "out of range")) TH_LOG("%s", err);
	cfg.rank = 0;
	cfg.world_size = 0;
	EXPECT_EQ(-EINVAL, incnn_comm_create(&c, &cfg, err, sizeof(err)));
	cfg.world_size = 2;
	cfg.codec_mode = INCNN_COLL_CODEC_EMULATE;
	cfg.codec_id = INCNN_CODEC_EBQ;
	cfg.codec_param = 31;
	EXPECT_EQ(-EINVAL, incnn_comm_create(&c, &cfg, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "cannot be emulated")) TH_LOG("%s", err);
	/* nobody serves the store: a timeout, not a hang */
	cfg.codec_mode = INCNN_COLL_CODEC_NONE;
	cfg.rank = 1;
	cfg.init_timeout_ms = 300;
	EXPECT_EQ(-ETIMEDOUT, incnn_comm_create(&c, &cfg, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "cannot reach the store")) TH_LOG("%s", err);
}

/* --- ranks as processes ------------------------------------------------------ */

struct shared {
	int ret[MAX_RANKS];
	double t0[MAX_RANKS], t1[MAX_RANKS];
	char err[MAX_RANKS][256];
	int started;
	float out[];
};

static struct shared *shared_map(size_t floats)
{
	void *p = mmap(NULL, sizeof(struct shared) + 4 * floats * MAX_RANKS,
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * One rank in a child process, configured through the environment
 * (torchrun style): MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE.
 */
static void child_rank(struct shared *sh, int rank, int N, int port,
		       size_t n, bool ps, const struct incnn_comm_config *base,
		       const char *codec_env)
{
	struct incnn_comm_config cfg = *base;
	struct incnn_comm *c;
	char v[32], err[256];
	float *b = malloc(4 * n + 4);
	int ret;

	setenv("MASTER_ADDR", "127.0.0.1", 1);
	snprintf(v, sizeof(v), "%d", port);
	setenv("MASTER_PORT", v, 1);
	snprintf(v, sizeof(v), "%d", rank);
	setenv("RANK", v, 1);
	snprintf(v, sizeof(v), "%d", N);
	setenv("WORLD_SIZE", v, 1);
	if (codec_env)
		setenv("INCNN_CODEC", codec_env, 1);
	ret = incnn_comm_create(&c, &cfg, err, sizeof(err));
	if (ret) {
		sh->ret[rank] = ret;
		snprintf(sh->err[rank], sizeof(sh->err[rank]), "%s", err);
		_exit(1);
	}
	gen_input(b, n, 3, rank, 1.0);
	__atomic_add_fetch(&sh->started, 1, __ATOMIC_SEQ_CST);
	sh->t0[rank] = now_s();
	ret = ps ? incnn_allreduce_ps(c, b, n) : incnn_allreduce(c, b, n);
	sh->t1[rank] = now_s();
	sh->ret[rank] = ret;
	snprintf(sh->err[rank], sizeof(sh->err[rank]), "%s",
		 incnn_comm_strerror(c));
	if (!ret)
		memcpy(sh->out + n * rank, b, 4 * n);
	incnn_comm_destroy(c);
	free(b);
	_exit(ret ? 1 : 0);
}

/* a free port for rank 0 to serve the store on (bind and let go) */
static int free_port(void)
{
	int port, fd = store_listen(&port, false);

	if (fd < 0)
		return -1;
	close(fd);
	return port;
}

static void run_procs(struct __test_metadata *_metadata, int N, size_t n,
		      bool ps, int victim, struct incnn_comm_config *cfg,
		      const char *codec_env, unsigned int codec,
		      unsigned int param)
{
	struct shared *sh = shared_map(n);
	pid_t pid[MAX_RANKS];
	double killed = 0;
	int r, port = free_port(), status;

	ASSERT_NE(NULL, sh);
	ASSERT_LT(0, port);
	for (r = 0; r < N; r++) {
		struct incnn_comm_config c = *cfg;

		if (r == victim) {
			c.fault = INCNN_COLL_FAULT_STALL;
			c.fault_after = 1 << 20;
			c.fault_stall_ms = 60000;
		}
		pid[r] = fork();
		ASSERT_LE(0, pid[r]);
		if (pid[r] == 0)
			child_rank(sh, r, N, port, n, ps, &c, codec_env);
	}
	if (victim >= 0) {
		double t0 = now_s();

		while (__atomic_load_n(&sh->started, __ATOMIC_SEQ_CST) < N &&
		       now_s() - t0 < 10)
			usleep(1000);
		usleep(300000);		/* it is stalled mid-call by now */
		kill(pid[victim], SIGKILL);
		killed = now_s();
	}
	for (r = 0; r < N; r++)
		waitpid(pid[r], &status, 0);
	if (victim < 0) {
		float *in[MAX_RANKS], *want = malloc(4 * n + 4);

		for (r = 0; r < N; r++) {
			ASSERT_EQ(0, sh->ret[r]) TH_LOG("rank %d: %s", r, sh->err[r]);
			in[r] = malloc(4 * n + 4);
			gen_input(in[r], n, 3, r, 1.0);
		}
		if (ps)
			sim_ps(in, N, n, codec, param, want);
		else
			sim_ring(in, N, n, codec, param, want);
		for (r = 0; r < N; r++) {
			EXPECT_EQ(0, memcmp(want, sh->out + n * r, 4 * n))
				TH_LOG("rank %d", r);
			free(in[r]);
		}
		free(want);
	} else {
		for (r = 0; r < N; r++) {
			if (r == victim)
				continue;
			EXPECT_NE(0, sh->ret[r]) TH_LOG("rank %d succeeded", r);
			TH_LOG("rank %d: %.2f s after the kill: %s", r,
			       sh->t1[r] - killed, sh->err[r]);
			/* the death, not the 10 s timeout, ended the call */
			EXPECT_GT(2.0, sh->t1[r] - killed);
		}
	}
	munmap(sh, sizeof(struct shared) + 4 * n * MAX_RANKS);
}

TEST(processes_ring_and_ps)
{
	struct incnn_comm_config cfg;

	incnn_comm_config_init(&cfg);
	cfg.codec_mode = INCNN_COLL_CODEC_NONE;
	cfg.timeout_ms = 10000;
	cfg.init_timeout_ms = 10000;
	run_procs(_metadata, 4, 200003, false, -1, &cfg, NULL, 0, 0);
	run_procs(_metadata, 3, 50001, true, -1, &cfg, NULL, 0, 0);
	/* the codec from the environment, as a launcher would set it */
	cfg.codec_mode = INCNN_COLL_CODEC_AUTO;
	run_procs(_metadata, 4, 20001, false, -1, &cfg, "ebq:8",
		  INCNN_CODEC_EBQ, 8);
}

/* INCNN_CODEC=NAME:SETTING, spelt as incctl and the tools spell it */
TEST(codec_env_spelling)
{
	static const struct {
		const char *env, *err;
		unsigned int id, param;
	} cases[] = {
		{ "ebq:2^-8", NULL, INCNN_CODEC_EBQ, 8 },
		{ "inceptionn:6", NULL, INCNN_CODEC_INCEPTIONN, 6 },
		{ "ebq:0.0009765625", NULL, INCNN_CODEC_EBQ, 10 },
		{ "trunc:24", NULL, INCNN_CODEC_TRUNC, 24 },
		{ "ebq", NULL, INCNN_CODEC_EBQ, 10 },
		{ "ebq:31", "INCNN_CODEC=ebq:31: ebq takes bound 2^-1..2^-30", 0, 0 },
		{ "trunc:12", "INCNN_CODEC=trunc:12: trunc takes bits 8, 16 or 24", 0, 0 },
		{ "ebq:2^-", "INCNN_CODEC=ebq:2^-: ebq takes bound 2^-1..2^-30", 0, 0 },
		{ "foo:3", "INCNN_CODEC=foo:3: want auto, none or NAME[:SETTING]", 0, 0 },
	};
	struct incnn_comm_config cfg;
	struct incnn_comm *c;
	unsigned int id, param;
	char err[256], port[16];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		incnn_comm_config_init(&cfg);
		cfg.rank = 0;
		cfg.world_size = 1;
		cfg.init_timeout_ms = 5000;
		snprintf(port, sizeof(port), "%d", free_port());
		setenv("MASTER_ADDR", "127.0.0.1", 1);
		setenv("MASTER_PORT", port, 1);
		setenv("INCNN_CODEC", cases[i].env, 1);
		err[0] = '\0';
		if (cases[i].err) {
			EXPECT_EQ(-EINVAL, incnn_comm_create(&c, &cfg, err,
							     sizeof(err)));
			EXPECT_EQ(0, strncmp(err, cases[i].err,
					     strlen(cases[i].err)))
				TH_LOG("%s: %s", cases[i].env, err);
			continue;
		}
		ASSERT_EQ(0, incnn_comm_create(&c, &cfg, err, sizeof(err)))
			TH_LOG("%s: %s", cases[i].env, err);
		incnn_comm_codec(c, &id, &param);
		EXPECT_EQ(cases[i].id, id) TH_LOG("%s", cases[i].env);
		EXPECT_EQ(cases[i].param, param) TH_LOG("%s", cases[i].env);
		incnn_comm_destroy(c);
	}
}

TEST(processes_kill)
{
	struct incnn_comm_config cfg;

	incnn_comm_config_init(&cfg);
	cfg.codec_mode = INCNN_COLL_CODEC_NONE;
	cfg.timeout_ms = 10000;
	cfg.init_timeout_ms = 10000;
	/* a ring member, then the aggregator (rank 0: the store dies too) */
	run_procs(_metadata, 4, 1 << 20, false, 2, &cfg, NULL, 0, 0);
	run_procs(_metadata, 3, 1 << 20, true, 0, &cfg, NULL, 0, 0);
}

TEST_HARNESS_MAIN
