// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_tracefmt.c - decoded ksmbd trace events as JSON, fuzzed
 *
 * The JSON of every event must parse with a strict parser (python3's
 * json, UTF-8 strict, duplicate keys refused) whatever bytes its strings
 * hold: that is what the fuzz findings of the text parser broke.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format.h"

/* python3: every line one JSON object, strict UTF-8, no duplicate keys. */
#define STRICT_JSON \
	"python3 -c 'import json, sys\n" \
	"def nodup(p):\n" \
	"    k = [a for a, _ in p]\n" \
	"    assert len(k) == len(set(k)), k\n" \
	"    return dict(p)\n" \
	"n = 0\n" \
	"for l in sys.stdin.buffer:\n" \
	"    assert isinstance(json.loads(l.decode(\"utf-8\"), object_pairs_hook=nodup), dict)\n" \
	"    n += 1\n" \
	"print(n)'"

static void add_num(struct trace_event *ev, const char *name, uint64_t v)
{
	struct trace_field *f = &ev->f[ev->nfields++];

	snprintf(f->name, sizeof(f->name), "%s", name);
	f->num = v;
}

static void add_str(struct trace_event *ev, const char *name, const char *v)
{
	struct trace_field *f = &ev->f[ev->nfields++];

	snprintf(f->name, sizeof(f->name), "%s", name);
	f->is_str = true;
	snprintf(f->str, sizeof(f->str), "%s", v);
}

static struct trace_event conn_event(void)
{
	struct trace_event ev = { .name = "ksmbd_sched_conn", .comm = "cifsd",
				  .pid = 148, .cpu = 1, .ts = 11604000123ULL,
				  .ts_ns = true };

	add_num(&ev, "netns_ino", 4026531840U);
	add_str(&ev, "peer", "::ffff:127.0.0.1");
	add_num(&ev, "peer_port", 50998);
	add_num(&ev, "class_word", 0x80030002);
	add_str(&ev, "prog", "smb_prefix");
	return ev;
}

static char *json_of(const struct trace_event *ev)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_writer_t *w;

	assert_non_null(f);
	w = jsonw_new(f);
	trace_format_json(ev, w);
	jsonw_destroy(&w);
	fclose(f);
	return buf;
}

static void test_json(void **state)
{
	struct trace_event ev = conn_event();
	char *j;

	(void)state;
	j = json_of(&ev);
	assert_string_equal(j, "{\"time\":11.604000,\"ts\":11604000123,\"cpu\":1,\"pid\":148,\"task\":\"cifsd\",\"event\":\"ksmbd_sched_conn\",\"netns_ino\":4026531840,\"peer\":\"::ffff:127.0.0.1\",\"peer_port\":50998,\"class_word\":2147680258,\"class\":2,\"weight\":3,\"per_peer\":true,\"prog\":\"smb_prefix\"}\n");
	free(j);

	/* A request: command and verdict spelt out. */
	ev = (struct trace_event){ .name = "ksmbd_sched_req", .ts = 5,
				   .ts_ns = true };
	add_num(&ev, "command", 8);
	snprintf(ev.f[0].sym, sizeof(ev.f[0].sym), "READ");
	add_num(&ev, "verdict", 0x101);
	j = json_of(&ev);
	assert_non_null(strstr(j, "\"time\":0.000000,\"ts\":5,"));
	assert_non_null(strstr(j, "\"command\":8,\"cmd\":\"READ\",\"verdict\":257,\"queue\":\"unbound\",\"splice\":true}"));
	free(j);

	/* Symbols of the kernel's table: cmd from it, others as FIELD_sym. */
	ev = (struct trace_event){ .name = "ksmbd_sched_req", .ts = 5,
				   .ts_ns = true };
	add_num(&ev, "command", 99);
	snprintf(ev.f[0].sym, sizeof(ev.f[0].sym), "NEW_CMD");
	j = json_of(&ev);
	assert_non_null(strstr(j, "\"command\":99,\"cmd\":\"NEW_CMD\"}"));
	free(j);
	/* A command the kernel's table does not name. */
	ev.f[0].sym[0] = '\0';
	j = json_of(&ev);
	assert_non_null(strstr(j, "\"command\":99,\"cmd\":\"UNKNOWN\"}"));
	free(j);
	ev = (struct trace_event){ .name = "ksmbd_read_payload", .ts = 5,
				   .ts_ns = true };
	add_num(&ev, "path", 4);
	snprintf(ev.f[0].sym, sizeof(ev.f[0].sym), "signed");
	add_num(&ev, "src", 1);
	snprintf(ev.f[1].sym, sizeof(ev.f[1].sym), "copy");
	add_num(&ev, "src_sym", 7);	/* later, the same name: left out */
	j = json_of(&ev);
	assert_non_null(strstr(j, "\"path\":4,\"path_sym\":\"signed\",\"src\":1,\"src_sym\":\"copy\"}"));
	free(j);
}

/* Fuzz findings: each of these once gave invalid JSON. */
static void test_findings(void **state)
{
	struct trace_event ev = conn_event();
	char *j;

	(void)state;
	/* A task name that is not UTF-8, and control bytes. */
	snprintf(ev.comm, sizeof(ev.comm), "k\xff\xc3(\x01\x1b[m");
	j = json_of(&ev);
	assert_non_null(strstr(j, "\"task\":\"k??(??[m\""));
	free(j);
	/* Duplicate keys: a field named like a spelt-out one. */
	ev = conn_event();
	add_num(&ev, "class", 99);
	add_str(&ev, "weight", "x");
	add_str(&ev, "event", "other");
	j = json_of(&ev);
	assert_non_null(strstr(j, "\"class\":2,"));
	assert_null(strstr(j, "\"class\":99"));
	assert_null(strstr(j, "other"));
	free(j);
	/* An integer trace clock: no "time", the raw count as "ts". */
	ev = conn_event();
	ev.ts_ns = false;
	ev.ts = 42;
	j = json_of(&ev);
	assert_true(!strncmp(j, "{\"ts\":42,", 9));
	free(j);
}

