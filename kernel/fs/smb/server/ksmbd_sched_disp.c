// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The dispatcher of ksmbd's BPF scheduling hook (one per attachment).
 *
 * Model (Documentation/dispatch.rst has the full story):
 *  - A client is a class id, plus the peer address when the class word
 *    has PER_PEER.  Connections are bound to their client at their first
 *    request (and again when another program classified them); the
 *    client lives while a connection, a request or the round holds it,
 *    so no request allocates anything.  Clients are in an rhashtable
 *    (random seed, resized as it grows).
 *  - Fair by cost: deficit round robin (RFC 8290, fq_codel) with a quantum
 *    in bytes, KSMBD_SCHED_QUANTUM times the class weight.  A request
 *    costs the bytes it reads or writes (all PDUs of a compound), at
 *    least KSMBD_SCHED_COST_MIN.
 *  - Sparse clients first: a client that had nothing waiting joins the
 *    "new" list with a full quantum and is served ahead of the "old"
 *    (backlogged) ones until that quantum is used.
 *  - A slot is for running work: at most max_inflight data requests hold
 *    one.  A request gives it back when it finishes, and as soon as it
 *    waits for another party (oplock and lease break acknowledgments,
 *    going async, its connection's other reply, a client that does not
 *    read its socket): ksmbd_sched_wait().
 *  - The default budget adapts to the storage (TCP Vegas's rule, in
 *    requests): it shrinks while its requests queue inside the storage
 *    instead of running there, and grows while they do not.
 *  - Stall guard: when all slots are held and none was given back for
 *    KSMBD_SCHED_STALL_MS while requests wait, one more is admitted.
 *  - Watchdog: when the round has not reached the client of the oldest
 *    waiting request for KSMBD_SCHED_WATCHDOG_MS (nor has that request
 *    waited less), the dispatcher is in bypass: every request takes the
 *    flat path, until the program is replaced.
 *  - Bounded: a client with KSMBD_SCHED_CLIENT_QUEUED_MAX requests or
 *    KSMBD_SCHED_CLIENT_QBYTES_MAX bytes waiting stops its connections'
 *    receivers; requests of a connection going away are dropped.
 *
 * Locking: d->lock protects the lists, the table, the counters and every
 * client's state; it is taken once when a data request is queued and
 * once when it finishes (once more if it waits).  It is never held across
 * a BPF call or a queue_work() of a request.
 */

#include <linux/error-injection.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/rhashtable.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "glob.h"
#include "connection.h"
#include "ksmbd_work.h"
#include "ksmbd_sched.h"
#include "ksmbd_sched_disp.h"
#include "ksmbd_sched_trace.h"

/* Wait histogram: bucket i counts waits in [2^(i-1), 2^i) microseconds. */
#define KSMBD_SCHED_WAIT_BUCKETS	26

/**
 * struct ksmbd_sched_cstats - dispatch counters of one class
 * @dispatched: data requests dispatched
 * @bypassed:   control requests, run without waiting
 * @bytes:      READ/WRITE bytes requested by dispatched requests
 * @wait_ns:    sum of their waits in the dispatcher, ns
 * @hist:       waits, log2 buckets of microseconds
 */
struct ksmbd_sched_cstats {
	u64 dispatched;
	atomic64_t bypassed;
	u64 bytes;
	u64 wait_ns;
	u64 hist[KSMBD_SCHED_WAIT_BUCKETS];
};

/**
 * struct ksmbd_sched_client_key - what makes a client
 * @addr:     peer address when its class is PER_PEER, else zero
 * @class_id: class id
 */
struct ksmbd_sched_client_key {
	u8 addr[16];
	u32 class_id;
};

/**
 * struct ksmbd_sched_client - a client of the dispatcher
 * @node:       in ksmbd_sched_disp::clients
 * @key:        its key
 * @all:        on ksmbd_sched_disp::all (the clients listing)
 * @flow:       on the new or the old list while in the round, else empty
 * @data:       its waiting requests, FIFO
 * @stats:      counters of its class
 * @wq:         receivers of its connections waiting for room (cap)
 * @deficit:    bytes it may still be served in this round (DRR)
 * @turn_ns:    last time the round reached it within the budget: a
 *              request taken for a slot, or a quantum given (the watchdog)
 * @qbytes:     bytes of its waiting messages
 * @dispatched: requests dispatched
 * @bytes:      their READ/WRITE bytes
 * @id:         its number in the clients listing
 * @class_word: class word of the connection that bound it last
 * @quantum:    KSMBD_SCHED_QUANTUM times its weight
 * @queued:     length of @data
 * @inflight:   its requests holding a slot
 * @conns:      connections bound to it
 * @waiters:    receivers waiting on @wq
 * @refs:       connections + tracked requests + being in the round
 * @rcu:        frees it after table lookups
 */
struct ksmbd_sched_client {
	struct rhash_head node;
	struct ksmbd_sched_client_key key;
	struct list_head all;
	struct list_head flow;
	struct list_head data;
	struct ksmbd_sched_cstats *stats;
	wait_queue_head_t wq;
	s64 deficit;
	u64 turn_ns;
	u64 qbytes;
	u64 dispatched;
	u64 bytes;
	u32 id;
	u32 class_word;
	u32 quantum;
	u32 queued;
	u32 inflight;
	u32 conns;
	u32 waiters;
	u32 refs;
	struct rcu_head rcu;
};

/**
 * struct ksmbd_disp_budget - the adaptive default budget (max_inflight 0)
 * @win_start_ns:  when this window began: only requests that took their
 *                 slot since then are its samples
 * @win_min_ns:    shortest slot time of a sample of this window, ns
 * @base_ns:       the storage's service time without a queue: the last
 *                 probe window's minimum, or a shorter window minimum
 *                 since, ns (0: not measured yet)
 * @base_stamp_ns: when @base_ns was measured
 * @changes:       times the budget changed
 * @min:           smallest budget
 * @max:           largest budget, and the first one
 * @win_n:         samples of this window
 * @probe_ret:     the budget to go back to after a probe window, or 0
 * @on:            the budget adapts (else it is the program's)
 * @busy:          requests waited for a slot during this window
 */
