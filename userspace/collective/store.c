// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The store: a thread of rank 0 that every rank (rank 0 included) talks
 * to over TCP, never marked. It checks the rendezvous (world size,
 * duplicate ranks, codec), hands out the data addresses, and for every
 * collective call checks that all ranks make the same call with the same
 * element count and that all of them finished it. The first failure is
 * sent to every rank. See coll.h for the messages.
 */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "coll.h"

/* --- the server --------------------------------------------------------- */

enum srv_phase {
	SRV_REGISTER,	/* waiting for every rank's HELLO */
	SRV_SETUP,	/* WELCOME sent, waiting for READY */
	SRV_RUN,	/* GO sent: calls */
	SRV_FAILED,	/* ERROR sent to everyone */
};

struct srv_client {
	int fd;
	int rank;		/* -1 before HELLO */
	bool bye;
	bool dead;		/* to be removed */
	struct coll_buf in, out;
	/* HELLO */
	uint32_t world;
	uint8_t codec, param;
	union coll_sa addr;	/* its data listener */
	bool ready;
	/* the current call */
	bool call, done;
	uint64_t seq, count;
	uint32_t kind;
	struct coll_buf data;
};

struct coll_server {
	pthread_t thread;
	int lfd;
	int wake[2];
	int world;
	uint64_t token;
	enum srv_phase phase;
	int fail_code;
	char fail[COLL_MSG_LEN];
	struct srv_client **cl;
	size_t ncl, capcl;
	struct srv_client **by_rank;
	int nhello, nready;
	bool call_ok;
	uint8_t codec, param;
	/* ranks that have connected (after a failed registration) */
	uint8_t seen[INCNN_COLL_MAX_WORLD / 8];
	uint32_t min_world, max_world;
	int64_t min_told;	/* when ranks 0..min_world-1 all knew */
	bool linger;		/* wait for the ranks that have not come yet */
	int init_timeout_ms;
	int64_t reg_deadline;	/* every rank joined by then */
	atomic_bool stopping;
	atomic_llong stop_deadline;
};

static void srv_gone(struct coll_server *s, struct srv_client *c);

static void srv_queue(struct coll_server *s, struct srv_client *c,
		      uint16_t type, const void *payload, size_t len)
{
	if (c->dead || c->fd < 0)
		return;
	if (incnn_coll_msg_append(&c->out, type, payload, len) ||
	    incnn_coll_buf_flush(c->fd, &c->out))
		srv_gone(s, c);
}

static void srv_send_error(struct coll_server *s, struct srv_client *c)
{
	uint8_t buf[4 + COLL_MSG_LEN];
	size_t len = strlen(s->fail);

	coll_put32(buf, (uint32_t)s->fail_code);
	memcpy(buf + 4, s->fail, len);
	srv_queue(s, c, COLL_MSG_ERROR, buf, 4 + len);
}

static void srv_mark_seen(struct coll_server *s, uint32_t rank)
{
	if (rank < INCNN_COLL_MAX_WORLD)
		s->seen[rank / 8] |= 1u << (rank % 8);
}

/* The job failed: tell every rank (once). */
static void srv_fail(struct coll_server *s, int code, const char *fmt, ...)
	COLL_PRINTF(3, 4);
static void srv_fail(struct coll_server *s, int code, const char *fmt, ...)
{
	va_list ap;
	size_t i;

	if (s->phase == SRV_FAILED)
		return;
	va_start(ap, fmt);
	incnn_coll_vmsg(s->fail, sizeof(s->fail), fmt, ap);
	va_end(ap);
	s->fail_code = code;
	/* a disagreement at the rendezvous: the ranks that have not joined
	 * yet exist and will come; tell them why instead of vanishing */
	s->linger = s->phase == SRV_REGISTER && code == EPROTO;
	s->phase = SRV_FAILED;
	for (i = 0; i < s->ncl; i++)
		if (s->cl[i]->rank >= 0)
			srv_send_error(s, s->cl[i]);
}

/* " (not joined: ranks 2, 5)" for the registration phase */
static void srv_missing(struct coll_server *s, char *buf, size_t len)
{
	size_t pos = 0;
	int r, shown = 0;

	buf[0] = '\0';
	if (s->phase != SRV_REGISTER)
		return;
	for (r = 0; r < s->world && pos + 24 < len; r++) {
		if (s->by_rank[r])
			continue;
		if (shown == 8) {
			pos += snprintf(buf + pos, len - pos, ", ...");
			break;
		}
		pos += snprintf(buf + pos, len - pos, "%s%d",
				shown ? ", " : " (not joined: rank ", r);
		shown++;
	}
	if (shown && pos + 2 < len)
		snprintf(buf + pos, len - pos, ")");
}

