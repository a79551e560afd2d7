// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_qosspec.c - "class set" reservations and limits: sizes, each word,
 * the entry as a whole (every refusal), and the words written back
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#include "ksmbd_sched_abi.h"

#include "words.h"

#define ARGS(...)	((char *[]){ __VA_ARGS__, NULL })
#define NARGS(...)	\
	(int)(sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *))
#define PARSE(qa, err, ...) \
	qos_args_parse(NARGS(__VA_ARGS__), ARGS(__VA_ARGS__), qa, err, \
		       sizeof(err))

#define TIB	(1ULL << 40)

static void test_size_good(void **state)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "0", 0 }, { "1", 1 }, { "512K", 512 << 10 },
		{ "512k", 512 << 10 }, { "20M", 20 << 20 }, { "20m", 20 << 20 },
		{ "1G", 1ULL << 30 }, { "1g", 1ULL << 30 },
		{ "1024G", TIB }, { "1048576M", TIB }, { "1099511627776", TIB },
		{ "0G", 0 }, { "8191", 8191 },
	};
	uint64_t v;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		v = 12345;
		if (parse_size(good[i].s, QOS_BYTES_MAX, &v))
			fail_msg("'%s' rejected", good[i].s);
		assert_true(v == good[i].v);
	}
	/* The bound is the caller's. */
	assert_int_equal(parse_size("16M", 16 << 20, &v), 0);
	assert_int_equal(parse_size("16385K", 16 << 20, &v), -ERANGE);
}

static void test_size_bad(void **state)
{
	static const char *const bad[] = {
		"", "K", "G", "-1", "+1", " 1", "1 ", "01", "00", "0x10",
		"1.5G", "1T", "1KB", "1KiB", "1GG", "1e3", "off", "20 M",
		"99999999999999999999999",
	};
	static const char *const range[] = {
		"1025G", "1048577M", "1099511627777", "1073741825K",
		"18446744073709551615",
	};
	uint64_t v = 7;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		int r = parse_size(bad[i], QOS_BYTES_MAX, &v);

		if (r != -EINVAL && r != -ERANGE)
			fail_msg("'%s' accepted", bad[i]);
	}
	for (i = 0; i < ARRAY_SIZE(range); i++)
		if (parse_size(range[i], QOS_BYTES_MAX, &v) != -ERANGE)
			fail_msg("'%s' not out of range", range[i]);
	assert_int_equal(parse_size("1x", QOS_BYTES_MAX, &v), -EINVAL);
	assert_int_equal(parse_size(NULL, QOS_BYTES_MAX, &v), -EINVAL);
	assert_true(v == 7);	/* untouched on error */
}

static void test_size_format(void **state)
{
	static const uint64_t vals[] = {
		0, 1, 1023, 1024, 1536, 20 << 20, 1ULL << 30, 3ULL << 29, TIB,
		TIB - 1,
	};
	static const char *const want[] = {
		"0", "1", "1023", "1K", "1536", "20M", "1G", "1536M", "1024G",
		"1099511627775",
	};
	char buf[SIZE_STRLEN];
	uint64_t back;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		format_size(vals[i], buf, sizeof(buf));
		assert_string_equal(buf, want[i]);
		assert_int_equal(parse_size(buf, QOS_BYTES_MAX, &back), 0);
		assert_true(back == vals[i]);
	}
}

static void test_args_good(void **state)
{
	char err[WORDS_ERRLEN];
	struct qos_args qa;

	(void)state;
	assert_int_equal(PARSE(&qa, err, "5", "reservation-iops", "100",
			       "reservation-bytes", "1M", "limit-iops", "5000",
			       "limit-bytes", "20M", "burst", "500", "scope",
			       "aggregated"), 0);
	assert_int_equal(qa.id, 5);
	assert_int_equal(qa.given, (1U << QOS_NWORDS) - 1);
	assert_int_equal(qa.q.reservation_iops, 100);
	assert_true(qa.q.reservation_bps == 1 << 20);
	assert_int_equal(qa.q.limit_iops, 5000);
	assert_true(qa.q.limit_bps == 20 << 20);
	assert_int_equal(qa.q.burst_ms, 500);
	assert_int_equal(qa.q.flags, KSMBD_SCHED_CLASS_AGGREGATED);

	/*
	 * Any order, abbreviated while unambiguous; what is not given is 0
	 * (none, the kernel's default burst) and dedicated.
	 */
	assert_int_equal(PARSE(&qa, err, "65535", "limit-b", "20M",
			       "reservation-i", "10"), 0);
	assert_int_equal(qa.id, 65535);
	assert_int_equal(qa.given,
			 (1U << QOS_LIM_BYTES) | (1U << QOS_RES_IOPS));
	assert_int_equal(qa.q.reservation_iops, 10);
	assert_true(qa.q.reservation_bps == 0);
	assert_int_equal(qa.q.limit_iops, 0);
	assert_int_equal(qa.q.burst_ms, 0);
	assert_int_equal(qa.q.flags, 0);
	assert_int_equal(PARSE(&qa, err, "0", "b", "1", "s", "dedicated",
			       "limit-i", "1"), 0);
	assert_int_equal(qa.q.burst_ms, 1);
	assert_int_equal(qa.q.limit_iops, 1);

	/* The kernel's bounds; a reservation equal to its limit. */
	assert_int_equal(PARSE(&qa, err, "1", "reservation-iops", "10000000",
			       "limit-iops", "10000000", "burst", "10000"), 0);
	assert_int_equal(qa.q.limit_iops, KSMBD_SCHED_IOPS_LIMIT);
	assert_int_equal(qa.q.burst_ms, KSMBD_SCHED_BURST_MS_LIMIT);
	assert_int_equal(PARSE(&qa, err, "1", "reservation-bytes", "1024G",
			       "limit-bytes", "1099511627776"), 0);
	assert_true(qa.q.limit_bps == (uint64_t)KSMBD_SCHED_BPS_LIMIT_MB << 20);
	assert_true(qa.q.reservation_bps == qa.q.limit_bps);

	/* A reservation and a limit of different units are not compared. */
	assert_int_equal(PARSE(&qa, err, "1", "reservation-iops", "1000",
			       "limit-bytes", "1M"), 0);
	assert_int_equal(PARSE(&qa, err, "1", "reservation-bytes", "1G",
			       "limit-iops", "1"), 0);
	/* A reservation alone, a limit alone: burst and scope go with each. */
	assert_int_equal(PARSE(&qa, err, "1", "reservation-bytes", "1", "burst",
			       "50"), 0);
	assert_int_equal(PARSE(&qa, err, "1", "limit-iops", "1", "scope",
			       "aggregated"), 0);
}

