/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * BPF-controlled scheduling for ksmbd: the struct_ops hook.
 *
 * A program of struct_ops type ksmbd_sched_ops is attached per network
 * namespace through a BPF link.  It classifies each accepted connection,
 * session and tree connect (class words) and gives each received request
 * a verdict (queue, splice); the contexts and words are in ksmbd_sched_abi.h.  With
 * nothing attached in any namespace a static key keeps ksmbd on its
 * original path.
 */
#ifndef __KSMBD_SCHED_H__
#define __KSMBD_SCHED_H__

#include <linux/jump_label.h>
#include <linux/types.h>

#include "ksmbd_sched_abi.h"
#include "ksmbd_work.h"

struct ksmbd_conn;
struct socket;

/**
 * struct ksmbd_sched_ops - BPF scheduling operations for ksmbd
 *
 * Every callback is optional.  Data members follow the callbacks.  The
 * kernel clamps every returned word; a program is never trusted for the
 * safety of the server.
 *
 * @classify_conn: Called once per accepted connection, in process context
 *	(the listener thread), after the peer address is known and before
 *	the connection reads its first request.  Returns the class word:
 *	class id in bits 0-15, weight in bits 16-23 (0 means 1), the
 *	IPv6 key length of a PER_PEER class in bits 24-29,
 *	KSMBD_SCHED_CLASS_PER_PEER in bit 31.  Reserved bit 30 is
 *	cleared and counted.  A connection accepted before the program
 *	was attached (load or replace) is classified by it at its next
 *	request, from the same context (the receiver thread, under RCU).
 *	Default (no callback): 0, the anonymous class.
 * @classify_req: Called once per received message, in process context
 *	(the connection's receiver thread), before it is queued for
 *	execution.  Only the first PDU's header is visible; an encrypted
 *	message is decrypted first (KSMBD_SCHED_REQ_ENCRYPTED is set).
 *	Returns the verdict
 *	word: queue in bits 0-3 (KSMBD_SCHED_QUEUE_*; unknown values mean
 *	the per-CPU queue and are counted), KSMBD_SCHED_VERDICT_SPLICE in
 *	bit 8.  Other bits are ignored.  Default: 0 (per-CPU queue, copy).
 * @classify_session: Called for a session once its SESSION_SETUP has
 *	succeeded (MS-SMB2 3.3.5.5), at the first request that names it
 *	(in process context, the receiver thread of the connection it
 *	came on, under RCU), and again after the program is replaced.
 *	Sees the account the login was mapped to, the ClientGUID, the
 *	dialect, whether the session signs and encrypts, and the
 *	connection's class word.  Returns the session's class word, as
 *	classify_conn(), or KSMBD_SCHED_CLASS_INHERIT for the connection's.
 *	A sealed request is classified by its session once decrypted.
 *	Default: KSMBD_SCHED_CLASS_INHERIT.
 * @classify_tree: Called for a tree connect once its TREE_CONNECT has
 *	succeeded (MS-SMB2 3.3.5.7), at the first request that names it,
 *	from the same context, also under its session's tree_conns_lock
 *	(read), and again after the program is replaced.  Sees the share's
 *	name and flags and its session's class word in effect.  Returns
 *	the tree's class word, or KSMBD_SCHED_CLASS_INHERIT for its
 *	session's.  Default: KSMBD_SCHED_CLASS_INHERIT.
 * @init_class: Called when a class id first has a request dispatched
 *	under this program, from the receiver thread of that request's
 *	connection (process context, under RCU), again after the program
 *	is replaced, and at most once a second while the class has
 *	requests, so that a change of the program's maps takes effect
 *	within a second.  Writes the class's reservation, limit, burst
 *	and scope into the members of @p it may write (all but class_id
 *	and reserved); what it leaves zero is none.  The kernel clamps
 *	them (enum ksmbd_sched_qos) and counts what it clamped.  Default:
 *	no reservation, no limit.
 * @max_inflight: Dispatch budget: data requests of this netns executing
 *	at once; the next one is taken by deficit round robin across
 *	clients.  0 means the kernel default (enum ksmbd_sched_consts in
 *	ksmbd_sched_disp.h: 16 per possible CPU, at least 32, at most 256).
 *	Above KSMBD_SCHED_MAX_INFLIGHT_LIMIT the attach fails with -E2BIG.
 * @timeout_ms: Watchdog, ms: a client whose requests have held their
 *	slots this long while others wait has those slots taken out of the
 *	budget (Documentation/dispatch.rst, "Stuck clients").  0 means the
 *	kernel default, KSMBD_SCHED_WATCHDOG_MS.  Below
 *	KSMBD_SCHED_TIMEOUT_MS_MIN the attach fails with -EINVAL, above
 *	KSMBD_SCHED_TIMEOUT_MS_LIMIT with -E2BIG (sched_ext's timeout_ms).
 * @flags: KSMBD_SCHED_OPS_* flags; none are defined, any bit set fails
 *	the attach with -EINVAL.
 * @name: Name of the program, required (at least one character; letters,
 *	digits, '_' and '.'), shown in tracepoints and status.
 */