static const char *srv_codec_name(unsigned int id)
{
	const struct incnn_codec *c = incnn_codec_get(id);

	return id == 0 ? "identity" : c ? c->name : "unknown";
}

static void srv_welcome(struct coll_server *s)
{
	size_t len = coll_welcome_len((uint32_t)s->world);
	uint8_t *p = calloc(1, len);
	union coll_sa *addrs = calloc((size_t)s->world, sizeof(*addrs));
	struct coll_welcome w = { .world = (uint32_t)s->world };
	int r;

	if (!p || !addrs) {
		free(p);
		free(addrs);
		srv_fail(s, ENOMEM, "store: out of memory");
		return;
	}
	/* the job's codec: the one lossy codec any rank reported */
	for (r = 0; r < s->world; r++) {
		struct srv_client *c = s->by_rank[r];

		if (!c->codec)
			continue;
		if (!s->codec) {
			s->codec = c->codec;
			s->param = c->param;
		} else if (c->codec != s->codec || c->param != s->param) {
			int first;

			for (first = 0; first < r; first++)
				if (s->by_rank[first]->codec)
					break;
			srv_fail(s, EPROTO,
				 "codec mismatch: rank %d uses %s %u, rank %d uses %s %u (every rank must emulate the same codec; check incctl rules and --codec)",
				 first, srv_codec_name(s->codec), s->param, r,
				 srv_codec_name(c->codec), c->param);
			free(p);
			free(addrs);
			return;
		}
	}
	w.token = s->token;
	w.codec = s->codec;
	w.param = s->param;
	for (r = 0; r < s->world; r++)
		addrs[r] = s->by_rank[r]->addr;
	coll_welcome_encode(&w, addrs, p);
	s->phase = SRV_SETUP;
	for (r = 0; r < s->world; r++)
		srv_queue(s, s->by_rank[r], COLL_MSG_WELCOME, p, len);
	free(p);
	free(addrs);
}

static void srv_hello(struct coll_server *s, struct srv_client *c,
		      const uint8_t *p, uint32_t len)
{
	struct coll_hello h;
	uint32_t rank, world;

	if (coll_hello_decode(p, len, &h) || c->rank >= 0) {
		srv_fail(s, EPROTO, "store: malformed HELLO");
		return;
	}
	rank = h.rank;
	world = h.world;
	if (world < s->min_world)
		s->min_world = world;
	if (world > s->max_world && world <= INCNN_COLL_MAX_WORLD)
		s->max_world = world;
	if (s->phase == SRV_FAILED) {
		/* tell a latecomer why the job failed */
		c->rank = (int)(rank < INCNN_COLL_MAX_WORLD ? rank : 0);
		srv_mark_seen(s, rank);
		srv_send_error(s, c);
		return;
	}
	if (h.version != COLL_PROTO_VERSION) {
		c->rank = 0;
		srv_fail(s, EPROTO,
			 "rank %u speaks store protocol %u, rank 0 speaks %u",
			 rank, h.version, COLL_PROTO_VERSION);
		return;
	}
	if (s->phase != SRV_REGISTER) {
		/* the job is running: turn it away, the job goes on */
		char msg[COLL_MSG_LEN];
		uint8_t buf[4 + COLL_MSG_LEN];
		int n = snprintf(msg, sizeof(msg),
				 "rank %u tried to join a running job of %d ranks (duplicate rank?)",
				 rank, s->world);

		coll_put32(buf, EPROTO);
		memcpy(buf + 4, msg, (size_t)n);
		srv_queue(s, c, COLL_MSG_ERROR, buf, 4 + (size_t)n);
		c->rank = -2;	/* not part of the job */
		return;
	}
	c->rank = (int)(rank < INCNN_COLL_MAX_WORLD ? rank : 0);
	srv_mark_seen(s, rank);
	if (world != (uint32_t)s->world) {
		srv_fail(s, EPROTO,
			 "world size mismatch: rank %u has WORLD_SIZE=%u, rank 0 has WORLD_SIZE=%d",
			 rank, world, s->world);
		return;
	}
	if (rank >= world) {
		srv_fail(s, EPROTO, "rank %u out of range for WORLD_SIZE=%u",
			 rank, world);
		return;
	}
	if (s->by_rank[rank]) {
		srv_fail(s, EPROTO, "rank %u joined twice", rank);
		return;
	}
	c->world = world;
	c->codec = h.codec;
	c->param = h.param;
	c->addr = h.addr;
	s->by_rank[rank] = c;
	if (++s->nhello == s->world)
		srv_welcome(s);
}

