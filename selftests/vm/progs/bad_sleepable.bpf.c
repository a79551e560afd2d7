// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * bad_sleepable.bpf.c - a sleepable classify_conn: both hooks run where
 * BPF must not sleep, so the kernel's check_member refuses the program at
 * load with -EINVAL.  attach_test checks that.
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

SEC("struct_ops.s/classify_conn")
__u32 BPF_PROG(sleepy_classify_conn, const struct ksmbd_sched_conn *c)
{
	return 0;
}

SEC(".struct_ops.link")
struct ksmbd_sched_ops bad_sleepable = {
	.classify_conn	= (void *)sleepy_classify_conn,
	.name		= "bad_sleepable",
};
