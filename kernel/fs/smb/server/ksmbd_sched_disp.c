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
#include <kunit/static_stub.h>

#include "glob.h"
#include "connection.h"
#include "ksmbd_work.h"
#include "smb2pdu.h"
#include "ksmbd_sched.h"
#include "ksmbd_sched_disp.h"
#include "ksmbd_sched_trace.h"

/* Wait histogram: bucket i counts waits in [2^(i-1), 2^i) microseconds. */
#define KSMBD_SCHED_WAIT_BUCKETS	26

/**
 * struct ksmbd_disp_qos - a class's reservation and limit (init_class())
 * @res_bps:    reservation, bytes of cost a second, 0: none
 * @lim_bps:    limit, bytes of cost a second, 0: none
 * @burst_ns:   depth of the limit's buckets, and how far behind its
 *              reservation a client may fall and catch up, ns
 * @res_iops:   reservation, I/Os (KSMBD_SCHED_IO_BYTES) a second, 0: none
 * @lim_iops:   limit, I/Os a second, 0: none
 * @stamp_ns:   when they were set
 * @gen:        generation of the program that set them, 0: not yet asked
 * @aggregated: the tags are the class's, else each client's
 */
struct ksmbd_disp_qos {
	u64 res_bps;
	u64 lim_bps;
	u64 burst_ns;
	u64 stamp_ns;
	u32 res_iops;
	u32 lim_iops;
	u32 gen;
	bool aggregated;
};

/**
 * struct ksmbd_disp_tags - reservation and limit tags (mClock's R and L)
 * @lim_io:   when the next I/O is due under the IOPS limit, ns (the
 *            theoretical arrival time of GCRA: a token bucket in one
 *            timestamp)
 * @lim_byte: the same under the bytes/s limit
 * @res_io:   when the next I/O is due under the IOPS reservation: while
 *            it is not after now, the client is below its reservation
 * @res_byte: the same under the bytes/s reservation
 */
struct ksmbd_disp_tags {
	u64 lim_io;
	u64 lim_byte;
	u64 res_io;
	u64 res_byte;
};

/**
 * struct ksmbd_sched_cstats - dispatch counters of one class
 * @dispatched: data requests dispatched
 * @bypassed:   control requests, run without waiting
 * @bytes:      READ/WRITE bytes requested by dispatched requests
 * @wait_ns:    sum of their waits in the dispatcher, ns
 * @cost:       what its finished requests were charged, bytes
 * @hist:       waits, log2 buckets of microseconds
 * @qos:        its reservation and limit (init_class())
 * @tags:       the class's tags when @qos is aggregated
 * @limited:    times one of its clients waited for its limit
 * @throttled_ns: how long its clients waited for their limits, ns
 * @res_served: requests served ahead of the round for its reservation
 * @res_missed: times its reservation fell a burst behind while its
 *              requests waited: the server could not meet it
 * @sessions:   sessions classify_session() put in it
 * @trees:      tree connects classify_tree() put in it
 */
struct ksmbd_sched_cstats {
	u64 dispatched;
	atomic64_t bypassed;
	u64 bytes;
	u64 wait_ns;
	u64 cost;
	u64 hist[KSMBD_SCHED_WAIT_BUCKETS];
	struct ksmbd_disp_qos qos;
	struct ksmbd_disp_tags tags;
	u64 limited;
	u64 throttled_ns;
	u64 res_served;
	u64 res_missed;
	u64 sessions;
	u64 trees;
};

/**
 * struct ksmbd_sched_client_key - what makes a client
 * @addr:     when its class is PER_PEER, the peer's address key, or the
 *            ClientGUID when @by_guid; else zero
 * @class_id: class id
 * @by_guid:  1 when @addr is a ClientGUID, else 0
 */
struct ksmbd_sched_client_key {
	u8 addr[16];
	u32 class_id;
	u32 by_guid;
};

/**
 * struct ksmbd_sched_client - a client of the dispatcher
 * @node:       in ksmbd_sched_disp::clients
 * @key:        its key
 * @all:        on ksmbd_sched_disp::all (the clients listing)
 * @flow:       on the new or the old list while in the round, else empty
 * @data:       its waiting requests, FIFO
 * @ctl:        its waiting unauthenticated requests, FIFO
 * @idle:       on ksmbd_sched_disp::idle while it counts in the shares
 *              but has nothing waiting or running
 * @held:       on ksmbd_sched_disp::held while the head of @ctl waits
 *              for the rate of requests that need a session (a reference)
 * @resv:       on ksmbd_sched_disp::resv while it has requests waiting and
 *              its class a reservation
 * @tags:       its reservation and limit tags (a dedicated class's)
 * @limited_ns: when it last began to wait for its limit
 * @stats:      counters of its class
 * @wq:         receivers of its connections waiting for room (cap)
 * @deficit:    bytes it may still be served in this round (DRR)
 * @turn_ns:    last time the round reached it within the budget: a
 *              request taken for a slot, or a quantum given (the watchdog)
 * @qbytes:     bytes of its waiting messages
 * @idle_ns:    when it last had nothing waiting or running
 * @held_avg:   how long its finished requests held their slot, ns, a
 *              moving average (1/8 of each new one)
 * @est_cost:   what its finished requests without READ/WRITE bytes
 *              really cost, bytes, a moving average (1/8 of each new
 *              one): the up-front cost of its next such request
 * @dispatched: requests dispatched
 * @bytes:      their READ/WRITE bytes
 * @cost:       what its finished requests were charged, bytes
 * @control:    control requests
 * @park_credit: deficit it gets when it leaves the debt wheel
 * @invalid_tat: when its next request that needs a session, received
 *              before it had one, may run (GCRA's theoretical arrival
 *              time, ns)
 * @id:         its number in the clients listing
 * @class_word: class word of the connection that bound it last
 * @quantum:    KSMBD_SCHED_QUANTUM times its weight
 * @queued:     length of @data
 * @ctl_queued: length of @ctl
 * @inflight:   its requests holding a slot, stuck ones included
 * @stuck:      its requests whose slot was taken out of the budget
 * @unauth:     its unauthenticated requests running
 * @wcount:     its weight as counted in ksmbd_sched_disp::wactive, or 0
 * @round:      the round it is in while on the old list
 * @where:      which list @flow is on (enum ksmbd_disp_flow)
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
	struct list_head ctl;
	struct list_head idle;
	struct list_head held;
	struct list_head resv;
	struct ksmbd_sched_cstats *stats;
	struct ksmbd_disp_tags tags;
	u64 limited_ns;
	wait_queue_head_t wq;
	s64 deficit;
	u64 turn_ns;
	u64 qbytes;
	u64 idle_ns;
	u64 held_avg;
	u64 dispatched;
	u64 bytes;
	u64 cost;
	u64 control;
	s64 park_credit;
	u64 invalid_tat;
	u32 id;
	u32 class_word;
	u32 est_cost;
	u32 quantum;
	u32 queued;
	u32 ctl_queued;
	u32 inflight;
	u32 stuck;
	u32 unauth;
	u32 wcount;
	u32 round;
	u8 where;
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
 * @running:       requests holding a slot of the budget, oldest first
 * @capped:        clients held at their slot bound, with requests waiting
 * @idle:          clients that count in the shares, idle, oldest first
 * @held:          clients whose unauthenticated requests wait for their
 *                 rate (ksmbd_disp_unauth_release())
 * @limited:       clients waiting for their class's limit
 * @resv:          clients with requests waiting and a reservation
 * @limit_work:    returns @limited clients to the round when their limits
 *                 allow, armed for the earliest
 * @limit_at:      when @limit_work is armed for, ns
 * @wheel:         clients in debt, by the round that repays them
 * @all:           all clients
 * @clients:       the same clients, by key
 * @classes:       class id -> struct ksmbd_sched_cstats
 * @guard:         stall guard and watchdog, armed while requests wait
 * @progress_ns:   last time a slot was given back or taken
 * @held_avg:      how long finished requests held their slot, ns, a moving
 *                 average (1/8 of each new one; stuck ones not counted)
 * @alloc_fail:    requests run at once because memory was short
 * @stall_admits:  slots taken out of the budget by the stall guard
 * @stuck_total:   slots taken out of the budget, all reasons
 * @quarantined:   of those, by the watchdog (held over @timeout_ms)
 * @capped_total:  times a client was held at its slot bound
 * @parked_total:  times a client in debt was parked in the wheel
 * @unauth_waits:  unauthenticated requests that waited for their client
 * @invalid_waits: of those, times one that needs a session waited for
 *                 its client's rate
 * @rate:          the storage's rate, bytes per us << 4, from READs and
 *                 WRITEs of at least KSMBD_SCHED_SEEKY_BYTES (0: not yet)
 * @wactive:       sum of the weights of the clients that count in the
 *                 shares (busy, or idle for less than KSMBD_SCHED_IDLE_MS)
 * @wait_releases: slots given back because their request waits
 * @dropped:       requests of a connection going away, not run
 * @throttled:     times a receiver waited for room in its client's queue
 * @bypass_wait_ns: the wait that made the watchdog bypass the dispatcher,
 *                 as the ksmbd_sched_bypass tracepoint's wait_ns
 * @budget:        how the default budget adapts
 * @inflight:      data requests holding a slot of the budget (stuck
 *                 ones not)
 * @stuck:         requests whose slot was taken out of the budget
 * @round:         the round of the old list being served
 * @nparked:       clients in @wheel
 * @timeout_ms:    the watchdog's bound, ms
 * @max_inflight:  slots, the budget in force
 * @queued:        data requests waiting
 * @nactive:       clients with waiting requests
 * @nclients:      clients
 * @next_id:       id of the next client
 * @dead:          detached: nothing waits any more
 * @bypass:        the watchdog fired: every request takes the flat path
 * @guard_armed:   @guard is queued or running
 * @limit_armed:   @limit_work is queued for @limit_at
 * @ref:           one for the attachment, one per request it tracks, one
 *                 per bound connection
 * @netns_ino:     namespace, for the tracepoints
 * @rcu:           frees it after lockless readers of the attachment
 */
