// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_abi.c - abi_compare(): ksmbd_sched_abi.h against a kernel's BTF
 * enums, with the BTF built here (libbpf's btf__add_enum()) as a kernel
 * that agrees, one that changed a value, and ones that lack an enum or a
 * member
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <bpf/btf.h>

#include "ksmbd_sched_abi.h"
#include "main.h"

/* abi.c reports through these (main.c); abi_compare() never calls them. */
int p_err(const char *fmt, ...)
{
	(void)fmt;
	return -EINVAL;
}

int p_errno(int err, const char *fmt, ...)
{
	(void)fmt;
	return err;
}

/*
 * A BTF with the enums of abi_table(), as ksmbd's BTF has them, except:
 * member @skip is left out, @change gets @value + @delta, enum @skip_enum
 * is left out, with @wide every enum is BTF_KIND_ENUM64, and with @neg
 * values of bit 31 are added as negative 32-bit ones (an older pahole's
 * signed enums).
 */
static struct btf *kernel_btf_d(const char *skip, const char *change,
				long long delta, const char *skip_enum,
				bool wide, bool neg)
{
	struct btf *b = btf__new_empty();
	const struct abi_const *c;
	const char *cur = NULL;
	unsigned int i, n;

	assert_non_null(b);
	c = abi_table(&n);
	for (i = 0; i < n; i++) {
		__u64 v = c[i].value;

		if (skip_enum && !strcmp(c[i].enum_name, skip_enum))
			continue;
		if (!cur || strcmp(cur, c[i].enum_name)) {
			cur = c[i].enum_name;
			assert_true((wide ? btf__add_enum64(b, cur, 8, false) :
				     btf__add_enum(b, cur, 4)) > 0);
		}
		if (skip && !strcmp(c[i].name, skip))
			continue;
		if (change && !strcmp(c[i].name, change))
			v = (__u32)(v + delta);
		if (neg && !wide && (v & 0x80000000U))
			assert_int_equal(btf__add_enum_value(b, c[i].name,
							     (__s32)v), 0);
		else
			assert_int_equal(wide ? btf__add_enum64_value(b, c[i].name, v) :
					 btf__add_enum_value(b, c[i].name, v), 0);
	}
	return b;
}

static struct btf *kernel_btf(const char *skip, const char *change,
			      const char *skip_enum, bool wide)
{
	return kernel_btf_d(skip, change, 1, skip_enum, wide, false);
}

static int compare(struct btf *b, char *msg, size_t len)
{
	const struct abi_const *c;
	unsigned int n;
	int err;

	c = abi_table(&n);
	err = abi_compare(b, c, n, msg, len);
	btf__free(b);
	return err;
}

static void test_table(void **state)
{
	const struct abi_const *c;
	unsigned int i, n;

	c = abi_table(&n);
	assert_true(n >= 15);
	/* One entry per member; the enums' members together. */
	for (i = 1; i < n; i++) {
		unsigned int j;

		for (j = 0; j < i; j++)
			assert_string_not_equal(c[i].name, c[j].name);
	}
	/* Values the program's class word depends on. */
	for (i = 0; i < n; i++)
		if (!strcmp(c[i].name, "KSMBD_SCHED_CLASS_PER_PEER"))
			assert_int_equal(c[i].value, 0x80000000U);
}

static void test_match(void **state)
{
	char msg[256] = "";

	assert_int_equal(compare(kernel_btf(NULL, NULL, NULL, false), msg,
				 sizeof(msg)), 0);
	assert_string_equal(msg, "");
}

static void test_match_enum64(void **state)
{
	char msg[256] = "";

	assert_int_equal(compare(kernel_btf(NULL, NULL, NULL, true), msg,
				 sizeof(msg)), 0);
}

static void test_value_differs(void **state)
{
	char msg[256] = "";

	assert_int_equal(compare(kernel_btf(NULL, "KSMBD_SCHED_VERDICT_SPLICE",
					    NULL, false), msg, sizeof(msg)),
			 -EINVAL);
	assert_string_equal(msg,
			    "KSMBD_SCHED_VERDICT_SPLICE of enum ksmbd_sched_verdict is 257 there, 256 here");
}

static void test_high_bit_differs(void **state)
{
	char msg[256] = "";

	/* 0x80000000 + 1: the unsigned 32-bit values compare as such. */
	assert_int_equal(compare(kernel_btf(NULL, "KSMBD_SCHED_CLASS_PER_PEER",
					    NULL, false), msg, sizeof(msg)),
			 -EINVAL);
	assert_non_null(strstr(msg, "is 2147483649 there, 2147483648 here"));
}

static void test_member_missing(void **state)
{
	char msg[256] = "";

	assert_int_equal(compare(kernel_btf("KSMBD_SCHED_MAX_INFLIGHT_LIMIT",
					    NULL, NULL, false), msg, sizeof(msg)),
			 -ENOENT);
	assert_string_equal(msg,
			    "KSMBD_SCHED_MAX_INFLIGHT_LIMIT of enum ksmbd_sched_limits is not in its BTF");
}

static void test_enum_missing(void **state)
{
	char msg[256] = "";

	/* Every member of the enum is missing: the first is named. */
	assert_int_equal(compare(kernel_btf(NULL, NULL, "ksmbd_sched_verdict",
					    false), msg, sizeof(msg)), -ENOENT);
	assert_string_equal(msg,
			    "KSMBD_SCHED_VERDICT_QUEUE_MASK of enum ksmbd_sched_verdict is not in its BTF (and 5 more)");
}

static void test_bound_raised(void **state)
{
	char msg[256] = "";

	/* A kernel that takes more than this tool checks for is fine. */
	assert_int_equal(compare(kernel_btf_d(NULL, "KSMBD_SCHED_MAX_INFLIGHT_LIMIT",
					      4096, NULL, false, false),
				 msg, sizeof(msg)), 0);
	assert_int_equal(compare(kernel_btf_d(NULL, "KSMBD_SCHED_QUEUE_MAX", 1,
					      NULL, false, false),
				 msg, sizeof(msg)), 0);
}

static void test_bound_lowered(void **state)
{
	char msg[256] = "";

	assert_int_equal(compare(kernel_btf_d(NULL, "KSMBD_SCHED_MAX_INFLIGHT_LIMIT",
					      -96, NULL, false, false),
				 msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg,
			    "KSMBD_SCHED_MAX_INFLIGHT_LIMIT of enum ksmbd_sched_limits is 4000 there, below 4096 here");
}

static void test_mask_grown(void **state)
{
	char msg[256] = "";

	/* New bits in the kernel: bit 30 of the class word defined. */
	assert_int_equal(compare(kernel_btf_d(NULL, "KSMBD_SCHED_CLASS_VALID_MASK",
					      0x40000000LL, NULL, false, false),
				 msg, sizeof(msg)), 0);
}

static void test_mask_shrunk(void **state)
{
	char msg[256] = "";

	/* A kernel without the SPLICE bit would ignore the program's. */
	assert_int_equal(compare(kernel_btf_d(NULL, "KSMBD_SCHED_VERDICT_VALID_MASK",
					      -0x100LL, NULL, false, false),
				 msg, sizeof(msg)), -EINVAL);
	assert_string_equal(msg,
			    "KSMBD_SCHED_VERDICT_VALID_MASK of enum ksmbd_sched_verdict is 0xf there, without bits 0x100 of 0x10f here");
}

static void test_signed_enum(void **state)
{
	char msg[256] = "";

	/* 0x80000000 stored as a negative 32-bit value: the same word. */
	assert_int_equal(compare(kernel_btf_d(NULL, NULL, 0, NULL, false, true),
				 msg, sizeof(msg)), 0);
}

static void test_no_ksmbd(void **state)
{
	char msg[256] = "";
	const struct abi_const *c;
	struct btf *b = btf__new_empty();
	unsigned int n;

	/* A BTF without ksmbd (vmlinux of a kernel without it). */
	assert_non_null(b);
	c = abi_table(&n);
	assert_int_equal(abi_compare(b, c, n, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "KSMBD_SCHED_NAME_LEN of enum ksmbd_sched_limits is not in its BTF (and "));
	btf__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_match_enum64),
		cmocka_unit_test(test_value_differs),
		cmocka_unit_test(test_high_bit_differs),
		cmocka_unit_test(test_member_missing),
		cmocka_unit_test(test_enum_missing),
		cmocka_unit_test(test_no_ksmbd),
		cmocka_unit_test(test_bound_raised),
		cmocka_unit_test(test_bound_lowered),
		cmocka_unit_test(test_mask_grown),
		cmocka_unit_test(test_mask_shrunk),
		cmocka_unit_test(test_signed_enum),
	};

	return cmocka_run_group_tests_name("abi", tests, NULL, NULL);
}
