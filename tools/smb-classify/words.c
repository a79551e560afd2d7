// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * words.c - the words of smb-classify's commands and ksmbd-sched.conf:
 * numbers, CIDR prefixes, user and share names, class words, policy
 * thresholds, reservations and limits, max-inflight
 *
 * Numbers are strict decimals: no sign, spaces or leading zeros.  A CIDR
 * is ADDR/LEN, ADDR an IPv4 dotted quad (four decimal octets without
 * leading zeros) or an IPv6 address as inet_pton(3) reads it, LEN a
 * decimal 0..32 or 0..128.  Everything else is rejected rather than
 * guessed at: no bare address (write /32 or /128 for one host), no
 * classful or hex IPv4 forms, no zone index, no host bits set after the
 * prefix (the error names the network address).  An IPv4 prefix
 * a.b.c.d/N is stored IPv4-mapped as ::ffff:a.b.c.d/(96 + N), the form in
 * which the kernel passes IPv4 peers.
 *
 * A user is a ksmbd account name (ksmbd.adduser), 1-47 bytes, never a
 * DOMAIN\user or user@REALM login; a share is a share name of
 * ksmbd.conf, 1-63 bytes.  Neither may hold a control character or a
 * character Windows forbids in such names.  Both are stored as the
 * kernel hands them to the program: ASCII letters in lower case, bytes
 * above 0x7f as they are, NUL-padded (name_parse()).
 *
 * A size (a policy threshold, a rate in bytes a second) is a strict
 * decimal with at most one suffix, K (KiB), M (MiB) or G (GiB, rates
 * only), in either case.  A reservation or limit is checked against the
 * bounds of enum ksmbd_sched_qos and against the other words of its
 * entry (qos_check()): what the kernel would clamp is refused here.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksmbd_sched_abi.h"

#include "format.h"
#include "words.h"

/**
 * parse_uint() - strict decimal number
 * @s:   text; only the digits 0-9, no sign, no spaces, no leading zero
 *       (so "010" is never read as 8 or as 10).
 * @max: largest value accepted.
 * @out: value, set only on success.
 *
 * Return: 0; -EINVAL for anything but a plain decimal; -ERANGE above @max.
 */
int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long val;
	char *end;

	/* strtoul() also takes spaces, signs and "0x": only digits get there. */
	if (!s || *s < '0' || *s > '9' || (s[0] == '0' && s[1]))
		return -EINVAL;
	errno = 0;
	val = strtoul(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || val > max)
		return -ERANGE;
	*out = val;
	return 0;
}

/* parse_uint() 64 bits wide, whatever the width of unsigned long. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long val;
	char *end;

	if (!s || *s < '0' || *s > '9' || (s[0] == '0' && s[1]))
		return -EINVAL;
	errno = 0;
	val = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || val > max)
		return -ERANGE;
	*out = val;
	return 0;
}

/*
 * A strict decimal with at most one suffix of @units ("KM", "KMG"), in
 * either case, each 1024 times the one before it; at most @max bytes.
 * Return: 0; -EINVAL for bad syntax; -ERANGE above @max.
 */
static int parse_suffixed(const char *s, const char *units, uint64_t max,
			  uint64_t *out)
{
	uint64_t v, mul = 1;
	const char *u;
	char num[24];
	size_t n;
	int r;

	if (!s || !*s)
		return -EINVAL;
	n = strlen(s);
	if (n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n + 1);
	u = strchr(units, toupper((unsigned char)num[n - 1]));
	if (u) {
		mul = 1ULL << (10 * (u - units + 1));
		num[n - 1] = '\0';
	}
	r = parse_u64(num, max / mul, &v);
	if (r)
		return r;
	*out = v * mul;
	return 0;
}

/**
 * class_word_encode() - class word for a class spec
 * @spec: id 0..65535, weight 1..255, per_peer, prefix6 0 or 4..128 in
 *        steps of 4; out-of-range fields are the caller's bug
 *        (class_spec_parse() checks them).
 *
 * Return: KSMBD_SCHED_CLASS(id, weight, per_peer), with PEER6 set to
 * prefix6 / 4 when per_peer.
 */
uint32_t class_word_encode(const struct class_spec *spec)
{
	uint32_t w = KSMBD_SCHED_CLASS(spec->id, spec->weight, spec->per_peer);

	if (spec->per_peer)
		w |= KSMBD_SCHED_CLASS_PEER6(spec->prefix6 /
					     CLASS_PREFIX6_UNIT);
	return w;
}

