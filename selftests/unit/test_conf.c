// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_conf.c - ksmbd-sched.conf: parse, errors by file:line:field,
 * the dump round trip, and the dry-run diff; prefixes, users and shares,
 * reservations and limits
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

#ifndef DIST_CONF
#define DIST_CONF "../../tools/smb-classify/dist/ksmbd-sched.conf"
#endif

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
	char err[CONF_ERRLEN], *text, *more;
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

	/* As many users and shares as the maps hold, then one more. */
	f = open_memstream(&text, &len);
	assert_non_null(f);
	fprintf(f, "[class 1]\n");
	for (i = 0; i < SMB_NAMES_MAX; i++)
		fprintf(f, "user = u%zu\nshare = s%zu\n", i, i);
	fclose(f);
	assert_int_equal(parse(text, &c, err), 0);
	assert_int_equal(c.nusers, SMB_NAMES_MAX);
	assert_int_equal(c.nshares, SMB_NAMES_MAX);
	conf_free(&c);
	assert_true(asprintf(&more, "%suser = u%u\n", text, SMB_NAMES_MAX) > 0);
	assert_int_equal(parse(more, &c, err), -22);
	assert_string_equal(err, "t.conf:8194: user: more than 4096 users (the size of the users map)");
	free(more);
	assert_true(asprintf(&more, "%sshare = \"s %u\"\n", text, SMB_NAMES_MAX) > 0);
	assert_int_equal(parse(more, &c, err), -22);
	assert_string_equal(err, "t.conf:8194: share: more than 4096 shares (the size of the shares map)");
	free(more);
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
		{ "user = alice\n", "t.conf:1: user: outside a section" },
		{ "[global]\nshare = x\n", "t.conf:2: share: unknown field of [global]" },
		{ "[class 1]\nuser = alice\n[class 2]\nuser = Alice\n", "t.conf:4: user: 'alice' given twice (lines 2 and 4)" },
		{ "[class 1]\nshare = X weight 2\nshare = x\n", "t.conf:3: share: 'x' given twice (lines 2 and 3)" },
		{ "[class 1]\nshare = \"Team Files\"\n[class 2]\nshare = team files per-peer\n", "t.conf:4: share: 'files': expected 'weight W'" },
		{ "[class 1]\nshare = \"Team Files\"\n[class 2]\nshare = \"team files\" per-peer\n", "t.conf:4: share: 'team files' given twice (lines 2 and 4)" },
		{ "[class 1]\nuser =\n", "t.conf:2: user: empty user name" },
		{ "[class 1]\nshare = \"\"\n", "t.conf:2: share: empty share name" },
		{ "[class 1]\nuser = EXAMPLE\\alice\n", "t.conf:2: user: user 'EXAMPLE\\alice': ksmbd maps a login to its own account database by account name alone (ksmbd.adduser), so give the account name 'alice'" },
		{ "[class 1]\nuser = alice@EXAMPLE.COM weight 2\n", "t.conf:2: user: user 'alice@EXAMPLE.COM': ksmbd maps a login" },
		{ "[class 1]\nuser = \"al ice\"\n", "t.conf:2: user: user 'al ice': a space at byte 3" },
		{ "[class 1]\nuser = a:b\n", "t.conf:2: user: user 'a:b': ':' is not allowed in an account name" },
		{ "[class 1]\nuser = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", "t.conf:2: user: user 'aaaaaaaaaaaaaaaaaaaaaaaa...': 48 bytes, longer than 47" },
		{ "[class 1]\nshare = ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss\n", "t.conf:2: share: share 'ssssssssssssssssssssssss...': 64 bytes, longer than 63" },
		{ "[class 1]\nshare = a/b\n", "t.conf:2: share: share 'a/b': '/' is not allowed in a share name" },
		{ "[class 1]\nshare = a\001b\n", "t.conf:2: share: share 'a?b': control character 0x01 at byte 2" },
		{ "[class 1]\nshare = \"team files\n", "t.conf:2: share: '\"team files': no closing '\"'" },
		{ "[class 1]\nshare = \"a\"b\n", "t.conf:2: share: '\"a\"b': expected a space after the closing '\"'" },
		{ "[class 1]\nuser = alice weight 0\n", "t.conf:2: user: weight '0': must be a decimal 1-255" },
		{ "[class 1]\nuser = alice weight 2 weight 3\n", "t.conf:2: user: weight given twice" },
		{ "[class 1]\nshare = s prefix6 64\n", "t.conf:2: share: prefix6 64: only with per-peer" },
		{ "[class 1]\nuser = a b c d e f g h i\n", "t.conf:2: user: too many words" },
		{ "[class 1]\nuser = alice\nshare = a\\b\nprefix = 10.1.2.3/8\n", "t.conf:3: share: share 'a\\b': '\\' is not allowed" },
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
		assert_null(c.users);
		assert_null(c.shares);
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

