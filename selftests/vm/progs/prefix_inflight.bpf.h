/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * prefix_inflight.bpf.h - the reference prefix classifier with a fixed
 * dispatch budget, for the fairness tests and the benchmark
 *
 * classify_conn() is bpf/smb_classify.bpf.c's: the class word of the
 * longest prefix in the "prefixes" LPM trie covering the peer, else 0;
 * classify_session() and classify_tree() are the reference's too
 * (smb_classes.bpf.h).  The maps have the reference program's names and
 * layouts, so "smb-classify load OBJ" reuses the pinned ones and
 * "smb-classify prefix add", "user add" and "share add" fill them.
 * What differs is .max_inflight: a small budget makes requests wait in
 * the dispatcher, so its round-robin order decides who is served.
 *
 * Include after defining PREFIX_MAX_INFLIGHT and PREFIX_OPS_NAME (the
 * struct_ops map's variable, which is also its name), and optionally
 * PREFIX_TIMEOUT_MS (the watchdog, ops timeout_ms; 0, the default).
 */
#ifndef PREFIX_TIMEOUT_MS
#define PREFIX_TIMEOUT_MS	0
#endif
#include "ksmbd_sched_ops.bpf.h"

#include "smb_classify.h"
#include "smb_classes.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";


struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, SMB_PREFIXES_MAX);
	__type(key, struct smb_prefix_key);
	__type(value, __u32);
} prefixes SEC(".maps");

SEC("struct_ops/classify_conn")
__u32 BPF_PROG(inflight_classify_conn, const struct ksmbd_sched_conn *c)
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
__u32 BPF_PROG(inflight_classify_req, const struct ksmbd_sched_req *r)
{
	return KSMBD_SCHED_QUEUE_PERCPU;
}

#define __PREFIX_STR(x) #x
#define PREFIX_STR(x) __PREFIX_STR(x)

SEC(".struct_ops.link")
struct ksmbd_sched_ops PREFIX_OPS_NAME = {
	.classify_conn	= (void *)inflight_classify_conn,
	.classify_req	= (void *)inflight_classify_req,
	.classify_session = (void *)classify_session,
	.classify_tree	= (void *)classify_tree,
	.init_class	= (void *)init_class,
	.max_inflight	= PREFIX_MAX_INFLIGHT,
	.timeout_ms	= PREFIX_TIMEOUT_MS,
	.flags		= 0,
	.name		= PREFIX_STR(PREFIX_OPS_NAME),
};
