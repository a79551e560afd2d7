/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tracepoints of ksmbd's BPF scheduling hook: the inspection interface.
 * Usable from tracefs (events/ksmbd/), perf and bpftrace.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ksmbd

#if !defined(_KSMBD_SCHED_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KSMBD_SCHED_TRACE_H

#include <linux/tracepoint.h>

#include "ksmbd_sched_abi.h"

/*
 * The words' constants are enum members: have the format files show
 * their values (tools parse TP_printk from there).
 */
TRACE_DEFINE_ENUM(KSMBD_SCHED_CMD_UNKNOWN);
TRACE_DEFINE_ENUM(KSMBD_SCHED_REQ_COMPOUND);
TRACE_DEFINE_ENUM(KSMBD_SCHED_REQ_SIGNED);
TRACE_DEFINE_ENUM(KSMBD_SCHED_REQ_ENCRYPTED);
TRACE_DEFINE_ENUM(KSMBD_SCHED_REQ_ASYNC);
TRACE_DEFINE_ENUM(KSMBD_SCHED_REQ_RDMA_CHANNEL);
TRACE_DEFINE_ENUM(KSMBD_SCHED_REQ_COMPRESSED);
TRACE_DEFINE_ENUM(KSMBD_SCHED_REQ_SMB1);
TRACE_DEFINE_ENUM(KSMBD_SCHED_CLASS_ID_MASK);
TRACE_DEFINE_ENUM(KSMBD_SCHED_CLASS_WEIGHT_SHIFT);
TRACE_DEFINE_ENUM(KSMBD_SCHED_CLASS_WEIGHT_MASK);
TRACE_DEFINE_ENUM(KSMBD_SCHED_CLASS_PER_PEER);
TRACE_DEFINE_ENUM(KSMBD_SCHED_CLASS_INHERIT);
TRACE_DEFINE_ENUM(KSMBD_SCHED_VERDICT_QUEUE_MASK);
TRACE_DEFINE_ENUM(KSMBD_SCHED_VERDICT_SPLICE);
TRACE_DEFINE_ENUM(KSMBD_SCHED_QUEUE_UNBOUND);

#define show_smb2_command(cmd)					\
	__print_symbolic(cmd,					\
		{ 0x0000, "NEGOTIATE" },			\
		{ 0x0001, "SESSION_SETUP" },			\
		{ 0x0002, "LOGOFF" },				\
		{ 0x0003, "TREE_CONNECT" },			\
		{ 0x0004, "TREE_DISCONNECT" },			\
		{ 0x0005, "CREATE" },				\
		{ 0x0006, "CLOSE" },				\
		{ 0x0007, "FLUSH" },				\
		{ 0x0008, "READ" },				\
		{ 0x0009, "WRITE" },				\
		{ 0x000a, "LOCK" },				\
		{ 0x000b, "IOCTL" },				\
		{ 0x000c, "CANCEL" },				\
		{ 0x000d, "ECHO" },				\
		{ 0x000e, "QUERY_DIRECTORY" },			\
		{ 0x000f, "CHANGE_NOTIFY" },			\
		{ 0x0010, "QUERY_INFO" },			\
		{ 0x0011, "SET_INFO" },				\
		{ 0x0012, "OPLOCK_BREAK" },			\
		{ KSMBD_SCHED_CMD_UNKNOWN, "UNKNOWN" })

#define show_sched_req_flags(f)					\
	__print_flags(f, "|",					\
		{ KSMBD_SCHED_REQ_COMPOUND, "COMPOUND" },	\
		{ KSMBD_SCHED_REQ_SIGNED, "SIGNED" },		\
		{ KSMBD_SCHED_REQ_ENCRYPTED, "ENCRYPTED" },	\
		{ KSMBD_SCHED_REQ_ASYNC, "ASYNC" },		\
		{ KSMBD_SCHED_REQ_RDMA_CHANNEL, "RDMA" },	\
		{ KSMBD_SCHED_REQ_COMPRESSED, "COMPRESSED" },	\
		{ KSMBD_SCHED_REQ_SMB1, "SMB1" })

