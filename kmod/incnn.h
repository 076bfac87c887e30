/* SPDX-License-Identifier: GPL-2.0 */
/*
 * incnn: internal definitions shared by the module's files.
 */
#ifndef _INCNN_H
#define _INCNN_H

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>
#include <linux/netfilter.h>
#include <linux/in6.h>
#include <linux/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <linux/incnn.h>
#include <net/netns/generic.h>

#include "codec/codec.h"

/* --- configuration (RCU) -------------------------------------------- */

struct incnn_rule {
	u8 codec;	/* INCNN_CODEC_NONE: no rule for this DSCP */
	u8 param;
};

struct incnn_config {
	struct rcu_head rcu;
	bool tx;
	bool rx;
	u8 wire_dscp;
	u32 flow_max;
	u32 idle_timeout;	/* seconds */
	u32 close_timeout;	/* seconds */
	struct incnn_rule rules[64];	/* indexed by DSCP */
	bool superframes;	/* offer and send frame version 2 */
};

/* --- statistics (per CPU) -------------------------------------------- */

struct incnn_codec_stats {
	u64 frames;
	u64 bytes_in;
	u64 bytes_out;
	u64 hist[4];
};

struct incnn_pcpu_stats {
	struct u64_stats_sync syncp;
	u64 stat[__INCNN_STAT_MAX];
	struct incnn_codec_stats codec[__INCNN_CODEC_MAX];
};

/* --- flows ------------------------------------------------------------ */

/* Internal flow flags beyond the uapi INCNN_FLOW_F_* bits. */
#define INCNN_FLOW_F_ISN	BIT(16)		/* our SYN/SYN-ACK seen */
#define INCNN_FLOW_F_OFFERED	BIT(17)		/* we offered rx */
#define INCNN_FLOW_F_SENT	BIT(18)		/* sent_end is valid */
#define INCNN_FLOW_F_PEER_SYN	BIT(19)		/* peer_isn is valid */
#define INCNN_FLOW_F_PINNED	BIT(20)		/* holds a module reference */
#define INCNN_FLOW_F_RX_V2	BIT(21)		/* we offered frame version 2 */
#define INCNN_FLOW_F_PEER_V2	BIT(22)		/* the peer offered version 2 */

/*
 * What a new incarnation of a tuple starts without (see flow_reset). The
 * module reference (PINNED) stays with the entry until it is freed.
 */
#define INCNN_FLOW_F_INCARNATION (INCNN_FLOW_F_PEER_RX |		\
				  INCNN_FLOW_F_ANCHORED |		\
				  INCNN_FLOW_F_TOGGLED |		\
				  INCNN_FLOW_F_CLOSING |		\
				  INCNN_FLOW_F_ISN |			\
				  INCNN_FLOW_F_OFFERED |		\
				  INCNN_FLOW_F_SENT |			\
				  INCNN_FLOW_F_PEER_SYN |		\
				  INCNN_FLOW_F_RX_V2 |			\
				  INCNN_FLOW_F_PEER_V2)

/*
 * A flow's tuple, local -> peer. An IPv4 address is in s6_addr32[0], the
 * rest zero; @family (AF_INET, AF_INET6) tells them apart, so an IPv6
 * address never equals an IPv4 one. IPv4-mapped addresses of dual-stack
 * sockets never appear: such a socket sends IPv4.
 */
struct incnn_tuple {
	struct in6_addr saddr;
	struct in6_addr daddr;
	__be16 sport;
	__be16 dport;
	u8 family;
};

static inline bool incnn_tuple_eq(const struct incnn_tuple *a,
				  const struct incnn_tuple *b)
{
	if (a->family != b->family || a->sport != b->sport ||
	    a->dport != b->dport)
		return false;
	if (a->family == AF_INET)
		return a->saddr.s6_addr32[0] == b->saddr.s6_addr32[0] &&
		       a->daddr.s6_addr32[0] == b->daddr.s6_addr32[0];
	return ipv6_addr_equal(&a->saddr, &b->saddr) &&
	       ipv6_addr_equal(&a->daddr, &b->daddr);
}

/* raw cut floats a flow records before it goes raw for good */
#define INCNN_RAW_MAX	8