/**
 * class_word_decode() - class spec of a class word
 * @word: class word; reserved bit 30, and PEER6 without PER_PEER, are
 *        ignored, as by the kernel.
 * @spec: output; a weight field of 0 decodes as 1, its meaning; a PEER6
 *        above KSMBD_SCHED_CLASS_PEER6_MAX as /128, where the kernel
 *        clamps it.
 */
void class_word_decode(uint32_t word, struct class_spec *spec)
{
	unsigned int peer6 = KSMBD_SCHED_CLASS_PEER6_OF(word);

	spec->id = KSMBD_SCHED_CLASS_ID_OF(word);
	spec->weight = KSMBD_SCHED_CLASS_WEIGHT_OF(word);
	if (!spec->weight)
		spec->weight = 1;
	spec->per_peer = !!(word & KSMBD_SCHED_CLASS_PER_PEER);
	if (peer6 > KSMBD_SCHED_CLASS_PEER6_MAX)
		peer6 = KSMBD_SCHED_CLASS_PEER6_MAX;
	spec->prefix6 = spec->per_peer ? peer6 * CLASS_PREFIX6_UNIT : 0;
}

/**
 * parse_error() - format a parser's error message into @err
 * @err:    buffer, or NULL
 * @errlen: its size
 * @fmt:    printf format; the message may quote user input
 *
 * Control characters are replaced by '?', so the message stays one line.
 *
 * Return: -EINVAL, for the parser to return.
 */
int parse_error(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
		/* The message quotes user input: keep it one line. */
		text_sanitize(err);
	}
	return -EINVAL;
}

/**
 * word_abbrev() - @word is a non-empty abbreviation of keyword @of
 * @word: what the user wrote
 * @of:   the keyword
 *
 * Command words may be abbreviated, as in bpftool and ip.
 */
bool word_abbrev(const char *word, const char *of)
{
	size_t n = strlen(word);

	return n && !strncmp(word, of, n);
}

/*
 * The characters Windows forbids in account names (besides control
 * characters and white space) and in share names.
 */
static const char user_forbidden[] = "\"/\\[]:;|=,+*?<>@";
static const char share_forbidden[] = "\"/\\[]:|<>+=;,*?";

/* "c1 c2 ...": @chars spelt out for a message. */
static void spell_chars(const char *chars, char *buf, size_t len)
{
	size_t o = 0;

	for (; *chars && o + 3 <= len; chars++) {
		if (o)
			buf[o++] = ' ';
		buf[o++] = *chars;
	}
	buf[o] = '\0';
}

/*
 * A DOMAIN\user or user@REALM login given as a user: refused, naming the
 * account name it holds, if any.
 */
static int login_form(const char *s, char *err, size_t errlen)
{
	const char *acct = strrchr(s, '\\'), *at;
	int n;

	acct = acct ? acct + 1 : s;
	at = strchr(acct, '@');
	n = at ? at - acct : (int)strlen(acct);
	if (n > USER_NAME_MAX)
		n = 0;
	return parse_error(err, errlen,
			   "user '%.40s': ksmbd maps a login to its own account database by account name alone (ksmbd.adduser), so give the account name%s%.*s%s",
			   s, n ? " '" : "", n, acct, n ? "'" : "");
}

/**
 * name_parse() - a user or share name as the key of its map
 * @kind:   NAME_USER: a ksmbd account name, 1-USER_NAME_MAX bytes, none
 *          of DOMAIN\user, user@REALM, white space or the characters of
 *          user_forbidden[].  NAME_SHARE: a share name, 1-SHARE_NAME_MAX
 *          bytes, none of share_forbidden[] ("ipc$" is one).  Neither
 *          may hold a control character (below 0x20, 0x7f).
 * @s:      the name (NULL: missing).
 * @key:    set only on success: @s with ASCII A-Z folded to a-z, bytes
 *          above 0x7f kept as they are, NUL-padded to SMB_NAME_LEN; the
 *          form of the names the kernel hands the program.
 * @err:    on failure, a one-line message naming @s.
 * @errlen: size of @err (WORDS_ERRLEN is enough).
 *
 * Return: 0 or -EINVAL.
 */
