/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What BPF programs of struct_ops type ksmbd_sched_ops see: the two
 * contexts and the constants of their words, described by BTF.
 *
 * This is not a uapi header.  As with sched_ext and bpf_tcp_ca, a
 * program finds the layout of the contexts in ksmbd's BTF (CO-RE,
 * preserve_access_index) and the values of the constants in the BTF
 * enums below, by name; ksmbd_sched_bpf_init() keeps the enums in BTF.
 * A kernel may move or add context members; it keeps the names and the
 * meaning of those it has.
 */
#ifndef __KSMBD_SCHED_ABI_H__
#define __KSMBD_SCHED_ABI_H__

#include <linux/types.h>

/**
 * enum ksmbd_sched_limits - sizes and bounds of struct ksmbd_sched_ops
 * @KSMBD_SCHED_NAME_LEN: bytes of ksmbd_sched_ops::name, including the
 *	terminating NUL.
 * @KSMBD_SCHED_MAX_INFLIGHT_LIMIT: upper bound of
 *	ksmbd_sched_ops::max_inflight, in requests; above it the attach
 *	fails with -E2BIG.
 * @KSMBD_SCHED_TIMEOUT_MS_MIN: lower bound of ksmbd_sched_ops::timeout_ms
 *	when not 0, in ms; below it the attach fails with -EINVAL.
 * @KSMBD_SCHED_TIMEOUT_MS_LIMIT: upper bound of
 *	ksmbd_sched_ops::timeout_ms, in ms; above it the attach fails with
 *	-E2BIG.
 */
enum ksmbd_sched_limits {
	KSMBD_SCHED_NAME_LEN		= 16,
	KSMBD_SCHED_MAX_INFLIGHT_LIMIT	= 4096,
	KSMBD_SCHED_TIMEOUT_MS_MIN	= 1000,
	KSMBD_SCHED_TIMEOUT_MS_LIMIT	= 600000,
};

/**
 * enum ksmbd_sched_ops_flags - bits of ksmbd_sched_ops::flags
 * @KSMBD_SCHED_OPS_FLAGS_MASK: every defined flag; none is defined yet,
 *	so any bit set fails the attach with -EINVAL.
 */
enum ksmbd_sched_ops_flags {
	KSMBD_SCHED_OPS_FLAGS_MASK	= 0,
};

/**
 * enum ksmbd_sched_transport - values of ksmbd_sched_conn::transport
 * @KSMBD_SCHED_TRANSPORT_TCP:  SMB2 over TCP, port 445 or the configured
 *	one (MS-SMB2 2.1).
 *
 * SMB Direct (MS-SMBD) connections are not classified: their requests
 * take ksmbd's original path.
 */
enum ksmbd_sched_transport {
	KSMBD_SCHED_TRANSPORT_TCP	= 0,
};

/**
 * struct ksmbd_sched_conn - what classify_conn() sees of a new connection
 * @family:     AF_INET for an IPv4 peer (also when it reached a dual-stack
 *              listener as ::ffff:a.b.c.d), AF_INET6 otherwise.
 * @transport:  enum ksmbd_sched_transport.
 * @peer_port:  peer's port, host byte order.
 * @local_port: server's port, host byte order.
 * @peer_addr:  peer's address, 16 bytes in network byte order; an IPv4
 *              address is stored IPv4-mapped (::ffff:a.b.c.d, RFC 4291
 *              section 2.5.5.2), so one LPM trie keyed by 128-bit prefixes
 *              serves both families.
 * @local_addr: server's address, same encoding as @peer_addr.
 * @netns_ino:  inode number of the connection's network namespace.
 * @reserved:   zero.
 *
 * Read-only for the program.  Members are found by name (BTF); their
 * offsets are not fixed.
 */
struct ksmbd_sched_conn {
	u16 family;
	u16 transport;
	u16 peer_port;
	u16 local_port;
	u8  peer_addr[16];
	u8  local_addr[16];
	u32 netns_ino;
	u32 reserved;
};