struct incnn_flow {
	struct hlist_node node;
	struct list_head embryo;	/* on the table's embryo list */
	struct rcu_head rcu;
	spinlock_t lock;	/* flags, anchor, counters */
	struct incnn_tuple t;	/* local -> peer */
	u32 flags;
	u32 isn;		/* our initial sequence number */
	u32 anchor;		/* stream offset of the first marked byte */
	u32 sent_end;		/* stream offset sent up to, before anchor */
	s64 tx_end;		/* highest end sent, relative to the anchor */
	int bound_if;		/* the local socket's sk_bound_dev_if */
	u8 dscp;		/* DSCP the flow was anchored with */
	struct incnn_rule rule;	/* codec pinned at the anchor */
	u32 peer_isn;		/* the peer's initial sequence number */
	u16 peer_codecs;	/* codecs the peer decodes (its offer) */
	u16 rx_codecs;		/* codecs we offered to decode */
	unsigned long last;	/* jiffies of the last segment */
	unsigned long gc_next;	/* GC: kept for its socket until then */
	u64 bytes_orig;
	u64 bytes_wire;
	/*
	 * Cut floats that travel raw in every copy (grid.c): offsets,
	 * relative to the anchor, of floats cut at the end of the data
	 * written so far; every float at or after raw_from is raw too.
	 */
	s64 raw_from;
	s64 raw[INCNN_RAW_MAX];
	u8 raw_n;
	u32 sf_target;		/* superframes: chunk length to try first */
};

#define INCNN_FLOW_HASH_BITS	12

struct incnn_net;

struct incnn_flow_table {
	struct incnn_net *owner;
	spinlock_t lock;	/* writers */
	u32 seed;		/* jhash seed, random per namespace */
	u32 count;
	u32 embryonic;		/* flows on the embryo list */
	u32 gc_pos;		/* GC: the next bucket to look at */
	struct list_head embryo;	/* handshake not complete, oldest first */
	struct hlist_head buckets[1 << INCNN_FLOW_HASH_BITS];
	struct delayed_work gc;
};

/* --- per network namespace -------------------------------------------- */

struct incnn_net {
	struct net *net;
	struct incnn_config __rcu *cfg;
	struct mutex cfg_lock;	/* serialises config writers */
	struct incnn_pcpu_stats __percpu *stats;
	struct incnn_flow_table *flows;
};

extern unsigned int incnn_net_id;

static inline struct incnn_net *incnn_pernet(const struct net *net)
{
	return net_generic(net, incnn_net_id);
}

/* stats */
static inline void incnn_stat_add(struct incnn_net *in, enum incnn_stat s,
				  u64 v)
{
	struct incnn_pcpu_stats *st = this_cpu_ptr(in->stats);

	u64_stats_update_begin(&st->syncp);
	st->stat[s] += v;
	u64_stats_update_end(&st->syncp);
}

static inline void incnn_stat_inc(struct incnn_net *in, enum incnn_stat s)
{
	incnn_stat_add(in, s, 1);
}

void incnn_stats_codec_n(struct incnn_net *in, u8 codec, unsigned int frames,
			 u64 in_bytes, u64 out_bytes,
			 const struct incnn_hist *hist);

/* one frame of @codec (see incnn_stats_codec_n()) */
static inline void incnn_stats_codec(struct incnn_net *in, u8 codec,
				     u64 in_bytes, u64 out_bytes,
				     const struct incnn_hist *hist)
{
	incnn_stats_codec_n(in, codec, 1, in_bytes, out_bytes, hist);
}

void incnn_stats_sum(struct incnn_net *in, struct incnn_pcpu_stats *sum);
void incnn_stats_reset(struct incnn_net *in);

/* a superframe's plan (sframe_tx.c): one chunk per wire packet */
struct incnn_sframe_chunk {
	u32 off, len;		/* payload range */
	u32 fpos, flen;		/* its frame at scratch buf + fpos */
};

#define INCNN_SFRAME_CHUNKS	64

struct incnn_sframe_plan {
	const struct incnn_codec *c;
	u8 param, dscp;
	unsigned int room;	/* most frame + option bytes per packet */
	unsigned int n;		/* chunks */
	unsigned int wire;	/* frame bytes in all */
	struct incnn_hist hist;
	struct incnn_sframe_chunk ch[INCNN_SFRAME_CHUNKS];
};

/* per-CPU scratch for encoding and decoding (softirq-safe with BH off) */
/* a 64 KiB payload encoded by any codec: 4 bytes + 2 bits per value */
#define INCNN_SCRATCH_BUF	(65536 / 4 * 5 + 64)
struct incnn_scratch {
	u8 buf[INCNN_SCRATCH_BUF];
	u8 codec[INCNN_CODEC_SCRATCH] __aligned(8);
	u8 sframe[65536] __aligned(8);	/* a superframe's payload (egress) */
	struct incnn_sframe_plan sframe_plan;
};

struct incnn_scratch *incnn_scratch_get(void);

/*
 * The codecs' SIMD path (simd.c). incnn_simd_begin() starts an FPU
 * section if this context allows one and returns the path to give the
 * codecs (INCNN_SIMD_NONE: none started); incnn_simd_end() ends it. No
 * sending (okfn, nf_hook_slow) inside a section.
 */
