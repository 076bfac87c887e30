/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * incnn collective: internals shared by its files, one concern each:
 *	err.c		errors (every file's; calls only buf.c)
 *	config.c	struct incnn_comm_config -> struct coll_cfg
 *	comm.c		the communicator's lifecycle
 *	store_client.c	every rank's store connection
 *	store.c		rank 0's store thread
 *	buf.c		byte buffers, the store protocol's framing
 *	msg.c		the setup messages (HELLO, WELCOME, data hello)
 *	link.c		the data connections' setup (state machine)
 *	sock.c		socket helpers
 *	addr.c		socket addresses of either family (parse, print, wire)
 *	xfer.c		one call's transfers: begin, poll, exchange, finish
 *	ring.c		the ring data phase (fp32)
 *	agg.c		the worker-aggregator data phase (fp32)
 *	allreduce.c	the flat calls: the method picks the data phase
 *	thc_comm.c	THC's data phases; gvq_comm.c GradiVeQ's (layers)
 *	bucket.c	keyed calls (scale, error feedback)
 *	rule.c		the module's rule (netlink), codec emulation
 *	layers.c	gradient buckets (the pure planner and model tables
 *			are plan.c and models.c)
 *
 * Static functions carry a per-file prefix (cm_, xf_, ring_, agg_, ar_,
 * srv_, ly_, pl_, md_); what files share is incnn_coll_* or coll_*,
 * and hidden from libincnn.so.
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
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "include/incnn/collective.h"
#include "include/incnn/gradiveq.h"
#include "codec.h"
#include <incnn/codec_param.h>

#define COLL_HIDDEN __attribute__((visibility("hidden")))
#define COLL_PRINTF(a, b) __attribute__((format(printf, a, b)))
/* a function of GCC vector-extension loops, with an @isa clone picked at
 * load time on x86-64 (GCC; elsewhere the one generic build) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define COLL_SIMD_CLONES(isa) __attribute__((target_clones(isa, "default")))
#else
#define COLL_SIMD_CLONES(isa)
#endif

#define COLL_MSG_LEN	512	/* error messages */

/* --- socket addresses (addr.c) ----------------------------------------- */

/* An IPv4 or IPv6 socket address (IPv4-mapped ones are kept as IPv4) */
union coll_sa {
	struct sockaddr sa;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

#define COLL_ADDR_WIRE_LEN	24	/* coll_sa_encode() */
#define COLL_ADDR_STRLEN	80	/* "[v6%ifname]:port" and more */

COLL_HIDDEN socklen_t coll_sa_len(const union coll_sa *a);
COLL_HIDDEN uint16_t coll_sa_port(const union coll_sa *a);
COLL_HIDDEN void coll_sa_set_port(union coll_sa *a, uint16_t port);
COLL_HIDDEN bool coll_sa_is_any(const union coll_sa *a);
/* the wildcard (@loopback false) or loopback address of @a's family */
COLL_HIDDEN void coll_sa_set_host(union coll_sa *a, bool loopback);
/* @host as a user writes it (addr.c's rules) with @port: 0, or -EINVAL /
 * -EHOSTUNREACH / -EAFNOSUPPORT with a one-line message in @err */
COLL_HIDDEN int coll_sa_parse(const char *host, uint16_t port,
			      union coll_sa *out, char *err, size_t errlen);
COLL_HIDDEN void coll_sa_encode(const union coll_sa *a,
				uint8_t out[COLL_ADDR_WIRE_LEN]);
/* 0, or -EPROTO: not an address of the store protocol */
COLL_HIDDEN int coll_sa_decode(const uint8_t p[COLL_ADDR_WIRE_LEN],
			       union coll_sa *a);
/* a link-local IPv6 @a takes @local's scope (the link we share) */
COLL_HIDDEN void coll_sa_adopt_scope(union coll_sa *a,
				     const union coll_sa *local);
COLL_HIDDEN const char *incnn_coll_addr_str(const union coll_sa *a,
					    char *buf, size_t len);

/* --- configuration (config.c) ------------------------------------------ */

/* struct incnn_comm_config resolved: every setting known and in range */
struct coll_cfg {
	union coll_sa master;
	bool have_master;
	int rank, world;
	int store_fd;
	union coll_sa data;
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

/* --- store protocol ------------------------------------------------------
 *
 * Every message: 8-byte header (u16 type, u16 zero, u32 payload length,
 * big-endian), then the payload (big-endian integers).
 *
 *	HELLO	c->s	u16 version, u16 0, u32 rank, u32 world_size,
 *			u8 codec, u8 param, u16 0, data address (24)	(40)
 *	WELCOME	s->c	u32 world_size, u32 0, u64 token, u8 codec, u8 param,
 *			u16 0, u32 0, then per rank its data address (24)
 *	(an address: u16 family 4|6, u16 port, u32 0, 16 bytes: IPv4 in the
 *	first 4; a link-local IPv6 address travels without its scope)
 *	READY	c->s	data connections set up
 *	GO	s->c	every rank is set up
 *	CALL	c->s	u64 seq, u32 kind, u32 0, u64 count, [gather data]
 *	DONE	c->s	u64 seq: this rank finished the call's data phase
 *	RESULT	s->c	u64 seq, [gather: world_size * count bytes]
 *	ABORT	c->s	text: this rank failed
 *	ERROR	s->c	u32 errno, text: the job failed
 *	BYE	c->s	leaving normally
 */
#define COLL_PROTO_VERSION	2	/* 2: IPv6 addresses */
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

#define COLL_HELLO_LEN		(16 + COLL_ADDR_WIRE_LEN)
#define COLL_WELCOME_HDR_LEN	24
#define COLL_WELCOME_ADDR_LEN	COLL_ADDR_WIRE_LEN

struct coll_hello {
	uint16_t version;
	uint32_t rank, world;
	uint8_t codec, param;
	union coll_sa addr;	/* data listener */
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
/* @out has coll_welcome_len(w->world) bytes; @addrs[world] */
COLL_HIDDEN void coll_welcome_encode(const struct coll_welcome *w,
				     const union coll_sa *addrs, uint8_t *out);
/* 0, or -EPROTO unless it is a WELCOME for @world ranks; @addrs[world] */
COLL_HIDDEN int coll_welcome_decode(const uint8_t *p, size_t len,
				    uint32_t world, struct coll_welcome *w,
				    union coll_sa *addrs);
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
	/* encode + decode's buffers; NULL for a codec with a quantise op */
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
/*
 * Floats per encode and decode of a codec without a quantise op: what
 * one 64 KiB frame would carry at most.
 */
#define COLL_Q_PIECE	16384
/* x = decode(encode(x)) in place. 0 or -errno (never for valid input). */
COLL_HIDDEN int incnn_coll_q_apply(struct coll_q *q, float *x, size_t n);
/* Why incnn_coll_codec_check() refused: a one-line message into @buf. */
COLL_HIDDEN void incnn_coll_codec_why(unsigned int codec_id,
				      unsigned int param, char *buf,
				      size_t len);

/* --- keyed calls (bucket.c) --------------------------------------------- */

/* One segment (a parameter tensor) of a keyed call's bucket. */
struct coll_bkseg {
	size_t end;		/* its values end here (the next one's start) */
	int exp;		/* its e of the next call */
	float s, inv;		/* 2^e, 2^-e of the call in progress */
};

/* A bucket's state, kept between keyed calls. */
struct coll_bucket {
	uint64_t key;
	size_t n;
	float *res;		/* EF residuals (n floats, unscaled), or NULL */
	bool have_exp;		/* false: the next call agrees on e first */
	size_t nseg;		/* >= 1: the whole bucket is one segment */
	struct coll_bkseg *seg;
	struct incnn_bucket_info info;
};

/* One keyed call's transform, for the ring (ring.c). */
struct coll_bkrun {
	float *res;		/* the bucket's residuals, or NULL */
	const struct coll_bkseg *seg;	/* nseg segments, ends ascending */
	size_t nseg;
	uint64_t quantised, nonzero, flattened;
	/*
	 * Per segment, the largest finite |result| as its bit pattern: the
	 * ring unscales each final value once it is sent (or received last)
	 * and keeps this; NULL: bucket.c unscales after the ring.
	 */
	uint32_t *top;
};

/* GradiVeQ's loss monitor: compressed calls its mean is taken over */
#define COLL_GVQ_LOSS_WIN	10

/* --- the communicator (comm.c, xfer.c) ----------------------------------- */
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
		 * see ring.c and agg.c.
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

	/* the data phases (ring.c, agg.c): staging for received partial sums */
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
		/* the loss monitor's window of this rank's local losses */
		double lwin[COLL_GVQ_LOSS_WIN];
		unsigned int lnext, lfill;
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

/* --- errors (err.c): every file's, the one formatter --------------------- */

/* vsnprintf() into @buf unless it is NULL or @len 0 */
COLL_HIDDEN void incnn_coll_vmsg(char *buf, size_t len, const char *fmt,
				 va_list ap) COLL_PRINTF(3, 0);
/* the same with arguments */
COLL_HIDDEN void incnn_coll_msg(char *buf, size_t len, const char *fmt, ...)
	COLL_PRINTF(3, 4);
/* The cores' errors (thc.c, gradiveq.c): the message into @err, @rc */
COLL_HIDDEN int incnn_coll_errf(char *err, size_t errlen, int rc,
				const char *fmt, ...) COLL_PRINTF(4, 5);
/*
 * Record the first error (later ones are ignored) and abort: tell the
 * store (unless @from_store), reset the data connections. Returns the
 * (first) error.
 */
COLL_HIDDEN int incnn_coll_fail(struct incnn_comm *c, int err, bool from_store,
				const char *fmt, ...) COLL_PRINTF(4, 5);
/* Close a socket so that the peer sees a reset. */
COLL_HIDDEN void incnn_coll_close_rst(int *fd);
/* Reset every data connection of @c (its store connection stays). */
COLL_HIDDEN void incnn_coll_reset_data(struct incnn_comm *c);

/* --- store client (store_client.c) ------------------------------------- */

/* after its own deadline, how long a rank waits for a store that went away */
#define COLL_GRACE_MS	2000

/* Connect to the store at @a, retrying until @deadline. 0 or the error. */
COLL_HIDDEN int incnn_coll_store_connect(struct incnn_comm *c,
					 const union coll_sa *a,
					 int64_t deadline);
/* Pump the store connection until *@flag or @deadline (@what: for errors) */
COLL_HIDDEN int incnn_coll_store_wait(struct incnn_comm *c, const bool *flag,
				      int64_t deadline, const char *what);

/* --- data connections (link.c) ------------------------------------------ */

/* Listen for data connections on the store connection's address (or
 * k->data); *@me: where. 0 or the error. */
COLL_HIDDEN int incnn_coll_listen_data(struct incnn_comm *c,
				       const struct coll_cfg *k,
				       union coll_sa *me);
/* Connect the ring and aggregator links of every rank (@addrs: each
 * rank's listener, @token: the job's) by @deadline. 0 or the error. */
COLL_HIDDEN int incnn_coll_links_setup(struct incnn_comm *c, uint64_t token,
				       union coll_sa *addrs,
				       int64_t deadline);

/* --- sockets (sock.c) ---------------------------------------------------- */

COLL_HIDDEN void incnn_coll_sockbuf(int fd, int size, bool snd);
/* A TCP socket of @family with the job's options (buffers when @bufs),
 * or -errno */
COLL_HIDDEN int incnn_coll_socket(struct incnn_comm *c, int family, bool bufs);
/* Set the socket's ToS (IPv4) or Traffic Class (IPv6): 0 or -errno */
COLL_HIDDEN int incnn_coll_set_tos(int fd, int tos);
/* A connect() error worth retrying until the deadline */
COLL_HIDDEN bool incnn_coll_retryable(int err);

/* Send one store message, waiting up to timeout_ms for buffer space. */
COLL_HIDDEN int incnn_coll_store_send(struct incnn_comm *c, uint16_t type,
				      const void *payload, size_t len);
/*
 * Read and handle what the store sent: ERROR fails the communicator,
 * RESULT of the current call sets got_result. 0 or the error.
 */
COLL_HIDDEN int incnn_coll_store_pump(struct incnn_comm *c);
/* --- one call's transfers (xfer.c), below every data phase ------------- */

/* One collective call in progress. */
struct coll_op {
	struct incnn_comm *c;
	int64_t last;		/* last data progress */
	uint64_t moved;		/* bytes sent + received in this call */
	uint64_t rx_total;	/* bytes this rank receives in this call */
	uint64_t rx_done;
};

static inline size_t coll_min(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* a nonblocking send()/recv() errno that means "not now" */
static inline bool coll_again(int e)
{
	return e == EAGAIN || e == EWOULDBLOCK || e == EINTR;
}

/* A data connection to/from @peer failed (errno @e; recv's @k 0: EOF):
 * fail with the store's reason if it comes within a moment. */
COLL_HIDDEN int incnn_coll_send_error(struct coll_op *o, int peer, int e);
COLL_HIDDEN int incnn_coll_recv_error(struct coll_op *o, int peer, ssize_t k,
				      int e);
/* Fault injection (tests), once per communicator: 0 or the error. */
COLL_HIDDEN int incnn_coll_fault(struct coll_op *o, int send_fd);
/* Nothing moved: wait for @n data fds (pfd has room for one more, the
 * store's) until timeout_ms after the last progress (@what: for the
 * timeout message). 0 or the error. */
COLL_HIDDEN int incnn_coll_poll(struct coll_op *o, struct pollfd *pfd, int n,
				const char *what);
/* Begin a call of @kind and @count (@data: the store's payload): 1 to go
 * on, 0 when there is nothing to do (one rank), or the error. */
COLL_HIDDEN int incnn_coll_call_begin(struct incnn_comm *c, uint32_t kind,
				      uint64_t count, const void *data,
				      size_t dlen);
/* The data phase is complete here (DONE unless !@send_done): wait until
 * it is everywhere. */
COLL_HIDDEN int incnn_coll_op_finish(struct coll_op *o, bool send_done);
/* The same, for a call made in pieces (thc_comm.c) */
COLL_HIDDEN int incnn_coll_call_finish(struct incnn_comm *c);
/* A flat call's arguments: 0 or the error (the communicator fails). */
COLL_HIDDEN int incnn_coll_check_args(struct incnn_comm *c, const float *buf,
				      size_t n);
/* c->stage holds at least @floats: 0 or -ENOMEM (failed). */
COLL_HIDDEN int incnn_coll_stage(struct incnn_comm *c, size_t floats);
/* x = Q(x) with the job's codec: 0 or the error (failed). */
COLL_HIDDEN int incnn_coll_quantise(struct incnn_comm *c, float *x, size_t n);
/* One ring step: send @slen bytes to the successor while receiving @rlen
 * from the predecessor, both to completion. */
COLL_HIDDEN int incnn_coll_ring_exchange(struct incnn_comm *c,
					 const void *sbuf, size_t slen,
					 void *rbuf, size_t rlen);
/* The same with any two data sockets (@speer, @rpeer: for messages). */
COLL_HIDDEN int incnn_coll_exchange(struct incnn_comm *c, int sfd, int speer,
				    const void *sbuf, size_t slen, int rfd,
				    int rpeer, void *rbuf, size_t rlen);

/* --- the fp32 data phases (ring.c, agg.c) -------------------------------- */

/* The plain fp32 ring (incnn_allreduce() without the method dispatch) */
COLL_HIDDEN int incnn_coll_allreduce_ring(struct incnn_comm *c, float *buf,
					  size_t n);
/* The ring with a keyed call's transform (@div 0: no division). */
COLL_HIDDEN int incnn_coll_allreduce_bk(struct incnn_comm *c, float *buf,
					size_t n, float div,
					struct coll_bkrun *bk);
/* x[i] = x[i] / d, IEEE division (incnn_allreduce_div's) */
COLL_HIDDEN void incnn_coll_div(float *x, size_t n, float d);
/* The plain fp32 worker-aggregator (incnn_allreduce_ps() without the
 * method dispatch) */
COLL_HIDDEN int incnn_coll_allreduce_agg(struct incnn_comm *c, float *buf,
					 size_t n);

/* Set up / free the communicator's THC state (thc_comm.c). */
COLL_HIDDEN int incnn_coll_thc_init(struct incnn_comm *c,
				    const struct coll_cfg *k, char *err,
				    size_t errlen);
COLL_HIDDEN void incnn_coll_thc_free(struct incnn_comm *c);
/*
 * The largest finite |x[i]| as its bit pattern (0: none), x multiplied
 * by @mul first unless it is 1 (in place: a keyed call's unscaling;
 * bucket.c).
 */
COLL_HIDDEN uint32_t incnn_coll_absmax_bits(float *x, size_t n, float mul);
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

#endif /* INCNN_COLL_H */
