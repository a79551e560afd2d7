// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * abi.c - does the running kernel's ksmbd agree with ksmbd_sched_abi.h?
 *
 * ksmbd has no uapi header: the constants of its scheduling hook are BTF
 * enums of ksmbd.ko (of vmlinux when ksmbd is built in), and this tool
 * and its program carry their values in bpf/ksmbd_sched_abi.h.  Before
 * load and replace change anything, abi_check() looks every value they
 * rely on up by name in the kernel's BTF and refuses a kernel that lacks
 * one or whose value would make them wrong (abi_consts[]: equal, a bound
 * at least as large, a mask with every bit).  The contexts need no check here:
 * libbpf relocates the program's accesses by name (CO-RE) and fails the
 * load if a member is missing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

#include "ksmbd_sched_abi.h"
#include "main.h"

#define ABI_CONST(e, m, r)	{ #e, #m, m, ABI_##r }

/*
 * The constants that this tool and its program rely on, each with what
 * the kernel's value must be for them to be right:
 *   EQ   the same value: an encoding the program or the tool writes or
 *        decodes (a field's position, a bit, a queue number, and the
 *        size of ksmbd_sched_ops::name, which libbpf matches exactly);
 *   MAX  the same or larger: a bound this tool checks its input
 *        against, so a kernel that raises it takes all that it takes;
 *   MASK a superset of the bits: a kernel that defines new bits still
 *        takes every bit the program sets.
 * A kernel may add enum members, raise a bound and define new bits
 * without breaking this tool.  The other constants of
 * ksmbd_sched_abi.h are for programs that use them; this tool and its
 * program do not.
 */
static const struct abi_const abi_consts[] = {
	ABI_CONST(ksmbd_sched_limits, KSMBD_SCHED_NAME_LEN, EQ),
	ABI_CONST(ksmbd_sched_limits, KSMBD_SCHED_MAX_INFLIGHT_LIMIT, MAX),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_ID_MASK, EQ),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_WEIGHT_SHIFT, EQ),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_WEIGHT_MASK, EQ),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_PEER6_SHIFT, EQ),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_PEER6_MASK, EQ),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_PEER6_MAX, MAX),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_PEER6_DEFAULT, EQ),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_PER_PEER, EQ),
	ABI_CONST(ksmbd_sched_class_word, KSMBD_SCHED_CLASS_VALID_MASK, MASK),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_VERDICT_QUEUE_MASK, EQ),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_QUEUE_PERCPU, EQ),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_QUEUE_UNBOUND, EQ),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_QUEUE_MAX, MAX),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_VERDICT_SPLICE, EQ),
	ABI_CONST(ksmbd_sched_verdict, KSMBD_SCHED_VERDICT_VALID_MASK, MASK),
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

/* Does the kernel's value @k satisfy @c (its rule)? */
static bool abi_ok(const struct abi_const *c, __u64 k)
{
	switch (c->rule) {
	case ABI_MAX:
		return k >= c->value;
	case ABI_MASK:
		return (k & c->value) == c->value;
	default:
		return k == c->value;
	}
}

/**
 * abi_compare() - compare @n constants with the enums of @btf
 * @btf:  ksmbd's BTF (module BTF split on vmlinux, or vmlinux).
 * @c:    the constants, e.g. abi_table().
 * @n:    how many.
 * @msg:  output: on mismatch, the first one and how many more, one line.
 * @len:  size of @msg.
 *
 * Return: 0 when every constant is in @btf with a value its rule takes
 * (struct abi_const); -ENOENT when one is missing (an enum or a member),
 * -EINVAL when a value is not taken (the first one found is reported
 * either way).
 */
int abi_compare(const struct btf *btf, const struct abi_const *c,
		unsigned int n, char *msg, size_t len)
{
	unsigned int i, bad = 0;
	int err = 0;
	__u64 v;

	for (i = 0; i < n; i++) {
		int e = abi_lookup(btf, c[i].enum_name, c[i].name, &v);

		if (!e && abi_ok(&c[i], v))
			continue;
		if (!bad++) {
			err = e ?: -EINVAL;
			if (e)
				snprintf(msg, len, "%s of enum %s is not in its BTF",
					 c[i].name, c[i].enum_name);
			else if (c[i].rule == ABI_MAX)
				snprintf(msg, len, "%s of enum %s is %llu there, below %u here",
					 c[i].name, c[i].enum_name,
					 (unsigned long long)v, c[i].value);
			else if (c[i].rule == ABI_MASK)
				snprintf(msg, len, "%s of enum %s is 0x%llx there, without bits 0x%x of 0x%x here",
					 c[i].name, c[i].enum_name,
					 (unsigned long long)v,
					 c[i].value & ~(__u32)v, c[i].value);
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
	/* No module BTF: ksmbd is built in, or not loaded, or has no BTF. */
	if (!mod && btf__find_by_name_kind(vmlinux, "ksmbd_sched_ops",
					   BTF_KIND_STRUCT) < 0) {
		err = p_errno(-ENOENT,
			      "ksmbd's BTF has no ksmbd_sched_ops: load ksmbd (with this hook, and module BTF: CONFIG_DEBUG_INFO_BTF_MODULES)");
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
