/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * text.h - strings made safe to print: one line, valid UTF-8
 *
 * Pure functions, no libbpf: the unit tests link text.o directly.
 */
#ifndef SMB_CLASSIFY_TEXT_H
#define SMB_CLASSIFY_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json_writer.h"

void text_sanitize(char *s);
void json_text_field(json_writer_t *w, const char *key, const char *s);
void json_uint_or_null(json_writer_t *w, const char *key, bool known,
		       uint64_t v);

#endif /* SMB_CLASSIFY_TEXT_H */