/* Each refusal: PARSE fails, the message holds @want, @qa is untouched. */
static void refused(char **argv, int argc, const char *want)
{
	char err[WORDS_ERRLEN] = "";
	struct qos_args qa = { .id = 99 };

	if (qos_args_parse(argc, argv, &qa, err, sizeof(err)) != -EINVAL)
		fail_msg("accepted, want '%s'", want);
	if (!strstr(err, want))
		fail_msg("got '%s', want '%s'", err, want);
	assert_null(strchr(err, '\n'));
	assert_int_equal(qa.id, 99);
}

#define REFUSED(want, ...) refused(ARGS(__VA_ARGS__), NARGS(__VA_ARGS__), want)

static void test_args_bad(void **state)
{
	char err[WORDS_ERRLEN];
	struct qos_args qa;

	(void)state;
	assert_int_equal(qos_args_parse(0, ARGS(NULL), &qa, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "missing CLASS"));
	REFUSED("class '65536': above 65535", "65536", "limit-iops", "1");
	REFUSED("class '-1'", "-1", "limit-iops", "1");
	REFUSED("class '01'", "01", "limit-iops", "1");

	/* Nothing to set: neither a reservation nor a limit. */
	REFUSED("missing a reservation or a limit", "1");
	REFUSED("burst 100: only with a reservation or a limit", "1", "burst",
		"100");
	REFUSED("scope aggregated: only with a reservation or a limit", "1",
		"scope", "aggregated");
	REFUSED("scope dedicated: only with", "1", "scope", "dedicated");
	REFUSED("burst 5: only with", "1", "scope", "dedicated", "burst", "5");

	/* Keywords: unknown, ambiguous, twice, without a value. */
	REFUSED("'bogus': expected reservation-iops N", "1", "bogus", "1");
	REFUSED("'res' is ambiguous (reservation-iops or reservation-bytes)",
		"1", "res", "1");
	REFUSED("'r' is ambiguous", "1", "r", "1");
	REFUSED("'limit' is ambiguous (limit-iops or limit-bytes)", "1",
		"limit", "1");
	REFUSED("'limit-iopsx': expected", "1", "limit-iopsx", "1");
	REFUSED("limit-iops given twice", "1", "limit-iops", "1", "limit-i",
		"2");
	REFUSED("scope given twice", "1", "limit-iops", "1", "scope",
		"dedicated", "scope", "dedicated");
	REFUSED("limit-bytes: missing value", "1", "limit-bytes");
	REFUSED("burst: missing value", "1", "limit-iops", "1", "burst");

	/* Values: syntax, zero, the kernel's bounds. */
	REFUSED("limit-iops '0': must be a decimal 1-10000000", "1",
		"limit-iops", "0");
	REFUSED("reservation-iops '1K': must be a decimal", "1",
		"reservation-iops", "1K");
	REFUSED("reservation-iops '10000001': above 10000000, the kernel's largest",
		"1", "reservation-iops", "10000001");
	REFUSED("limit-iops '4294967296': above 10000000", "1", "limit-iops",
		"4294967296");
	REFUSED("limit-bytes '0': must be bytes a second", "1", "limit-bytes",
		"0");
	REFUSED("limit-bytes '20MB': must be bytes a second", "1",
		"limit-bytes", "20MB");
	REFUSED("reservation-bytes '1T': must be", "1", "reservation-bytes",
		"1T");
	REFUSED("limit-bytes '1025G': above 1024G (1 TiB) a second", "1",
		"limit-bytes", "1025G");
	REFUSED("limit-bytes '1099511627777': above 1024G", "1", "limit-bytes",
		"1099511627777");
	REFUSED("burst '0': must be a decimal 1-10000 (ms; leave it out for the kernel's default, 100)",
		"1", "limit-iops", "1", "burst", "0");
	REFUSED("burst '10001': above 10000 ms", "1", "limit-iops", "1",
		"burst", "10001");
	REFUSED("scope 'Aggregated': must be dedicated", "1", "limit-iops",
		"1", "scope", "Aggregated");
	REFUSED("scope 'agg': must be dedicated", "1", "limit-iops", "1",
		"scope", "agg");
	REFUSED("limit-iops 'x?': must be", "1", "limit-iops", "x\n");

	/* A reservation above the limit of its unit. */
	REFUSED("reservation-iops 200 above limit-iops 100: a reservation cannot exceed the limit of its unit (the kernel would clamp it to 100)",
		"1", "limit-iops", "100", "reservation-iops", "200");
	REFUSED("reservation-bytes 2M above limit-bytes 1M: a reservation cannot exceed the limit of its unit (the kernel would clamp it to 1M)",
		"1", "reservation-bytes", "2M", "limit-bytes", "1M");
	REFUSED("reservation-bytes 1048577 above limit-bytes 1M", "1",
		"reservation-bytes", "1048577", "limit-bytes", "1048576");
}

