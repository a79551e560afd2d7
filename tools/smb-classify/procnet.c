// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * procnet.c - the text of /proc/net/ksmbd_sched and ksmbd_sched_clients,
 * and of a trace buffer's per-CPU stats, parsed: the one place that reads
 * the kernel's text formats (the VM tests read them through
 * "smb-classify -j status", "clients -j" and "trace")
 *
 * The kernel writes "key: value" lines (attached, name, link_id, serves,
 * netns_ino, conns_classified, ...) and, while a program is attached,
 * the dispatcher's state (max_inflight, inflight, queued, clients,
 * alloc_fail) and one line per class:
 *
 *   class: ID dispatched N bypassed N bytes N wait_ns N hist H0,H1,...
 *
 * and, after it, for a class with a reservation or a limit:
 *
 *   class_qos: ID res_iops N res_bps N lim_iops N lim_bps N burst_ms N
 *              aggregated 0|1 limited N throttled_ns N res_served N
 *              res_missed N
 *
 * (one line; pairs "key value" in any order, those of a later kernel
 * skipped).  Unknown keys, and lines that do not parse (a class line of
 * another shape), are skipped and counted, so a kernel that adds lines
 * still parses.  ksmbd_sched_clients has one line per dispatcher client:
 *
 *   client id=N class=N weight=N peer=ADDR|- [guid=GUID] conns=N queued=N
 *          inflight=N dispatched=N bytes=N [more key=value words]
 *
 * guid= (with peer=-) for a client keyed by the ClientGUID of its
 * NEGOTIATE: a per-peer class of a session or tree connect.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procnet.h"

/* Unsigned decimal at *@p, advancing it; no sign, no spaces. */
static int get_u64(const char **p, uint64_t *v)
{
	char *end;

	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(*p, &end, 10);
	if (errno)
		return -ERANGE;
	*p = end;
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
 * @c:    output, set only on success.  A histogram of up to
 *        KSCHED_HIST_MAX buckets is accepted (@nhist says how many).
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
		if (k.nhist == KSCHED_HIST_MAX ||
		    get_u64(&p, &k.hist[k.nhist++]))
			return -EINVAL;
		if (*p != ',')
			break;
		p++;
	}
	if (*p && strcmp(p, "\n"))
		return -EINVAL;
	*c = k;
	return 0;
}

/* The numeric pairs of a class_qos line, in struct ksched_qos. */
#define QKEY(k)		{ #k, offsetof(struct ksched_qos, k) }
static const struct {
	const char *key;
	size_t off;
} qos_keys[] = {
	QKEY(res_iops), QKEY(res_bps), QKEY(lim_iops), QKEY(lim_bps),
	QKEY(burst_ms), QKEY(aggregated), QKEY(limited), QKEY(throttled_ns),
	QKEY(res_served), QKEY(res_missed),
};
#define NQOS_KEYS	(sizeof(qos_keys) / sizeof(qos_keys[0]))

/**
 * ksched_parse_qos() - parse one "class_qos: ..." line
 * @line: the line, with or without its newline.
 * @q:    output, set only on success.  Pairs "key value" in any order;
 *        every key of struct ksched_qos once, each a decimal (aggregated
 *        0 or 1); pairs of other keys, of a later kernel, are skipped.
 *
 * Return: 0 or -EINVAL.
 */
