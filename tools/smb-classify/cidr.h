/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * cidr.h - strict CIDR parsing and formatting for smb-classify
 *
 * Pure functions, no libbpf: the unit tests link cidr.o directly.
 */
#ifndef SMB_CLASSIFY_CIDR_H
#define SMB_CLASSIFY_CIDR_H

#include <stdbool.h>
#include <stddef.h>

#include "smb_classify.h"

/* Longest CIDR text: a full IPv6 address with an IPv4 tail, "/128", NUL. */
#define CIDR_STRLEN		(46 + 4 + 1)

/* Room for an error message of cidr_parse(), including the input. */
#define CIDR_ERRLEN		160

int cidr_parse(const char *s, struct smb_prefix_key *key,
	       char *err, size_t errlen);
int cidr_format(const struct smb_prefix_key *key, char *buf, size_t len);
int cidr_cmp(const struct smb_prefix_key *a, const struct smb_prefix_key *b);

#endif /* SMB_CLASSIFY_CIDR_H */