int name_parse(enum name_kind kind, const char *s, struct smb_name_key *key,
	       char *err, size_t errlen)
{
	bool user = kind == NAME_USER;
	const char *what = user ? "user" : "share";
	const char *bad = user ? user_forbidden : share_forbidden;
	size_t max = user ? USER_NAME_MAX : SHARE_NAME_MAX, n, i;
	struct smb_name_key k = { 0 };
	unsigned char c;
	char list[40];

	if (!s || !*s)
		return parse_error(err, errlen, "empty %s name", what);
	if (user && strpbrk(s, "\\@"))
		return login_form(s, err, errlen);
	n = strlen(s);
	for (i = 0; i < n; i++) {
		c = s[i];
		if (c < 0x20 || c == 0x7f)
			return parse_error(err, errlen,
					   "%s '%.40s': control character 0x%02x at byte %zu",
					   what, s, c, i + 1);
		if (user && c == ' ')
			return parse_error(err, errlen,
					   "user '%.40s': a space at byte %zu (an account name has none)",
					   s, i + 1);
		if (!strchr(bad, c))
			continue;
		spell_chars(bad, list, sizeof(list));
		return parse_error(err, errlen,
				   "%s '%.40s': '%c' is not allowed in %s name (none of %s)",
				   what, s, c, user ? "an account" : "a share",
				   list);
	}
	if (n > max)
		return parse_error(err, errlen,
				   "%s '%.24s...': %zu bytes, longer than %zu (the longest %s name of ksmbd)",
				   what, s, n, max, user ? "account" : "share");
	for (i = 0; i < n; i++)
		k.name[i] = s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' :
			    s[i];
	*key = k;
	return 0;
}

/**
 * name_text() - the name of a key as a string
 * @key: a key of the users or shares map (SMB_NAME_LEN bytes, NUL-padded
 *       unless a name fills it).
 * @buf: output, NAME_STRLEN bytes: the bytes up to the first NUL.
 */
void name_text(const struct smb_name_key *key, char *buf)
{
	memcpy(buf, key->name, SMB_NAME_LEN);
	buf[SMB_NAME_LEN] = '\0';
}

/**
 * name_cmp() - order of "user list" and "share list": by bytes
 * @a: a key.
 * @b: another key.
 *
 * Return: <0, 0 or >0 like strcmp().
 */
int name_cmp(const struct smb_name_key *a, const struct smb_name_key *b)
{
	return memcmp(a->name, b->name, sizeof(a->name));
}

/**
 * parse_class_id() - a CLASS word: a strict decimal 0-65535
 * @s:      the word (NULL: missing).
 * @id:     output, set only on success.
 * @err:    on failure, a one-line message.
 * @errlen: size of @err.
 *
 * Return: 0 or -EINVAL.
 */
int parse_class_id(const char *s, unsigned int *id, char *err, size_t errlen)
{
	unsigned long v;
	int r;

	if (!s)
		return parse_error(err, errlen, "missing CLASS");
	r = parse_uint(s, CLASS_ID_MAX, &v);
	if (r)
		return parse_error(err, errlen, "class '%.40s': %s", s,
				   r == -ERANGE ? "above 65535" :
				   "must be a decimal 0-65535");
	*id = v;
	return 0;
}

/**
 * parse_prefix6() - a "prefix6" value: a strict decimal multiple of 4,
 *                   4-128 (the PEER6 field counts 4-bit units)
 * @s:      the word (NULL: missing).
 * @len:    output, set only on success.
 * @err:    on failure, a one-line message.
 * @errlen: size of @err.
 *
 * Return: 0 or -EINVAL.
 */
int parse_prefix6(const char *s, unsigned int *len, char *err, size_t errlen)
{
	unsigned long v;

	if (!s)
		return parse_error(err, errlen, "prefix6: missing value");
	if (parse_uint(s, CLASS_PREFIX6_MAX, &v) || !v ||
	    v % CLASS_PREFIX6_UNIT)
		return parse_error(err, errlen,
				   "prefix6 '%.40s': must be a multiple of 4 in 4-128",
				   s);
	*len = v;
	return 0;
}

/**
 * class_spec_parse() - parse "CLASS [weight W] [per-peer [prefix6 LEN]]"
 * @argc:   number of words in @argv.
 * @argv:   the words; "weight", "per-peer" and "prefix6" may be
 *          abbreviated and come in any order, each at most once;
 *          "prefix6" only with "per-peer".
 * @spec:   output, set only on success; weight defaults to 1.
 * @err:    on failure, a one-line message.
 * @errlen: size of @err (WORDS_ERRLEN is enough).
 *
 * Return: 0 or -EINVAL.
 */
