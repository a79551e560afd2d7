/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * words.h - the words of smb-classify's commands and ksmbd-sched.conf:
 * numbers, CIDR prefixes, user and share names, class words, policy
 * thresholds, reservations and limits, max-inflight
 *
 * Pure functions, no libbpf: the unit tests link words.o directly.
 */
#ifndef SMB_CLASSIFY_WORDS_H
#define SMB_CLASSIFY_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksmbd_sched_abi.h"

#include "smb_classify.h"

#define CLASS_ID_MAX		65535
#define CLASS_WEIGHT_MIN	1
#define CLASS_WEIGHT_MAX	255

/* Prefix lengths of "prefix6 LEN": a multiple of 4 (the PEER6 unit). */
#define CLASS_PREFIX6_UNIT	4
#define CLASS_PREFIX6_MAX	(KSMBD_SCHED_CLASS_PEER6_MAX * CLASS_PREFIX6_UNIT)

/* Largest threshold of "policy set": 16 MiB. */
#define POLICY_BYTES_MAX	(16U << 20)

/* Longest CIDR text: a full IPv6 address with an IPv4 tail, "/128", NUL. */
#define CIDR_STRLEN		(46 + 4 + 1)

/* Room for a formatted threshold: "16777216" or "off", NUL. */
#define POLICY_BYTES_STRLEN	16

/* Bounds of "class set" (enum ksmbd_sched_qos): I/Os, bytes a second, ms. */
#define QOS_IOPS_MAX		KSMBD_SCHED_IOPS_LIMIT
#define QOS_BYTES_MAX		((uint64_t)KSMBD_SCHED_BPS_LIMIT_MB << 20)
#define QOS_BURST_MAX		KSMBD_SCHED_BURST_MS_LIMIT

/* Room for a formatted rate: "1099511627775" or "1024G", NUL. */
#define SIZE_STRLEN		24

/* Room for the words of a reservation and limit (format_qos_words()). */
#define QOS_WORDS_STRLEN	160

/* Room for an error message of the parsers here, including the input. */
#define WORDS_ERRLEN		256

/*
 * Longest user and share names, in bytes: ksmbd's
 * KSMBD_REQ_MAX_ACCOUNT_NAME_SZ (48) and KSMBD_REQ_MAX_SHARE_NAME (64),
 * each less its NUL.
 */
#define USER_NAME_MAX		47
#define SHARE_NAME_MAX		63

/* Room for a name as text: the whole key, NUL. */
#define NAME_STRLEN		(SMB_NAME_LEN + 1)

/* Which map a name is a key of: the rules of its characters differ. */
enum name_kind {
	NAME_USER,
	NAME_SHARE,
};

/**
 * struct class_spec - a decoded class word
 * @id:       class id, 0 (anonymous) .. 65535.
 * @weight:   turns per round, 1..255 (a stored weight of 0 decodes as 1).
 * @per_peer: each peer address is its own client within the class.
 * @prefix6:  with @per_peer, the prefix length that keys an IPv6 peer,
 *            4..128 in steps of 4; 0: not given, the kernel's default
 *            (KSMBD_SCHED_CLASS_PEER6_DEFAULT).
 */
struct class_spec {
	unsigned int id;
	unsigned int weight;
	bool per_peer;
	unsigned int prefix6;
};

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

/**
 * enum qos_word - the words of "class set CLASS ...", in the order
 *                 format_qos_words() writes them
 * @QOS_RES_IOPS:  reservation-iops N: a minimum, I/Os of
 *                 KSMBD_SCHED_IO_BYTES of cost a second.
 * @QOS_RES_BYTES: reservation-bytes SIZE: a minimum, bytes a second.
 * @QOS_LIM_IOPS:  limit-iops N: a maximum, I/Os a second.
 * @QOS_LIM_BYTES: limit-bytes SIZE: a maximum, bytes a second.
 * @QOS_BURST:     burst MS: depth of the token buckets, ms of the rates.
 * @QOS_SCOPE:     scope dedicated|aggregated: each client, or the class.
 * @QOS_NWORDS:    how many.
 */
enum qos_word {
	QOS_RES_IOPS,
	QOS_RES_BYTES,
	QOS_LIM_IOPS,
	QOS_LIM_BYTES,
	QOS_BURST,
	QOS_SCOPE,
	QOS_NWORDS,
};

extern const char *const qos_words[QOS_NWORDS];

/**
 * struct qos_args - the words of "class set CLASS ..."
 * @id:    class id, 0..65535.
 * @given: bit (1 << enum qos_word) for each word given.
 * @q:     the whole entry: what was not given is 0 (none, the kernel's
 *         default burst, dedicated).
 */
struct qos_args {
	unsigned int id;
	unsigned int given;
	struct smb_qos q;
};

extern const struct smb_policy policy_defaults;

int parse_error(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
bool word_abbrev(const char *word, const char *of);
int parse_uint(const char *s, unsigned long max, unsigned long *out);

int cidr_parse(const char *s, struct smb_prefix_key *key,
	       char *err, size_t errlen);
int cidr_format(const struct smb_prefix_key *key, char *buf, size_t len);
int cidr_cmp(const struct smb_prefix_key *a, const struct smb_prefix_key *b);

int name_parse(enum name_kind kind, const char *s, struct smb_name_key *key,
	       char *err, size_t errlen);
void name_text(const struct smb_name_key *key, char *buf);
int name_cmp(const struct smb_name_key *a, const struct smb_name_key *b);

int parse_class_id(const char *s, unsigned int *id, char *err, size_t errlen);
uint32_t class_word_encode(const struct class_spec *spec);
void class_word_decode(uint32_t word, struct class_spec *spec);
int parse_prefix6(const char *s, unsigned int *len, char *err,
		  size_t errlen);
int class_spec_parse(int argc, char **argv, struct class_spec *spec,
		     char *err, size_t errlen);

int parse_policy_bytes(const char *s, uint32_t *out);
void format_policy_bytes(uint32_t v, char *buf, size_t len);
void format_policy_words(const struct smb_policy *p, char *buf, size_t len);
int policy_args_parse(int argc, char **argv, struct policy_args *pa,
		      char *err, size_t errlen);
void policy_apply(const struct policy_args *pa, struct smb_policy *p);
int parse_max_inflight(const char *s, uint32_t *out, char *err,
		       size_t errlen);

int parse_size(const char *s, uint64_t max, uint64_t *out);
void format_size(uint64_t v, char *buf, size_t len);
int qos_word_find(const char *s, char *err, size_t errlen);
int qos_word_parse(enum qos_word w, const char *val, struct smb_qos *q,
		   char *err, size_t errlen);
int qos_check(const struct smb_qos *q, unsigned int given,
	      enum qos_word *at, char *err, size_t errlen);
int qos_args_parse(int argc, char **argv, struct qos_args *qa, char *err,
		   size_t errlen);
bool qos_is_set(const struct smb_qos *q);
void format_qos_words(const struct smb_qos *q, char *buf, size_t len);

#endif /* SMB_CLASSIFY_WORDS_H */
