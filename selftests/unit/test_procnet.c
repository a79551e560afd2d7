// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_procnet.c - parsing /proc/net/ksmbd_sched (its class_qos lines
 * too), ksmbd_sched_clients, a trace buffer's per-CPU stats and the p99
 * estimate
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "procnet.h"

#define Z25 "0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0"

static const char proc_attached[] =
	"attached: 1\n"
	"name: smb_prefix\n"
	"link_id: 7\n"
	"max_inflight: 2\n"
	"budget: adaptive\n"
	"budget_min: 4\n"
	"budget_max: 32\n"
	"budget_base_ns: 15036350\n"
	"budget_changes: 33\n"
	"inflight: 1\n"
	"queued: 5\n"
	"clients: 3\n"
	"alloc_fail: 4\n"
	"class: 0 dispatched 8 bypassed 13 bytes 3145728 wait_ns 12000 hist 8," Z25 "\n"
	"class: 2 dispatched 100 bypassed 0 bytes 0 wait_ns 18446744073709551615 hist 0,90,9,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1\n"
	"serves: 1\n"
	"netns_ino: 4026531840\n"
	"conns_classified: 2\n"
	"reqs_classified: 21\n"
	"class_clamped: 0\n"
	"verdict_clamped: 9\n"
	"some_future_key: 1\n"
	"payloads: 3\n"
	"payload_pages: 12 order 0\n"
	"a line of another shape\n"
	"class: 4 dispatched 1 bypassed 0 bytes 0 wait_ns 0 hist 0,0," Z25 ",0,0\n";

static const char proc_detached[] =
	"attached: 0\nname: -\nlink_id: 0\nserves: 0\nnetns_ino: 5\n"
	"conns_classified: 0\nreqs_classified: 0\nclass_clamped: 0\n"
	"verdict_clamped: 0\n";

static int parse_text(const char *text, struct ksched_state *st)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int err;

	assert_non_null(f);
	err = ksched_parse(f, st);
	fclose(f);
	return err;
}

static void test_parse_attached(void **state)
{
	struct ksched_state st;
	const struct ksched_class *c;

	(void)state;
	assert_int_equal(parse_text(proc_attached, &st), 0);
	assert_true(st.attached);
	assert_string_equal(st.name, "smb_prefix");
	assert_int_equal(st.link_id, 7);
	assert_true(st.serves);
	assert_true(st.has_disp);
	assert_int_equal(st.max_inflight, 2);
	assert_int_equal(st.budget_min, 4);
	assert_int_equal(st.budget_max, 32);
	assert_int_equal(st.budget_base_ns, 15036350);
	assert_int_equal(st.budget_changes, 33);
	assert_int_equal(st.inflight, 1);
	assert_int_equal(st.queued, 5);
	assert_int_equal(st.clients, 3);
	assert_int_equal(st.alloc_fail, 4);
	assert_int_equal(st.conns_classified, 2);
	assert_int_equal(st.reqs_classified, 21);
	assert_int_equal(st.verdict_clamped, 9);
	/* The 29-bucket line of a later kernel is read; unknown lines kept. */
	assert_int_equal(st.nclasses, 3);
	assert_int_equal(st.classes[2].nhist, 29);
	assert_int_equal(st.skipped, 2);
	assert_true(st.has_held);
	assert_int_equal(st.payloads, 3);
	assert_int_equal(st.payload_pages, 0);	/* "12 order 0": not one number */
	assert_string_equal(st.kv[st.nkv - 1].key, "payload_pages");
	assert_string_equal(st.kv[st.nkv - 1].val, "12 order 0");
	c = &st.classes[0];
	assert_int_equal(c->id, 0);
	assert_int_equal(c->dispatched, 8);
	assert_int_equal(c->bypassed, 13);
	assert_int_equal(c->bytes, 3145728);
	assert_int_equal(c->wait_ns, 12000);
	assert_int_equal(c->nhist, KSCHED_HIST_BUCKETS);
	assert_int_equal(c->hist[0], 8);
	assert_int_equal(ksched_class_mean_ns(c), 1500);
	c = &st.classes[1];
	assert_int_equal(c->id, 2);
	assert_true(c->wait_ns == UINT64_MAX);
	assert_int_equal(c->hist[1], 90);
	assert_int_equal(c->hist[25], 1);
	ksched_free(&st);
	assert_null(st.classes);
	assert_int_equal(st.nclasses, 0);
}

static void test_parse_detached(void **state)
{
	struct ksched_state st;

	(void)state;
	assert_int_equal(parse_text(proc_detached, &st), 0);
	assert_false(st.attached);
	assert_string_equal(st.name, "-");
	assert_false(st.has_disp);
	assert_false(st.serves);
	assert_int_equal(st.nclasses, 0);
	ksched_free(&st);
}

