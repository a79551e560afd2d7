// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_cidr.c - strict CIDR parsing of smb-classify: lengths, octets, edges
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#include "words.h"

/*
 * The test's model of the kernel's LPM trie match: whether @key covers
 * @addr (16 bytes, IPv4 as IPv4-mapped), i.e. the first prefixlen bits
 * are equal.
 */
static bool cidr_contains(const struct smb_prefix_key *key,
			  const unsigned char addr[SMB_ADDR_LEN])
{
	unsigned int bytes = key->prefixlen / 8, rest = key->prefixlen % 8;
	unsigned char m = 0xff << (8 - rest);

	if (key->prefixlen > SMB_ADDR_LEN * 8 || memcmp(key->addr, addr, bytes))
		return false;
	return !rest || (key->addr[bytes] & m) == (addr[bytes] & m);
}

struct accept_case {
	const char *in;
	unsigned int prefixlen;		/* stored, 0..128 */
	const char *addr6;		/* stored address, as IPv6 text */
	const char *shown;		/* cidr_format() */
};

static const struct accept_case accepted[] = {
	{ "10.0.0.0/8",		104, "::ffff:10.0.0.0",	"10.0.0.0/8" },
	{ "0.0.0.0/0",		96,  "::ffff:0.0.0.0",	"0.0.0.0/0" },
	{ "::/0",		0,   "::",		"::/0" },
	{ "128.0.0.0/1",	97,  "::ffff:128.0.0.0", "128.0.0.0/1" },
	{ "127.0.0.0/31",	127, "::ffff:127.0.0.0", "127.0.0.0/31" },
	{ "1.2.3.4/32",		128, "::ffff:1.2.3.4",	"1.2.3.4/32" },
	{ "255.255.255.255/32",	128, "::ffff:255.255.255.255",
	  "255.255.255.255/32" },
	{ "192.168.0.0/16",	112, "::ffff:192.168.0.0", "192.168.0.0/16" },
	{ "8000::/1",		1,   "8000::",		"8000::/1" },
	{ "2001:db8::/32",	32,  "2001:db8::",	"2001:db8::/32" },
	{ "2001:DB8::/32",	32,  "2001:db8::",	"2001:db8::/32" },
	{ "2001:db8::/127",	127, "2001:db8::",	"2001:db8::/127" },
	{ "2001:db8::1/128",	128, "2001:db8::1",	"2001:db8::1/128" },
	{ "::1/128",		128, "::1",		"::1/128" },
	/* IPv4-mapped IPv6 is the same key as the IPv4 prefix. */
	{ "::ffff:1.2.3.4/128",	128, "::ffff:1.2.3.4",	"1.2.3.4/32" },
	{ "::ffff:0:0/96",	96,  "::ffff:0.0.0.0",	"0.0.0.0/0" },
	/* Shorter than /96 is not IPv4 any more: shown as IPv6. */
	{ "::fffe:0:0/95",	95,  "::fffe:0:0",	"::fffe:0:0/95" },
	{ "::/80",		80,  "::",		"::/80" },
};

static const char *const rejected[] = {
	/* bad prefix lengths and stray characters */
	"1.2.3.4/33", "::/129", "1.2.3.4/", "1.2.3.4/-1", "1.2.3.4/ 24",
	" 1.2.3.4/24", "1.2.3.4/24x", "1.2.3.4/4294967328", "",
	/* IPv4 not in four plain decimal octets */
	"010.0.0.1/32", "127.1/32", "0x7f.0.0.1/32",
	/* and their kin */
	"1.2.3.4", "::1", "/8", "1.2.3.4/08", "1.2.3.4/+8", "1.2.3.4//8",
	"1.2.3.4/8/", "1.2.3.4/32 ", "1.2.3.4 /32", "1.2.3.4/0x20",
	"1.2.3.4.5/32", "256.0.0.0/8", "1.2.3/24", "1.2.3.04/32",
	"1.2.3.4/4294967296", "1.2.3.4/18446744073709551648",
	"fe80::1%lo/128", "::ffff:010.0.0.1/128", "2001:db8::/0128",
	"2001:db8:::/32", "2001:db8::g/32", "::/-0", "1.2.3.4/\n",
	"1.2.3.4/32\n", "x/32", "a.b.c.d/32",
	/* host bits set */
	"10.1.2.3/8", "1.2.3.5/31", "0.0.0.1/0", "::1/127", "2001:db8::/16",
	"::ffff:1.2.3.4/96",
};

