// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * text.c - strings made safe to print: one line, valid UTF-8
 *
 * Task names, program names and user input reach the output as the
 * kernel or the user wrote them: any bytes.  bpftool's JSON writer
 * escapes quotes, backslashes and \t\n\r\f\b only, so everything else
 * that is not a printable character in valid UTF-8 is replaced here by
 * '?' (one byte for one byte: lengths and column widths stay).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* Length of the valid UTF-8 sequence at @s (RFC 3629), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t c;

	if (*s < 0x80)
		return 1;
	if (*s >= 0xc2 && *s <= 0xdf)
		n = 2, c = *s & 0x1f;
	else if (*s >= 0xe0 && *s <= 0xef)
		n = 3, c = *s & 0x0f;
	else if (*s >= 0xf0 && *s <= 0xf4)
		n = 4, c = *s & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, beyond U+10FFFF. */
	if ((n == 3 && c < 0x800) || (n == 4 && c < 0x10000) ||
	    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	return n;
}

/**
 * text_sanitize() - make @s one line of valid UTF-8, in place
 * @s: NUL-terminated bytes; control characters (below 0x20, 0x7f) and
 *     bytes that do not start a valid UTF-8 sequence become '?'.
 */
void text_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s;
	size_t n;

	while (*p) {
		n = utf8_len(p);
		if (!n || (n == 1 && (*p < 0x20 || *p == 0x7f))) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}

/**
 * json_uint_or_null() - a number member, or null for a value not known
 * @w:     writer.
 * @key:   member name.
 * @known: @v holds a value (a map is pinned, a threshold is not "off",
 *         a class has dispatched something to average).
 * @v:     the value.
 */
void json_uint_or_null(json_writer_t *w, const char *key, bool known,
		       uint64_t v)
{
	if (known)
		jsonw_uint_field(w, key, v);
	else
		jsonw_null_field(w, key);
}

/**
 * json_text_field() - a string member whatever bytes @s holds
 * @w:   writer.
 * @key: member name (a literal of ours).
 * @s:   value; a sanitized copy is written (text_sanitize()).
 */
void json_text_field(json_writer_t *w, const char *key, const char *s)
{
	char *copy = strdup(s);

	if (copy)
		text_sanitize(copy);
	jsonw_string_field(w, key, copy ? copy : "");
	free(copy);
}
