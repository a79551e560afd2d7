// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * policyspec.c - "policy set" and "max-inflight" arguments of smb-classify
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <linux/ksmbd_sched.h>

#include "classword.h"
#include "policyspec.h"

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
	char num[24];
	unsigned long v, mul = 1;
	size_t n;
	int r;

	if (!s || !*s)
		return -EINVAL;
	if (!strcmp(s, "off")) {
		*out = SMB_POLICY_OFF;
		return 0;
	}
	n = strlen(s);
	if (n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n + 1);
	if (strchr("kKmM", num[n - 1])) {
		mul = tolower(num[n - 1]) == 'k' ? 1024 : 1024 * 1024;
		num[n - 1] = '\0';
	}
	r = parse_uint(num, POLICY_BYTES_MAX / mul, &v);
	if (r)
		return r;
	*out = v * mul;
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
 * @errlen: size of @err (POLICYSPEC_ERRLEN is enough).
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