static void srv_reset_calls(struct coll_server *s)
{
	int r;

	for (r = 0; r < s->world; r++) {
		struct srv_client *c = s->by_rank[r];

		c->call = c->done = false;
		c->data.off = c->data.len = 0;
	}
	s->call_ok = false;
}

static const char *srv_kind_name(uint32_t kind)
{
	switch (kind) {
	case COLL_CALL_RING:
		return "incnn_allreduce";
	case COLL_CALL_PS:
		return "incnn_allreduce_ps";
	case COLL_CALL_GATHER:
		return "incnn_comm_allgather_meta";
	case COLL_CALL_THC:
		return "incnn_allreduce_thc";
	case COLL_CALL_THC_PS:
		return "incnn_allreduce_thc_ps";
	default:
		return "an unknown call";
	}
}

static void srv_check_done(struct coll_server *s)
{
	uint8_t seq[8];
	int r;

	if (!s->call_ok)
		return;
	for (r = 0; r < s->world; r++)
		if (!s->by_rank[r]->done)
			return;
	coll_put64(seq, s->by_rank[0]->seq);
	srv_reset_calls(s);
	for (r = 0; r < s->world; r++)
		srv_queue(s, s->by_rank[r], COLL_MSG_RESULT, seq, 8);
}

static void srv_all_called(struct coll_server *s)
{
	struct srv_client *c0 = s->by_rank[0];
	int r;

	for (r = 1; r < s->world; r++) {
		struct srv_client *c = s->by_rank[r];

		if (c->seq != c0->seq) {
			srv_fail(s, EPROTO,
				 "call sequence mismatch: rank 0 is at call #%llu, rank %d at #%llu",
				 (unsigned long long)c0->seq, r,
				 (unsigned long long)c->seq);
			return;
		}
		if (c->kind != c0->kind) {
			srv_fail(s, EPROTO,
				 "operation mismatch in call #%llu: rank 0 called %s, rank %d called %s",
				 (unsigned long long)c0->seq,
				 srv_kind_name(c0->kind), r,
				 srv_kind_name(c->kind));
			return;
		}
		if (c->count != c0->count) {
			srv_fail(s, EPROTO,
				 c0->kind == COLL_CALL_GATHER ?
				 "length mismatch in call #%llu (%s): rank 0 passed %llu bytes, rank %d passed %llu" :
				 "element count mismatch in call #%llu (%s): rank 0 passed %llu elements, rank %d passed %llu",
				 (unsigned long long)c0->seq,
				 srv_kind_name(c0->kind),
				 (unsigned long long)c0->count, r,
				 (unsigned long long)c->count);
			return;
		}
	}
	if (c0->kind != COLL_CALL_GATHER) {
		s->call_ok = true;
		srv_check_done(s);
		return;
	}
	{
		size_t each = (size_t)c0->count;
		size_t len = 8 + each * (size_t)s->world;
		uint8_t *p = malloc(len);

		if (!p) {
			srv_fail(s, ENOMEM, "store: out of memory");
			return;
		}
		coll_put64(p, c0->seq);
		for (r = 0; r < s->world; r++)
			if (each)
				memcpy(p + 8 + each * r,
				       s->by_rank[r]->data.p +
				       s->by_rank[r]->data.off, each);
		srv_reset_calls(s);
		for (r = 0; r < s->world; r++)
			srv_queue(s, s->by_rank[r], COLL_MSG_RESULT, p, len);
		free(p);
	}
}

