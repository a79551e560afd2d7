/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * policyspec.h - "policy set" and "max-inflight" arguments of smb-classify
 *
 * Pure functions, no libbpf: the unit tests link policyspec.o directly.
 */
#ifndef SMB_CLASSIFY_POLICYSPEC_H
#define SMB_CLASSIFY_POLICYSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "smb_classify.h"

/* Largest threshold of "policy set": 16 MiB. */
#define POLICY_BYTES_MAX	(16U << 20)

/* Room for a formatted threshold: "16777216" or "off", NUL. */
#define POLICY_BYTES_STRLEN	16

/* Room for an error message of the parsers here, including the input. */
#define POLICYSPEC_ERRLEN	160

/**
 * struct policy_args - the words of "policy set CLASS ..."
 * @id:              class id, 0..65535.
 * @has_splice_min:  splice-min was given.
 * @splice_min:      its value in bytes, or SMB_POLICY_OFF.
 * @has_unbound_min: unbound-min was given.
 * @unbound_min:     its value in bytes, or SMB_POLICY_OFF.
 */
struct policy_args {
	unsigned int id;
	bool has_splice_min;
	uint32_t splice_min;
	bool has_unbound_min;
	uint32_t unbound_min;
};

extern const struct smb_policy policy_defaults;

int parse_policy_bytes(const char *s, uint32_t *out);
void format_policy_bytes(uint32_t v, char *buf, size_t len);
void format_policy_words(const struct smb_policy *p, char *buf, size_t len);
int policy_args_parse(int argc, char **argv, struct policy_args *pa,
		      char *err, size_t errlen);
void policy_apply(const struct policy_args *pa, struct smb_policy *p);
int parse_max_inflight(const char *s, uint32_t *out, char *err,
		       size_t errlen);

#endif /* SMB_CLASSIFY_POLICYSPEC_H */
