// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_conf.c - ksmbd-sched.conf: parse, errors by file:line:field,
 * the dump round trip, and the dry-run diff
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ksmbd_sched_abi.h"

#include "conf.h"

static const char example[] =
	"; the admin's policy\n"
	"[global]\n"
	"\tmax inflight = 8\n"
	"\n"
	"[Class 2]\n"
	"\tWeight = 2\n"
	"\tsplice-min = 1M\n"
	"\tprefix = 10.9.0.0/16\n"
	"\tprefix = 10.10.0.0/16 weight 3 per-peer\n"
	"\tunbound_min = 256K\n"
	"# everybody else per host\n"
	"[class 0]\n"
	"\tper peer = yes\n"
	"\tprefix = ::/0\n"
	"[class 7]\n"
	"\tsplice min = off\n";

static int parse(const char *text, struct conf *c, char *err)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int r;

	assert_non_null(f);
	r = conf_parse(f, "t.conf", c, err, CONF_ERRLEN);
	fclose(f);
	return r;
}

/* A file that holds a NUL byte, and one prefix more than the map holds. */
static void test_limits(void **state)
{
	static const char nul[] = "[class 1]\nweight = 2\0 junk\n";
	char err[CONF_ERRLEN], *text;
	size_t len = 0, i;
	struct conf c;
	FILE *f;

	(void)state;
	f = fmemopen((void *)nul, sizeof(nul) - 1, "r");
	assert_non_null(f);
	assert_int_equal(conf_parse(f, "t.conf", &c, err, CONF_ERRLEN), -22);
	fclose(f);
	assert_string_equal(err, "t.conf:2: line: holds a NUL byte (not a text file?)");

	f = open_memstream(&text, &len);
	assert_non_null(f);
	fprintf(f, "[class 1]\n");
	for (i = 0; i <= SMB_PREFIXES_MAX; i++)
		fprintf(f, "prefix = fd00::%zx/128\n", i);
	fclose(f);
	assert_int_equal(parse(text, &c, err), -22);
	assert_string_equal(err, "t.conf:16386: prefix: more than 16384 prefixes (the size of the prefixes map)");
	/* One fewer: accepted. */
	*strrchr(text, 'p') = '\0';
	assert_int_equal(parse(text, &c, err), 0);
	assert_int_equal(c.nprefixes, SMB_PREFIXES_MAX);
	conf_free(&c);
	free(text);
}

static char *text_of(const struct conf *c, bool diff_of_empty)
{
	struct conf empty = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (diff_of_empty)
		conf_diff(f, &empty, c);
	else
		conf_write(f, c);
	fclose(f);
	return buf;
}

static void test_parse(void **state)
{
	char err[CONF_ERRLEN];
	struct conf c;

	(void)state;
	assert_int_equal(parse(example, &c, err), 0);
	assert_true(c.has_max_inflight);
	assert_int_equal(c.max_inflight, 8);
	assert_int_equal(c.nprefixes, 3);
	/* Prefix order: IPv4 first. */
	assert_int_equal(c.prefixes[0].key.prefixlen, 96 + 16);
	assert_int_equal(c.prefixes[0].word, KSMBD_SCHED_CLASS(2, 2, 0));
	assert_int_equal(c.prefixes[1].word, KSMBD_SCHED_CLASS(2, 3, 1));
	assert_int_equal(c.prefixes[2].key.prefixlen, 0);
	assert_int_equal(c.prefixes[2].word, KSMBD_SCHED_CLASS(0, 1, 1));
	assert_int_equal(c.npolicies, 2);
	assert_int_equal(c.policies[0].id, 2);
	assert_int_equal(c.policies[0].p.splice_min, 1 << 20);
	assert_int_equal(c.policies[0].p.unbound_min, 256 << 10);
	assert_int_equal(c.policies[1].id, 7);
	assert_int_equal(c.policies[1].p.splice_min, SMB_POLICY_OFF);
	assert_int_equal(c.policies[1].p.unbound_min,
			 SMB_POLICY_UNBOUND_MIN_DEFAULT);
	conf_free(&c);
	/* Empty file: empty policy, no budget given. */
	assert_int_equal(parse("\n", &c, err), 0);
	assert_false(c.has_max_inflight);
	assert_int_equal(c.nprefixes + c.npolicies, 0);
}