/* Users and shares: folding, the class's words and their own, quotes. */
static const char names_example[] =
	"[class 10]\n"
	"\tweight = 3\n"
	"\tuser = Alice\n"
	"\tuser = carol weight 1 per-peer\n"
	"[class 11]\n"
	"\tuser = bob\n"
	"\tshare = \"Team Files\" weight 2\n"
	"[class 30]\n"
	"\tper peer = yes\n"
	"\tunbound min = 64K\n"
	"\tshare = backup\n"
	"\tshare = IPC$   per-peer prefix6 128\n"
	"\tprefix = 10.1.0.0/24\n"
	"[class 31]\n"
	"\tuser = backup\n";

static void test_names(void **state)
{
	char err[CONF_ERRLEN], *t1, *t2;
	struct conf a, b;

	(void)state;
	assert_int_equal(parse(names_example, &a, err), 0);
	/* By name, folded: a user and a share may have the same name. */
	assert_int_equal(a.nusers, 4);
	assert_string_equal(a.users[0].key.name, "alice");
	assert_int_equal(a.users[0].word, KSMBD_SCHED_CLASS(10, 3, 0));
	assert_string_equal(a.users[1].key.name, "backup");
	assert_int_equal(a.users[1].word, KSMBD_SCHED_CLASS(31, 1, 0));
	assert_string_equal(a.users[2].key.name, "bob");
	assert_int_equal(a.users[2].word, KSMBD_SCHED_CLASS(11, 1, 0));
	assert_string_equal(a.users[3].key.name, "carol");
	assert_int_equal(a.users[3].word, KSMBD_SCHED_CLASS(10, 1, 1));
	assert_int_equal(a.nshares, 3);
	assert_string_equal(a.shares[0].key.name, "backup");
	assert_int_equal(a.shares[0].word, KSMBD_SCHED_CLASS(30, 1, 1));
	assert_string_equal(a.shares[1].key.name, "ipc$");
	assert_int_equal(a.shares[1].word, KSMBD_SCHED_CLASS(30, 1, 1) |
			 KSMBD_SCHED_CLASS_PEER6(32));
	assert_string_equal(a.shares[2].key.name, "team files");
	assert_int_equal(a.shares[2].word, KSMBD_SCHED_CLASS(11, 2, 0));
	assert_int_equal(a.nprefixes, 1);
	assert_int_equal(a.prefixes[0].word, KSMBD_SCHED_CLASS(30, 1, 1));
	assert_int_equal(a.npolicies, 1);

	/* dump's text, and the same maps and text once parsed again. */
	t1 = text_of(&a, false);
	assert_string_equal(t1,
		"# ksmbd-sched.conf(5), as written by smb-classify dump\n"
		"\n[class 10]\n\tweight = 3\n\tuser = alice\n"
		"\tuser = carol weight 1 per-peer\n"
		"\n[class 11]\n\tuser = bob\n"
		"\tshare = \"team files\" weight 2\n"
		"\n[class 30]\n\tper peer = yes\n"
		"\tsplice min = 64K\n\tunbound min = 64K\n"
		"\tprefix = 10.1.0.0/24\n\tshare = backup\n"
		"\tshare = ipc$ per-peer prefix6 128\n"
		"\n[class 31]\n\tuser = backup\n");
	assert_int_equal(parse(t1, &b, err), 0);
	assert_int_equal(a.nusers, b.nusers);
	assert_memory_equal(a.users, b.users, a.nusers * sizeof(*a.users));
	assert_int_equal(a.nshares, b.nshares);
	assert_memory_equal(a.shares, b.shares, a.nshares * sizeof(*a.shares));
	assert_int_equal(a.nprefixes, b.nprefixes);
	assert_memory_equal(a.prefixes, b.prefixes,
			    a.nprefixes * sizeof(*a.prefixes));
	assert_int_equal(a.npolicies, b.npolicies);
	assert_memory_equal(a.policies, b.policies,
			    a.npolicies * sizeof(*a.policies));
	t2 = text_of(&b, false);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
	conf_free(&a);
	conf_free(&b);
}