int class_spec_parse(int argc, char **argv, struct class_spec *spec,
		     char *err, size_t errlen)
{
	struct class_spec s = { .weight = 1 };
	bool have_weight = false;
	unsigned long v;
	int i, r;

	if (parse_class_id(argc > 0 ? argv[0] : NULL, &s.id, err, errlen))
		return -EINVAL;

	for (i = 1; i < argc; i++) {
		if (word_abbrev(argv[i], "weight")) {
			if (have_weight)
				return parse_error(err, errlen,
						"weight given twice");
			if (++i >= argc)
				return parse_error(err, errlen,
						"weight: missing value");
			r = parse_uint(argv[i], CLASS_WEIGHT_MAX, &v);
			if (r || v < CLASS_WEIGHT_MIN)
				return parse_error(err, errlen,
						"weight '%.40s': must be a decimal 1-255",
						argv[i]);
			s.weight = v;
			have_weight = true;
		} else if (word_abbrev(argv[i], "per-peer")) {
			if (s.per_peer)
				return parse_error(err, errlen,
						"per-peer given twice");
			s.per_peer = true;
		} else if (word_abbrev(argv[i], "prefix6")) {
			if (s.prefix6)
				return parse_error(err, errlen,
						"prefix6 given twice");
			if (parse_prefix6(++i < argc ? argv[i] : NULL,
					  &s.prefix6, err, errlen))
				return -EINVAL;
		} else {
			return parse_error(err, errlen,
					"'%.40s': expected 'weight W', 'per-peer' or 'prefix6 LEN'",
					argv[i]);
		}
	}
	if (s.prefix6 && !s.per_peer)
		return parse_error(err, errlen,
				   "prefix6 %u: only with per-peer (it keys each peer's client)",
				   s.prefix6);
	*spec = s;
	return 0;
}

static const unsigned char v4mapped_prefix[12] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
};

/**
 * cidr_parse() - parse a CIDR prefix into an LPM trie key
 * @s:      text, e.g. "10.0.0.0/8" or "2001:db8::/32"; NULL is rejected.
 * @key:    filled only on success.
 * @err:    on failure, a one-line message naming @s; may be NULL.
 * @errlen: size of @err (WORDS_ERRLEN is enough).
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

/*
 * The policy of a class without an entry (smb_classify.h): what "policy
 * set" starts from and a [class ID] section of ksmbd-sched.conf as well.
 */
const struct smb_policy policy_defaults = {
	.splice_min = SMB_POLICY_SPLICE_MIN_DEFAULT,
	.unbound_min = SMB_POLICY_UNBOUND_MIN_DEFAULT,
};

/**
 * parse_policy_bytes() - a threshold of "policy set"
 * @s:   "off", or a strict decimal (as parse_uint(): no sign, spaces or
 *       leading zeros) optionally followed by one suffix K (KiB, 1024) or
 *       M (MiB, 1048576), upper or lower case: "65536", "64K", "1M", "0".
 * @out: bytes, or SMB_POLICY_OFF for "off"; set only on success.
 *
 * Return: 0; -EINVAL for bad syntax; -ERANGE above POLICY_BYTES_MAX.
 */
int parse_policy_bytes(const char *s, uint32_t *out)
{
	uint64_t v;
	int r;

	if (s && !strcmp(s, "off")) {
		*out = SMB_POLICY_OFF;
		return 0;
	}
	r = parse_suffixed(s, "KM", POLICY_BYTES_MAX, &v);
	if (r)
		return r;
	*out = v;
	return 0;
}

/**
 * format_policy_words() - a policy as the words "policy set" takes
 * @p:   the policy.
 * @buf: output: "splice-min 64K unbound-min off"; 48 bytes are enough.
 * @len: size of @buf.
 */
void format_policy_words(const struct smb_policy *p, char *buf, size_t len)
{
	char sp[POLICY_BYTES_STRLEN], ub[POLICY_BYTES_STRLEN];

	format_policy_bytes(p->splice_min, sp, sizeof(sp));
	format_policy_bytes(p->unbound_min, ub, sizeof(ub));
	snprintf(buf, len, "splice-min %s unbound-min %s", sp, ub);
}

