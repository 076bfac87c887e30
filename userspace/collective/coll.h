/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * incnn collective: internals shared by its files, one concern each:
 *	config.c	struct incnn_comm_config -> struct coll_cfg
 *	comm.c		the communicator's lifecycle and errors
 *	store_client.c	every rank's store connection
 *	store.c		rank 0's store thread
 *	buf.c		byte buffers, the store protocol's framing
 *	msg.c		the setup messages (HELLO, WELCOME, data hello)
 *	link.c		the data connections' setup (state machine)
 *	sock.c		socket helpers
 *	ops.c		the ring and worker-aggregator data phases
 *	rule.c		the module's rule (netlink), codec emulation
 *	layers.c	gradient buckets (the pure planner and model tables
 *			are plan.c and models.c)
 *
 * Static functions carry a per-file prefix (cm_, op_, srv_, ly_, pl_,
 * md_); what files share is incnn_coll_* or coll_*, and hidden from
 * libincnn.so.
 */
#ifndef INCNN_COLL_H
#define INCNN_COLL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>

#include "include/incnn/collective.h"
#include "include/incnn/gradiveq.h"
#include "codec.h"
#include <incnn/codec_param.h>

#define COLL_HIDDEN __attribute__((visibility("hidden")))
#define COLL_PRINTF(a, b) __attribute__((format(printf, a, b)))

#define COLL_MSG_LEN	512	/* error messages */

/* --- configuration (config.c) ------------------------------------------ */

/* struct incnn_comm_config resolved: every setting known and in range */
struct coll_cfg {
	struct sockaddr_in master;
	bool have_master;
	int rank, world;
	int store_fd;
	struct sockaddr_in data;
	bool have_data;
	int tos;
	size_t chunk_bytes;
	int timeout_ms, init_timeout_ms;
	int sockbuf;
	enum incnn_coll_codec_mode codec_mode;
	unsigned int codec_id, codec_param;
	enum incnn_coll_method method;
	int thc_bits, thc_gran;
	int gvq_d, gvq_k, gvq_warmup, gvq_ts, gvq_tc, gvq_fc;
	double gvq_eps;
	int scale, error_feedback;	/* 0 or 1 */
};

/* 0, or -EINVAL / -EHOSTUNREACH with a one-line message in @err */
COLL_HIDDEN int incnn_coll_config_resolve(const struct incnn_comm_config *cfg,
					  struct coll_cfg *k, char *err,
					  size_t errlen);
/* The cores' errors (errf.c): the message into @err (unless NULL), @rc */
COLL_HIDDEN int incnn_coll_errf(char *err, size_t errlen, int rc,
				const char *fmt, ...) COLL_PRINTF(4, 5);
/* snprintf() into @buf unless it is NULL */
COLL_HIDDEN void incnn_coll_msg(char *buf, size_t len, const char *fmt, ...)
	COLL_PRINTF(3, 4);

/* --- store protocol ------------------------------------------------------
 *
 * Every message: 8-byte header (u16 type, u16 zero, u32 payload length,
 * big-endian), then the payload (big-endian integers).
 *
 *	HELLO	c->s	u16 version, u16 0, u32 rank, u32 world_size,
 *			u8 codec, u8 param, u16 0, u32 data addr, u16 data port,
 *			u16 0						(24)
 *	WELCOME	s->c	u32 world_size, u32 0, u64 token, u8 codec, u8 param,
 *			u16 0, u32 0, then per rank u32 addr, u16 port, u16 0
 *	READY	c->s	data connections set up
 *	GO	s->c	every rank is set up
 *	CALL	c->s	u64 seq, u32 kind, u32 0, u64 count, [gather data]
 *	DONE	c->s	u64 seq: this rank finished the call's data phase
 *	RESULT	s->c	u64 seq, [gather: world_size * count bytes]
 *	ABORT	c->s	text: this rank failed
 *	ERROR	s->c	u32 errno, text: the job failed
 *	BYE	c->s	leaving normally
 */
#define COLL_PROTO_VERSION	1
#define COLL_HDR_LEN		8
#define COLL_MAX_PAYLOAD	(64u << 20)
#define COLL_GATHER_MAX		65536

enum coll_msg_type {
	COLL_MSG_HELLO = 1,
	COLL_MSG_WELCOME,
	COLL_MSG_READY,
	COLL_MSG_GO,
	COLL_MSG_CALL,
	COLL_MSG_DONE,
	COLL_MSG_RESULT,
	COLL_MSG_ABORT,
	COLL_MSG_ERROR,
	COLL_MSG_BYE,
};