/*
 * The class of a section decided by its users and shares alone, every
 * entry per peer with one prefix6, or one of them with its own: dump
 * writes what parses back to the same words.
 */
static void test_names_class_words(void **state)
{
	static const char *const texts[] = {
		"[class 5]\nper peer = yes\nper peer prefix6 = 48\nuser = u1\nshare = s1\n",
		"[class 5]\nper peer = yes\nuser = u1 per-peer prefix6 48\nshare = s1 weight 9\n",
		"[class 5]\nweight = 7\nshare = s1\nshare = s2 weight 1 per-peer\n",
		"[class 5]\nuser = \"Jos\xc3\xa9\"\nshare = \"\xc9T\xc9 x\"\n",
		"[class 0]\nuser = guest\n[class 65535]\nshare = z weight 255\n",
	};
	char err[CONF_ERRLEN], *t1, *t2;
	struct conf a, b;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		if (parse(texts[i], &a, err))
			fail_msg("%s: %s", texts[i], err);
		t1 = text_of(&a, false);
		if (parse(t1, &b, err))
			fail_msg("%s: dump '%s' does not parse: %s", texts[i],
				 t1, err);
		assert_int_equal(a.nusers, b.nusers);
		assert_memory_equal(a.users, b.users,
				    (a.nusers + 1) * sizeof(*a.users));
		assert_int_equal(a.nshares, b.nshares);
		assert_memory_equal(a.shares, b.shares,
				    (a.nshares + 1) * sizeof(*a.shares));
		t2 = text_of(&b, false);
		assert_string_equal(t1, t2);
		free(t1);
		free(t2);
		conf_free(&a);
		conf_free(&b);
	}
	/* Bytes above 0x7f are not folded; A-Z around them are. */
	assert_int_equal(parse(texts[3], &a, err), 0);
	assert_string_equal(a.users[0].key.name, "jos\xc3\xa9");
	assert_string_equal(a.shares[0].key.name, "\xc9t\xc9 x");
	conf_free(&a);
}

/* The example of ksmbd-sched.conf(5), USERS AND SHARES. */
static void test_names_man_example(void **state)
{
	static const char text[] =
		"    # alice and bob work behind one NAT address\n"
		"    [class 10]\n"
		"        weight = 3\n"
		"        user = alice\n"
		"\n"
		"    [class 11]\n"
		"        user = bob\n"
		"\n"
		"    [class 30]\n"
		"        unbound min = 64K\n"
		"        share = backup\n";
	char err[CONF_ERRLEN], *d;
	struct conf c;

	(void)state;
	assert_int_equal(parse(text, &c, err), 0);
	d = text_of(&c, true);
	assert_string_equal(d,
		"+ user alice class 10 weight 3\n"
		"+ user bob class 11 weight 1\n"
		"+ share backup class 30 weight 1\n"
		"+ policy 30 splice-min 64K unbound-min 64K\n");
	free(d);
	conf_free(&c);
}

