// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * tracefmt.c - a decoded ksmbd trace event as JSON, and durations as text
 *
 * One JSON object per event: "time" (seconds, when the trace clock counts
 * nanoseconds) and "ts" (the raw clock), "cpu", "pid", "task", "event",
 * then every field of the event's format under its own name, integers as
 * numbers and strings as strings.  Words the kernel packs are spelt out
 * beside them: class_word as "class", "weight", "per_peer"; command as
 * "cmd"; verdict as "queue" and "splice".  A name is written once only
 * (the first wins), and every string is sanitized to valid UTF-8, so
 * the output is valid JSON whatever bytes the task names hold.
 */
#include <stdio.h>
#include <string.h>

#include <linux/ksmbd_sched.h>

#include "text.h"
#include "tracefmt.h"

/* SMB2 command names (MS-SMB2 2.2.1.2), as the tracepoints print them. */
static const char *const smb2_cmds[] = {
	"NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT",
	"TREE_DISCONNECT", "CREATE", "CLOSE", "FLUSH", "READ", "WRITE",
	"LOCK", "IOCTL", "CANCEL", "ECHO", "QUERY_DIRECTORY",
	"CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO", "OPLOCK_BREAK",
};

/** trace_cmd_name() - "READ" for 8; "UNKNOWN" beyond the table */
const char *trace_cmd_name(uint64_t cmd)
{
	return cmd < sizeof(smb2_cmds) / sizeof(smb2_cmds[0]) ?
	       smb2_cmds[cmd] : "UNKNOWN";
}

/* Member names written so far in one object. */
struct seen {
	const char *names[3 * TRACE_MAX_FIELDS + 8];
	unsigned int n;
};

static bool first_time(struct seen *s, const char *name)
{
	unsigned int i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			return false;
	if (s->n < sizeof(s->names) / sizeof(s->names[0]))
		s->names[s->n++] = name;
	return true;
}

static void num_field(json_writer_t *w, struct seen *s, const char *name,
		      uint64_t v)
{
	if (first_time(s, name))
		jsonw_uint_field(w, name, v);
}

static void bool_field(json_writer_t *w, struct seen *s, const char *name,
		       bool v)
{
	if (first_time(s, name))
		jsonw_bool_field(w, name, v);
}

static void str_field(json_writer_t *w, struct seen *s, const char *name,
		      const char *v)
{
	if (first_time(s, name))
		json_text_field(w, name, v);
}

/* The spelt-out form of a packed field, after the field itself. */
static void derived(json_writer_t *w, struct seen *s,
		    const struct trace_field *f)
{
	uint32_t v = f->num;

	if (!strcmp(f->name, "class_word")) {
		num_field(w, s, "class", KSMBD_SCHED_CLASS_ID_OF(v));
		num_field(w, s, "weight", KSMBD_SCHED_CLASS_WEIGHT_OF(v) ?: 1);
		bool_field(w, s, "per_peer", v & KSMBD_SCHED_CLASS_PER_PEER);
	} else if (!strcmp(f->name, "command")) {
		str_field(w, s, "cmd", trace_cmd_name(f->num));
	} else if (!strcmp(f->name, "verdict")) {
		v &= KSMBD_SCHED_VERDICT_QUEUE_MASK;
		str_field(w, s, "queue", v == KSMBD_SCHED_QUEUE_UNBOUND ?
			  "unbound" : v == KSMBD_SCHED_QUEUE_PERCPU ?
			  "percpu" : "invalid");
		bool_field(w, s, "splice",
			   f->num & KSMBD_SCHED_VERDICT_SPLICE);
	}
}

/**
 * trace_format_time() - the timestamp as text: "SECONDS.MICROS" for a
 * nanosecond clock, else the raw count
 * @ev:  the event.
 * @buf: output.
 * @len: its size (32 is enough).
 */
void trace_format_time(const struct trace_event *ev, char *buf, size_t len)
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
	struct seen s = { .n = 0 };
	char time[32];
	unsigned int i;

	jsonw_start_object(w);
	if (ev->ts_ns) {
		trace_format_time(ev, time, sizeof(time));
		/* Digits, a dot, six digits: a JSON number as it stands. */
		if (first_time(&s, "time")) {
			jsonw_name(w, "time");
			jsonw_printf(w, "%s", time);
		}
	}
	num_field(w, &s, "ts", ev->ts);
	num_field(w, &s, "cpu", ev->cpu);
	num_field(w, &s, "pid", ev->pid);
	str_field(w, &s, "task", ev->comm);
	str_field(w, &s, "event", ev->name);
	for (i = 0; i < ev->nfields; i++) {
		const struct trace_field *f = &ev->f[i];

		if (f->is_str) {
			str_field(w, &s, f->name, f->str);
		} else {
			num_field(w, &s, f->name, f->num);
			derived(w, &s, f);
		}
	}
	jsonw_end_object(w);
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