struct ksmbd_disp_budget {
	u64 win_start_ns;
	u64 win_min_ns;
	u64 base_ns;
	u64 base_stamp_ns;
	u64 changes;
	u32 min;
	u32 max;
	u32 win_n;
	u32 probe_ret;
	bool on;
	bool busy;
};

/**
 * struct ksmbd_sched_disp - the dispatcher of one attachment
 * @lock:          protects everything below but @ref and @guard
 * @new_flows:     clients that had nothing waiting, until they used a quantum
 * @old_flows:     the other clients in the round
 * @age:           all waiting requests, oldest first
 * @all:           all clients
 * @clients:       the same clients, by key
 * @classes:       class id -> struct ksmbd_sched_cstats
 * @guard:         stall guard and watchdog, armed while requests wait
 * @progress_ns:   last time a slot was given back or taken
 * @alloc_fail:    requests run at once because memory was short
 * @stall_admits:  requests admitted by the stall guard
 * @wait_releases: slots given back because their request waits
 * @dropped:       requests of a connection going away, not run
 * @throttled:     times a receiver waited for room in its client's queue
 * @bypass_wait_ns: the wait that made the watchdog bypass the dispatcher,
 *                 as the ksmbd_sched_bypass tracepoint's wait_ns
 * @budget:        how the default budget adapts
 * @inflight:      data requests holding a slot
 * @max_inflight:  slots, the budget in force
 * @queued:        data requests waiting
 * @nactive:       clients with waiting requests
 * @nclients:      clients
 * @next_id:       id of the next client
 * @dead:          detached: nothing waits any more
 * @bypass:        the watchdog fired: every request takes the flat path
 * @guard_armed:   @guard is queued or running
 * @ref:           one for the attachment, one per request it tracks, one
 *                 per bound connection
 * @netns_ino:     namespace, for the tracepoints
 * @rcu:           frees it after lockless readers of the attachment
 */
struct ksmbd_sched_disp {
	spinlock_t lock; /* see above */
	struct list_head new_flows;
	struct list_head old_flows;
	struct list_head age;
	struct list_head all;
	struct rhashtable clients;
	struct xarray classes;
	struct delayed_work guard;
	u64 progress_ns;
	u64 alloc_fail;
	u64 stall_admits;
	u64 wait_releases;
	u64 dropped;
	u64 throttled;
	u64 bypass_wait_ns;
	struct ksmbd_disp_budget budget;
	u32 inflight;
	u32 max_inflight;
	u32 queued;
	u32 nactive;
	u32 nclients;
	u32 next_id;
	bool dead;
	bool bypass;
	bool guard_armed;
	refcount_t ref;
	u32 netns_ino;
	struct rcu_head rcu;
};

static const struct rhashtable_params ksmbd_disp_client_params = {
	.key_len = sizeof(struct ksmbd_sched_client_key),
	.key_offset = offsetof(struct ksmbd_sched_client, key),
	.head_offset = offsetof(struct ksmbd_sched_client, node),
	.automatic_shrinking = true,
};

static u32 ksmbd_disp_default_inflight(void)
{
	return clamp(KSMBD_SCHED_INFLIGHT_PER_CPU * num_possible_cpus(),
		     (unsigned int)KSMBD_SCHED_INFLIGHT_MIN,
		     (unsigned int)KSMBD_SCHED_INFLIGHT_MAX);
}

/* Caller holds d->lock (or owns @d).  A new window of samples from @now. */
static void ksmbd_disp_budget_window(struct ksmbd_disp_budget *b, u64 now)
{
	b->win_start_ns = now;
	b->win_min_ns = U64_MAX;
	b->win_n = 0;
	b->busy = false;
}

/*
 * Caller holds d->lock (or owns @d).  The budget of an attached or
 * replacing program: its own, or the adaptive default, which starts at
 * its largest (a lone client is not held back before the budget has
 * learnt) and keeps what it learnt across a replace.
 */
static void ksmbd_disp_budget_set(struct ksmbd_sched_disp *d,
				  u32 max_inflight, u64 now)
{
	struct ksmbd_disp_budget *b = &d->budget;

	if (!max_inflight && b->on)
		return;
	b->on = !max_inflight;
	b->max = ksmbd_disp_default_inflight();
	b->min = min(max(KSMBD_SCHED_ADAPT_MIN_PER_CPU * num_possible_cpus(),
			 (unsigned int)KSMBD_SCHED_ADAPT_MIN), b->max);
	b->base_ns = 0;
	b->probe_ret = 0;
	ksmbd_disp_budget_window(b, now);
	d->max_inflight = max_inflight ?: b->max;
}