enum coll_call_kind {
	COLL_CALL_RING = 1,
	COLL_CALL_PS,
	COLL_CALL_GATHER,
	COLL_CALL_THC,		/* the THC ring data phase (thc_comm.c) */
	COLL_CALL_THC_PS,	/* THC through rank 0 */
};

/* Data connection identification (sent unmarked by the connecting side). */
#define COLL_DATA_MAGIC		0x494e4352u	/* "INCR" */
#define COLL_DATA_HELLO_LEN	24
#define COLL_DATA_ACK		0x06
enum coll_link_kind {
	COLL_LINK_RING = 1,	/* rank -> its ring successor */
	COLL_LINK_PS,		/* worker -> rank 0 */
};

static inline void coll_put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void coll_put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static inline void coll_put64(uint8_t *p, uint64_t v)
{
	coll_put32(p, v >> 32);
	coll_put32(p + 4, (uint32_t)v);
}

static inline uint16_t coll_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t coll_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t coll_get64(const uint8_t *p)
{
	return (uint64_t)coll_get32(p) << 32 | coll_get32(p + 4);
}

/* --- setup messages (msg.c): encode, and decode with bounds checks ----- */

#define COLL_HELLO_LEN		24
#define COLL_WELCOME_HDR_LEN	24
#define COLL_WELCOME_ADDR_LEN	8

struct coll_hello {
	uint16_t version;
	uint32_t rank, world;
	uint8_t codec, param;
	uint8_t addr[6];	/* data listener: IPv4 address, port (net order) */
};

struct coll_welcome {
	uint32_t world;
	uint64_t token;
	uint8_t codec, param;
};

struct coll_data_hello {
	uint16_t kind;		/* enum coll_link_kind */
	uint64_t token;
	uint32_t rank;
};

COLL_HIDDEN void coll_hello_encode(const struct coll_hello *h,
				   uint8_t out[COLL_HELLO_LEN]);
/* 0, or -EPROTO when @len is not a HELLO's */
COLL_HIDDEN int coll_hello_decode(const uint8_t *p, size_t len,
				  struct coll_hello *h);
COLL_HIDDEN size_t coll_welcome_len(uint32_t world);
/* @out has coll_welcome_len(w->world) bytes; @addrs as in HELLOs */
COLL_HIDDEN void coll_welcome_encode(const struct coll_welcome *w,
				     const uint8_t (*addrs)[6], uint8_t *out);
/* 0, or -EPROTO unless it is a WELCOME for @world ranks; @addrs[world] */
COLL_HIDDEN int coll_welcome_decode(const uint8_t *p, size_t len,
				    uint32_t world, struct coll_welcome *w,
				    struct sockaddr_in *addrs);
COLL_HIDDEN void coll_data_hello_encode(const struct coll_data_hello *h,
					uint8_t out[COLL_DATA_HELLO_LEN]);
/* 0, or -EPROTO: not a data hello of this protocol (another job, a scan) */
COLL_HIDDEN int coll_data_hello_decode(const uint8_t *p, size_t len,
				       struct coll_data_hello *h);

/* A growable byte buffer: [off, len) is pending (unsent or unparsed). */
struct coll_buf {
	uint8_t *p;
	size_t off, len, cap;
};

COLL_HIDDEN int incnn_coll_buf_reserve(struct coll_buf *b, size_t extra);
COLL_HIDDEN int incnn_coll_buf_append(struct coll_buf *b, const void *d,
				      size_t n);
COLL_HIDDEN void incnn_coll_buf_consume(struct coll_buf *b, size_t n);
COLL_HIDDEN void incnn_coll_buf_free(struct coll_buf *b);
/* Append one store message. */
COLL_HIDDEN int incnn_coll_msg_append(struct coll_buf *b, uint16_t type,
				      const void *payload, size_t len);
/*
 * The next complete message in b[off..len): 1 (type, payload, plen set;
 * consume COLL_HDR_LEN + plen afterwards), 0 (incomplete), -EPROTO.
 */
COLL_HIDDEN int incnn_coll_msg_peek(const struct coll_buf *b, uint16_t *type,
				    const uint8_t **payload, uint32_t *plen);
/* Read what is available: bytes read (> 0), 0 at EOF, -EAGAIN, -errno. */
COLL_HIDDEN ssize_t incnn_coll_buf_read(int fd, struct coll_buf *b);
/* Write what the socket takes: 0 (maybe partial), -errno. */
COLL_HIDDEN int incnn_coll_buf_flush(int fd, struct coll_buf *b);

