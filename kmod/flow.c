// SPDX-License-Identifier: GPL-2.0
/*
 * The flow table: TCP connections whose handshake incnn saw, keyed by the
 * local -> peer tuple. Lookups are RCU; inserts and removals take the
 * table lock. A periodic worker expires idle and closed flows whose local
 * socket is gone, a bounded number of buckets per run. The table is
 * bounded: when full, new flows are simply not tracked (passed raw) and
 * not offered rx. Flows whose handshake has not completed ("embryos", on
 * the embryo list) are bounded more tightly, and the oldest of them that
 * nothing depends on are evicted first, so that a spray of SYNs cannot
 * keep real connections out of the table.
 *
 * A flow that offered rx to its peer or compresses toward it holds a
 * reference on the module (INCNN_FLOW_F_PINNED) until it is freed: the
 * module cannot be unloaded while a peer may send it frames, or while a
 * sender would have to retransmit framed bytes raw.
 */
#include <linux/jhash.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/inet_hashtables.h>
#include <net/tcp.h>

#include "incnn.h"

/* the GC looks at every bucket once a second, in 8 runs */
#define INCNN_GC_RUNS		8
#define INCNN_GC_INTERVAL	(HZ / INCNN_GC_RUNS)
#define INCNN_GC_BUCKETS	((1 << INCNN_FLOW_HASH_BITS) / INCNN_GC_RUNS)
/* embryos: at most an eighth of the table; evictions tried per insert */
#define INCNN_EMBRYO_SHIFT	3
#define INCNN_EMBRYO_MIN	16
#define INCNN_EVICT_TRIES	8

/* IPv4: three words, as before IPv6; IPv6: both addresses too */
static u32 flow_hash(const struct incnn_flow_table *t,
		     const struct incnn_tuple *k)
{
	u32 ports = ((__force u32)k->sport << 16) | (__force u32)k->dport;
	u32 h;

	if (k->family == AF_INET)
		h = jhash_3words((__force u32)k->saddr.s6_addr32[0],
				 (__force u32)k->daddr.s6_addr32[0], ports,
				 t->seed);
	else
		h = jhash2((const u32 *)&k->saddr, 4,
			   jhash2((const u32 *)&k->daddr, 4, t->seed ^ ports));
	return h & ((1 << INCNN_FLOW_HASH_BITS) - 1);
}

struct incnn_flow *incnn_flow_lookup(struct incnn_net *in,
				     const struct incnn_tuple *k)
{
	struct hlist_head *b;
	struct incnn_flow *f;

	b = &in->flows->buckets[flow_hash(in->flows, k)];
	hlist_for_each_entry_rcu(f, b, node)
		if (incnn_tuple_eq(&f->t, k))
			return f;
	return NULL;
}

static void flow_free_rcu(struct rcu_head *head)
{
	struct incnn_flow *f = container_of(head, struct incnn_flow, rcu);
	bool pinned = f->flags & INCNN_FLOW_F_PINNED;

	kfree(f);
	/* the module's exit waits for this callback (rcu_barrier()) */
	if (pinned)
		module_put(THIS_MODULE);
}

static void flow_del(struct incnn_flow_table *t, struct incnn_flow *f)
{
	hlist_del_rcu(&f->node);
	if (!list_empty(&f->embryo)) {
		list_del_init(&f->embryo);
		t->embryonic--;
	}
	t->count--;
	call_rcu(&f->rcu, flow_free_rcu);
}

/*
 * Does a local TCP socket (not in TIME_WAIT) still own the flow's tuple?
 * Such a flow must not expire however long it idles or however long ago
 * a FIN went by (a half-closed connection still carries data the other
 * way): the peer keeps its side of the flow for as long as its own
 * socket lives, and a receiver that forgot a flow it offered rx to would
 * hand the peer's frames to TCP undecoded. The socket is looked up with
 * the device it is bound to (SO_BINDTODEVICE, a VRF), recorded when the
 * handshake went out: a bound socket matches no lookup without it.
 */
static bool flow_has_sock(struct net *net, const struct incnn_flow *f)
{
	struct sock *sk;
	bool live;

	sk = incnn_tuple_sk(net, &f->t, READ_ONCE(f->bound_if));
	if (!sk)
		return false;
	live = sk->sk_state != TCP_TIME_WAIT;
	sock_gen_put(sk);
	return live;
}

/*
 * May an embryo go? Only if nothing depends on it: it never offered rx
 * and never compressed, or its socket (a request socket, a connecting
 * one) is gone. The caller holds the table lock.
 */
static bool flow_evictable(struct incnn_net *in, struct incnn_flow *f)
{
	u32 flags = READ_ONCE(f->flags);

	if (!(flags & (INCNN_FLOW_F_OFFERED | INCNN_FLOW_F_ANCHORED)))
		return true;
	return !flow_has_sock(in->net, f);
}

/*
 * Make room for one more embryo: look at the oldest few, evict the first
 * one nothing depends on, move the others to the end of the list.
 * Returns whether one went.
 */