struct ksmbd_sched_ops {
	u32 (*classify_conn)(const struct ksmbd_sched_conn *c);
	u32 (*classify_req)(const struct ksmbd_sched_req *r);
	u32 (*classify_session)(const struct ksmbd_sched_session *s);
	u32 (*classify_tree)(const struct ksmbd_sched_tree *t);
	void (*init_class)(struct ksmbd_sched_class_params *p);
	u32 max_inflight;
	u32 timeout_ms;
	u32 flags;
	char name[KSMBD_SCHED_NAME_LEN];
};

#if IS_ENABLED(CONFIG_SMB_SERVER_BPF_SCHED)

DECLARE_STATIC_KEY_FALSE(ksmbd_sched_enabled);

/**
 * struct ksmbd_sched_held - what the feature holds, for leak accounting
 * @payloads:      spliced READ payloads attached to work items
 * @payload_pages: pages those payloads reference, in PAGE_SIZE units
 *
 * Global (pages are not per netns), shown in every /proc/net/ksmbd_sched.
 * Both are exactly 0 when no spliced READ is between its read and the
 * end of its send: tests assert that after killing or stopping clients.
 * A page the socket still references once its payload is freed belongs
 * to the socket's skbs and is freed with them.
 */
struct ksmbd_sched_held {
	atomic_long_t payloads;
	atomic_long_t payload_pages;
};

extern struct ksmbd_sched_held ksmbd_sched_held;

int ksmbd_sched_init(void);
void ksmbd_sched_exit(void);
void ksmbd_sched_conn_init(struct ksmbd_conn *conn, struct socket *sock);
void ksmbd_sched_conn_free(struct ksmbd_conn *conn);
void __ksmbd_sched_queue_work(struct ksmbd_work *work);
void __ksmbd_sched_work_done(struct ksmbd_work *work);
void __ksmbd_sched_release_slot(struct ksmbd_work *work);
void __ksmbd_sched_wait(void);
bool __ksmbd_sched_holds_slot(void);
void __ksmbd_sched_conn_stop(struct ksmbd_conn *conn);

/**
 * ksmbd_sched_queue_work() - queue a received request for execution
 * @work: the request, with request_buf holding the received message and
 *        work->work initialised
 *
 * With no program attached anywhere this is ksmbd_queue_work().  With a
 * program attached in the connection's namespace, an encrypted message is
 * decrypted, the program's verdict picks the workqueue and the
 * namespace's dispatcher decides when the request runs (deficit round
 * robin across clients, bounded in flight).
 *
 * Context: the connection's receiver thread; may sleep (decryption, and
 * while the connection's client has its cap of requests waiting).
 */
static inline void ksmbd_sched_queue_work(struct ksmbd_work *work)
{
	if (static_branch_unlikely(&ksmbd_sched_enabled))
		__ksmbd_sched_queue_work(work);
	else
		ksmbd_queue_work(work);
}

/**
 * ksmbd_sched_work_done() - a request finished executing
 * @work: the request, before it is freed
 *
 * Returns its in-flight slot to the dispatcher, which dispatches the next
 * request in turn, and drops the request's references on its client and
 * on the dispatcher.
 * Context: the worker that ran the request.
 */
static inline void ksmbd_sched_work_done(struct ksmbd_work *work)
{
	if (unlikely(work->sched.disp))
		__ksmbd_sched_work_done(work);
}

