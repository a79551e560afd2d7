// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * bad_ctxwrite.bpf.c - a classify_conn that writes to its context: the
 * contexts are read-only (no btf_struct_access callback), so the verifier
 * refuses the program at load (-EACCES).  attach_test checks that.
 */
#include "ksmbd_sched_ops.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";


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
