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
#include <limits.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "text.h"

/**
 * text_sanitize() - make @s one line of valid UTF-8, in place
 * @s: NUL-terminated bytes; control characters (below 0x20, 0x7f) and
 *     bytes that do not start a valid UTF-8 sequence (RFC 3629) become '?'.
 *
 * glibc's mbrtowc() in the C.UTF-8 locale (of this thread, for this call)
 * decodes the sequences; it rejects what RFC 3629 does (overlong forms,
 * surrogates) but code points above U+10FFFF, checked here.  Without
 * that locale every non-ASCII byte becomes '?'.
 */
void text_sanitize(char *s)
{
	static locale_t utf8;
	size_t n, len = strlen(s);
	mbstate_t st;
	locale_t old;
	wchar_t wc;

	if (!utf8)
		utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	old = uselocale(utf8);
	for (; *s; s += n, len -= n) {
		memset(&st, 0, sizeof(st));
		n = mbrtowc(&wc, s, len, &st);
		if (n > MB_LEN_MAX || wc < 0x20 || wc == 0x7f || wc > 0x10ffff) {
			*s = '?';
			n = 1;
		}
	}
	uselocale(old);
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
