// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * smb_classify.bpf.c - reference classifier for ksmbd BPF scheduling
 *
 * classify_conn() gives each accepted SMB connection the class word of
 * the longest prefix in the "prefixes" LPM trie that covers the peer's
 * address (IPv4 peers arrive IPv4-mapped, so IPv4 prefixes are stored
 * IPv4-mapped too), or, when no prefix matches, SMB_CLASS_UNMATCHED:
 * class 0, each peer its own client.
 *
 * classify_req() gives each request a verdict from the "policy" hash map,
 * keyed by the connection's class id (struct smb_policy; a class without
 * an entry uses the defaults of smb_classify.h):
 *   - READ with Length >= splice_min: KSMBD_SCHED_VERDICT_SPLICE;
 *   - READ or WRITE with Length >= unbound_min: KSMBD_SCHED_QUEUE_UNBOUND;
 *   - everything else: the per-CPU queue, no splice, as without BPF.
 * SMB_POLICY_OFF (0xffffffff) as a threshold turns that part off.
 *
 * classify_session() gives a session the class word of its user in the
 * "users" hash map, and classify_tree() a tree connect that of its share
 * in "shares" (smb_classes.bpf.h); a name without an entry inherits.  So a
 * share's class wins over its user's, and a user's over its address's.
 *
 * The prefixes map is filled by "smb-classify prefix add", users by
 * "smb-classify user add", shares by "smb-classify share add", the policy
 * map by "smb-classify policy set".
 */
#include "ksmbd_sched_ops.bpf.h"

#include "smb_classify.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";


struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SMB_PREFIXES_MAX);
	__type(key, struct smb_prefix_key);
	__type(value, __u32);
} prefixes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SMB_POLICY_MAX);
	__type(key, __u32);
	__type(value, struct smb_policy);
} policy SEC(".maps");

#include "smb_classes.bpf.h"

/* SMB2 commands (MS-SMB2 2.2.1.2) that carry a Length. */
#define SMB2_READ	0x0008
#define SMB2_WRITE	0x0009

SEC("struct_ops/classify_conn")
__u32 BPF_PROG(classify_conn, const struct ksmbd_sched_conn *c)
{
	struct smb_prefix_key key = {
		.prefixlen = SMB_ADDR_LEN * 8,
	};
	__u32 *class_word;

	__builtin_memcpy(key.addr, c->peer_addr, sizeof(key.addr));
	class_word = bpf_map_lookup_elem(&prefixes, &key);
	return class_word ? *class_word : SMB_CLASS_UNMATCHED;
}

SEC("struct_ops/classify_req")
__u32 BPF_PROG(classify_req, const struct ksmbd_sched_req *r)
{
	__u32 id = KSMBD_SCHED_CLASS_ID_OF(r->class_word);
	__u32 splice_min = SMB_POLICY_SPLICE_MIN_DEFAULT;
	__u32 unbound_min = SMB_POLICY_UNBOUND_MIN_DEFAULT;
	__u16 cmd = r->command;
	__u32 len = r->length;
	struct smb_policy *p;
	__u32 verdict = KSMBD_SCHED_QUEUE_PERCPU;

	if (cmd != SMB2_READ && cmd != SMB2_WRITE)
		return verdict;
	p = bpf_map_lookup_elem(&policy, &id);
	if (p) {
		splice_min = p->splice_min;
		unbound_min = p->unbound_min;
	}
	/*
	 * OFF is 0xffffffff: a length can equal it, so test it explicitly.
	 * SPLICE is only a permission; the kernel still copies where it is
	 * not safe (signed, encrypted, compound, RDMA, ...).
	 */
	if (cmd == SMB2_READ && splice_min != SMB_POLICY_OFF &&
	    len >= splice_min)
		verdict |= KSMBD_SCHED_VERDICT_SPLICE;
	if (unbound_min != SMB_POLICY_OFF && len >= unbound_min)
		verdict = (verdict & ~KSMBD_SCHED_VERDICT_QUEUE_MASK) |
			  KSMBD_SCHED_QUEUE_UNBOUND;
	return verdict;
}

SEC(".struct_ops.link")
struct ksmbd_sched_ops smb_prefix = {
	.classify_conn	= (void *)classify_conn,
	.classify_req	= (void *)classify_req,
	.classify_session = (void *)classify_session,
	.classify_tree	= (void *)classify_tree,
	.init_class	= (void *)init_class,
	.max_inflight	= 0,	/* kernel default */
	.flags		= 0,
	.name		= "smb_prefix",
};
