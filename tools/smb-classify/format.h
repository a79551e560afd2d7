/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * format.h - what smb-classify prints: text made safe (one line, valid
 * UTF-8), JSON members, a decoded ksmbd trace event, durations
 *
 * Pure functions, no libbpf or libtraceevent: the unit tests link
 * format.o directly.  trace.c fills struct trace_event from the binary
 * record through libtraceevent; nothing here parses trace text.
 */
#ifndef SMB_CLASSIFY_FORMAT_H
#define SMB_CLASSIFY_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json_writer.h"

#define TRACE_MAX_FIELDS	24

/**
 * struct trace_field - one field of the event's format
 * @name:   field name as in the format file ("class_word", "peer").
 * @is_str: a string (or an address, already as text) in @str; else @num.
 * @num:    the value of an integer field.
 * @str:    the text of a string field, any bytes.
 * @sym:    the name of @num in the symbol table the kernel prints the
 *          field through (__print_symbolic), or empty.
 */
struct trace_field {
	char name[32];
	bool is_str;
	uint64_t num;
	char str[64];
	char sym[32];
};

/**
 * struct trace_event - one record of the ring buffer, decoded
 * @name:    event name, e.g. "ksmbd_sched_req".
 * @comm:    task name, any bytes ("<...>" when unknown).
 * @pid:     its pid.
 * @cpu:     the CPU.
 * @ts:      timestamp in the units of the instance's trace clock.
 * @ts_ns:   that clock counts nanoseconds (local, global, mono, ...);
 *           false for counter, x86-tsc and the like.
 * @nfields: number of @f.
 * @f:       the fields, in format order.
 */
struct trace_event {
	char name[64];
	char comm[32];
	int pid;
	int cpu;
	uint64_t ts;
	bool ts_ns;
	unsigned int nfields;
	struct trace_field f[TRACE_MAX_FIELDS];
};

void text_sanitize(char *s);
void json_text_field(json_writer_t *w, const char *key, const char *s);
void json_uint_or_null(json_writer_t *w, const char *key, bool known,
		       uint64_t v);
void trace_format_json(const struct trace_event *ev, json_writer_t *w);
void trace_format_text(const struct trace_event *ev, FILE *f);
void trace_format_ns(unsigned long long ns, char *buf, size_t len);

#endif /* SMB_CLASSIFY_FORMAT_H */
