/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * ksmbd_sched_ops.bpf.h - the struct_ops type, as every BPF object here
 * declares it
 *
 * Included by bpf/smb_classify.bpf.c and the programs in selftests/vm/progs.
 * libbpf matches this local type by name against "ksmbd_sched_ops" in the
 * kernel's BTF and relocates its members by name
 * (preserve_access_index), so it lists exactly the members of the ABI in
 * include/uapi/linux/ksmbd_sched.h: the ops, then the data.
 */
#ifndef KSMBD_SCHED_OPS_BPF_H
#define KSMBD_SCHED_OPS_BPF_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/ksmbd_sched.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct ksmbd_sched_ops {
	__u32 (*classify_conn)(const struct ksmbd_sched_conn *c);
	__u32 (*classify_req)(const struct ksmbd_sched_req *r);
	__u32 max_inflight;
	__u32 timeout_ms;
	__u32 flags;
	char name[KSMBD_SCHED_NAME_LEN];
} __attribute__((preserve_access_index));

#endif /* KSMBD_SCHED_OPS_BPF_H */
