// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * conf.c - the policy of a netns as ksmbd-sched.conf(5) text: parsed,
 * written and compared
 *
 * The syntax, ksmbd.conf's, and the sections ([global], [class ID]) and
 * their fields are those of ksmbd-sched.conf(5), the reference.  A key is
 * the same whatever its case, spaces, '-' or '_' (normalize()).  A prefix,
 * a user or a share takes its class's weight, per peer and per peer
 * prefix6 unless its own words say otherwise; each is given once in the
 * whole file (a user or share name after folding, name_parse()), and a
 * name may be written in double quotes, spaces and all.  A class with
 * splice min or unbound min gets a policy entry (the other threshold at
 * its default).  A class with reservation iops, reservation bytes, limit
 * iops, limit bytes, burst or scope gets a qos entry, the whole entry as
 * "class set" makes it and checked as it checks one (qos_check()).
 * [global]'s per peer prefix6 is the prefix ::/0 of class 0, per peer: it
 * covers every peer that no other prefix covers.  The whole text is read
 * before anything is returned, and the first error names the file, the
 * line and the field.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ksmbd_sched_abi.h"

#include "conf.h"
#include "words.h"

/* A prefix line, kept until the whole file is read. */
struct pending {
	struct smb_prefix_key key;
	unsigned int line;
	unsigned int section;	/* index into parser.sections */
	struct class_spec own;	/* id unused; weight 0: the class's */
};

/* A user or share line, kept until the whole file is read. */
struct pending_name {
	struct smb_name_key key;
	unsigned int line;
	unsigned int section;	/* index into parser.sections */
	struct class_spec own;	/* id unused; weight 0: the class's */
};

/* A [class ID] section. */
struct section {
	unsigned int id, line;
	unsigned int weight;	/* 0: not given */
	int per_peer;		/* -1: not given */
	unsigned int prefix6;	/* 0: not given */
	unsigned int prefix6_line;
	unsigned int has_policy;	/* 1: splice min, 2: unbound min */
	struct smb_policy p;
	unsigned int qos_given;		/* bit (1 << enum qos_word) */
	unsigned int qos_line[QOS_NWORDS];
	struct smb_qos q;
};

struct parser {
	const char *file;
	unsigned int line;
	char *err;
	size_t errlen;
	bool in_global, seen_global;
	unsigned int unmatched6, unmatched6_line;	/* [global] */
	struct section *sections;
	unsigned int nsections;
	struct pending *pending;
	unsigned int npending;
	struct pending_name *names[2];	/* by enum name_kind */
	unsigned int nnames[2];
};

static int perr(struct parser *ps, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct parser *ps, const char *field, const char *fmt, ...)
{
	char msg[CONF_ERRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return parse_error(ps->err, ps->errlen, "%s:%u: %s: %s", ps->file,
			   ps->line, field, msg);
}

/* Lower case, without spaces, '-' and '_': the key's identity. */
static void normalize(const char *s, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (; n-- && *s; s++)
		if (!isspace((unsigned char)*s) && *s != '-' && *s != '_' &&
		    o + 1 < len)
			out[o++] = tolower((unsigned char)*s);
	out[o] = '\0';
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "yes", "true", "1" };
	static const char *const no[] = { "no", "false", "0" };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		if (!strcasecmp(v, yes[i]) || !strcasecmp(v, no[i])) {
			*out = !strcasecmp(v, yes[i]);
			return 0;
		}
	}
	return -EINVAL;
}

static int section_header(struct parser *ps, char *s)
{
	char name[32], *end = strchr(s, ']');
	struct section *sec;
	unsigned long id;
	unsigned int i;

	if (!end || end[1])
		return perr(ps, "section", "'%.40s': expected [global] or [class ID]",
			    s);
	normalize(s + 1, end - s - 1, name, sizeof(name));
	ps->in_global = !strcmp(name, "global");
	if (ps->in_global) {
		if (ps->seen_global)
			return perr(ps, "section", "[global] given twice");
		ps->seen_global = true;
		return 0;
	}
	if (strncmp(name, "class", 5) ||
	    parse_uint(name + 5, CLASS_ID_MAX, &id))
		return perr(ps, "section",
			    "'%.40s': expected [global] or [class ID], ID a decimal 0-65535",
			    s);
	for (i = 0; i < ps->nsections; i++)
		if (ps->sections[i].id == id)
			return perr(ps, "section",
				    "[class %lu] given twice (first at line %u)",
				    id, ps->sections[i].line);
	sec = realloc(ps->sections, (ps->nsections + 1) * sizeof(*sec));
	if (!sec)
		return perr(ps, "section", "out of memory");
	ps->sections = sec;
	sec += ps->nsections++;
	*sec = (struct section){ .id = id, .line = ps->line, .per_peer = -1,
				 .p = policy_defaults };
	return 0;
}

/*
 * The words of a prefix, user or share after its CIDR or name, "[weight
 * W] [per-peer [prefix6 LEN]]": strtok_r() of @s (NULL: go on with
 * @save) into @own, its weight 0 when not given (the class's).
 * Return: 0 or -EINVAL, reported as of @field.
 */
