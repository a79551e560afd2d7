// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * json.c - minimal streaming JSON writer for smb-classify
 *
 * Enough for flat objects and arrays of objects; nesting beyond
 * JSON_MAX_DEPTH is a programming error and is not checked at run time
 * beyond not writing out of bounds.
 */
#include <inttypes.h>

#include "json.h"

/**
 * json_init() - start a JSON document
 * @w:      writer.
 * @out:    stream, usually stdout.
 * @pretty: pretty-print.
 */
void json_init(struct json_writer *w, FILE *out, bool pretty)
{
	w->out = out;
	w->pretty = pretty;
	w->depth = 0;
	w->count[0] = 0;
	w->key = false;
}

static void json_newline(struct json_writer *w)
{
	int i;

	if (!w->pretty)
		return;
	fputc('\n', w->out);
	for (i = 0; i < w->depth; i++)
		fputs("    ", w->out);
}

/* Comma and indentation before a value or a key. */
static void json_sep(struct json_writer *w)
{
	if (w->key) {
		w->key = false;
		return;
	}
	if (w->count[w->depth]++)
		fputc(',', w->out);
	if (w->depth)
		json_newline(w);
}

static void json_open(struct json_writer *w, char c)
{
	json_sep(w);
	fputc(c, w->out);
	if (w->depth < JSON_MAX_DEPTH - 1)
		w->depth++;
	w->count[w->depth] = 0;
}

static void json_close(struct json_writer *w, char c)
{
	unsigned int n = w->count[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (n)
		json_newline(w);
	fputc(c, w->out);
}

/** json_start_object() - write "{" */
void json_start_object(struct json_writer *w)
{
	json_open(w, '{');
}

/** json_end_object() - write "}" */
void json_end_object(struct json_writer *w)
{
	json_close(w, '}');
}

/** json_start_array() - write "[" */
void json_start_array(struct json_writer *w)
{
	json_open(w, '[');
}

/** json_end_array() - write "]" */
void json_end_array(struct json_writer *w)
{
	json_close(w, ']');
}

static void json_quote(FILE *out, const char *s)
{
	const unsigned char *p;

	fputc('"', out);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*p < 0x20)
				fprintf(out, "\\u%04x", *p);
			else
				fputc(*p, out);
		}
	}
	fputc('"', out);
}

/**
 * json_key() - write an object member's key
 * @w:   writer.
 * @key: key; the next call writes its value.
 */
void json_key(struct json_writer *w, const char *key)
{
	json_sep(w);
	json_quote(w->out, key);
	fputs(w->pretty ? ": " : ":", w->out);
	w->key = true;
}

/** json_string() - write a string value, escaped */
void json_string(struct json_writer *w, const char *s)
{
	json_sep(w);
	json_quote(w->out, s);
}

/** json_uint() - write an unsigned number */
void json_uint(struct json_writer *w, uint64_t v)
{
	json_sep(w);
	fprintf(w->out, "%" PRIu64, v);
}

/**
 * json_number() - write a number given as text, e.g. "123.456789"
 * @w:   writer.
 * @num: a valid JSON number; the caller checks it.
 */
void json_number(struct json_writer *w, const char *num)
{
	json_sep(w);
	fputs(num, w->out);
}

/** json_bool() - write true or false */
void json_bool(struct json_writer *w, bool v)
{
	json_sep(w);
	fputs(v ? "true" : "false", w->out);
}

/** json_null() - write null */
void json_null(struct json_writer *w)
{
	json_sep(w);
	fputs("null", w->out);
}

/** json_finish() - end the document with a newline and flush it */
void json_finish(struct json_writer *w)
{
	fputc('\n', w->out);
	fflush(w->out);
}
