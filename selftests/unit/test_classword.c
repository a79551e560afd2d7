// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_classword.c - class words and number parsing of smb-classify
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#include "ksmbd_sched_abi.h"

#include "words.h"

static void test_parse_uint(void **state)
{
	static const char *const bad[] = {
		"", "-1", "+1", "-0", " 1", "1 ", "1x", "0x10", "00", "010",
		"1.0", "1e3", "\t1", "99999x",
	};
	unsigned long v;
	size_t i;

	(void)state;
	assert_int_equal(parse_uint("0", 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_uint("65535", 65535, &v), 0);
	assert_int_equal(v, 65535);
	assert_int_equal(parse_uint("65536", 65535, &v), -ERANGE);
	assert_int_equal(parse_uint("10", 9, &v), -ERANGE);
	assert_int_equal(parse_uint("7", 5, &v), -ERANGE);
	assert_int_equal(parse_uint("5", 5, &v), 0);
	assert_int_equal(parse_uint("18446744073709551615", ULONG_MAX, &v),
			 0);
	assert_true(v == ULONG_MAX);
	assert_int_equal(parse_uint("18446744073709551616", ULONG_MAX, &v),
			 -ERANGE);
	assert_int_equal(parse_uint("4294967296", 65535, &v), -ERANGE);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		v = 12345;
		if (parse_uint(bad[i], 65535, &v) != -EINVAL)
			fail_msg("'%s' not rejected as syntax", bad[i]);
		assert_int_equal(v, 12345);
	}
	assert_int_equal(parse_uint(NULL, 1, &v), -EINVAL);
}

static void test_encode_decode(void **state)
{
	struct class_spec s = { .id = 1, .weight = 1 }, d;

	(void)state;
	assert_int_equal(class_word_encode(&s), 0x00010001);
	assert_int_equal(class_word_encode(&s),
			 KSMBD_SCHED_CLASS(1, 1, 0));
	s = (struct class_spec){ .id = 0, .weight = 1, .per_peer = true };
	assert_int_equal(class_word_encode(&s), 0x80010000);
	s = (struct class_spec){ .id = 65535, .weight = 255,
				 .per_peer = true };
	assert_int_equal(class_word_encode(&s), 0x80ffffff);
	assert_int_equal(class_word_encode(&s) &
			 ~KSMBD_SCHED_CLASS_VALID_MASK, 0);

	class_word_decode(0x80ffffff, &d);
	assert_int_equal(d.id, 65535);
	assert_int_equal(d.weight, 255);
	assert_true(d.per_peer);
	/* weight 0 means 1; PEER6 without PER_PEER and bit 30 are ignored */
	class_word_decode(0x7f000005, &d);
	assert_int_equal(d.id, 5);
	assert_int_equal(d.weight, 1);
	assert_false(d.per_peer);
	class_word_decode(0, &d);
	assert_int_equal(d.id, 0);
	assert_int_equal(d.weight, 1);
	assert_false(d.per_peer);

	/* round trip */
	s = (struct class_spec){ .id = 7, .weight = 3, .per_peer = false };
	class_word_decode(class_word_encode(&s), &d);
	assert_int_equal(d.id, s.id);
	assert_int_equal(d.weight, s.weight);
	assert_int_equal(d.per_peer, s.per_peer);
}

/* PEER6 is prefix6 / 4, only with PER_PEER; above /128 decodes as /128. */
static void test_prefix6_word(void **state)
{
	struct class_spec s = { .id = 0, .weight = 1, .per_peer = true,
				.prefix6 = 128 }, d;

	(void)state;
	assert_int_equal(class_word_encode(&s), 0xa0010000);
	assert_int_equal(class_word_encode(&s),
			 KSMBD_SCHED_CLASS(0, 1, 1) |
			 KSMBD_SCHED_CLASS_PEER6(KSMBD_SCHED_CLASS_PEER6_MAX));
	s.prefix6 = 64;
	assert_int_equal(class_word_encode(&s), 0x90010000);
	s.prefix6 = 4;
	assert_int_equal(class_word_encode(&s), 0x81010000);
	class_word_decode(0x81010000, &d);
	assert_true(d.per_peer);
	assert_int_equal(d.prefix6, 4);
	s = (struct class_spec){ .id = 3, .weight = 2, .per_peer = true,
				 .prefix6 = 56 };
	class_word_decode(class_word_encode(&s), &d);
	assert_int_equal(d.id, 3);
	assert_int_equal(d.weight, 2);
	assert_true(d.per_peer);
	assert_int_equal(d.prefix6, 56);
	/* Not per peer: no PEER6 written, none read. */
	s.per_peer = false;
	assert_int_equal(class_word_encode(&s), 0x00020003);
	class_word_decode(0x20020003, &d);
	assert_int_equal(d.prefix6, 0);
	/* The default, and a value the kernel clamps. */
	class_word_decode(0x80010000, &d);
	assert_int_equal(d.prefix6, 0);
	class_word_decode(0xbf010000, &d);
	assert_int_equal(d.prefix6, 128);
}