/* Monotonic milliseconds. */
static inline int64_t coll_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* poll() timeout until @deadline (>= 0). */
static inline int coll_left_ms(int64_t deadline)
{
	int64_t left = deadline - coll_now_ms();

	if (left < 0)
		return 0;
	return left > 1000000 ? 1000000 : (int)left;
}

/* --- rank 0's store thread (store.c) ------------------------------------ */
struct coll_server;

/*
 * Serve the store on the listening socket @lfd (taken over) for
 * @world_size ranks, who must all have joined within @init_timeout_ms
 * (otherwise every rank is told which did not). Returns 0 or -errno.
 */
COLL_HIDDEN int incnn_coll_server_start(struct coll_server **srv, int lfd,
					int world_size, int init_timeout_ms);
/*
 * Stop: keep serving until every registered rank has closed its
 * connection (after a failed registration: also until ranks 0..W-1 of
 * the smallest world size seen have been told), at most @drain_ms, then
 * close everything and join the thread.
 */
COLL_HIDDEN void incnn_coll_server_stop(struct coll_server *srv, int drain_ms);

/* --- codec emulation (rule.c) ------------------------------------------- */
struct coll_q {
	const struct incnn_codec *codec;	/* NULL: identity */
	uint8_t param;
	uint8_t *enc;
	size_t enc_cap;
	void *scratch;
};

/*
 * The rule the module applies to DSCP @tos >> 2, as a lossy codec:
 * *codec_id = 0 when there is none (no module, no rule, lossless rule).
 * Returns 0, or -errno with a message (a reply that makes no sense, an
 * unknown codec).
 */
COLL_HIDDEN int incnn_coll_rule_lookup(int tos, unsigned int *codec_id,
				       unsigned int *param, char *msg,
				       size_t msglen);
/*
 * The rule for @dscp in the attributes of an INCNN_CMD_GET_CONFIG reply
 * (after the genl header): 1 with the codec and parameter, 0 when there
 * is none, -EBADMSG for malformed attributes.
 */
COLL_HIDDEN int incnn_coll_rule_parse(const uint8_t *attrs, size_t len,
				      int dscp, unsigned int *codec_id,
				      unsigned int *param);
/* Validate @codec_id/@param for emulation. 0 or -EINVAL. */
COLL_HIDDEN int incnn_coll_codec_check(unsigned int codec_id,
				       unsigned int param);
COLL_HIDDEN int incnn_coll_q_init(struct coll_q *q, unsigned int codec_id,
				  unsigned int param);
COLL_HIDDEN void incnn_coll_q_free(struct coll_q *q);
/* x = decode(encode(x)) in place. 0 or -errno (never for valid input). */
COLL_HIDDEN int incnn_coll_q_apply(struct coll_q *q, float *x, size_t n);
/* "ebq 2^-10", "trunc 16 bits", "identity" */
/* Why incnn_coll_codec_check() refused: a one-line message into @buf. */
COLL_HIDDEN void incnn_coll_codec_why(unsigned int codec_id,
				      unsigned int param, char *buf,
				      size_t len);
COLL_HIDDEN void incnn_coll_codec_desc(unsigned int codec_id,
				       unsigned int param, char *buf,
				       size_t len);

/* --- keyed calls (bucket.c) --------------------------------------------- */

/* A bucket's state, kept between keyed calls. */
struct coll_bucket {
	uint64_t key;
	size_t n;
	float *res;		/* EF residuals (n floats, unscaled), or NULL */
	bool have_exp;		/* false: the next call agrees on e first */
	int exp;		/* e of the next call */
	struct incnn_bucket_info info;
};

/* One keyed call's transform, for the ring (ops.c). */
struct coll_bkrun {
	float *res;		/* the bucket's residuals, or NULL */
	float s, inv;		/* 2^e, 2^-e */
	uint64_t quantised, nonzero, flattened;
};

/* --- the communicator (comm.c, ops.c) ----------------------------------- */
struct incnn_comm {
	/* the job, as configured (config.c) */
	int rank, world;
	int tos;
	size_t chunk;		/* floats */
	int timeout_ms, init_timeout_ms;
	int sockbuf;

