// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * classword.c - numbers and class words for smb-classify
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/ksmbd_sched.h>

#include "classword.h"
#include "text.h"

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

/**
 * class_word_encode() - class word for a class spec
 * @spec: id 0..65535, weight 1..255, per_peer; out-of-range fields are
 *        the caller's bug (class_spec_parse() checks them).
 *
 * Return: KSMBD_SCHED_CLASS(id, weight, per_peer).
 */
uint32_t class_word_encode(const struct class_spec *spec)
{
	return KSMBD_SCHED_CLASS(spec->id, spec->weight, spec->per_peer);
}

/**
 * class_word_decode() - class spec of a class word
 * @word: class word; reserved bits 24-30 are ignored, as by the kernel.
 * @spec: output; a weight field of 0 decodes as 1, its meaning.
 */
void class_word_decode(uint32_t word, struct class_spec *spec)
{
	spec->id = KSMBD_SCHED_CLASS_ID_OF(word);
	spec->weight = KSMBD_SCHED_CLASS_WEIGHT_OF(word);
	if (!spec->weight)
		spec->weight = 1;
	spec->per_peer = !!(word & KSMBD_SCHED_CLASS_PER_PEER);
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
 * class_spec_parse() - parse "CLASS [weight W] [per-peer]"
 * @argc:   number of words in @argv.
 * @argv:   the words; "weight" and "per-peer" may be abbreviated and come
 *          in either order, each at most once.
 * @spec:   output, set only on success; weight defaults to 1.
 * @err:    on failure, a one-line message.
 * @errlen: size of @err (CLASSWORD_ERRLEN is enough).
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
		} else {
			return parse_error(err, errlen,
					"'%.40s': expected 'weight W' or 'per-peer'",
					argv[i]);
		}
	}
	*spec = s;
	return 0;
}