void incnn_simd_init(void);
/* codec @id's self-benchmark figure (MB/s) for @simd, 0 if none */
u32 incnn_simd_mbps(unsigned int id, enum incnn_simd simd, bool dec);
enum incnn_simd incnn_simd_begin(void);
void incnn_simd_end(enum incnn_simd simd);
struct incnn_frame_info;
int incnn_frame_decode_fpu(const u8 *frame, unsigned int len, u8 *out,
			   unsigned int cap, struct incnn_frame_info *fi);
int incnn_scratch_init(void);
void incnn_scratch_exit(void);

/* flows */
int incnn_flows_init(struct incnn_net *in);
void incnn_flows_exit(struct incnn_net *in);
struct incnn_flow *incnn_flow_lookup(struct incnn_net *in,
				     const struct incnn_tuple *t);
struct incnn_flow *incnn_flow_get(struct incnn_net *in,
				  const struct incnn_config *cfg,
				  const struct incnn_tuple *t);
void incnn_flows_flush(struct incnn_net *in);
bool incnn_flow_pin(struct incnn_flow *f);
void incnn_flow_confirm(struct incnn_net *in, struct incnn_flow *f);

static inline void incnn_flow_set(struct incnn_flow *f, u32 flags)
{
	spin_lock(&f->lock);
	f->flags |= flags;
	spin_unlock(&f->lock);
}

/*
 * Forget everything a previous incarnation of the flow's tuple learned
 * (ISN, anchor, rule, offers); f->lock held. Returns whether there was
 * anything to forget.
 */
static inline bool incnn_flow_reset(struct incnn_flow *f)
{
	bool had = f->flags & INCNN_FLOW_F_INCARNATION;

	f->flags &= ~INCNN_FLOW_F_INCARNATION;
	f->isn = 0;
	f->anchor = 0;
	f->sent_end = 0;
	f->dscp = 0;
	f->rule.codec = INCNN_CODEC_NONE;
	f->rule.param = 0;
	f->peer_isn = 0;
	f->peer_codecs = 0;
	f->rx_codecs = 0;
	f->bytes_orig = 0;
	f->bytes_wire = 0;
	return had;
}

/* TCP options (tcpopt.c) */
struct tcphdr;
struct incnn_offer {
	bool seen;		/* an incnn capability option, any form */
	u16 codecs;		/* codecs usable toward the peer (0: none) */
	bool v2;		/* it also decodes frame version 2 */
};

u16 incnn_tcpopt_codecs(void);
int incnn_tcpopt_add(struct sk_buff *skb, u16 codecs);
bool incnn_tcpopt_signed(const struct tcphdr *th);
void incnn_tcpopt_strip(struct sk_buff *skb, struct incnn_offer *offer);
int incnn_tcpopt_frame_find(const struct sk_buff *skb);
int incnn_tcpopt_frame_at(const struct tcphdr *th);
bool incnn_tcpopt_frame_room(const struct sk_buff *skb);

/*
 * Layer 3 (l3.c): what the datapath needs of the IP header, for both
 * families; the family of an skb is its network header's version.
 * ipv4.c and ipv6.c hold each family's part.
 */
enum incnn_l3 {
	INCNN_L3_NONE,		/* not a TCP segment of ours to look at */
	INCNN_L3_TCP,		/* TCP right after the IP header, pulled */
	INCNN_L3_EXTHDR,	/* IPv6: TCP behind extension headers */
};

static inline bool incnn_l3_v6(const struct sk_buff *skb)
{
	return ip_hdr(skb)->version == 6;
}

enum incnn_l3 incnn_tcp_pull(struct sk_buff *skb, unsigned int *thoff);
void incnn_l3_set_len(struct sk_buff *skb);
void incnn_tcp_fix_csum(struct sk_buff *skb);
void incnn_tcp_csum_partial(struct sk_buff *skb);
u8 incnn_l3_dsfield(const struct sk_buff *skb);
void incnn_l3_set_dscp(struct sk_buff *skb, u8 dsfield);
unsigned int incnn_l3_mtu(struct sk_buff *skb);
unsigned int incnn_l3_max_len(const struct sk_buff *skb);
unsigned int incnn_l3_gso_type(const struct sk_buff *skb);
void incnn_tuple_out(const struct sk_buff *skb, struct incnn_tuple *t);
void incnn_tuple_in(const struct sk_buff *skb, struct incnn_tuple *t);
struct sock *incnn_sk_established(struct net *net,
				  const struct sk_buff *skb);
