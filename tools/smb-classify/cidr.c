// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * cidr.c - strict CIDR parsing and formatting for smb-classify
 *
 * Accepted: ADDR/LEN, ADDR an IPv4 dotted quad (four decimal octets
 * without leading zeros) or an IPv6 address as inet_pton(3) reads it,
 * LEN a decimal 0..32 or 0..128 without sign, spaces or leading zeros.
 * Everything else is rejected rather than guessed at: no bare address
 * (write /32 or /128 for one host), no classful or hex IPv4 forms, no
 * zone index, no host bits set after the prefix (the error names the
 * network address).  An IPv4 prefix a.b.c.d/N is stored IPv4-mapped as
 * ::ffff:a.b.c.d/(96 + N), the form in which the kernel passes IPv4 peers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cidr.h"
#include "classword.h"

static const unsigned char v4mapped_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
};

/**
 * cidr_parse() - parse a CIDR prefix into an LPM trie key
 * @s:      text, e.g. "10.0.0.0/8" or "2001:db8::/32"; NULL is rejected.
 * @key:    filled only on success.
 * @err:    on failure, a one-line message naming @s; may be NULL.
 * @errlen: size of @err (CIDR_ERRLEN is enough).
 *
 * See the top of this file for what is accepted.
 *
 * Return: 0, or -EINVAL with @key untouched.
 */
int cidr_parse(const char *s, struct smb_prefix_key *key,
	       char *err, size_t errlen)
{
	char addr[INET6_ADDRSTRLEN], net[INET6_ADDRSTRLEN];
	unsigned char a[SMB_ADDR_LEN] = {};
	unsigned int len, max, bit, off;
	unsigned long ulen;
	const char *slash;
	bool v6, host_bits = false;
	size_t alen;

	if (!s || !*s)
		return parse_error(err, errlen, "empty prefix");
	slash = strchr(s, '/');
	if (!slash)
		return parse_error(err, errlen,
				"'%.60s': missing prefix length (one host is /32 or /128)",
				s);
	alen = slash - s;
	if (alen == 0)
		return parse_error(err, errlen, "'%.60s': missing address", s);
	if (alen >= sizeof(addr))
		return parse_error(err, errlen, "'%.60s': address too long", s);
	memcpy(addr, s, alen);
	addr[alen] = '\0';

	v6 = strchr(addr, ':') != NULL;
	if (v6) {
		if (inet_pton(AF_INET6, addr, a) != 1)
			return parse_error(err, errlen,
					"'%.60s': not an IPv6 address", addr);
		max = 128;
		off = 0;
	} else {
		/* glibc's inet_pton() takes exactly four decimal octets. */
		if (inet_pton(AF_INET, addr, a + 12) != 1)
			return parse_error(err, errlen,
					"'%.60s': not an IPv4 address (four decimal octets 0-255, no leading zeros)",
					addr);
		memcpy(a, v4mapped_prefix, sizeof(v4mapped_prefix));
		max = 32;
		off = SMB_V4MAPPED_PREFIXLEN;
	}

	switch (parse_uint(slash + 1, max, &ulen)) {
	case 0:
		len = ulen;
		break;
	case -ERANGE:
		return parse_error(err, errlen,
				"'%.60s': prefix length above %u", s, max);
	default:
		return parse_error(err, errlen,
				"'%.60s': prefix length must be a decimal 0-%u",
				s, max);
	}

	len += off;
	for (bit = len; bit < SMB_ADDR_LEN * 8; bit++) {
		unsigned char m = 0x80 >> (bit % 8);

		if (a[bit / 8] & m) {
			host_bits = true;
			a[bit / 8] &= ~m;
		}
	}
	if (host_bits) {
		inet_ntop(v6 ? AF_INET6 : AF_INET, v6 ? a : a + 12,
			  net, sizeof(net));
		return parse_error(err, errlen,
				"'%.60s': host bits set; the network is %s/%u",
				s, net, len - off);
	}

	key->prefixlen = len;
	memcpy(key->addr, a, sizeof(key->addr));
	return 0;
}

/**
 * cidr_is_v4() - whether a key is an IPv4 prefix
 * @key: a key as cidr_parse() builds it.
 *
 * Return: true when @key lies within ::ffff:0:0/96, i.e. is shown as IPv4.
 */
static bool cidr_is_v4(const struct smb_prefix_key *key)
{
	return key->prefixlen >= SMB_V4MAPPED_PREFIXLEN &&
	       key->prefixlen <= SMB_ADDR_LEN * 8 &&
	       !memcmp(key->addr, v4mapped_prefix, sizeof(v4mapped_prefix));
}

/**
 * cidr_format() - format a key as text in the family the user wrote
 * @key: key; IPv4-mapped keys of length >= 96 print as a.b.c.d/(len - 96).
 * @buf: output.
 * @len: size of @buf; CIDR_STRLEN is enough.
 *
 * Return: 0, or -EINVAL for a prefix length above 128 or too small a buffer.
 */
int cidr_format(const struct smb_prefix_key *key, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN];
	bool v4 = cidr_is_v4(key);
	int n;

	if (key->prefixlen > SMB_ADDR_LEN * 8)
		return -EINVAL;
	if (!inet_ntop(v4 ? AF_INET : AF_INET6,
		       v4 ? key->addr + 12 : key->addr, addr, sizeof(addr)))
		return -EINVAL;
	n = snprintf(buf, len, "%s/%u", addr,
		     key->prefixlen - (v4 ? SMB_V4MAPPED_PREFIXLEN : 0));
	if (n < 0 || (size_t)n >= len)
		return -EINVAL;
	return 0;
}

/**
 * cidr_cmp() - order of "prefix list": IPv4 first, then address, then length
 * @a: a key.
 * @b: another key.
 *
 * Return: <0, 0 or >0 like strcmp().
 */
int cidr_cmp(const struct smb_prefix_key *a, const struct smb_prefix_key *b)
{
	bool a4 = cidr_is_v4(a), b4 = cidr_is_v4(b);
	int r;

	if (a4 != b4)
		return a4 ? -1 : 1;
	r = memcmp(a->addr, b->addr, sizeof(a->addr));
	if (r)
		return r;
	return (a->prefixlen > b->prefixlen) - (a->prefixlen < b->prefixlen);
}
