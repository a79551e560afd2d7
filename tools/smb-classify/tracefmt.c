// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * tracefmt.c - decoding of ksmbd trace events from trace_pipe
 *
 * A trace_pipe line is "TASK-PID [CPU] FLAGS SECONDS.USECS: EVENT: FIELDS"
 * (the FLAGS column only with the irq-info option); FIELDS are the
 * event's TP_printk output, "key=value" words for every ksmbd event.
 * Lines without the header ("EVENT: FIELDS") are accepted too.  Events
 * this file does not know are decoded generically, so a new tracepoint
 * (ksmbd_read_payload: path=copy|splice len=N) shows up without a change.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/ksmbd_sched.h>

#include "tracefmt.h"

static bool is_ident(const char *s, size_t n)
{
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

/* "1234.567890" exactly: digits, a dot, digits. */
static bool is_timestamp(const char *s, size_t n)
{
	size_t i, dot = 0;

	for (i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (dot || !i)
				return false;
			dot = i;
		} else if (!isdigit((unsigned char)s[i])) {
			return false;
		}
	}
	return dot && dot + 1 < n;
}

static void copy_n(char *dst, size_t size, const char *src, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Split the header "TASK-PID [CPU] FLAGS" (before the timestamp). */
static void parse_header(const char *s, size_t n, struct trace_event *ev)
{
	const char *lb = NULL, *dash = NULL, *p;
	size_t start = 0;

	for (p = s; p < s + n; p++)
		if (*p == '[')
			lb = p;
	if (!lb)
		return;
	ev->cpu = atoi(lb + 1);
	while (start < (size_t)(lb - s) && s[start] == ' ')
		start++;
	n = lb - s;
	while (n > start && s[n - 1] == ' ')
		n--;
	for (p = s + start; p < s + n; p++)
		if (*p == '-')
			dash = p;
	if (!dash)
		return;
	copy_n(ev->comm, sizeof(ev->comm), s + start, dash - (s + start));
	ev->pid = atoi(dash + 1);
}

static int parse_fields(const char *p, struct trace_event *ev)
{
	while (*p) {
		const char *w, *eq;
		size_t n;

		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		w = p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
		n = p - w;
		eq = memchr(w, '=', n);
		if (!eq || !is_ident(w, eq - w)) {
			struct trace_field *f;
			size_t len;

			/* A value with a space: glue it to the last one. */
			if (!ev->nfields)
				return -EINVAL;
			f = &ev->f[ev->nfields - 1];
			len = strlen(f->val);
			if (len + 1 < sizeof(f->val)) {
				f->val[len++] = ' ';
				copy_n(f->val + len, sizeof(f->val) - len, w,
				       n);
			}
			continue;
		}
		if (ev->nfields == TRACE_MAX_FIELDS)
			continue;	/* keep what fits */
		copy_n(ev->f[ev->nfields].key, TRACE_KEY_LEN, w, eq - w);
		copy_n(ev->f[ev->nfields].val, TRACE_VAL_LEN, eq + 1,
		       n - (eq + 1 - w));
		ev->nfields++;
	}
	return 0;
}

/**
 * trace_line_parse() - split one line of trace_pipe
 * @line: the line, with or without its newline.
 * @ev:   output.
 *
 * Return: 0, or -EINVAL when the line is not "[HEADER TIME: ]EVENT: FIELDS"
 * (e.g. the "CPU:N [LOST M EVENTS]" notes of trace_pipe).
 */
int trace_line_parse(const char *line, struct trace_event *ev)
{
	const char *p, *ts, *name, *colon;

	memset(ev, 0, sizeof(*ev));
	ev->pid = -1;
	ev->cpu = -1;

	/* Without a header: "EVENT: FIELDS". */
	colon = strstr(line, ": ");
	if (colon && is_ident(line, colon - line)) {
		name = line;
		goto event;
	}
	/* Else the first "TIME: EVENT" with TIME like 1234.567890. */
	for (p = line; (p = strstr(p, ": ")); p++) {
		for (ts = p; ts > line && ts[-1] != ' '; ts--)
			;
		if (!is_timestamp(ts, p - ts))
			continue;
		name = p + 2;
		if (!is_ident(name, strcspn(name, ":\n")))
			continue;
		copy_n(ev->time, sizeof(ev->time), ts, p - ts);
		parse_header(line, ts - line, ev);
		goto event;
	}
	return -EINVAL;
event:
	colon = strstr(name, ": ");
	if (!colon) {
		size_t n = strcspn(name, "\n");

		if (n && name[n - 1] == ':')
			n--;
		copy_n(ev->name, sizeof(ev->name), name, n);
		return is_ident(ev->name, strlen(ev->name)) ? 0 : -EINVAL;
	}
	copy_n(ev->name, sizeof(ev->name), name, colon - name);
	return parse_fields(colon + 2, ev);
}

/** trace_field() - value of field @key of @ev, or NULL */
const char *trace_field(const struct trace_event *ev, const char *key)
{
	unsigned int i;

	for (i = 0; i < ev->nfields; i++)
		if (!strcmp(ev->f[i].key, key))
			return ev->f[i].val;
	return NULL;
}

/** trace_short_name() - "req" for "ksmbd_sched_req", "read_payload"... */
const char *trace_short_name(const char *name)
{
	if (!strncmp(name, "ksmbd_sched_", 12) && name[12])
		return name + 12;
	if (!strncmp(name, "ksmbd_", 6) && name[6])
		return name + 6;
	return name;
}

/**
 * trace_format_peer() - an address for a person
 * @peer: as the kernel prints it (%pI6c): "::ffff:127.0.0.1" or IPv6.
 * @buf:  output: an IPv4-mapped address as plain IPv4, else @peer.
 * @len:  size of @buf.
 */
void trace_format_peer(const char *peer, char *buf, size_t len)
{
	unsigned int a, b, c, d;
	char tail;

	if (!strncmp(peer, "::ffff:", 7) &&
	    sscanf(peer + 7, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4)
		peer += 7;
	snprintf(buf, len, "%s", peer);
}

/**
 * trace_format_ns() - a duration for a person: "850 ns", "1.2 us",
 * "35.0 ms", "2.50 s"
 */
void trace_format_ns(unsigned long long ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%llu ns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
}

struct sbuf {
	char *buf;
	size_t len, off;
};

static void sb_add(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->off >= sb->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->off, sb->len - sb->off, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->off += n;
	if (sb->off >= sb->len)
		sb->off = sb->len;
}

/* Strict unsigned number, decimal or 0x-hex. */
static bool get_num(const char *s, unsigned long long *v)
{
	char *end;

	if (!s || !*s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	/* strtoull(, 0) reads "010" as octal: decimal means no leading 0 */
	if (s[0] == '0' && s[1] && s[1] != 'x')
		return false;
	return true;
}

static const char *fv(const struct trace_event *ev, const char *key)
{
	const char *v = trace_field(ev, key);

	return v ? v : "?";
}

static void text_class_word(struct sbuf *sb, const char *val)
{
	unsigned long long w;

	if (!get_num(val, &w)) {
		sb_add(sb, " class %s", val ? val : "?");
		return;
	}
	sb_add(sb, " class %llu weight %llu%s",
	       (unsigned long long)KSMBD_SCHED_CLASS_ID_OF((uint32_t)w),
	       (unsigned long long)(KSMBD_SCHED_CLASS_WEIGHT_OF((uint32_t)w) ?
				    KSMBD_SCHED_CLASS_WEIGHT_OF((uint32_t)w) :
				    1),
	       (w & KSMBD_SCHED_CLASS_PER_PEER) ? " per-peer" : "");
}

static void text_peer(struct sbuf *sb, const struct trace_event *ev)
{
	char peer[TRACE_VAL_LEN];

	trace_format_peer(fv(ev, "peer"), peer, sizeof(peer));
	sb_add(sb, " peer %s", peer);
}

static const char *queue_name(unsigned long long q)
{
	switch (q) {
	case KSMBD_SCHED_QUEUE_PERCPU:
		return "percpu";
	case KSMBD_SCHED_QUEUE_UNBOUND:
		return "unbound";
	default:
		return NULL;
	}
}

static void text_conn(struct sbuf *sb, const struct trace_event *ev)
{
	text_peer(sb, ev);
	sb_add(sb, " port %s ->", fv(ev, "port"));
	text_class_word(sb, trace_field(ev, "class"));
	sb_add(sb, " prog %s netns %s", fv(ev, "prog"), fv(ev, "netns"));
}

static void text_req(struct sbuf *sb, const struct trace_event *ev)
{
	const char *flags = trace_field(ev, "flags");
	unsigned long long v, q;
	const char *qn;

	text_peer(sb, ev);
	text_class_word(sb, trace_field(ev, "class"));
	sb_add(sb, " %s len %s off %s credits %s", fv(ev, "cmd"),
	       fv(ev, "len"), fv(ev, "off"), fv(ev, "credits"));
	if (flags && *flags)
		sb_add(sb, " flags %s", flags);
	if (!get_num(trace_field(ev, "verdict"), &v)) {
		sb_add(sb, " -> verdict %s", fv(ev, "verdict"));
		return;
	}
	q = v & KSMBD_SCHED_VERDICT_QUEUE_MASK;
	qn = queue_name(q);
	sb_add(sb, " -> verdict 0x%llx: queue ", v);
	if (qn)
		sb_add(sb, "%s", qn);
	else
		sb_add(sb, "%llu (invalid: runs percpu)", q);
	sb_add(sb, ", splice %s",
	       (v & KSMBD_SCHED_VERDICT_SPLICE) ? "yes" : "no");
}

static void text_dispatch(struct sbuf *sb, const struct trace_event *ev)
{
	const char *client = fv(ev, "client"), *slash = strchr(client, '/');
	unsigned long long waited = 0, ns;
	char peer[TRACE_VAL_LEN], dur[32];

	sb_add(sb, " class %s client ", fv(ev, "class"));
	if (slash && !strcmp(slash + 1, "::")) {
		sb_add(sb, "%.*s", (int)(slash - client), client);
	} else if (slash) {
		trace_format_peer(slash + 1, peer, sizeof(peer));
		sb_add(sb, "%.*s/%s", (int)(slash - client), client, peer);
	} else {
		sb_add(sb, "%s", client);
	}
	sb_add(sb, " %s queue %s bytes %s", fv(ev, "cmd"), fv(ev, "queue"),
	       fv(ev, "bytes"));
	get_num(trace_field(ev, "waited"), &waited);
	if (!waited) {
		sb_add(sb, " no wait");
	} else if (get_num(trace_field(ev, "wait_ns"), &ns)) {
		trace_format_ns(ns, dur, sizeof(dur));
		sb_add(sb, " waited %s", dur);
	} else {
		sb_add(sb, " waited %s ns", fv(ev, "wait_ns"));
	}
	if (trace_field(ev, "netns"))
		sb_add(sb, " netns %s", fv(ev, "netns"));
}

static void text_generic(struct sbuf *sb, const struct trace_event *ev)
{
	unsigned int i;

	for (i = 0; i < ev->nfields; i++) {
		if (!strcmp(ev->f[i].key, "peer")) {
			char peer[TRACE_VAL_LEN];

			trace_format_peer(ev->f[i].val, peer, sizeof(peer));
			sb_add(sb, " peer %s", peer);
		} else {
			sb_add(sb, " %s %s", ev->f[i].key,
			       ev->f[i].val[0] ? ev->f[i].val : "-");
		}
	}
}

/**
 * trace_format_text() - one line for a person, without newline
 * @ev:  parsed event.
 * @buf: output.
 * @len: size of @buf (TRACE_TEXT_LEN is enough).
 *
 * "TIME EVENT details": the peer as IPv4 when IPv4-mapped, the class
 * word as class/weight/per-peer, the verdict as queue and splice, waits
 * in units.  Events not known here print their fields as "key value".
 */
void trace_format_text(const struct trace_event *ev, char *buf, size_t len)
{
	struct sbuf sb = { .buf = buf, .len = len };
	const char *name = ev->name;

	buf[0] = '\0';
	sb_add(&sb, "%-15s %-12s", ev->time[0] ? ev->time : "-",
	       trace_short_name(name));
	if (!strcmp(name, "ksmbd_sched_conn"))
		text_conn(&sb, ev);
	else if (!strcmp(name, "ksmbd_sched_req"))
		text_req(&sb, ev);
	else if (!strcmp(name, "ksmbd_sched_dispatch"))
		text_dispatch(&sb, ev);
	else
		text_generic(&sb, ev);
}

static bool is_bool_key(const char *key)
{
	return !strcmp(key, "per_peer") || !strcmp(key, "splice") ||
	       !strcmp(key, "waited");
}

/**
 * trace_format_json() - one JSON object for the event (no newline)
 * @ev: parsed event.
 * @w:  writer.
 *
 * {"time": SECONDS, "cpu", "pid", "task", "event": NAME, then each field:
 * numbers (decimal or 0x-hex) as numbers, per_peer/splice/waited as
 * booleans, the rest as strings}.  A hex "class" (a class word) becomes
 * "class_word" plus "class" (id), "weight" and "per_peer"; the "id" of
 * ksmbd_sched_conn, the same as "class", is left out.  A numeric "queue"
 * is named ("percpu", "unbound") as ksmbd_sched_dispatch prints it.
 * "netns" is the netns inode number.
 */
void trace_format_json(const struct trace_event *ev, struct json_writer *w)
{
	bool have_word = false;
	unsigned long long v;
	unsigned int i;

	json_start_object(w);
	if (ev->time[0]) {
		json_key(w, "time");
		json_number(w, ev->time);
	}
	if (ev->cpu >= 0) {
		json_key(w, "cpu");
		json_uint(w, ev->cpu);
	}
	if (ev->pid >= 0) {
		json_key(w, "pid");
		json_uint(w, ev->pid);
		json_key(w, "task");
		json_string(w, ev->comm);
	}
	json_key(w, "event");
	json_string(w, ev->name);
	for (i = 0; i < ev->nfields; i++) {
		const char *key = ev->f[i].key, *val = ev->f[i].val;

		if (!strcmp(key, "class") && !strncmp(val, "0x", 2) &&
		    get_num(val, &v)) {
			uint32_t word = v;

			json_key(w, "class_word");
			json_uint(w, word);
			json_key(w, "class");
			json_uint(w, KSMBD_SCHED_CLASS_ID_OF(word));
			json_key(w, "weight");
			json_uint(w, KSMBD_SCHED_CLASS_WEIGHT_OF(word) ?
				     KSMBD_SCHED_CLASS_WEIGHT_OF(word) : 1);
			json_key(w, "per_peer");
			json_bool(w, word & KSMBD_SCHED_CLASS_PER_PEER);
			have_word = true;
			continue;
		}
		if (have_word && (!strcmp(key, "id") ||
				  !strcmp(key, "weight") ||
				  !strcmp(key, "per_peer")))
			continue;
		json_key(w, key);
		if (!strcmp(key, "queue") && get_num(val, &v) &&
		    queue_name(v))
			json_string(w, queue_name(v));
		else if (is_bool_key(key) && get_num(val, &v))
			json_bool(w, v);
		else if (get_num(val, &v))
			json_uint(w, v);
		else
			json_string(w, val);
	}
	json_end_object(w);
}
