/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * incnn collective: ring allreduce (INCEPTIONN's Algorithm 1) and a
 * worker-aggregator baseline over TCP, for gradient sockets marked for
 * the incnn kernel module.
 *
 * Rendezvous (torchrun convention): MASTER_ADDR, MASTER_PORT, RANK and
 * WORLD_SIZE from the environment, or the same values in a
 * struct incnn_comm_config. Rank 0 runs a small TCP store (a thread) on
 * MASTER_ADDR:MASTER_PORT; every rank, rank 0 included, is a client of
 * it. The store checks that all ranks agree on the world size and, for
 * every collective call, on the operation and element count; a
 * disagreement is an error on every rank, never a hang.
 *
 * Data transport: one TCP connection per ring neighbour (each rank sends
 * to its successor and receives from its predecessor), and for the
 * worker-aggregator baseline one connection between each worker and rank
 * 0. The connecting side connects with IP_TOS set (its SYN offers the
 * module's capability option only when marked), clears it, sends a 24-byte
 * identification unmarked, waits for the acceptor's one-byte
 * acknowledgement and for SIOCOUTQ == 0 (every byte acknowledged), and
 * only then sets IP_TOS again: a marked socket carries
 * nothing but whole fp32 values, starting at the module's float-grid
 * anchor. The store connections are never marked. Sockets are
 * nonblocking and poll()-driven, so sending to the successor, receiving
 * from the predecessor and summing received chunks overlap; a block is
 * forwarded chunk by chunk as soon as it is reduced (chunk size tunable).
 *
 * Ring algorithm (incnn_allreduce), N ranks, rank r, n elements split
 * into N blocks B[0..N-1] of n/N elements, the first n%N blocks one more:
 *
 *   reduce-scatter, step i = 0..N-2:
 *	send B[(r - i) mod N] to r+1; receive into B[(r - i - 1) mod N] from
 *	r-1 and set B[..] = Q(B[..] + received)
 *   allgather, step i = 0..N-2:
 *	send B[(r + 1 - i) mod N] to r+1; receive B[(r - i) mod N] from r-1
 *
 * so rank r owns block (r + 1) mod N after the reduce-scatter. Block b is
 * summed along the ring starting at rank b, with a quantisation Q on every
 * hop: v = Q(g_b[b]); v = Q(g_{b+1}[b] + v); ...; v = Q(g_{b+N-1}[b] + v)
 * (the last Q by the owner, who keeps v and sends it round the ring).
 *
 * Q is decode(encode(x)) of the codec the wire applies ("codec
 * emulation"), the identity without one. The sender quantises before
 * sending, so it knows what the receiver gets; the module's lossy
 * transform (same codec, same values) then changes nothing, because
 * inceptionn, ebq and trunc are idempotent. Every rank therefore ends
 * with bit-identical values, with or without the module on the path.
 * With Q = identity the result is exactly the float sum in the order
 * above. N = 1 returns the buffer unchanged.
 *
 * Error budget: with ebq at 2^-k, every element of the result differs from
 * the exact sum of the inputs by at most N * 2^-k (N quantisations of
 * 2^-k each) plus the fp32 rounding of the N - 1 additions (each at most
 * half an ulp of the partial sum). inceptionn's real per-value bound is
 * 2^-min(k, 7) (docs/codecs.md), so its budget is N * 2^-min(k, 7).
 *
 * Worker-aggregator baseline (incnn_allreduce_ps): every worker w != 0
 * sends Q(g_w) to rank 0 over a marked connection (the up leg); rank 0
 * computes ((g_0 + Q(g_1)) + Q(g_2)) + ... + Q(g_{N-1}) and sends the
 * result back over unmarked connections (the down leg, exact). Error
 * budget (N - 1) * 2^-k plus rounding.
 *
 * Which codec: INCNN_COLL_CODEC_AUTO asks the module over generic netlink
 * (family "incnn", INCNN_CMD_GET_CONFIG) for the rule of DSCP tos >> 2:
 * a lossy rule is emulated, a lossless one (lz4), no rule or no module
 * means the identity. INCNN_COLL_CODEC_EMULATE names a codec and
 * parameter explicitly (accuracy studies without the module);
 * INCNN_COLL_CODEC_NONE reports the identity. The store combines the
 * ranks' answers: all lossy ones must be the same codec and parameter
 * (otherwise every rank fails), and that one is used by every rank.
 * A rank whose own module has the rule leaves the quantisation of what it
 * sends to the module and applies Q itself only to the block it owns
 * (half the codec work; same values, the codecs being deterministic and
 * idempotent). So the result through the module equals the emulation's
 * bit for bit as long as every marked connection is compressed; if one
 * is not (a peer without the module, a full flow table), the replicas
 * are still bit-identical (every block is finalised by its owner), only
 * that equality is lost.
 *
 * Failures: a peer that dies, closes its connection early (a short
 * stream) or makes no progress for timeout_ms makes every rank's call
 * return an error, within about timeout_ms; the store relays the first
 * error to every rank, and a call only succeeds once every rank has
 * completed it (so no rank reports success while another fails). After
 * an error the communicator is unusable: every later call returns the
 * same error; destroy it. incnn_comm_strerror() gives a one-line message.
 *
 * Threads: a communicator is used by one thread at a time; several
 * communicators (in one process or not) are independent. The library has
 * no global mutable state and never raises SIGPIPE (MSG_NOSIGNAL).
 *
 * IPv4 only (like the module). The data connections are identified
 * in-band, so NAT between ranks is fine.
 */
#ifndef INCNN_COLLECTIVE_H
#define INCNN_COLLECTIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* libincnn.so exports what this header declares, and nothing else */
#pragma GCC visibility push(default)

struct incnn_comm;

enum incnn_coll_codec_mode {
	INCNN_COLL_CODEC_AUTO,		/* the module's rule for our ToS */
	INCNN_COLL_CODEC_NONE,		/* identity */
	INCNN_COLL_CODEC_EMULATE,	/* codec_id/codec_param below */
};

/* Test hooks: make this rank misbehave once the data phase of a call has
 * moved fault_after bytes (sent plus received). */
enum incnn_coll_fault {
	INCNN_COLL_FAULT_NONE,
	INCNN_COLL_FAULT_CLOSE,	/* close every socket abruptly, as a crash */
	INCNN_COLL_FAULT_STALL,	/* sleep fault_stall_ms without any I/O */
	INCNN_COLL_FAULT_SHORT,	/* stop sending: shutdown(SHUT_WR) (FIN) */
};

/*
 * Compression inside the collective (per communicator): NONE sends fp32
 * (the module may compress it on the wire); THC (docs/thc.md) sends 4-bit
 * indices and integer lanes. A THC or GradiVeQ communicator's data
 * connections are unmarked (ToS 0) whatever tos/INCNN_TOS say: their
 * payloads are not fp32 streams and the module must never touch them.
 * GRADIVEQ (docs/gradiveq.md) compresses the convolutional layers given to
 * incnn_allreduce_layers() (their shapes in struct incnn_layer, wfbp.h)
 * with PCA and sums the compressed slices in the ring; every other float
 * takes the plain fp32 ring. It needs the layer shapes, so on a GradiVeQ
 * communicator incnn_allreduce() and incnn_allreduce_ps() fail with
 * -EINVAL ("method gradiveq needs incnn_allreduce_layers() ..."), as does
 * a layers call with opts.ps (a ring method). Codec AUTO is the identity;
 * an EMULATE codec quantises its warm-up and sampling calls only (keyed:
 * scale and error feedback per bucket, as incnn_allreduce_bucket()), the
 * paper's scalar quantisation of the iterations it does not compress;
 * the compressed calls' coefficients are never quantised.
 */
enum incnn_coll_method {
	INCNN_COLL_METHOD_UNSET,	/* INCNN_METHOD, else none */
	INCNN_COLL_METHOD_NONE,
	INCNN_COLL_METHOD_THC,
	INCNN_COLL_METHOD_GRADIVEQ,
};

/* Scale-relative bounds of keyed calls (incnn_allreduce_bucket) */
enum incnn_coll_scale {
	INCNN_COLL_SCALE_OFF,
	INCNN_COLL_SCALE_AUTO,
};

#define INCNN_COLL_DEFAULT_TOS		0x28
#define INCNN_COLL_DEFAULT_CHUNK	(256 * 1024)
#define INCNN_COLL_DEFAULT_TIMEOUT_MS	30000
#define INCNN_COLL_DEFAULT_INIT_TIMEOUT_MS 300000
#define INCNN_COLL_DEFAULT_SOCKBUF	(4 * 1024 * 1024)
#define INCNN_COLL_MAX_WORLD		4096
#define INCNN_COLL_DEFAULT_SCALE	INCNN_COLL_SCALE_AUTO
#define INCNN_COLL_DEFAULT_EF		1

/*
 * Configuration. incnn_comm_config_init() leaves every field "unset";
 * incnn_comm_create() fills an unset field from the environment, then
 * from the default:
 *
 *	field		unset	environment		default
 *	master_addr	NULL	MASTER_ADDR		(required)
 *	master_port	-1	MASTER_PORT		(required, 1..65535)
 *	rank		-1	RANK			(required)
 *	world_size	-1	WORLD_SIZE		(required, 1..4096)
 *	data_addr	NULL	INCNN_DATA_ADDR		local address of the
 *							store connection
 *	tos		-1	INCNN_TOS		0x28 (0 = unmarked)
 *	chunk_bytes	0	INCNN_CHUNK		256 KiB
 *	timeout_ms	0	INCNN_TIMEOUT_MS	30000
 *	init_timeout_ms	0	INCNN_INIT_TIMEOUT_MS	300000
 *	sockbuf		-1	INCNN_SOCKBUF		4 MiB (0: kernel
 *							autotuning)
 *	codec_mode	AUTO	INCNN_CODEC: "auto", "none" or "NAME:SETTING"
 *			(e.g. "ebq:10", "trunc:16"), read only when
 *			codec_mode is AUTO
 *	method		UNSET	INCNN_METHOD: "none", "thc", "gradiveq"
 *								none
 *	thc_bits	0	INCNN_THC_BITS		4 (1, 2, 4, 8)
 *	thc_gran	0	INCNN_THC_GRAN		30 (2^b - 1..255)
 *	gvq_d		0	INCNN_GVQ_D		256 (slice size, 2..1024)
 *	gvq_k		0	INCNN_GVQ_K		32 (1..d - 1)
 *	gvq_warmup	-1	INCNN_GVQ_WARMUP	1000 (0..2^31 - 1)
 *	gvq_ts		0	INCNN_GVQ_TS		100 (T_s, 2..4096)
 *	gvq_tc		0	INCNN_GVQ_TC		400 (T_c, 1..2^31 - 1)
 *	gvq_fc		-1	INCNN_GVQ_FC		0 (1: fully-connected
 *							layers as 1x1 convs,
 *							our extension)
 *	gvq_eps		0	INCNN_GVQ_EPS		0.01 (loss threshold,
 *							(0, 1]; INFINITY or
 *							"off": no loss monitor)
 *	scale		-1	INCNN_SCALE: "auto" or "off"	auto
 *			(scale-relative bounds of keyed calls, see
 *			incnn_allreduce_bucket(); 1 auto, 0 off)
 *	error_feedback	-1	INCNN_ERROR_FEEDBACK: "1"/"on" or "0"/"off"
 *								1 (on)
 *
 * store_fd: rank 0 only; a listening TCP socket for the store (the
 * communicator takes it over and closes it), instead of binding
 * master_addr:master_port. Lets a launcher pick a free port first.
 */
struct incnn_comm_config {
	const char *master_addr;
	int master_port;
	int rank;
	int world_size;
	int store_fd;
	const char *data_addr;
	int tos;
	size_t chunk_bytes;
	int timeout_ms;		/* no progress for this long: error */
	int init_timeout_ms;	/* rendezvous and connection setup */
	int sockbuf;		/* SO_SNDBUF and SO_RCVBUF */
	enum incnn_coll_codec_mode codec_mode;
	unsigned int codec_id;		/* enum incnn_codec_id (EMULATE) */
	unsigned int codec_param;	/* k for 2^-k codecs, bits for trunc */
	/* tests only */
	enum incnn_coll_fault fault;
	uint64_t fault_after;
	int fault_stall_ms;
	/* added later, at the end to keep the layout of the fields above */
	enum incnn_coll_method method;
	int thc_bits;		/* THC b, 0 unset */
	int thc_gran;		/* THC g, 0 unset */
	/* GradiVeQ (docs/gradiveq.md) */
	int gvq_d;		/* slice size, 0 unset */
	int gvq_k;		/* compressed size, 0 unset */
	int gvq_warmup;		/* -1 unset */
	int gvq_ts;		/* T_s, 0 unset */
	int gvq_tc;		/* T_c, 0 unset */
	int gvq_fc;		/* -1 unset, 0, 1 */
	double gvq_eps;		/* loss-monitor threshold, 0 unset */
	/* keyed calls (incnn_allreduce_bucket) */
	int scale;		/* -1 unset, INCNN_COLL_SCALE_* */
	int error_feedback;	/* -1 unset, 0 off, 1 on */
};

void incnn_comm_config_init(struct incnn_comm_config *cfg);

/*
 * Join the job: rendezvous through the store, agree on the world size and
 * the codec, connect the data sockets. Blocks until every rank got there
 * (or init_timeout_ms). Returns 0 and *comm, or a negative errno with a
 * one-line message in @err (which may be NULL):
 *	-EINVAL		bad configuration
 *	-EPROTO		ranks disagree (world size, duplicate rank, codec)
 *	-ETIMEDOUT	a rank did not show up in time
 *	-ECONNABORTED	another rank failed (its message is relayed)
 *	other		system errors
 */
int incnn_comm_create(struct incnn_comm **comm,
		      const struct incnn_comm_config *cfg,
		      char *err, size_t errlen);

/*
 * Leave the job and free everything (sockets, threads, memory). Rank 0
 * keeps the store up until the other ranks have left it (at most
 * timeout_ms). NULL is fine.
 */
void incnn_comm_destroy(struct incnn_comm *comm);

int incnn_comm_rank(const struct incnn_comm *comm);
int incnn_comm_size(const struct incnn_comm *comm);
/* The codec every rank emulates (0 = identity) and its parameter. */
void incnn_comm_codec(const struct incnn_comm *comm, unsigned int *codec_id,
		      unsigned int *codec_param);
/* The communicator's method (never UNSET). */
enum incnn_coll_method incnn_comm_method(const struct incnn_comm *comm);
/* Bytes this rank sent on its data connections so far (all calls). */
uint64_t incnn_comm_wire_bytes(const struct incnn_comm *comm);
/*
 * A GradiVeQ communicator's state (zeros for other methods): its layers
 * calls so far, how many ran compressed, loss-monitor refreshes, fits
 * (compressor computations), the phase of the next call (enum
 * incnn_gvq_phase: 0 warm-up, 1 sampling, 2 compressed), the layers of the
 * current layer set that are compressed and that are not (no conv shape,
 * or a shape that does not fit the slice size: see note), and a 64-bit
 * FNV-1a digest of every compressed layer's U and mu (0 before the first
 * fit): equal on every rank. The loss monitor (this rank's): its local
 * loss in the last compressed call, the mean over the last 10 compressed
 * calls (0 until there are 10 since the fit) and the reference, that mean
 * over the first 10 after the fit (-1 until then); a refresh when the
 * mean exceeds the reference by more than the threshold on a majority of
 * ranks (docs/gradiveq.md).
 */
struct incnn_gvq_status {
	uint64_t calls, compressed_calls, refreshes, fits;
	int phase;
	unsigned int layers_compressed, layers_plain;
	uint64_t u_digest;
	char note[192];		/* why the first plain layer is, or "" */
	double loss, loss_avg, loss_ref;
};
void incnn_comm_gvq_status(const struct incnn_comm *comm,
			   struct incnn_gvq_status *st);

/* The message of the first error, "" when there was none. */
const char *incnn_comm_strerror(const struct incnn_comm *comm);

/*
 * In-place sum of @n floats over all ranks (ring, see above). Every rank
 * must call it with the same @n. Returns 0 or a negative errno:
 *	-EPROTO		ranks called different operations or counts
 *	-ETIMEDOUT	no progress for timeout_ms
 *	-ECONNRESET	a peer closed its connection (died, short stream)
 *	-ECONNABORTED	another rank failed (its message is relayed)
 *	-EINVAL		@n too large, NULL @buf with n > 0 (a collective
 *			call: this too fails the job on every rank)
 * On error @buf holds unspecified values.
 */
int incnn_allreduce(struct incnn_comm *comm, float *buf, size_t n);

/*
 * incnn_allreduce() of @buf divided by @divisor first: the result is bit
 * for bit that of dividing every element (x / divisor, IEEE division in
 * fp32, as torch's div_()) and then calling incnn_allreduce(), but the
 * division is done in the pass that first touches each element (the
 * reduction of a received chunk, or the preparation of this rank's own
 * block just before it is sent), so it costs no extra pass over the
 * buffer (PyTorch's averaging hooks divide by the world size). Every rank
 * must pass the same @divisor. A @divisor that is 0, infinite or NaN is
 * -EINVAL (and, a collective call, fails the job). Other errors as
 * incnn_allreduce(). On a THC communicator: a division pass, then
 * incnn_allreduce_thc().
 */
int incnn_allreduce_div(struct incnn_comm *comm, float *buf, size_t n,
			float divisor);

/*
 * A THC communicator's incnn_allreduce() is incnn_allreduce_thc(): the
 * same sum, estimated by THC over the ring (docs/thc.md): replicas are
 * bit-identical, the error is THC's. Callable directly on a communicator
 * with unmarked data connections (tos 0; else -EINVAL, the job fails).
 * Errors as incnn_allreduce(), and -EINVAL for a bucket of
 * more than 16384 RHT blocks (the max-norm agreement goes through the
 * store).
 */
int incnn_allreduce_thc(struct incnn_comm *comm, float *buf, size_t n);
/*
 * THC's worker-aggregator (the paper's PS): workers send their b-bit
 * indices to rank 0, which sums table values as integers (lanes for N
 * workers, 8 bits for N <= 8 at g = 30) and sends the sums back; every
 * rank decodes. Bit-identical to incnn_allreduce_thc()'s result.
 */
int incnn_allreduce_thc_ps(struct incnn_comm *comm, float *buf, size_t n);

/* The same through rank 0 (worker-aggregator baseline, see above); on a
 * THC communicator it is incnn_allreduce_thc_ps(). */
int incnn_allreduce_ps(struct incnn_comm *comm, float *buf, size_t n);

/*
 * Keyed allreduce: incnn_allreduce() of one gradient bucket that comes
 * back call after call (the same @key names the same values: a DDP
 * bucket's index), divided by @divisor first unless it is 0 (as
 * incnn_allreduce_div()). With a lossy codec the communicator keeps, per
 * key, what makes the codec's bound relative and its error fed back
 * (docs/training.md, "Scale-relative bounds and error feedback"):
 *
 *  scale (config scale, INCNN_SCALE): every value this rank sends is
 *	multiplied by 2^e and the result divided by 2^e (both exact powers
 *	of two), one e per segment of the bucket (the whole bucket unless
 *	incnn_allreduce_bucket_seg() names its segments, e.g. one per
 *	parameter tensor), e chosen so that the segment's largest value lies
 *	in [0.5, 1): e = -1 - ilogb(M), M the largest finite |value| of the
 *	segment in the previous call's result for the key (the same on every
 *	rank, bit for bit: no message), clamped to [-INCNN_SCALE_EXP_MAX,
 *	INCNN_SCALE_EXP_MAX]; kept when M is 0. The first call of a key,
 *	and a call after a result that was zero in every segment, agree on e
 *	through the store (one gather of 8 + 4 * segments bytes per rank): M
 *	is the largest rank's local max of the segment times the world size,
 *	rounded up to a power of two, so the first sum stays below 1 too; a
 *	segment that is zero on every rank takes the bucket's e.
 *  error feedback (config error_feedback, INCNN_ERROR_FEEDBACK): each rank
 *	quantises every element exactly once per call (its own block, the
 *	partial sums it forwards, the block it owns); it keeps that
 *	quantisation's error r (4 bytes per element, unscaled) and adds it
 *	to its own input of the element in the next call. Per element:
 *	u = x / d (when d), u = u + r, u = u * 2^e, a = u + p (p: the
 *	received partial sum, none for the rank's first block), q = Q(a),
 *	r = (a - q) * 2^-e; the rank sends or keeps q.
 *
 * Replicas stay bit-identical. A key whose @n changes starts again (its
 * residuals are dropped). Keyed calls on one rank and plain calls on
 * another are an error (every rank fails), as are ranks that disagree on
 * scale or error feedback (-EPROTO). Without a lossy codec, or with one
 * rank, it is incnn_allreduce_div()/incnn_allreduce(); on a THC
 * communicator: a division pass, then incnn_allreduce_thc(); GradiVeQ:
 * -EINVAL. Errors as incnn_allreduce_div().
 */
#define INCNN_SCALE_EXP_MAX	64
/* A bucket is "flattened" after this many calls in a row in which more
 * than 99 % of the nonzero values this rank quantised came out zero. */
#define INCNN_FLAT_CALLS	10
int incnn_allreduce_bucket(struct incnn_comm *comm, float *buf, size_t n,
			   uint64_t key, float divisor);
/*
 * The same with the bucket in @nseg segments of @seg[i] values each (in
 * order, summing to @n; at most INCNN_BUCKET_SEG_MAX), each scaled by its
 * own 2^e (above); @seg NULL and @nseg 0: one segment, as
 * incnn_allreduce_bucket(). A key whose segments change starts again.
 * Every rank must pass the same segments (else every rank fails,
 * -EPROTO); an invalid list is -EINVAL.
 */
#define INCNN_BUCKET_SEG_MAX	16382
int incnn_allreduce_bucket_seg(struct incnn_comm *comm, float *buf, size_t n,
			       uint64_t key, float divisor, const size_t *seg,
			       size_t nseg);

/* One key's state (incnn_comm_bucket_info). */
struct incnn_bucket_info {
	uint64_t calls;		/* keyed calls since the key (re)started */
	uint64_t n;		/* elements */
	int32_t exp;		/* e of the last call (0 without scale; the
				 * first segment's) */
	int32_t next_exp;	/* e of the next call (the first segment's) */
	uint64_t ef_bytes;	/* residual memory (0 without EF) */
	/* the last call: values this rank quantised, the nonzero ones among
	 * them, and those Q made zero */
	uint64_t quantised, nonzero, flattened;
	uint32_t flat_streak;	/* calls in a row with > 99 % made zero */
	uint32_t flat;		/* 1: the streak reached INCNN_FLAT_CALLS */
};
/* 0, or -ENOENT when @key has no state (no keyed call yet, no lossy
 * codec, one rank), -EINVAL for a NULL argument. */
int incnn_comm_bucket_info(const struct incnn_comm *comm, uint64_t key,
			   struct incnn_bucket_info *info);
/* Drop @key's state (residuals, e): its next call starts again. Local,
 * but every rank must do it before the same call (its next call agrees
 * on e through the store). 0 or -ENOENT. */
int incnn_comm_bucket_forget(struct incnn_comm *comm, uint64_t key);
/* @key's segments' e of the next call into @exp[0..min(len, segments))
 * (0 without scale); returns the number of segments, -ENOENT or
 * -EINVAL as incnn_comm_bucket_info(). */
int incnn_comm_bucket_exps(const struct incnn_comm *comm, uint64_t key,
			   int32_t *exp, size_t len);

struct incnn_bucket_stats {
	int32_t scale;		/* the communicator's setting, 0 or 1 */
	int32_t error_feedback;	/* 0 or 1 */
	uint64_t buckets;	/* keys with state */
	uint64_t ef_bytes;	/* residual memory of all of them */
	uint64_t flattened;	/* keys that became flattened (ever) */
};
void incnn_comm_bucket_stats(const struct incnn_comm *comm,
			     struct incnn_bucket_stats *st);

/*
 * Control-plane helpers through the store (unmarked, small data):
 * gather @len bytes from every rank into @out (world_size * len bytes, in
 * rank order) on every rank; every rank must pass the same @len (at most
 * 65536). A barrier is a gather of 0 bytes.
 */
int incnn_comm_allgather_meta(struct incnn_comm *comm, const void *in,
			      size_t len, void *out);
int incnn_comm_barrier(struct incnn_comm *comm);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* INCNN_COLLECTIVE_H */
