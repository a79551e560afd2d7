/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * ksmbd_sched_abi.h - the values of ksmbd's scheduling constants, as this
 * project's programs and loader use them
 *
 * ksmbd has no uapi header for its BPF scheduling hook (as sched_ext and
 * bpf_tcp_ca have none): the constants are BTF enums of ksmbd.ko (or of
 * vmlinux when ksmbd is built in), named as below, and the contexts are
 * read by CO-RE (ksmbd_sched_ops.bpf.h).  This file is the one copy of
 * the values in user space.  smb-classify compares every member listed in
 * tools/smb-classify/abi.c with the running kernel's BTF before it loads
 * anything, and refuses a kernel that disagrees; make check compares
 * every enumerator here with the kernel's header (scripts/abi-compare.sh).
 *
 * See Documentation/ksmbd-sched.rst, "ABI".
 */
#ifndef KSMBD_SCHED_ABI_H
#define KSMBD_SCHED_ABI_H

#include <linux/types.h>

/* Sizes and bounds of struct ksmbd_sched_ops. */
enum ksmbd_sched_limits {
	KSMBD_SCHED_NAME_LEN		= 16,		/* bytes, with the NUL */
	KSMBD_SCHED_MAX_INFLIGHT_LIMIT	= 4096,		/* requests; -E2BIG */
	KSMBD_SCHED_TIMEOUT_MS_MIN	= 1000,		/* ms, unless 0; -EINVAL */
	KSMBD_SCHED_TIMEOUT_MS_LIMIT	= 600000,	/* ms; -E2BIG */
	KSMBD_SCHED_USER_LEN		= 64,		/* bytes, with the NUL */
	KSMBD_SCHED_SHARE_LEN		= 64,		/* bytes, with the NUL */
};

/* Bits of ksmbd_sched_ops::flags: none defined, any bit is -EINVAL. */
enum ksmbd_sched_ops_flags {
	KSMBD_SCHED_OPS_FLAGS_MASK	= 0,
};

/* ksmbd_sched_conn::transport; SMB Direct connections are not classified */
enum ksmbd_sched_transport {
	KSMBD_SCHED_TRANSPORT_TCP	= 0,
};

/* Bits of ksmbd_sched_req::flags (MS-SMB2 sections in the kernel-doc). */
enum ksmbd_sched_req_flags {
	KSMBD_SCHED_REQ_COMPOUND	= 1U << 0,
	KSMBD_SCHED_REQ_SIGNED		= 1U << 1,
	KSMBD_SCHED_REQ_ENCRYPTED	= 1U << 2,
	KSMBD_SCHED_REQ_ASYNC		= 1U << 3,
	KSMBD_SCHED_REQ_RDMA_CHANNEL	= 1U << 4,
	KSMBD_SCHED_REQ_COMPRESSED	= 1U << 5,
	KSMBD_SCHED_REQ_SMB1		= 1U << 6,
};

/* ksmbd_sched_req::command when no SMB2 header could be read. */
enum ksmbd_sched_command {
	KSMBD_SCHED_CMD_UNKNOWN		= 0xffff,
};

/* Bits of ksmbd_sched_session::flags. */
enum ksmbd_sched_session_flags {
	KSMBD_SCHED_SESSION_GUEST	= 1U << 0,
	KSMBD_SCHED_SESSION_ANONYMOUS	= 1U << 1,
	KSMBD_SCHED_SESSION_SIGNED	= 1U << 2,
	KSMBD_SCHED_SESSION_ENCRYPTED	= 1U << 3,
};

/* Bits of ksmbd_sched_tree::flags. */
enum ksmbd_sched_tree_flags {
	KSMBD_SCHED_TREE_IPC		= 1U << 0,
	KSMBD_SCHED_TREE_READONLY	= 1U << 1,
};

/* Bits of ksmbd_sched_class_params::flags. */
enum ksmbd_sched_class_flags {
	KSMBD_SCHED_CLASS_AGGREGATED	= 1U << 0,
	KSMBD_SCHED_CLASS_FLAGS_MASK	= KSMBD_SCHED_CLASS_AGGREGATED,
};

/* Units and bounds of struct ksmbd_sched_class_params (init_class()). */
enum ksmbd_sched_qos {
	KSMBD_SCHED_IO_BYTES		= 8192,		/* bytes of cost an I/O */
	KSMBD_SCHED_IOPS_LIMIT		= 10000000,	/* I/Os a second */
	KSMBD_SCHED_BPS_LIMIT_MB	= 1048576,	/* MiB a second */
	KSMBD_SCHED_BURST_MS_DEFAULT	= 100,		/* ms */
	KSMBD_SCHED_BURST_MS_LIMIT	= 10000,	/* ms */
};