int ksched_parse_qos(const char *line, struct ksched_qos *q)
{
	struct ksched_qos k = { 0 };
	const char *p = line, *kw, *vw;
	unsigned int seen = 0;
	size_t kn, vn, i, off;
	uint64_t id, v;

	if (get_word(&p, "class_qos: ") || get_u64(&p, &id) || id > 0xffff)
		return -EINVAL;
	k.id = id;
	while (*p == ' ') {
		kw = ++p;
		kn = strcspn(p, " \n");
		p += kn;
		if (!kn || *p != ' ')
			return -EINVAL;
		vw = ++p;
		vn = strcspn(p, " \n");
		p += vn;
		if (!vn)
			return -EINVAL;
		for (i = 0; i < NQOS_KEYS; i++)
			if (strlen(qos_keys[i].key) == kn &&
			    !strncmp(kw, qos_keys[i].key, kn))
				break;
		if (i == NQOS_KEYS)
			continue;	/* a pair of a later kernel */
		if ((seen & (1U << i)) || get_u64(&vw, &v) || vw != p)
			return -EINVAL;
		seen |= 1U << i;
		off = qos_keys[i].off;
		if (off == offsetof(struct ksched_qos, aggregated)) {
			if (v > 1)
				return -EINVAL;
			k.aggregated = v;
		} else {
			*(uint64_t *)((char *)&k + off) = v;
		}
	}
	if ((*p && strcmp(p, "\n")) || seen != (1U << NQOS_KEYS) - 1)
		return -EINVAL;
	*q = k;
	return 0;
}

/* Room for one more element at the end of *@arr.  Return: it, or NULL. */
static void *append(void *arr, unsigned int *n, size_t esz)
{
	void **p = arr, *tmp = realloc(*p, (*n + 1) * esz);

	if (!tmp)
		return NULL;
	*p = tmp;
	return (char *)tmp + (*n)++ * esz;
}

/* The numeric keys of struct ksched_state, in the order status shows them. */
#define KEY(k, g)	{ #k, offsetof(struct ksched_state, k), \
			  sizeof(((struct ksched_state *)0)->k), KSCHED_G_##g }
const struct ksched_field ksched_fields[] = {
	KEY(attached, STATE), KEY(link_id, STATE), KEY(serves, STATE),
	KEY(conns_classified, COUNTER), KEY(reqs_classified, COUNTER),
	KEY(class_clamped, COUNTER), KEY(verdict_clamped, COUNTER),
	KEY(sessions_classified, HOOKS), KEY(trees_classified, HOOKS),
	KEY(classes_initialised, HOOKS), KEY(class_params_clamped, HOOKS),
	KEY(max_inflight, DISP), KEY(budget_min, DISP), KEY(budget_max, DISP),
	KEY(budget_base_ns, DISP), KEY(budget_changes, DISP),
	KEY(inflight, DISP), KEY(queued, DISP),
	KEY(clients, DISP), KEY(alloc_fail, DISP),
	KEY(payloads, HELD), KEY(payload_pages, HELD),
};
const unsigned int ksched_nfields =
	sizeof(ksched_fields) / sizeof(ksched_fields[0]);

/**
 * ksched_value() - a numeric field of a parsed line
 * @base: the struct (struct ksched_state, ksched_class, ksched_client).
 * @off:  the field's offset in it (a table's @off, offsetof()).
 * @size: its size: 1 (bool), 4 or 8.
 *
 * Return: its value.
 */
uint64_t ksched_value(const void *base, size_t off, size_t size)
{
	const char *p = (const char *)base + off;

	return size == sizeof(bool) ? *(const bool *)p :
	       size == sizeof(uint32_t) ? *(const uint32_t *)p :
	       *(const uint64_t *)p;
}

static void set_at(void *base, size_t off, size_t size, uint64_t v)
{
	char *p = (char *)base + off;

	if (size == sizeof(bool))
		*(bool *)p = v;
	else if (size == sizeof(uint32_t))
		*(uint32_t *)p = v;
	else
		*(uint64_t *)p = v;
}

/* The class_qos lines read so far, for merge_qos(). */
struct qos_lines {
	struct ksched_qos *q;
	unsigned int n;
};

/**
 * ksched_parse_line() - take one line of /proc/net/ksmbd_sched into @st
 * @st:   state being filled (start from ksched_parse() or zeroed).
 * @ql:   class_qos lines, kept aside.
 * @line: the line.
 *
 * A line that does not parse is counted in @st->skipped.
 *
 * Return: 0, or -ENOMEM.
 */
