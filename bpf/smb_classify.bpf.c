// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * smb_classify.bpf.c - reference classifier for ksmbd BPF scheduling
 *
 * classify_conn() gives each accepted SMB connection the class word of
 * the longest prefix in the "prefixes" LPM trie that covers the peer's
 * address (IPv4 peers arrive IPv4-mapped, so IPv4 prefixes are stored
 * IPv4-mapped too), or 0, the anonymous class, when no prefix matches.
 *
 * classify_req() keeps every request on the per-CPU queue without splice
 * for now; see the comment there for where a policy map plugs in.
 *
 * The prefixes map is filled by "smb-classify prefix add".
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ksmbd_sched.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "smb_classify.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * Local definition of the kernel's struct_ops type.  libbpf matches it by
 * name against "ksmbd_sched_ops" in the kernel's BTF and relocates members
 * by name, so this must list exactly the members of the ABI.
 */
struct ksmbd_sched_ops {
	__u32 (*classify_conn)(const struct ksmbd_sched_conn *c);
	__u32 (*classify_req)(const struct ksmbd_sched_req *r);
	__u32 max_inflight;
	__u32 flags;
	char name[KSMBD_SCHED_NAME_LEN];
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SMB_PREFIXES_MAX);
	__type(key, struct smb_prefix_key);
	__type(value, __u32);
} prefixes SEC(".maps");

SEC("struct_ops/classify_conn")
__u32 BPF_PROG(classify_conn, const struct ksmbd_sched_conn *c)
{
	struct smb_prefix_key key = {
		.prefixlen = SMB_ADDR_LEN * 8,
	};
	__u32 *class_word;

	__builtin_memcpy(key.addr, c->peer_addr, sizeof(key.addr));
	class_word = bpf_map_lookup_elem(&prefixes, &key);
	return class_word ? *class_word : 0;
}

SEC("struct_ops/classify_req")
__u32 BPF_PROG(classify_req, const struct ksmbd_sched_req *r)
{
	/*
	 * Policy hook: a later "policy" map keyed by the class id
	 * (KSMBD_SCHED_CLASS_ID_OF(r->class_word)) will choose the queue
	 * (KSMBD_SCHED_QUEUE_UNBOUND above a WRITE size) and
	 * KSMBD_SCHED_VERDICT_SPLICE (above a READ size) here.  Until then:
	 * the per-CPU queue, no splice - exactly what ksmbd does without BPF.
	 */
	return KSMBD_SCHED_QUEUE_PERCPU;
}

SEC(".struct_ops.link")
struct ksmbd_sched_ops smb_prefix = {
	.classify_conn	= (void *)classify_conn,
	.classify_req	= (void *)classify_req,
	.max_inflight	= 0,	/* kernel default */
	.flags		= 0,
	.name		= "smb_prefix",
};
