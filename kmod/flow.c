// SPDX-License-Identifier: GPL-2.0
/*
 * The flow table: TCP connections whose handshake incnn saw, keyed by the
 * local -> peer tuple. Lookups are RCU; inserts and removals take the
 * table lock. A periodic worker expires idle and closed flows whose local
 * socket is gone. The table is bounded: when full, new flows are simply
 * not tracked (passed raw) and not offered rx.
 */
#include <linux/jhash.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/inet_hashtables.h>
#include <net/tcp.h>

#include "incnn.h"

#define INCNN_GC_INTERVAL	HZ

static u32 flow_hash(__be32 saddr, __be32 daddr, __be16 sport, __be16 dport)
{
	return jhash_3words((__force u32)saddr, (__force u32)daddr,
			    ((__force u32)sport << 16) | (__force u32)dport,
			    0) & ((1 << INCNN_FLOW_HASH_BITS) - 1);
}

struct incnn_flow *incnn_flow_lookup(struct incnn_net *in, __be32 saddr,
				     __be32 daddr, __be16 sport,
				     __be16 dport)
{
	struct hlist_head *b;
	struct incnn_flow *f;

	b = &in->flows->buckets[flow_hash(saddr, daddr, sport, dport)];
	hlist_for_each_entry_rcu(f, b, node)
		if (f->saddr == saddr && f->daddr == daddr &&
		    f->sport == sport && f->dport == dport)
			return f;
	return NULL;
}

/* Look up or create a flow. NULL when the table is full or no memory. */
struct incnn_flow *incnn_flow_get(struct incnn_net *in,
				  const struct incnn_config *cfg,
				  __be32 saddr, __be32 daddr, __be16 sport,
				  __be16 dport)
{
	struct incnn_flow_table *t = in->flows;
	struct incnn_flow *f;

	f = incnn_flow_lookup(in, saddr, daddr, sport, dport);
	if (f)
		return f;

	spin_lock_bh(&t->lock);
	f = incnn_flow_lookup(in, saddr, daddr, sport, dport);
	if (f)
		goto out;
	if (t->count >= cfg->flow_max) {
		incnn_stat_inc(in, INCNN_STAT_TX_RAW_TABLE_FULL);
		goto out;
	}
	f = kzalloc(sizeof(*f), GFP_ATOMIC);
	if (!f)
		goto out;
	spin_lock_init(&f->lock);
	f->saddr = saddr;
	f->daddr = daddr;
	f->sport = sport;
	f->dport = dport;
	f->last = jiffies;
	f->gc_next = jiffies;
	hlist_add_head_rcu(&f->node,
			   &t->buckets[flow_hash(saddr, daddr, sport, dport)]);
	t->count++;
	incnn_stat_inc(in, INCNN_STAT_FLOWS_CREATED);
out:
	spin_unlock_bh(&t->lock);
	return f;
}

static void flow_del(struct incnn_flow_table *t, struct incnn_flow *f)
{
	hlist_del_rcu(&f->node);
	t->count--;
	kfree_rcu(f, rcu);
}

/*
 * Does a local TCP socket (not in TIME_WAIT) still own the flow's tuple?
 * Such a flow must not expire however long it idles or however long ago
 * a FIN went by (a half-closed connection still carries data the other
 * way): the peer keeps its side of the flow for as long as its own
 * socket lives, and a receiver that forgot a flow it offered rx to would
 * hand the peer's frames to TCP undecoded.
 */
static bool flow_has_sock(struct net *net, const struct incnn_flow *f)
{
	struct sock *sk;
	bool live;

	rcu_read_lock();
	/* 6.1: one global table (6.2 moved it to tcp_death_row.hashinfo) */
	sk = __inet_lookup_established(net, &tcp_hashinfo, f->daddr, f->dport,
				       f->saddr, ntohs(f->sport), 0, 0);
	rcu_read_unlock();
	if (!sk)
		return false;
	live = sk->sk_state != TCP_TIME_WAIT;
	sock_gen_put(sk);
	return live;
}

static void incnn_flows_gc(struct work_struct *work)
{
	struct incnn_flow_table *t = container_of(to_delayed_work(work),
						  struct incnn_flow_table, gc);
	struct incnn_net *in = t->owner;
	struct incnn_config *cfg;
	unsigned long idle, close;
	struct hlist_node *tmp;
	struct incnn_flow *f;
	u32 i, expired = 0;

	rcu_read_lock();
	cfg = rcu_dereference(in->cfg);
	idle = (unsigned long)cfg->idle_timeout * HZ;
	close = (unsigned long)cfg->close_timeout * HZ;
	rcu_read_unlock();

	spin_lock_bh(&t->lock);
	for (i = 0; i < ARRAY_SIZE(t->buckets); i++) {
		hlist_for_each_entry_safe(f, tmp, &t->buckets[i], node) {
			unsigned long limit = READ_ONCE(f->flags) &
					      INCNN_FLOW_F_CLOSING ?
					      close : idle;

			if (!time_after(jiffies, READ_ONCE(f->last) + limit) ||
			    time_before(jiffies, f->gc_next))
				continue;
			if (flow_has_sock(in->net, f)) {
				/* look again after another timeout */
				f->gc_next = jiffies + limit;
				continue;
			}
			flow_del(t, f);
			expired++;
		}
	}
	spin_unlock_bh(&t->lock);
	if (expired) {
		local_bh_disable();
		incnn_stat_add(in, INCNN_STAT_FLOWS_EXPIRED, expired);
		local_bh_enable();
	}
	queue_delayed_work(system_power_efficient_wq, &t->gc,
			   INCNN_GC_INTERVAL);
}

void incnn_flows_flush(struct incnn_net *in)
{
	struct incnn_flow_table *t = in->flows;
	struct hlist_node *tmp;
	struct incnn_flow *f;
	u32 i;

	spin_lock_bh(&t->lock);
	for (i = 0; i < ARRAY_SIZE(t->buckets); i++)
		hlist_for_each_entry_safe(f, tmp, &t->buckets[i], node)
			flow_del(t, f);
	spin_unlock_bh(&t->lock);
}

int incnn_flows_init(struct incnn_net *in)
{
	struct incnn_flow_table *t = kvzalloc(sizeof(*t), GFP_KERNEL);
	u32 i;

	if (!t)
		return -ENOMEM;
	spin_lock_init(&t->lock);
	for (i = 0; i < ARRAY_SIZE(t->buckets); i++)
		INIT_HLIST_HEAD(&t->buckets[i]);
	t->owner = in;
	in->flows = t;
	INIT_DELAYED_WORK(&t->gc, incnn_flows_gc);
	queue_delayed_work(system_power_efficient_wq, &t->gc,
			   INCNN_GC_INTERVAL);
	return 0;
}

void incnn_flows_exit(struct incnn_net *in)
{
	cancel_delayed_work_sync(&in->flows->gc);
	/* the hooks are unregistered and have finished: no reader is left */
	incnn_flows_flush(in);
	kvfree(in->flows);
	in->flows = NULL;
}