struct ksmbd_sched_disp {
	spinlock_t lock; /* see above */
	struct rcu_head rcu;
	struct list_head new_flows;
	struct list_head old_flows;
	struct list_head age;
	struct list_head running;
	struct list_head capped;
	struct list_head idle;
	struct list_head held;
	struct list_head limited;
	struct list_head resv;
	struct list_head wheel[KSMBD_SCHED_WHEEL];
	struct list_head all;
	struct rhashtable clients;
	struct xarray classes;
	struct delayed_work guard;
	struct delayed_work limit_work;
	u64 limit_at;
	u64 progress_ns;
	u64 held_avg;
	u64 alloc_fail;
	u64 stall_admits;
	u64 stuck_total;
	u64 quarantined;
	u64 capped_total;
	u64 parked_total;
	u64 unauth_waits;
	u64 invalid_waits;
	u64 rate;
	u64 wactive;
	u64 wait_releases;
	u64 dropped;
	u64 throttled;
	u64 bypass_wait_ns;
	struct ksmbd_disp_budget budget;
	u32 inflight;
	u32 stuck;
	u32 round;
	u32 nparked;
	u32 timeout_ms;
	u32 max_inflight;
	u32 queued;
	u32 nactive;
	u32 nclients;
	u32 next_id;
	bool dead;
	bool bypass;
	bool guard_armed;
	bool limit_armed;
	refcount_t ref;
	u32 netns_ino;
};

/*
 * The dispatcher's clock, ns.  Every rule of the dispatcher reads time
 * here, so that a KUnit test can drive it with a clock of its own.
 */
static u64 ksmbd_disp_now(void)
{
	KUNIT_STATIC_STUB_REDIRECT(ksmbd_disp_now);
	return ktime_get_ns();
}

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

/* A moving average of times: 1/8 of each new sample; the first as is. */
static u64 ksmbd_disp_avg(u64 avg, u64 sample)
{
	return avg ? avg - (avg >> 3) + (sample >> 3) : sample;
}

/*
 * Caller holds d->lock.  How long the slots may all be held without one
 * given back before the stall guard acts, ns: KSMBD_SCHED_STALL_MS, or
 * KSMBD_SCHED_STALL_AVGS times as long as requests have lately held their
 * slots if that is longer, so that storage whose requests take long (a
 * server-side copy, a slow disk) is not taken for blocked requests.
 */
static u64 ksmbd_disp_stall_ns(const struct ksmbd_sched_disp *d)
{
	return max_t(u64, (u64)KSMBD_SCHED_STALL_MS * NSEC_PER_MSEC,
		     d->held_avg * KSMBD_SCHED_STALL_AVGS);
}

/*
 * Caller holds d->lock.  A request of @c held its slot @held ns and
 * finished.  The averages take it only if it was not blocked: under
 * twice as long as the stall guard would wait, so that they follow
 * storage that becomes slower (a sample may double them) but a request
 * that waited seconds on a lock does not make the guard wait longer.  A
 * client's own first sample is taken as is, so that a client whose
 * every request is long (server-side copies) learns it.
 */
static void ksmbd_disp_held(struct ksmbd_sched_disp *d,
			    struct ksmbd_sched_client *c, u64 held)
{
	u64 bound = 2 * ksmbd_disp_stall_ns(d);

	if (held < bound)
		d->held_avg = ksmbd_disp_avg(d->held_avg, held);
	if (!c->held_avg ||
	    held < max_t(u64, bound, 2 * c->held_avg * KSMBD_SCHED_STALL_AVGS))
		c->held_avg = ksmbd_disp_avg(c->held_avg, held);
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
 * nothing and the sample says nothing about it.  A request that held its
 * slot as long as the stall guard waits (ksmbd_disp_stall_ns()) or more
 * is no sample: it was blocked (the stall guard's business), not queued
 * in the storage, so one client's blocked requests do not drive the
 * budget down; nor is a request whose slot the guard took out of the
 * budget.  Storage that becomes slower raises the average hold time,
 * and with it that bound, so its requests are samples again.  base is measured by a
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
	    work->sched.stime_ns < b->win_start_ns ||
	    now - work->sched.stime_ns >= ksmbd_disp_stall_ns(d))
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
static void ksmbd_disp_limit_fn(struct work_struct *wk);

/**
 * ksmbd_disp_alloc() - a new dispatcher
 * @netns_ino:    its namespace's inode number, for the tracepoints
 * @max_inflight: its budget, 0 for the default
 * @timeout_ms:   its watchdog, ms, 0 for KSMBD_SCHED_WATCHDOG_MS
 *
 * Context: process, may sleep.
 * Return: the dispatcher with one reference, or NULL without memory.
 */
struct ksmbd_sched_disp *ksmbd_disp_alloc(u32 netns_ino, u32 max_inflight,
					  u32 timeout_ms)
{
	struct ksmbd_sched_disp *d = kzalloc(sizeof(*d), GFP_KERNEL);
	int i;

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
	INIT_LIST_HEAD(&d->running);
	INIT_LIST_HEAD(&d->capped);
	INIT_LIST_HEAD(&d->idle);
	INIT_LIST_HEAD(&d->held);
	INIT_LIST_HEAD(&d->limited);
	INIT_LIST_HEAD(&d->resv);
	for (i = 0; i < KSMBD_SCHED_WHEEL; i++)
		INIT_LIST_HEAD(&d->wheel[i]);
	INIT_LIST_HEAD(&d->all);
	xa_init(&d->classes);
	d->timeout_ms = timeout_ms ?: KSMBD_SCHED_WATCHDOG_MS;
	INIT_DELAYED_WORK(&d->guard, ksmbd_disp_guard_fn);
	INIT_DELAYED_WORK(&d->limit_work, ksmbd_disp_limit_fn);
	ksmbd_disp_budget_set(d, max_inflight, ksmbd_disp_now());
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
	if (c->wcount) {
		d->wactive -= c->wcount;
		list_del(&c->idle);
	}
	rhashtable_remove_fast(&d->clients, &c->node,
			       ksmbd_disp_client_params);
	list_del(&c->all);
	d->nclients--;
	kfree_rcu(c, rcu);
}

static bool ksmbd_disp_client_full(const struct ksmbd_sched_client *c)
{
	return READ_ONCE(c->queued) + READ_ONCE(c->ctl_queued) >=
	       KSMBD_SCHED_CLIENT_QUEUED_MAX ||
	       READ_ONCE(c->qbytes) >= KSMBD_SCHED_CLIENT_QBYTES_MAX;
}

/* Which list a client's flow is on. */
enum ksmbd_disp_flow {
	KSMBD_FLOW_NONE,
	KSMBD_FLOW_NEW,
	KSMBD_FLOW_OLD,
	KSMBD_FLOW_PARKED,
	KSMBD_FLOW_CAPPED,
	KSMBD_FLOW_LIMITED,
};

static u32 ksmbd_disp_weight(const struct ksmbd_sched_client *c)
{
	return c->quantum / KSMBD_SCHED_QUANTUM;
}

/*
 * Caller holds d->lock.  @c's requests waiting or running changed: it
 * counts in the shares of the slot bound while it has any, and for
 * KSMBD_SCHED_IDLE_MS after its last, so that a client that reads one
 * request at a time keeps its share between two of them.
 */
static void ksmbd_disp_activity(struct ksmbd_sched_disp *d,
				struct ksmbd_sched_client *c, u64 now)
{
	u32 w = ksmbd_disp_weight(c);

	if (c->queued || c->inflight || c->unauth || c->ctl_queued) {
		if (c->wcount && !list_empty(&c->idle))
			list_del_init(&c->idle);
		if (!c->wcount)
			INIT_LIST_HEAD(&c->idle);
		d->wactive += w - c->wcount;
		c->wcount = w;
	} else if (c->wcount && list_empty(&c->idle)) {
		c->idle_ns = now;
		list_add_tail(&c->idle, &d->idle);
	}
}

/* Caller holds d->lock.  Clients idle for KSMBD_SCHED_IDLE_MS leave the shares. */
static void ksmbd_disp_expire(struct ksmbd_sched_disp *d, u64 now)
{
	struct ksmbd_sched_client *c;

	while (!list_empty(&d->idle)) {
		c = list_first_entry(&d->idle, struct ksmbd_sched_client, idle);
		if (now - c->idle_ns < (u64)KSMBD_SCHED_IDLE_MS * NSEC_PER_MSEC)
			break;
		list_del_init(&c->idle);
		d->wactive -= c->wcount;
		c->wcount = 0;
	}
}

/*
 * Caller holds d->lock.  The slot bound: a client's weighted share of the
 * budget (at least one slot), the shares being those of the clients that
 * count (ksmbd_disp_activity()); alone, the whole budget.
 */
static u32 ksmbd_disp_cap(const struct ksmbd_sched_disp *d,
			  const struct ksmbd_sched_client *c)
{
	u64 share = max_t(u64, c->wcount, 1);

	return max_t(u64, DIV_ROUND_UP_ULL((u64)d->max_inflight * share,
					   max(d->wactive, share)), 1);
}

/*
 * Caller holds d->lock.  May @c take no slot now?  Only a client with
 * stuck requests is held to its bound, its stuck slots counted: the
 * others are served by the round alone, whose shares are by cost, not
 * by slots (a small budget would make slots too coarse a unit).  So a
 * client whose requests block cannot take slot after slot in their
 * place, and the slots it holds above its share leave the budget
 * (ksmbd_disp_guard_fn()).
 */
static bool ksmbd_disp_at_bound(const struct ksmbd_sched_disp *d,
				const struct ksmbd_sched_client *c)
{
	return c->stuck && c->inflight >= ksmbd_disp_cap(d, c);
}

/* Caller holds d->lock.  Take @c's flow off whatever list it is on. */
static void ksmbd_disp_flow_del(struct ksmbd_sched_disp *d,
				struct ksmbd_sched_client *c)
{
	if (c->where == KSMBD_FLOW_PARKED)
		d->nparked--;
	list_del_init(&c->flow);
	c->where = KSMBD_FLOW_NONE;
}

/*
 * Caller holds d->lock.  @c joins the end of the old list, for the next
 * round.  The old list is in round order: a client whose round is not
 * the one being served means that round is over.
 */
static void ksmbd_disp_to_old(struct ksmbd_sched_disp *d,
			      struct ksmbd_sched_client *c)
{
	if (c->where == KSMBD_FLOW_PARKED)
		d->nparked--;
	list_move_tail(&c->flow, &d->old_flows);
	c->where = KSMBD_FLOW_OLD;
	c->round = d->round + 1;
}

/*
 * Caller holds d->lock.  The next round: the clients parked for it
 * join the old list, with the quanta of the rounds they sat out.
 */
static void ksmbd_disp_next_round(struct ksmbd_sched_disp *d, u64 now)
{
	struct list_head *slot;
	struct ksmbd_sched_client *c, *tmp;

	d->round++;
	slot = &d->wheel[d->round & (KSMBD_SCHED_WHEEL - 1)];
	list_for_each_entry_safe(c, tmp, slot, flow) {
		/* refunds while parked count: never above one quantum */
		c->deficit = min_t(s64, c->deficit + c->park_credit,
				   c->quantum);
		c->park_credit = 0;
		if (now)
			c->turn_ns = now;
		ksmbd_disp_to_old(d, c);
	}
}

/*
 * Caller holds d->lock.  @c is reached by the round with its deficit used
 * up.  A client short of one quantum gets it and goes to the end of the
 * old list (RFC 8290 4.2).  A client deeper in debt, k quanta, would be
 * passed over k rounds, once per pick: it is parked in the debt wheel
 * for the round that repays it instead, and gets those k quanta when it
 * comes back, so that a pick never passes over it more than once.
 */
static void ksmbd_disp_repay(struct ksmbd_sched_disp *d,
			     struct ksmbd_sched_client *c)
{
	u64 k = div64_u64((u64)-c->deficit, c->quantum) + 1;