/**
 * ksmbd_sched_release_slot() - a request stops counting against the budget
 * @work: the request
 *
 * Called when a request goes async (e.g. a blocking byte-range LOCK, a
 * CREATE waiting for a lease break acknowledgment), so that a request it
 * waits for (the UNLOCK, a CANCEL, the acknowledgment) can be dispatched.
 * Context: its worker.
 */
static inline void ksmbd_sched_release_slot(struct ksmbd_work *work)
{
	if (unlikely(work->sched.slot))
		__ksmbd_sched_release_slot(work);
}

/**
 * ksmbd_sched_wait() - the executing request waits for another party
 *
 * The request the calling worker executes (if it is one the dispatcher
 * gave a slot) gives its slot back for good: what it waits for (a break
 * acknowledgment, another break in progress, its connection's other
 * reply, a client reading its socket) may need that slot, and the other
 * clients must not wait for it.  Call it right before the wait.
 * Context: process, may be called anywhere a request may sleep.
 */
static inline void ksmbd_sched_wait(void)
{
	if (static_branch_unlikely(&ksmbd_sched_enabled))
		__ksmbd_sched_wait();
}

/**
 * ksmbd_sched_holds_slot() - does the executing request hold a slot?
 *
 * A sender that holds one tries without blocking first, and calls
 * ksmbd_sched_wait() before it blocks on the peer.
 * Context: process.
 *
 * Return: true if it does.
 */
static inline bool ksmbd_sched_holds_slot(void)
{
	return static_branch_unlikely(&ksmbd_sched_enabled) &&
	       __ksmbd_sched_holds_slot();
}

/**
 * ksmbd_sched_conn_stop() - a connection is being released
 * @conn: the connection; its receiver has stopped reading
 *
 * Its requests still waiting in the dispatcher are dropped: freed by
 * their worker without being run.  Context: its receiver thread.
 */
static inline void ksmbd_sched_conn_stop(struct ksmbd_conn *conn)
{
	if (static_branch_unlikely(&ksmbd_sched_enabled))
		__ksmbd_sched_conn_stop(conn);
}

/**
 * ksmbd_sched_moved() - count bytes a request really moved
 * @work:  the request
 * @bytes: bytes it read and sends (READ), wrote (WRITE) or copied
 *         (FSCTL_SRV_COPYCHUNK, MS-SMB2 3.3.5.15.6)
 *
 * The dispatcher charges the request's client what it moved once it
 * completes, instead of the Length it claimed (Documentation/dispatch.rst,
 * "Cost").  Context: the worker that runs @work.
 */
static inline void ksmbd_sched_moved(struct ksmbd_work *work, u64 bytes)
{
	work->sched.moved = min_t(u64, (u64)work->sched.moved + bytes,
				  U32_MAX);
}

/**
 * ksmbd_sched_work_dropped() - must this request be freed without running?
 * @work: the request
 *
 * Return: true when its connection went away while it waited.
 */
static inline bool ksmbd_sched_work_dropped(struct ksmbd_work *work)
{
	return unlikely(work->sched.dropped);
}

#else /* !CONFIG_SMB_SERVER_BPF_SCHED */

static inline int ksmbd_sched_init(void)
{
	return 0;
}

static inline void ksmbd_sched_exit(void)
{
}

static inline void ksmbd_sched_conn_init(struct ksmbd_conn *conn,
					 struct socket *sock)
{
}

static inline void ksmbd_sched_conn_free(struct ksmbd_conn *conn)
{
}

static inline void ksmbd_sched_queue_work(struct ksmbd_work *work)
{
	ksmbd_queue_work(work);
}

static inline void ksmbd_sched_work_done(struct ksmbd_work *work)
{
}

static inline void ksmbd_sched_release_slot(struct ksmbd_work *work)
{
}

static inline void ksmbd_sched_wait(void)
{
}

static inline bool ksmbd_sched_holds_slot(void)
{
	return false;
}

static inline void ksmbd_sched_conn_stop(struct ksmbd_conn *conn)
{
}

static inline void ksmbd_sched_moved(struct ksmbd_work *work, u64 bytes)
{
}

static inline bool ksmbd_sched_work_dropped(struct ksmbd_work *work)
{
	return false;
}

#endif /* CONFIG_SMB_SERVER_BPF_SCHED */

#endif /* __KSMBD_SCHED_H__ */