/*
 * Caller holds d->lock.  @work held its slot from dispatch (stime_ns)
 * until it finished, @now: one sample of the adaptive budget if it read
 * or wrote data (a CREATE or a QUERY_INFO is served in microseconds, not
 * by the storage's queue, and would set base far below a READ's).
 *
 * TCP Vegas's rule (Brakmo and Peterson, 1995), in requests: while the
 * budget's requests are in flight back to back, the shortest slot time of
 * a window (rmin) against the storage's own service time (base) says how
 * many of them queue inside the storage rather than run there:
 * q = budget * (1 - base / rmin).  Once per window (as many samples as
 * the budget, at least KSMBD_SCHED_ADAPT_WINDOW) the budget grows by one
 * while q < KSMBD_SCHED_ADAPT_ALPHA and shrinks by half the excess while
 * q > KSMBD_SCHED_ADAPT_BETA, between budget.min and budget.max; only in
 * a window where requests waited for a slot: else the budget limits
 * nothing and the sample says nothing about it.  base is measured by a
 * probe: one window at the smallest budget (BBR's ProbeRTT), after which
 * the budget goes back to where it was; at the first window where
 * requests waited, then every KSMBD_SCHED_ADAPT_PROBE_MS, so that it
 * follows storage that became slower.  A shorter window minimum (faster
 * storage) replaces it at once.  q, the requests in the storage's queue
 * rather than in its service, is what a sparse client's request waits
 * behind once the dispatcher has sent it: this rule keeps it at a few
 * (Documentation/dispatch.rst, "The budget").  q < budget, so the
 * budget never falls below 1 before it is clamped.
 */
static void ksmbd_disp_budget_sample(struct ksmbd_sched_disp *d,
				     struct ksmbd_work *work, u64 now)
{
	struct ksmbd_disp_budget *b = &d->budget;
	u32 n = d->max_inflight;
	u64 q;

	if (!b->on || !work->sched.bytes ||
	    work->sched.stime_ns < b->win_start_ns)
		return;
	b->win_min_ns = min(b->win_min_ns, now - work->sched.stime_ns);
	if (d->queued)
		b->busy = true;
	if (++b->win_n < max_t(u32, n, KSMBD_SCHED_ADAPT_WINDOW))
		return;
	if (b->probe_ret) {
		b->base_ns = b->win_min_ns;
		b->base_stamp_ns = now;
		n = b->probe_ret;
		b->probe_ret = 0;
	} else if (b->base_ns && b->win_min_ns < b->base_ns) {
		b->base_ns = b->win_min_ns;
		b->base_stamp_ns = now;
	} else if (b->busy) {
		if (b->base_ns) {
			q = div64_u64((u64)n * (b->win_min_ns - b->base_ns),
				      b->win_min_ns);
			if (q > KSMBD_SCHED_ADAPT_BETA)
				n -= max_t(u32, (q - KSMBD_SCHED_ADAPT_BETA) / 2,
					   1);
			else if (q < KSMBD_SCHED_ADAPT_ALPHA)
				n++;
		}
		if (!b->base_ns || now - b->base_stamp_ns >=
		    (u64)KSMBD_SCHED_ADAPT_PROBE_MS * NSEC_PER_MSEC) {
			b->probe_ret = clamp(n, b->min, b->max);
			n = b->min;
		}
	}
	n = clamp(n, b->min, b->max);
	if (n != d->max_inflight) {
		d->max_inflight = n;
		b->changes++;
	}
	ksmbd_disp_budget_window(b, now);
}

static void ksmbd_disp_guard_fn(struct work_struct *wk);

/**
 * ksmbd_disp_alloc() - a new dispatcher
 * @netns_ino:    its namespace's inode number, for the tracepoints
 * @max_inflight: its budget, 0 for the default
 *
 * Context: process, may sleep.
 * Return: the dispatcher with one reference, or NULL without memory.
 */
struct ksmbd_sched_disp *ksmbd_disp_alloc(u32 netns_ino, u32 max_inflight)
{
	struct ksmbd_sched_disp *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return NULL;
	if (rhashtable_init(&d->clients, &ksmbd_disp_client_params)) {
		kfree(d);
		return NULL;
	}
	spin_lock_init(&d->lock);
	INIT_LIST_HEAD(&d->new_flows);
	INIT_LIST_HEAD(&d->old_flows);
	INIT_LIST_HEAD(&d->age);
	INIT_LIST_HEAD(&d->all);
	xa_init(&d->classes);
	INIT_DELAYED_WORK(&d->guard, ksmbd_disp_guard_fn);
	ksmbd_disp_budget_set(d, max_inflight, ktime_get_ns());
	refcount_set(&d->ref, 1);
	d->netns_ino = netns_ino;
	return d;
}

/**
 * ksmbd_disp_tryget() - take a reference on a dispatcher found under RCU
 * @d: the dispatcher
 *
 * Return: false when its last reference is already gone.
 */
bool ksmbd_disp_tryget(struct ksmbd_sched_disp *d)
{
	return refcount_inc_not_zero(&d->ref);
}

/**
 * ksmbd_disp_put() - drop a reference on a dispatcher
 * @d: the dispatcher
 *
 * The last one frees it.  Context: process (the client table's teardown
 * may sleep); never under d->lock.
 */
void ksmbd_disp_put(struct ksmbd_sched_disp *d)
{
	struct ksmbd_sched_cstats *cs;
	unsigned long id;

	if (!refcount_dec_and_test(&d->ref))
		return;
	WARN_ON_ONCE(!list_empty(&d->all));
	rhashtable_destroy(&d->clients);
	xa_for_each(&d->classes, id, cs)
		kfree(cs);
	xa_destroy(&d->classes);
	/* a queueing thread may still hold @d from the attachment, under RCU */
	kfree_rcu(d, rcu);
}

/* Caller holds d->lock. */
static struct ksmbd_sched_cstats *
ksmbd_disp_class_stats(struct ksmbd_sched_disp *d, u32 class_word)
{
	unsigned long id = KSMBD_SCHED_CLASS_ID_OF(class_word);
	struct ksmbd_sched_cstats *cs = xa_load(&d->classes, id);

	if (cs)
		return cs;
	cs = kzalloc(sizeof(*cs), GFP_ATOMIC);
	if (!cs)
		return NULL;
	if (xa_err(xa_store(&d->classes, id, cs, GFP_ATOMIC))) {
		kfree(cs);
		return NULL;
	}
	return cs;
}