static int ksched_parse_line(struct ksched_state *st, struct qos_lines *ql,
			     const char *line)
{
	struct ksched_kv kv, *kvp;
	struct ksched_class c, *cp;
	struct ksched_qos q, *qp;
	const char *p;
	uint64_t v;
	size_t i;

	if (!strncmp(line, "class_qos:", 10)) {
		if (ksched_parse_qos(line, &q)) {
			st->skipped++;
			return 0;
		}
		qp = append(&ql->q, &ql->n, sizeof(q));
		if (!qp)
			return -ENOMEM;
		*qp = q;
		return 0;
	}
	if (!strncmp(line, "class:", 6)) {
		if (ksched_parse_class(line, &c)) {
			st->skipped++;
			return 0;
		}
		cp = append(&st->classes, &st->nclasses, sizeof(c));
		if (!cp)
			return -ENOMEM;
		*cp = c;
		return 0;
	}
	if (sscanf(line, "%47[a-z0-9_]: %79[^\n]", kv.key, kv.val) != 2) {
		st->skipped++;
		return 0;
	}
	kvp = append(&st->kv, &st->nkv, sizeof(kv));
	if (!kvp)
		return -ENOMEM;
	*kvp = kv;
	if (!strcmp(kv.key, "name")) {
		snprintf(st->name, sizeof(st->name), "%.31s", kv.val);
		return 0;
	}
	p = kv.val;
	for (i = 0; i < ksched_nfields; i++) {
		if (strcmp(kv.key, ksched_fields[i].key))
			continue;
		if (get_u64(&p, &v) || *p)
			st->skipped++;
		else
			set_at(st, ksched_fields[i].off, ksched_fields[i].size,
			       v);
		st->has_hooks |= ksched_fields[i].group == KSCHED_G_HOOKS;
		st->has_disp |= ksched_fields[i].group == KSCHED_G_DISP;
		st->has_held |= ksched_fields[i].group == KSCHED_G_HELD;
	}
	return 0;
}

/*
 * Each class_qos line into its class: the first "class:" line of its id,
 * or a class of no requests added at the end when there is none.  A
 * second class_qos line of one class is skipped.  Return: 0 or -ENOMEM.
 */
static int merge_qos(struct ksched_state *st, const struct qos_lines *ql)
{
	struct ksched_class *c;
	unsigned int i, j;

	for (i = 0; i < ql->n; i++) {
		for (j = 0; j < st->nclasses; j++)
			if (st->classes[j].id == ql->q[i].id)
				break;
		if (j < st->nclasses) {
			c = &st->classes[j];
		} else {
			c = append(&st->classes, &st->nclasses, sizeof(*c));
			if (!c)
				return -ENOMEM;
			memset(c, 0, sizeof(*c));
			c->id = ql->q[i].id;
		}
		if (c->has_qos) {
			st->skipped++;
			continue;
		}
		c->has_qos = true;
		c->qos = ql->q[i];
	}
	return 0;
}

/**
 * ksched_parse() - parse the whole of /proc/net/ksmbd_sched
 * @f:  the open file.
 * @st: output; its old contents are not freed (see ksched_free()).
 *
 * Return: 0 or -ENOMEM; on error @st holds nothing to free.
 */
int ksched_parse(FILE *f, struct ksched_state *st)
{
	struct qos_lines ql = { 0 };
	char line[1024];
	int err = 0;

	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "-");
	while (!err && fgets(line, sizeof(line), f))
		err = ksched_parse_line(st, &ql, line);
	if (!err)
		err = merge_qos(st, &ql);
	free(ql.q);
	if (err)
		ksched_free(st);
	return err;
}

/** ksched_free() - free the lines of @st; it stays usable */
void ksched_free(struct ksched_state *st)
{
	free(st->classes);
	free(st->kv);
	st->classes = NULL;
	st->kv = NULL;
	st->nclasses = st->nkv = 0;
}

/**
 * ksched_parse_client() - parse one "client ..." line
 * @line: the line, with or without its newline.
 * @c:    output, set only on success.  Words "key=value" in any order;
 *        keys not known here are skipped; a known one missing stays 0.
 *
 * Return: 0, or -EINVAL when it is not a client line or a known value
 * does not parse.
 */
