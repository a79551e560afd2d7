// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_tracefmt.c - decoding trace_pipe lines of the ksmbd tracepoints
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

#include "tracefmt.h"

static const char conn_line[] =
	"ksmbd_sched_conn: netns=4026531840 peer=::ffff:127.0.0.1 port=50998 class=0x00030002 id=2 weight=3 per_peer=0 prog=smb_prefix";
static const char req_line[] =
	"ksmbd_sched_req: peer=::ffff:127.0.0.1 class=0x00030002 cmd=NEGOTIATE flags= len=0 off=0 credits=0 verdict=0x0 queue=0 splice=0";
static const char dispatch_line[] =
	"ksmbd_sched_dispatch: netns=4026531840 class=2 client=2/:: cmd=READ queue=percpu bytes=4194304 waited=1 wait_ns=0";
static const char read_line[] =
	"     ksmbd:51024-148     [001] ..... 11.604000: ksmbd_sched_req: peer=fe80::1 class=0x80010005 cmd=READ flags=SIGNED|COMPOUND len=1048576 off=4096 credits=16 verdict=0x101 queue=1 splice=1\n";

static void text_of(const char *line, char *buf, size_t len)
{
	struct trace_event ev;

	assert_int_equal(trace_line_parse(line, &ev), 0);
	trace_format_text(&ev, buf, len);
}

static char *json_of(const char *line)
{
	struct trace_event ev;
	struct json_writer w;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(trace_line_parse(line, &ev), 0);
	json_init(&w, f, false);
	trace_format_json(&ev, &w);
	fclose(f);
	return buf;
}

static void test_parse_fields(void **state)
{
	struct trace_event ev;

	(void)state;
	assert_int_equal(trace_line_parse(conn_line, &ev), 0);
	assert_string_equal(ev.name, "ksmbd_sched_conn");
	assert_string_equal(ev.time, "");
	assert_int_equal(ev.pid, -1);
	assert_int_equal(ev.nfields, 8);
	assert_string_equal(trace_field(&ev, "peer"), "::ffff:127.0.0.1");
	assert_string_equal(trace_field(&ev, "class"), "0x00030002");
	assert_string_equal(trace_field(&ev, "prog"), "smb_prefix");
	assert_null(trace_field(&ev, "bogus"));

	assert_int_equal(trace_line_parse(req_line, &ev), 0);
	assert_string_equal(trace_field(&ev, "flags"), "");
	assert_string_equal(trace_field(&ev, "verdict"), "0x0");

	assert_int_equal(trace_line_parse(read_line, &ev), 0);
	assert_string_equal(ev.name, "ksmbd_sched_req");
	assert_string_equal(ev.time, "11.604000");
	assert_string_equal(ev.comm, "ksmbd:51024");
	assert_int_equal(ev.pid, 148);
	assert_int_equal(ev.cpu, 1);
	assert_string_equal(trace_field(&ev, "splice"), "1");

	/* Header without the irq-info flags column; task with '-' */
	assert_int_equal(trace_line_parse("  kworker/u4:1-a-9 [000] 5.000001: ksmbd_read_payload: path=splice len=65536", &ev), 0);
	assert_string_equal(ev.comm, "kworker/u4:1-a");
	assert_int_equal(ev.pid, 9);
	assert_string_equal(ev.time, "5.000001");
	assert_string_equal(trace_field(&ev, "path"), "splice");

	/* Not events. */
	assert_int_equal(trace_line_parse("CPU:1 [LOST 3 EVENTS]", &ev), -1 * 22);
	assert_int_equal(trace_line_parse("", &ev), -22);
	assert_int_equal(trace_line_parse("garbage without colon", &ev), -22);
}

