/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ksmbd_sched.h - ABI of the BPF scheduling hook of ksmbd
 *
 * A BPF struct_ops program of type "ksmbd_sched_ops" attached in a network
 * namespace classifies each accepted SMB connection (class word) and gives
 * each received request a verdict (verdict word).  This header is shared by
 * the kernel, BPF programs and user space loaders.
 *
 * See Documentation/ksmbd-sched.rst for the model.
 */
#ifndef _UAPI_LINUX_KSMBD_SCHED_H
#define _UAPI_LINUX_KSMBD_SCHED_H

#include <linux/types.h>

/* Length of ksmbd_sched_ops::name, including the terminating NUL. */
#define KSMBD_SCHED_NAME_LEN		16

/* ksmbd_sched_conn::transport */
#define KSMBD_SCHED_TRANSPORT_TCP	0
#define KSMBD_SCHED_TRANSPORT_RDMA	1

/**
 * struct ksmbd_sched_conn - what classify_conn() sees of a new connection
 * @family:     AF_INET for an IPv4 peer (also when it reached a dual-stack
 *              listener as ::ffff:a.b.c.d), AF_INET6 otherwise.
 * @transport:  KSMBD_SCHED_TRANSPORT_*.
 * @peer_port:  peer's port, host byte order.
 * @local_port: server's port, host byte order.
 * @peer_addr:  peer's address, 16 bytes in network byte order; an IPv4
 *              address is stored IPv4-mapped (::ffff:a.b.c.d, RFC 4291
 *              section 2.5.5.2), so one LPM trie keyed by 128-bit prefixes
 *              serves both families.
 * @local_addr: server's address, same encoding as @peer_addr.
 * @netns_ino:  inode number of the connection's network namespace.
 * @reserved:   zero.
 */
struct ksmbd_sched_conn {
	__u16 family;
	__u16 transport;
	__u16 peer_port;
	__u16 local_port;
	__u8  peer_addr[16];
	__u8  local_addr[16];
	__u32 netns_ino;
	__u32 reserved;
};

/* ksmbd_sched_req::flags */
#define KSMBD_SCHED_REQ_COMPOUND	(1U << 0) /* NextCommand != 0 */
#define KSMBD_SCHED_REQ_SIGNED		(1U << 1) /* SMB2_FLAGS_SIGNED */
#define KSMBD_SCHED_REQ_ENCRYPTED	(1U << 2) /* transform header */
#define KSMBD_SCHED_REQ_ASYNC		(1U << 3) /* SMB2_FLAGS_ASYNC_COMMAND */
#define KSMBD_SCHED_REQ_RDMA_CHANNEL	(1U << 4) /* READ/WRITE Channel != NONE */
#define KSMBD_SCHED_REQ_COMPRESSED	(1U << 5) /* compressed PDU or READ
						   * with REQUEST_COMPRESSED
						   */
#define KSMBD_SCHED_REQ_SMB1		(1U << 6) /* SMB1 negotiate */

/* ksmbd_sched_req::command when the header cannot be read (encrypted). */
#define KSMBD_SCHED_CMD_UNKNOWN		0xffff

/**
 * struct ksmbd_sched_req - what classify_req() sees of a received request
 * @class_word:    class word of the connection (from classify_conn()).
 * @command:       SMB2 command of the first PDU (MS-SMB2 2.2.1.2), or
 *                 KSMBD_SCHED_CMD_UNKNOWN when only a transform header is
 *                 visible.
 * @credit_charge: CreditCharge of the first PDU (MS-SMB2 3.3.5.2.5).
 * @flags:         KSMBD_SCHED_REQ_*.
 * @length:        READ/WRITE Length in bytes; 0 for other commands.
 * @pdu_len:       bytes of the whole received message (all PDUs).
 * @offset:        READ/WRITE Offset in bytes; 0 for other commands.
 * @peer_addr:     the connection's peer, encoded as in ksmbd_sched_conn.
 */
struct ksmbd_sched_req {
	__u32 class_word;
	__u16 command;
	__u16 credit_charge;
	__u32 flags;
	__u32 length;
	__u32 pdu_len;
	__u32 reserved;
	__u64 offset;
	__u8  peer_addr[16];
};

/*
 * Class word, returned by classify_conn():
 *   bits  0-15  class id; 0 is the anonymous class
 *   bits 16-23  weight: turns per round-robin round, 0 meaning 1
 *   bits 24-29  PEER6: with PER_PEER, the prefix length that keys an IPv6
 *               peer, in units of 4 bits: 1..32 for /4../128; 0 means
 *               the default, /64 (one client per IPv6 subnet, RFC 4291
 *               section 2.5.4, as a host may use any address of its /64,
 *               RFC 8981).  Larger values are clamped to 32 and counted.
 *               An IPv4 peer is always keyed by its whole address.
 *   bit  30     reserved, cleared by the kernel
 *   bit  31     PER_PEER: each peer (address, or IPv6 prefix) is its own
 *               client in the class
 */
#define KSMBD_SCHED_CLASS_ID_MASK	0x0000ffffU
#define KSMBD_SCHED_CLASS_WEIGHT_SHIFT	16
#define KSMBD_SCHED_CLASS_WEIGHT_MASK	0x00ff0000U
#define KSMBD_SCHED_CLASS_PEER6_SHIFT	24
#define KSMBD_SCHED_CLASS_PEER6_MASK	0x3f000000U
#define KSMBD_SCHED_CLASS_PEER6_MAX	32	/* /128 */
#define KSMBD_SCHED_CLASS_PEER6_DEFAULT	16	/* /64 */
#define KSMBD_SCHED_CLASS_PER_PEER	0x80000000U
#define KSMBD_SCHED_CLASS_VALID_MASK	(KSMBD_SCHED_CLASS_ID_MASK | \
					 KSMBD_SCHED_CLASS_WEIGHT_MASK | \
					 KSMBD_SCHED_CLASS_PEER6_MASK | \
					 KSMBD_SCHED_CLASS_PER_PEER)

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
#define KSMBD_SCHED_VERDICT_QUEUE_MASK	0x0000000fU
#define KSMBD_SCHED_QUEUE_PERCPU	0	/* ksmbd-io, as without BPF */
#define KSMBD_SCHED_QUEUE_UNBOUND	1	/* unbound, non-strict */
#define KSMBD_SCHED_QUEUE_MAX		KSMBD_SCHED_QUEUE_UNBOUND
#define KSMBD_SCHED_VERDICT_SPLICE	0x00000100U
#define KSMBD_SCHED_VERDICT_VALID_MASK	(KSMBD_SCHED_VERDICT_QUEUE_MASK | \
					 KSMBD_SCHED_VERDICT_SPLICE)

/* ksmbd_sched_ops::flags: none defined yet; any bit set is -EINVAL. */
#define KSMBD_SCHED_OPS_FLAGS_MASK	0x0U

/* Upper bound of ksmbd_sched_ops::max_inflight (-E2BIG above). */
#define KSMBD_SCHED_MAX_INFLIGHT_LIMIT	4096

/* Bounds of ksmbd_sched_ops::timeout_ms when not 0 (-EINVAL, -E2BIG). */
#define KSMBD_SCHED_TIMEOUT_MS_MIN	1000
#define KSMBD_SCHED_TIMEOUT_MS_LIMIT	600000

#endif /* _UAPI_LINUX_KSMBD_SCHED_H */
