/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dispatcher of ksmbd's BPF scheduling hook: what ksmbd_sched.c (the
 * struct_ops glue and per-netns attach) calls.  See ksmbd_sched_disp.c
 * and Documentation/dispatch.rst.
 */
#ifndef __KSMBD_SCHED_DISP_H__
#define __KSMBD_SCHED_DISP_H__

#include <linux/sizes.h>
#include <linux/types.h>

struct ksmbd_conn;
struct ksmbd_work;
struct ksmbd_sched_disp;
struct seq_file;

/**
 * enum ksmbd_sched_consts - the dispatcher's defaults, in one place
 * @KSMBD_SCHED_INFLIGHT_PER_CPU: the default budget starts at this many
 *	slots per possible CPU, and never grows above it
 * @KSMBD_SCHED_INFLIGHT_MIN: at least this many: one client keeping this
 *	many requests outstanding (the queue depth of an interactive burst,
 *	fio's iodepth=32) is not held back before the budget has learnt
 * @KSMBD_SCHED_INFLIGHT_MAX: at most this many
 * @KSMBD_SCHED_ADAPT_MIN_PER_CPU: the default budget never shrinks below
 *	this many slots per possible CPU, so that every CPU has work
 * @KSMBD_SCHED_ADAPT_MIN: nor below this many
 * @KSMBD_SCHED_ADAPT_ALPHA: the default budget grows while fewer than
 *	this many of its requests queue in the storage (TCP Vegas's alpha)
 * @KSMBD_SCHED_ADAPT_BETA: it shrinks while more than this many do
 *	(Vegas's beta)
 * @KSMBD_SCHED_ADAPT_WINDOW: fewest finished requests in one window of
 *	the adaptive budget (a window is as many as the budget)
 * @KSMBD_SCHED_ADAPT_PROBE_MS: the storage's own service time is measured
 *	again this often, with the budget at its minimum for one window
 * @KSMBD_SCHED_COST_MIN: cost floor of a request, bytes: a request that
 *	moves less (metadata, a 1-byte READ) is charged this much
 * @KSMBD_SCHED_COST_MAX: cost ceiling of one request, bytes, up front and
 *	at completion: a server-side copy's most (16 MiB, as ksmbd's
 *	copychunk limit)
 * @KSMBD_SCHED_DEBT_MAX: a client's deficit never falls below minus this
 * @KSMBD_SCHED_SEEKY_BYTES: a request that moves less than this is
 *	charged by the time it held its slot if that costs more (BFQ's
 *	service-time charging of seeky queues)
 * @KSMBD_SCHED_QUANTUM: deficit round robin quantum of a client of
 *	weight 1, bytes; weight w gives w times as much
 * @KSMBD_SCHED_WHEEL: rounds of the debt wheel, a power of two above
 *	KSMBD_SCHED_DEBT_MAX / KSMBD_SCHED_QUANTUM + 1: a client in debt
 *	waits there for the round that repays it, so no pick passes over it
 *	once per quantum
 * @KSMBD_SCHED_STALL_MS: stall guard: when no slot was given back for
 *	this long while requests wait, the oldest slot is taken out of the
 *	budget (its request is stuck); a request that held its slot this
 *	long is no sample of the adaptive budget
 * @KSMBD_SCHED_STALL_AVGS: ... or this many times the average time
 *	requests lately held their slots, if that is longer
 * @KSMBD_SCHED_HOLD_MS: a slot held this long by a client above its share
 *	of the slots, while others wait, leaves the budget (stuck)
 * @KSMBD_SCHED_WATCHDOG_MS: default watchdog (ops timeout_ms 0): requests
 *	holding their slots this long while others wait are stuck: their
 *	slots leave the budget and stay counted against their client
 * @KSMBD_SCHED_IDLE_MS: a client that had nothing waiting or running for
 *	this long no longer counts in the shares of the slot bound
 * @KSMBD_SCHED_CLIENT_QUEUED_MAX: requests one client may have waiting;
 *	above it its connections' receivers stop reading
 * @KSMBD_SCHED_CLIENT_QBYTES_MAX: bytes of received messages one client
 *	may have waiting, same effect
 * @KSMBD_SCHED_CLIENT_UNAUTH_MAX: requests received before their
 *	connection had a session (NEGOTIATE, SESSION_SETUP, anything a peer
 *	sends before it logs in) that one client runs at once; the others
 *	wait in its queue
 * @KSMBD_SCHED_CLIENT_INVALID_PER_S: of those, requests that cannot
 *	succeed before a session (any command but NEGOTIATE, SESSION_SETUP
 *	and CANCEL: MS-SMB2 3.3.5.2.9 and 3.3.5.17 want a session for the
 *	others) one client runs per second, on average ...
 * @KSMBD_SCHED_CLIENT_INVALID_BURST: ... and at most this many at a time
 *	after a pause (a token bucket, GCRA)
 * @KSMBD_SCHED_CLASS_REFRESH_MS: a class with requests is given its
 *	parameters by init_class() again this often, so that a change of
 *	the program's maps takes effect within it
 */