static int own_words(struct parser *ps, const char *field, char *s,
		     char **save, struct class_spec *own)
{
	char msg[WORDS_ERRLEN], *words[8], *w;
	int n = 1;

	words[0] = "0";
	for (w = strtok_r(s, " \t", save); w && n < 8;
	     w = strtok_r(NULL, " \t", save))
		words[n++] = w;
	if (w)
		return perr(ps, field, "too many words");
	if (class_spec_parse(n, words, own, msg, sizeof(msg)))
		return perr(ps, field, "%s", msg);
	while (--n > 0 && !word_abbrev(words[n], "weight"))
		;
	if (!n)
		own->weight = 0;	/* not given: the class's */
	return 0;
}

static int prefix_line(struct parser *ps, char *v)
{
	char msg[WORDS_ERRLEN], *save = NULL, *w;
	struct pending *p;

	if (ps->npending == SMB_PREFIXES_MAX)
		return perr(ps, "prefix", "more than %u prefixes (the size of the prefixes map)",
			    SMB_PREFIXES_MAX);
	p = realloc(ps->pending, (ps->npending + 1) * sizeof(*p));
	if (!p)
		return perr(ps, "prefix", "out of memory");
	ps->pending = p;
	p += ps->npending;
	w = strtok_r(v, " \t", &save);
	if (cidr_parse(w, &p->key, msg, sizeof(msg)))
		return perr(ps, "prefix", "%s", msg);
	if (own_words(ps, "prefix", NULL, &save, &p->own))
		return -EINVAL;
	p->line = ps->line;
	p->section = ps->nsections - 1;
	ps->npending++;
	return 0;
}

/*
 * The name that starts @v, NUL-terminated in place, *@rest the text after
 * it: a word, or the text between double quotes (which no user or share
 * name holds), spaces and all.  Return: the name, or NULL, reported.
 */
static char *name_word(struct parser *ps, const char *field, char *v,
		       char **rest)
{
	char *end;

	if (*v != '"') {
		end = v + strcspn(v, " \t");
		*rest = *end ? end + 1 : end;
		*end = '\0';
		return v;
	}
	end = strchr(v + 1, '"');
	if (!end) {
		perr(ps, field, "'%.40s': no closing '\"'", v);
		return NULL;
	}
	if (end[1] && end[1] != ' ' && end[1] != '\t') {
		perr(ps, field, "'%.40s': expected a space after the closing '\"'",
		     v);
		return NULL;
	}
	*rest = end[1] ? end + 2 : end + 1;
	*end = '\0';
	return v + 1;
}

/* "user = NAME [words]" or "share = NAME [words]" of a [class ID]. */
static int name_line(struct parser *ps, enum name_kind kind, char *v)
{
	const char *field = kind == NAME_USER ? "user" : "share";
	char msg[WORDS_ERRLEN], *save = NULL, *rest, *name;
	struct pending_name *p;

	if (ps->nnames[kind] == SMB_NAMES_MAX)
		return perr(ps, field, "more than %u %ss (the size of the %ss map)",
			    SMB_NAMES_MAX, field, field);
	p = realloc(ps->names[kind], (ps->nnames[kind] + 1) * sizeof(*p));
	if (!p)
		return perr(ps, field, "out of memory");
	ps->names[kind] = p;
	p += ps->nnames[kind];
	name = name_word(ps, field, v, &rest);
	if (!name)
		return -EINVAL;
	if (name_parse(kind, name, &p->key, msg, sizeof(msg)))
		return perr(ps, field, "%s", msg);
	if (own_words(ps, field, rest, &save, &p->own))
		return -EINVAL;
	p->line = ps->line;
	p->section = ps->nsections - 1;
	ps->nnames[kind]++;
	return 0;
}

/* The enum qos_word that normalised key @key names, or -1. */
static int qos_key(const char *key)
{
	char k[32];
	int i;

	for (i = 0; i < QOS_NWORDS; i++) {
		normalize(qos_words[i], strlen(qos_words[i]), k, sizeof(k));
		if (!strcmp(key, k))
			return i;
	}
	return -1;
}

/* The field of qos word @w as this file writes it: "reservation iops". */
static void qos_field(enum qos_word w, char *buf, size_t len)
{
	char *c;

	snprintf(buf, len, "%s", qos_words[w]);
	for (c = buf; *c; c++)
		if (*c == '-')
			*c = ' ';
}

/* "reservation iops = N" and the other qos fields of [class ID]. */
static int qos_line(struct parser *ps, struct section *sec, enum qos_word w,
		    const char *v)
{
	char msg[WORDS_ERRLEN], field[24];

	qos_field(w, field, sizeof(field));
	if (sec->qos_given & (1U << w))
		return perr(ps, field, "given twice");
	if (qos_word_parse(w, v, &sec->q, msg, sizeof(msg)))
		return perr(ps, field, "%s", msg);
	sec->qos_given |= 1U << w;
	sec->qos_line[w] = ps->line;
	return 0;
}

