/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * conf.h - the policy of a netns as ksmbd-sched.conf(5) text: parsed,
 * written and compared
 *
 * Pure functions, no libbpf: the unit tests link conf.o directly.
 */
#ifndef SMB_CLASSIFY_CONF_H
#define SMB_CLASSIFY_CONF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "smb_classify.h"

/* Room for an error message of conf_parse(): file, line, field, input. */
#define CONF_ERRLEN	512

/* One entry of the prefixes map. */
struct conf_prefix {
	struct smb_prefix_key key;
	uint32_t word;
};

/* One entry of the users or the shares map. */
struct conf_name {
	struct smb_name_key key;
	uint32_t word;
};

/* One entry of the policy map. */
struct conf_policy {
	uint32_t id;
	struct smb_policy p;
};

/* One entry of the qos map; the bytes between @id and @q are zero. */
struct conf_qos {
	uint32_t id;
	struct smb_qos q;
};

/**
 * struct conf - a whole policy: what "apply" sets and "dump" shows
 * @has_max_inflight: the budget is given (a program is attached).
 * @max_inflight:     the ops' max_inflight, 0 = kernel default.
 * @prefixes:         prefix entries, sorted by cidr_cmp() (malloc'ed).
 * @nprefixes:        number of @prefixes.
 * @policies:         policy entries, sorted by class id (malloc'ed).
 * @npolicies:        number of @policies.
 * @users:            users map entries, sorted by name_cmp() (malloc'ed).
 * @nusers:           number of @users.
 * @shares:           shares map entries, sorted by name_cmp() (malloc'ed).
 * @nshares:          number of @shares.
 * @qos:              qos map entries, sorted by class id (malloc'ed).
 * @nqos:             number of @qos.
 */
struct conf {
	bool has_max_inflight;
	uint32_t max_inflight;
	struct conf_prefix *prefixes;
	unsigned int nprefixes;
	struct conf_policy *policies;
	unsigned int npolicies;
	struct conf_name *users;
	unsigned int nusers;
	struct conf_name *shares;
	unsigned int nshares;
	struct conf_qos *qos;
	unsigned int nqos;
};

int conf_parse(FILE *f, const char *file, struct conf *c, char *err,
	       size_t errlen);
void conf_write(FILE *out, const struct conf *c);
unsigned int conf_diff(FILE *out, const struct conf *old,
		       const struct conf *new);
int conf_prefix_cmp(const void *a, const void *b);
int conf_policy_cmp(const void *a, const void *b);
int conf_qos_cmp(const void *a, const void *b);
int conf_name_cmp(const void *a, const void *b);
void conf_free(struct conf *c);

#endif /* SMB_CLASSIFY_CONF_H */