enum ksmbd_sched_consts {
	KSMBD_SCHED_INFLIGHT_PER_CPU	= 16,
	KSMBD_SCHED_INFLIGHT_MIN	= 32,
	KSMBD_SCHED_INFLIGHT_MAX	= 256,
	KSMBD_SCHED_ADAPT_MIN_PER_CPU	= 2,
	KSMBD_SCHED_ADAPT_MIN		= 4,
	KSMBD_SCHED_ADAPT_ALPHA		= 1,
	KSMBD_SCHED_ADAPT_BETA		= 3,
	KSMBD_SCHED_ADAPT_WINDOW	= 8,
	KSMBD_SCHED_ADAPT_PROBE_MS	= 10000,
	KSMBD_SCHED_COST_MIN		= SZ_4K,
	KSMBD_SCHED_COST_MAX		= SZ_16M,
	KSMBD_SCHED_DEBT_MAX		= SZ_32M,
	KSMBD_SCHED_SEEKY_BYTES		= SZ_64K,
	KSMBD_SCHED_QUANTUM		= SZ_128K,
	KSMBD_SCHED_WHEEL		= 512,
	KSMBD_SCHED_STALL_MS		= 200,
	KSMBD_SCHED_STALL_AVGS		= 4,
	KSMBD_SCHED_HOLD_MS		= 1000,
	KSMBD_SCHED_WATCHDOG_MS		= 30000,
	KSMBD_SCHED_IDLE_MS		= 500,
	KSMBD_SCHED_CLIENT_QUEUED_MAX	= 256,
	KSMBD_SCHED_CLIENT_QBYTES_MAX	= SZ_32M,
	KSMBD_SCHED_CLIENT_UNAUTH_MAX	= 2,
	KSMBD_SCHED_CLIENT_INVALID_PER_S = 16,
	KSMBD_SCHED_CLIENT_INVALID_BURST = 16,
	KSMBD_SCHED_CLASS_REFRESH_MS	= 1000,
};

static_assert(KSMBD_SCHED_DEBT_MAX / KSMBD_SCHED_QUANTUM + 1 < KSMBD_SCHED_WHEEL);
static_assert(!(KSMBD_SCHED_WHEEL & (KSMBD_SCHED_WHEEL - 1)));

struct ksmbd_sched_disp *ksmbd_disp_alloc(u32 netns_ino, u32 max_inflight,
					  u32 timeout_ms);
bool ksmbd_disp_tryget(struct ksmbd_sched_disp *d);
void ksmbd_disp_put(struct ksmbd_sched_disp *d);
void ksmbd_disp_kill(struct ksmbd_sched_disp *d);
void ksmbd_disp_update(struct ksmbd_sched_disp *d, u32 max_inflight,
		       u32 timeout_ms);
int ksmbd_disp_conn_bind(struct ksmbd_sched_disp *d, struct ksmbd_conn *conn,
			 u32 class_word, const u8 *guid);
void ksmbd_disp_conn_unbind(struct ksmbd_conn *conn);
bool ksmbd_disp_class_stale(struct ksmbd_sched_disp *d, u32 class_word,
			    u32 gen);
void ksmbd_disp_class_set(struct ksmbd_sched_disp *d, u32 class_word,
			  const struct ksmbd_sched_class_params *p, u32 gen);
void ksmbd_disp_class_count(struct ksmbd_sched_disp *d, u32 class_word,
			    bool tree);
void ksmbd_disp_conn_stop(struct ksmbd_conn *conn);
void ksmbd_disp_queue(struct ksmbd_sched_disp *d, struct ksmbd_work *work,
		      bool control);
void ksmbd_disp_work_done(struct ksmbd_work *work);
void ksmbd_disp_release_slot(struct ksmbd_work *work, bool wait);
void ksmbd_disp_show(struct seq_file *m, struct ksmbd_sched_disp *d);
void ksmbd_disp_show_clients(struct seq_file *m, struct ksmbd_sched_disp *d);

/* in ksmbd_sched.c: queue @work on the workqueue its verdict chose */
void ksmbd_sched_run(struct ksmbd_work *work);

#endif /* __KSMBD_SCHED_DISP_H__ */