static void test_parse_class_bad(void **state)
{
	static const char *const bad[] = {
		"class: x dispatched 1 bypassed 0 bytes 0 wait_ns 0 hist 0",
		"class: 65536 dispatched 1 bypassed 0 bytes 0 wait_ns 0 hist 0",
		"class: 1 dispatched -1 bypassed 0 bytes 0 wait_ns 0 hist 0",
		"class: 1 dispatched 1 bytes 0 bypassed 0 wait_ns 0 hist 0",
		"class: 1 dispatched 1 bypassed 0 bytes 0 wait_ns 0",
		"class: 1 dispatched 1 bypassed 0 bytes 0 wait_ns 0 hist ",
		"class: 1 dispatched 1 bypassed 0 bytes 0 wait_ns 0 hist 1,",
		"class: 1 dispatched 1 bypassed 0 bytes 0 wait_ns 0 hist 1,,2",
		"class: 1 dispatched 1 bypassed 0 bytes 0 wait_ns 0 hist 1 x",
		"class: 1 dispatched 18446744073709551616 bypassed 0 bytes 0 wait_ns 0 hist 0",
		/* 65 buckets */
		"class: 1 dispatched 1 bypassed 0 bytes 0 wait_ns 0 hist " Z25 "," Z25 ",0,0,0,0,0,0,0,0,0,0,0,0,0,0,0",
	};
	struct ksched_class c = { .id = 99 };
	struct ksched_state st;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (ksched_parse_class(bad[i], &c) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_int_equal(c.id, 99);
	}
	/* A short histogram is read as it is. */
	assert_int_equal(ksched_parse_class("class: 3 dispatched 1 bypassed 2 bytes 3 wait_ns 4 hist 5,6\n",
					    &c), 0);
	assert_int_equal(c.id, 3);
	assert_int_equal(c.nhist, 2);
	assert_int_equal(c.hist[1], 6);
	/* A bad class line or value is skipped, not fatal. */
	assert_int_equal(parse_text("attached: 1\nclass: 1 dispatched\nqueued: x\nname: n\n",
				    &st), 0);
	assert_true(st.attached);
	assert_int_equal(st.nclasses, 0);
	assert_int_equal(st.skipped, 2);
	assert_string_equal(st.name, "n");
	ksched_free(&st);
}

static void test_clients(void **state)
{
	static const char text[] =
		"client id=1 class=2 weight=3 peer=::ffff:127.0.0.2 conns=2 queued=5 inflight=1 dispatched=100 bytes=4096\n"
		"client id=2 class=0 weight=1 peer=- conns=1 queued=0 inflight=0 dispatched=7 bytes=0 future=9\n"
		"client id=3 class=65536 weight=1 peer=- conns=1 queued=0 inflight=0 dispatched=7 bytes=0\n"
		"client id=4 class=1 weight=1 peer=- conns=x\n"
		"something else\n";
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct ksched_client *c;
	unsigned int n;

	(void)state;
	assert_non_null(f);
	assert_int_equal(ksched_parse_clients(f, &c, &n), 0);
	fclose(f);
	assert_int_equal(n, 2);
	assert_int_equal(c[0].id, 1);
	assert_int_equal(c[0].class_id, 2);
	assert_int_equal(c[0].weight, 3);
	assert_string_equal(c[0].peer, "::ffff:127.0.0.2");
	assert_int_equal(c[0].conns, 2);
	assert_int_equal(c[0].queued, 5);
	assert_int_equal(c[0].inflight, 1);
	assert_int_equal(c[0].dispatched, 100);
	assert_int_equal(c[0].bytes, 4096);
	assert_string_equal(c[1].peer, "-");
	assert_int_equal(c[1].dispatched, 7);
	free(c);
	/* An empty file: nothing attached. */
	f = fmemopen((void *)"\n", 1, "r");
	assert_int_equal(ksched_parse_clients(f, &c, &n), 0);
	assert_int_equal(n, 0);
	assert_null(c);
	fclose(f);
}

