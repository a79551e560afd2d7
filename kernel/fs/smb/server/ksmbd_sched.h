/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * BPF-controlled scheduling for ksmbd: the struct_ops hook.
 *
 * A program of struct_ops type ksmbd_sched_ops is attached per network
 * namespace through a BPF link.  It classifies each accepted connection
 * (class word, see include/uapi/linux/ksmbd_sched.h) and gives each
 * received request a verdict (queue, splice).  With nothing attached in
 * any namespace a static key keeps ksmbd on its original path.
 */
#ifndef __KSMBD_SCHED_H__
#define __KSMBD_SCHED_H__

#include <linux/jump_label.h>
#include <linux/types.h>
#include <uapi/linux/ksmbd_sched.h>

struct ksmbd_conn;
struct ksmbd_work;
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
 *	class id in bits 0-15, weight in bits 16-23 (0 means 1),
 *	KSMBD_SCHED_CLASS_PER_PEER in bit 31.  Reserved bits 24-30 are
 *	cleared and counted.  The connection keeps this class for life.
 *	Default (no callback): 0, the anonymous class.
 * @classify_req: Called once per received message, in process context
 *	(the connection's receiver thread), before it is queued for
 *	execution.  Only the first PDU's header is visible, and only the
 *	transform header of an encrypted message.  Returns the verdict
 *	word: queue in bits 0-3 (KSMBD_SCHED_QUEUE_*; unknown values mean
 *	the per-CPU queue and are counted), KSMBD_SCHED_VERDICT_SPLICE in
 *	bit 8.  Other bits are ignored.  Default: 0 (per-CPU queue, copy).
 * @max_inflight: Dispatch budget: requests of this netns executing at
 *	once.  0 means the kernel default.  Above
 *	KSMBD_SCHED_MAX_INFLIGHT_LIMIT the attach fails with -E2BIG.
 * @flags: KSMBD_SCHED_OPS_* flags; none are defined, any bit set fails
 *	the attach with -EINVAL.
 * @name: Name of the program, required (at least one character; letters,
 *	digits, '_' and '.'), shown in tracepoints and status.
 */
struct ksmbd_sched_ops {
	u32 (*classify_conn)(const struct ksmbd_sched_conn *c);
	u32 (*classify_req)(const struct ksmbd_sched_req *r);
	u32 max_inflight;
	u32 flags;
	char name[KSMBD_SCHED_NAME_LEN];
};

#if IS_ENABLED(CONFIG_SMB_SERVER_BPF_SCHED)
DECLARE_STATIC_KEY_FALSE(ksmbd_sched_enabled);

int ksmbd_sched_init(void);
void ksmbd_sched_exit(void);
void ksmbd_sched_conn_init(struct ksmbd_conn *conn, struct socket *sock);
void ksmbd_sched_conn_free(struct ksmbd_conn *conn);
void __ksmbd_sched_conn_accept(struct ksmbd_conn *conn, struct socket *sock);
void __ksmbd_sched_classify_req(struct ksmbd_work *work);

/**
 * ksmbd_sched_conn_accept() - classify a newly accepted connection
 * @conn: the new connection; its peer_addr must be set
 * @sock: its socket (gives the network namespace and local address)
 *
 * Context: process context, may sleep.  Sets conn->sched_class; 0 when no
 * program is attached in the socket's namespace.
 */
static inline void ksmbd_sched_conn_accept(struct ksmbd_conn *conn,
					   struct socket *sock)
{
	if (static_branch_unlikely(&ksmbd_sched_enabled))
		__ksmbd_sched_conn_accept(conn, sock);
}

/**
 * ksmbd_sched_classify_req() - ask the attached program for a verdict
 * @work: the request, with request_buf holding the received message
 *
 * Context: the connection's receiver thread.  Sets work->sched_verdict;
 * 0 when no program is attached.
 */
static inline void ksmbd_sched_classify_req(struct ksmbd_work *work)
{
	if (static_branch_unlikely(&ksmbd_sched_enabled))
		__ksmbd_sched_classify_req(work);
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

static inline void ksmbd_sched_classify_req(struct ksmbd_work *work)
{
}

#endif /* CONFIG_SMB_SERVER_BPF_SCHED */

#endif /* __KSMBD_SCHED_H__ */