static void mapped(const char *addr6, unsigned char out[16])
{
	assert_int_equal(inet_pton(AF_INET6, addr6, out), 1);
}

static void test_accepted(void **state)
{
	char buf[CIDR_STRLEN], err[WORDS_ERRLEN];
	struct smb_prefix_key key;
	unsigned char want[16];
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(accepted); i++) {
		const struct accept_case *c = &accepted[i];

		memset(&key, 0xaa, sizeof(key));
		err[0] = '\0';
		if (cidr_parse(c->in, &key, err, sizeof(err)))
			fail_msg("'%s' rejected: %s", c->in, err);
		assert_int_equal(key.prefixlen, c->prefixlen);
		mapped(c->addr6, want);
		assert_memory_equal(key.addr, want, 16);
		assert_int_equal(cidr_format(&key, buf, sizeof(buf)), 0);
		if (c->shown)
			assert_string_equal(buf, c->shown);
	}
}

static void test_rejected(void **state)
{
	struct smb_prefix_key key, untouched;
	char err[WORDS_ERRLEN];
	size_t i;

	(void)state;
	memset(&untouched, 0xaa, sizeof(untouched));
	for (i = 0; i < ARRAY_SIZE(rejected); i++) {
		key = untouched;
		err[0] = '\0';
		if (!cidr_parse(rejected[i], &key, err, sizeof(err)))
			fail_msg("'%s' accepted as prefixlen %u", rejected[i],
				 key.prefixlen);
		assert_memory_equal(&key, &untouched, sizeof(key));
		assert_true(err[0] != '\0');
		assert_null(strchr(err, '\n'));	/* one line */
	}
	assert_int_not_equal(cidr_parse(NULL, &key, err, sizeof(err)), 0);
	assert_int_not_equal(cidr_parse("1.2.3.4/33", &key, NULL, 0), 0);
}

/* Host bits: rejected, and the message names the network to write. */
static void test_host_bits_message(void **state)
{
	struct smb_prefix_key key;
	char err[WORDS_ERRLEN];

	(void)state;
	assert_int_not_equal(cidr_parse("10.1.2.3/8", &key, err, sizeof(err)),
			     0);
	assert_non_null(strstr(err, "10.0.0.0/8"));
	assert_int_not_equal(cidr_parse("2001:db8::1/64", &key, err,
					sizeof(err)), 0);
	assert_non_null(strstr(err, "2001:db8::/64"));
}

/* No wrap-around: a huge length is "above 32", not 32 + 2^32 - 2^32. */
static void test_no_wrap(void **state)
{
	struct smb_prefix_key key;
	char err[WORDS_ERRLEN];

	(void)state;
	assert_int_not_equal(cidr_parse("1.2.3.4/4294967328", &key, err,
					sizeof(err)), 0);
	assert_non_null(strstr(err, "above 32"));
	assert_int_not_equal(cidr_parse("::/129", &key, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "above 128"));
}

/* How many of the addresses base-2 .. base+3 a prefix covers. */
static int covered(const char *prefix, const char *base6)
{
	struct smb_prefix_key key;
	unsigned char a[16];
	int i, n = 0;

	assert_int_equal(cidr_parse(prefix, &key, NULL, 0), 0);
	for (i = -2; i <= 3; i++) {
		unsigned int carry = (unsigned int)i, b;
		int j;

		mapped(base6, a);
		/* a += i, as a 128-bit big-endian number (i >= -2) */
		if (i < 0) {
			for (j = 15, b = -i; j >= 0 && b; j--) {
				unsigned int v = a[j];

				a[j] = (v - b) & 0xff;
				b = v < b;
			}
		} else {
			for (j = 15; j >= 0 && carry; j--) {
				unsigned int v = a[j] + carry;

				a[j] = v & 0xff;
				carry = v >> 8;
			}
		}
		n += cidr_contains(&key, a);
	}
	return n;
}