/*
 * ksmbd_sched_conn - a connection was classified at accept
 *
 * Fires for every accepted connection while a program is attached in any
 * namespace; @prog is empty when none is attached in the connection's.
 */
TRACE_EVENT(ksmbd_sched_conn,
	TP_PROTO(const struct ksmbd_sched_conn *c, u32 class_word,
		 const char *prog),
	TP_ARGS(c, class_word, prog),
	TP_STRUCT__entry(
		__field(u32, netns_ino)
		__array(u8, peer, 16)
		__field(u16, peer_port)
		__field(u16, family)
		__field(u32, class_word)
		__string(prog, prog)
	),
	TP_fast_assign(
		__entry->netns_ino = c->netns_ino;
		memcpy(__entry->peer, c->peer_addr, 16);
		__entry->peer_port = c->peer_port;
		__entry->family = c->family;
		__entry->class_word = class_word;
		__assign_str(prog);
	),
	TP_printk("netns=%u peer=%pI6c port=%u class=0x%08x id=%u weight=%u per_peer=%d prog=%s",
		  __entry->netns_ino, __entry->peer, __entry->peer_port,
		  __entry->class_word,
		  KSMBD_SCHED_CLASS_ID_OF(__entry->class_word),
		  KSMBD_SCHED_CLASS_WEIGHT_OF(__entry->class_word),
		  !!(__entry->class_word & KSMBD_SCHED_CLASS_PER_PEER),
		  __get_str(prog)[0] ? __get_str(prog) : "-")
);

/*
 * ksmbd_sched_session - a session was classified (classify_session())
 *
 * Fires once per session and program, at the first request that names
 * the session; @class_word is KSMBD_SCHED_CLASS_INHERIT when the session
 * takes its connection's class.
 */
TRACE_EVENT(ksmbd_sched_session,
	TP_PROTO(u32 netns_ino, const struct ksmbd_sched_session *s,
		 u32 class_word),
	TP_ARGS(netns_ino, s, class_word),
	TP_STRUCT__entry(
		__field(u32, netns_ino)
		__field(u64, session_id)
		__field(u32, flags)
		__field(u16, dialect)
		__field(u32, class_word)
		__array(char, user, KSMBD_SCHED_USER_LEN)
	),
	TP_fast_assign(
		__entry->netns_ino = netns_ino;
		__entry->session_id = s->session_id;
		__entry->flags = s->flags;
		__entry->dialect = s->dialect;
		__entry->class_word = class_word;
		memcpy(__entry->user, s->user, KSMBD_SCHED_USER_LEN);
	),
	TP_printk("netns=%u session=0x%llx user=%s flags=0x%x dialect=0x%04x class=0x%08x id=%u weight=%u inherit=%d",
		  __entry->netns_ino, __entry->session_id,
		  __entry->user[0] ? __entry->user : "-", __entry->flags,
		  __entry->dialect, __entry->class_word,
		  KSMBD_SCHED_CLASS_ID_OF(__entry->class_word),
		  KSMBD_SCHED_CLASS_WEIGHT_OF(__entry->class_word),
		  !!(__entry->class_word & KSMBD_SCHED_CLASS_INHERIT))
);

/*
 * ksmbd_sched_tree - a tree connect was classified (classify_tree())
 *
 * Fires once per tree connect and program, at the first request that
 * names it.
 */
TRACE_EVENT(ksmbd_sched_tree,
	TP_PROTO(u32 netns_ino, const struct ksmbd_sched_tree *t,
		 u32 class_word),
	TP_ARGS(netns_ino, t, class_word),
	TP_STRUCT__entry(
		__field(u32, netns_ino)
		__field(u64, session_id)
		__field(u32, tree_id)
		__field(u32, flags)
		__field(u32, class_word)
		__array(char, share, KSMBD_SCHED_SHARE_LEN)
	),
	TP_fast_assign(
		__entry->netns_ino = netns_ino;
		__entry->session_id = t->session_id;
		__entry->tree_id = t->tree_id;
		__entry->flags = t->flags;
		__entry->class_word = class_word;
		memcpy(__entry->share, t->share, KSMBD_SCHED_SHARE_LEN);
	),
	TP_printk("netns=%u session=0x%llx tree=%u share=%s flags=0x%x class=0x%08x id=%u weight=%u inherit=%d",
		  __entry->netns_ino, __entry->session_id, __entry->tree_id,
		  __entry->share[0] ? __entry->share : "-", __entry->flags,
		  __entry->class_word,
		  KSMBD_SCHED_CLASS_ID_OF(__entry->class_word),
		  KSMBD_SCHED_CLASS_WEIGHT_OF(__entry->class_word),
		  !!(__entry->class_word & KSMBD_SCHED_CLASS_INHERIT))
);