static int class_field(struct parser *ps, const char *key, char *v)
{
	struct section *sec = &ps->sections[ps->nsections - 1];
	char msg[WORDS_ERRLEN];
	unsigned long w;
	int k;
	bool b;

	if (!strcmp(key, "prefix"))
		return prefix_line(ps, v);
	if (!strcmp(key, "user") || !strcmp(key, "share"))
		return name_line(ps, key[0] == 'u' ? NAME_USER : NAME_SHARE,
				 v);
	if (!strcmp(key, "weight")) {
		if (sec->weight)
			return perr(ps, "weight", "given twice");
		if (parse_uint(v, CLASS_WEIGHT_MAX, &w) || w < CLASS_WEIGHT_MIN)
			return perr(ps, "weight", "'%.40s': must be a decimal 1-255",
				    v);
		sec->weight = w;
	} else if (!strcmp(key, "perpeer")) {
		if (sec->per_peer >= 0)
			return perr(ps, "per peer", "given twice");
		if (parse_bool(v, &b))
			return perr(ps, "per peer", "'%.40s': must be yes or no",
				    v);
		sec->per_peer = b;
	} else if (!strcmp(key, "perpeerprefix6")) {
		if (sec->prefix6)
			return perr(ps, "per peer prefix6", "given twice");
		if (parse_prefix6(v, &sec->prefix6, msg, sizeof(msg)))
			return perr(ps, "per peer prefix6", "%s", msg);
		sec->prefix6_line = ps->line;
	} else if (!strcmp(key, "splicemin") || !strcmp(key, "unboundmin")) {
		bool splice = key[0] == 's';
		unsigned int bit = splice ? 1 : 2;
		const char *field = splice ? "splice min" : "unbound min";
		struct policy_args pa;
		char *argv[] = { "0", splice ? "splice-min" : "unbound-min",
				 v };

		if (policy_args_parse(3, argv, &pa, msg, sizeof(msg)))
			return perr(ps, field, "%s", msg);
		if (sec->has_policy & bit)
			return perr(ps, field, "given twice");
		sec->has_policy |= bit;
		policy_apply(&pa, &sec->p);
	} else if ((k = qos_key(key)) >= 0) {
		return qos_line(ps, sec, k, v);
	} else {
		return perr(ps, key, "unknown field of [class %u] (weight, per peer, per peer prefix6, splice min, unbound min, reservation iops, reservation bytes, limit iops, limit bytes, burst, scope, prefix, user, share)",
			    sec->id);
	}
	return 0;
}

static int line_parse(struct parser *ps, char *s, bool *max_given,
		      uint32_t *max)
{
	char key[32], msg[WORDS_ERRLEN], *eq;

	s = trim(s);
	if (!*s || *s == '#' || *s == ';')
		return 0;
	if (*s == '[')
		return section_header(ps, s);
	eq = strchr(s, '=');
	if (!eq)
		return perr(ps, "line", "'%.40s': expected [section] or key = value",
			    s);
	normalize(s, eq - s, key, sizeof(key));
	s = trim(eq + 1);
	if (!*key)
		return perr(ps, "line", "missing key before '='");
	if (!ps->in_global && !ps->nsections)
		return perr(ps, key, "outside a section ([global] or [class ID])");
	if (!ps->in_global)
		return class_field(ps, key, s);
	if (!strcmp(key, "perpeerprefix6")) {
		if (ps->unmatched6)
			return perr(ps, "per peer prefix6", "given twice");
		if (parse_prefix6(s, &ps->unmatched6, msg, sizeof(msg)))
			return perr(ps, "per peer prefix6", "%s", msg);
		ps->unmatched6_line = ps->line;
		return 0;
	}
	if (strcmp(key, "maxinflight"))
		return perr(ps, key, "unknown field of [global] (max inflight, per peer prefix6)");
	if (*max_given)
		return perr(ps, "max inflight", "given twice");
	if (parse_max_inflight(s, max, msg, sizeof(msg)))
		return perr(ps, "max inflight", "%s", msg);
	*max_given = true;
	return 0;
}

static int pending_cmp(const void *a, const void *b)
{
	return cidr_cmp(&((const struct pending *)a)->key,
			&((const struct pending *)b)->key);
}

/** conf_prefix_cmp() - qsort() order of struct conf_prefix: cidr_cmp() */
int conf_prefix_cmp(const void *a, const void *b)
{
	return cidr_cmp(&((const struct conf_prefix *)a)->key,
			&((const struct conf_prefix *)b)->key);
}

static int pending_name_cmp(const void *a, const void *b)
{
	return name_cmp(&((const struct pending_name *)a)->key,
			&((const struct pending_name *)b)->key);
}

/** conf_name_cmp() - qsort() order of struct conf_name: name_cmp() */
int conf_name_cmp(const void *a, const void *b)
{
	return name_cmp(&((const struct conf_name *)a)->key,
			&((const struct conf_name *)b)->key);
}