/* Edges: /31 and /127 cover exactly two addresses, /32 and /128 one. */
static void test_edges(void **state)
{
	unsigned char a[16];
	struct smb_prefix_key key;

	(void)state;
	assert_int_equal(covered("127.0.0.0/31", "::ffff:127.0.0.0"), 2);
	assert_int_equal(covered("2001:db8::/127", "2001:db8::"), 2);
	assert_int_equal(covered("127.0.0.1/32", "::ffff:127.0.0.1"), 1);
	assert_int_equal(covered("2001:db8::1/128", "2001:db8::1"), 1);
	assert_int_equal(covered("10.0.0.0/30", "::ffff:10.0.0.0"), 4);

	/* 0.0.0.0/0 is every IPv4 address and no IPv6 one. */
	assert_int_equal(cidr_parse("0.0.0.0/0", &key, NULL, 0), 0);
	mapped("::ffff:1.2.3.4", a);
	assert_true(cidr_contains(&key, a));
	mapped("::ffff:255.255.255.255", a);
	assert_true(cidr_contains(&key, a));
	mapped("::1", a);
	assert_false(cidr_contains(&key, a));
	mapped("2001:db8::1", a);
	assert_false(cidr_contains(&key, a));

	/* ::/0 is everything. */
	assert_int_equal(cidr_parse("::/0", &key, NULL, 0), 0);
	assert_true(cidr_contains(&key, a));
	mapped("::ffff:1.2.3.4", a);
	assert_true(cidr_contains(&key, a));

	/* An IPv4 rule matches the IPv4-mapped peer. */
	assert_int_equal(cidr_parse("127.0.0.0/8", &key, NULL, 0), 0);
	mapped("::ffff:127.0.0.1", a);
	assert_true(cidr_contains(&key, a));
	/* 127.0.0.2/32 does not match 127.0.0.9. */
	assert_int_equal(cidr_parse("127.0.0.2/32", &key, NULL, 0), 0);
	mapped("::ffff:127.0.0.9", a);
	assert_false(cidr_contains(&key, a));
}

static void test_order(void **state)
{
	static const char *const sorted[] = {
		"0.0.0.0/0", "1.2.3.4/32", "10.0.0.0/8", "10.0.0.0/16",
		"127.0.0.0/8", "::/0", "::1/128", "2001:db8::/32",
		"2001:db8::/64", "fe80::/10",
	};
	struct smb_prefix_key k[10];
	size_t i, j, n = ARRAY_SIZE(sorted);

	(void)state;
	for (i = 0; i < n; i++)
		assert_int_equal(cidr_parse(sorted[i], &k[i], NULL, 0), 0);
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			int r = cidr_cmp(&k[i], &k[j]);

			if (i < j)
				assert_true(r < 0);
			else if (i > j)
				assert_true(r > 0);
			else
				assert_int_equal(r, 0);
		}
}

static void test_format_errors(void **state)
{
	struct smb_prefix_key key = { .prefixlen = 129 };
	char buf[CIDR_STRLEN];

	(void)state;
	assert_int_not_equal(cidr_format(&key, buf, sizeof(buf)), 0);
	assert_int_equal(cidr_parse("255.255.255.255/32", &key, NULL, 0), 0);
	assert_int_not_equal(cidr_format(&key, buf, 8), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_rejected),
		cmocka_unit_test(test_host_bits_message),
		cmocka_unit_test(test_no_wrap),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_format_errors),
	};

	return cmocka_run_group_tests_name("cidr", tests, NULL, NULL);
}