	/* the job's codec (rule.c) */
	struct {
		struct coll_q q;
		unsigned int id, param;
		/*
		 * This host's module applies the job's codec to our marked
		 * sends (AUTO found that rule): quantise only what we keep,
		 * see ops.c.
		 */
		bool wire_q;
	} codec;

	/* the store client (store_client.c) */
	struct {
		int fd;
		struct coll_buf in, out;
		uint64_t seq;		/* calls made */
		bool got_result;
		struct coll_buf result;	/* RESULT payload of call @seq */
		bool got_welcome, got_go;
		struct coll_buf welcome;
		struct coll_server *server;	/* rank 0 */
	} store;

	/* the data connections (link.c), -1 when absent */
	struct {
		int listen_fd;
		int ring_send_fd;	/* to (rank + 1) % world */
		int ring_recv_fd;	/* from (rank - 1) % world */
		int ps_fd;		/* worker: to rank 0 */
		int *ps_fds;		/* rank 0: from worker w at [w] */
	} link;

	/* the data phases (ops.c): staging for received partial sums */
	float *stage;
	size_t stage_cap;	/* floats */

	/* compression inside the collective (thc_comm.c) */
	enum incnn_coll_method method;
	uint64_t wire_sent;	/* bytes sent on data connections */
	struct {
		struct incnn_thc *t;	/* THC communicator, or lazily */
		uint64_t calls;		/* nonce of the next call */
		uint8_t *mem;		/* scratch, see thc_comm.c */
		size_t mem_cap;
	} thc;

	/* GradiVeQ (gvq_comm.c): per layer of the current layer set */
	struct {
		struct incnn_gvq_params p;
		double eps;		/* loss threshold, +inf: off */
		bool fc;
		struct incnn_gvq_sched s;
		uint64_t set_hash;	/* the layer set's digest, 0: none */
		size_t nlayers;
		struct incnn_gvq_layer **l;	/* NULL: plain fp32 */
		struct incnn_gvq_conv *cv;	/* its shape for the core */
		enum incnn_gvq_phase ph;	/* of the current call */
		double loss_num, loss_den;	/* its loss monitor */
		float *v, *pack;		/* scratch */
		size_t v_cap, pack_cap;		/* floats */
		bool told;			/* the "no conv layer" note */
		struct incnn_gvq_status st;
	} gvq;

	/* first error: 0 or -errno, and its message */
	int err;
	char errmsg[COLL_MSG_LEN];

	/* fault injection (tests) */
	struct {
		enum incnn_coll_fault kind;
		uint64_t after;
		int stall_ms;
		bool fired;
		bool send_shut;		/* FAULT_SHORT fired */
	} fault;

	/* keyed calls: scale and error feedback per bucket (bucket.c) */
	struct {
		bool scale, ef;
		struct coll_bucket *v;
		size_t n, cap;
		uint64_t flattened;	/* buckets that reached the streak */
	} bk;

	/* gradient buckets (layers.c) */
	struct {
		/* incnn_comm_probe_cost(): [0] ring, [1] ps */
		bool cost_known[2];
		double cost_a[2], cost_b[2];
		/* incnn_allreduce_layers(): packed buckets, kept */
		float *stage;
		size_t stage_cap;	/* floats */
	} wfbp;
};

/* --- store client (store_client.c) ------------------------------------- */

/* after its own deadline, how long a rank waits for a store that went away */
#define COLL_GRACE_MS	2000

/* Connect to the store at @a, retrying until @deadline. 0 or the error. */
COLL_HIDDEN int incnn_coll_store_connect(struct incnn_comm *c,
					 const struct sockaddr_in *a,
					 int64_t deadline);
/* Pump the store connection until *@flag or @deadline (@what: for errors) */
COLL_HIDDEN int incnn_coll_store_wait(struct incnn_comm *c, const bool *flag,
				      int64_t deadline, const char *what);

/* --- data connections (link.c) ------------------------------------------ */

/* Listen for data connections on the store connection's address (or
 * k->data); *@me: where. 0 or the error. */
COLL_HIDDEN int incnn_coll_listen_data(struct incnn_comm *c,
				       const struct coll_cfg *k,
				       struct sockaddr_in *me);
/* Connect the ring and aggregator links of every rank (@addrs: each
 * rank's listener, @token: the job's) by @deadline. 0 or the error. */
COLL_HIDDEN int incnn_coll_links_setup(struct incnn_comm *c, uint64_t token,
				       struct sockaddr_in *addrs,
				       int64_t deadline);

/* --- sockets (sock.c) ---------------------------------------------------- */

