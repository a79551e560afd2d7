// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * abi.c - does the running kernel's ksmbd agree with ksmbd_sched_abi.h?
 *
 * ksmbd has no uapi header: the constants of its scheduling hook are BTF
 * enums of ksmbd.ko (of vmlinux when ksmbd is built in), and this tool
 * and its program carry their values in bpf/ksmbd_sched_abi.h.  Before
 * load and replace change anything, abi_check() looks every value they
 * rely on up by name in the kernel's BTF and refuses a kernel whose
 * value differs or that lacks it.  The contexts need no check here:
 * libbpf relocates the program's accesses by name (CO-RE) and fails the
 * load if a member is missing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

#include "ksmbd_sched_abi.h"
#include "main.h"

#define ABI_CONST(e, m)	{ #e, #m, m }

/* Every constant of ksmbd_sched_abi.h: the program or the tool uses it. */
static const struct abi_const abi_consts[] = {
	ABI_CONST(ksmbd_sched_limits, KSMBD_SCHED_NAME_LEN),
	ABI_CONST(ksmbd_sched_limits, KSMBD_SCHED_MAX_INFLIGHT_LIMIT),
	ABI_CONST(ksmbd_sched_limits, KSMBD_SCHED_TIMEOUT_MS_MIN),
	ABI_CONST(ksmbd_sched_limits, KSMBD_SCHED_TIMEOUT_MS_LIMIT),
	ABI_CONST(ksmbd_sched_ops_flags, KSMBD_SCHED_OPS_FLAGS_MASK),
	ABI_CONST(ksmbd_sched_transport, KSMBD_SCHED_TRANSPORT_TCP),
	ABI_CONST(ksmbd_sched_transport, KSMBD_SCHED_TRANSPORT_RDMA),
	ABI_CONST(ksmbd_sched_req_flags, KSMBD_SCHED_REQ_COMPOUND),
	ABI_CONST(ksmbd_sched_req_flags, KSMBD_SCHED_REQ_SIGNED),
	ABI_CONST(ksmbd_sched_req_flags, KSMBD_SCHED_REQ_ENCRYPTED),
	ABI_CONST(ksmbd_sched_req_flags, KSMBD_SCHED_REQ_ASYNC),
	ABI_CONST(ksmbd_sched_req_flags, KSMBD_SCHED_REQ_RDMA_CHANNEL),
	ABI_CONST(ksmbd_sched_req_flags, KSMBD_SCHED_REQ_COMPRESSED),
	ABI_CONST(ksmbd_sched_req_flags, KSMBD_SCHED_REQ_SMB1),
	ABI_CONST(ksmbd_sched_command, KSMBD_SCHED_CMD_UNKNOWN),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_ID_MASK),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_WEIGHT_SHIFT),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_WEIGHT_MASK),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_PEER6_SHIFT),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_PEER6_MASK),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_PEER6_MAX),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_PEER6_DEFAULT),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_PER_PEER),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_VALID_MASK),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_VERDICT_QUEUE_MASK),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_QUEUE_PERCPU),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_QUEUE_UNBOUND),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_QUEUE_MAX),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_VERDICT_SPLICE),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_VERDICT_VALID_MASK),
};

const struct abi_const *abi_table(unsigned int *n)
{
	*n = ARRAY_SIZE(abi_consts);
	return abi_consts;
}

/*
 * The value of member @name of enum @enum_name in @btf, as the 32 bits a
 * word holds; BTF_KIND_ENUM64 too, should a kernel widen an enum.
 */
static int abi_lookup(const struct btf *btf, const char *enum_name,
		      const char *name, __u64 *val)
{
	const struct btf_type *t;
	__s32 id;
	int i;

	id = btf__find_by_name_kind(btf, enum_name, BTF_KIND_ENUM);
	if (id < 0)
		id = btf__find_by_name_kind(btf, enum_name, BTF_KIND_ENUM64);
	if (id < 0)
		return -ENOENT;
	t = btf__type_by_id(btf, id);
	for (i = 0; i < btf_vlen(t); i++) {
		if (btf_is_enum(t)) {
			const struct btf_enum *e = btf_enum(t) + i;

			if (strcmp(btf__name_by_offset(btf, e->name_off), name))
				continue;
			*val = (__u32)e->val;
		} else {
			const struct btf_enum64 *e = btf_enum64(t) + i;

			if (strcmp(btf__name_by_offset(btf, e->name_off), name))
				continue;
			*val = btf_enum64_value(e);
		}
		return 0;
	}
	return -ENOENT;
}

/**
 * abi_compare() - compare @n constants with the enums of @btf
 * @btf:  ksmbd's BTF (module BTF split on vmlinux, or vmlinux).
 * @c:    the constants, e.g. abi_table().
 * @n:    how many.
 * @msg:  output: on mismatch, the first one and how many more, one line.
 * @len:  size of @msg.
 *
 * Return: 0 when every constant is in @btf with its value; -ENOENT when
 * one is missing (an enum or a member), -EINVAL when a value differs
 * (the first difference found is reported either way).
 */
int abi_compare(const struct btf *btf, const struct abi_const *c,
		unsigned int n, char *msg, size_t len)
{
	unsigned int i, bad = 0;
	int err = 0;
	__u64 v;

	for (i = 0; i < n; i++) {
		int e = abi_lookup(btf, c[i].enum_name, c[i].name, &v);

		if (!e && v == c[i].value)
			continue;
		if (!bad++) {
			err = e ?: -EINVAL;
			if (e)
				snprintf(msg, len, "%s of enum %s is not in its BTF",
					 c[i].name, c[i].enum_name);
			else
				snprintf(msg, len, "%s of enum %s is %llu there, %u here",
					 c[i].name, c[i].enum_name,
					 (unsigned long long)v, c[i].value);
		}
	}
	if (bad > 1) {
		size_t l = strlen(msg);

		snprintf(msg + l, len - l, " (and %u more)", bad - 1);
	}
	return err;
}

/**
 * abi_check() - refuse a kernel whose ksmbd disagrees with this tool
 *
 * Reads ksmbd's BTF: /sys/kernel/btf/ksmbd on top of vmlinux's, or
 * vmlinux's alone when ksmbd is built in, and compares abi_table().
 * Changes nothing; called by load and replace before anything else.
 *
 * Return: 0, or a negative errno, reported.
 */
int abi_check(void)
{
	struct btf *vmlinux, *mod;
	const struct abi_const *c;
	char msg[256] = "";
	unsigned int n;
	int err;

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		return p_errno(-errno, "cannot read the kernel's BTF (/sys/kernel/btf/vmlinux)");
	mod = btf__load_module_btf("ksmbd", vmlinux);
	if (!mod && errno != ENOENT) {
		err = p_errno(-errno, "cannot read ksmbd's BTF (/sys/kernel/btf/ksmbd)");
		goto out;
	}
	c = abi_table(&n);
	err = abi_compare(mod ?: vmlinux, c, n, msg, sizeof(msg));
	if (err)
		p_err("this kernel's ksmbd disagrees with the constants smb-classify was built with: %s; use an smb-classify built for this kernel",
		      msg);
	btf__free(mod);
out:
	btf__free(vmlinux);
	return err;
}