/**
 * enum ksmbd_sched_req_flags - bits of ksmbd_sched_req::flags
 * @KSMBD_SCHED_REQ_COMPOUND:     NextCommand of the first PDU is not 0
 *	(MS-SMB2 3.3.5.2.7).
 * @KSMBD_SCHED_REQ_SIGNED:       SMB2_FLAGS_SIGNED (MS-SMB2 2.2.1.2).
 * @KSMBD_SCHED_REQ_ENCRYPTED:    the message came in a transform header
 *	(MS-SMB2 2.2.41); it is decrypted before classify_req() where the
 *	session's key allows.
 * @KSMBD_SCHED_REQ_ASYNC:        SMB2_FLAGS_ASYNC_COMMAND (MS-SMB2 2.2.1.1).
 * @KSMBD_SCHED_REQ_RDMA_CHANNEL: a READ or WRITE whose Channel is not
 *	SMB2_CHANNEL_NONE (MS-SMB2 2.2.19, 2.2.21).
 * @KSMBD_SCHED_REQ_COMPRESSED:   a compressed message (MS-SMB2 2.2.42), or
 *	a READ with SMB2_READFLAG_REQUEST_COMPRESSED (MS-SMB2 2.2.19).
 * @KSMBD_SCHED_REQ_SMB1:         an SMB1 negotiate (MS-SMB2 3.3.5.3).
 */
enum ksmbd_sched_req_flags {
	KSMBD_SCHED_REQ_COMPOUND	= 1U << 0,
	KSMBD_SCHED_REQ_SIGNED		= 1U << 1,
	KSMBD_SCHED_REQ_ENCRYPTED	= 1U << 2,
	KSMBD_SCHED_REQ_ASYNC		= 1U << 3,
	KSMBD_SCHED_REQ_RDMA_CHANNEL	= 1U << 4,
	KSMBD_SCHED_REQ_COMPRESSED	= 1U << 5,
	KSMBD_SCHED_REQ_SMB1		= 1U << 6,
};

/**
 * enum ksmbd_sched_command - special values of ksmbd_sched_req::command
 * @KSMBD_SCHED_CMD_UNKNOWN: no SMB2 header could be read: the message is
 *	too short, SMB1, compressed, or encrypted and not decrypted.
 */
enum ksmbd_sched_command {
	KSMBD_SCHED_CMD_UNKNOWN		= 0xffff,
};

/**
 * struct ksmbd_sched_req - what classify_req() sees of a received request
 * @class_word:    class word of the connection (from classify_conn()).
 * @command:       SMB2 command of the first PDU (MS-SMB2 2.2.1.2), host
 *                 byte order, or KSMBD_SCHED_CMD_UNKNOWN.
 * @credit_charge: CreditCharge of the first PDU (MS-SMB2 3.3.5.2.5).
 * @flags:         enum ksmbd_sched_req_flags.
 * @length:        READ/WRITE Length in bytes (MS-SMB2 2.2.19, 2.2.21);
 *                 0 for other commands.
 * @pdu_len:       bytes of the whole received message (all PDUs).
 * @reserved:      zero.
 * @offset:        READ/WRITE Offset in bytes; 0 for other commands.
 * @peer_addr:     the connection's peer, encoded as in ksmbd_sched_conn.
 *
 * Read-only for the program.  Members are found by name (BTF); their
 * offsets are not fixed.
 */
struct ksmbd_sched_req {
	u32 class_word;
	u16 command;
	u16 credit_charge;
	u32 flags;
	u32 length;
	u32 pdu_len;
	u32 reserved;
	u64 offset;
	u8  peer_addr[16];
};

/**
 * enum ksmbd_sched_class_word - fields of the class word (classify_conn())
 * @KSMBD_SCHED_CLASS_ID_MASK: bits 0-15, the class id; 0 is the
 *	anonymous class.
 * @KSMBD_SCHED_CLASS_WEIGHT_SHIFT: first bit of the weight.
 * @KSMBD_SCHED_CLASS_WEIGHT_MASK: bits 16-23, the weight: turns per
 *	round-robin round, 0 meaning 1.
 * @KSMBD_SCHED_CLASS_PEER6_SHIFT: first bit of PEER6.
 * @KSMBD_SCHED_CLASS_PEER6_MASK: bits 24-29, PEER6: with PER_PEER, the
 *	prefix length that keys an IPv6 peer, in units of 4 bits: 1..32
 *	for /4../128; 0 means the default, /64 (one client per IPv6 subnet,
 *	RFC 4291 section 2.5.4, as a host may use any address of its /64,
 *	RFC 8981).  Larger values are clamped to 32 and counted.  An IPv4
 *	peer is always keyed by its whole address.
 * @KSMBD_SCHED_CLASS_PEER6_MAX: largest PEER6, /128.
 * @KSMBD_SCHED_CLASS_PEER6_DEFAULT: PEER6 meant by 0, /64.
 * @KSMBD_SCHED_CLASS_PER_PEER: bit 31: each peer (address, or IPv6
 *	prefix) is its own client in the class.
 * @KSMBD_SCHED_CLASS_VALID_MASK: every defined bit; bit 30 is reserved
 *	and cleared by the kernel.
 */