/* Caller holds d->lock. */
static void ksmbd_disp_client_put(struct ksmbd_sched_disp *d,
				  struct ksmbd_sched_client *c)
{
	if (--c->refs)
		return;
	rhashtable_remove_fast(&d->clients, &c->node,
			       ksmbd_disp_client_params);
	list_del(&c->all);
	d->nclients--;
	kfree_rcu(c, rcu);
}

static bool ksmbd_disp_client_full(const struct ksmbd_sched_client *c)
{
	return READ_ONCE(c->queued) >= KSMBD_SCHED_CLIENT_QUEUED_MAX ||
	       READ_ONCE(c->qbytes) >= KSMBD_SCHED_CLIENT_QBYTES_MAX;
}

/* Caller holds d->lock.  @work joins its client's queue. */
static void ksmbd_disp_enqueue(struct ksmbd_sched_disp *d,
			       struct ksmbd_sched_client *c,
			       struct ksmbd_work *work)
{
	list_add_tail(&work->sched.entry, &c->data);
	list_add_tail(&work->sched.age, &d->age);
	work->sched.client = c;
	c->refs++;
	if (!c->queued)
		d->nactive++;
	WRITE_ONCE(c->queued, c->queued + 1);
	WRITE_ONCE(c->qbytes, c->qbytes + work->sched.mem);
	d->queued++;
	if (list_empty(&c->flow)) {
		/*
		 * Sparse: served first, with a full quantum (RFC 8290 4.2).
		 * A client still in debt from a contested request that cost
		 * more than its deficit is not sparse: it joins the end of the
		 * round and pays the debt first.  Else a client that idles
		 * between large requests (a 1 MiB reader whose own machine is
		 * slow to send the next) would have each of them for the
		 * price of one quantum.
		 */
		if (c->deficit < 0) {
			list_add_tail(&c->flow, &d->old_flows);
		} else {
			list_add_tail(&c->flow, &d->new_flows);
			c->deficit = c->quantum;
		}
		c->refs++;
	}
}

/* Caller holds d->lock.  @work leaves its client's queue. */
static void ksmbd_disp_dequeue(struct ksmbd_sched_disp *d,
			       struct ksmbd_sched_client *c,
			       struct ksmbd_work *work)
{
	list_del_init(&work->sched.entry);
	list_del_init(&work->sched.age);
	WRITE_ONCE(c->queued, c->queued - 1);
	if (!c->queued)
		d->nactive--;
	WRITE_ONCE(c->qbytes, c->qbytes - work->sched.mem);
	d->queued--;
	if (c->waiters && !ksmbd_disp_client_full(c))
		wake_up(&c->wq);
}

/*
 * How a request leaves the queue: for a slot by the round, within the
 * budget; for a slot above the budget, by the stall guard; or without a
 * slot (detach, bypass).  Only the first is a turn for the watchdog.
 */
enum ksmbd_disp_how {
	KSMBD_DISP_ROUND,
	KSMBD_DISP_STALL,
	KSMBD_DISP_FLAT,
};

/*
 * Caller holds d->lock.  The request to serve next, by deficit round
 * robin over the new list, then the old one (RFC 8290 4.2, fq_codel's
 * dequeue): a client whose deficit is used up gets a quantum more and
 * goes to the end of the old list.  A client found empty stays in the
 * round while it has requests in flight: it is not sparse, its next
 * request continues its turn (a backlogged client whose queue runs dry
 * for a moment, because its own client machine is slow to send, must not
 * come back as new with a fresh quantum).  Otherwise it leaves the round
 * (from the new list it goes to the old one first, so that it cannot
 * come back as new at once).  Every client the round reaches has its
 * turn_ns set to @turn_ns, unless that is 0 (the watchdog's view).
 */
static struct ksmbd_work *ksmbd_disp_next(struct ksmbd_sched_disp *d,
					  u64 turn_ns)
{
	struct ksmbd_sched_client *c;
	struct list_head *head;
	struct ksmbd_work *work;

	/*
	 * Only contested service is charged: with one client waiting, its
	 * oldest request (the head of the age list) goes without touching
	 * deficits or the round.  Capacity nobody else asked for neither puts
	 * it in debt nor earns it credit for the next contested round (as a
	 * flow's virtual start time in start-time fair queueing).
	 */
	if (d->nactive == 1) {
		work = list_first_entry(&d->age, struct ksmbd_work, sched.age);
		if (turn_ns)
			work->sched.client->turn_ns = turn_ns;
		return work;
	}

	while (d->queued) {
		head = &d->new_flows;
		if (list_empty(head))
			head = &d->old_flows;
		if (WARN_ON_ONCE(list_empty(head)))
			return NULL;
		c = list_first_entry(head, struct ksmbd_sched_client, flow);
		if (turn_ns)
			c->turn_ns = turn_ns;
		if (c->deficit <= 0) {
			c->deficit += c->quantum;
			list_move_tail(&c->flow, &d->old_flows);
			continue;
		}
		if (list_empty(&c->data)) {
			if (c->inflight ||
			    (head == &d->new_flows && !list_empty(&d->old_flows))) {
				list_move_tail(&c->flow, &d->old_flows);
			} else {
				list_del_init(&c->flow);
				ksmbd_disp_client_put(d, c);
			}
			continue;
		}
		work = list_first_entry(&c->data, struct ksmbd_work,
					sched.entry);
		c->deficit -= work->sched.cost;
		return work;
	}
	return NULL;
}

static void ksmbd_disp_account(struct ksmbd_sched_client *c,
			       struct ksmbd_work *work, u64 wait)
{
	struct ksmbd_sched_cstats *cs = c->stats;
	u64 us = wait / NSEC_PER_USEC;

	c->dispatched++;
	c->bytes += work->sched.bytes;
	cs->dispatched++;
	cs->bytes += work->sched.bytes;
	cs->wait_ns += wait;
	cs->hist[min_t(u32, us ? ilog2(us) + 1 : 0,
		       KSMBD_SCHED_WAIT_BUCKETS - 1)]++;
}

