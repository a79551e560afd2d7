// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * bad_ctxwrite.bpf.c - a classify_conn that writes to its context: the
 * contexts are read-only (no btf_struct_access callback), so the verifier
 * refuses the program at load (-EACCES).  attach_test checks that.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ksmbd_sched.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct ksmbd_sched_ops {
	__u32 (*classify_conn)(const struct ksmbd_sched_conn *c);
	__u32 (*classify_req)(const struct ksmbd_sched_req *r);
	__u32 max_inflight;
	__u32 flags;
	char name[KSMBD_SCHED_NAME_LEN];
} __attribute__((preserve_access_index));

SEC("struct_ops/classify_conn")
__u32 BPF_PROG(writer_classify_conn, struct ksmbd_sched_conn *c)
{
	c->peer_port = 1;
	return 0;
}

SEC(".struct_ops.link")
struct ksmbd_sched_ops bad_ctxwrite = {
	.classify_conn	= (void *)writer_classify_conn,
	.name		= "bad_ctxwrite",
};
