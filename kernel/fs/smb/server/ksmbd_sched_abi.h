/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What BPF programs of struct_ops type ksmbd_sched_ops see: the
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
 * @KSMBD_SCHED_USER_LEN: bytes of ksmbd_sched_session::user, including
 *	the terminating NUL; holds any ksmbd account name (47 bytes at
 *	most, KSMBD_REQ_MAX_ACCOUNT_NAME_SZ less its NUL).
 * @KSMBD_SCHED_SHARE_LEN: bytes of ksmbd_sched_tree::share, including
 *	the terminating NUL; holds any share name (63 bytes at most,
 *	KSMBD_REQ_MAX_SHARE_NAME less its NUL).
 */
enum ksmbd_sched_limits {
	KSMBD_SCHED_NAME_LEN		= 16,
	KSMBD_SCHED_MAX_INFLIGHT_LIMIT	= 4096,
	KSMBD_SCHED_TIMEOUT_MS_MIN	= 1000,
	KSMBD_SCHED_TIMEOUT_MS_LIMIT	= 600000,
	KSMBD_SCHED_USER_LEN		= 64,
	KSMBD_SCHED_SHARE_LEN		= 64,
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
 * @class_word:    class word the request is dispatched by: its tree's
 *                 (classify_tree()), else its session's
 *                 (classify_session()), else its connection's
 *                 (classify_conn()).
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
 * enum ksmbd_sched_session_flags - bits of ksmbd_sched_session::flags
 * @KSMBD_SCHED_SESSION_GUEST:     the login was mapped to the guest
 *	account (MS-SMB2 2.2.6, SMB2_SESSION_FLAG_IS_GUEST).
 * @KSMBD_SCHED_SESSION_ANONYMOUS: an anonymous (null) login
 *	(SMB2_SESSION_FLAG_IS_NULL).
 * @KSMBD_SCHED_SESSION_SIGNED:    the session signs its messages
 *	(MS-SMB2 3.3.5.5.3, Session.SigningRequired).
 * @KSMBD_SCHED_SESSION_ENCRYPTED: the session encrypts its messages
 *	(Session.EncryptData).
 */
enum ksmbd_sched_session_flags {
	KSMBD_SCHED_SESSION_GUEST	= 1U << 0,
	KSMBD_SCHED_SESSION_ANONYMOUS	= 1U << 1,
	KSMBD_SCHED_SESSION_SIGNED	= 1U << 2,
	KSMBD_SCHED_SESSION_ENCRYPTED	= 1U << 3,
};

/**
 * struct ksmbd_sched_session - what classify_session() sees of a session
 * @class_word:  class word of the connection the session was first seen
 *               on (classify_conn()).
 * @flags:       enum ksmbd_sched_session_flags.
 * @dialect:     the connection's dialect (MS-SMB2 2.2.4), e.g. 0x0311.
 * @reserved:    zero.
 * @session_id:  SessionId (MS-SMB2 2.2.1.2).
 * @client_guid: ClientGUID of the client's NEGOTIATE (MS-SMB2 2.2.3), the
 *               same on every channel of the session.
 * @user:        the ksmbd account the login was mapped to, NUL-padded,
 *               ASCII letters in lower case (other bytes as they are):
 *               ksmbd authenticates against its own account database by
 *               account name, without a domain.  Empty for an anonymous
 *               login.
 *
 * Read-only for the program.  Members are found by name (BTF); their
 * offsets are not fixed.
 */
struct ksmbd_sched_session {
	u32 class_word;
	u32 flags;
	u16 dialect;
	u16 reserved;
	u64 session_id;
	u8  client_guid[16];
	char user[KSMBD_SCHED_USER_LEN];
};

/**
 * enum ksmbd_sched_tree_flags - bits of ksmbd_sched_tree::flags
 * @KSMBD_SCHED_TREE_IPC:      the share is IPC$, the named-pipe share
 *	(MS-SMB2 2.2.10, SMB2_SHARE_TYPE_PIPE).
 * @KSMBD_SCHED_TREE_READONLY: the tree connect may not write.
 */
enum ksmbd_sched_tree_flags {
	KSMBD_SCHED_TREE_IPC		= 1U << 0,
	KSMBD_SCHED_TREE_READONLY	= 1U << 1,
};

/**
 * struct ksmbd_sched_tree - what classify_tree() sees of a tree connect
 * @class_word: class word of its session in effect: the session's
 *              (classify_session()), or its connection's when the session
 *              inherits.
 * @flags:      enum ksmbd_sched_tree_flags.
 * @tree_id:    TreeId (MS-SMB2 2.2.1.2).
 * @reserved:   zero.
 * @session_id: SessionId of its session.
 * @share:      the share's name, NUL-padded, ASCII letters in lower case
 *              (ksmbd folds share names, MS-SMB2 3.3.5.7).
 *
 * Read-only for the program.  Members are found by name (BTF); their
 * offsets are not fixed.
 */
struct ksmbd_sched_tree {
	u32 class_word;
	u32 flags;
	u32 tree_id;
	u32 reserved;
	u64 session_id;
	char share[KSMBD_SCHED_SHARE_LEN];
};

/**
 * enum ksmbd_sched_class_flags - bits of ksmbd_sched_class_params::flags
 * @KSMBD_SCHED_CLASS_AGGREGATED: the reservation and the limit are of the
 *	class as a whole; without it, of each of its clients (Storage QoS's
 *	Aggregated and Dedicated policies).  A class without PER_PEER is one
 *	client, so the two are the same there.
 * @KSMBD_SCHED_CLASS_FLAGS_MASK: every defined flag; others are cleared
 *	and counted.
 */
enum ksmbd_sched_class_flags {
	KSMBD_SCHED_CLASS_AGGREGATED	= 1U << 0,
	KSMBD_SCHED_CLASS_FLAGS_MASK	= KSMBD_SCHED_CLASS_AGGREGATED,
};

/**
 * enum ksmbd_sched_qos - units and bounds of struct ksmbd_sched_class_params
 * @KSMBD_SCHED_IO_BYTES: bytes of cost that count as one I/O of an IOPS
 *	reservation or limit (Storage QoS normalises to 8 KiB); a request
 *	counts at least one, a 1 MiB READ 128.
 * @KSMBD_SCHED_IOPS_LIMIT: largest IOPS reservation or limit; larger ones
 *	are clamped and counted.
 * @KSMBD_SCHED_BPS_LIMIT_MB: largest bytes/s reservation or limit, in
 *	MiB/s (1 TiB/s); larger ones are clamped and counted.
 * @KSMBD_SCHED_BURST_MS_DEFAULT: depth of a limit's token bucket when
 *	burst_ms is 0, ms of its rates.
 * @KSMBD_SCHED_BURST_MS_LIMIT: largest burst_ms; larger is clamped.
 */
enum ksmbd_sched_qos {
	KSMBD_SCHED_IO_BYTES		= 8192,
	KSMBD_SCHED_IOPS_LIMIT		= 10000000,
	KSMBD_SCHED_BPS_LIMIT_MB	= 1048576,
	KSMBD_SCHED_BURST_MS_DEFAULT	= 100,
	KSMBD_SCHED_BURST_MS_LIMIT	= 10000,
};

/**
 * struct ksmbd_sched_class_params - what init_class() sets for a class
 * @class_id:         the class, 0-65535 (read-only).
 * @flags:            enum ksmbd_sched_class_flags.
 * @reservation_iops: a minimum, in I/Os (KSMBD_SCHED_IO_BYTES) a second,
 *                    served ahead of the weighted round while the class
 *                    (or client) is below it; 0: none.
 * @limit_iops:       a maximum, in I/Os a second; 0: none.
 * @reservation_bps:  a minimum, bytes of cost a second; 0: none.
 * @limit_bps:        a maximum, bytes of cost a second; 0: none.
 * @burst_ms:         depth of the limits' token buckets, ms of their rates:
 *                    after an idle spell this much runs at once; 0 means
 *                    KSMBD_SCHED_BURST_MS_DEFAULT.
 * @reserved:         zero.
 *
 * All zero (as the kernel passes it, but @class_id) is a class with no
 * reservation and no limit: weight alone.  The program writes the
 * members it sets; @class_id and @reserved are read-only.  A reservation
 * above the limit is clamped to it.  Members are found by name (BTF).
 */
struct ksmbd_sched_class_params {
	u32 class_id;
	u32 flags;
	u32 reservation_iops;
	u32 limit_iops;
	u64 reservation_bps;
	u64 limit_bps;
	u32 burst_ms;
	u32 reserved;
};

/**
 * enum ksmbd_sched_class_word - fields of the class word (classify_conn(),
 * classify_session(), classify_tree())
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
 *	prefix) is its own client in the class; in a class word of a
 *	session or tree connect of a user (not guest, not anonymous), each
 *	client machine (ClientGUID), so that all channels of a session are
 *	one client.
 * @KSMBD_SCHED_CLASS_INHERIT: bit 30, returned by classify_session() or
 *	classify_tree(): no class of its own, the session takes its
 *	connection's and the tree its session's; the other bits are
 *	ignored.  From classify_conn() it is cleared and counted.
 * @KSMBD_SCHED_CLASS_VALID_MASK: every bit of a class word.
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
	KSMBD_SCHED_CLASS_INHERIT	= 0x40000000U,
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