/* qos_check() on entries not made by the parser: the word at fault. */
static void test_check(void **state)
{
	struct smb_qos q = { .burst_ms = 100 };
	char err[WORDS_ERRLEN];
	enum qos_word at;

	(void)state;
	assert_int_equal(qos_check(&q, 1U << QOS_BURST, &at, err,
				   sizeof(err)), -EINVAL);
	assert_int_equal(at, QOS_BURST);
	assert_int_equal(qos_check(&q, 0, &at, err, sizeof(err)), -EINVAL);
	assert_int_equal(at, QOS_NWORDS);
	q.reservation_iops = 5;
	q.limit_iops = 4;
	assert_int_equal(qos_check(&q, 0, &at, err, sizeof(err)), -EINVAL);
	assert_int_equal(at, QOS_RES_IOPS);
	q.limit_iops = 0;	/* no limit of that unit: any reservation */
	q.limit_bps = 1;
	assert_int_equal(qos_check(&q, 0, &at, err, sizeof(err)), 0);
	q.reservation_bps = 2;
	assert_int_equal(qos_check(&q, 0, &at, err, sizeof(err)), -EINVAL);
	assert_int_equal(at, QOS_RES_BYTES);
	assert_false(qos_is_set(&(struct smb_qos){ .burst_ms = 1,
						     .flags = 1 }));
	assert_true(qos_is_set(&(struct smb_qos){ .limit_bps = 1 }));
}

/* The words of an entry, and "class set" reading them back. */
static void test_words(void **state)
{
	static const struct {
		struct smb_qos q;
		const char *want;
	} cases[] = {
		{ { .reservation_iops = 100 },
		  "reservation-iops 100 scope dedicated" },
		{ { .limit_bps = 20 << 20, .burst_ms = 500,
		    .flags = KSMBD_SCHED_CLASS_AGGREGATED },
		  "limit-bytes 20M burst 500 scope aggregated" },
		{ { .reservation_iops = 10, .reservation_bps = 1536,
		    .limit_iops = 10000000, .limit_bps = 1ULL << 40,
		    .burst_ms = 10000 },
		  "reservation-iops 10 reservation-bytes 1536 limit-iops 10000000 limit-bytes 1024G burst 10000 scope dedicated" },
	};
	char buf[QOS_WORDS_STRLEN], copy[QOS_WORDS_STRLEN], err[WORDS_ERRLEN];
	char *argv[16], *save = NULL, *w;
	struct qos_args qa;
	size_t i;
	int n;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		format_qos_words(&cases[i].q, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
		snprintf(copy, sizeof(copy), "%s", buf);
		argv[0] = "3";
		n = 1;
		for (w = strtok_r(copy, " ", &save); w && n < 15;
		     w = strtok_r(NULL, " ", &save))
			argv[n++] = w;
		if (qos_args_parse(n, argv, &qa, err, sizeof(err)))
			fail_msg("'%s' does not parse back: %s", buf, err);
		assert_memory_equal(&qa.q, &cases[i].q, sizeof(qa.q));
	}
	/* An entry with no rate: its scope alone (never written by set). */
	format_qos_words(&(struct smb_qos){ 0 }, buf, sizeof(buf));
	assert_string_equal(buf, "scope dedicated");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_good),
		cmocka_unit_test(test_size_bad),
		cmocka_unit_test(test_size_format),
		cmocka_unit_test(test_args_good),
		cmocka_unit_test(test_args_bad),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_words),
	};

	return cmocka_run_group_tests_name("qosspec", tests, NULL, NULL);
}