#define CKEY(k, w, f, m)	{ k, w, offsetof(struct ksched_client, f), \
				  sizeof(((struct ksched_client *)0)->f), m }
const struct ksched_client_field ksched_client_fields[] = {
	CKEY("id", 6, id, UINT32_MAX), CKEY("class", 5, class_id, 0xffff),
	CKEY("weight", 6, weight, 255),
	{ "peer", -39, offsetof(struct ksched_client, peer), 0,
	  sizeof(((struct ksched_client *)0)->peer) },
	{ "guid", -36, offsetof(struct ksched_client, guid), 0,
	  sizeof(((struct ksched_client *)0)->guid) },
	CKEY("conns", 5, conns, UINT64_MAX),
	CKEY("queued", 6, queued, UINT64_MAX),
	CKEY("inflight", 8, inflight, UINT64_MAX),
	CKEY("dispatched", 10, dispatched, UINT64_MAX),
	CKEY("bytes", 14, bytes, UINT64_MAX),
};
const unsigned int ksched_client_nfields =
	sizeof(ksched_client_fields) / sizeof(ksched_client_fields[0]);

static int ksched_parse_client(const char *line, struct ksched_client *c)
{
	const struct ksched_client_field *f = NULL;
	struct ksched_client k = { .peer = "-" };
	const char *p = line, *w;
	size_t i, n, kn = 0;
	uint64_t v;
	char *dst;

	if (get_word(&p, "client "))
		return -EINVAL;
	while (*p && *p != '\n') {
		while (*p == ' ')
			p++;
		w = p;
		n = strcspn(p, " \n");
		p += n;
		for (i = 0; i < ksched_client_nfields; i++) {
			f = &ksched_client_fields[i];
			kn = strlen(f->key);
			if (n > kn && !strncmp(w, f->key, kn) && w[kn] == '=')
				break;
		}
		if (i == ksched_client_nfields)
			continue;	/* a key of a later kernel */
		w += kn + 1;
		dst = (char *)&k + f->off;
		if (!f->size) {
			if (w == p || (size_t)(p - w) >= f->max)
				return -EINVAL;
			memcpy(dst, w, p - w);
			dst[p - w] = '\0';
			continue;
		}
		if (get_u64(&w, &v) || w != p || v > f->max)
			return -EINVAL;
		set_at(&k, f->off, f->size, v);
	}
	*c = k;
	return 0;
}

/**
 * ksched_parse_clients() - parse the whole of ksmbd_sched_clients
 * @f:   the open file.
 * @out: the client lines (malloc'ed, NULL when none); lines that are not
 *       client lines are skipped.
 * @n:   how many.
 *
 * Return: 0 or -ENOMEM.
 */
int ksched_parse_clients(FILE *f, struct ksched_client **out,
			 unsigned int *n)
{
	struct ksched_client c, *cp;
	char line[512];

	*out = NULL;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (ksched_parse_client(line, &c))
			continue;
		cp = append(out, n, sizeof(c));
		if (!cp) {
			free(*out);
			*out = NULL;
			*n = 0;
			return -ENOMEM;
		}
		*cp = c;
	}
	return 0;
}

/**
 * ksched_ring_lost() - events a trace ring buffer lost on one CPU
 * @stats: the text of the instance's per_cpu/cpuN/stats, NUL-terminated:
 *         "KEY: VALUE" lines (entries, overrun, commit overrun, bytes,
 *         ..., dropped events, read events).
 *
 * Return: "overrun" (events overwritten) plus "dropped events"; a line
 * missing or not a decimal counts 0.
 */
uint64_t ksched_ring_lost(const char *stats)
{
	static const char *const keys[] = { "overrun: ", "dropped events: " };
	const char *p = stats;
	uint64_t lost = 0, v;
	unsigned int i;

	while (p && *p) {
		for (i = 0; i < 2; i++) {
			const char *q = p;

			if (!get_word(&q, keys[i]) && !get_u64(&q, &v) &&
			    (*q == '\n' || !*q))
				lost += v;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return lost;
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