static void test_errors(void **state)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "max inflight = 1\n", "t.conf:1: maxinflight: outside a section" },
		{ "[global]\nmax inflight = 4097\n", "t.conf:2: max inflight: " },
		{ "[global]\nmax inflight = 1\nmax inflight = 2\n", "t.conf:3: max inflight: given twice" },
		{ "[global]\nbudget = 1\n", "t.conf:2: budget: unknown field of [global]" },
		{ "[global]\n[global]\n", "t.conf:2: section: [global] given twice" },
		{ "[class 65536]\n", "t.conf:1: section: " },
		{ "[class 01]\n", "t.conf:1: section: " },
		{ "[class 1\n", "t.conf:1: section: " },
		{ "[class 1]\n[class 1]\n", "t.conf:2: section: [class 1] given twice (first at line 1)" },
		{ "[class 1]\nweight = 0\n", "t.conf:2: weight: '0': must be a decimal 1-255" },
		{ "[class 1]\nweight = 1\nweight = 2\n", "t.conf:3: weight: given twice" },
		{ "[class 1]\nper peer = maybe\n", "t.conf:2: per peer: 'maybe': must be yes or no" },
		{ "[class 1]\nsplice min = 17M\n", "t.conf:2: splice min: splice-min '17M': above 16 MiB" },
		{ "[class 1]\nunbound min = 1G\n", "t.conf:2: unbound min: " },
		{ "[class 1]\nsplice min = 1\nsplice-min = 2\n", "t.conf:3: splice min: given twice" },
		{ "[class 1]\nprefix = 10.1.2.3/8\n", "t.conf:2: prefix: '10.1.2.3/8': host bits set; the network is 10.0.0.0/8" },
		{ "[class 1]\nprefix =\n", "t.conf:2: prefix: empty prefix" },
		{ "[class 1]\nprefix = 10.0.0.0/8 weight 256\n", "t.conf:2: prefix: weight '256'" },
		{ "[class 1]\nprefix = 10.0.0.0/8 bogus\n", "t.conf:2: prefix: 'bogus'" },
		{ "[class 1]\nprefix = 10.0.0.0/8 ; comment\n", "t.conf:2: prefix: ';'" },
		{ "[class 1]\nprefix = 10.0.0.0/8\n[class 2]\nprefix = 10.0.0.0/8\n", "t.conf:4: prefix: 10.0.0.0/8 given twice (lines 2 and 4)" },
		{ "[class 1]\ncolour = red\n", "t.conf:2: colour: unknown field of [class 1]" },
		{ "[class 1]\njust words\n", "t.conf:2: line: 'just words': expected" },
		{ "[class 1]\n = 1\n", "t.conf:2: line: missing key" },
		{ "[global]\nper peer prefix6 = 62\n", "t.conf:2: per peer prefix6: prefix6 '62': must be a multiple of 4 in 4-128" },
		{ "[global]\nper peer prefix6 = 0\n", "t.conf:2: per peer prefix6: prefix6 '0': must be a multiple of 4 in 4-128" },
		{ "[global]\nper peer prefix6 = 132\n", "t.conf:2: per peer prefix6: prefix6 '132': must be" },
		{ "[global]\nper peer prefix6 =\n", "t.conf:2: per peer prefix6: prefix6 '': must be" },
		{ "[global]\nper peer prefix6 = 64\nper-peer-prefix6 = 64\n", "t.conf:3: per peer prefix6: given twice" },
		{ "[global]\nper peer prefix6 = 64\n[class 3]\nprefix = ::/0\n", "t.conf:2: per peer prefix6: the prefix ::/0 of line 4 covers every peer, so none is unmatched: give it per-peer prefix6 64" },
		{ "[class 1]\nper peer prefix6 = 128\nprefix = fd00::/8\n", "t.conf:2: per peer prefix6: only with per peer = yes in [class 1]" },
		{ "[class 1]\nper peer = no\nper peer prefix6 = 128\n", "t.conf:3: per peer prefix6: only with per peer = yes in [class 1]" },
		{ "[class 1]\nper peer = yes\nper peer prefix6 = 8\nper peer prefix6 = 8\n", "t.conf:4: per peer prefix6: given twice" },
		{ "[class 1]\nper peer = yes\nper peer prefix6 = 130\n", "t.conf:3: per peer prefix6: prefix6 '130': must be a multiple of 4 in 4-128" },
		{ "[class 1]\nprefix = fd00::/8 prefix6 64\n", "t.conf:2: prefix: prefix6 64: only with per-peer" },
		{ "[class 1]\nprefix = fd00::/8 per-peer prefix6 65\n", "t.conf:2: prefix: prefix6 '65': must be a multiple of 4 in 4-128" },
		{ "[class 1]\nprefix = fd00::/8 per-peer prefix6\n", "t.conf:2: prefix: prefix6: missing value" },
	};
	char err[CONF_ERRLEN];
	struct conf c;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (parse(bad[i].text, &c, err) != -22)
			fail_msg("accepted: %s", bad[i].text);
		if (strncmp(err, bad[i].want, strlen(bad[i].want)))
			fail_msg("%s: got '%s', want '%s...'", bad[i].text,
				 err, bad[i].want);
		assert_null(c.prefixes);
	}
}

