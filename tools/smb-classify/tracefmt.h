/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * tracefmt.h - decoding of ksmbd trace events from trace_pipe
 *
 * Pure functions, no libbpf: the unit tests link tracefmt.o directly.
 */
#ifndef SMB_CLASSIFY_TRACEFMT_H
#define SMB_CLASSIFY_TRACEFMT_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"

#define TRACE_MAX_FIELDS	24
#define TRACE_KEY_LEN		32
#define TRACE_VAL_LEN		96

/* Room for trace_format_text() of any event. */
#define TRACE_TEXT_LEN		1024

struct trace_field {
	char key[TRACE_KEY_LEN];
	char val[TRACE_VAL_LEN];
};

/**
 * struct trace_event - one line of trace_pipe, split
 * @comm:    task, "" without a header.
 * @pid:     its pid, -1 without a header.
 * @cpu:     CPU, -1 without a header.
 * @time:    timestamp as printed ("1234.567890"), "" without a header.
 * @name:    event name, e.g. "ksmbd_sched_req".
 * @nfields: number of @f.
 * @f:       its "key=value" fields in order (a word without '=' is
 *           appended to the previous value).
 */
struct trace_event {
	char comm[32];
	int pid;
	int cpu;
	char time[32];
	char name[64];
	unsigned int nfields;
	struct trace_field f[TRACE_MAX_FIELDS];
};

int trace_line_parse(const char *line, struct trace_event *ev);
const char *trace_field(const struct trace_event *ev, const char *key);
const char *trace_short_name(const char *name);
void trace_format_peer(const char *peer, char *buf, size_t len);
void trace_format_ns(unsigned long long ns, char *buf, size_t len);
void trace_format_text(const struct trace_event *ev, char *buf, size_t len);
void trace_format_json(const struct trace_event *ev, struct json_writer *w);

#endif /* SMB_CLASSIFY_TRACEFMT_H */
