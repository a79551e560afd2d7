// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * format.c - what smb-classify prints: text made safe (one line, valid
 * UTF-8), JSON members, a decoded ksmbd trace event, durations
 *
 * Task names, program names and user input reach the output as the
 * kernel or the user wrote them: any bytes.  bpftool's JSON writer
 * escapes quotes, backslashes and \t\n\r\f\b only, so everything else
 * that is not a printable character in valid UTF-8 is replaced here by
 * '?' (one byte for one byte: lengths and column widths stay).
 *
 * One JSON object per event: "time" (seconds, when the trace clock counts
 * nanoseconds) and "ts" (the raw clock), "cpu", "pid", "task", "event",
 * then every field of the event's format under its own name, integers as
 * numbers and strings as strings.  Words the kernel packs are spelt out
 * beside them: class_word as "class", "weight", "per_peer" (and
 * "prefix6" when PEER6 is set); command as "cmd"; verdict as "queue"
 * and "splice"; any other field the kernel prints through a symbol
 * table as "FIELD_sym" (ksmbd_read_payload's "path_sym", the reason, and
 * "src_sym").  A name is written once only
 * (the first wins), and every string is sanitized to valid UTF-8, so
 * the output is valid JSON whatever bytes the task names hold.
 */
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "ksmbd_sched_abi.h"

#include "format.h"

/**
 * text_sanitize() - make @s one line of valid UTF-8, in place
 * @s: NUL-terminated bytes; control characters (below 0x20, 0x7f) and
 *     bytes that do not start a valid UTF-8 sequence (RFC 3629) become '?'.
 *
 * glibc's mbrtowc() in the C.UTF-8 locale (of this thread, for this call)
 * decodes the sequences; it rejects what RFC 3629 does (overlong forms,
 * surrogates) but code points above U+10FFFF, checked here.  Without
 * that locale every non-ASCII byte becomes '?'.
 */
void text_sanitize(char *s)
{
	static locale_t utf8;
	size_t n, len = strlen(s);
	mbstate_t st;
	locale_t old;
	wchar_t wc;

	if (!utf8)
		utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	old = uselocale(utf8);
	for (; *s; s += n, len -= n) {
		memset(&st, 0, sizeof(st));
		n = mbrtowc(&wc, s, len, &st);
		if (n > MB_LEN_MAX || wc < 0x20 || wc == 0x7f || wc > 0x10ffff) {
			*s = '?';
			n = 1;
		}
	}
	uselocale(old);
}

/**
 * json_uint_or_null() - a number member, or null for a value not known
 * @w:     writer.
 * @key:   member name.
 * @known: @v holds a value (a map is pinned, a threshold is not "off",
 *         a class has dispatched something to average).
 * @v:     the value.
 */
void json_uint_or_null(json_writer_t *w, const char *key, bool known,
		       uint64_t v)
{
	if (known)
		jsonw_uint_field(w, key, v);
	else
		jsonw_null_field(w, key);
}

/**
 * json_text_field() - a string member whatever bytes @s holds
 * @w:   writer.
 * @key: member name (a literal of ours).
 * @s:   value; a sanitized copy is written (text_sanitize()).
 */
void json_text_field(json_writer_t *w, const char *key, const char *s)
{
	char *copy = strdup(s);

	if (copy)
		text_sanitize(copy);
	jsonw_string_field(w, key, copy ? copy : "");
	free(copy);
}

/*
 * Where one event goes: a JSON writer, or a line of "name=value" words.
 * Either way a name is written once only (the first wins).
 */
struct out {
	json_writer_t *w;
	FILE *f;
	const char *names[3 * TRACE_MAX_FIELDS + 8];
	unsigned int n;
	char sym_names[TRACE_MAX_FIELDS][sizeof(((struct trace_field *)0)->name) + 4];
	unsigned int nsym;
};

static bool first_time(struct out *o, const char *name)
{
	unsigned int i;

	for (i = 0; i < o->n; i++)
		if (!strcmp(o->names[i], name))
			return false;
	if (o->n < sizeof(o->names) / sizeof(o->names[0]))
		o->names[o->n++] = name;
	return true;
}

static void put_num(struct out *o, const char *name, uint64_t v, bool is_bool)
{
	if (!first_time(o, name))
		return;
	if (!o->w)
		fprintf(o->f, " %s=%llu", name, (unsigned long long)v);
	else if (is_bool)
		jsonw_bool_field(o->w, name, v);
	else
		jsonw_uint_field(o->w, name, v);
}

static void put_str(struct out *o, const char *name, const char *v)
{
	char buf[sizeof(((struct trace_field *)0)->str) + 32];

	if (!first_time(o, name))
		return;
	if (o->w) {
		json_text_field(o->w, name, v);
		return;
	}
	snprintf(buf, sizeof(buf), "%s", *v ? v : "-");
	text_sanitize(buf);
	fprintf(o->f, " %s=%s", name, buf);
}