static void srv_call(struct coll_server *s, struct srv_client *c,
		     const uint8_t *p, uint32_t len)
{
	int r;

	if (len < 24 || c->call) {
		srv_fail(s, EPROTO, "store: malformed CALL from rank %d",
			 c->rank);
		return;
	}
	c->seq = coll_get64(p);
	c->kind = coll_get32(p + 8);
	c->count = coll_get64(p + 16);
	c->data.off = c->data.len = 0;
	if (c->kind == COLL_CALL_GATHER &&
	    (c->count > COLL_GATHER_MAX || len - 24 != c->count)) {
		srv_fail(s, EPROTO, "store: malformed gather from rank %d",
			 c->rank);
		return;
	}
	if (incnn_coll_buf_append(&c->data, p + 24, len - 24)) {
		srv_fail(s, ENOMEM, "store: out of memory");
		return;
	}
	c->call = true;
	for (r = 0; r < s->world; r++)
		if (s->by_rank[r]->bye) {
			srv_fail(s, ECONNABORTED,
				 "rank %d started call #%llu, but rank %d has left the job (incnn_comm_destroy)",
				 c->rank, (unsigned long long)c->seq, r);
			return;
		}
	for (r = 0; r < s->world; r++)
		if (!s->by_rank[r]->call)
			return;
	srv_all_called(s);
}

static void srv_message(struct coll_server *s, struct srv_client *c,
			uint16_t type, const uint8_t *p, uint32_t len)
{
	char text[COLL_MSG_LEN], missing[160];
	int r;

	if (type == COLL_MSG_HELLO) {
		srv_hello(s, c, p, len);
		return;
	}
	if (c->rank < 0)	/* nothing before HELLO, nothing after a refusal */
		return;
	if (type == COLL_MSG_BYE) {
		c->bye = true;
		/* leaving while the others are in a call: they would wait */
		if (s->phase == SRV_RUN)
			for (r = 0; r < s->world; r++)
				if (s->by_rank[r]->call && !s->by_rank[r]->done) {
					srv_fail(s, ECONNABORTED,
						 "rank %d left the job (incnn_comm_destroy) while rank %d is in call #%llu",
						 c->rank, r,
						 (unsigned long long)s->by_rank[r]->seq);
					break;
				}
		return;
	}
	if (type == COLL_MSG_ABORT) {
		size_t n = len < sizeof(text) - 1 ? len : sizeof(text) - 1;

		memcpy(text, p, n);
		text[n] = '\0';
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)text[i] < 0x20)
				text[i] = ' ';
		srv_missing(s, missing, sizeof(missing));
		srv_fail(s, ECONNABORTED, "aborted by rank %d: %s%s", c->rank, text,
			 missing);
		return;
	}
	if (s->phase == SRV_FAILED)
		return;
	switch (type) {
	case COLL_MSG_READY:
		if (s->phase != SRV_SETUP || c->ready)
			break;
		c->ready = true;
		if (++s->nready == s->world) {
			s->phase = SRV_RUN;
			for (r = 0; r < s->world; r++)
				srv_queue(s, s->by_rank[r], COLL_MSG_GO,
					  NULL, 0);
		}
		return;
	case COLL_MSG_CALL:
		if (s->phase != SRV_RUN)
			break;
		srv_call(s, c, p, len);
		return;
	case COLL_MSG_DONE:
		if (s->phase != SRV_RUN || len != 8 || c->done)
			break;
		c->done = true;
		srv_check_done(s);
		return;
	default:
		break;
	}
	srv_fail(s, EPROTO, "store: unexpected message %u from rank %d",
		 type, c->rank);
}

/* The client's connection closed (or failed). */
static void srv_gone(struct coll_server *s, struct srv_client *c)
{
	if (c->dead)
		return;
	c->dead = true;
	if (c->rank < 0 || c->bye)
		return;
	srv_fail(s, ECONNABORTED,
		 "rank %d left the job without saying goodbye (process died or closed its store connection)",
		 c->rank);
}

static void srv_read(struct coll_server *s, struct srv_client *c)
{
	for (;;) {
		ssize_t k = incnn_coll_buf_read(c->fd, &c->in);
		const uint8_t *p;
		uint16_t type;
		uint32_t len;
		int ret;

		if (k == -EAGAIN)
			return;
		if (k <= 0) {
			srv_gone(s, c);
			return;
		}
		while ((ret = incnn_coll_msg_peek(&c->in, &type, &p,
						  &len)) == 1) {
			srv_message(s, c, type, p, len);
			incnn_coll_buf_consume(&c->in, COLL_HDR_LEN + len);
			if (c->dead)
				return;
		}
		if (ret < 0) {
			if (c->rank >= 0)
				srv_fail(s, EPROTO,
					 "store: garbage from rank %d",
					 c->rank);
			c->dead = true;
			return;
		}
	}
}