#define ARGS(...) ((char *[]){ __VA_ARGS__ })
#define NARGS(...) (int)(sizeof(ARGS(__VA_ARGS__)) / sizeof(char *))
#define PARSE(spec, err, ...) \
	class_spec_parse(NARGS(__VA_ARGS__), ARGS(__VA_ARGS__), spec, err, \
			 sizeof(err))

static void test_spec_ok(void **state)
{
	char err[WORDS_ERRLEN];
	struct class_spec s;

	(void)state;
	assert_int_equal(PARSE(&s, err, "5"), 0);
	assert_int_equal(s.id, 5);
	assert_int_equal(s.weight, 1);
	assert_false(s.per_peer);
	assert_int_equal(PARSE(&s, err, "0", "per-peer"), 0);
	assert_int_equal(s.id, 0);
	assert_true(s.per_peer);
	assert_int_equal(PARSE(&s, err, "65535", "weight", "255",
			       "per-peer"), 0);
	assert_int_equal(s.id, 65535);
	assert_int_equal(s.weight, 255);
	assert_true(s.per_peer);
	assert_int_equal(PARSE(&s, err, "2", "per", "w", "3"), 0);
	assert_int_equal(s.id, 2);
	assert_int_equal(s.weight, 3);
	assert_true(s.per_peer);
	assert_int_equal(PARSE(&s, err, "9", "weight", "1"), 0);
	assert_int_equal(s.weight, 1);
	assert_int_equal(s.prefix6, 0);
	assert_int_equal(PARSE(&s, err, "0", "per-peer", "prefix6", "128"), 0);
	assert_true(s.per_peer);
	assert_int_equal(s.prefix6, 128);
	assert_int_equal(PARSE(&s, err, "4", "prefix6", "4", "per-peer",
			       "weight", "2"), 0);
	assert_int_equal(s.prefix6, 4);
	assert_int_equal(s.weight, 2);
	assert_int_equal(PARSE(&s, err, "1", "p", "pr", "48"), 0);
	assert_true(s.per_peer);
	assert_int_equal(s.prefix6, 48);
}

static void test_prefix6_bad(void **state)
{
	static const char *const bad[] = {
		"0", "2", "3", "63", "129", "132", "256", "064", "-4", "+8",
		"0x10", "", " 8", "8 ", "4294967296",
	};
	char err[WORDS_ERRLEN];
	unsigned int len = 77;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (parse_prefix6(bad[i], &len, err, sizeof(err)) != -EINVAL)
			fail_msg("accepted prefix6 '%s'", bad[i]);
		assert_int_equal(len, 77);
		assert_non_null(strstr(err, "must be a multiple of 4 in 4-128"));
	}
	assert_int_equal(parse_prefix6(NULL, &len, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "prefix6: missing value");
	for (len = 4; len <= 128; len += 4) {
		char v[8];
		unsigned int got = 0;

		snprintf(v, sizeof(v), "%u", len);
		assert_int_equal(parse_prefix6(v, &got, err, sizeof(err)), 0);
		assert_int_equal(got, len);
	}
}

static void test_spec_bad(void **state)
{
	struct class_spec s, untouched;
	char err[WORDS_ERRLEN];

	(void)state;
	memset(&untouched, 0x5a, sizeof(untouched));
#define BAD(...) do {							\
		s = untouched;						\
		err[0] = '\0';						\
		assert_int_equal(PARSE(&s, err, __VA_ARGS__), -EINVAL);	\
		assert_memory_equal(&s, &untouched, sizeof(s));		\
		assert_true(err[0] != '\0');				\
	} while (0)
	BAD("-1");
	BAD("+1");
	BAD("65536");
	BAD("4294967296");
	BAD("1x");
	BAD("01");
	BAD(" 1");
	BAD("");
	BAD("1", "weight");
	BAD("1", "weight", "0");
	BAD("1", "weight", "256");
	BAD("1", "weight", "-1");
	BAD("1", "weight", "0x10");
	BAD("1", "weight", "2", "weight", "3");
	BAD("1", "per-peer", "per-peer");
	BAD("1", "bogus");
	BAD("1", "");
	BAD("1", "weights", "2");
	BAD("1", "prefix6", "64");
	BAD("1", "per-peer", "prefix6");
	BAD("1", "per-peer", "prefix6", "0");
	BAD("1", "per-peer", "prefix6", "62");
	BAD("1", "per-peer", "prefix6", "132");
	BAD("1", "per-peer", "prefix6", "64", "prefix6", "64");
#undef BAD
	assert_int_equal(PARSE(&s, err, "1", "prefix6", "64"), -EINVAL);
	assert_string_equal(err, "prefix6 64: only with per-peer (it keys each peer's client)");
	assert_int_equal(class_spec_parse(0, NULL, &s, err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_uint),
		cmocka_unit_test(test_encode_decode),
		cmocka_unit_test(test_spec_ok),
		cmocka_unit_test(test_spec_bad),
		cmocka_unit_test(test_prefix6_word),
		cmocka_unit_test(test_prefix6_bad),
	};

	return cmocka_run_group_tests_name("classword", tests, NULL, NULL);
}