/**
 * format_policy_bytes() - a threshold as "policy show" prints it
 * @v:   bytes or SMB_POLICY_OFF.
 * @buf: output, POLICY_BYTES_STRLEN bytes are enough.
 * @len: size of @buf.
 *
 * "off", "1M" or "64K" when exact, else decimal bytes; what
 * parse_policy_bytes() reads back as the same value.
 */
void format_policy_bytes(uint32_t v, char *buf, size_t len)
{
	if (v == SMB_POLICY_OFF)
		snprintf(buf, len, "off");
	else if (v && !(v % (1024 * 1024)))
		snprintf(buf, len, "%uM", v / (1024 * 1024));
	else if (v && !(v % 1024))
		snprintf(buf, len, "%uK", v / 1024);
	else
		snprintf(buf, len, "%u", v);
}

static int bytes_arg(const char *kw, const char *val, uint32_t *out,
		     char *err, size_t errlen)
{
	int r;

	if (!val)
		return parse_error(err, errlen, "%s: missing value", kw);
	r = parse_policy_bytes(val, out);
	if (r == -ERANGE)
		return parse_error(err, errlen, "%s '%.40s': above 16 MiB (16M)",
			      kw, val);
	if (r)
		return parse_error(err, errlen,
			      "%s '%.40s': must be 'off' or decimal bytes 0-16777216, optionally with K or M (64K, 1M)",
			      kw, val);
	return 0;
}

/**
 * policy_args_parse() - parse "CLASS [splice-min N|off] [unbound-min N|off]"
 * @argc:   number of words in @argv.
 * @argv:   the words; keywords may be abbreviated and come in either
 *          order, each at most once, at least one of them.
 * @pa:     output, set only on success.
 * @err:    on failure, a one-line message.
 * @errlen: size of @err (WORDS_ERRLEN is enough).
 *
 * Return: 0 or -EINVAL.
 */
int policy_args_parse(int argc, char **argv, struct policy_args *pa,
		      char *err, size_t errlen)
{
	static const char *const kw[] = { "splice-min", "unbound-min" };
	struct policy_args a = { 0 };
	bool *has[] = { &a.has_splice_min, &a.has_unbound_min };
	uint32_t *val[] = { &a.splice_min, &a.unbound_min };
	int i, k;

	if (parse_class_id(argc > 0 ? argv[0] : NULL, &a.id, err, errlen))
		return -EINVAL;
	for (i = 1; i < argc; i += 2) {
		for (k = 0; k < 2 && !word_abbrev(argv[i], kw[k]); k++)
			;
		if (k == 2)
			return parse_error(err, errlen,
					   "'%.40s': expected 'splice-min N|off' or 'unbound-min N|off'",
					   argv[i]);
		if (*has[k])
			return parse_error(err, errlen, "%s given twice", kw[k]);
		if (bytes_arg(kw[k], i + 1 < argc ? argv[i + 1] : NULL, val[k],
			      err, errlen))
			return -EINVAL;
		*has[k] = true;
	}
	if (!a.has_splice_min && !a.has_unbound_min)
		return parse_error(err, errlen,
				   "missing 'splice-min N|off' or 'unbound-min N|off'");
	*pa = a;
	return 0;
}

/**
 * policy_apply() - merge "policy set" arguments into an entry
 * @pa: parsed arguments.
 * @p:  the class's current entry (or the defaults when it has none);
 *      the thresholds given in @pa replace its values, the others stay.
 */
void policy_apply(const struct policy_args *pa, struct smb_policy *p)
{
	if (pa->has_splice_min)
		p->splice_min = pa->splice_min;
	if (pa->has_unbound_min)
		p->unbound_min = pa->unbound_min;
}

/**
 * parse_max_inflight() - value of "max-inflight N"
 * @s:      strict decimal 0..KSMBD_SCHED_MAX_INFLIGHT_LIMIT (0: the
 *          kernel's default).
 * @out:    set only on success.
 * @err:    on failure, a one-line message.
 * @errlen: size of @err.
 *
 * Return: 0 or -EINVAL.
 */
int parse_max_inflight(const char *s, uint32_t *out, char *err,
		       size_t errlen)
{
	unsigned long v;

	if (!s)
		return parse_error(err, errlen, "max-inflight: missing value");
	if (parse_uint(s, KSMBD_SCHED_MAX_INFLIGHT_LIMIT, &v))
		return parse_error(err, errlen,
			      "max-inflight '%.40s': must be a decimal 0-%u (0: kernel default)",
			      s, KSMBD_SCHED_MAX_INFLIGHT_LIMIT);
	*out = v;
	return 0;
}