COLL_HIDDEN void incnn_coll_sockbuf(int fd, int size, bool snd);
/* A TCP socket with the job's options (buffers when @bufs), or -errno */
COLL_HIDDEN int incnn_coll_socket(struct incnn_comm *c, bool bufs);
/* A connect() error worth retrying until the deadline */
COLL_HIDDEN bool incnn_coll_retryable(int err);
COLL_HIDDEN const char *incnn_coll_addr_str(const struct sockaddr_in *a,
					    char *buf, size_t len);

/*
 * Record the first error (later ones are ignored) and abort: tell the
 * store (unless @from_store), reset the data connections. Returns the
 * (first) error.
 */
COLL_HIDDEN int incnn_coll_fail(struct incnn_comm *c, int err, bool from_store,
				const char *fmt, ...) COLL_PRINTF(4, 5);
/* Send one store message, waiting up to timeout_ms for buffer space. */
COLL_HIDDEN int incnn_coll_store_send(struct incnn_comm *c, uint16_t type,
				      const void *payload, size_t len);
/*
 * Read and handle what the store sent: ERROR fails the communicator,
 * RESULT of the current call sets got_result. 0 or the error.
 */
COLL_HIDDEN int incnn_coll_store_pump(struct incnn_comm *c);
/* Calls in pieces, for thc_comm.c (ops.c): begin a call of @kind and
 * @count (1: go on, 0: one rank, or the error); exchange one ring step
 * (send @slen bytes to the successor while receiving @rlen from the
 * predecessor); finish (DONE, wait for every rank). */
COLL_HIDDEN int incnn_coll_call_begin(struct incnn_comm *c, uint32_t kind,
				      uint64_t count);
COLL_HIDDEN int incnn_coll_ring_exchange(struct incnn_comm *c,
					 const void *sbuf, size_t slen,
					 void *rbuf, size_t rlen);
COLL_HIDDEN int incnn_coll_call_finish(struct incnn_comm *c);
/* The same with any two data sockets (@speer, @rpeer: for messages). */
COLL_HIDDEN int incnn_coll_exchange(struct incnn_comm *c, int sfd, int speer,
				    const void *sbuf, size_t slen, int rfd,
				    int rpeer, void *rbuf, size_t rlen);
/* Set up / free the communicator's THC state (thc_comm.c). */
COLL_HIDDEN int incnn_coll_thc_init(struct incnn_comm *c,
				    const struct coll_cfg *k, char *err,
				    size_t errlen);
COLL_HIDDEN void incnn_coll_thc_free(struct incnn_comm *c);
/* The plain fp32 ring (incnn_allreduce() without the method dispatch) */
COLL_HIDDEN int incnn_coll_allreduce_ring(struct incnn_comm *c, float *buf,
					  size_t n);
/* The ring with a keyed call's transform (@div 0: no division). */
COLL_HIDDEN int incnn_coll_allreduce_bk(struct incnn_comm *c, float *buf,
					size_t n, float div,
					struct coll_bkrun *bk);
/* x[i] = x[i] / d, IEEE division (incnn_allreduce_div's) */
COLL_HIDDEN void incnn_coll_div(float *x, size_t n, float d);
/* Free the keyed calls' state (bucket.c). */
COLL_HIDDEN void incnn_coll_bk_free(struct incnn_comm *c);

/* GradiVeQ in incnn_allreduce_layers() (gvq_comm.c) */
struct incnn_layer;
struct incnn_bucket;
COLL_HIDDEN int incnn_coll_gvq_init(struct incnn_comm *c,
				    const struct coll_cfg *k, char *err,
				    size_t errlen);
COLL_HIDDEN void incnn_coll_gvq_free(struct incnn_comm *c);
/* A layers call starts: check, (re)build the layer state, the phase. */
COLL_HIDDEN int incnn_coll_gvq_begin(struct incnn_comm *c,
				     const struct incnn_layer *layers,
				     size_t L, bool ps);
/* One bucket of the call (its allreduce, compressed or not). */
COLL_HIDDEN int incnn_coll_gvq_bucket(struct incnn_comm *c,
				      const struct incnn_layer *layers,
				      const struct incnn_bucket *q);
/* The call's end: loss monitor, schedule, fits. */
COLL_HIDDEN int incnn_coll_gvq_end(struct incnn_comm *c);

/* Close a socket so that the peer sees a reset. */
COLL_HIDDEN void incnn_coll_close_rst(int *fd);

#endif /* INCNN_COLL_H */