static void test_names_diff(void **state)
{
	char err[CONF_ERRLEN], *d = NULL;
	struct conf a, b;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(parse("[class 10]\nuser = alice\nuser = bob\n"
			       "[class 30]\nshare = backup\nshare = \"team files\"\n",
			       &a, err), 0);
	assert_int_equal(parse("[class 10]\nweight = 3\nuser = alice\n"
			       "[class 11]\nuser = carol\n"
			       "[class 31]\nshare = backup\nshare = \"Team Files\" per-peer\n",
			       &b, err), 0);
	f = open_memstream(&d, &len);
	assert_non_null(f);
	assert_int_equal(conf_diff(f, &a, &b), 5);
	fclose(f);
	assert_string_equal(d,
		"~ user alice class 10 weight 1 -> class 10 weight 3\n"
		"- user bob class 10 weight 1\n"
		"+ user carol class 11 weight 1\n"
		"~ share backup class 30 weight 1 -> class 31 weight 1\n"
		"~ share \"team files\" class 30 weight 1 -> class 31 weight 1 per-peer\n");
	free(d);
	conf_free(&a);
	conf_free(&b);
}

/* Reservations and limits: the keys in any spelling, dump, round trip. */
static const char qos_example[] =
	"[class 5]\n"
	"\tReservation IOPS = 100\n"
	"\tburst = 250\n"
	"[class 30]\n"
	"\tshare = backup\n"
	"\tlimit_bytes = 20M\n"
	"\tScope = aggregated\n"
	"[class 31]\n"
	"\treservation-bytes = 1536\n"
	"\tLimitIops = 5000\n"
	"\tlimit bytes = 1G\n"
	"\treservation iops = 5000\n"
	"\tsplice min = 64K\n"
	"\tscope = dedicated\n";

static void test_qos(void **state)
{
	char err[CONF_ERRLEN], *t1, *t2;
	struct conf a, b;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(parse(qos_example, &a, err), 0);
	assert_int_equal(a.nqos, 3);
	assert_int_equal(a.qos[0].id, 5);
	assert_int_equal(a.qos[0].q.reservation_iops, 100);
	assert_int_equal(a.qos[0].q.burst_ms, 250);
	assert_int_equal(a.qos[0].q.flags, 0);
	assert_true(a.qos[0].q.limit_bps == 0);
	assert_int_equal(a.qos[1].id, 30);
	assert_true(a.qos[1].q.limit_bps == 20 << 20);
	assert_int_equal(a.qos[1].q.flags, KSMBD_SCHED_CLASS_AGGREGATED);
	assert_int_equal(a.qos[2].id, 31);
	assert_true(a.qos[2].q.reservation_bps == 1536);
	assert_int_equal(a.qos[2].q.limit_iops, 5000);
	assert_true(a.qos[2].q.limit_bps == 1ULL << 30);
	assert_int_equal(a.qos[2].q.reservation_iops, 5000);
	assert_int_equal(a.npolicies, 1);
	assert_int_equal(a.nshares, 1);

	t1 = text_of(&a, false);
	assert_string_equal(t1,
		"# ksmbd-sched.conf(5), as written by smb-classify dump\n"
		"\n[class 5]\n\treservation iops = 100\n\tburst = 250\n"
		"\tscope = dedicated\n"
		"\n[class 30]\n\tlimit bytes = 20M\n\tscope = aggregated\n"
		"\tshare = backup\n"
		"\n[class 31]\n\tsplice min = 64K\n\tunbound min = off\n"
		"\treservation iops = 5000\n\treservation bytes = 1536\n"
		"\tlimit iops = 5000\n\tlimit bytes = 1G\n"
		"\tscope = dedicated\n");
	assert_int_equal(parse(t1, &b, err), 0);
	assert_int_equal(a.nqos, b.nqos);
	assert_memory_equal(a.qos, b.qos, (a.nqos + 1) * sizeof(*a.qos));
	t2 = text_of(&b, false);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);

	t1 = text_of(&a, true);
	assert_string_equal(t1,
		"+ share backup class 30 weight 1\n"
		"+ policy 31 splice-min 64K unbound-min off\n"
		"+ class 5 reservation-iops 100 burst 250 scope dedicated\n"
		"+ class 30 limit-bytes 20M scope aggregated\n"
		"+ class 31 reservation-iops 5000 reservation-bytes 1536 limit-iops 5000 limit-bytes 1G scope dedicated\n");
	free(t1);
	conf_free(&b);

	/* A class whose entry changes, one that goes, one that comes. */
	assert_int_equal(parse("[class 5]\nlimit iops = 100\n"
			       "[class 7]\nreservation bytes = 1M\n"
			       "[class 30]\nshare = backup\nlimit bytes = 20M\n"
			       "scope = aggregated\n"
			       "[class 31]\nsplice min = 64K\n", &b, err), 0);
	t1 = NULL;
	f = open_memstream(&t1, &len);
	assert_non_null(f);
	assert_int_equal(conf_diff(f, &a, &b), 3);
	fclose(f);
	assert_string_equal(t1,
		"~ class 5 reservation-iops 100 burst 250 scope dedicated -> limit-iops 100 scope dedicated\n"
		"+ class 7 reservation-bytes 1M scope dedicated\n"
		"- class 31 reservation-iops 5000 reservation-bytes 1536 limit-iops 5000 limit-bytes 1G scope dedicated\n");
	free(t1);
	conf_free(&a);
	conf_free(&b);
}