/* prefix6: of [global] (the unmatched peers), of a class, of a prefix. */
static const char prefix6_example[] =
	"[global]\n"
	"\tper peer prefix6 = 128\n"
	"[class 1]\n"
	"\tper peer = yes\n"
	"\tper peer prefix6 = 56\n"
	"\tprefix = 2001:db8::/32\n"
	"\tprefix = 10.1.0.0/16\n"
	"[class 2]\n"
	"\tprefix = fd00::/8 per-peer prefix6 48\n"
	"\tprefix = fd01::/16 weight 2\n"
	"[class 3]\n"
	"\tper peer = yes\n"
	"\tprefix = fd02::/16\n"
	"\tprefix = fd03::/16 per-peer prefix6 96\n";

static void test_prefix6(void **state)
{
	char err[CONF_ERRLEN], *t1, *t2;
	struct conf a, b;

	(void)state;
	assert_int_equal(parse(prefix6_example, &a, err), 0);
	assert_int_equal(a.nprefixes, 7);
	/* IPv4 first, then by address: ::/0 is the first IPv6 prefix. */
	assert_int_equal(a.prefixes[0].word, 0x8e010001);	/* 56 / 4 */
	assert_int_equal(a.prefixes[1].key.prefixlen, 0);
	assert_int_equal(a.prefixes[1].word, 0xa0010000);	/* 128 / 4 */
	assert_int_equal(a.prefixes[2].word, 0x8e010001);
	assert_int_equal(a.prefixes[3].word, 0x8c010002);	/* 48 / 4 */
	assert_int_equal(a.prefixes[4].word, 0x00020002);
	assert_int_equal(a.prefixes[5].word, 0x80010003);
	assert_int_equal(a.prefixes[6].word, 0x98010003);	/* 96 / 4 */
	t1 = text_of(&a, false);
	assert_string_equal(t1,
		"# ksmbd-sched.conf(5), as written by smb-classify dump\n"
		"\n[class 0]\n\tper peer = yes\n\tper peer prefix6 = 128\n"
		"\tprefix = ::/0\n"
		"\n[class 1]\n\tper peer = yes\n\tper peer prefix6 = 56\n"
		"\tprefix = 10.1.0.0/16\n\tprefix = 2001:db8::/32\n"
		"\n[class 2]\n\tprefix = fd00::/8 per-peer prefix6 48\n"
		"\tprefix = fd01::/16 weight 2\n"
		"\n[class 3]\n\tper peer = yes\n\tprefix = fd02::/16\n"
		"\tprefix = fd03::/16 per-peer prefix6 96\n");
	assert_int_equal(parse(t1, &b, err), 0);
	assert_int_equal(a.nprefixes, b.nprefixes);
	assert_memory_equal(a.prefixes, b.prefixes,
			    a.nprefixes * sizeof(*a.prefixes));
	t2 = text_of(&b, false);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	t1 = text_of(&a, true);
	assert_non_null(strstr(t1, "+ prefix ::/0 class 0 weight 1 per-peer prefix6 128\n"));
	assert_non_null(strstr(t1, "+ prefix fd01::/16 class 2 weight 2\n"));
	free(t1);
	conf_free(&a);
	conf_free(&b);
}