/*
 * ksmbd_sched_req - a request received a verdict from the program
 */
TRACE_EVENT(ksmbd_sched_req,
	TP_PROTO(u32 netns_ino, const struct ksmbd_sched_req *r, u32 verdict),
	TP_ARGS(netns_ino, r, verdict),
	TP_STRUCT__entry(
		__field(u32, netns_ino)
		__array(u8, peer, 16)
		__field(u32, class_word)
		__field(u16, command)
		__field(u16, credit_charge)
		__field(u32, flags)
		__field(u32, length)
		__field(u64, offset)
		__field(u32, verdict)
	),
	TP_fast_assign(
		__entry->netns_ino = netns_ino;
		memcpy(__entry->peer, r->peer_addr, 16);
		__entry->class_word = r->class_word;
		__entry->command = r->command;
		__entry->credit_charge = r->credit_charge;
		__entry->flags = r->flags;
		__entry->length = r->length;
		__entry->offset = r->offset;
		__entry->verdict = verdict;
	),
	TP_printk("netns=%u peer=%pI6c class=0x%08x cmd=%s flags=%s len=%u off=%llu credits=%u verdict=0x%x queue=%u splice=%d",
		  __entry->netns_ino, __entry->peer, __entry->class_word,
		  show_smb2_command(__entry->command),
		  show_sched_req_flags(__entry->flags),
		  __entry->length, __entry->offset, __entry->credit_charge,
		  __entry->verdict,
		  __entry->verdict & KSMBD_SCHED_VERDICT_QUEUE_MASK,
		  !!(__entry->verdict & KSMBD_SCHED_VERDICT_SPLICE))
);

/*
 * ksmbd_sched_dispatch - the dispatcher handed a request to a workqueue
 *
 * @client is the class id, and the peer when the class is PER_PEER
 * (else the peer prints as ::).  @waited is 1 when the request took one
 * of the dispatcher's slots; 0 for control requests, for requests
 * dispatched at once after a detach or a watchdog bypass, and for
 * dropped ones.  @clients is the number of clients that had waiting
 * requests when this one was picked: the deficit round robin decides
 * between them (1: no competition; 0: did not wait).  @cost is what its
 * client was charged (bytes); @dropped is 1 when its connection was going
 * away: it is freed, not run.
 */
TRACE_EVENT(ksmbd_sched_dispatch,
	TP_PROTO(u32 netns_ino, u32 class_word, const u8 *peer, u16 command,
		 u32 verdict, u32 bytes, bool waited, u16 clients, u64 wait_ns,
		 u32 cost, bool dropped),
	TP_ARGS(netns_ino, class_word, peer, command, verdict, bytes, waited,
		clients, wait_ns, cost, dropped),
	TP_STRUCT__entry(
		__field(u32, netns_ino)
		__field(u32, class_word)
		__array(u8, peer, 16)
		__field(u16, command)
		__field(bool, waited)
		__field(bool, dropped)
		__field(u16, clients)
		__field(u32, verdict)
		__field(u32, bytes)
		__field(u32, cost)
		__field(u64, wait_ns)
	),
	TP_fast_assign(
		__entry->netns_ino = netns_ino;
		__entry->class_word = class_word;
		memcpy(__entry->peer, peer, 16);
		__entry->command = command;
		__entry->waited = waited;
		__entry->dropped = dropped;
		__entry->clients = clients;
		__entry->verdict = verdict;
		__entry->bytes = bytes;
		__entry->cost = cost;
		__entry->wait_ns = wait_ns;
	),
	TP_printk("netns=%u class=%u client=%u/%pI6c cmd=%s queue=%s bytes=%u waited=%d clients=%u wait_ns=%llu cost=%u dropped=%d",
		  __entry->netns_ino,
		  KSMBD_SCHED_CLASS_ID_OF(__entry->class_word),
		  KSMBD_SCHED_CLASS_ID_OF(__entry->class_word), __entry->peer,
		  show_smb2_command(__entry->command),
		  (__entry->verdict & KSMBD_SCHED_VERDICT_QUEUE_MASK) ==
			KSMBD_SCHED_QUEUE_UNBOUND ? "unbound" : "percpu",
		  __entry->bytes, __entry->waited, __entry->clients,
		  __entry->wait_ns, __entry->cost, __entry->dropped)
);

