/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * classword.h - numbers and class words for smb-classify
 *
 * Pure functions, no libbpf: the unit tests link classword.o directly.
 */
#ifndef SMB_CLASSIFY_CLASSWORD_H
#define SMB_CLASSIFY_CLASSWORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CLASS_ID_MAX		65535
#define CLASS_WEIGHT_MIN	1
#define CLASS_WEIGHT_MAX	255

/* Room for an error message of the parsers here, including the input. */
#define CLASSWORD_ERRLEN	160

/**
 * struct class_spec - a decoded class word
 * @id:       class id, 0 (anonymous) .. 65535.
 * @weight:   turns per round, 1..255 (a stored weight of 0 decodes as 1).
 * @per_peer: each peer address is its own client within the class.
 */
struct class_spec {
	unsigned int id;
	unsigned int weight;
	bool per_peer;
};

int parse_error(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool word_abbrev(const char *word, const char *of);
int parse_uint(const char *s, unsigned long max, unsigned long *out);
int parse_class_id(const char *s, unsigned int *id, char *err, size_t errlen);
uint32_t class_word_encode(const struct class_spec *spec);
void class_word_decode(uint32_t word, struct class_spec *spec);
int class_spec_parse(int argc, char **argv, struct class_spec *spec,
		     char *err, size_t errlen);

#endif /* SMB_CLASSIFY_CLASSWORD_H */
