// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * nolink.bpf.c - ksmbd_sched_ops in a struct_ops map WITHOUT a link
 * (SEC(".struct_ops")): libbpf registers it with a map update, which the
 * kernel refuses with -EOPNOTSUPP (reg() without a link has no owner to
 * track).  attach_test checks that.
 */
#include "ksmbd_sched_ops.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";


SEC("struct_ops/classify_conn")
__u32 BPF_PROG(nolink_classify_conn, const struct ksmbd_sched_conn *c)
{
	return KSMBD_SCHED_CLASS(44, 1, 0);
}

SEC(".struct_ops")
struct ksmbd_sched_ops nolink = {
	.classify_conn	= (void *)nolink_classify_conn,
	.name		= "nolink",
};
