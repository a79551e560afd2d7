// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * const_class.bpf.c - a second ksmbd_sched_ops for the VM tests
 *
 * Every connection gets the class word in the rodata class_word (default
 * class 42, weight 1); every request gets verdict_word (default: the
 * per-CPU queue, no splice).  It has no
 * prefixes map, so a "replace" to it and back must keep the pinned one.
 * attach_test sets class_word, max_inflight, flags and name per instance
 * through its skeleton before load.
 */
#include "ksmbd_sched_ops.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";


const volatile __u32 class_word = KSMBD_SCHED_CLASS(42, 1, 0);
/* The verdict of every request; tests set out-of-range words through it. */
const volatile __u32 verdict_word = KSMBD_SCHED_QUEUE_PERCPU;

SEC("struct_ops/classify_conn")
__u32 BPF_PROG(const_classify_conn, const struct ksmbd_sched_conn *c)
{
	return class_word;
}

SEC("struct_ops/classify_req")
__u32 BPF_PROG(const_classify_req, const struct ksmbd_sched_req *r)
{
	return verdict_word;
}

SEC(".struct_ops.link")
struct ksmbd_sched_ops const_class = {
	.classify_conn	= (void *)const_classify_conn,
	.classify_req	= (void *)const_classify_req,
	.max_inflight	= 0,
	.flags		= 0,
	.name		= "const_class",
};
