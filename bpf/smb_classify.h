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

#endif /* SMB_CLASSIFY_H */