	if (k == 1) {
		c->deficit += c->quantum;
		ksmbd_disp_to_old(d, c);
		return;
	}
	k = min_t(u64, k, KSMBD_SCHED_WHEEL - 1);
	c->park_credit = k * c->quantum;
	if (c->where == KSMBD_FLOW_PARKED)
		d->nparked--;
	list_move_tail(&c->flow,
		       &d->wheel[(d->round + k - 1) & (KSMBD_SCHED_WHEEL - 1)]);
	c->where = KSMBD_FLOW_PARKED;
	d->nparked++;
	d->parked_total++;
}

/* ---- reservation and limit (mClock's R and L tags) ------------------- */

/* I/Os of a request of @cost bytes: at least one (KSMBD_SCHED_IO_BYTES). */
static u64 ksmbd_disp_ios(u32 cost)
{
	return max_t(u64, DIV_ROUND_UP(cost, KSMBD_SCHED_IO_BYTES), 1);
}

/* ns that @n units take at @rate units a second. */
static u64 ksmbd_disp_span(u64 n, u64 rate)
{
	return div64_u64(n * NSEC_PER_SEC, rate);
}

static struct ksmbd_disp_tags *ksmbd_disp_tags(struct ksmbd_sched_client *c)
{
	return c->stats->qos.aggregated ? &c->stats->tags : &c->tags;
}

static bool ksmbd_disp_has_res(const struct ksmbd_sched_client *c)
{
	return c->stats->qos.res_iops || c->stats->qos.res_bps;
}

/*
 * Caller holds d->lock.  How long @c must wait for its class's limit
 * before its next request, ns; 0: now.  A tag at most the burst ahead of
 * now conforms (GCRA: the bucket is not empty).
 */
static u64 ksmbd_disp_lim_wait(struct ksmbd_sched_client *c, u64 now)
{
	const struct ksmbd_disp_qos *q = &c->stats->qos;
	const struct ksmbd_disp_tags *tg;
	u64 at = 0;

	if (!q->lim_iops && !q->lim_bps)
		return 0;
	tg = ksmbd_disp_tags(c);
	if (q->lim_iops)
		at = tg->lim_io;
	if (q->lim_bps)
		at = max(at, tg->lim_byte);
	return at > now + q->burst_ns ? at - now - q->burst_ns : 0;
}

/*
 * Caller holds d->lock.  The earliest of @c's reservation tags, U64_MAX
 * if none: @c is below its reservation while that is not after now.
 */
static u64 ksmbd_disp_res_at(struct ksmbd_sched_client *c)
{
	const struct ksmbd_disp_qos *q = &c->stats->qos;
	const struct ksmbd_disp_tags *tg = ksmbd_disp_tags(c);
	u64 at = U64_MAX;

	if (q->res_iops)
		at = tg->res_io;
	if (q->res_bps)
		at = min(at, tg->res_byte);
	return at;
}

/*
 * A reservation tag for a request that waited since @qtime: it moves on
 * by @span from where it was, or from a burst before now if it is
 * further behind (a client idle for a while banks no more than a burst).
 * Falling behind that while the request waited is a miss.
 */
static u64 ksmbd_disp_res_next(struct ksmbd_sched_cstats *cs, u64 tag,
			       u64 span, u64 now, u64 qtime)
{
	u64 floor = now > cs->qos.burst_ns ? now - cs->qos.burst_ns : 0;

	if (tag < floor) {
		if (qtime <= tag)
			cs->res_missed++;
		tag = floor;
	}
	return tag + span;
}

/*
 * Caller holds d->lock.  @work of @c takes a slot: its cost up front
 * moves @c's tags on.  ksmbd_disp_qos_settle() corrects them for what it
 * really cost.
 */
static void ksmbd_disp_qos_take(struct ksmbd_sched_client *c,
				struct ksmbd_work *work, u64 now)
{
	const struct ksmbd_disp_qos *q = &c->stats->qos;
	struct ksmbd_disp_tags *tg = ksmbd_disp_tags(c);
	u64 ios = ksmbd_disp_ios(work->sched.cost);
	u32 cost = work->sched.cost;

	if (!q->lim_iops && !q->lim_bps && !q->res_iops && !q->res_bps)
		return;
	work->sched.qos = true;
	if (q->lim_iops)
		tg->lim_io = max(tg->lim_io, now) +
			     ksmbd_disp_span(ios, q->lim_iops);
	if (q->lim_bps)
		tg->lim_byte = max(tg->lim_byte, now) +
			       ksmbd_disp_span(cost, q->lim_bps);
	if (q->res_iops)
		tg->res_io = ksmbd_disp_res_next(c->stats, tg->res_io,
						 ksmbd_disp_span(ios, q->res_iops),
						 now, work->sched.qtime_ns);
	if (q->res_bps)
		tg->res_byte = ksmbd_disp_res_next(c->stats, tg->res_byte,
						   ksmbd_disp_span(cost, q->res_bps),
						   now, work->sched.qtime_ns);
}

/* Move @tag by the difference of @real and @upfront units at @rate. */
static void ksmbd_disp_tag_fix(u64 *tag, u64 real, u64 upfront, u64 rate)
{
	u64 a, b;

	if (!rate || real == upfront)
		return;
	a = ksmbd_disp_span(real, rate);
	b = ksmbd_disp_span(upfront, rate);
	*tag = a > b ? *tag + (a - b) : *tag - min(*tag, b - a);
}

/*
 * Caller holds d->lock.  @work finished: its tags are charged what it
 * really cost (@real bytes) instead of its cost up front.
 */
static void ksmbd_disp_qos_settle(struct ksmbd_sched_client *c,
				  struct ksmbd_work *work, u32 real)
{
	const struct ksmbd_disp_qos *q = &c->stats->qos;
	struct ksmbd_disp_tags *tg = ksmbd_disp_tags(c);
	u64 ios = ksmbd_disp_ios(real), ios0;

	if (!work->sched.qos)
		return;
	ios0 = ksmbd_disp_ios(work->sched.cost);
	ksmbd_disp_tag_fix(&tg->lim_io, ios, ios0, q->lim_iops);
	ksmbd_disp_tag_fix(&tg->lim_byte, real, work->sched.cost, q->lim_bps);
	ksmbd_disp_tag_fix(&tg->res_io, ios, ios0, q->res_iops);
	ksmbd_disp_tag_fix(&tg->res_byte, real, work->sched.cost, q->res_bps);
}

/* Caller holds d->lock.  Run ksmbd_disp_limit_fn() at @at, or earlier. */
static void ksmbd_disp_arm_limit(struct ksmbd_sched_disp *d, u64 at, u64 now)
{
	if (d->dead || d->bypass || (d->limit_armed && d->limit_at <= at))
		return;
	d->limit_armed = true;
	d->limit_at = at;
	mod_delayed_work(system_wq, &d->limit_work,
			 nsecs_to_jiffies(at > now ? at - now : 0) + 1);
}

/*
 * Caller holds d->lock.  @c waits @wait ns for its class's limit, even
 * with slots free: off the round, onto the limited list, until
 * ksmbd_disp_unlimit() returns it.
 */
static void ksmbd_disp_limit(struct ksmbd_sched_disp *d,
			     struct ksmbd_sched_client *c, u64 wait, u64 now)
{
	if (c->where == KSMBD_FLOW_PARKED)
		d->nparked--;
	list_move_tail(&c->flow, &d->limited);
	c->where = KSMBD_FLOW_LIMITED;
	c->limited_ns = now;
	c->stats->limited++;
	ksmbd_disp_arm_limit(d, now + wait, now);
}

/*
 * Caller holds d->lock.  Limited clients whose limits allow a request go
 * back to the end of the round, their deficits as they were; the timer
 * is armed for the earliest of the others.
 */
static void ksmbd_disp_unlimit(struct ksmbd_sched_disp *d, u64 now)
{
	struct ksmbd_sched_client *c, *tmp;
	u64 next = U64_MAX, wait;

	list_for_each_entry_safe(c, tmp, &d->limited, flow) {
		wait = ksmbd_disp_lim_wait(c, now);
		if (wait) {
			next = min(next, now + wait);
			continue;
		}
		c->stats->throttled_ns += now - c->limited_ns;
		ksmbd_disp_to_old(d, c);
	}
	if (next != U64_MAX)
		ksmbd_disp_arm_limit(d, next, now);
}

/*
 * Caller holds d->lock.  The reservation pass, before the round: of the
 * clients below their reservation (a reservation tag not after now) that
 * their limit and slot bound let go, the one furthest behind.  Its
 * request is not charged to its deficit: what the reservations take is
 * outside the weighted shares, which divide the rest (mClock's
 * reservation phase).  O(clients with a reservation and requests
 * waiting).
 */
static struct ksmbd_work *ksmbd_disp_next_res(struct ksmbd_sched_disp *d,
					      u64 now)
{
	struct ksmbd_sched_client *c, *best = NULL;
	u64 at, best_at = U64_MAX;
	struct ksmbd_work *work;

	list_for_each_entry(c, &d->resv, resv) {
		at = ksmbd_disp_res_at(c);
		if (at > now || at >= best_at || ksmbd_disp_at_bound(d, c) ||
		    ksmbd_disp_lim_wait(c, now))
			continue;
		best = c;
		best_at = at;
	}
	if (!best)
		return NULL;
	work = list_first_entry(&best->data, struct ksmbd_work, sched.entry);
	if (!work->sched.bytes)
		work->sched.cost = max(work->sched.cost, best->est_cost);
	best->stats->res_served++;
	best->turn_ns = now;
	return work;
}

/* Caller holds d->lock.  @work joins its client's queue. */
static void ksmbd_disp_enqueue(struct ksmbd_sched_disp *d,
			       struct ksmbd_sched_client *c,
			       struct ksmbd_work *work, u64 now)
{
	list_add_tail(&work->sched.entry, &c->data);
	list_add_tail(&work->sched.age, &d->age);
	work->sched.client = c;
	c->refs++;
	if (!c->queued) {
		d->nactive++;
		if (ksmbd_disp_has_res(c))
			list_add_tail(&c->resv, &d->resv);
	}
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
			ksmbd_disp_to_old(d, c);
		} else {
			list_add_tail(&c->flow, &d->new_flows);
			c->where = KSMBD_FLOW_NEW;
			c->deficit = c->quantum;
		}
		c->refs++;
	}
	ksmbd_disp_activity(d, c, now);
}