static bool ksmbd_disp_conn_gone(struct ksmbd_conn *conn)
{
	return ksmbd_conn_exiting(conn) || ksmbd_conn_releasing(conn);
}

/*
 * Caller holds d->lock.  Take the next request onto @batch, @how (with a
 * slot, or outside the budget: detach, bypass).  A request of a
 * connection going away is dropped and refunded.
 * Return: false when nothing waits.
 */
static bool ksmbd_disp_take(struct ksmbd_sched_disp *d,
			    struct list_head *batch, u64 now,
			    enum ksmbd_disp_how how)
{
	struct ksmbd_sched_client *c;
	struct ksmbd_work *work;

	work = ksmbd_disp_next(d, how == KSMBD_DISP_ROUND ? now : 0);
	if (!work)
		return false;
	c = work->sched.client;
	work->sched.clients = min_t(u32, d->nactive, U16_MAX);
	ksmbd_disp_dequeue(d, c, work);
	if (unlikely(ksmbd_disp_conn_gone(work->conn))) {
		work->sched.dropped = true;
		if (work->sched.clients > 1)
			c->deficit += work->sched.cost;
		d->dropped++;
	} else if (how != KSMBD_DISP_FLAT) {
		work->sched.slot = true;
		work->sched.stime_ns = now;
		d->inflight++;
		c->inflight++;
		d->progress_ns = now;
		ksmbd_disp_account(c, work, now - work->sched.qtime_ns);
	} else {
		ksmbd_disp_account(c, work, now - work->sched.qtime_ns);
	}
	list_add_tail(&work->sched.entry, batch);
	return true;
}

/* Caller holds d->lock.  Fill the free slots. */
static void ksmbd_disp_pick(struct ksmbd_sched_disp *d,
			    struct list_head *batch, u64 now)
{
	while (d->inflight < d->max_inflight &&
	       ksmbd_disp_take(d, batch, now, KSMBD_DISP_ROUND))
		;
}

/* Caller holds d->lock.  Everything waiting goes, without slots. */
static void ksmbd_disp_drain(struct ksmbd_sched_disp *d,
			     struct list_head *batch, u64 now)
{
	struct ksmbd_sched_client *c;

	while (ksmbd_disp_take(d, batch, now, KSMBD_DISP_FLAT))
		;
	list_for_each_entry(c, &d->all, all)
		if (c->waiters)
			wake_up(&c->wq);
}

static void ksmbd_disp_trace(struct ksmbd_sched_disp *d,
			     struct ksmbd_work *work,
			     const struct ksmbd_sched_client *c, u64 now)
{
	static const u8 any[16];

	trace_ksmbd_sched_dispatch(d->netns_ino, work->sched.class_word,
				   c ? c->key.addr : any, work->sched.command,
				   work->sched.verdict, work->sched.bytes,
				   work->sched.slot, work->sched.clients,
				   now - work->sched.qtime_ns, work->sched.cost,
				   work->sched.dropped);
}

/* Queue what was taken, after d->lock is dropped. */
static void ksmbd_disp_run_batch(struct ksmbd_sched_disp *d,
				 struct list_head *batch, u64 now)
{
	struct ksmbd_work *work, *tmp;

	list_for_each_entry_safe(work, tmp, batch, sched.entry) {
		list_del_init(&work->sched.entry);
		if (trace_ksmbd_sched_dispatch_enabled())
			ksmbd_disp_trace(d, work, work->sched.client, now);
		ksmbd_sched_run(work);
	}
}

/* Caller holds d->lock.  Keep the guard running while requests wait. */
static void ksmbd_disp_arm_guard(struct ksmbd_sched_disp *d)
{
	if (d->guard_armed || !d->queued || d->dead || d->bypass)
		return;
	d->guard_armed = true;
	queue_delayed_work(system_wq, &d->guard,
			   msecs_to_jiffies(KSMBD_SCHED_STALL_MS / 2));
}

/*
 * The stall guard and the watchdog, every KSMBD_SCHED_STALL_MS / 2 while
 * requests wait.  The guard is the workqueue rescuer's idea: if every slot
 * has been held for KSMBD_SCHED_STALL_MS with no slot given back, the
 * holders are blocked on something the dispatcher does not know about;
 * admit one more so that the namespace makes progress.  The watchdog is
 * sched_ext's: the oldest waiting request's client not reached by the
 * round for KSMBD_SCHED_WATCHDOG_MS (and the request waiting as long)
 * means the dispatcher itself is broken; hand everything to the flat
 * path and stay out of the way until the program is replaced.  A
 * request's own wait is no such sign: on slow storage a fair round makes
 * the last of a large reader's requests wait several of its client's
 * turns.  Stall admits are not turns: a namespace that makes progress
 * only through them is stalled.  A client the round starves is caught
 * once its request is the oldest: every older one is served meanwhile.
 */
