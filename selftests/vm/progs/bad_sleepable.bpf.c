// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * bad_sleepable.bpf.c - a sleepable classify_conn: both hooks run where
 * BPF must not sleep, so the kernel's check_member refuses the program at
 * load with -EINVAL.  attach_test checks that.
 */
#include "ksmbd_sched_ops.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";


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