/* Caller holds d->lock.  @work leaves its client's queue. */
static void ksmbd_disp_dequeue(struct ksmbd_sched_disp *d,
			       struct ksmbd_sched_client *c,
			       struct ksmbd_work *work)
{
	list_del_init(&work->sched.entry);
	list_del_init(&work->sched.age);
	WRITE_ONCE(c->queued, c->queued - 1);
	if (!c->queued) {
		d->nactive--;
		list_del_init(&c->resv);
	}
	WRITE_ONCE(c->qbytes, c->qbytes - work->sched.mem);
	d->queued--;
	if (c->waiters && !ksmbd_disp_client_full(c))
		wake_up(&c->wq);
}

/*
 * How a request leaves the queue: for a slot by the round, within the
 * budget; or without a slot (detach, bypass).
 */
enum ksmbd_disp_how {
	KSMBD_DISP_ROUND,
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
 * turn_ns set to @turn_ns, the time of the pick.
 *
 * Before the round, a client below its class's reservation is served
 * (ksmbd_disp_next_res()); in it, a client its class's limit holds back
 * leaves for the limited list (ksmbd_disp_limit()).
 */
static struct ksmbd_work *ksmbd_disp_next(struct ksmbd_sched_disp *d,
					  u64 turn_ns)
{
	struct ksmbd_sched_client *c;
	struct list_head *head;
	struct ksmbd_work *work;
	u32 idle_moves = 0;
	u64 wait;

	if (!list_empty(&d->resv)) {
		work = ksmbd_disp_next_res(d, turn_ns);
		if (work)
			return work;
	}

	/*
	 * Only contested service is charged: with one client waiting, its
	 * oldest request (the head of the age list) goes without touching
	 * deficits or the round.  Capacity nobody else asked for neither puts
	 * it in debt nor earns it credit for the next contested round (as a
	 * flow's virtual start time in start-time fair queueing).  The slot
	 * bound still holds: clients with requests running count.
	 */
	if (d->nactive == 1) {
		work = list_first_entry(&d->age, struct ksmbd_work, sched.age);
		c = work->sched.client;
		if (ksmbd_disp_at_bound(d, c))
			return NULL;
		wait = ksmbd_disp_lim_wait(c, turn_ns);
		if (wait) {
			if (c->where != KSMBD_FLOW_LIMITED)
				ksmbd_disp_limit(d, c, wait, turn_ns);
			return NULL;
		}
		if (turn_ns)
			c->turn_ns = turn_ns;
		return work;
	}

	/*
	 * Each pass serves a request, or moves one client: to the end of the
	 * old list (a quantum given, or found empty), into the debt wheel,
	 * onto the capped or the limited list, or out of the round; or
	 * starts a round.  A client moves at most twice per round, at most
	 * KSMBD_SCHED_WHEEL rounds start while every waiting client is
	 * parked, and a round of clients found empty (their requests
	 * running) ends the pick: the work per pick is bounded by that, not
	 * by any debt.
	 */
	while (d->queued) {
		head = &d->new_flows;
		if (list_empty(head))
			head = &d->old_flows;
		if (list_empty(head)) {
			if (!d->nparked)
				return NULL;	/* every waiting client capped */
			ksmbd_disp_next_round(d, turn_ns);
			continue;
		}
		c = list_first_entry(head, struct ksmbd_sched_client, flow);
		if (c->where == KSMBD_FLOW_OLD && c->round != d->round) {
			ksmbd_disp_next_round(d, turn_ns);
			continue;
		}
		if (turn_ns)
			c->turn_ns = turn_ns;
		if (c->deficit <= 0) {
			ksmbd_disp_repay(d, c);
			continue;
		}
		if (list_empty(&c->data)) {
			if (c->inflight ||
			    (head == &d->new_flows && !list_empty(&d->old_flows))) {
				/*
				 * More such moves in a row than there are
				 * clients: the round holds none with a request,
				 * those waiting are limited or capped.
				 */
				if (++idle_moves > d->nclients)
					return NULL;
				ksmbd_disp_to_old(d, c);
			} else {
				ksmbd_disp_flow_del(d, c);
				ksmbd_disp_client_put(d, c);
			}
			continue;
		}
		if (ksmbd_disp_at_bound(d, c)) {
			list_move_tail(&c->flow, &d->capped);
			c->where = KSMBD_FLOW_CAPPED;
			d->capped_total++;
			continue;
		}
		wait = ksmbd_disp_lim_wait(c, turn_ns);
		if (wait) {
			ksmbd_disp_limit(d, c, wait, turn_ns);
			continue;
		}
		work = list_first_entry(&c->data, struct ksmbd_work,
					sched.entry);
		if (!work->sched.bytes)
			work->sched.cost = max(work->sched.cost, c->est_cost);
		c->deficit -= work->sched.cost;
		work->sched.charged = true;
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
 * Caller holds d->lock.  @work leaves its queue onto @batch, @how (with
 * a slot, or outside the budget: detach, bypass).  A request of a
 * connection going away is dropped and refunded.
 */
static void ksmbd_disp_out(struct ksmbd_sched_disp *d, struct ksmbd_work *work,
			   struct list_head *batch, u64 now,
			   enum ksmbd_disp_how how)
{
	struct ksmbd_sched_client *c = work->sched.client;

	work->sched.clients = min_t(u32, d->nactive, U16_MAX);
	ksmbd_disp_dequeue(d, c, work);
	if (unlikely(ksmbd_disp_conn_gone(work->conn))) {
		work->sched.dropped = true;
		if (work->sched.charged)
			c->deficit += work->sched.cost;
		work->sched.charged = false;
		d->dropped++;
	} else if (how != KSMBD_DISP_FLAT) {
		ksmbd_disp_qos_take(c, work, now);
		work->sched.slot = true;
		work->sched.stime_ns = now;
		list_add_tail(&work->sched.age, &d->running);
		d->inflight++;
		c->inflight++;
		d->progress_ns = now;
		ksmbd_disp_account(c, work, now - work->sched.qtime_ns);
	} else {
		ksmbd_disp_account(c, work, now - work->sched.qtime_ns);
	}
	ksmbd_disp_activity(d, c, now);
	list_add_tail(&work->sched.entry, batch);
}

/*
 * Caller holds d->lock.  Take the next request in turn onto @batch, with
 * a slot.  Return: false when none may go now.
 */
static bool ksmbd_disp_take(struct ksmbd_sched_disp *d,
			    struct list_head *batch, u64 now)
{
	struct ksmbd_work *work = ksmbd_disp_next(d, now);

	if (!work)
		return false;
	ksmbd_disp_out(d, work, batch, now, KSMBD_DISP_ROUND);
	return true;
}

/* Caller holds d->lock.  Fill the free slots. */
static void ksmbd_disp_pick(struct ksmbd_sched_disp *d,
			    struct list_head *batch, u64 now)
{
	ksmbd_disp_expire(d, now);
	if (!list_empty(&d->limited) && now >= d->limit_at)
		ksmbd_disp_unlimit(d, now);
	while (d->inflight < d->max_inflight && ksmbd_disp_take(d, batch, now))
		;
}

/*
 * Caller holds d->lock.  Everything waiting goes, oldest first, without
 * slots; so do the unauthenticated requests waiting for their client.
 */
static void ksmbd_disp_drain(struct ksmbd_sched_disp *d,
			     struct list_head *batch, u64 now)
{
	struct ksmbd_sched_client *c, *ctmp;
	struct ksmbd_work *work, *tmp;

	list_for_each_entry_safe(work, tmp, &d->age, sched.age)
		ksmbd_disp_out(d, work, batch, now, KSMBD_DISP_FLAT);
	list_for_each_entry(c, &d->all, all) {
		list_for_each_entry_safe(work, tmp, &c->ctl, sched.entry) {
			list_move_tail(&work->sched.entry, batch);
			c->ctl_queued--;
			c->qbytes -= work->sched.mem;
			c->unauth++;
		}
		if (c->waiters)
			wake_up(&c->wq);
	}
	list_for_each_entry_safe(c, ctmp, &d->held, held) {
		list_del_init(&c->held);
		ksmbd_disp_client_put(d, c);
	}
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

/*
 * Caller holds d->lock.  Keep the guard running while requests wait: for
 * a slot, or for their client's rate (ksmbd_disp_hold()).
 */
static void ksmbd_disp_arm_guard(struct ksmbd_sched_disp *d)
{
	if (d->guard_armed || (!d->queued && list_empty(&d->held)) ||
	    d->dead || d->bypass)
		return;
	d->guard_armed = true;
	queue_delayed_work(system_wq, &d->guard,
			   msecs_to_jiffies(KSMBD_SCHED_STALL_MS / 2));
}

/*
 * Caller holds d->lock.  May @work, unauthenticated, run now as far as
 * its client's rate goes?  Only a request that needs a session (ksmbd
 * will refuse it) counts: its client runs KSMBD_SCHED_CLIENT_INVALID_PER_S
 * of them a second and KSMBD_SCHED_CLIENT_INVALID_BURST at once, by the
 * generic cell rate algorithm (ITU-T I.371's virtual scheduling: a token
 * bucket in one timestamp).  A peer that logs in never sends one; a
 * peer that streams them (READs with no session) is held to that rate,
 * its receiver stopped by its queue cap, instead of taking the server's
 * CPU for refusals.  Consumes the token when it returns true.
 */
static bool ksmbd_disp_invalid_ok(struct ksmbd_sched_client *c,
				  const struct ksmbd_work *work, u64 now)
{
	u64 t = NSEC_PER_SEC / KSMBD_SCHED_CLIENT_INVALID_PER_S;

	if (!work->sched.invalid)
		return true;
	if (c->invalid_tat > now + t * (KSMBD_SCHED_CLIENT_INVALID_BURST - 1))
		return false;
	c->invalid_tat = max(c->invalid_tat, now) + t;
	return true;
}

/*
 * Caller holds d->lock.  @c's next unauthenticated request waits for its
 * rate: the guard releases it (ksmbd_disp_release_held()).  The list
 * holds a reference on @c.
 */
static void ksmbd_disp_hold(struct ksmbd_sched_disp *d,
			    struct ksmbd_sched_client *c)
{
	if (list_empty(&c->held)) {
		list_add_tail(&c->held, &d->held);
		c->refs++;
		d->invalid_waits++;
	}
	ksmbd_disp_arm_guard(d);
}

/*
 * Caller holds d->lock.  Run @c's waiting unauthenticated requests onto
 * @batch, in order, while it runs fewer than KSMBD_SCHED_CLIENT_UNAUTH_MAX
 * and its rate allows the first.  Return: true if the first waits for
 * the rate.
 */
static bool ksmbd_disp_unauth_release(struct ksmbd_sched_disp *d,
				      struct ksmbd_sched_client *c,
				      struct list_head *batch, u64 now)
{
	struct ksmbd_work *next;
	bool held = false;

	while (!list_empty(&c->ctl) &&
	       c->unauth < KSMBD_SCHED_CLIENT_UNAUTH_MAX) {
		next = list_first_entry(&c->ctl, struct ksmbd_work,
					sched.entry);
		if (!ksmbd_disp_invalid_ok(c, next, now)) {
			held = true;
			break;
		}
		list_move_tail(&next->sched.entry, batch);
		WRITE_ONCE(c->ctl_queued, c->ctl_queued - 1);
		WRITE_ONCE(c->qbytes, c->qbytes - next->sched.mem);
		c->unauth++;
	}
	if (c->waiters && !ksmbd_disp_client_full(c))
		wake_up(&c->wq);
	return held;
}

/* Caller holds d->lock.  The guard's turn: release what the rates allow. */
static void ksmbd_disp_release_held(struct ksmbd_sched_disp *d,
				    struct list_head *batch, u64 now)
{
	struct ksmbd_sched_client *c, *tmp;

	list_for_each_entry_safe(c, tmp, &d->held, held) {
		if (ksmbd_disp_unauth_release(d, c, batch, now))
			continue;
		list_del_init(&c->held);
		ksmbd_disp_client_put(d, c);
	}
}

/*
 * Caller holds d->lock.  @work has held its slot so long that it is
 * stuck: the slot leaves the budget, so that the next request in turn
 * can run, and stays counted against its client's slot bound, so that
 * the client cannot take another in its place.
 */
static void ksmbd_disp_stick(struct ksmbd_sched_disp *d,
			     struct ksmbd_work *work)
{
	struct ksmbd_sched_client *c = work->sched.client;

	list_del_init(&work->sched.age);
	work->sched.stuck = true;
	d->inflight--;
	d->stuck++;
	d->stuck_total++;
	c->stuck++;
}

/*
 * Caller holds d->lock, requests wait for a slot.  The slot rules of the
 * guard (ksmbd_disp_guard_fn()): slots held past the watchdog's bound,
 * or long by a client above its share, and the oldest one when no slot
 * was given back for the stall guard's wait, are stuck.
 */
static void ksmbd_disp_guard_slots(struct ksmbd_sched_disp *d, u64 now)
{
	u64 stall = ksmbd_disp_stall_ns(d), held;
	u64 timeout = (u64)d->timeout_ms * NSEC_PER_MSEC;
	struct ksmbd_sched_client *c;
	struct ksmbd_work *work, *tmp;

	list_for_each_entry_safe(work, tmp, &d->running, sched.age) {
		held = now - work->sched.stime_ns;
		if (held < stall)
			break;
		c = work->sched.client;
		if (held >= timeout) {
			ksmbd_disp_stick(d, work);
			d->quarantined++;
		} else if (held >= max_t(u64, (u64)KSMBD_SCHED_HOLD_MS *
					 NSEC_PER_MSEC,
					 c->held_avg * KSMBD_SCHED_STALL_AVGS) &&
			   c->inflight - c->stuck > ksmbd_disp_cap(d, c)) {
			ksmbd_disp_stick(d, work);
		}
	}
	work = list_first_entry_or_null(&d->running, struct ksmbd_work,
					sched.age);
	if (work && d->inflight >= d->max_inflight &&
	    now - d->progress_ns >= max_t(u64, stall,
					  work->sched.client->held_avg *
					  KSMBD_SCHED_STALL_AVGS)) {
		ksmbd_disp_stick(d, work);
		d->stall_admits++;
		d->progress_ns = now;
	}
}

/*
 * The stall guard and the watchdog, every KSMBD_SCHED_STALL_MS / 2 while
 * requests wait.  Both deal with the requests that hold slots without
 * giving them back, and with their clients, never with the namespace:
 *  - the stall guard is the workqueue rescuer's idea: if every slot has
 *    been held for ksmbd_disp_stall_ns() (and for KSMBD_SCHED_STALL_AVGS
 *    times as long as the oldest holder's client lately held its slots)
 *    with no slot given back, the holders are blocked on something the
 *    dispatcher does not know about; the oldest one is stuck, and its
 *    slot leaves the budget;
 *  - a slot held for KSMBD_SCHED_HOLD_MS (or KSMBD_SCHED_STALL_AVGS times
 *    as long as its client's requests lately held theirs, if that is
 *    longer: a client whose work is long, such as server-side copies, is
 *    not stuck for doing it) by a client above its share of
 *    the slots (another client became active meanwhile) leaves the
 *    budget too;
 *  - the watchdog (sched_ext's, timeout_ms): a slot held for timeout_ms
 *    while others wait is stuck, its client's problem (quarantined),
 *    whatever the bound.
 * A stuck slot stays counted against its client until its request
 * finishes, so a client whose requests block ends up holding its own
 * share of stuck slots and waiting, while the others keep the budget.
 * Bypass (the flat path for the whole namespace) is left for the
 * dispatcher's own failure: a client that the round has not reached for
 * timeout_ms while slots are free and it is neither capped, parked nor at
 * its slot bound (alone in the queue, a client at its bound stays in the
 * round: ksmbd_disp_next()'s shortcut does not move it).
 */
static void ksmbd_disp_guard_fn(struct work_struct *wk)
{
	struct ksmbd_sched_disp *d = container_of(to_delayed_work(wk),
						  struct ksmbd_sched_disp,
						  guard);
	u64 now = ksmbd_disp_now(), oldest = 0;
	u64 timeout = (u64)d->timeout_ms * NSEC_PER_MSEC;
	struct ksmbd_sched_client *c = NULL;
	struct ksmbd_work *work;
	bool bypass = false;
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	if (d->dead || d->bypass || (!d->queued && list_empty(&d->held))) {
		d->guard_armed = false;
		spin_unlock(&d->lock);
		return;
	}
	ksmbd_disp_expire(d, now);
	ksmbd_disp_release_held(d, &batch, now);
	/* slots are stuck only while requests wait for one */
	if (d->queued)
		ksmbd_disp_guard_slots(d, now);
	ksmbd_disp_pick(d, &batch, now);

	if (d->queued) {
		work = list_first_entry(&d->age, struct ksmbd_work, sched.age);
		c = work->sched.client;
		oldest = now - max(work->sched.qtime_ns, c->turn_ns);
	}
	if (c && oldest >= timeout && d->inflight < d->max_inflight &&
	    (c->where == KSMBD_FLOW_NEW || c->where == KSMBD_FLOW_OLD) &&
	    !ksmbd_disp_at_bound(d, c)) {
		d->bypass = true;
		d->bypass_wait_ns = oldest;
		d->guard_armed = false;
		bypass = true;
		ksmbd_disp_drain(d, &batch, now);
	} else {
		queue_delayed_work(system_wq, &d->guard,
				   msecs_to_jiffies(KSMBD_SCHED_STALL_MS / 2));
	}
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
	if (bypass) {
		WARN_ONCE(1, "ksmbd: sched: a client waited %llu ms with free slots\n",
			  oldest / NSEC_PER_MSEC);
		pr_warn("ksmbd: sched: a client waited %llu ms for its turn in the dispatcher (netns %u): bypassed until the program is replaced\n",
			oldest / NSEC_PER_MSEC, d->netns_ino);
		trace_ksmbd_sched_bypass(d->netns_ino, "watchdog", oldest);
	}
}

/*
 * The limit timer, armed for the earliest time a limited client's limit
 * lets it go: limited clients whose limits allow go back to the round,
 * and the free slots are filled.  A limited client waits here, never in
 * a loop.
 */
static void ksmbd_disp_limit_fn(struct work_struct *wk)
{
	struct ksmbd_sched_disp *d = container_of(to_delayed_work(wk),
						  struct ksmbd_sched_disp,
						  limit_work);
	u64 now = ksmbd_disp_now();
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	d->limit_armed = false;
	if (d->dead || d->bypass) {
		spin_unlock(&d->lock);
		return;
	}
	ksmbd_disp_unlimit(d, now);
	ksmbd_disp_pick(d, &batch, now);
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
}

/* The same reservation, limit, burst and scope? */
static bool ksmbd_disp_qos_same(const struct ksmbd_disp_qos *a,
				const struct ksmbd_disp_qos *b)
{
	return a->res_bps == b->res_bps && a->lim_bps == b->lim_bps &&
	       a->burst_ns == b->burst_ns && a->res_iops == b->res_iops &&
	       a->lim_iops == b->lim_iops && a->aggregated == b->aggregated;
}

/**
 * ksmbd_disp_class_stale() - must the program give @class_word's class
 * its parameters?
 * @d:          the dispatcher, referenced by the caller
 * @class_word: the class word of a request bound to its client
 * @gen:        generation of the program attached
 *
 * Context: any; lockless (the class's counters live as long as @d).
 * Return: true when the class exists in @d and its parameters are not of
 * program @gen (init_class() has not been asked, or was asked by
 * another program), or were set KSMBD_SCHED_CLASS_REFRESH_MS ago or
 * more.
 */
bool ksmbd_disp_class_stale(struct ksmbd_sched_disp *d, u32 class_word,
			    u32 gen)
{
	struct ksmbd_sched_cstats *cs;

	cs = xa_load(&d->classes, KSMBD_SCHED_CLASS_ID_OF(class_word));
	return cs && (READ_ONCE(cs->qos.gen) != gen ||
		      ksmbd_disp_now() - READ_ONCE(cs->qos.stamp_ns) >=
		      (u64)KSMBD_SCHED_CLASS_REFRESH_MS * NSEC_PER_MSEC);
}

/**
 * ksmbd_disp_class_set() - a class's reservation and limit
 * @d:          the dispatcher
 * @class_word: a class word of the class
 * @p:          its parameters from init_class(), clamped
 * @gen:        generation of the program that gave them
 *
 * Takes effect at the next pick: clients of the class with requests
 * waiting join or leave the reservation pass, limited ones are looked
 * at again.  The same parameters again (the refresh of an active class)
 * only renew the stamp.  Context: process (the receiver thread); takes
 * d->lock.
 */
void ksmbd_disp_class_set(struct ksmbd_sched_disp *d, u32 class_word,
			  const struct ksmbd_sched_class_params *p, u32 gen)
{
	struct ksmbd_disp_qos q = {
		.res_iops = p->reservation_iops,
		.lim_iops = p->limit_iops,
		.res_bps = p->reservation_bps,
		.lim_bps = p->limit_bps,
		.burst_ns = (u64)(p->burst_ms ?: KSMBD_SCHED_BURST_MS_DEFAULT) *
			    NSEC_PER_MSEC,
		.aggregated = p->flags & KSMBD_SCHED_CLASS_AGGREGATED,
	};
	struct ksmbd_sched_cstats *cs;
	struct ksmbd_sched_client *c;
	u64 now = ksmbd_disp_now();
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	cs = xa_load(&d->classes, KSMBD_SCHED_CLASS_ID_OF(class_word));
	if (!cs) {
		spin_unlock(&d->lock);
		return;
	}
	/* read locklessly by ksmbd_disp_class_stale() */
	WRITE_ONCE(cs->qos.stamp_ns, now);
	WRITE_ONCE(cs->qos.gen, gen);
	if (ksmbd_disp_qos_same(&q, &cs->qos)) {
		spin_unlock(&d->lock);
		return;
	}
	cs->qos.res_bps = q.res_bps;
	cs->qos.lim_bps = q.lim_bps;
	cs->qos.burst_ns = q.burst_ns;
	cs->qos.res_iops = q.res_iops;
	cs->qos.lim_iops = q.lim_iops;
	cs->qos.aggregated = q.aggregated;
	list_for_each_entry(c, &d->all, all) {
		if (c->stats != cs || !c->queued)
			continue;
		if (ksmbd_disp_has_res(c) && list_empty(&c->resv))
			list_add_tail(&c->resv, &d->resv);
		else if (!ksmbd_disp_has_res(c))
			list_del_init(&c->resv);
	}
	if (!d->dead && !d->bypass) {
		ksmbd_disp_unlimit(d, now);
		ksmbd_disp_pick(d, &batch, now);
	}
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
}

/**
 * ksmbd_disp_class_count() - a session or tree connect joined a class
 * @d:          the dispatcher
 * @class_word: the class word classify_session() or classify_tree() gave
 * @tree:       a tree connect, else a session
 *
 * Counted in its class_names line of /proc/net/ksmbd_sched
 * (ksmbd_disp_show()); the class is made if it has had no request yet.
 * Context: process; takes d->lock.
 */
void ksmbd_disp_class_count(struct ksmbd_sched_disp *d, u32 class_word,
			    bool tree)
{
	struct ksmbd_sched_cstats *cs;

	spin_lock(&d->lock);
	cs = ksmbd_disp_class_stats(d, class_word);
	if (cs && tree)
		cs->trees++;
	else if (cs)
		cs->sessions++;
	spin_unlock(&d->lock);
}

/**
 * ksmbd_disp_kill() - detach a dispatcher: nothing waits any more
 * @d: the dispatcher; the attachment's reference is dropped
 *
 * Every waiting request is handed to its workqueue, oldest first, and
 * keeps its reference until it has run.  Clients stay while
 * connections are bound to them.  Context: process, may sleep; the
 * caller holds ksmbd_sched_mutex.
 */
void ksmbd_disp_kill(struct ksmbd_sched_disp *d)
{
	struct ksmbd_sched_client *c, *tmp;
	u64 now = ksmbd_disp_now();
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	d->dead = true;
	ksmbd_disp_drain(d, &batch, now);
	list_for_each_entry_safe(c, tmp, &d->all, all) {
		if (c->where == KSMBD_FLOW_NONE)
			continue;
		ksmbd_disp_flow_del(d, c);
		ksmbd_disp_client_put(d, c);
	}
	spin_unlock(&d->lock);
	cancel_delayed_work_sync(&d->guard);
	cancel_delayed_work_sync(&d->limit_work);
	ksmbd_disp_run_batch(d, &batch, now);
	ksmbd_disp_put(d);
}

/**
 * ksmbd_disp_update() - a replacing program's budget; re-arm the watchdog
 * @d:            the dispatcher
 * @max_inflight: the new program's budget, 0 for the default
 * @timeout_ms:   the new program's watchdog, ms, 0 for the default
 *
 * A larger budget dispatches waiting requests at once.  A dispatcher the
 * watchdog bypassed takes requests again.
 */
void ksmbd_disp_update(struct ksmbd_sched_disp *d, u32 max_inflight,
		       u32 timeout_ms)
{
	u64 now = ksmbd_disp_now();
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	ksmbd_disp_budget_set(d, max_inflight, now);
	d->timeout_ms = timeout_ms ?: KSMBD_SCHED_WATCHDOG_MS;
	d->bypass = false;
	d->limit_at = 0;
	ksmbd_disp_pick(d, &batch, now);
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
}

/*
 * The key address of a PER_PEER client: an IPv4 peer's whole address,
 * an IPv6 peer's prefix of the class word's PEER6 length (default /64:
 * a host may use any address of its subnet, RFC 8981, so a finer key
 * would let one host be as many clients as it likes).
 */
static void ksmbd_disp_peer_key(u8 *key, const struct ksmbd_sched_conn *ctx,
				u32 class_word)
{
	unsigned int bits = KSMBD_SCHED_CLASS_PEER6_OF(class_word) * 4;

	memcpy(key, ctx->peer_addr, 16);
	if (ctx->family != AF_INET6)
		return;
	if (!bits)
		bits = KSMBD_SCHED_CLASS_PEER6_DEFAULT * 4;
	bits = min(bits, 128U);
	if (bits % 8)
		key[bits / 8] &= 0xff << (8 - bits % 8);
	memset(key + DIV_ROUND_UP(bits, 8), 0, 16 - DIV_ROUND_UP(bits, 8));
}

/**
 * ksmbd_disp_conn_bind() - bind a connection to its client in @d
 * @d:          the dispatcher, referenced by the caller
 * @conn:       the connection, not bound (ksmbd_disp_conn_unbind())
 * @class_word: the class word of its next request
 * @guid:       the ClientGUID (16 bytes) that keys a PER_PEER class of a
 *              session or tree connect, or NULL for the peer's address
 *
 * Finds or creates the client of (@class_word's id, and if PER_PEER the
 * peer or @guid) and takes a reference on it and on @d for @conn.  The
 * connection stays bound while its requests keep that class word and
 * key; a request of another session or tree may rebind it.  Context: the connection's
 * receiver thread, may sleep.  On an error the connection's requests
 * run at once, outside the budget (counted in alloc_fail), and the next
 * one tries again; fail_function may inject -ENOMEM here to test that.
 *
 * Return: 0, -ENOLINK if @d is detached, -ENOMEM.
 */
int ksmbd_disp_conn_bind(struct ksmbd_sched_disp *d, struct ksmbd_conn *conn,
			 u32 class_word, const u8 *guid)
{
	struct ksmbd_sched_client_key key = {
		.class_id = KSMBD_SCHED_CLASS_ID_OF(class_word),
	};
	struct ksmbd_sched_client *c, *nc = NULL;
	u32 weight = KSMBD_SCHED_CLASS_WEIGHT_OF(class_word) ?: 1;
	int err = 0;

	if (!(class_word & KSMBD_SCHED_CLASS_PER_PEER)) {
		guid = NULL;
	} else if (guid) {
		memcpy(key.addr, guid, sizeof(key.addr));
		key.by_guid = 1;
	} else {
		ksmbd_disp_peer_key(key.addr, &conn->sched.ctx, class_word);
	}

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
		INIT_LIST_HEAD(&nc->ctl);
		INIT_LIST_HEAD(&nc->idle);
		INIT_LIST_HEAD(&nc->held);
		INIT_LIST_HEAD(&nc->resv);
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
	if (c->wcount) {
		d->wactive += weight - c->wcount;
		c->wcount = weight;
	}
	refcount_inc(&d->ref);
	if (conn->sched.last == d && conn->sched.last_client != c)
		conn->sched.rebound = true;
	conn->sched.last = d;
	conn->sched.last_client = c;
	conn->sched.disp = d;
	conn->sched.client = c;
	conn->sched.word = class_word;
	conn->sched.by_guid = !!guid;
	if (guid)
		memcpy(conn->sched.guid, guid, sizeof(conn->sched.guid));
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

/* Move @conn's requests waiting in @c to @batch, marked dropped. */
static void ksmbd_disp_stop_client(struct ksmbd_sched_disp *d,
				   struct ksmbd_sched_client *c,
				   struct ksmbd_conn *conn,
				   struct list_head *batch, u64 now)
{
	struct ksmbd_work *work, *tmp;

	list_for_each_entry_safe(work, tmp, &c->data, sched.entry) {
		if (work->conn != conn)
			continue;
		ksmbd_disp_dequeue(d, c, work);
		work->sched.dropped = true;
		d->dropped++;
		list_add_tail(&work->sched.entry, batch);
	}
	list_for_each_entry_safe(work, tmp, &c->ctl, sched.entry) {
		if (work->conn != conn)
			continue;
		list_move_tail(&work->sched.entry, batch);
		c->ctl_queued--;
		c->qbytes -= work->sched.mem;
		c->unauth++;
		work->sched.dropped = true;
		d->dropped++;
	}
	ksmbd_disp_activity(d, c, now);
}

/**
 * ksmbd_disp_conn_stop() - drop the waiting requests of a connection
 * @conn: the connection, being released (its receiver has stopped)
 *
 * They are handed to their workqueue marked dropped: freed, not run, so
 * that the connection's teardown does not wait for their turn.  A
 * connection whose requests went to more than one client (sessions or
 * trees of other classes) has every client looked at.
 */
void ksmbd_disp_conn_stop(struct ksmbd_conn *conn)
{
	struct ksmbd_sched_disp *d = conn->sched.disp;
	struct ksmbd_sched_client *c;
	u64 now = ksmbd_disp_now();
	LIST_HEAD(batch);

	if (!d)
		return;
	spin_lock(&d->lock);
	if (conn->sched.rebound)
		list_for_each_entry(c, &d->all, all)
			ksmbd_disp_stop_client(d, c, conn, &batch, now);
	else
		ksmbd_disp_stop_client(d, conn->sched.client, conn, &batch,
				       now);
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

/*
 * Caller holds d->lock.  An unauthenticated request (its connection had
 * no session when it arrived): it takes no slot of the budget, which is
 * for the work of clients that logged in, and its client runs at most
 * KSMBD_SCHED_CLIENT_UNAUTH_MAX such requests at once; the others wait
 * in its queue, counted against its caps, so that a peer flooding
 * NEGOTIATE or SESSION_SETUP (or anything before it logs in) delays
 * itself, not another client's mount.  Return: true if it may run now.
 */
static bool ksmbd_disp_unauth(struct ksmbd_sched_disp *d,
			      struct ksmbd_sched_client *c,
			      struct ksmbd_work *work, u64 now)
{
	work->sched.disp = d;
	work->sched.client = c;
	c->refs++;
	if (list_empty(&c->ctl) && c->unauth < KSMBD_SCHED_CLIENT_UNAUTH_MAX &&
	    ksmbd_disp_invalid_ok(c, work, now)) {
		c->unauth++;
		ksmbd_disp_activity(d, c, now);
		return true;
	}
	list_add_tail(&work->sched.entry, &c->ctl);
	WRITE_ONCE(c->ctl_queued, c->ctl_queued + 1);
	WRITE_ONCE(c->qbytes, c->qbytes + work->sched.mem);
	d->unauth_waits++;
	/* at the head with a run free: it waits for the rate */
	if (c->ctl_queued == 1 && c->unauth < KSMBD_SCHED_CLIENT_UNAUTH_MAX)
		ksmbd_disp_hold(d, c);
	ksmbd_disp_activity(d, c, now);
	return false;
}

/**
 * ksmbd_disp_queue() - a received request enters the dispatcher
 * @d:       the dispatcher; the caller's reference goes to @work
 * @work:    the request, with sched.verdict, bytes, cost, mem, class_word,
 *           command and unauth set
 * @control: it must not wait (ksmbd_sched.c: every PDU a control command)
 *
 * A control request of a client that logged in (or any request when @d
 * is detached or bypassed, or its connection has no client) is queued on
 * its workqueue at once; control requests are counted, and charged
 * KSMBD_SCHED_COST_MIN in their client's round.  An unauthenticated
 * request runs within its client's bound (ksmbd_disp_unauth()).  A data
 * request joins its client's queue and free slots are filled in
 * round-robin order.  Context: the connection's receiver thread; it
 * waits while its client is over its cap.
 */
void ksmbd_disp_queue(struct ksmbd_sched_disp *d, struct ksmbd_work *work,
		      bool control)
{
	struct ksmbd_sched_client *c = NULL;
	u64 now = ksmbd_disp_now();
	bool full = false;
	LIST_HEAD(batch);

	work->sched.qtime_ns = now;
	if (work->conn->sched.disp == d)
		c = work->conn->sched.client;
	if (!c || READ_ONCE(d->dead) || READ_ONCE(d->bypass))
		goto flat;

	spin_lock(&d->lock);
	if (d->dead || d->bypass) {
		spin_unlock(&d->lock);
		goto flat;
	}
	if (work->sched.unauth) {
		atomic64_inc(&c->stats->bypassed);
		c->control++;
		if (ksmbd_disp_unauth(d, c, work, now))
			list_add_tail(&work->sched.entry, &batch);
	} else if (control) {
		c->control++;
		if (c->where != KSMBD_FLOW_NONE)
			c->deficit = max_t(s64, c->deficit - KSMBD_SCHED_COST_MIN,
					   -KSMBD_SCHED_DEBT_MAX);
		spin_unlock(&d->lock);
		goto flat;
	} else {
		work->sched.disp = d;
		ksmbd_disp_enqueue(d, c, work, now);
		ksmbd_disp_pick(d, &batch, now);
		ksmbd_disp_arm_guard(d);
	}
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
 * Caller holds d->lock.  What @work really cost, bytes (Documentation/
 * dispatch.rst, "Cost"): the bytes it moved; a request other than a READ
 * (a small WRITE, FLUSH, SET_INFO, IOCTL, ...) that moved less than
 * KSMBD_SCHED_SEEKY_BYTES is charged the time it held its slot at the
 * storage's rate if that is more, as BFQ charges a seeky queue by its
 * service time and blk-iocost turns an IO into device time with a linear
 * model.  A READ is priced by its bytes alone: its slot's time is mostly
 * its wait behind others in the storage's queue, which would make an
 * interactive burst of small READs pay for the backlog it waits behind;
 * a small WRITE's is mostly its own (a synchronous write, its journal),
 * and at its bytes a client of 4 KiB WRITEs would take the storage.  The
 * rate is learnt from READs and WRITEs that moved at least
 * KSMBD_SCHED_SEEKY_BYTES without being stuck.  Between
 * KSMBD_SCHED_COST_MIN and KSMBD_SCHED_COST_MAX.
 */
static u32 ksmbd_disp_real_cost(struct ksmbd_sched_disp *d,
				const struct ksmbd_work *work)
{
	u64 moved = work->sched.moved, held = work->sched.held_ns, r;
	u16 cmd = work->sched.command;

	if (moved >= KSMBD_SCHED_SEEKY_BYTES && held &&
	    held < (u64)KSMBD_SCHED_STALL_MS * NSEC_PER_MSEC &&
	    (cmd == SMB2_READ_HE || cmd == SMB2_WRITE_HE)) {
		r = div64_u64(moved * NSEC_PER_USEC << 4, held);
		d->rate = d->rate ? d->rate - (d->rate >> 3) + (r >> 3) : r;
	}
	if (cmd != SMB2_READ_HE && moved < KSMBD_SCHED_SEEKY_BYTES && d->rate)
		moved = max(moved, mul_u64_u64_div_u64(held, d->rate,
						       NSEC_PER_USEC << 4));
	return clamp_t(u64, moved, KSMBD_SCHED_COST_MIN, KSMBD_SCHED_COST_MAX);
}

/*
 * Caller holds d->lock.  @work finished: its client is charged what it
 * really cost instead of the estimate taken when it was picked, if it
 * was charged then (contested service only).  A refused request costs
 * what its refusal cost; a short READ what it read.  A request with no
 * READ/WRITE bytes (an IOCTL, a FLUSH, a SET_INFO) has no price in its
 * fields: what it cost joins its client's estimate for the next one, so
 * that a client whose such requests are dear (server-side copies) is
 * picked at their price, not at the floor, and cannot take slot after
 * slot of the round before the first of them completes.
 */
static void ksmbd_disp_charge(struct ksmbd_sched_disp *d,
			      struct ksmbd_work *work)
{
	struct ksmbd_sched_client *c = work->sched.client;
	u32 cost = ksmbd_disp_real_cost(d, work);

	c->cost += cost;
	c->stats->cost += cost;
	ksmbd_disp_qos_settle(c, work, cost);
	if (!work->sched.bytes)
		c->est_cost = ksmbd_disp_avg(c->est_cost, cost);
	if (!work->sched.charged)
		return;
	c->deficit += (s64)work->sched.cost - cost;
	c->deficit = clamp_t(s64, c->deficit, -KSMBD_SCHED_DEBT_MAX,
			     c->quantum);
}

/*
 * Caller holds d->lock.  Give back @work's slot, if it has one; @done: it
 * finished (a sample of the adaptive budget, and its client is charged
 * what it really cost before the next pick, so that the pick sees the
 * deficit the client really has), else it waits.
 */
static void ksmbd_disp_put_slot(struct ksmbd_sched_disp *d,
				struct ksmbd_work *work,
				struct list_head *batch, u64 now, bool done)
{
	struct ksmbd_sched_client *c = work->sched.client;
	bool had = work->sched.slot;
	u64 held;

	if (had) {
		work->sched.slot = false;
		work->sched.held_ns += now - work->sched.stime_ns;
		if (work->sched.stuck) {
			work->sched.stuck = false;
			d->stuck--;
			c->stuck--;
		} else {
			list_del_init(&work->sched.age);
			d->inflight--;
			d->progress_ns = now;
			if (done) {
				ksmbd_disp_budget_sample(d, work, now);
				held = now - work->sched.stime_ns;
				ksmbd_disp_held(d, c, held);
			}
		}
		c->inflight--;
	}
	if (done && !work->sched.dropped)
		ksmbd_disp_charge(d, work);
	if (!had)
		return;
	if (c->where == KSMBD_FLOW_CAPPED)
		ksmbd_disp_to_old(d, c);
	/* nothing waiting, nothing running: sparse again */
	if (!c->inflight && !c->queued && c->where != KSMBD_FLOW_NONE) {
		ksmbd_disp_flow_del(d, c);
		ksmbd_disp_client_put(d, c);
	}
	ksmbd_disp_activity(d, c, now);
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
	u64 now = ksmbd_disp_now();
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	if (work->sched.slot && wait)
		d->wait_releases++;
	ksmbd_disp_put_slot(d, work, &batch, now, false);
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
}

/* Caller holds d->lock.  An unauthenticated request finished. */
static void ksmbd_disp_unauth_done(struct ksmbd_sched_disp *d,
				   struct ksmbd_sched_client *c,
				   struct list_head *batch, u64 now)
{
	c->unauth--;
	if (list_empty(&c->ctl) || d->dead || d->bypass)
		return;
	if (ksmbd_disp_unauth_release(d, c, batch, now))
		ksmbd_disp_hold(d, c);
}

/**
 * ksmbd_disp_work_done() - a tracked request finished
 * @work: the request, before it is freed
 *
 * Gives back its slot, charges its client what it really cost, drops its
 * client and its dispatcher reference.  Context: the worker that ran it.
 */
void ksmbd_disp_work_done(struct ksmbd_work *work)
{
	struct ksmbd_sched_disp *d = work->sched.disp;
	struct ksmbd_sched_client *c = work->sched.client;
	u64 now = ksmbd_disp_now();
	LIST_HEAD(batch);

	spin_lock(&d->lock);
	if (work->sched.unauth)
		ksmbd_disp_unauth_done(d, c, &batch, now);
	else
		ksmbd_disp_put_slot(d, work, &batch, now, true);
	ksmbd_disp_activity(d, c, now);
	ksmbd_disp_client_put(d, c);
	work->sched.client = NULL;
	spin_unlock(&d->lock);
	ksmbd_disp_run_batch(d, &batch, now);
	work->sched.disp = NULL;
	ksmbd_disp_put(d);
}

/*
 * The tokens of a limit's buckets at @now: I/Os and bytes that may run at
 * once, negative while the client or class is in debt; only the
 * dimensions the class limits.  " tokens_io N" in a class_qos line,
 * " tokens_io=N" in a client line (@kv).
 */
static void ksmbd_disp_show_tokens(struct seq_file *m,
				   const struct ksmbd_disp_qos *q,
				   const struct ksmbd_disp_tags *tg, u64 now,
				   bool kv)
{
	s64 left, n;

	if (q->lim_iops) {
		left = (s64)(now + q->burst_ns) - (s64)tg->lim_io;
		n = div_s64(div_s64(left, NSEC_PER_USEC) * q->lim_iops,
			    USEC_PER_SEC);
		seq_printf(m, kv ? " tokens_io=%lld" : " tokens_io %lld", n);
	}
	if (q->lim_bps) {
		left = (s64)(now + q->burst_ns) - (s64)tg->lim_byte;
		n = div_s64(left, NSEC_PER_MSEC) *
		    (s64)div_u64(q->lim_bps, MSEC_PER_SEC);
		seq_printf(m, kv ? " tokens_bytes=%lld" : " tokens_bytes %lld",
			   n);
	}
}

/**
 * ksmbd_disp_show() - the dispatcher's lines of /proc/net/ksmbd_sched
 * @m: the seq_file
 * @d: the dispatcher
 *
 * "key: value" lines, then per class seen a "class:" line and a
 * "class_cost:" line, and, if it has any, a "class_names:" line and a
 * "class_qos:" line:
 *   class: ID dispatched N bypassed N bytes N wait_ns N hist H0,H1,...
 *   class_cost: ID BYTES
 *   class_names: ID sessions N trees N
 *   class_qos: ID res_iops N res_bps N lim_iops N lim_bps N burst_ms N
 *	aggregated 0|1 limited N throttled_ns N res_served N res_missed N
 *	[tokens_io N] [tokens_bytes N]
 * where Hi counts waits in [2^(i-1), 2^i) us (H0: under 1 us) and BYTES
 * is what its finished requests were charged (ksmbd_disp_charge());
 * tokens are those of an aggregated class's buckets.
 * Context: process; the caller holds ksmbd_sched_mutex.
 */
void ksmbd_disp_show(struct seq_file *m, struct ksmbd_sched_disp *d)
{
	struct ksmbd_sched_cstats *cs, snap;
	u64 now = ksmbd_disp_now();
	struct ksmbd_disp_qos q;
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
	seq_printf(m, "stuck: %u\n", d->stuck);
	seq_printf(m, "stuck_total: %llu\n", d->stuck_total);
	seq_printf(m, "quarantined: %llu\n", d->quarantined);
	seq_printf(m, "capped: %llu\n", d->capped_total);
	seq_printf(m, "parked: %llu\n", d->parked_total);
	seq_printf(m, "unauth_waits: %llu\n", d->unauth_waits);
	seq_printf(m, "invalid_waits: %llu\n", d->invalid_waits);
	seq_printf(m, "client_unauth_max: %u\n", KSMBD_SCHED_CLIENT_UNAUTH_MAX);
	seq_printf(m, "cost_max: %u\n", KSMBD_SCHED_COST_MAX);
	seq_printf(m, "rate_bytes_per_us: %llu\n", d->rate >> 4);
	seq_printf(m, "queued: %u\n", d->queued);
	seq_printf(m, "clients: %u\n", d->nactive);
	seq_printf(m, "alloc_fail: %llu\n", d->alloc_fail);
	seq_printf(m, "clients_known: %u\n", d->nclients);
	seq_printf(m, "quantum: %u\n", KSMBD_SCHED_QUANTUM);
	seq_printf(m, "cost_min: %u\n", KSMBD_SCHED_COST_MIN);
	seq_printf(m, "wait_releases: %llu\n", d->wait_releases);
	seq_printf(m, "stall_ms: %u\n", KSMBD_SCHED_STALL_MS);
	seq_printf(m, "held_avg_ns: %llu\n", d->held_avg);
	seq_printf(m, "stall_admits: %llu\n", d->stall_admits);
	seq_printf(m, "dropped: %llu\n", d->dropped);
	seq_printf(m, "throttled: %llu\n", d->throttled);
	seq_printf(m, "client_queued_max: %u\n", KSMBD_SCHED_CLIENT_QUEUED_MAX);
	seq_printf(m, "client_qbytes_max: %u\n", KSMBD_SCHED_CLIENT_QBYTES_MAX);
	seq_printf(m, "watchdog_ms: %u\n", d->timeout_ms);
	seq_printf(m, "bypass: %d\n", d->bypass ? 1 : 0);
	seq_printf(m, "bypass_wait_ns: %llu\n", d->bypass_wait_ns);
	spin_unlock(&d->lock);

	xa_for_each(&d->classes, id, cs) {
		spin_lock(&d->lock);
		snap.dispatched = cs->dispatched;
		snap.bytes = cs->bytes;
		snap.wait_ns = cs->wait_ns;
		snap.cost = cs->cost;
		memcpy(snap.hist, cs->hist, sizeof(snap.hist));
		spin_unlock(&d->lock);
		seq_printf(m, "class: %lu dispatched %llu bypassed %lld bytes %llu wait_ns %llu hist ",
			   id, snap.dispatched, atomic64_read(&cs->bypassed),
			   snap.bytes, snap.wait_ns);
		for (i = 0; i < KSMBD_SCHED_WAIT_BUCKETS; i++)
			seq_printf(m, i ? ",%llu" : "%llu", snap.hist[i]);
		seq_putc(m, '\n');
		seq_printf(m, "class_cost: %lu %llu\n", id, snap.cost);
		spin_lock(&d->lock);
		q = cs->qos;
		snap.limited = cs->limited;
		snap.throttled_ns = cs->throttled_ns;
		snap.res_served = cs->res_served;
		snap.res_missed = cs->res_missed;
		snap.sessions = cs->sessions;
		snap.trees = cs->trees;
		snap.tags = cs->tags;
		spin_unlock(&d->lock);
		if (snap.sessions || snap.trees)
			seq_printf(m, "class_names: %lu sessions %llu trees %llu\n",
				   id, snap.sessions, snap.trees);
		if (!q.res_iops && !q.res_bps && !q.lim_iops && !q.lim_bps)
			continue;
		seq_printf(m, "class_qos: %lu res_iops %u res_bps %llu lim_iops %u lim_bps %llu burst_ms %llu aggregated %d limited %llu throttled_ns %llu res_served %llu res_missed %llu",
			   id, q.res_iops, q.res_bps, q.lim_iops, q.lim_bps,
			   div_u64(q.burst_ns, NSEC_PER_MSEC), q.aggregated,
			   snap.limited, snap.throttled_ns, snap.res_served,
			   snap.res_missed);
		if (q.aggregated)
			ksmbd_disp_show_tokens(m, &q, &snap.tags, now, false);
		seq_putc(m, '\n');
	}
}

/**
 * ksmbd_disp_show_clients() - /proc/net/ksmbd_sched_clients
 * @m: the seq_file
 * @d: the dispatcher
 *
 * One line per client:
 *   client id=N class=N weight=N peer=ADDR|- [guid=GUID] conns=N
 *   queued=N inflight=N
 *   dispatched=N bytes=N deficit=N cost=N control=N stuck=N unauth=N
 *   slot_bound=N [tokens_io=N] [tokens_bytes=N]
 * (the tokens of its own buckets, in a limited class that is not
 * aggregated)
 * Context: process; the caller holds ksmbd_sched_mutex.
 */
void ksmbd_disp_show_clients(struct seq_file *m, struct ksmbd_sched_disp *d)
{
	u64 now = ksmbd_disp_now();
	struct ksmbd_sched_client *c;

	spin_lock(&d->lock);
	list_for_each_entry(c, &d->all, all) {
		seq_printf(m, "client id=%u class=%u weight=%u ", c->id,
			   KSMBD_SCHED_CLASS_ID_OF(c->class_word),
			   c->quantum / KSMBD_SCHED_QUANTUM);
		if (c->key.by_guid)
			seq_printf(m, "peer=- guid=%pUl", c->key.addr);
		else if (c->class_word & KSMBD_SCHED_CLASS_PER_PEER)
			seq_printf(m, "peer=%pI6c", c->key.addr);
		else
			seq_puts(m, "peer=-");
		seq_printf(m, " conns=%u queued=%u inflight=%u dispatched=%llu bytes=%llu deficit=%lld cost=%llu control=%llu stuck=%u unauth=%u slot_bound=%u",
			   c->conns, c->queued, c->inflight, c->dispatched,
			   c->bytes, c->deficit, c->cost, c->control, c->stuck,
			   c->unauth, ksmbd_disp_cap(d, c));
		if (!c->stats->qos.aggregated)
			ksmbd_disp_show_tokens(m, &c->stats->qos, &c->tags,
					       now, true);
		seq_putc(m, '\n');
	}
	spin_unlock(&d->lock);
}

#if IS_ENABLED(CONFIG_SMB_SERVER_BPF_SCHED_KUNIT_TEST)
#include "ksmbd_sched_disp_test.c"
#endif
