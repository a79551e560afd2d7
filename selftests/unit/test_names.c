// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_names.c - user and share names of smb-classify: what each refuses,
 * the length limits of ksmbd, the folding to the kernel's form
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#include "words.h"

/*
 * Parse @in as @kind: it must be accepted, stored as @want, NUL-padded
 * to SMB_NAME_LEN (the key starts as garbage).
 */
static void accepts(enum name_kind kind, const char *in, const char *want)
{
	struct smb_name_key key;
	char err[WORDS_ERRLEN] = "", text[NAME_STRLEN];
	size_t i, n = strlen(want);

	memset(&key, 0xa5, sizeof(key));
	if (name_parse(kind, in, &key, err, sizeof(err)))
		fail_msg("'%s' refused: %s", in, err);
	if (memcmp(key.name, want, n))
		fail_msg("'%s' stored as '%.64s', want '%s'", in, key.name,
			 want);
	for (i = n; i < SMB_NAME_LEN; i++)
		if (key.name[i])
			fail_msg("'%s': byte %zu of the key is 0x%02x, not 0",
				 in, i, (unsigned char)key.name[i]);
	name_text(&key, text);
	assert_string_equal(text, want);
}

/*
 * Parse @in as @kind: it must be refused with a message that starts with
 * @want, and the key left as it was.
 */
static void refuses(enum name_kind kind, const char *in, const char *want)
{
	struct smb_name_key key, before;
	char err[WORDS_ERRLEN] = "";

	memset(&key, 0x5a, sizeof(key));
	before = key;
	if (!name_parse(kind, in, &key, err, sizeof(err)))
		fail_msg("'%s' accepted", in ? in : "(null)");
	if (strncmp(err, want, strlen(want)))
		fail_msg("'%s': got '%s', want '%s...'", in ? in : "(null)",
			 err, want);
	assert_memory_equal(&key, &before, sizeof(key));
}

/* @c repeated @n times. */
static const char *repeat(char *buf, char c, size_t n)
{
	memset(buf, c, n);
	buf[n] = '\0';
	return buf;
}

static void test_user_accepted(void **state)
{
	(void)state;
	accepts(NAME_USER, "alice", "alice");
	accepts(NAME_USER, "Alice", "alice");
	accepts(NAME_USER, "ALICE.SMITH-2_x", "alice.smith-2_x");
	accepts(NAME_USER, "a", "a");
	accepts(NAME_USER, "svc$", "svc$");
	accepts(NAME_USER, "O'Brien#1!~(x)&%^{}`", "o'brien#1!~(x)&%^{}`");
}

static void test_user_refused(void **state)
{
	static const char forbidden[] = "\"/[]:;|=,+*?<>";
	char in[8];
	size_t i;

	(void)state;
	refuses(NAME_USER, NULL, "empty user name");
	refuses(NAME_USER, "", "empty user name");
	/* Logins, not account names: the account name is named. */
	refuses(NAME_USER, "EXAMPLE\\alice",
		"user 'EXAMPLE\\alice': ksmbd maps a login to its own account database by account name alone (ksmbd.adduser), so give the account name 'alice'");
	refuses(NAME_USER, "alice@EXAMPLE.COM",
		"user 'alice@EXAMPLE.COM': ksmbd maps a login to its own account database by account name alone (ksmbd.adduser), so give the account name 'alice'");
	refuses(NAME_USER, "EXAMPLE\\alice@x",
		"user 'EXAMPLE\\alice@x': ksmbd maps a login to its own account database by account name alone (ksmbd.adduser), so give the account name 'alice'");
	refuses(NAME_USER, "EXAMPLE\\",
		"user 'EXAMPLE\\': ksmbd maps a login to its own account database by account name alone (ksmbd.adduser), so give the account name");
	refuses(NAME_USER, "@", "user '@': ksmbd maps a login");
	refuses(NAME_USER, "\\", "user '\\': ksmbd maps a login");
	/* White space and control characters. */
	refuses(NAME_USER, "al ice",
		"user 'al ice': a space at byte 3 (an account name has none)");
	refuses(NAME_USER, " alice", "user ' alice': a space at byte 1");
	refuses(NAME_USER, "alice ", "user 'alice ': a space at byte 6");
	refuses(NAME_USER, "al\tice",
		"user 'al?ice': control character 0x09 at byte 3");
	refuses(NAME_USER, "alice\n",
		"user 'alice?': control character 0x0a at byte 6");
	refuses(NAME_USER, "\x01", "user '?': control character 0x01");
	refuses(NAME_USER, "a\x1f", "user 'a?': control character 0x1f");
	refuses(NAME_USER, "a\x7f", "user 'a?': control character 0x7f");
	/* Each character Windows forbids in an account name. */
	for (i = 0; forbidden[i]; i++) {
		char want[64];

		snprintf(in, sizeof(in), "a%cb", forbidden[i]);
		snprintf(want, sizeof(want),
			 "user 'a%cb': '%c' is not allowed in an account name",
			 forbidden[i], forbidden[i]);
		refuses(NAME_USER, in, want);
	}
	refuses(NAME_USER, "a:b",
		"user 'a:b': ':' is not allowed in an account name (none of \" / \\ [ ] : ; | = , + * ? < > @)");
}

