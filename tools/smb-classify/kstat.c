// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * kstat.c - the text of /proc/net/ksmbd_sched, parsed
 *
 * The kernel writes "key: value" lines (attached, name, link_id, serves,
 * netns_ino, conns_classified, ...) and, while a program is attached,
 * the dispatcher's state (max_inflight, inflight, queued, clients,
 * alloc_fail) and one line per class:
 *
 *   class: ID dispatched N bypassed N bytes N wait_ns N hist H0,H1,...
 *
 * Unknown keys are ignored, so a kernel that adds lines still parses.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kstat.h"

/* Strict unsigned decimal at *@p, advancing it; no sign, no spaces. */
static int get_u64(const char **p, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (x > (UINT64_MAX - (*s - '0')) / 10)
			return -ERANGE;
		x = x * 10 + (*s - '0');
	}
	*v = x;
	*p = s;
	return 0;
}

/* Expect the literal @word at *@p, advancing past it. */
static int get_word(const char **p, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(*p, word, n))
		return -EINVAL;
	*p += n;
	return 0;
}

/**
 * ksched_parse_class() - parse one "class: ..." line
 * @line: the line, with or without its newline.
 * @c:    output, set only on success.  A histogram with fewer buckets
 *        than KSCHED_HIST_BUCKETS is accepted (@nhist says how many),
 *        more are an error.
 *
 * Return: 0 or -EINVAL.
 */
int ksched_parse_class(const char *line, struct ksched_class *c)
{
	static const char *const keys[] = {
		" dispatched ", " bypassed ", " bytes ", " wait_ns ",
	};
	struct ksched_class k = { 0 };
	uint64_t *vals[] = { &k.dispatched, &k.bypassed, &k.bytes,
			     &k.wait_ns };
	const char *p = line;
	uint64_t id;
	unsigned int i;

	if (get_word(&p, "class: ") || get_u64(&p, &id) || id > 0xffff)
		return -EINVAL;
	k.id = id;
	for (i = 0; i < 4; i++)
		if (get_word(&p, keys[i]) || get_u64(&p, vals[i]))
			return -EINVAL;
	if (get_word(&p, " hist "))
		return -EINVAL;
	for (;;) {
		if (k.nhist == KSCHED_HIST_BUCKETS ||
		    get_u64(&p, &k.hist[k.nhist]))
			return -EINVAL;
		k.nhist++;
		if (*p != ',')
			break;
		p++;
	}
	if (*p == '\n')
		p++;
	if (*p)
		return -EINVAL;
	*c = k;
	return 0;
}

/**
 * ksched_parse_line() - take one line of /proc/net/ksmbd_sched into @st
 * @st:   state being filled (start from ksched_parse() or zeroed).
 * @line: the line.
 *
 * Return: 0 (also for unknown or unreadable "key: value" lines, which
 * are skipped); -EINVAL for a malformed "class:" line; -ENOMEM.
 */
int ksched_parse_line(struct ksched_state *st, const char *line)
{
	char key[64], val[128];
	unsigned long long v;
	struct ksched_class c, *tmp;

	if (!strncmp(line, "class:", 6)) {
		if (ksched_parse_class(line, &c))
			return -EINVAL;
		tmp = realloc(st->classes, (st->nclasses + 1) * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		st->classes = tmp;
		st->classes[st->nclasses++] = c;
		return 0;
	}
	if (sscanf(line, "%63[^:]: %127s", key, val) != 2)
		return 0;
	v = strtoull(val, NULL, 10);
	if (!strcmp(key, "attached")) {
		st->attached = v;
	} else if (!strcmp(key, "name")) {
		snprintf(st->name, sizeof(st->name), "%.31s", val);
	} else if (!strcmp(key, "link_id")) {
		st->link_id = v;
	} else if (!strcmp(key, "serves")) {
		st->serves = v;
	} else if (!strcmp(key, "conns_classified")) {
		st->conns_classified = v;
	} else if (!strcmp(key, "reqs_classified")) {
		st->reqs_classified = v;
	} else if (!strcmp(key, "class_clamped")) {
		st->class_clamped = v;
	} else if (!strcmp(key, "verdict_clamped")) {
		st->verdict_clamped = v;
	} else if (!strcmp(key, "max_inflight")) {
		st->max_inflight = v;
		st->has_disp = true;
	} else if (!strcmp(key, "inflight")) {
		st->inflight = v;
	} else if (!strcmp(key, "queued")) {
		st->queued = v;
	} else if (!strcmp(key, "clients")) {
		st->clients = v;
	} else if (!strcmp(key, "alloc_fail")) {
		st->alloc_fail = v;
	} else if (!strcmp(key, "payloads")) {
		st->payloads = v;
		st->has_held = true;
	} else if (!strcmp(key, "payload_pages")) {
		st->payload_pages = v;
	}
	return 0;
}

/**
 * ksched_parse() - parse the whole of /proc/net/ksmbd_sched
 * @f:  the open file.
 * @st: output; its old contents are not freed (see ksched_free()).
 *
 * Return: 0, -EINVAL for a malformed class line, or -ENOMEM; on error
 * @st holds nothing to free.
 */
int ksched_parse(FILE *f, struct ksched_state *st)
{
	char line[1024];
	int err;

	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "-");
	while (fgets(line, sizeof(line), f)) {
		err = ksched_parse_line(st, line);
		if (err) {
			ksched_free(st);
			return err;
		}
	}
	return 0;
}

/** ksched_free() - free the class lines of @st; it stays usable */
void ksched_free(struct ksched_state *st)
{
	free(st->classes);
	st->classes = NULL;
	st->nclasses = 0;
}

/** ksched_class_mean_ns() - mean wait of a class's dispatched requests */
uint64_t ksched_class_mean_ns(const struct ksched_class *c)
{
	return c->dispatched ? c->wait_ns / c->dispatched : 0;
}

/**
 * ksched_hist_percentile() - bound on a percentile of the wait histogram
 * @hist:     bucket i counts waits in [2^(i-1), 2^i) us, bucket 0 those
 *            under 1 us; the last bucket is open-ended.
 * @n:        number of buckets, 1..64.
 * @pct:      percentile, 1..100.
 * @bound_ns: output: the upper bound of the bucket holding the @pct-th
 *            percentile (the smallest wait w such that at least pct% of
 *            waits lie in buckets wholly below or at w), in ns; for the
 *            open last bucket its lower bound instead.
 * @open:     output: the percentile is in the open last bucket, so
 *            @bound_ns is a lower bound (">=").
 *
 * The rank is ceil(count * pct / 100), the nearest-rank definition.
 *
 * Return: the bucket index, or -1 when the histogram is empty.
 */
int ksched_hist_percentile(const uint64_t *hist, unsigned int n,
			   unsigned int pct, uint64_t *bound_ns, bool *open)
{
	unsigned __int128 total = 0, rank, cum = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		total += hist[i];
	if (!total || !n)
		return -1;
	rank = (total * pct + 99) / 100;
	if (!rank)
		rank = 1;
	for (i = 0; i < n; i++) {
		cum += hist[i];
		if (cum >= rank)
			break;
	}
	if (i == n)	/* pct > 100: the last non-empty one */
		i = n - 1;
	*open = i == n - 1 && n > 1;
	if (*open)
		*bound_ns = (1ULL << (i - 1)) * 1000ULL;
	else
		*bound_ns = (1ULL << i) * 1000ULL;
	return i;
}