static bool flow_evict_embryo(struct incnn_net *in)
{
	struct incnn_flow_table *t = in->flows;
	struct incnn_flow *f;
	int i;

	for (i = 0; i < INCNN_EVICT_TRIES && !list_empty(&t->embryo); i++) {
		f = list_first_entry(&t->embryo, struct incnn_flow, embryo);
		if (flow_evictable(in, f)) {
			flow_del(t, f);
			incnn_stat_inc(in, INCNN_STAT_FLOWS_EXPIRED);
			return true;
		}
		list_move_tail(&f->embryo, &t->embryo);
	}
	return false;
}

static u32 flow_embryo_max(const struct incnn_config *cfg)
{
	return max_t(u32, cfg->flow_max >> INCNN_EMBRYO_SHIFT,
		     INCNN_EMBRYO_MIN);
}

/*
 * Look up or create a flow. NULL when the table is full or no memory. A
 * new flow is an embryo until incnn_flow_confirm().
 */
struct incnn_flow *incnn_flow_get(struct incnn_net *in,
				  const struct incnn_config *cfg,
				  const struct incnn_tuple *k)
{
	struct incnn_flow_table *t = in->flows;
	struct incnn_flow *f;

	f = incnn_flow_lookup(in, k);
	if (f)
		return f;

	spin_lock_bh(&t->lock);
	f = incnn_flow_lookup(in, k);
	if (f)
		goto out;
	if ((t->embryonic >= flow_embryo_max(cfg) ||
	     t->count >= cfg->flow_max) && !flow_evict_embryo(in)) {
		incnn_stat_inc(in, INCNN_STAT_TX_RAW_TABLE_FULL);
		goto out;
	}
	if (t->count >= cfg->flow_max) {
		incnn_stat_inc(in, INCNN_STAT_TX_RAW_TABLE_FULL);
		goto out;
	}
	/* charged to the memory cgroup of the task, if any, that sends */
	f = kzalloc(sizeof(*f), GFP_ATOMIC | __GFP_ACCOUNT);
	if (!f)
		goto out;
	spin_lock_init(&f->lock);
	f->t = *k;
	f->last = jiffies;
	f->gc_next = jiffies;
	hlist_add_head_rcu(&f->node, &t->buckets[flow_hash(t, k)]);
	list_add_tail(&f->embryo, &t->embryo);
	t->embryonic++;
	t->count++;
	incnn_stat_inc(in, INCNN_STAT_FLOWS_CREATED);
out:
	spin_unlock_bh(&t->lock);
	return f;
}

/* The handshake completed: the flow is no longer an embryo. */
void incnn_flow_confirm(struct incnn_net *in, struct incnn_flow *f)
{
	struct incnn_flow_table *t = in->flows;

	if (list_empty_careful(&f->embryo))
		return;
	spin_lock_bh(&t->lock);
	/* unhashed (expired, evicted) flows are off the list too */
	if (!list_empty(&f->embryo)) {
		list_del_init(&f->embryo);
		t->embryonic--;
	}
	spin_unlock_bh(&t->lock);
}

/*
 * Take the module reference of a flow that offers rx or compresses
 * (once). False only while the module is being unloaded: the flow must
 * then neither offer nor compress.
 */
bool incnn_flow_pin(struct incnn_flow *f)
{
	bool ok = true;

	spin_lock_bh(&f->lock);
	if (!(f->flags & INCNN_FLOW_F_PINNED)) {
		ok = try_module_get(THIS_MODULE);
		if (ok)
			f->flags |= INCNN_FLOW_F_PINNED;
	}
	spin_unlock_bh(&f->lock);
	return ok;
}

static bool flow_expired(struct incnn_net *in, struct incnn_flow *f,
			 unsigned long idle, unsigned long close)
{
	unsigned long limit = READ_ONCE(f->flags) & INCNN_FLOW_F_CLOSING ?
			      close : idle;

	if (!time_after(jiffies, READ_ONCE(f->last) + limit) ||
	    time_before(jiffies, f->gc_next))
		return false;
	if (flow_has_sock(in->net, f)) {
		/* look again after another timeout */
		f->gc_next = jiffies + limit;
		return false;
	}
	return true;
}

/* A share of the buckets per run, resuming where the last run stopped. */
static void incnn_flows_gc(struct work_struct *work)
{
	struct incnn_flow_table *t = container_of(to_delayed_work(work),
						  struct incnn_flow_table, gc);
	struct incnn_net *in = t->owner;
	struct incnn_config *cfg;
	unsigned long idle, close;
	struct hlist_node *tmp;
	struct incnn_flow *f;
	u32 i, b, expired = 0;

	rcu_read_lock();
	cfg = rcu_dereference(in->cfg);
	idle = (unsigned long)cfg->idle_timeout * HZ;
	close = (unsigned long)cfg->close_timeout * HZ;
	rcu_read_unlock();

	for (i = 0; i < INCNN_GC_BUCKETS; i++) {
		b = t->gc_pos;
		t->gc_pos = (b + 1) % ARRAY_SIZE(t->buckets);
		if (hlist_empty(&t->buckets[b]))
			continue;
		spin_lock_bh(&t->lock);
		hlist_for_each_entry_safe(f, tmp, &t->buckets[b], node) {
			if (flow_expired(in, f, idle, close)) {
				flow_del(t, f);
				expired++;
			}
		}
		spin_unlock_bh(&t->lock);
	}
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
	t->seed = get_random_u32();
	INIT_LIST_HEAD(&t->embryo);
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