static void test_p99(void **state)
{
	uint64_t h[KSCHED_HIST_BUCKETS] = { 0 }, ns = 0;
	bool open = true;

	(void)state;
	/* Empty. */
	assert_int_equal(ksched_hist_percentile(h, KSCHED_HIST_BUCKETS, 99,
						&ns, &open), -1);
	/* All under 1 us: <= 1 us. */
	h[0] = 8;
	assert_int_equal(ksched_hist_percentile(h, KSCHED_HIST_BUCKETS, 99,
						&ns, &open), 0);
	assert_int_equal(ns, 1000);
	assert_false(open);
	/* 99 in [1,2) us, 1 in [512,1024) us: p99 is the 99th: <= 2 us. */
	memset(h, 0, sizeof(h));
	h[1] = 99;
	h[10] = 1;
	assert_int_equal(ksched_hist_percentile(h, KSCHED_HIST_BUCKETS, 99,
						&ns, &open), 1);
	assert_int_equal(ns, 2000);
	/* 98 + 2: the 99th is in bucket 10, <= 1024 us. */
	h[1] = 98;
	h[10] = 2;
	assert_int_equal(ksched_hist_percentile(h, KSCHED_HIST_BUCKETS, 99,
						&ns, &open), 10);
	assert_int_equal(ns, 1024000);
	assert_false(open);
	/* p50 and p100 of the same. */
	assert_int_equal(ksched_hist_percentile(h, KSCHED_HIST_BUCKETS, 50,
						&ns, &open), 1);
	assert_int_equal(ksched_hist_percentile(h, KSCHED_HIST_BUCKETS, 100,
						&ns, &open), 10);
	/* Rank is ceil(0.99 n): n = 150 -> 149th. */
	memset(h, 0, sizeof(h));
	h[2] = 148;
	h[3] = 2;
	assert_int_equal(ksched_hist_percentile(h, KSCHED_HIST_BUCKETS, 99,
						&ns, &open), 3);
	assert_int_equal(ns, 8000);
	h[2] = 149;
	h[3] = 1;
	assert_int_equal(ksched_hist_percentile(h, KSCHED_HIST_BUCKETS, 99,
						&ns, &open), 2);
	assert_int_equal(ns, 4000);
	/* One sample, anywhere: it is the p99. */
	memset(h, 0, sizeof(h));
	h[20] = 1;
	assert_int_equal(ksched_hist_percentile(h, KSCHED_HIST_BUCKETS, 99,
						&ns, &open), 20);
	assert_true(ns == (1ULL << 20) * 1000);
	/* The open last bucket: a lower bound, 2^24 us. */
	memset(h, 0, sizeof(h));
	h[25] = 5;
	assert_int_equal(ksched_hist_percentile(h, KSCHED_HIST_BUCKETS, 99,
						&ns, &open), 25);
	assert_true(open);
	assert_true(ns == (1ULL << 24) * 1000);
	/* Huge counts do not overflow. */
	memset(h, 0, sizeof(h));
	h[0] = UINT64_MAX / 2;
	h[5] = UINT64_MAX / 2;
	assert_int_equal(ksched_hist_percentile(h, KSCHED_HIST_BUCKETS, 99,
						&ns, &open), 5);
}

/* per_cpu/cpuN/stats as kernel/trace/trace.c writes it. */
static void test_ring_lost(void **state)
{
	static const char stats[] =
		"entries: 12\n"
		"overrun: 5\n"
		"commit overrun: 100\n"
		"bytes: 4096\n"
		"oldest event ts:  1234.000001\n"
		"now ts:  1240.500000\n"
		"dropped events: 3\n"
		"read events: 40\n";

	(void)state;
	/* "commit overrun" is not an overrun of ours: 5 + 3. */
	assert_int_equal(ksched_ring_lost(stats), 8);
	assert_int_equal(ksched_ring_lost("overrun: 0\ndropped events: 0\n"),
			 0);
	/* The last line without its newline; a value that is not a number. */
	assert_int_equal(ksched_ring_lost("overrun: x\ndropped events: 2"), 2);
	assert_int_equal(ksched_ring_lost(""), 0);
	assert_int_equal(ksched_ring_lost("entries: 7\n"), 0);
}