static void test_text(void **state)
{
	char buf[TRACE_TEXT_LEN];

	(void)state;
	text_of(conn_line, buf, sizeof(buf));
	assert_string_equal(buf, "-               conn         peer 127.0.0.1 port 50998 -> class 2 weight 3 prog smb_prefix netns 4026531840");
	text_of(req_line, buf, sizeof(buf));
	assert_string_equal(buf, "-               req          peer 127.0.0.1 class 2 weight 3 NEGOTIATE len 0 off 0 credits 0 -> verdict 0x0: queue percpu, splice no");
	text_of(dispatch_line, buf, sizeof(buf));
	assert_string_equal(buf, "-               dispatch     class 2 client 2 READ queue percpu bytes 4194304 waited 0 ns netns 4026531840");
	text_of(read_line, buf, sizeof(buf));
	assert_string_equal(buf, "11.604000       req          peer fe80::1 class 5 weight 1 per-peer READ len 1048576 off 4096 credits 16 flags SIGNED|COMPOUND -> verdict 0x101: queue unbound, splice yes");
	text_of("ksmbd_sched_dispatch: netns=1 class=7 client=7/::ffff:10.1.2.3 cmd=WRITE queue=unbound bytes=65536 waited=1 wait_ns=1234567",
		buf, sizeof(buf));
	assert_string_equal(buf, "-               dispatch     class 7 client 7/10.1.2.3 WRITE queue unbound bytes 65536 waited 1.2 ms netns 1");
	text_of("ksmbd_sched_dispatch: netns=1 class=0 client=0/:: cmd=CLOSE queue=percpu bytes=0 waited=0 wait_ns=0",
		buf, sizeof(buf));
	assert_non_null(strstr(buf, " no wait "));
	/* A verdict with an invalid queue says so. */
	text_of("ksmbd_sched_req: peer=::1 class=0x00000000 cmd=READ flags= len=1 off=0 credits=1 verdict=0x7 queue=7 splice=0",
		buf, sizeof(buf));
	assert_non_null(strstr(buf, "queue 7 (invalid: runs percpu)"));
	/* Unknown events: generic "key value". */
	text_of("ksmbd_read_payload: path=splice len=1048576", buf,
		sizeof(buf));
	assert_string_equal(buf, "-               read_payload path splice len 1048576");
}

static void test_json(void **state)
{
	char *j;

	(void)state;
	j = json_of(conn_line);
	assert_string_equal(j, "{\"event\":\"ksmbd_sched_conn\",\"netns\":4026531840,\"peer\":\"::ffff:127.0.0.1\",\"port\":50998,\"class_word\":196610,\"class\":2,\"weight\":3,\"per_peer\":false,\"prog\":\"smb_prefix\"}");
	free(j);
	j = json_of(req_line);
	assert_string_equal(j, "{\"event\":\"ksmbd_sched_req\",\"peer\":\"::ffff:127.0.0.1\",\"class_word\":196610,\"class\":2,\"weight\":3,\"per_peer\":false,\"cmd\":\"NEGOTIATE\",\"flags\":\"\",\"len\":0,\"off\":0,\"credits\":0,\"verdict\":0,\"queue\":\"percpu\",\"splice\":false}");
	free(j);
	j = json_of(dispatch_line);
	assert_string_equal(j, "{\"event\":\"ksmbd_sched_dispatch\",\"netns\":4026531840,\"class\":2,\"client\":\"2/::\",\"cmd\":\"READ\",\"queue\":\"percpu\",\"bytes\":4194304,\"waited\":true,\"wait_ns\":0}");
	free(j);
	j = json_of(read_line);
	assert_string_equal(j, "{\"time\":11.604000,\"cpu\":1,\"pid\":148,\"task\":\"ksmbd:51024\",\"event\":\"ksmbd_sched_req\",\"peer\":\"fe80::1\",\"class_word\":2147549189,\"class\":5,\"weight\":1,\"per_peer\":true,\"cmd\":\"READ\",\"flags\":\"SIGNED|COMPOUND\",\"len\":1048576,\"off\":4096,\"credits\":16,\"verdict\":257,\"queue\":\"unbound\",\"splice\":true}");
	free(j);
	j = json_of("ksmbd_read_payload: path=copy len=010 note=a\"b");
	/* "010" is not a decimal number: kept as a string; quotes escaped */
	assert_string_equal(j, "{\"event\":\"ksmbd_read_payload\",\"path\":\"copy\",\"len\":\"010\",\"note\":\"a\\\"b\"}");
	free(j);
}

static void test_helpers(void **state)
{
	char buf[64];

	(void)state;
	trace_format_peer("::ffff:127.0.0.1", buf, sizeof(buf));
	assert_string_equal(buf, "127.0.0.1");
	trace_format_peer("::ffff:7f00:1", buf, sizeof(buf));
	assert_string_equal(buf, "::ffff:7f00:1");
	trace_format_peer("2001:db8::1", buf, sizeof(buf));
	assert_string_equal(buf, "2001:db8::1");
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
	assert_string_equal(trace_short_name("ksmbd_sched_req"), "req");
	assert_string_equal(trace_short_name("ksmbd_read_payload"),
			    "read_payload");
	assert_string_equal(trace_short_name("other"), "other");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_helpers),
	};

	return cmocka_run_group_tests_name("tracefmt", tests, NULL, NULL);
}