bool incnn_sk_listener(struct net *net, const struct sk_buff *skb);
struct sock *incnn_tuple_sk(struct net *net, const struct incnn_tuple *t,
			    int dif);
bool incnn_l3_csum_ok(struct sk_buff *skb, unsigned int hook);
const struct nf_hook_entries *
incnn_l3_hooks(const struct nf_hook_state *state);

/* the families' parts (ipv4.c, ipv6.c) */
bool incnn_ipv4_tcp_pull(struct sk_buff *skb);
void incnn_ipv4_set_len(struct sk_buff *skb);
struct sock *incnn_ipv4_sk_established(struct net *net,
				       const struct sk_buff *skb);
bool incnn_ipv4_sk_listener(struct net *net, const struct sk_buff *skb);
enum incnn_l3 incnn_ipv6_tcp_pull(struct sk_buff *skb, unsigned int *thoff);
void incnn_ipv6_set_len(struct sk_buff *skb);
struct sock *incnn_ipv6_sk_established(struct net *net,
				       const struct sk_buff *skb);
bool incnn_ipv6_sk_listener(struct net *net, const struct sk_buff *skb);
int incnn_ipv6_net_init(struct net *net);
void incnn_ipv6_net_exit(struct net *net);

/*
 * The float grid of a compressed flow (grid.c), for align.c and tx.c:
 * all but incnn_grid_flow() and incnn_grid_fit() run with f->lock held.
 */
bool incnn_float_raw(const struct incnn_flow *f, s64 fl);
bool incnn_float_raw_add(struct incnn_flow *f, s64 fl, s64 una);
s64 incnn_flow_rel(const struct incnn_flow *f, u32 seq);
struct incnn_flow *incnn_grid_flow(struct incnn_net *in,
				   const struct sk_buff *skb);
bool incnn_grid_mark(struct incnn_flow *f, const struct incnn_config *cfg,
		     u32 seq, u8 dscp, bool marked);
void incnn_grid_sent(struct incnn_flow *f, u32 seq, unsigned int plen);
bool incnn_grid_past(struct incnn_flow *f, u32 seq, unsigned int plen);
s64 incnn_grid_pos(struct incnn_flow *f, u32 seq, unsigned int plen,
		   s64 *old_end);

/*
 * The raw floats of a segment beyond its head (payload offsets,
 * ascending), and where its quantised part ends: floats at or after
 * qend are raw (the flow went raw for good there).
 */
struct incnn_grid_raw {
	unsigned int n;
	unsigned int qend;
	unsigned int off[INCNN_RAW_MAX];
};

bool incnn_grid_cuts(struct incnn_net *in, struct incnn_flow *f,
		     struct sk_buff *skb, s64 pos, unsigned int plen,
		     unsigned int head, s64 old_end,
		     struct incnn_grid_raw *r);
unsigned int incnn_grid_fit(struct sk_buff *skb, s64 pos, unsigned int hlen,
			    unsigned int plen);

/* hooks; egress: late in POST_ROUTING (netns.c) */
#define INCNN_PRI_TX	250
unsigned int incnn_tx_align_hook(void *priv, struct sk_buff *skb,
				 const struct nf_hook_state *state);
unsigned int incnn_tx_hook(void *priv, struct sk_buff *skb,
			   const struct nf_hook_state *state);
unsigned int incnn_rx_hook(void *priv, struct sk_buff *skb,
			   const struct nf_hook_state *state);

/* the rule new namespaces start with (default_rule=, main.c) */
extern struct incnn_rule incnn_default_rule;
extern u8 incnn_default_rule_dscp;

/* module-wide setup */
int incnn_netns_init(void);
void incnn_netns_exit(void);

/* generic netlink */
int incnn_genl_init(void);
void incnn_genl_exit(void);

/* --- superframes, frame version 2 (sframe_tx.c, sframe_rx.c) -------- */

struct incnn_frame_info;

void incnn_sframe_syn(const struct incnn_config *cfg, struct incnn_flow *f,
		      struct sk_buff *skb, bool offered);
void incnn_sframe_peer(struct incnn_flow *f, const struct incnn_offer *offer);
bool incnn_sframe_tx(struct incnn_net *in, const struct incnn_config *cfg,
		     struct incnn_flow *f, struct sk_buff *skb,
		     struct sk_buff **segs, enum incnn_simd simd);
int incnn_sframe_rx_check(const struct incnn_flow *f,
			  const struct incnn_frame_info *fi);
int incnn_sframe_rx(struct incnn_net *in, struct sk_buff *skb,
		    unsigned int hlen, int opt, unsigned int cap,
		    struct incnn_frame_info *fi);

#endif /* _INCNN_H */
