/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * smb_classify.h - maps shared by the reference classifier and its loader
 *
 * Included by smb_classify.bpf.c and by tools/smb-classify.  Only fixed-size
 * types, so the layout is the same for BPF and for user space.
 */
#ifndef SMB_CLASSIFY_H
#define SMB_CLASSIFY_H

#include <linux/types.h>

#include "ksmbd_sched_abi.h"

/* Name of the LPM trie map in the object, and of its pin. */
#define SMB_PREFIXES_MAP_NAME	"prefixes"

/* Capacity of the prefixes map. */
#define SMB_PREFIXES_MAX	16384

/* Bytes of an address in a prefix key: IPv6, IPv4 stored IPv4-mapped. */
#define SMB_ADDR_LEN		16

/*
 * Class word of a peer no prefix covers: class 0, weight 1, PER_PEER
 * with the default PEER6 (IPv4 by address, IPv6 by /64).  Each such
 * peer is its own client: one peer that floods would otherwise hold the
 * one client of every unclassified peer, and ksmbd stops a client's
 * receivers while its queue is full.  A prefix ::/0 in the map takes
 * its place.  KSMBD_SCHED_CLASS() is of ksmbd_sched_abi.h.
 */
#define SMB_CLASS_UNMATCHED	KSMBD_SCHED_CLASS(0, 1, 1)

/* Prefix length of an IPv4-mapped address (::ffff:0:0/96). */
#define SMB_V4MAPPED_PREFIXLEN	96

/**
 * struct smb_prefix_key - key of the prefixes LPM trie
 * @prefixlen: significant leading bits of @addr, 0..128.
 * @addr:      address in network byte order; an IPv4 prefix a.b.c.d/N is
 *             stored as ::ffff:a.b.c.d/(96 + N), the encoding of
 *             ksmbd_sched_conn::peer_addr.  Bits past @prefixlen are zero.
 *
 * The value of the map is a __u32 class word (KSMBD_SCHED_CLASS()).
 */
struct smb_prefix_key {
	__u32 prefixlen;
	__u8 addr[SMB_ADDR_LEN];
};

/* Name of the per-class policy hash map in the object, and of its pin. */
#define SMB_POLICY_MAP_NAME	"policy"

/* Capacity of the policy map: one entry per class id at most. */
#define SMB_POLICY_MAX		65536

/* A threshold of struct smb_policy that is off: never matches. */
#define SMB_POLICY_OFF		0xffffffffU

/* Thresholds of a class without an entry in the policy map. */
#define SMB_POLICY_SPLICE_MIN_DEFAULT	65536U
#define SMB_POLICY_UNBOUND_MIN_DEFAULT	SMB_POLICY_OFF

/**
 * struct smb_policy - value of the policy map, keyed by __u32 class id
 * @splice_min:  a READ of at least this many bytes gets
 *               KSMBD_SCHED_VERDICT_SPLICE; SMB_POLICY_OFF: never.
 *               0 means every READ.
 * @unbound_min: a READ or WRITE of at least this many bytes runs on
 *               KSMBD_SCHED_QUEUE_UNBOUND; SMB_POLICY_OFF: never.
 *               0 means every READ and WRITE.
 *
 * A class without an entry uses SMB_POLICY_*_DEFAULT.  Every other request
 * (any other command) runs on the per-CPU queue without SPLICE.
 */
struct smb_policy {
	__u32 splice_min;
	__u32 unbound_min;
};

/* Names of the hash maps by user and by share in the object, and of their pins. */
#define SMB_USERS_MAP_NAME	"users"
#define SMB_SHARES_MAP_NAME	"shares"

/* Capacity of each of the users and shares maps. */
#define SMB_NAMES_MAX		4096

/* Bytes of a name key: ksmbd_sched_session::user and ksmbd_sched_tree::share. */
#define SMB_NAME_LEN		64

/**
 * struct smb_name_key - key of the users and shares maps
 * @name: a ksmbd account name (1..47 bytes, KSMBD_REQ_MAX_ACCOUNT_NAME_SZ
 *        less its NUL) or a share name (1..63 bytes), ASCII letters in
 *        lower case, NUL-padded to SMB_NAME_LEN: the form in which the
 *        kernel hands the session's user and the tree's share to
 *        classify_session() and classify_tree().  Bytes above 0x7f are
 *        compared as they are.
 *
 * The value of both maps is a __u32 class word (KSMBD_SCHED_CLASS()).
 */
struct smb_name_key {
	char name[SMB_NAME_LEN];
};

/* Name of the per-class reservation and limit hash map, and of its pin. */
#define SMB_QOS_MAP_NAME	"qos"

/* Capacity of the qos map: one entry per class id at most. */
#define SMB_QOS_MAX		65536

/**
 * struct smb_qos - value of the qos map, keyed by __u32 class id
 * @flags:            KSMBD_SCHED_CLASS_AGGREGATED for a reservation and
 *                    limit of the class as a whole, else of each client.
 * @reservation_iops: minimum, I/Os of 8 KiB of cost a second; 0: none.
 * @limit_iops:       maximum, I/Os a second; 0: none.
 * @burst_ms:         depth of the limits' token buckets, ms of their
 *                    rates; 0: the kernel's default (100 ms).
 * @reservation_bps:  minimum, bytes of cost a second; 0: none.
 * @limit_bps:        maximum, bytes of cost a second; 0: none.
 *
 * What init_class() of the reference classifier hands the kernel for the
 * class (struct ksmbd_sched_class_params); a class without an entry has
 * its weight alone.  The kernel clamps every value (enum ksmbd_sched_qos).
 */
struct smb_qos {
	__u32 flags;
	__u32 reservation_iops;
	__u32 limit_iops;
	__u32 burst_ms;
	__u64 reservation_bps;
	__u64 limit_bps;
};

#endif /* SMB_CLASSIFY_H */