/* The lines of a kernel with reservations and limits, as it writes them. */
static const char proc_qos[] =
	"attached: 1\n"
	"name: smb_classify\n"
	"link_id: 9\n"
	"conns_classified: 4\n"
	"reqs_classified: 40\n"
	"class_clamped: 0\n"
	"verdict_clamped: 0\n"
	"payloads: 0\n"
	"payload_pages: 0\n"
	"conns_reclassified: 1\n"
	"sessions_classified: 3\n"
	"trees_classified: 5\n"
	"classes_initialised: 2\n"
	"class_params_clamped: 1\n"
	"max_inflight: 0\n"
	"queued: 0\n"
	"class: 30 dispatched 10 bypassed 1 bytes 20971520 wait_ns 5 hist 10," Z25 "\n"
	"class_cost: 30 20971520\n"
	"class_qos: 30 res_iops 0 res_bps 0 lim_iops 0 lim_bps 20971520 burst_ms 100 aggregated 1 limited 17 throttled_ns 2310000000 res_served 0 res_missed 0\n"
	"class: 40 dispatched 3 bypassed 0 bytes 0 wait_ns 0 hist 3," Z25 "\n"
	"class_cost: 40 24576\n"
	"class_qos: 40 res_iops 100 res_bps 1048576 lim_iops 0 lim_bps 0 burst_ms 250 aggregated 0 limited 0 throttled_ns 0 res_served 120 res_missed 2 future_key 7\n"
	"class: 0 dispatched 1 bypassed 0 bytes 0 wait_ns 0 hist 1," Z25 "\n"
	"class_qos: 41 lim_iops 5 res_iops 0 res_bps 0 lim_bps 0 burst_ms 100 aggregated 0 limited 0 throttled_ns 0 res_served 0 res_missed 0\n"
	"class_qos: 40 res_iops 1 res_bps 0 lim_iops 0 lim_bps 0 burst_ms 100 aggregated 0 limited 0 throttled_ns 0 res_served 0 res_missed 0\n"
	"class_qos: 42 res_iops 1\n"
	"new_top_level_key: some text\n";

static void test_qos_lines(void **state)
{
	const struct ksched_class *c;
	struct ksched_state st;
	unsigned int i;

	(void)state;
	assert_int_equal(parse_text(proc_qos, &st), 0);
	assert_true(st.has_hooks);
	assert_int_equal(st.sessions_classified, 3);
	assert_int_equal(st.trees_classified, 5);
	assert_int_equal(st.classes_initialised, 2);
	assert_int_equal(st.class_params_clamped, 1);
	assert_int_equal(st.conns_classified, 4);
	/* 30, 40, 0, and 41 of a class_qos line alone; 42, 40 again skipped. */
	assert_int_equal(st.nclasses, 4);
	assert_int_equal(st.skipped, 2);
	c = &st.classes[0];
	assert_int_equal(c->id, 30);
	assert_int_equal(c->dispatched, 10);
	assert_true(c->has_qos);
	assert_int_equal(c->qos.id, 30);
	assert_int_equal(c->qos.res_iops, 0);
	assert_int_equal(c->qos.lim_bps, 20971520);
	assert_int_equal(c->qos.burst_ms, 100);
	assert_true(c->qos.aggregated);
	assert_int_equal(c->qos.limited, 17);
	assert_int_equal(c->qos.throttled_ns, 2310000000ULL);
	c = &st.classes[1];
	assert_int_equal(c->id, 40);
	assert_int_equal(c->dispatched, 3);
	assert_true(c->has_qos);
	assert_int_equal(c->qos.res_iops, 100);	/* its first line */
	assert_int_equal(c->qos.res_bps, 1048576);
	assert_int_equal(c->qos.burst_ms, 250);
	assert_false(c->qos.aggregated);
	assert_int_equal(c->qos.res_served, 120);
	assert_int_equal(c->qos.res_missed, 2);
	assert_false(st.classes[2].has_qos);
	c = &st.classes[3];
	assert_int_equal(c->id, 41);
	assert_int_equal(c->dispatched, 0);
	assert_int_equal(c->nhist, 0);
	assert_true(c->has_qos);
	assert_int_equal(c->qos.lim_iops, 5);
	/* class_qos and class_cost are not "key: value" lines; new keys are. */
	for (i = 0; i < st.nkv; i++)
		assert_string_not_equal(st.kv[i].key, "class_qos");
	assert_string_equal(st.kv[st.nkv - 1].key, "new_top_level_key");
	assert_string_equal(st.kv[st.nkv - 1].val, "some text");
	ksched_free(&st);

	/* A kernel without them: no hooks group. */
	assert_int_equal(parse_text(proc_detached, &st), 0);
	assert_false(st.has_hooks);
	ksched_free(&st);
}