/* dump's text parses back to the same policy and the same text. */
static void test_round_trip(void **state)
{
	char err[CONF_ERRLEN], *t1, *t2;
	struct conf a, b;

	(void)state;
	assert_int_equal(parse(example, &a, err), 0);
	t1 = text_of(&a, false);
	assert_int_equal(parse(t1, &b, err), 0);
	t2 = text_of(&b, false);
	assert_string_equal(t1, t2);
	assert_int_equal(a.nprefixes, b.nprefixes);
	assert_memory_equal(a.prefixes, b.prefixes,
			    a.nprefixes * sizeof(*a.prefixes));
	assert_int_equal(a.npolicies, b.npolicies);
	assert_memory_equal(a.policies, b.policies,
			    a.npolicies * sizeof(*a.policies));
	assert_true(b.has_max_inflight && b.max_inflight == 8);
	assert_string_equal(t1,
		"# ksmbd-sched.conf(5), as written by smb-classify dump\n"
		"\n[global]\n\tmax inflight = 8\n"
		"\n[class 0]\n\tper peer = yes\n\tprefix = ::/0\n"
		"\n[class 2]\n\tweight = 2\n\tsplice min = 1M\n\tunbound min = 256K\n"
		"\tprefix = 10.9.0.0/16\n\tprefix = 10.10.0.0/16 weight 3 per-peer\n"
		"\n[class 7]\n\tsplice min = off\n\tunbound min = off\n");
	free(t1);
	free(t2);
	conf_free(&a);
	conf_free(&b);
}

static void test_diff(void **state)
{
	char err[CONF_ERRLEN], *d;
	struct conf a, b;
	FILE *f;
	size_t len = 0;

	(void)state;
	assert_int_equal(parse(example, &a, err), 0);
	d = text_of(&a, true);
	assert_string_equal(d,
		"+ max-inflight 8 (load)\n"
		"+ prefix 10.9.0.0/16 class 2 weight 2\n"
		"+ prefix 10.10.0.0/16 class 2 weight 3 per-peer\n"
		"+ prefix ::/0 class 0 weight 1 per-peer\n"
		"+ policy 2 splice-min 1M unbound-min 256K\n"
		"+ policy 7 splice-min off unbound-min off\n");
	free(d);
	assert_int_equal(parse("[global]\nmax inflight = 2\n[class 2]\nweight = 2\nsplice min = 64K\n"
			       "prefix = 10.9.0.0/16\nprefix = 10.10.0.0/16\n", &b, err), 0);
	d = NULL;
	f = open_memstream(&d, &len);
	assert_int_equal(conf_diff(f, &a, &b), 5);
	fclose(f);
	assert_string_equal(d,
		"~ max-inflight 8 -> 2\n"
		"~ prefix 10.10.0.0/16 class 2 weight 3 per-peer -> class 2 weight 2\n"
		"- prefix ::/0 class 0 weight 1 per-peer\n"
		"~ policy 2 splice-min 1M unbound-min 256K -> splice-min 64K unbound-min off\n"
		"- policy 7 splice-min off unbound-min off\n");
	free(d);
	/* No change: nothing. */
	f = open_memstream(&d, &len);
	assert_int_equal(conf_diff(f, &a, &a), 0);
	fclose(f);
	free(d);
	conf_free(&a);
	conf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_prefix6),
	};

	return cmocka_run_group_tests_name("conf", tests, NULL, NULL);
}
