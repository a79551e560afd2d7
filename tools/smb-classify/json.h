/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * json.h - minimal streaming JSON writer for smb-classify
 */
#ifndef SMB_CLASSIFY_JSON_H
#define SMB_CLASSIFY_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH	8

/**
 * struct json_writer - state of one JSON document
 * @out:    stream written to.
 * @pretty: indent nested values by four spaces, one member a line.
 * @depth:  nesting level of the open object or array.
 * @count:  values written so far at each level (for commas).
 * @key:    a key was just written; the next value follows it.
 */
struct json_writer {
	FILE *out;
	bool pretty;
	int depth;
	unsigned int count[JSON_MAX_DEPTH];
	bool key;
};

void json_init(struct json_writer *w, FILE *out, bool pretty);
void json_start_object(struct json_writer *w);
void json_end_object(struct json_writer *w);
void json_start_array(struct json_writer *w);
void json_end_array(struct json_writer *w);
void json_key(struct json_writer *w, const char *key);
void json_string(struct json_writer *w, const char *s);
void json_uint(struct json_writer *w, uint64_t v);
void json_number(struct json_writer *w, const char *num);
void json_bool(struct json_writer *w, bool v);
void json_null(struct json_writer *w);
void json_finish(struct json_writer *w);

#endif /* SMB_CLASSIFY_JSON_H */