static void ksmbd_disp_guard_fn(struct work_struct *wk)
{
	struct ksmbd_sched_disp *d = container_of(to_delayed_work(wk),
						  struct ksmbd_sched_disp,
						  guard);
	u64 now = ktime_get_ns(), oldest = 0;
	struct ksmbd_work *work;
	bool bypass = false;
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	if (d->dead || d->bypass || !d->queued) {
		d->guard_armed = false;
		spin_unlock(&d->lock);
		return;
	}
	work = list_first_entry(&d->age, struct ksmbd_work, sched.age);
	oldest = now - max(work->sched.qtime_ns, work->sched.client->turn_ns);
	if (oldest >= (u64)KSMBD_SCHED_WATCHDOG_MS * NSEC_PER_MSEC) {
		d->bypass = true;
		d->bypass_wait_ns = oldest;
		d->guard_armed = false;
		bypass = true;
		ksmbd_disp_drain(d, &batch, now);
	} else {
		if (d->inflight >= d->max_inflight &&
		    now - d->progress_ns >=
		    (u64)KSMBD_SCHED_STALL_MS * NSEC_PER_MSEC &&
		    ksmbd_disp_take(d, &batch, now, KSMBD_DISP_STALL))
			d->stall_admits++;
		queue_delayed_work(system_wq, &d->guard,
				   msecs_to_jiffies(KSMBD_SCHED_STALL_MS / 2));
	}
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
	if (bypass) {
		pr_warn("ksmbd: sched: a client waited %llu ms for its turn in the dispatcher (netns %u): bypassed until the program is replaced\n",
			oldest / NSEC_PER_MSEC, d->netns_ino);
		trace_ksmbd_sched_bypass(d->netns_ino, "watchdog", oldest);
	}
}

/**
 * ksmbd_disp_kill() - detach a dispatcher: nothing waits any more
 * @d: the dispatcher; the attachment's reference is dropped
 *
 * Every waiting request is handed to its workqueue, in round-robin
 * order, and keeps its reference until it has run.  Clients stay while
 * connections are bound to them.  Context: process, may sleep; the
 * caller holds ksmbd_sched_mutex.
 */
void ksmbd_disp_kill(struct ksmbd_sched_disp *d)
{
	struct ksmbd_sched_client *c, *tmp;
	u64 now = ktime_get_ns();
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	d->dead = true;
	ksmbd_disp_drain(d, &batch, now);
	list_splice_init(&d->new_flows, &d->old_flows);
	list_for_each_entry_safe(c, tmp, &d->old_flows, flow) {
		list_del_init(&c->flow);
		ksmbd_disp_client_put(d, c);
	}
	spin_unlock(&d->lock);
	cancel_delayed_work_sync(&d->guard);
	ksmbd_disp_run_batch(d, &batch, now);
	ksmbd_disp_put(d);
}

/**
 * ksmbd_disp_update() - a replacing program's budget; re-arm the watchdog
 * @d:            the dispatcher
 * @max_inflight: the new program's budget, 0 for the default
 *
 * A larger budget dispatches waiting requests at once.  A dispatcher the
 * watchdog bypassed takes requests again.
 */
void ksmbd_disp_update(struct ksmbd_sched_disp *d, u32 max_inflight)
{
	u64 now = ktime_get_ns();
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	ksmbd_disp_budget_set(d, max_inflight, now);
	d->bypass = false;
	ksmbd_disp_pick(d, &batch, now);
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
}

/**
 * ksmbd_disp_conn_bind() - bind a connection to its client in @d
 * @d:          the dispatcher, referenced by the caller
 * @conn:       the connection, not bound (ksmbd_disp_conn_unbind())
 * @class_word: its class word
 *
 * Finds or creates the client of (@class_word's id, peer if PER_PEER) and
 * takes a reference on it and on @d for @conn.  Context: the connection's
 * receiver thread, may sleep.  On an error the connection's requests
 * run at once, outside the budget (counted in alloc_fail), and the next
 * one tries again; fail_function may inject -ENOMEM here to test that.
 *
 * Return: 0, -ENOLINK if @d is detached, -ENOMEM.
 */
int ksmbd_disp_conn_bind(struct ksmbd_sched_disp *d, struct ksmbd_conn *conn,
			 u32 class_word)
{
	struct ksmbd_sched_client_key key = {
		.class_id = KSMBD_SCHED_CLASS_ID_OF(class_word),
	};
	struct ksmbd_sched_client *c, *nc = NULL;
	u32 weight = KSMBD_SCHED_CLASS_WEIGHT_OF(class_word) ?: 1;
	int err = 0;

	if (class_word & KSMBD_SCHED_CLASS_PER_PEER)
		memcpy(key.addr, conn->sched.ctx.peer_addr, 16);

	spin_lock(&d->lock);
	c = rhashtable_lookup_fast(&d->clients, &key, ksmbd_disp_client_params);
	if (!c && !d->dead) {
		spin_unlock(&d->lock);
		nc = kzalloc(sizeof(*nc), KSMBD_DEFAULT_GFP);
		if (!nc)
			return -ENOMEM;
		nc->key = key;
		INIT_LIST_HEAD(&nc->flow);
		INIT_LIST_HEAD(&nc->data);
		init_waitqueue_head(&nc->wq);
		spin_lock(&d->lock);
		c = rhashtable_lookup_fast(&d->clients, &key,
					   ksmbd_disp_client_params);
	}
	if (d->dead) {
		err = -ENOLINK;
		goto out;
	}
	if (!c) {
		nc->stats = ksmbd_disp_class_stats(d, class_word);
		if (!nc->stats ||
		    rhashtable_insert_fast(&d->clients, &nc->node,
					   ksmbd_disp_client_params)) {
			d->alloc_fail++;
			err = -ENOMEM;
			goto out;
		}
		nc->id = ++d->next_id;
		list_add_tail(&nc->all, &d->all);
		d->nclients++;
		c = nc;
		nc = NULL;
	}
	c->refs++;
	c->conns++;
	c->class_word = class_word;
	c->quantum = KSMBD_SCHED_QUANTUM * weight;
	refcount_inc(&d->ref);
	conn->sched.disp = d;
	conn->sched.client = c;
out:
	spin_unlock(&d->lock);
	kfree(nc);
	return err;
}
ALLOW_ERROR_INJECTION(ksmbd_disp_conn_bind, ERRNO);

/**
 * ksmbd_disp_conn_unbind() - drop a connection's client
 * @conn: the connection
 *
 * Context: its receiver thread, or when it is freed.
 */