/**
 * parse_size() - a rate in bytes a second of "class set"
 * @s:   a strict decimal (as parse_uint()) optionally followed by one
 *       suffix K (KiB), M (MiB) or G (GiB), upper or lower case: "512K",
 *       "20M", "1G", "1048576".
 * @max: largest value accepted, in bytes.
 * @out: bytes, set only on success.
 *
 * Return: 0; -EINVAL for bad syntax; -ERANGE above @max.
 */
int parse_size(const char *s, uint64_t max, uint64_t *out)
{
	return parse_suffixed(s, "KMG", max, out);
}

/**
 * format_size() - a size as parse_size() reads it back
 * @v:   bytes.
 * @buf: output; SIZE_STRLEN bytes are enough.
 * @len: size of @buf.
 *
 * "1G", "20M" or "512K" when exact, else decimal bytes.
 */
void format_size(uint64_t v, char *buf, size_t len)
{
	static const char units[] = "GMK";
	unsigned int i, shift;

	for (i = 0; v && i < 3; i++) {
		shift = 30 - 10 * i;
		if (!(v & ((1ULL << shift) - 1))) {
			snprintf(buf, len, "%llu%c",
				 (unsigned long long)(v >> shift), units[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* The keywords of enum qos_word, as "class set" takes them. */
const char *const qos_words[QOS_NWORDS] = {
	[QOS_RES_IOPS] = "reservation-iops",
	[QOS_RES_BYTES] = "reservation-bytes",
	[QOS_LIM_IOPS] = "limit-iops",
	[QOS_LIM_BYTES] = "limit-bytes",
	[QOS_BURST] = "burst",
	[QOS_SCOPE] = "scope",
};

/**
 * qos_word_find() - the keyword of "class set" that @s abbreviates
 * @s:      a word.
 * @err:    on failure, a one-line message.
 * @errlen: size of @err.
 *
 * An abbreviation of more than one keyword ("res", "l") is refused
 * rather than guessed at: the IOPS and the bytes of a reservation or a
 * limit differ by a factor of 8192.
 *
 * Return: the enum qos_word, or -EINVAL.
 */
int qos_word_find(const char *s, char *err, size_t errlen)
{
	int i, found = -1;

	for (i = 0; i < QOS_NWORDS; i++) {
		if (!word_abbrev(s, qos_words[i]))
			continue;
		if (found >= 0)
			return parse_error(err, errlen,
					   "'%.40s' is ambiguous (%s or %s): write more of it",
					   s, qos_words[found], qos_words[i]);
		found = i;
	}
	if (found < 0)
		return parse_error(err, errlen,
				   "'%.40s': expected reservation-iops N, reservation-bytes SIZE, limit-iops N, limit-bytes SIZE, burst MS or scope dedicated|aggregated",
				   s);
	return found;
}

/* An IOPS value of @kw: 1..QOS_IOPS_MAX. */
static int qos_iops(const char *kw, const char *val, uint32_t *out,
		    char *err, size_t errlen)
{
	uint64_t v;
	int r = parse_u64(val, QOS_IOPS_MAX, &v);

	if (r == -ERANGE)
		return parse_error(err, errlen,
				   "%s '%.40s': above %u, the kernel's largest",
				   kw, val, QOS_IOPS_MAX);
	if (r || !v)
		return parse_error(err, errlen,
				   "%s '%.40s': must be a decimal 1-%u (I/Os of 8 KiB a second; leave it out for none)",
				   kw, val, QOS_IOPS_MAX);
	*out = v;
	return 0;
}

/* A bytes a second value of @kw: 1..QOS_BYTES_MAX. */
static int qos_bytes(const char *kw, const char *val, __u64 *out,
		     char *err, size_t errlen)
{
	uint64_t v = 0;
	int r = parse_size(val, QOS_BYTES_MAX, &v);

	if (r == -ERANGE)
		return parse_error(err, errlen,
				   "%s '%.40s': above 1024G (1 TiB) a second, the kernel's largest",
				   kw, val);
	if (r || !v)
		return parse_error(err, errlen,
				   "%s '%.40s': must be bytes a second, a decimal 1-%llu optionally with K, M or G (512K, 20M, 1G); leave it out for none",
				   kw, val, (unsigned long long)QOS_BYTES_MAX);
	*out = v;
	return 0;
}

/**
 * qos_word_parse() - the value of one word of "class set" into an entry
 * @w:      the word.
 * @val:    its value (NULL: missing).  N: a strict decimal 1-10000000;
 *          SIZE: as parse_size(), 1 byte to 1024G a second; MS: a strict
 *          decimal 1-10000; scope: "dedicated" or "aggregated".  0 is
 *          refused: a word left out is none (burst: the kernel's default).
 * @q:      the entry; only the member of @w is changed, on success.
 * @err:    on failure, a one-line message naming the word and @val.
 * @errlen: size of @err (WORDS_ERRLEN is enough).
 *
 * Return: 0 or -EINVAL.
 */
int qos_word_parse(enum qos_word w, const char *val, struct smb_qos *q,
		   char *err, size_t errlen)
{
	const char *kw = qos_words[w];
	uint64_t v;
	int r;

	if (!val)
		return parse_error(err, errlen, "%s: missing value", kw);
	switch (w) {
	case QOS_RES_IOPS:
		return qos_iops(kw, val, &q->reservation_iops, err, errlen);
	case QOS_LIM_IOPS:
		return qos_iops(kw, val, &q->limit_iops, err, errlen);
	case QOS_RES_BYTES:
		return qos_bytes(kw, val, &q->reservation_bps, err, errlen);
	case QOS_LIM_BYTES:
		return qos_bytes(kw, val, &q->limit_bps, err, errlen);
	case QOS_BURST:
		r = parse_u64(val, QOS_BURST_MAX, &v);
		if (r == -ERANGE)
			return parse_error(err, errlen,
					   "burst '%.40s': above %u ms, the kernel's largest",
					   val, QOS_BURST_MAX);
		if (r || !v)
			return parse_error(err, errlen,
					   "burst '%.40s': must be a decimal 1-%u (ms; leave it out for the kernel's default, %u)",
					   val, QOS_BURST_MAX,
					   KSMBD_SCHED_BURST_MS_DEFAULT);
		q->burst_ms = v;
		return 0;
	default:
		if (!strcmp(val, "dedicated"))
			q->flags &= ~KSMBD_SCHED_CLASS_AGGREGATED;
		else if (!strcmp(val, "aggregated"))
			q->flags |= KSMBD_SCHED_CLASS_AGGREGATED;
		else
			return parse_error(err, errlen,
					   "scope '%.40s': must be dedicated (each client of the class) or aggregated (the class as a whole)",
					   val);
		return 0;
	}
}

/**
 * qos_is_set() - the entry has a reservation or a limit
 * @q: the entry.
 *
 * Return: true unless all four rates are 0 (the class has its weight
 * alone, whatever its burst and scope say).
 */
bool qos_is_set(const struct smb_qos *q)
{
	return q->reservation_iops || q->reservation_bps || q->limit_iops ||
	       q->limit_bps;
}

/**
 * qos_check() - an entry as a whole: what the kernel would ignore or clamp
 * @q:      the entry, each value within its bounds (qos_word_parse()).
 * @given:  bit (1 << enum qos_word) for each word given.
 * @at:     on failure, the word at fault (QOS_NWORDS: none of them).
 * @err:    on failure, a one-line message.
 * @errlen: size of @err.
 *
 * Refused: an entry with neither a reservation nor a limit (its burst
 * and scope would change nothing: "class del" is the way to have none),
 * and a reservation above the limit of the same unit, which the kernel
 * would clamp to the limit.  A reservation in one unit and a limit in
 * the other are not compared: the limit holds.
 *
 * Return: 0 or -EINVAL.
 */
int qos_check(const struct smb_qos *q, unsigned int given,
	      enum qos_word *at, char *err, size_t errlen)
{
	char r[SIZE_STRLEN], l[SIZE_STRLEN];
	bool agg;

	*at = QOS_NWORDS;
	if (!qos_is_set(q)) {
		if (given & (1U << QOS_BURST)) {
			*at = QOS_BURST;
			return parse_error(err, errlen,
					   "burst %u: only with a reservation or a limit (it is the depth of their token buckets)",
					   q->burst_ms);
		}
		if (given & (1U << QOS_SCOPE)) {
			*at = QOS_SCOPE;
			agg = q->flags & KSMBD_SCHED_CLASS_AGGREGATED;
			return parse_error(err, errlen,
					   "scope %s: only with a reservation or a limit (it says whose they are)",
					   agg ? "aggregated" : "dedicated");
		}
		return parse_error(err, errlen,
				   "missing a reservation or a limit (reservation-iops N, reservation-bytes SIZE, limit-iops N, limit-bytes SIZE)");
	}
	if (q->limit_iops && q->reservation_iops > q->limit_iops) {
		*at = QOS_RES_IOPS;
		return parse_error(err, errlen,
				   "reservation-iops %u above limit-iops %u: a reservation cannot exceed the limit of its unit (the kernel would clamp it to %u)",
				   q->reservation_iops, q->limit_iops,
				   q->limit_iops);
	}
	if (q->limit_bps && q->reservation_bps > q->limit_bps) {
		*at = QOS_RES_BYTES;
		format_size(q->reservation_bps, r, sizeof(r));
		format_size(q->limit_bps, l, sizeof(l));
		return parse_error(err, errlen,
				   "reservation-bytes %s above limit-bytes %s: a reservation cannot exceed the limit of its unit (the kernel would clamp it to %s)",
				   r, l, l);
	}
	return 0;
}

/**
 * qos_args_parse() - parse "CLASS [reservation-iops N]
 *                    [reservation-bytes SIZE] [limit-iops N]
 *                    [limit-bytes SIZE] [burst MS]
 *                    [scope dedicated|aggregated]"
 * @argc:   number of words in @argv.
 * @argv:   the words; keywords may be abbreviated while they stay
 *          unambiguous (qos_word_find()) and come in any order, each at
 *          most once; at least a reservation or a limit.
 * @qa:     output, set only on success: the whole entry, every word not
 *          given 0 (none; burst the kernel's default; dedicated).
 * @err:    on failure, a one-line message.
 * @errlen: size of @err (WORDS_ERRLEN is enough).
 *
 * Return: 0 or -EINVAL.
 */
int qos_args_parse(int argc, char **argv, struct qos_args *qa, char *err,
		   size_t errlen)
{
	struct qos_args a = { 0 };
	enum qos_word at;
	int i, k;

	if (parse_class_id(argc > 0 ? argv[0] : NULL, &a.id, err, errlen))
		return -EINVAL;
	for (i = 1; i < argc; i += 2) {
		k = qos_word_find(argv[i], err, errlen);
		if (k < 0)
			return -EINVAL;
		if (a.given & (1U << k))
			return parse_error(err, errlen, "%s given twice",
					   qos_words[k]);
		if (qos_word_parse(k, i + 1 < argc ? argv[i + 1] : NULL, &a.q,
				   err, errlen))
			return -EINVAL;
		a.given |= 1U << k;
	}
	if (qos_check(&a.q, a.given, &at, err, errlen))
		return -EINVAL;
	*qa = a;
	return 0;
}

/**
 * format_qos_words() - an entry as the words "class set" takes
 * @q:   the entry.
 * @buf: output: "reservation-iops 100 limit-bytes 20M scope dedicated";
 *       QOS_WORDS_STRLEN bytes are enough.
 * @len: size of @buf.
 *
 * A rate or burst of 0 (none, the default) is left out; the scope is
 * always there.
 */
void format_qos_words(const struct smb_qos *q, char *buf, size_t len)
{
	char sz[SIZE_STRLEN];
	size_t o = 0;

	buf[0] = '\0';
	if (q->reservation_iops)
		o += snprintf(buf + o, len - o, "reservation-iops %u ",
			      q->reservation_iops);
	if (q->reservation_bps && o < len) {
		format_size(q->reservation_bps, sz, sizeof(sz));
		o += snprintf(buf + o, len - o, "reservation-bytes %s ", sz);
	}
	if (q->limit_iops && o < len)
		o += snprintf(buf + o, len - o, "limit-iops %u ", q->limit_iops);
	if (q->limit_bps && o < len) {
		format_size(q->limit_bps, sz, sizeof(sz));
		o += snprintf(buf + o, len - o, "limit-bytes %s ", sz);
	}
	if (q->burst_ms && o < len)
		o += snprintf(buf + o, len - o, "burst %u ", q->burst_ms);
	if (o < len)
		snprintf(buf + o, len - o, "scope %s",
			 q->flags & KSMBD_SCHED_CLASS_AGGREGATED ? "aggregated" :
			 "dedicated");
}