static void test_user_length(void **state)
{
	char in[80], want[80];

	(void)state;
	/* KSMBD_REQ_MAX_ACCOUNT_NAME_SZ is 48 with its NUL. */
	accepts(NAME_USER, repeat(in, 'A', USER_NAME_MAX),
		repeat(want, 'a', USER_NAME_MAX));
	refuses(NAME_USER, repeat(in, 'a', USER_NAME_MAX + 1),
		"user 'aaaaaaaaaaaaaaaaaaaaaaaa...': 48 bytes, longer than 47 (the longest account name of ksmbd)");
	refuses(NAME_USER, repeat(in, 'a', 64), "user 'aaaa");
	assert_int_equal(USER_NAME_MAX, 47);
}

static void test_share(void **state)
{
	static const char forbidden[] = "\"/\\[]:|<>+=;,*?";
	char in[80], want[80];
	size_t i;

	(void)state;
	accepts(NAME_SHARE, "backup", "backup");
	accepts(NAME_SHARE, "IPC$", "ipc$");
	accepts(NAME_SHARE, "ipc$", "ipc$");
	accepts(NAME_SHARE, "Team Files", "team files");
	accepts(NAME_SHARE, "a@b", "a@b");
	accepts(NAME_SHARE, "x.y-z_1#", "x.y-z_1#");
	refuses(NAME_SHARE, "", "empty share name");
	refuses(NAME_SHARE, NULL, "empty share name");
	refuses(NAME_SHARE, "a\tb", "share 'a?b': control character 0x09 at byte 2");
	refuses(NAME_SHARE, "a\x7f", "share 'a?': control character 0x7f");
	for (i = 0; forbidden[i]; i++) {
		snprintf(in, sizeof(in), "s%c", forbidden[i]);
		snprintf(want, sizeof(want),
			 "share 's%c': '%c' is not allowed in a share name",
			 forbidden[i], forbidden[i]);
		refuses(NAME_SHARE, in, want);
	}
	refuses(NAME_SHARE, "a;b",
		"share 'a;b': ';' is not allowed in a share name (none of \" / \\ [ ] : | < > + = ; , * ?)");
	/* KSMBD_REQ_MAX_SHARE_NAME is 64 with its NUL. */
	accepts(NAME_SHARE, repeat(in, 'S', SHARE_NAME_MAX),
		repeat(want, 's', SHARE_NAME_MAX));
	refuses(NAME_SHARE, repeat(in, 's', SHARE_NAME_MAX + 1),
		"share 'ssssssssssssssssssssssss...': 64 bytes, longer than 63 (the longest share name of ksmbd)");
	assert_int_equal(SHARE_NAME_MAX, 63);
}

/* Only ASCII A-Z fold; every byte above 0x7f is kept, UTF-8 or not. */
static void test_folding(void **state)
{
	char in[8], want[8];
	unsigned int c;

	(void)state;
	for (c = 0x20; c < 0x7f; c++) {
		if (strchr("\"/\\[]:;|=,+*?<>@ ", c))
			continue;
		snprintf(in, sizeof(in), "x%c", c);
		snprintf(want, sizeof(want), "x%c",
			 c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
		accepts(NAME_USER, in, want);
		accepts(NAME_SHARE, in, want);
	}
	/* "J\xc3\x9cRGEN" (U+00DC, capital U with diaeresis): not folded. */
	accepts(NAME_USER, "J\xc3\x9cRGEN", "j\xc3\x9crgen");
	accepts(NAME_USER, "J\xc3\xbcrgen", "j\xc3\xbcrgen");
	/* Latin-1 bytes, not UTF-8: kept as they are. */
	accepts(NAME_SHARE, "\xc9T\xc9", "\xc9t\xc9");
	accepts(NAME_SHARE, "\xff\x80", "\xff\x80");
	/* 47 bytes of UTF-8 are 47 bytes, whatever their characters. */
	accepts(NAME_USER,
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9" "A",
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9" "a");
	refuses(NAME_USER,
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9",
		"user '\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9...': 48 bytes, longer than 47");
}

/* name_cmp() orders by bytes: what "user list" and dump print in. */
static void test_order(void **state)
{
	struct smb_name_key a, b, c;
	char err[WORDS_ERRLEN];

	(void)state;
	assert_int_equal(name_parse(NAME_USER, "alice", &a, err, sizeof(err)), 0);
	assert_int_equal(name_parse(NAME_USER, "Alicea", &b, err, sizeof(err)), 0);
	assert_int_equal(name_parse(NAME_USER, "b", &c, err, sizeof(err)), 0);
	assert_true(name_cmp(&a, &b) < 0);
	assert_true(name_cmp(&b, &c) < 0);
	assert_true(name_cmp(&c, &a) > 0);
	assert_int_equal(name_parse(NAME_USER, "ALICE", &b, err, sizeof(err)), 0);
	assert_int_equal(name_cmp(&a, &b), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user_accepted),
		cmocka_unit_test(test_user_refused),
		cmocka_unit_test(test_user_length),
		cmocka_unit_test(test_share),
		cmocka_unit_test(test_folding),
		cmocka_unit_test(test_order),
	};

	return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