/* Random bytes in every string: the output stays strict JSON. */
static void test_fuzz(void **state)
{
	FILE *p = popen(STRICT_JSON " > fuzz.out", "w");
	struct trace_event ev;
	json_writer_t *w;
	unsigned int i, k, n = 2000;
	char got[32] = "";
	FILE *r;

	(void)state;
	assert_non_null(p);
	srand(9);
	for (i = 0; i < n; i++) {
		ev = conn_event();
		ev.ts = ((uint64_t)rand() << 31) ^ rand();
		ev.ts_ns = rand() & 1;
		for (k = 0; k < sizeof(ev.comm) - 1; k++)
			ev.comm[k] = rand() % 255 + 1;
		for (k = 0; k < sizeof(ev.f[1].str) - 1; k++)
			ev.f[1].str[k] = rand() % 255 + 1;
		snprintf(ev.f[4].name, sizeof(ev.f[4].name), "%s",
			 rand() & 1 ? "prog" : "peer");
		w = jsonw_new(p);
		trace_format_json(&ev, w);
		jsonw_destroy(&w);
	}
	assert_int_equal(pclose(p), 0);
	r = fopen("fuzz.out", "r");
	assert_non_null(r);
	assert_non_null(fgets(got, sizeof(got), r));
	fclose(r);
	remove("fuzz.out");
	assert_int_equal(atoi(got), n);
}

static void test_text(void **state)
{
	struct trace_event ev = conn_event();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	snprintf(ev.comm, sizeof(ev.comm), "k\x01");
	add_str(&ev, "empty", "");
	trace_format_text(&ev, f);
	fclose(f);
	assert_string_equal(buf, "11.604000 [001] k?-148 ksmbd_sched_conn: netns_ino=4026531840 peer=::ffff:127.0.0.1 peer_port=50998 class_word=2147680258 class=2 weight=3 per_peer=1 prog=smb_prefix empty=-\n");
	free(buf);
}

static void test_helpers(void **state)
{
	char buf[64];

	(void)state;
	trace_format_ns(0, buf, sizeof(buf));
	assert_string_equal(buf, "0 ns");
	trace_format_ns(999, buf, sizeof(buf));
	assert_string_equal(buf, "999 ns");
	trace_format_ns(1000, buf, sizeof(buf));
	assert_string_equal(buf, "1.0 us");
	trace_format_ns(1024000, buf, sizeof(buf));
	assert_string_equal(buf, "1.0 ms");
	trace_format_ns(16777216000ULL, buf, sizeof(buf));
	assert_string_equal(buf, "16.78 s");
	snprintf(buf, sizeof(buf), "ok \xe2\x82\xac \xed\xa0\x80 \xc0\xaf");
	text_sanitize(buf);
	assert_string_equal(buf, "ok \xe2\x82\xac ??? ??");
}

/*
 * The fixtures name fields as the kernel's events do.  The decoder takes
 * every field from the event's format at run time, so a fixture is only
 * as good as its names: each one must be a field of the same event in
 * TP_STRUCT__entry() of ksmbd_sched_trace.h (__field, __array, __string),
 * and so must the packed words format.c spells out.
 */
static bool kernel_has_field(const char *event, const char *field)
{
	FILE *f = fopen(KSMBD_TRACE_H, "r");
	char line[256], head[96], name[64];
	bool in = false, found = false;

	assert_non_null(f);
	snprintf(head, sizeof(head), "TRACE_EVENT(%s,", event);
	while (!found && fgets(line, sizeof(line), f)) {
		const char *p = line + strspn(line, " \t");

		if (!strncmp(p, "TRACE_EVENT(", 12))
			in = !strncmp(p, head, strlen(head));
		else if (in && strstr(p, "TP_fast_assign"))
			in = false;
		else if (in && (sscanf(p, "__field(%*[^,], %63[^)])", name) == 1 ||
				sscanf(p, "__array(%*[^,], %63[^,],", name) == 1 ||
				sscanf(p, "__string(%63[^,],", name) == 1))
			found = !strcmp(name, field);
	}
	fclose(f);
	return found;
}

static void test_fixtures_match_kernel(void **state)
{
	static const char *const spelt[][2] = {
		{ "ksmbd_sched_conn", "class_word" },
		{ "ksmbd_sched_req", "class_word" },
		{ "ksmbd_sched_req", "command" },
		{ "ksmbd_sched_req", "verdict" },
		{ "ksmbd_sched_dispatch", "class_word" },
		{ "ksmbd_sched_dispatch", "command" },
		{ "ksmbd_sched_dispatch", "verdict" },
		{ "ksmbd_read_payload", "verdict" },
	};
	struct trace_event ev = conn_event();
	unsigned int i;

	(void)state;
	for (i = 0; i < ev.nfields; i++)
		assert_true(kernel_has_field(ev.name, ev.f[i].name));
	for (i = 0; i < sizeof(spelt) / sizeof(spelt[0]); i++)
		assert_true(kernel_has_field(spelt[i][0], spelt[i][1]));
	/* The parser finds nothing that is not there. */
	assert_false(kernel_has_field("ksmbd_sched_conn", "command"));
	assert_false(kernel_has_field("ksmbd_sched_nosuch", "netns_ino"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_findings),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_helpers),
		cmocka_unit_test(test_fixtures_match_kernel),
	};

	return cmocka_run_group_tests_name("tracefmt", tests, NULL, NULL);
}