/*
 * ksmbd_sched_bypass - the watchdog handed a dispatcher to the flat path
 *
 * @reason is "watchdog"; @wait_ns how long the oldest waiting request
 * and its client had waited, the request in the queue and the client for
 * its turn in the round, whichever is shorter: it reached
 * KSMBD_SCHED_WATCHDOG_MS.  The dispatcher stays bypassed until its
 * program is replaced.
 */
TRACE_EVENT(ksmbd_sched_bypass,
	TP_PROTO(u32 netns_ino, const char *reason, u64 wait_ns),
	TP_ARGS(netns_ino, reason, wait_ns),
	TP_STRUCT__entry(
		__field(u32, netns_ino)
		__string(reason, reason)
		__field(u64, wait_ns)
	),
	TP_fast_assign(
		__entry->netns_ino = netns_ino;
		__assign_str(reason);
		__entry->wait_ns = wait_ns;
	),
	TP_printk("netns=%u reason=%s wait_ns=%llu",
		  __entry->netns_ino, __get_str(reason), __entry->wait_ns)
);

/*
 * ksmbd_read_payload - how the data of a READ reply goes out
 *
 * The oracle of the splice path: @path is splice, or the reason the reply
 * was copied (see enum ksmbd_read_path; no_verdict when no program asked
 * for SPLICE, e.g. none attached).  @src is where the data is (enum
 * ksmbd_read_src): pagecache (the file's page-cache pages, zero-copy) or
 * pages (private pages read by copy) when spliced, copy when copied, none
 * when the reply has no data.  Fires for every successful READ reply on a
 * share (not a named pipe, not an error reply).
 */
TRACE_EVENT(ksmbd_read_payload,
	TP_PROTO(u32 netns_ino, u32 verdict, int path, size_t len, int src),
	TP_ARGS(netns_ino, verdict, path, len, src),
	TP_STRUCT__entry(
		__field(u32, netns_ino)
		__field(u32, verdict)
		__field(int, path)
		__field(u32, len)
		__field(int, src)
	),
	TP_fast_assign(
		__entry->netns_ino = netns_ino;
		__entry->verdict = verdict;
		__entry->path = path;
		__entry->len = len;
		__entry->src = src;
	),
	TP_printk("netns=%u path=%s reason=%s len=%u verdict=0x%x src=%s",
		  __entry->netns_ino, __entry->path ? "copy" : "splice",
		  __print_symbolic(__entry->path,
				   { 0, "-" },
				   { 1, "no_verdict" },
				   { 2, "transport" },
				   { 3, "rdma_channel" },
				   { 4, "signed" },
				   { 5, "encrypted" },
				   { 6, "compound" },
				   { 7, "compressed" },
				   { 8, "stream" },
				   { 9, "nomem" },
				   { 10, "empty" },
				   { 11, "below_floor" }),
		  __entry->len, __entry->verdict,
		  __print_symbolic(__entry->src,
				   { 0, "none" },
				   { 1, "copy" },
				   { 2, "pages" },
				   { 3, "pagecache" }))
);

#endif /* _KSMBD_SCHED_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ksmbd_sched_trace
#include <trace/define_trace.h>