/** conf_qos_cmp() - qsort() order of struct conf_qos: by class */
int conf_qos_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct conf_qos *)a)->id;
	uint32_t y = ((const struct conf_qos *)b)->id;

	return x < y ? -1 : x > y;
}

/** conf_policy_cmp() - qsort() order of struct conf_policy: by class */
int conf_policy_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct conf_policy *)a)->id;
	uint32_t y = ((const struct conf_policy *)b)->id;

	return x < y ? -1 : x > y;
}

/*
 * [global]'s per peer prefix6: the prefix ::/0 of class 0, per peer with
 * that prefix6, unless a prefix ::/0 of the file already covers every
 * peer.  Return: 0 or -EINVAL/-ENOMEM.
 */
static int unmatched_prefix(struct parser *ps, struct conf_prefix *e)
{
	struct class_spec cs = { .id = 0, .weight = 1, .per_peer = true,
				 .prefix6 = ps->unmatched6 };
	unsigned int i;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < ps->npending; i++) {
		if (ps->pending[i].key.prefixlen)
			continue;
		ps->line = ps->unmatched6_line;
		return perr(ps, "per peer prefix6",
			    "the prefix ::/0 of line %u covers every peer, so none is unmatched: give it per-peer prefix6 %u",
			    ps->pending[i].line, ps->unmatched6);
	}
	e->word = class_word_encode(&cs);
	return 0;
}

/* The class word of an entry of section @sec with its own words @own. */
static uint32_t entry_word(const struct section *sec,
			   const struct class_spec *own)
{
	struct class_spec cs;

	cs.id = sec->id;
	cs.weight = own->weight ?: sec->weight ?: 1;
	cs.per_peer = own->per_peer || sec->per_peer > 0;
	cs.prefix6 = own->prefix6 ?: cs.per_peer ? sec->prefix6 : 0;
	return class_word_encode(&cs);
}

/*
 * The users or shares of the file, sorted by name_cmp(), into @out (@n
 * of them); a name given twice is an error of its later line.
 * Return: 0 or -EINVAL/-ENOMEM.
 */
static int build_names(struct parser *ps, enum name_kind kind,
		       struct conf_name **out, unsigned int *n)
{
	struct pending_name *p = ps->names[kind];
	unsigned int i, np = ps->nnames[kind];
	char name[NAME_STRLEN];

