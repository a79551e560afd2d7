/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * ksmbd_sched_ops.bpf.h - the struct_ops type and its contexts, as
 * every BPF object here declares them
 *
 * Included by bpf/smb_classify.bpf.c and the programs in selftests/vm/progs.
 * ksmbd has no uapi header: libbpf matches these local types by name
 * against "ksmbd_sched_ops" and its contexts ("ksmbd_sched_conn", ...) in
 * ksmbd's BTF (of ksmbd.ko, or of vmlinux when ksmbd is built in) and
 * relocates every member access by name (preserve_access_index, CO-RE), as
 * BPF programs declared tcp_sock and tcp_congestion_ops before vmlinux.h.
 * So a kernel may reorder or grow the contexts; a
 * member used here must exist there with a compatible type, or the load
 * fails.  The constants are in ksmbd_sched_abi.h.  See
 * Documentation/ksmbd-sched.rst, "ABI".
 */
#ifndef KSMBD_SCHED_OPS_BPF_H
#define KSMBD_SCHED_OPS_BPF_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "ksmbd_sched_abi.h"

/* What classify_conn() sees of a new connection (read-only). */
struct ksmbd_sched_conn {
	__u16 family;		/* AF_INET (also IPv4-mapped) or AF_INET6 */
	__u16 transport;	/* enum ksmbd_sched_transport */
	__u16 peer_port;	/* host byte order */
	__u16 local_port;	/* host byte order */
	__u8  peer_addr[16];	/* network byte order, IPv4 as ::ffff:a.b.c.d */
	__u8  local_addr[16];	/* same encoding */
	__u32 netns_ino;
} __attribute__((preserve_access_index));

/* What classify_req() sees of a received request (read-only). */
struct ksmbd_sched_req {
	__u32 class_word;	/* the connection's, from classify_conn() */
	__u16 command;		/* SMB2 command, or KSMBD_SCHED_CMD_UNKNOWN */
	__u16 credit_charge;
	__u32 flags;		/* enum ksmbd_sched_req_flags */
	__u32 length;		/* READ/WRITE Length, bytes */
	__u32 pdu_len;		/* bytes of the whole message */
	__u64 offset;		/* READ/WRITE Offset, bytes */
	__u8  peer_addr[16];	/* as ksmbd_sched_conn::peer_addr */
} __attribute__((preserve_access_index));

/* What classify_session() sees of a session (read-only). */
struct ksmbd_sched_session {
	__u32 class_word;	/* the connection's, from classify_conn() */
	__u32 flags;		/* enum ksmbd_sched_session_flags */
	__u16 dialect;		/* MS-SMB2 2.2.3, e.g. 0x0311 */
	__u64 session_id;
	__u8  client_guid[16];	/* ClientGUID of the NEGOTIATE */
	char  user[KSMBD_SCHED_USER_LEN];	/* account, ASCII lower case */
} __attribute__((preserve_access_index));

/* What classify_tree() sees of a tree connect (read-only). */
struct ksmbd_sched_tree {
	__u32 class_word;	/* the session's in effect */
	__u32 flags;		/* enum ksmbd_sched_tree_flags */
	__u32 tree_id;
	__u64 session_id;
	char  share[KSMBD_SCHED_SHARE_LEN];	/* share, ASCII lower case */
} __attribute__((preserve_access_index));

/* What init_class() sets for a class (class_id read-only). */
struct ksmbd_sched_class_params {
	__u32 class_id;
	__u32 flags;		/* enum ksmbd_sched_class_flags */
	__u32 reservation_iops;	/* I/Os of KSMBD_SCHED_IO_BYTES a second */
	__u32 limit_iops;
	__u64 reservation_bps;	/* bytes of cost a second */
	__u64 limit_bps;
	__u32 burst_ms;		/* 0: KSMBD_SCHED_BURST_MS_DEFAULT */
} __attribute__((preserve_access_index));

struct ksmbd_sched_ops {
	__u32 (*classify_conn)(const struct ksmbd_sched_conn *c);
	__u32 (*classify_req)(const struct ksmbd_sched_req *r);
	__u32 (*classify_session)(const struct ksmbd_sched_session *s);
	__u32 (*classify_tree)(const struct ksmbd_sched_tree *t);
	void (*init_class)(struct ksmbd_sched_class_params *p);
	__u32 max_inflight;
	__u32 timeout_ms;
	__u32 flags;
	char name[KSMBD_SCHED_NAME_LEN];
} __attribute__((preserve_access_index));

#endif /* KSMBD_SCHED_OPS_BPF_H */
