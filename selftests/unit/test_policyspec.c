// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_policyspec.c - "policy set" thresholds and "max-inflight" values
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#include "ksmbd_sched_abi.h"

#include "words.h"

#define ARGS(...)	((char *[]){ __VA_ARGS__, NULL })
#define NARGS(...)	(int)(sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *))
#define PARSE(pa, err, ...) \
	policy_args_parse(NARGS(__VA_ARGS__), ARGS(__VA_ARGS__), pa, err, \
			  sizeof(err))

static void test_bytes_good(void **state)
{
	static const struct { const char *s; uint32_t v; } good[] = {
		{ "0", 0 }, { "1", 1 }, { "65536", 65536 }, { "64K", 65536 },
		{ "64k", 65536 }, { "1M", 1048576 }, { "1m", 1048576 },
		{ "16M", 16777216 }, { "16384K", 16777216 },
		{ "16777216", 16777216 }, { "0K", 0 }, { "off", SMB_POLICY_OFF },
		{ "4095", 4095 },
	};
	uint32_t v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		v = 12345;
		if (parse_policy_bytes(good[i].s, &v))
			fail_msg("'%s' rejected", good[i].s);
		assert_int_equal(v, good[i].v);
	}
}

static void test_bytes_bad(void **state)
{
	static const char *const bad[] = {
		"", "K", "M", "-1", "+1", " 1", "1 ", "01", "00", "0x10",
		"1.5M", "1G", "1KB", "1KiB", "64KK", "OFF", "Off", "of", "offx",
		"1e3", "4294967295", "99999999999999999999999",
	};
	static const char *const range[] = {
		"16777217", "17M", "16385K", "4294967296",
	};
	uint32_t v = 7;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int r = parse_policy_bytes(bad[i], &v);

		if (r != -EINVAL && r != -ERANGE)
			fail_msg("'%s' accepted", bad[i]);
	}
	for (i = 0; i < ARRAY_SIZE(range); i++)
		assert_int_equal(parse_policy_bytes(range[i], &v), -ERANGE);
	assert_int_equal(parse_policy_bytes("1x", &v), -EINVAL);
	assert_int_equal(parse_policy_bytes(NULL, &v), -EINVAL);
	assert_int_equal(v, 7);		/* untouched on error */
}

static void test_bytes_format(void **state)
{
	static const uint32_t vals[] = {
		0, 1, 1023, 1024, 65536, 65537, 1048576, 1572864, 16777216,
		SMB_POLICY_OFF,
	};
	static const char *const want[] = {
		"0", "1", "1023", "1K", "64K", "65537", "1M", "1536K", "16M",
		"off",
	};
	char buf[POLICY_BYTES_STRLEN];
	uint32_t back;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		format_policy_bytes(vals[i], buf, sizeof(buf));
		assert_string_equal(buf, want[i]);
		assert_int_equal(parse_policy_bytes(buf, &back), 0);
		assert_int_equal(back, vals[i]);
	}
}

static void test_args_good(void **state)
{
	char err[WORDS_ERRLEN];
	struct policy_args pa;
	struct smb_policy p;

	(void)state;
	assert_int_equal(PARSE(&pa, err, "2", "splice-min", "1M",
			       "unbound-min", "off"), 0);
	assert_int_equal(pa.id, 2);
	assert_true(pa.has_splice_min && pa.has_unbound_min);
	assert_int_equal(pa.splice_min, 1048576);
	assert_int_equal(pa.unbound_min, SMB_POLICY_OFF);

	/* Abbreviated, reversed, one only. */
	assert_int_equal(PARSE(&pa, err, "65535", "u", "64K", "s", "0"), 0);
	assert_int_equal(pa.id, 65535);
	assert_int_equal(pa.splice_min, 0);
	assert_int_equal(pa.unbound_min, 65536);
	assert_int_equal(PARSE(&pa, err, "0", "unbound", "0"), 0);
	assert_false(pa.has_splice_min);
	assert_true(pa.has_unbound_min);

	/* Only the given threshold changes an entry. */
	p.splice_min = SMB_POLICY_SPLICE_MIN_DEFAULT;
	p.unbound_min = SMB_POLICY_UNBOUND_MIN_DEFAULT;
	policy_apply(&pa, &p);
	assert_int_equal(p.splice_min, 65536);
	assert_int_equal(p.unbound_min, 0);
}

static void test_args_bad(void **state)
{
	char err[WORDS_ERRLEN];
	struct policy_args pa = { .id = 99 };

	(void)state;
	assert_int_equal(policy_args_parse(0, ARGS(NULL), &pa, err,
					   sizeof(err)), -EINVAL);
	assert_int_equal(PARSE(&pa, err, "1"), -EINVAL);
	assert_non_null(strstr(err, "missing"));
	assert_int_equal(PARSE(&pa, err, "65536", "s", "1"), -EINVAL);
	assert_non_null(strstr(err, "65535"));
	assert_int_equal(PARSE(&pa, err, "-1", "s", "1"), -EINVAL);
	assert_int_equal(PARSE(&pa, err, "01", "s", "1"), -EINVAL);
	assert_int_equal(PARSE(&pa, err, "1", "s"), -EINVAL);
	assert_int_equal(PARSE(&pa, err, "1", "s", "17M"), -EINVAL);
	assert_non_null(strstr(err, "16 MiB"));
	assert_int_equal(PARSE(&pa, err, "1", "s", "1", "s", "2"), -EINVAL);
	assert_int_equal(PARSE(&pa, err, "1", "u", "1", "unbound-min", "2"),
			 -EINVAL);
	assert_int_equal(PARSE(&pa, err, "1", "bogus", "1"), -EINVAL);
	assert_int_equal(PARSE(&pa, err, "1", "splice-minimum", "1"), -EINVAL);
	assert_int_equal(PARSE(&pa, err, "1", "s", "1", "u", "x\n"), -EINVAL);
	assert_null(strchr(err, '\n'));
	assert_int_equal(pa.id, 99);	/* untouched on error */
}

static void test_max_inflight(void **state)
{
	static const char *const bad[] = {
		"", "-1", "+1", "01", "4097", "1x", " 1", "0x10", "4096 ",
		"99999999999999999999999",
	};
	char err[WORDS_ERRLEN];
	uint32_t v = 77;
	size_t i;

	(void)state;
	assert_int_equal(parse_max_inflight("0", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_max_inflight("2", &v, err, sizeof(err)), 0);
	assert_int_equal(v, 2);
	assert_int_equal(parse_max_inflight("4096", &v, err, sizeof(err)), 0);
	assert_int_equal(v, KSMBD_SCHED_MAX_INFLIGHT_LIMIT);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		v = 77;
		if (parse_max_inflight(bad[i], &v, err, sizeof(err)) !=
		    -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(v, 77);
	}
	assert_int_equal(parse_max_inflight(NULL, &v, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "missing"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes_good),
		cmocka_unit_test(test_bytes_bad),
		cmocka_unit_test(test_bytes_format),
		cmocka_unit_test(test_args_good),
		cmocka_unit_test(test_args_bad),
		cmocka_unit_test(test_max_inflight),
	};

	return cmocka_run_group_tests_name("policyspec", tests, NULL, NULL);
}