/*
 * Class word, returned by classify_conn(), classify_session() and
 * classify_tree():
 *   bits  0-15  class id; 0 is the anonymous class
 *   bits 16-23  weight: turns per round-robin round, 0 meaning 1
 *   bits 24-29  PEER6: with PER_PEER, the prefix length that keys an IPv6
 *               peer, in units of 4 bits (1..32 for /4../128; 0: /64)
 *   bit  30     INHERIT (classify_session(), classify_tree() only): no
 *               class of its own; the other bits are ignored.  Cleared
 *               and counted from classify_conn().
 *   bit  31     PER_PEER: each peer (address, or IPv6 prefix) is its own
 *               client in the class; in a user's session or tree class,
 *               each ClientGUID
 */
enum ksmbd_sched_class_word {
	KSMBD_SCHED_CLASS_ID_MASK	= 0x0000ffffU,
	KSMBD_SCHED_CLASS_WEIGHT_SHIFT	= 16,
	KSMBD_SCHED_CLASS_WEIGHT_MASK	= 0x00ff0000U,
	KSMBD_SCHED_CLASS_PEER6_SHIFT	= 24,
	KSMBD_SCHED_CLASS_PEER6_MASK	= 0x3f000000U,
	KSMBD_SCHED_CLASS_PEER6_MAX	= 32,		/* /128 */
	KSMBD_SCHED_CLASS_PEER6_DEFAULT	= 16,		/* /64 */
	KSMBD_SCHED_CLASS_PER_PEER	= 0x80000000U,
	KSMBD_SCHED_CLASS_INHERIT	= 0x40000000U,
	KSMBD_SCHED_CLASS_VALID_MASK	= KSMBD_SCHED_CLASS_ID_MASK |
					  KSMBD_SCHED_CLASS_WEIGHT_MASK |
					  KSMBD_SCHED_CLASS_PEER6_MASK |
					  KSMBD_SCHED_CLASS_PER_PEER,
};

#define KSMBD_SCHED_CLASS(id, weight, per_peer)				\
	(((__u32)(id) & KSMBD_SCHED_CLASS_ID_MASK) |			\
	 (((__u32)(weight) << KSMBD_SCHED_CLASS_WEIGHT_SHIFT) &		\
	  KSMBD_SCHED_CLASS_WEIGHT_MASK) |				\
	 ((per_peer) ? KSMBD_SCHED_CLASS_PER_PEER : 0))
#define KSMBD_SCHED_CLASS_ID_OF(w)	((w) & KSMBD_SCHED_CLASS_ID_MASK)
#define KSMBD_SCHED_CLASS_WEIGHT_OF(w)					\
	(((w) & KSMBD_SCHED_CLASS_WEIGHT_MASK) >> KSMBD_SCHED_CLASS_WEIGHT_SHIFT)
/* PEER6 field of a class word: 0 (default) or 1..63 before clamping. */
#define KSMBD_SCHED_CLASS_PEER6_OF(w)					\
	(((w) & KSMBD_SCHED_CLASS_PEER6_MASK) >> KSMBD_SCHED_CLASS_PEER6_SHIFT)
#define KSMBD_SCHED_CLASS_PEER6(nibbles)				\
	(((__u32)(nibbles) << KSMBD_SCHED_CLASS_PEER6_SHIFT) &		\
	 KSMBD_SCHED_CLASS_PEER6_MASK)

/*
 * Verdict word, returned by classify_req():
 *   bits 0-3  queue: KSMBD_SCHED_QUEUE_*; unknown values run on the
 *             per-CPU queue and are counted as errors
 *   bit  8    SPLICE: a READ reply may be sent page-backed
 *             (MSG_SPLICE_PAGES) where the kernel finds it safe
 *   others    reserved, ignored
 */
enum ksmbd_sched_verdict {
	KSMBD_SCHED_VERDICT_QUEUE_MASK	= 0x0000000fU,
	KSMBD_SCHED_QUEUE_PERCPU	= 0,	/* ksmbd-io, as without BPF */
	KSMBD_SCHED_QUEUE_UNBOUND	= 1,	/* unbound, non-strict */
	KSMBD_SCHED_QUEUE_MAX		= KSMBD_SCHED_QUEUE_UNBOUND,
	KSMBD_SCHED_VERDICT_SPLICE	= 0x00000100U,
	KSMBD_SCHED_VERDICT_VALID_MASK	= KSMBD_SCHED_VERDICT_QUEUE_MASK |
					  KSMBD_SCHED_VERDICT_SPLICE,
};

#endif /* KSMBD_SCHED_ABI_H */