enum ksmbd_sched_class_word {
	KSMBD_SCHED_CLASS_ID_MASK	= 0x0000ffffU,
	KSMBD_SCHED_CLASS_WEIGHT_SHIFT	= 16,
	KSMBD_SCHED_CLASS_WEIGHT_MASK	= 0x00ff0000U,
	KSMBD_SCHED_CLASS_PEER6_SHIFT	= 24,
	KSMBD_SCHED_CLASS_PEER6_MASK	= 0x3f000000U,
	KSMBD_SCHED_CLASS_PEER6_MAX	= 32,
	KSMBD_SCHED_CLASS_PEER6_DEFAULT	= 16,
	KSMBD_SCHED_CLASS_PER_PEER	= 0x80000000U,
	KSMBD_SCHED_CLASS_VALID_MASK	= KSMBD_SCHED_CLASS_ID_MASK |
					  KSMBD_SCHED_CLASS_WEIGHT_MASK |
					  KSMBD_SCHED_CLASS_PEER6_MASK |
					  KSMBD_SCHED_CLASS_PER_PEER,
};

/* Fields of a class word, for the kernel's own use. */
#define KSMBD_SCHED_CLASS(id, weight, per_peer)				\
	(((u32)(id) & KSMBD_SCHED_CLASS_ID_MASK) |			\
	 (((u32)(weight) << KSMBD_SCHED_CLASS_WEIGHT_SHIFT) &		\
	  KSMBD_SCHED_CLASS_WEIGHT_MASK) |				\
	 ((per_peer) ? KSMBD_SCHED_CLASS_PER_PEER : 0))
#define KSMBD_SCHED_CLASS_ID_OF(w)	((w) & KSMBD_SCHED_CLASS_ID_MASK)
#define KSMBD_SCHED_CLASS_WEIGHT_OF(w)					\
	(((w) & KSMBD_SCHED_CLASS_WEIGHT_MASK) >> KSMBD_SCHED_CLASS_WEIGHT_SHIFT)
/* PEER6 field of a class word: 0 (default) or 1..63 before clamping. */
#define KSMBD_SCHED_CLASS_PEER6_OF(w)					\
	(((w) & KSMBD_SCHED_CLASS_PEER6_MASK) >> KSMBD_SCHED_CLASS_PEER6_SHIFT)
#define KSMBD_SCHED_CLASS_PEER6(nibbles)				\
	(((u32)(nibbles) << KSMBD_SCHED_CLASS_PEER6_SHIFT) &		\
	 KSMBD_SCHED_CLASS_PEER6_MASK)

/**
 * enum ksmbd_sched_verdict - fields of the verdict word (classify_req())
 * @KSMBD_SCHED_VERDICT_QUEUE_MASK: bits 0-3, the queue; an unknown value
 *	runs on the per-CPU queue and is counted as an error.
 * @KSMBD_SCHED_QUEUE_PERCPU: queue 0, the per-CPU ksmbd-io, as without BPF.
 * @KSMBD_SCHED_QUEUE_UNBOUND: queue 1, the unbound, non-strict
 *	ksmbd-io-unbound.
 * @KSMBD_SCHED_QUEUE_MAX: the largest known queue.
 * @KSMBD_SCHED_VERDICT_SPLICE: bit 8: a READ reply may be sent page-backed
 *	(MSG_SPLICE_PAGES) where the kernel finds it safe.
 * @KSMBD_SCHED_VERDICT_VALID_MASK: every defined bit; the others are
 *	reserved and ignored.
 */
enum ksmbd_sched_verdict {
	KSMBD_SCHED_VERDICT_QUEUE_MASK	= 0x0000000fU,
	KSMBD_SCHED_QUEUE_PERCPU	= 0,
	KSMBD_SCHED_QUEUE_UNBOUND	= 1,
	KSMBD_SCHED_QUEUE_MAX		= KSMBD_SCHED_QUEUE_UNBOUND,
	KSMBD_SCHED_VERDICT_SPLICE	= 0x00000100U,
	KSMBD_SCHED_VERDICT_VALID_MASK	= KSMBD_SCHED_VERDICT_QUEUE_MASK |
					  KSMBD_SCHED_VERDICT_SPLICE,
};

#endif /* __KSMBD_SCHED_ABI_H__ */
