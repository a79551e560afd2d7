// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * other_ops.bpf.c - a link-based struct_ops map of another type (a TCP
 * congestion control's layout, defined here): smb-classify load and
 * replace must refuse it before loading anything (30-replace), or the
 * kernel would register it as a congestion control and the loader pin
 * that link as ksmbd's.
 */
#include "ksmbd_sched_ops.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct tcp_congestion_ops {
	__u32 (*ssthresh)(void *sk);
	void (*cong_avoid)(void *sk, __u32 ack, __u32 acked);
	__u32 (*undo_cwnd)(void *sk);
	char name[16];
};

SEC("struct_ops/other_ssthresh")
__u32 BPF_PROG(other_ssthresh, void *sk)
{
	return 2;
}

SEC("struct_ops/other_cong_avoid")
void BPF_PROG(other_cong_avoid, void *sk, __u32 ack, __u32 acked)
{
}

SEC("struct_ops/other_undo_cwnd")
__u32 BPF_PROG(other_undo_cwnd, void *sk)
{
	return 2;
}

SEC(".struct_ops.link")
struct tcp_congestion_ops other_ops = {
	.ssthresh	= (void *)other_ssthresh,
	.cong_avoid	= (void *)other_cong_avoid,
	.undo_cwnd	= (void *)other_undo_cwnd,
	.name		= "other_ops",
};