static void srv_remove_dead(struct coll_server *s)
{
	size_t i, j = 0;

	for (i = 0; i < s->ncl; i++) {
		struct srv_client *c = s->cl[i];

		if (!c->dead) {
			s->cl[j++] = c;
			continue;
		}
		if (c->rank >= 0 && c->rank < s->world &&
		    s->by_rank[c->rank] == c) {
			/* keep the slot (calls index it), drop the socket */
			close(c->fd);
			c->fd = -1;
			continue;
		}
		close(c->fd);
		incnn_coll_buf_free(&c->in);
		incnn_coll_buf_free(&c->out);
		incnn_coll_buf_free(&c->data);
		free(c);
	}
	s->ncl = j;
}

static void srv_accept(struct coll_server *s)
{
	struct srv_client *c, **ncl;
	int fd;

	fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return;
	/* more connections than ranks (a scan, a storm of retries) */
	if (s->ncl >= 2 * (size_t)s->world + 16) {
		close(fd);
		return;
	}
	if (s->ncl == s->capcl) {
		size_t cap = s->capcl ? 2 * s->capcl : 16;

		ncl = realloc(s->cl, cap * sizeof(*ncl));
		if (!ncl) {
			close(fd);
			return;
		}
		s->cl = ncl;
		s->capcl = cap;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->fd = fd;
	c->rank = -1;
	s->cl[s->ncl++] = c;
}

static bool srv_seen_below(struct coll_server *s, uint32_t w)
{
	uint32_t r;

	for (r = 0; r < w && r < INCNN_COLL_MAX_WORLD; r++)
		if (!(s->seen[r / 8] & (1u << (r % 8))))
			return false;
	return true;
}

/* extra time for ranks of a larger world size than ours to come */
#define SRV_LINGER_MS	2000

/*
 * While stopping: may the thread exit? Every registered rank must have
 * closed its connection. After a disagreement at the rendezvous, ranks
 * 0..W-1 of the smallest world size W seen must have come and been told
 * (they exist), and those of the largest get SRV_LINGER_MS more.
 */
static bool srv_drained(struct coll_server *s)
{
	size_t i;

	for (i = 0; i < s->ncl; i++)
		if (s->cl[i]->rank >= 0 && !s->cl[i]->dead)
			return false;
	if (!s->linger)
		return true;
	if (!srv_seen_below(s, s->min_world))
		return false;
	if (!s->min_told)
		s->min_told = coll_now_ms();
	return srv_seen_below(s, s->max_world) ||
	       coll_now_ms() >= s->min_told + SRV_LINGER_MS;
}

/*
 * How long the next poll may wait (-1: forever), after failing the
 * rendezvous at its deadline; -2 when the thread should end (stopping,
 * and drained or past the stop deadline).
 */
static int srv_timeout(struct coll_server *s)
{
	int timeout = -1, left;

	if (s->phase == SRV_REGISTER) {
		char missing[160];

		timeout = coll_left_ms(s->reg_deadline);
		if (timeout == 0) {
			srv_missing(s, missing, sizeof(missing));
			srv_fail(s, ETIMEDOUT,
				 "timed out after %d ms waiting for the other ranks to join the store%s",
				 s->init_timeout_ms, missing);
			timeout = -1;
		}
	}
	if (!atomic_load(&s->stopping))
		return timeout;
	if (srv_drained(s))
		return -2;
	left = coll_left_ms(atomic_load(&s->stop_deadline));
	if (left == 0)
		return -2;
	if (timeout < 0 || left < timeout)
		timeout = left;
	if (s->linger && timeout > 100)
		timeout = 100;	/* re-check the linger */
	return timeout;
}

/* The wake pipe, the listener, then one entry per client (s->cl order). */
static size_t srv_pollset(struct coll_server *s, struct pollfd *pfd)
{
	size_t i, n = 0;

	pfd[n++] = (struct pollfd){ .fd = s->wake[0], .events = POLLIN };
	pfd[n++] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
	for (i = 0; i < s->ncl; i++) {
		struct srv_client *c = s->cl[i];

		pfd[n++] = (struct pollfd){
			.fd = c->fd,
			.events = POLLIN |
				(c->out.off < c->out.len ? POLLOUT : 0),
		};
	}
	return n;
}

static void srv_serve(struct coll_server *s, const struct pollfd *pfd,
		      size_t n)
{
	size_t i;

	if (pfd[0].revents) {
		char b[16];

		while (read(s->wake[0], b, sizeof(b)) > 0)
			;
	}
	/* clients first: pfd[2 + i] belongs to s->cl[i] */
	for (i = 0; i + 2 < n; i++) {
		struct srv_client *c = s->cl[i];
		short re = pfd[2 + i].revents;

		if (c->dead)
			continue;
		if ((re & POLLOUT) && incnn_coll_buf_flush(c->fd, &c->out))
			srv_gone(s, c);
		if (re & (POLLIN | POLLHUP | POLLERR))
			srv_read(s, c);
	}
	if (pfd[1].revents & POLLIN)
		srv_accept(s);
	srv_remove_dead(s);
}

static void *srv_thread(void *arg)
{
	struct coll_server *s = arg;
	struct pollfd *pfd = NULL;
	size_t cap = 0, n;
	int timeout;

	for (;;) {
		timeout = srv_timeout(s);
		if (timeout == -2)
			break;
		if (cap < s->ncl + 2) {
			struct pollfd *np = realloc(pfd, (s->ncl + 2) *
						    sizeof(*pfd));

			if (!np) {
				srv_fail(s, ENOMEM, "store: out of memory");
				break;
			}
			pfd = np;
			cap = s->ncl + 2;
		}
		n = srv_pollset(s, pfd);
		if (poll(pfd, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		srv_serve(s, pfd, n);
	}
	free(pfd);
	return NULL;
}

int incnn_coll_server_start(struct coll_server **out, int lfd, int world,
			    int init_timeout_ms)
{
	struct coll_server *s;
	uint64_t token = 0;
	int err, fd;

	s = calloc(1, sizeof(*s));
	if (!s) {
		close(lfd);
		return -ENOMEM;
	}
	s->lfd = lfd;
	s->world = world;
	s->min_world = s->max_world = (uint32_t)world;
	s->init_timeout_ms = init_timeout_ms;
	s->reg_deadline = coll_now_ms() + init_timeout_ms;
	s->wake[0] = s->wake[1] = -1;
	s->by_rank = calloc((size_t)world, sizeof(*s->by_rank));
	if (!s->by_rank) {
		err = -ENOMEM;
		goto fail;
	}
	if (pipe2(s->wake, O_NONBLOCK | O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, &token, sizeof(token)) != sizeof(token))
			token = 0;
		close(fd);
	}
	s->token = token ^ (uint64_t)coll_now_ms() ^ ((uint64_t)getpid() << 32);
	atomic_init(&s->stopping, false);
	atomic_init(&s->stop_deadline, 0);
	fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
	err = -pthread_create(&s->thread, NULL, srv_thread, s);
	if (err)
		goto fail;
	*out = s;
	return 0;
fail:
	if (s->wake[0] >= 0)
		close(s->wake[0]);
	if (s->wake[1] >= 0)
		close(s->wake[1]);
	free(s->by_rank);
	close(lfd);
	free(s);
	return err;
}

void incnn_coll_server_stop(struct coll_server *s, int drain_ms)
{
	size_t i;
	int r;

	if (!s)
		return;
	atomic_store(&s->stop_deadline, coll_now_ms() + drain_ms);
	atomic_store(&s->stopping, true);
	if (write(s->wake[1], "x", 1) < 0) {
		/* the pipe is full: the thread wakes anyway */
	}
	pthread_join(s->thread, NULL);

	/* free everything, including the slots kept for by_rank */
	for (r = 0; r < s->world; r++) {
		struct srv_client *c = s->by_rank[r];

		if (c && c->fd < 0) {
			incnn_coll_buf_free(&c->in);
			incnn_coll_buf_free(&c->out);
			incnn_coll_buf_free(&c->data);
			free(c);
		}
	}
	for (i = 0; i < s->ncl; i++) {
		struct srv_client *c = s->cl[i];

		close(c->fd);
		incnn_coll_buf_free(&c->in);
		incnn_coll_buf_free(&c->out);
		incnn_coll_buf_free(&c->data);
		free(c);
	}
	free(s->cl);
	free(s->by_rank);
	close(s->lfd);
	close(s->wake[0]);
	close(s->wake[1]);
	free(s);
}