static void test_qos_line_bad(void **state)
{
	static const char *const bad[] = {
		"class_qos: x res_iops 0",
		"class_qos: 65536 res_iops 0 res_bps 0 lim_iops 0 lim_bps 0 burst_ms 100 aggregated 0 limited 0 throttled_ns 0 res_served 0 res_missed 0",
		/* res_missed missing */
		"class_qos: 1 res_iops 0 res_bps 0 lim_iops 0 lim_bps 0 burst_ms 100 aggregated 0 limited 0 throttled_ns 0 res_served 0",
		/* aggregated 2, a value not a number, a key twice */
		"class_qos: 1 res_iops 0 res_bps 0 lim_iops 0 lim_bps 0 burst_ms 100 aggregated 2 limited 0 throttled_ns 0 res_served 0 res_missed 0",
		"class_qos: 1 res_iops -1 res_bps 0 lim_iops 0 lim_bps 0 burst_ms 100 aggregated 0 limited 0 throttled_ns 0 res_served 0 res_missed 0",
		"class_qos: 1 res_iops 1x res_bps 0 lim_iops 0 lim_bps 0 burst_ms 100 aggregated 0 limited 0 throttled_ns 0 res_served 0 res_missed 0",
		"class_qos: 1 res_iops 0 res_iops 0 res_bps 0 lim_iops 0 lim_bps 0 burst_ms 100 aggregated 0 limited 0 throttled_ns 0 res_served 0 res_missed 0",
		/* a key without its value, two spaces, overflow */
		"class_qos: 1 res_iops 0 res_bps 0 lim_iops 0 lim_bps 0 burst_ms 100 aggregated 0 limited 0 throttled_ns 0 res_served 0 res_missed",
		"class_qos: 1 res_iops  0 res_bps 0 lim_iops 0 lim_bps 0 burst_ms 100 aggregated 0 limited 0 throttled_ns 0 res_served 0 res_missed 0",
		"class_qos: 1 res_iops 18446744073709551616 res_bps 0 lim_iops 0 lim_bps 0 burst_ms 100 aggregated 0 limited 0 throttled_ns 0 res_served 0 res_missed 0",
		"class_qos:1 res_iops 0",
		"class: 1 res_iops 0",
	};
	struct ksched_qos q = { .id = 99 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (ksched_parse_qos(bad[i], &q) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_int_equal(q.id, 99);
	}
	/* Any order; an unknown pair of a later kernel is skipped. */
	assert_int_equal(ksched_parse_qos("class_qos: 7 res_missed 4 res_served 3 throttled_ns 2 limited 1 aggregated 1 burst_ms 9 lim_bps 8 lim_iops 6 res_bps 5 mode fair res_iops 4\n",
					  &q), 0);
	assert_int_equal(q.id, 7);
	assert_int_equal(q.res_iops, 4);
	assert_int_equal(q.res_bps, 5);
	assert_int_equal(q.lim_iops, 6);
	assert_int_equal(q.lim_bps, 8);
	assert_int_equal(q.burst_ms, 9);
	assert_true(q.aggregated);
	assert_int_equal(q.limited, 1);
	assert_int_equal(q.throttled_ns, 2);
	assert_int_equal(q.res_served, 3);
	assert_int_equal(q.res_missed, 4);
}

/* A client of a per-peer class of a user or share: keyed by ClientGUID. */
static void test_clients_guid(void **state)
{
	static const char text[] =
		"client id=5 class=40 weight=1 peer=- guid=0123abcd-4567-89ab-cdef-0123456789ab conns=2 queued=1 inflight=0 dispatched=9 bytes=0 deficit=0 cost=0 control=3 stuck=0 unauth=0 slot_bound=4\n"
		"client id=6 class=1 weight=1 peer=::ffff:10.0.0.1 conns=1 queued=0 inflight=0 dispatched=1 bytes=0\n"
		"client id=7 class=40 weight=1 peer=- guid= conns=1 queued=0 inflight=0 dispatched=1 bytes=0\n"
		"client id=8 class=40 weight=1 peer=- guid=0123456789012345678901234567890123456789 conns=1\n";
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct ksched_client *c;
	unsigned int n;

	(void)state;
	assert_non_null(f);
	assert_int_equal(ksched_parse_clients(f, &c, &n), 0);
	fclose(f);
	/* An empty guid and one too long for its buffer: not client lines. */
	assert_int_equal(n, 2);
	assert_int_equal(c[0].id, 5);
	assert_int_equal(c[0].class_id, 40);
	assert_string_equal(c[0].peer, "-");
	assert_string_equal(c[0].guid, "0123abcd-4567-89ab-cdef-0123456789ab");
	assert_int_equal(c[0].conns, 2);
	assert_int_equal(c[0].dispatched, 9);
	assert_string_equal(c[1].peer, "::ffff:10.0.0.1");
	assert_string_equal(c[1].guid, "");
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_attached),
		cmocka_unit_test(test_parse_detached),
		cmocka_unit_test(test_parse_class_bad),
		cmocka_unit_test(test_p99),
		cmocka_unit_test(test_clients),
		cmocka_unit_test(test_ring_lost),
		cmocka_unit_test(test_qos_lines),
		cmocka_unit_test(test_qos_line_bad),
		cmocka_unit_test(test_clients_guid),
	};

	return cmocka_run_group_tests_name("procnet", tests, NULL, NULL);
}