	qsort(p, np, sizeof(*p), pending_name_cmp);
	for (i = 1; i < np; i++) {
		if (pending_name_cmp(&p[i - 1], &p[i]))
			continue;
		ps->line = p[i - 1].line > p[i].line ? p[i - 1].line :
			   p[i].line;
		name_text(&p[i].key, name);
		return perr(ps, kind == NAME_USER ? "user" : "share",
			    "'%s' given twice (lines %u and %u)", name,
			    p[i - 1].line < p[i].line ? p[i - 1].line :
			    p[i].line, ps->line);
	}
	*out = calloc(np + 1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (i = 0; i < np; i++) {
		(*out)[i].key = p[i].key;
		(*out)[i].word = entry_word(&ps->sections[p[i].section],
					    &p[i].own);
	}
	*n = np;
	return 0;
}

/*
 * The qos entry of every section that has one, checked as a whole: an
 * error names the line of the word at fault (the first qos word of the
 * section when it is none of them).  Return: 0 or -EINVAL.
 */
static int check_qos(struct parser *ps)
{
	char msg[WORDS_ERRLEN], field[24];
	struct section *sec;
	enum qos_word at;
	unsigned int i;

	for (i = 0; i < ps->nsections; i++) {
		sec = &ps->sections[i];
		if (!sec->qos_given ||
		    !qos_check(&sec->q, sec->qos_given, &at, msg, sizeof(msg)))
			continue;
		if (at == QOS_NWORDS)
			at = __builtin_ctz(sec->qos_given);
		ps->line = sec->qos_line[at];
		qos_field(at, field, sizeof(field));
		return perr(ps, field, "%s", msg);
	}
	return 0;
}

/*
 * The entries of the parsed sections, in the order of struct conf: the
 * prefixes as the pending lines sorted by cidr_cmp(), the policies and
 * qos entries sorted here, the users and shares by name.
 * Return: 0 or -EINVAL/-ENOMEM.
 */
static int build(struct parser *ps, struct conf *c)
{
	struct conf_prefix unmatched;
	struct section *sec;
	struct pending *p;
	unsigned int i, n;
	char cidr[CIDR_STRLEN];
	int err;

	if (ps->unmatched6 && unmatched_prefix(ps, &unmatched))
		return -EINVAL;
	for (i = 0; i < ps->nsections; i++) {
		sec = &ps->sections[i];
		if (!sec->prefix6 || sec->per_peer > 0)
			continue;
		ps->line = sec->prefix6_line;
		return perr(ps, "per peer prefix6",
			    "only with per peer = yes in [class %u]", sec->id);
	}
	if (check_qos(ps))
		return -EINVAL;
	qsort(ps->pending, ps->npending, sizeof(*ps->pending), pending_cmp);
	for (i = 1; i < ps->npending; i++) {
		if (pending_cmp(&ps->pending[i - 1], &ps->pending[i]))
			continue;
		ps->line = ps->pending[i - 1].line > ps->pending[i].line ?
			   ps->pending[i - 1].line : ps->pending[i].line;
		cidr_format(&ps->pending[i].key, cidr, sizeof(cidr));
		return perr(ps, "prefix", "%s given twice (lines %u and %u)",
			    cidr, ps->pending[i - 1].line,
			    ps->pending[i].line);
	}
	c->prefixes = calloc(ps->npending + 2, sizeof(*c->prefixes));
	c->policies = calloc(ps->nsections + 1, sizeof(*c->policies));
	c->qos = calloc(ps->nsections + 1, sizeof(*c->qos));
	if (!c->prefixes || !c->policies || !c->qos)
		return -ENOMEM;
	for (i = 0; i < ps->npending; i++) {
		p = &ps->pending[i];
		c->prefixes[i].key = p->key;
		c->prefixes[i].word = entry_word(&ps->sections[p->section],
						 &p->own);
	}
	n = ps->npending;
	if (ps->unmatched6) {
		c->prefixes[n++] = unmatched;
		qsort(c->prefixes, n, sizeof(*c->prefixes), conf_prefix_cmp);
	}
	c->nprefixes = n;
	for (i = 0; i < ps->nsections; i++) {
		if (!ps->sections[i].has_policy)
			continue;
		c->policies[c->npolicies].id = ps->sections[i].id;
		c->policies[c->npolicies++].p = ps->sections[i].p;
	}
	qsort(c->policies, c->npolicies, sizeof(*c->policies),
	      conf_policy_cmp);
	for (i = 0; i < ps->nsections; i++) {
		if (!ps->sections[i].qos_given)
			continue;
		c->qos[c->nqos].id = ps->sections[i].id;
		c->qos[c->nqos++].q = ps->sections[i].q;
	}
	qsort(c->qos, c->nqos, sizeof(*c->qos), conf_qos_cmp);
	err = build_names(ps, NAME_USER, &c->users, &c->nusers);
	if (!err)
		err = build_names(ps, NAME_SHARE, &c->shares, &c->nshares);
	return err;
}

/**
 * conf_parse() - read a whole ksmbd-sched.conf
 * @f:      the open file.
 * @file:   its name, for messages.
 * @c:      output; on error it holds nothing to free.
 * @err:    on failure, "FILE:LINE: FIELD: what is wrong".
 * @errlen: size of @err (CONF_ERRLEN is enough).
 *
 * Return: 0, -EINVAL for an error in the text, -ENOMEM.
 */
int conf_parse(FILE *f, const char *file, struct conf *c, char *err,
	       size_t errlen)
{
	struct parser ps = { .file = file, .err = err, .errlen = errlen };
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int r = 0;

	memset(c, 0, sizeof(*c));
	while (!r && (n = getline(&line, &cap, f)) >= 0) {
		ps.line++;
		/* A NUL would end the line early: the rest unread, unchecked. */
		if (memchr(line, '\0', n))
			r = perr(&ps, "line", "holds a NUL byte (not a text file?)");
		else
			r = line_parse(&ps, line, &c->has_max_inflight,
				       &c->max_inflight);
	}
	if (!r && ferror(f))
		r = perr(&ps, "file", "read error");
	if (!r)
		r = build(&ps, c);
	if (r == -ENOMEM)
		parse_error(err, errlen, "%s: out of memory", file);
	if (r)
		conf_free(c);
	free(line);
	free(ps.sections);
	free(ps.pending);
	free(ps.names[NAME_USER]);
	free(ps.names[NAME_SHARE]);
	return r;
}

/** conf_free() - free the entries of @c; it is empty afterwards */
void conf_free(struct conf *c)
{
	free(c->prefixes);
	free(c->policies);
	free(c->users);
	free(c->shares);
	free(c->qos);
	memset(c, 0, sizeof(*c));
}

/* Prefixes by class id, then prefix order. */
static int by_class_cmp(const void *a, const void *b)
{
	const struct conf_prefix *x = a, *y = b;
	unsigned int cx = KSMBD_SCHED_CLASS_ID_OF(x->word);
	unsigned int cy = KSMBD_SCHED_CLASS_ID_OF(y->word);

	if (cx != cy)
		return cx < cy ? -1 : 1;
	return cidr_cmp(&x->key, &y->key);
}

/* Users or shares by class id, then name order. */
static int name_by_class_cmp(const void *a, const void *b)
{
	const struct conf_name *x = a, *y = b;
	unsigned int cx = KSMBD_SCHED_CLASS_ID_OF(x->word);
	unsigned int cy = KSMBD_SCHED_CLASS_ID_OF(y->word);

	if (cx != cy)
		return cx < cy ? -1 : 1;
	return name_cmp(&x->key, &y->key);
}

/* The entries of one [class ID] section, each sorted within its kind. */
struct class_entries {
	const struct conf_prefix *p;
	unsigned int np;
	const struct conf_name *names[2];	/* by enum name_kind */
	unsigned int nnames[2];
	const struct conf_policy *pol;
	const struct conf_qos *qos;
};

/* The class word of entry @i of @ce: its prefixes, users, shares. */
static uint32_t class_entry_word(const struct class_entries *ce,
				 unsigned int i)
{
	if (i < ce->np)
		return ce->p[i].word;
	i -= ce->np;
	if (i < ce->nnames[NAME_USER])
		return ce->names[NAME_USER][i].word;
	return ce->names[NAME_SHARE][i - ce->nnames[NAME_USER]].word;
}

/*
 * The end of an entry's line: the words that make conf_parse() read
 * @word back in a section of weight @weight, per peer @all_per_peer and
 * per peer prefix6 @class6.
 */
static void write_own_words(FILE *out, uint32_t word, unsigned int weight,
			    bool all_per_peer, unsigned int class6)
{
	struct class_spec cs;
	bool own_pp;

	class_word_decode(word, &cs);
	if (cs.weight != weight)
		fprintf(out, " weight %u", cs.weight);
	/* prefix6 is a word of per-peer: both, or the class's. */
	own_pp = cs.per_peer && (!all_per_peer || (cs.prefix6 && !class6));
	if (own_pp)
		fprintf(out, " per-peer");
	if (own_pp && cs.prefix6)
		fprintf(out, " prefix6 %u", cs.prefix6);
	fputc('\n', out);
}

/* A name as conf_parse() reads it: in double quotes if it holds a space. */
static void write_name(FILE *out, const char *field,
		       const struct smb_name_key *key)
{
	char name[NAME_STRLEN];

	name_text(key, name);
	fprintf(out, strchr(name, ' ') ? "\t%s = \"%s\"" : "\t%s = %s",
		field, name);
}

/*
 * The qos fields of an entry, those of its words that are set (an entry
 * without a reservation or a limit has none: conf_parse() would refuse
 * its burst and scope alone).
 */
static void write_qos(FILE *out, const struct smb_qos *q)
{
	char sz[SIZE_STRLEN];

	if (!qos_is_set(q))
		return;
	if (q->reservation_iops)
		fprintf(out, "\treservation iops = %u\n", q->reservation_iops);
	if (q->reservation_bps) {
		format_size(q->reservation_bps, sz, sizeof(sz));
		fprintf(out, "\treservation bytes = %s\n", sz);
	}
	if (q->limit_iops)
		fprintf(out, "\tlimit iops = %u\n", q->limit_iops);
	if (q->limit_bps) {
		format_size(q->limit_bps, sz, sizeof(sz));
		fprintf(out, "\tlimit bytes = %s\n", sz);
	}
	if (q->burst_ms)
		fprintf(out, "\tburst = %u\n", q->burst_ms);
	fprintf(out, "\tscope = %s\n",
		q->flags & KSMBD_SCHED_CLASS_AGGREGATED ? "aggregated" :
		"dedicated");
}

/* One [class ID] section: its entries @ce, its policy and qos, if any. */
static void write_class(FILE *out, unsigned int id,
			const struct class_entries *ce)
{
	char cidr[CIDR_STRLEN], sp[POLICY_BYTES_STRLEN], ub[POLICY_BYTES_STRLEN];
	static const char *const field[2] = { "user", "share" };
	unsigned int i, k, class6, n = ce->np + ce->nnames[NAME_USER] +
					   ce->nnames[NAME_SHARE];
	struct class_spec cs, first = { .weight = 1 };
	bool all_per_peer = n > 0, same6 = true;

	for (i = 0; i < n; i++) {
		class_word_decode(class_entry_word(ce, i), &cs);
		if (!i)
			first = cs;
		all_per_peer &= cs.per_peer;
		same6 &= cs.prefix6 == first.prefix6;
	}
	class6 = all_per_peer && same6 ? first.prefix6 : 0;
	fprintf(out, "\n[class %u]\n", id);
	if (n && first.weight != 1)
		fprintf(out, "\tweight = %u\n", first.weight);
	if (all_per_peer)
		fprintf(out, "\tper peer = yes\n");
	if (class6)
		fprintf(out, "\tper peer prefix6 = %u\n", class6);
	if (ce->pol) {
		format_policy_bytes(ce->pol->p.splice_min, sp, sizeof(sp));
		format_policy_bytes(ce->pol->p.unbound_min, ub, sizeof(ub));
		fprintf(out, "\tsplice min = %s\n\tunbound min = %s\n", sp,
			ub);
	}
	if (ce->qos)
		write_qos(out, &ce->qos->q);
	for (i = 0; i < ce->np; i++) {
		cidr_format(&ce->p[i].key, cidr, sizeof(cidr));
		fprintf(out, "\tprefix = %s", cidr);
		write_own_words(out, ce->p[i].word, first.weight,
				all_per_peer, class6);
	}
	for (k = 0; k < 2; k++) {
		for (i = 0; i < ce->nnames[k]; i++) {
			write_name(out, field[k], &ce->names[k][i].key);
			write_own_words(out, ce->names[k][i].word,
					first.weight, all_per_peer, class6);
		}
	}
}

/* A sorted copy of @n entries of @esz bytes at @base, by @cmp, or NULL. */
static void *sorted_copy(const void *base, unsigned int n, size_t esz,
			 int (*cmp)(const void *, const void *))
{
	void *copy = calloc(n + 1, esz);

	if (copy && n) {
		memcpy(copy, base, n * esz);
		qsort(copy, n, esz, cmp);
	}
	return copy;
}

/**
 * conf_write() - @c as ksmbd-sched.conf text that conf_parse() reads back
 * @out: stream.
 * @c:   a policy with sorted entries.
 *
 * Classes in id order, each with the weight of its first entry (its
 * prefixes, then its users, then its shares), per peer when all its
 * entries have it and per peer prefix6 when they all have the same; an
 * entry that differs says so in its own words.  Then its thresholds and
 * its reservation and limit.  The same policy always gives the same text.
 */
void conf_write(FILE *out, const struct conf *c)
{
	unsigned int i = 0, j = 0, u = 0, s = 0, k = 0, id, np = c->nprefixes;
	unsigned int nu = c->nusers, ns = c->nshares;
	struct conf_name *users, *shares;
	struct class_entries ce;
	struct conf_prefix *p;

	fprintf(out, "# ksmbd-sched.conf(5), as written by smb-classify dump\n");
	if (c->has_max_inflight)
		fprintf(out, "\n[global]\n\tmax inflight = %u\n",
			c->max_inflight);
	p = sorted_copy(c->prefixes, np, sizeof(*p), by_class_cmp);
	users = sorted_copy(c->users, nu, sizeof(*users), name_by_class_cmp);
	shares = sorted_copy(c->shares, ns, sizeof(*shares),
			     name_by_class_cmp);
	while (p && users && shares &&
	       (i < np || j < c->npolicies || u < nu || s < ns ||
		k < c->nqos)) {
		id = i < np ? KSMBD_SCHED_CLASS_ID_OF(p[i].word) : UINT32_MAX;
		if (j < c->npolicies && c->policies[j].id < id)
			id = c->policies[j].id;
		if (k < c->nqos && c->qos[k].id < id)
			id = c->qos[k].id;
		if (u < nu && KSMBD_SCHED_CLASS_ID_OF(users[u].word) < id)
			id = KSMBD_SCHED_CLASS_ID_OF(users[u].word);
		if (s < ns && KSMBD_SCHED_CLASS_ID_OF(shares[s].word) < id)
			id = KSMBD_SCHED_CLASS_ID_OF(shares[s].word);
		memset(&ce, 0, sizeof(ce));
		ce.p = p + i;
		while (i < np && KSMBD_SCHED_CLASS_ID_OF(p[i].word) == id)
			i++, ce.np++;
		ce.names[NAME_USER] = users + u;
		while (u < nu && KSMBD_SCHED_CLASS_ID_OF(users[u].word) == id)
			u++, ce.nnames[NAME_USER]++;
		ce.names[NAME_SHARE] = shares + s;
		while (s < ns && KSMBD_SCHED_CLASS_ID_OF(shares[s].word) == id)
			s++, ce.nnames[NAME_SHARE]++;
		ce.pol = j < c->npolicies && c->policies[j].id == id ?
			 &c->policies[j++] : NULL;
		ce.qos = k < c->nqos && c->qos[k].id == id ? &c->qos[k++] :
			 NULL;
		write_class(out, id, &ce);
	}
	free(p);
	free(users);
	free(shares);
}

static void prefix_text(const struct conf_prefix *p, char *buf, size_t len)
{
	char cidr[CIDR_STRLEN];
	struct class_spec cs;

	class_word_decode(p->word, &cs);
	cidr_format(&p->key, cidr, sizeof(cidr));
	snprintf(buf, len, "prefix %s class %u weight %u%s", cidr, cs.id,
		 cs.weight, cs.per_peer ? " per-peer" : "");
	if (cs.prefix6)
		snprintf(buf + strlen(buf), len - strlen(buf), " prefix6 %u",
			 cs.prefix6);
}

/*
 * "user NAME class ..." or "share NAME class ...", NAME in double quotes
 * if it holds a space.
 */
static void name_entry_text(const char *kind, const struct conf_name *e,
			    char *buf, size_t len)
{
	char name[NAME_STRLEN];
	struct class_spec cs;
	bool q;

	class_word_decode(e->word, &cs);
	name_text(&e->key, name);
	q = strchr(name, ' ');
	snprintf(buf, len, "%s %s%s%s class %u weight %u%s", kind,
		 q ? "\"" : "", name, q ? "\"" : "", cs.id, cs.weight,
		 cs.per_peer ? " per-peer" : "");
	if (cs.prefix6)
		snprintf(buf + strlen(buf), len - strlen(buf), " prefix6 %u",
			 cs.prefix6);
}

static void user_text(const struct conf_name *e, char *buf, size_t len)
{
	name_entry_text("user", e, buf, len);
}

static void share_text(const struct conf_name *e, char *buf, size_t len)
{
	name_entry_text("share", e, buf, len);
}

static void policy_text(const struct conf_policy *p, char *buf, size_t len)
{
	char words[48];

	format_policy_words(&p->p, words, sizeof(words));
	snprintf(buf, len, "policy %u %s", p->id, words);
}

static void qos_text(const struct conf_qos *e, char *buf, size_t len)
{
	char words[QOS_WORDS_STRLEN];

	format_qos_words(&e->q, words, sizeof(words));
	snprintf(buf, len, "class %u %s", e->id, words);
}

/* "prefix CIDR class ..." without "prefix CIDR " ("user \"A B\" ..."). */
static const char *after_two_words(const char *s)
{
	const char *q;

	s += strcspn(s, " ");
	s += strspn(s, " ");
	q = *s == '"' ? strchr(s + 1, '"') : NULL;
	if (q)
		s = q + 1;
	s += strcspn(s, " ");
	return s + strspn(s, " ");
}

/*
 * One sorted merge: "- old", "+ new", or "~ old -> new" when the same
 * key has another value.  @at(i) is entry i, @cmp orders keys, @text
 * writes an entry.
 */
static unsigned int diff_entries(FILE *out, const void *a, unsigned int na,
				 const void *b, unsigned int nb, size_t esz,
				 size_t ksz, int (*cmp)(const void *, const void *),
				 void (*text)(const void *, char *, size_t))
{
	char ta[200], tb[200];
	unsigned int i = 0, j = 0, n = 0;
	const char *x, *y;
	int r;

	while (i < na || j < nb) {
		x = (const char *)a + i * esz;
		y = (const char *)b + j * esz;
		r = i == na ? 1 : j == nb ? -1 : cmp(x, y);
		if (r < 0) {
			text(x, ta, sizeof(ta));
			fprintf(out, "- %s\n", ta);
			i++, n++;
		} else if (r > 0) {
			text(y, tb, sizeof(tb));
			fprintf(out, "+ %s\n", tb);
			j++, n++;
		} else {
			if (memcmp(x + ksz, y + ksz, esz - ksz)) {
				text(x, ta, sizeof(ta));
				text(y, tb, sizeof(tb));
				fprintf(out, "~ %s -> %s\n", ta,
					after_two_words(tb));
				n++;
			}
			i++, j++;
		}
	}
	return n;
}

/**
 * conf_diff() - what changes from @old to @new, one line a change
 * @out: stream.
 * @old: the running policy (sorted).
 * @new: the policy to apply (sorted).
 *
 * "~ max-inflight 8 -> 4", "+ prefix CIDR class N weight W [per-peer
 * [prefix6 LEN]]", "+ user NAME class ...", "+ share NAME class ...",
 * "- policy N splice-min X unbound-min Y", "+ class N reservation-iops
 * R ... scope S", "~ prefix CIDR class ... -> class ...".  A name that
 * holds a space is in double quotes.
 *
 * Return: the number of changes.
 */
unsigned int conf_diff(FILE *out, const struct conf *old,
		       const struct conf *new)
{
	unsigned int n = 0;

	if (new->has_max_inflight && (!old->has_max_inflight ||
				      old->max_inflight != new->max_inflight)) {
		if (old->has_max_inflight)
			fprintf(out, "~ max-inflight %u -> %u\n",
				old->max_inflight, new->max_inflight);
		else
			fprintf(out, "+ max-inflight %u (load)\n",
				new->max_inflight);
		n++;
	}
	n += diff_entries(out, old->prefixes, old->nprefixes, new->prefixes,
			  new->nprefixes, sizeof(struct conf_prefix),
			  sizeof(struct smb_prefix_key), conf_prefix_cmp,
			  (void (*)(const void *, char *, size_t))prefix_text);
	n += diff_entries(out, old->users, old->nusers, new->users,
			  new->nusers, sizeof(struct conf_name),
			  sizeof(struct smb_name_key), conf_name_cmp,
			  (void (*)(const void *, char *, size_t))user_text);
	n += diff_entries(out, old->shares, old->nshares, new->shares,
			  new->nshares, sizeof(struct conf_name),
			  sizeof(struct smb_name_key), conf_name_cmp,
			  (void (*)(const void *, char *, size_t))share_text);
	n += diff_entries(out, old->policies, old->npolicies, new->policies,
			  new->npolicies, sizeof(struct conf_policy),
			  sizeof(uint32_t), conf_policy_cmp,
			  (void (*)(const void *, char *, size_t))policy_text);
	n += diff_entries(out, old->qos, old->nqos, new->qos, new->nqos,
			  sizeof(struct conf_qos),
			  offsetof(struct conf_qos, q), conf_qos_cmp,
			  (void (*)(const void *, char *, size_t))qos_text);
	return n;
}