/*
 * An entry read from a map (as dump has it) without a rate: nothing of
 * it is written, so the text parses back; its burst and scope alone
 * would be refused.
 */
static void test_qos_dump_inert(void **state)
{
	struct conf_qos q[2] = {
		{ .id = 4, .q = { .burst_ms = 300,
				  .flags = KSMBD_SCHED_CLASS_AGGREGATED } },
		{ .id = 9, .q = { .limit_iops = 7 } },
	};
	struct conf c = { .qos = q, .nqos = 2 }, b;
	char err[CONF_ERRLEN], *t;

	(void)state;
	t = text_of(&c, false);
	assert_string_equal(t,
		"# ksmbd-sched.conf(5), as written by smb-classify dump\n"
		"\n[class 4]\n"
		"\n[class 9]\n\tlimit iops = 7\n\tscope = dedicated\n");
	assert_int_equal(parse(t, &b, err), 0);
	assert_int_equal(b.nqos, 1);
	assert_int_equal(b.qos[0].id, 9);
	free(t);
	conf_free(&b);
}

static void test_qos_errors(void **state)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "[class 1]\nreservation iops = 200\nlimit iops = 100\n", "t.conf:2: reservation iops: reservation-iops 200 above limit-iops 100: a reservation cannot exceed the limit of its unit (the kernel would clamp it to 100)" },
		{ "[class 1]\nlimit bytes = 1M\nweight = 2\nreservation bytes = 2M\n", "t.conf:4: reservation bytes: reservation-bytes 2M above limit-bytes 1M" },
		{ "[class 1]\nburst = 100\n", "t.conf:2: burst: burst 100: only with a reservation or a limit (it is the depth of their token buckets)" },
		{ "[class 1]\nweight = 2\nscope = aggregated\n", "t.conf:3: scope: scope aggregated: only with a reservation or a limit" },
		{ "[class 1]\nlimit iops = 1\nlimit-iops = 2\n", "t.conf:3: limit iops: given twice" },
		{ "[class 1]\nlimit iops = 1\nscope = dedicated\nScope = dedicated\n", "t.conf:4: scope: given twice" },
		{ "[class 1]\nlimit iops = 0\n", "t.conf:2: limit iops: limit-iops '0': must be a decimal 1-10000000" },
		{ "[class 1]\nlimit iops =\n", "t.conf:2: limit iops: limit-iops '': must be a decimal" },
		{ "[class 1]\nlimit iops = 10000001\n", "t.conf:2: limit iops: limit-iops '10000001': above 10000000, the kernel's largest" },
		{ "[class 1]\nreservation bytes = 1025G\n", "t.conf:2: reservation bytes: reservation-bytes '1025G': above 1024G (1 TiB) a second" },
		{ "[class 1]\nlimit bytes = 20 MiB\n", "t.conf:2: limit bytes: limit-bytes '20 MiB': must be bytes a second" },
		{ "[class 1]\nlimit iops = 1\nburst = 10001\n", "t.conf:3: burst: burst '10001': above 10000 ms" },
		{ "[class 1]\nlimit iops = 1\nburst = 0\n", "t.conf:3: burst: burst '0': must be a decimal 1-10000" },
		{ "[class 1]\nlimit iops = 1\nscope = both\n", "t.conf:3: scope: scope 'both': must be dedicated" },
		{ "[class 1]\nlimit = 1\n", "t.conf:2: limit: unknown field of [class 1]" },
		{ "[global]\nlimit iops = 1\n", "t.conf:2: limitiops: unknown field of [global]" },
		{ "limit iops = 1\n", "t.conf:1: limitiops: outside a section" },
		/* A value is checked when read, the entry after the file. */
		{ "[class 1]\nburst = 5\n[class 2]\nlimit iops = x\n", "t.conf:4: limit iops: limit-iops 'x'" },
		{ "[class 1]\nburst = 5\n[class 2]\nlimit iops = 1\nreservation iops = 2\n", "t.conf:2: burst: burst 5: only with" },
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
		assert_null(c.qos);
		assert_int_equal(c.nqos, 0);
	}
}