/* The spelt-out form of a packed field, after the field itself. */
static void derived(struct out *o, const struct trace_field *f)
{
	uint32_t v = f->num, peer6;

	if (!strcmp(f->name, "class_word")) {
		put_num(o, "class", KSMBD_SCHED_CLASS_ID_OF(v), false);
		put_num(o, "weight", KSMBD_SCHED_CLASS_WEIGHT_OF(v) ?: 1, false);
		put_num(o, "per_peer", !!(v & KSMBD_SCHED_CLASS_PER_PEER), true);
		/* PEER6 as the prefix length it keys, clamped as the kernel. */
		peer6 = KSMBD_SCHED_CLASS_PEER6_OF(v);
		if (peer6 > KSMBD_SCHED_CLASS_PEER6_MAX)
			peer6 = KSMBD_SCHED_CLASS_PEER6_MAX;
		if (peer6 && (v & KSMBD_SCHED_CLASS_PER_PEER))
			put_num(o, "prefix6", 4 * peer6, false);
	} else if (!strcmp(f->name, "command")) {
		/* The name of the kernel's table (show_smb2_command()). */
		put_str(o, "cmd", f->sym[0] ? f->sym : "UNKNOWN");
	} else if (f->sym[0] && o->nsym < TRACE_MAX_FIELDS) {
		char *name = o->sym_names[o->nsym++];

		snprintf(name, sizeof(o->sym_names[0]), "%s_sym", f->name);
		put_str(o, name, f->sym);
	} else if (!strcmp(f->name, "verdict")) {
		v &= KSMBD_SCHED_VERDICT_QUEUE_MASK;
		put_str(o, "queue", v == KSMBD_SCHED_QUEUE_UNBOUND ?
			"unbound" : v == KSMBD_SCHED_QUEUE_PERCPU ?
			"percpu" : "invalid");
		put_num(o, "splice", !!(f->num & KSMBD_SCHED_VERDICT_SPLICE),
			true);
	}
}

static void put_fields(struct out *o, const struct trace_event *ev)
{
	unsigned int i;

	for (i = 0; i < ev->nfields; i++) {
		if (ev->f[i].is_str) {
			put_str(o, ev->f[i].name, ev->f[i].str);
		} else {
			put_num(o, ev->f[i].name, ev->f[i].num, false);
			derived(o, &ev->f[i]);
		}
	}
}

/**
 * trace_format_time() - the timestamp as text: "SECONDS.MICROS" for a
 * nanosecond clock, else the raw count
 * @ev:  the event.
 * @buf: output.
 * @len: its size (32 is enough).
 */
static void trace_format_time(const struct trace_event *ev,
			      char *buf, size_t len)
{
	if (ev->ts_ns)
		snprintf(buf, len, "%llu.%06llu",
			 (unsigned long long)(ev->ts / 1000000000),
			 (unsigned long long)(ev->ts % 1000000000 / 1000));
	else
		snprintf(buf, len, "%llu", (unsigned long long)ev->ts);
}

/**
 * trace_format_json() - one JSON object for the event (no newline)
 * @ev: the event.
 * @w:  writer.
 */
void trace_format_json(const struct trace_event *ev, json_writer_t *w)
{
	struct out o = { .w = w };
	char time[32];

	jsonw_start_object(w);
	if (ev->ts_ns) {
		/* Digits, a dot, six digits: a JSON number as it stands. */
		trace_format_time(ev, time, sizeof(time));
		first_time(&o, "time");
		jsonw_name(w, "time");
		jsonw_printf(w, "%s", time);
	}
	put_num(&o, "ts", ev->ts, false);
	put_num(&o, "cpu", ev->cpu, false);
	put_num(&o, "pid", ev->pid, false);
	put_str(&o, "task", ev->comm);
	put_str(&o, "event", ev->name);
	put_fields(&o, ev);
	jsonw_end_object(w);
}

/**
 * trace_format_text() - one line for the event, with its newline
 * @ev: the event.
 * @f:  stream.
 *
 * "TIME [CPU] TASK-PID EVENT: name=value ...", the same fields as the
 * JSON, strings sanitized, an empty one as "-".
 */
void trace_format_text(const struct trace_event *ev, FILE *f)
{
	struct out o = { .f = f };
	char time[32], comm[sizeof(ev->comm)];

	trace_format_time(ev, time, sizeof(time));
	snprintf(comm, sizeof(comm), "%s", ev->comm);
	text_sanitize(comm);
	fprintf(f, "%s [%03d] %s-%d %s:", time, ev->cpu, comm, ev->pid,
		ev->name);
	put_fields(&o, ev);
	fputc('\n', f);
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