void ksmbd_disp_conn_unbind(struct ksmbd_conn *conn)
{
	struct ksmbd_sched_client *c = conn->sched.client;
	struct ksmbd_sched_disp *d = conn->sched.disp;

	if (!d)
		return;
	spin_lock(&d->lock);
	c->conns--;
	ksmbd_disp_client_put(d, c);
	spin_unlock(&d->lock);
	conn->sched.client = NULL;
	conn->sched.disp = NULL;
	ksmbd_disp_put(d);
}

/**
 * ksmbd_disp_conn_stop() - drop the waiting requests of a connection
 * @conn: the connection, being released (its receiver has stopped)
 *
 * They are handed to their workqueue marked dropped: freed, not run, so
 * that the connection's teardown does not wait for their turn.
 */
void ksmbd_disp_conn_stop(struct ksmbd_conn *conn)
{
	struct ksmbd_sched_client *c = conn->sched.client;
	struct ksmbd_sched_disp *d = conn->sched.disp;
	struct ksmbd_work *work, *tmp;
	u64 now = ktime_get_ns();
	LIST_HEAD(batch);

	if (!d)
		return;
	spin_lock(&d->lock);
	list_for_each_entry_safe(work, tmp, &c->data, sched.entry) {
		if (work->conn != conn)
			continue;
		ksmbd_disp_dequeue(d, c, work);
		work->sched.dropped = true;
		d->dropped++;
		list_add_tail(&work->sched.entry, &batch);
	}
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
}

static bool ksmbd_disp_has_room(struct ksmbd_sched_disp *d,
				struct ksmbd_sched_client *c)
{
	return !ksmbd_disp_client_full(c) || READ_ONCE(d->dead) ||
	       READ_ONCE(d->bypass);
}

/*
 * Back-pressure: the receiver of a client over its cap waits until the
 * client's queue has room, so that it stops reading its socket (TCP and
 * SMB credits then push back on that connection only).
 */
static void ksmbd_disp_throttle(struct ksmbd_sched_disp *d,
				struct ksmbd_sched_client *c,
				struct ksmbd_conn *conn)
{
	long ret;

	do {
		ret = wait_event_interruptible_timeout(c->wq,
						       ksmbd_disp_has_room(d, c),
						       HZ);
	} while (!ret && ksmbd_conn_alive(conn));
	spin_lock(&d->lock);
	c->waiters--;
	spin_unlock(&d->lock);
}

/**
 * ksmbd_disp_queue() - a received request enters the dispatcher
 * @d:       the dispatcher; the caller's reference goes to @work
 * @work:    the request, with sched.verdict, bytes, cost, mem, class_word
 *           and command set
 * @control: it must not wait (ksmbd_sched.c: every PDU a control command)
 *
 * A control request (or any request when @d is detached or bypassed, or
 * its connection has no client) is queued on its workqueue at once.  A
 * data request joins its client's queue and free slots are filled in
 * round-robin order.  Context: the connection's receiver thread; it
 * waits while its client is over its cap.
 */
void ksmbd_disp_queue(struct ksmbd_sched_disp *d, struct ksmbd_work *work,
		      bool control)
{
	struct ksmbd_sched_client *c = NULL;
	u64 now = ktime_get_ns();
	bool full = false;
	LIST_HEAD(batch);

	work->sched.qtime_ns = now;
	if (work->conn->sched.disp == d)
		c = work->conn->sched.client;
	if (control || work->conn->sched.disp != d || READ_ONCE(d->dead) ||
	    READ_ONCE(d->bypass))
		goto flat;

	spin_lock(&d->lock);
	if (d->dead || d->bypass) {
		spin_unlock(&d->lock);
		goto flat;
	}
	work->sched.disp = d;
	ksmbd_disp_enqueue(d, c, work);
	ksmbd_disp_pick(d, &batch, now);
	ksmbd_disp_arm_guard(d);
	if (ksmbd_disp_client_full(c)) {
		full = true;
		c->waiters++;
		d->throttled++;
	}
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
	if (full)
		ksmbd_disp_throttle(d, c, work->conn);
	return;

flat:
	if (control && c) {
		atomic64_inc(&c->stats->bypassed);
	} else if (!control && !c) {
		spin_lock(&d->lock);
		d->alloc_fail++;
		spin_unlock(&d->lock);
	}
	if (trace_ksmbd_sched_dispatch_enabled())
		ksmbd_disp_trace(d, work, control ? c : NULL, now);
	ksmbd_disp_put(d);
	ksmbd_sched_run(work);
}

/*
 * Caller holds d->lock.  Give back @work's slot, if it has one; @done: it
 * finished (a sample of the adaptive budget), else it waits.
 */
static void ksmbd_disp_put_slot(struct ksmbd_sched_disp *d,
				struct ksmbd_work *work,
				struct list_head *batch, u64 now, bool done)
{
	struct ksmbd_sched_client *c = work->sched.client;

	if (!work->sched.slot)
		return;
	work->sched.slot = false;
	d->inflight--;
	c->inflight--;
	d->progress_ns = now;
	if (done)
		ksmbd_disp_budget_sample(d, work, now);
	/* nothing waiting, nothing running: sparse again */
	if (!c->inflight && !c->queued && !list_empty(&c->flow)) {
		list_del_init(&c->flow);
		ksmbd_disp_client_put(d, c);
	}
	if (!d->dead && !d->bypass)
		ksmbd_disp_pick(d, batch, now);
}

/**
 * ksmbd_disp_release_slot() - @work stops counting against the budget
 * @work: a request the dispatcher tracks
 * @wait: it does so because it waits for another party (counted)
 *
 * The next waiting request is dispatched in its place.  Context: the
 * worker executing @work.
 */