/* The example of ksmbd-sched.conf(5), RESERVATIONS AND LIMITS. */
static void test_qos_man_example(void **state)
{
	static const char text[] =
		"    # the share backup: at most 20 MiB a second for all its\n"
		"    # clients together, each its own client within that\n"
		"    [class 30]\n"
		"        per peer = yes\n"
		"        limit bytes = 20M\n"
		"        scope = aggregated\n"
		"        share = backup\n"
		"\n"
		"    # interactive users: each SMB client of theirs 100 I/Os a\n"
		"    # second whatever else runs, then its share of the rest\n"
		"    [class 40]\n"
		"        per peer = yes\n"
		"        reservation iops = 100\n"
		"        user = carol\n"
		"        user = dave\n";
	char err[CONF_ERRLEN], *d;
	struct conf c;

	(void)state;
	assert_int_equal(parse(text, &c, err), 0);
	d = text_of(&c, true);
	assert_string_equal(d,
		"+ user carol class 40 weight 1 per-peer\n"
		"+ user dave class 40 weight 1 per-peer\n"
		"+ share backup class 30 weight 1 per-peer\n"
		"+ class 30 limit-bytes 20M scope aggregated\n"
		"+ class 40 reservation-iops 100 scope dedicated\n");
	free(d);
	conf_free(&c);
}

/* The example file installed as /etc/ksmbd/ksmbd-sched.conf parses. */
static void test_dist_example(void **state)
{
	char err[CONF_ERRLEN] = "", *t1, *t2;
	struct conf a, b;
	FILE *f;

	(void)state;
	f = fopen(DIST_CONF, "r");
	if (!f)
		fail_msg("%s: cannot open", DIST_CONF);
	if (conf_parse(f, "ksmbd-sched.conf", &a, err, sizeof(err)))
		fail_msg("%s", err);
	fclose(f);
	t1 = text_of(&a, false);
	assert_int_equal(parse(t1, &b, err), 0);
	t2 = text_of(&b, false);
	assert_string_equal(t1, t2);
	free(t1);
	free(t2);
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
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_names_class_words),
		cmocka_unit_test(test_names_man_example),
		cmocka_unit_test(test_names_diff),
		cmocka_unit_test(test_qos),
		cmocka_unit_test(test_qos_dump_inert),
		cmocka_unit_test(test_qos_errors),
		cmocka_unit_test(test_qos_man_example),
		cmocka_unit_test(test_dist_example),
	};

	return cmocka_run_group_tests_name("conf", tests, NULL, NULL);
}