void ksmbd_disp_release_slot(struct ksmbd_work *work, bool wait)
{
	struct ksmbd_sched_disp *d = work->sched.disp;
	u64 now = ktime_get_ns();
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	if (work->sched.slot && wait)
		d->wait_releases++;
	ksmbd_disp_put_slot(d, work, &batch, now, false);
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
}

/**
 * ksmbd_disp_work_done() - a tracked request finished
 * @work: the request, before it is freed
 *
 * Gives back its slot, drops its client and its dispatcher reference.
 * Context: the worker that ran it.
 */
void ksmbd_disp_work_done(struct ksmbd_work *work)
{
	struct ksmbd_sched_disp *d = work->sched.disp;
	u64 now = ktime_get_ns();
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	ksmbd_disp_put_slot(d, work, &batch, now, true);
	ksmbd_disp_client_put(d, work->sched.client);
	work->sched.client = NULL;
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
	work->sched.disp = NULL;
	ksmbd_disp_put(d);
}

/**
 * ksmbd_disp_show() - the dispatcher's lines of /proc/net/ksmbd_sched
 * @m: the seq_file
 * @d: the dispatcher
 *
 * "key: value" lines, then one "class:" line per class seen:
 *   class: ID dispatched N bypassed N bytes N wait_ns N hist H0,H1,...
 * where Hi counts waits in [2^(i-1), 2^i) us (H0: under 1 us).
 * Context: process; the caller holds ksmbd_sched_mutex.
 */
void ksmbd_disp_show(struct seq_file *m, struct ksmbd_sched_disp *d)
{
	struct ksmbd_sched_cstats *cs, snap;
	unsigned long id;
	int i;

	spin_lock(&d->lock);
	seq_printf(m, "max_inflight: %u\n", d->max_inflight);
	seq_printf(m, "budget: %s\n", d->budget.on ? "adaptive" : "fixed");
	seq_printf(m, "budget_min: %u\n",
		   d->budget.on ? d->budget.min : d->max_inflight);
	seq_printf(m, "budget_max: %u\n",
		   d->budget.on ? d->budget.max : d->max_inflight);
	seq_printf(m, "budget_base_ns: %llu\n", d->budget.base_ns);
	seq_printf(m, "budget_changes: %llu\n", d->budget.changes);
	seq_printf(m, "inflight: %u\n", d->inflight);
	seq_printf(m, "queued: %u\n", d->queued);
	seq_printf(m, "clients: %u\n", d->nactive);
	seq_printf(m, "alloc_fail: %llu\n", d->alloc_fail);
	seq_printf(m, "clients_known: %u\n", d->nclients);
	seq_printf(m, "quantum: %u\n", KSMBD_SCHED_QUANTUM);
	seq_printf(m, "cost_min: %u\n", KSMBD_SCHED_COST_MIN);
	seq_printf(m, "wait_releases: %llu\n", d->wait_releases);
	seq_printf(m, "stall_ms: %u\n", KSMBD_SCHED_STALL_MS);
	seq_printf(m, "stall_admits: %llu\n", d->stall_admits);
	seq_printf(m, "dropped: %llu\n", d->dropped);
	seq_printf(m, "throttled: %llu\n", d->throttled);
	seq_printf(m, "client_queued_max: %u\n", KSMBD_SCHED_CLIENT_QUEUED_MAX);
	seq_printf(m, "client_qbytes_max: %u\n", KSMBD_SCHED_CLIENT_QBYTES_MAX);
	seq_printf(m, "watchdog_ms: %u\n", KSMBD_SCHED_WATCHDOG_MS);
	seq_printf(m, "bypass: %d\n", d->bypass ? 1 : 0);
	seq_printf(m, "bypass_wait_ns: %llu\n", d->bypass_wait_ns);
	spin_unlock(&d->lock);

	xa_for_each(&d->classes, id, cs) {
		spin_lock(&d->lock);
		snap.dispatched = cs->dispatched;
		snap.bytes = cs->bytes;
		snap.wait_ns = cs->wait_ns;
		memcpy(snap.hist, cs->hist, sizeof(snap.hist));
		spin_unlock(&d->lock);
		seq_printf(m, "class: %lu dispatched %llu bypassed %lld bytes %llu wait_ns %llu hist ",
			   id, snap.dispatched, atomic64_read(&cs->bypassed),
			   snap.bytes, snap.wait_ns);
		for (i = 0; i < KSMBD_SCHED_WAIT_BUCKETS; i++)
			seq_printf(m, i ? ",%llu" : "%llu", snap.hist[i]);
		seq_putc(m, '\n');
	}
}

/**
 * ksmbd_disp_show_clients() - /proc/net/ksmbd_sched_clients
 * @m: the seq_file
 * @d: the dispatcher
 *
 * One line per client:
 *   client id=N class=N weight=N peer=ADDR|- conns=N queued=N inflight=N
 *   dispatched=N bytes=N deficit=N
 * Context: process; the caller holds ksmbd_sched_mutex.
 */
void ksmbd_disp_show_clients(struct seq_file *m, struct ksmbd_sched_disp *d)
{
	struct ksmbd_sched_client *c;

	spin_lock(&d->lock);
	list_for_each_entry(c, &d->all, all) {
		seq_printf(m, "client id=%u class=%u weight=%u ", c->id,
			   KSMBD_SCHED_CLASS_ID_OF(c->class_word),
			   c->quantum / KSMBD_SCHED_QUANTUM);
		if (c->class_word & KSMBD_SCHED_CLASS_PER_PEER)
			seq_printf(m, "peer=%pI6c", c->key.addr);
		else
			seq_puts(m, "peer=-");
		seq_printf(m, " conns=%u queued=%u inflight=%u dispatched=%llu bytes=%llu deficit=%lld\n",
			   c->conns, c->queued, c->inflight, c->dispatched,
			   c->bytes, c->deficit);
	}
	spin_unlock(&d->lock);
}
