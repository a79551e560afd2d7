// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * status.c - "status" (text, JSON, OpenMetrics) and "clients"
 *
 * Both gather everything first (kernel state, pins, maps, the attached
 * ops), then print it in the form asked for.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "main.h"

/**
 * struct status - what "status" shows
 * @ns:       the netns.
 * @g:        what is in force there (the pins of a stale link removed).
 * @clients:  /proc/net/ksmbd_sched_clients, for per-class gauges.
 * @nclients: number of @clients; -1 when the file does not exist.
 */
struct status {
	struct ns_ctx ns;
	struct ns_state g;
	struct ksched_client *clients;
	long nclients;
};

/* Read ksmbd_sched_clients of the netns.  Return: 0, -ENOENT, -errno. */
static int clients_read(struct ksched_client **out, long *n)
{
	unsigned int count;
	FILE *f;
	int err;

	*out = NULL;
	*n = -1;
	f = fopen(KSCHED_CLIENTS_PROC, "re");
	if (!f)
		return -errno;
	err = ksched_parse_clients(f, out, &count);
	fclose(f);
	if (!err)
		*n = count;
	return err;
}

/* A "key: value" of /proc as a JSON member: decimal as a number. */
static void json_kv(const struct ksched_kv *kv)
{
	unsigned long v;

	if (!parse_uint(kv->val, (unsigned long)-1, &v))
		jsonw_uint_field(json_wtr, kv->key, v);
	else
		json_text_field(json_wtr, kv->key, kv->val);
}

/*
 * The member "qos" of a class: its reservation and limit in force (a
 * rate of 0, none, as null), what they did, and "reservation_met" when
 * it has a reservation (null otherwise); null for a class without them.
 */
static void json_class_qos(const struct ksched_class *c)
{
	const struct ksched_qos *q = &c->qos;
	bool res = q->res_iops || q->res_bps;

	jsonw_name(json_wtr, "qos");
	if (!c->has_qos) {
		jsonw_null(json_wtr);
		return;
	}
	jsonw_start_object(json_wtr);
	jsonw_string_field(json_wtr, "scope",
			   q->aggregated ? "aggregated" : "dedicated");
	json_uint_or_null(json_wtr, "reservation_iops", q->res_iops,
			  q->res_iops);
	json_uint_or_null(json_wtr, "reservation_bytes", q->res_bps,
			  q->res_bps);
	json_uint_or_null(json_wtr, "limit_iops", q->lim_iops, q->lim_iops);
	json_uint_or_null(json_wtr, "limit_bytes", q->lim_bps, q->lim_bps);
	jsonw_uint_field(json_wtr, "burst_ms", q->burst_ms);
	jsonw_uint_field(json_wtr, "limited", q->limited);
	jsonw_uint_field(json_wtr, "throttled_ns", q->throttled_ns);
	jsonw_uint_field(json_wtr, "res_served", q->res_served);
	jsonw_uint_field(json_wtr, "res_missed", q->res_missed);
	if (res)
		jsonw_bool_field(json_wtr, "reservation_met", !q->res_missed);
	else
		jsonw_null_field(json_wtr, "reservation_met");
	jsonw_end_object(json_wtr);
}

static void json_class(const struct ksched_class *c)
{
	uint64_t bound;
	unsigned int j;
	bool open;

	static const char *const names[] = {
		"class", "dispatched", "bypassed", "bytes", "wait_ns",
	};
	const uint64_t v[] = { c->id, c->dispatched, c->bypassed, c->bytes,
			       c->wait_ns };

	jsonw_start_object(json_wtr);
	for (j = 0; j < ARRAY_SIZE(v); j++)
		jsonw_uint_field(json_wtr, names[j], v[j]);
	json_uint_or_null(json_wtr, "mean_wait_ns", c->dispatched,
			  ksched_class_mean_ns(c));
	if (ksched_hist_percentile(c->hist, c->nhist, 99, &bound, &open) < 0) {
		jsonw_null_field(json_wtr, "p99_wait_ns");
		jsonw_null_field(json_wtr, "p99_wait_bound");
	} else {
		jsonw_uint_field(json_wtr, "p99_wait_ns", bound);
		jsonw_string_field(json_wtr, "p99_wait_bound",
				   open ? "ge" : "le");
	}
	jsonw_name(json_wtr, "hist");
	jsonw_start_array(json_wtr);
	for (j = 0; j < c->nhist; j++)
		jsonw_uint(json_wtr, c->hist[j]);
	jsonw_end_array(json_wtr);
	json_class_qos(c);
	jsonw_end_object(json_wtr);
}

/* The member "classes": every class line. */
static void json_classes(const struct ksched_state *st)
{
	unsigned int i;

	jsonw_name(json_wtr, "classes");
	jsonw_start_array(json_wtr);
	for (i = 0; i < st->nclasses; i++)
		json_class(&st->classes[i]);
	jsonw_end_array(json_wtr);
}

/* Every "key: value" line of /proc/net/ksmbd_sched as it was. */
static void json_kernel(const struct ksched_state *st)
{
	unsigned int i;

	jsonw_start_object(json_wtr);
	for (i = 0; i < st->nkv; i++)
		json_kv(&st->kv[i]);
	jsonw_uint_field(json_wtr, "lines_skipped", st->skipped);
	json_classes(st);
	jsonw_end_object(json_wtr);
}

/* The keys of one group: JSON members, or "key:  value" text lines. */
static void group_out(const struct ksched_state *st, enum ksched_group g)
{
	const struct ksched_field *f;
	unsigned long long v;
	unsigned int i;
	int pad;

	for (i = 0; i < ksched_nfields; i++) {
		f = &ksched_fields[i];
		if (f->group != g)
			continue;
		v = ksched_value(st, f->off, f->size);
		pad = 18 - (int)strlen(f->key);
		if (json_output)
			jsonw_uint_field(json_wtr, f->key, v);
		else
			printf("%s:%*s%llu\n", f->key, pad > 1 ? pad : 1, "", v);
	}
}

/* The start of status's object: which netns, and whether it exists. */
static void json_netns(const struct ns_ctx *ns, bool exists)
{
	jsonw_start_object(json_wtr);
	jsonw_uint_field(json_wtr, "netns_ino", ns->ino);
	json_text_field(json_wtr, "netns", ns->label);
	jsonw_bool_field(json_wtr, "netns_exists", exists);
}

static void status_json(const struct status *s)
{
	const struct ns_state *g = &s->g;
	const struct ksched_state *st = &g->st;
	unsigned int i;

	json_netns(&s->ns, true);
	jsonw_bool_field(json_wtr, "serves", st->serves);
	jsonw_bool_field(json_wtr, "attached", st->attached);
	jsonw_bool_field(json_wtr, "pinned", g->map_id);
	json_text_field(json_wtr, "name", st->name);
	jsonw_uint_field(json_wtr, "link_id", st->link_id);
	jsonw_uint_field(json_wtr, "struct_ops_map_id", g->map_id);
	jsonw_name(json_wtr, "progs");
	jsonw_start_array(json_wtr);
	for (i = 0; i < g->oi.nprogs; i++) {
		jsonw_start_object(json_wtr);
		jsonw_string_field(json_wtr, "member", g->oi.progs[i].member);
		jsonw_uint_field(json_wtr, "id", g->oi.progs[i].id);
		json_text_field(json_wtr, "name", g->oi.progs[i].name);
		jsonw_end_object(json_wtr);
	}
	jsonw_end_array(json_wtr);
	if (g->map_id)
		jsonw_uint_field(json_wtr, "ops_max_inflight",
				 g->oi.max_inflight);
	/* Entries of each map, null for one that is not pinned. */
	json_uint_or_null(json_wtr, "prefixes", g->maps & 1, g->c.nprefixes);
	json_uint_or_null(json_wtr, "policies", g->maps & 2, g->c.npolicies);
	group_out(st, KSCHED_G_COUNTER);
	if (st->has_hooks)
		group_out(st, KSCHED_G_HOOKS);
	jsonw_bool_field(json_wtr, "removed_stale_pins", g->stale);
	jsonw_name(json_wtr, "dispatcher");
	if (!st->has_disp) {
		jsonw_null(json_wtr);
	} else {
		jsonw_start_object(json_wtr);
		group_out(st, KSCHED_G_DISP);
		jsonw_end_object(json_wtr);
	}
	if (st->has_held) {
		jsonw_name(json_wtr, "held");
		jsonw_start_object(json_wtr);
		group_out(st, KSCHED_G_HELD);
		jsonw_end_object(json_wtr);
	}
	json_classes(st);
	jsonw_name(json_wtr, "kernel");
	json_kernel(st);
	jsonw_end_object(json_wtr);
}

/* p99 of a class's waits as text: "<= 2.0 us", ">= 16.8 s", "-". */
static void p99_text(const struct ksched_class *c, char *buf, size_t len)
{
	char dur[32];
	uint64_t bound;
	bool open;

	if (ksched_hist_percentile(c->hist, c->nhist, 99, &bound, &open) < 0) {
		snprintf(buf, len, "-");
		return;
	}
	trace_format_ns(bound, dur, sizeof(dur));
	snprintf(buf, len, "%s %s", open ? ">=" : "<=", dur);
}

/* Rates as text: "100 IOPS", "20M/s", "100 IOPS+20M/s", or "-". */
static void rates_text(uint64_t iops, uint64_t bps, char *buf, size_t len)
{
	char sz[SIZE_STRLEN];
	size_t o = 0;

	buf[0] = '\0';
	if (iops)
		o = snprintf(buf, len, "%llu IOPS", (unsigned long long)iops);
	if (bps && o < len) {
		format_size(bps, sz, sizeof(sz));
		snprintf(buf + o, len - o, "%s%s/s", o ? "+" : "", sz);
	}
	if (!buf[0])
		snprintf(buf, len, "-");
}

/*
 * The classes with a reservation or a limit: what is in force, times
 * limited and how long, requests served for the reservation and times it
 * was missed; "-" for what the class does not have.
 */
static void status_qos_text(const struct ksched_state *st)
{
	char res[48], lim[48], burst[24], lcount[24], thr[32], served[24];
	char missed[24];
	const struct ksched_qos *q;
	unsigned int i;
	bool head = false;

	for (i = 0; i < st->nclasses; i++) {
		if (!st->classes[i].has_qos)
			continue;
		q = &st->classes[i].qos;
		if (!head)
			printf("reservations and limits:\n  %5s  %-18s  %-18s  %7s  %-10s  %8s  %9s  %10s  %10s  %s\n",
			       "CLASS", "RESERVATION", "LIMIT", "BURST", "SCOPE",
			       "LIMITED", "THROTTLED", "RES-SERVED",
			       "RES-MISSED", "MET");
		head = true;
		rates_text(q->res_iops, q->res_bps, res, sizeof(res));
		rates_text(q->lim_iops, q->lim_bps, lim, sizeof(lim));
		snprintf(burst, sizeof(burst), "%llu ms",
			 (unsigned long long)q->burst_ms);
		snprintf(lcount, sizeof(lcount), "-");
		snprintf(thr, sizeof(thr), "-");
		snprintf(served, sizeof(served), "-");
		snprintf(missed, sizeof(missed), "-");
		if (q->lim_iops || q->lim_bps) {
			snprintf(lcount, sizeof(lcount), "%llu",
				 (unsigned long long)q->limited);
			trace_format_ns(q->throttled_ns, thr, sizeof(thr));
		}
		if (q->res_iops || q->res_bps) {
			snprintf(served, sizeof(served), "%llu",
				 (unsigned long long)q->res_served);
			snprintf(missed, sizeof(missed), "%llu",
				 (unsigned long long)q->res_missed);
		}
		printf("  %5u  %-18s  %-18s  %7s  %-10s  %8s  %9s  %10s  %10s  %s\n",
		       st->classes[i].id, res, lim, burst,
		       q->aggregated ? "aggregated" : "dedicated", lcount, thr,
		       served, missed, !(q->res_iops || q->res_bps) ? "-" :
		       q->res_missed ? "no" : "yes");
	}
}

static void status_classes_text(const struct ksched_state *st)
{
	const struct ksched_class *c;
	char mean[32], p99[40];
	unsigned int i;

	group_out(st, KSCHED_G_DISP);
	if (!st->nclasses) {
		printf("classes:           none dispatched yet\n");
		return;
	}
	printf("classes:\n  %5s  %10s  %10s  %14s  %10s  %12s\n", "CLASS",
	       "DISPATCHED", "BYPASSED", "BYTES", "MEAN-WAIT", "P99-WAIT");
	for (i = 0; i < st->nclasses; i++) {
		c = &st->classes[i];
		if (c->dispatched)
			trace_format_ns(ksched_class_mean_ns(c), mean,
					sizeof(mean));
		else
			snprintf(mean, sizeof(mean), "-");
		p99_text(c, p99, sizeof(p99));
		printf("  %5u  %10llu  %10llu  %14llu  %10s  %12s\n", c->id,
		       (unsigned long long)c->dispatched,
		       (unsigned long long)c->bypassed,
		       (unsigned long long)c->bytes, mean, p99);
	}
	status_qos_text(st);
}

static void status_text(const struct status *s)
{
	const struct ns_state *g = &s->g;
	const struct ksched_state *st = &g->st;
	unsigned int i;

	if (g->stale)
		printf("note: removed stale pins (link id %u was not attached in this netns)\n",
		       g->link_id);
	printf("netns:             %lu (%s)\n", s->ns.ino, s->ns.label);
	printf("ksmbd serves:      %s\n", st->serves ? "yes" :
	       "no: " NOT_SERVED);
	printf("attached:          %s\n", !st->attached ? "no" :
	       g->map_id ? "yes" :
	       "yes, but not by smb-classify (no pin; see bpftool link)");
	if (st->attached)
		printf("name:              %s\nlink id:           %u\n",
		       st->name, st->link_id);
	if (g->map_id) {
		printf("struct_ops map id: %u\n", g->map_id);
		for (i = 0; i < g->oi.nprogs; i++)
			printf("prog:              %s id %u (%s)\n",
			       g->oi.progs[i].member, g->oi.progs[i].id,
			       g->oi.progs[i].name);
	}
	if (g->maps & 1)
		printf("prefixes:          %u\n", g->c.nprefixes);
	else
		printf("prefixes:          none pinned\n");
	if (g->maps & 2)
		printf("policies:          %u (other classes: defaults, see policy show)\n",
		       g->c.npolicies);
	else
		printf("policies:          none pinned (all classes: defaults, see policy show)\n");
	group_out(st, KSCHED_G_COUNTER);
	if (st->has_hooks)
		group_out(st, KSCHED_G_HOOKS);
	if (st->has_held)
		printf("held:              %llu payloads, %llu pages (all netns)\n",
		       (unsigned long long)st->payloads,
		       (unsigned long long)st->payload_pages);
	if (st->has_disp)
		status_classes_text(st);
}

static void om_family(const char *name, const char *type, const char *help)
{
	printf("# TYPE ksmbd_sched_%s %s\n# HELP ksmbd_sched_%s %s\n", name,
	       type, name, help);
}

/*
 * One sample: ksmbd_sched_NAME{netns="INO"[,class="CLS"][,le="LE"]} V,
 * a label left out where its argument is NULL.
 */
static void om_sample(const char *name, unsigned long ino, const char *cls,
		      const char *le, uint64_t v)
{
	printf("ksmbd_sched_%s{netns=\"%lu\"", name, ino);
	if (cls)
		printf(",class=\"%s\"", cls);
	if (le)
		printf(",le=\"%s\"", le);
	printf("} %llu\n", (unsigned long long)v);
}

/* A sample of seconds, from @ns: ksmbd_sched_NAME{netns,class} S. */
static void om_seconds(const char *name, unsigned long ino, const char *cls,
		       uint64_t ns)
{
	printf("ksmbd_sched_%s{netns=\"%lu\",class=\"%s\"} %.9f\n", name,
	       ino, cls, ns / 1e9);
}

/*
 * The classes' reservations and limits, of the classes that have them:
 * what they did (counters) and what is in force (gauges; a rate a class
 * does not have has no sample).
 */
static void om_qos(const struct status *s)
{
	static const struct {
		const char *name, *help;
		size_t off;
	} counters[] = {
		{ "class_limited",
		  "times a client of the class waited for its limit",
		  offsetof(struct ksched_qos, limited) },
		{ "class_reservation_served",
		  "requests served ahead of the round for the class's reservation",
		  offsetof(struct ksched_qos, res_served) },
		{ "class_reservation_missed",
		  "times the class's reservation fell a burst behind while its requests waited",
		  offsetof(struct ksched_qos, res_missed) },
	}, gauges[] = {
		{ "class_reservation_iops",
		  "reservation, I/Os of 8 KiB of cost a second",
		  offsetof(struct ksched_qos, res_iops) },
		{ "class_reservation_bytes_per_second",
		  "reservation, bytes of cost a second",
		  offsetof(struct ksched_qos, res_bps) },
		{ "class_limit_iops", "limit, I/Os of 8 KiB of cost a second",
		  offsetof(struct ksched_qos, lim_iops) },
		{ "class_limit_bytes_per_second", "limit, bytes of cost a second",
		  offsetof(struct ksched_qos, lim_bps) },
	};
	const struct ksched_state *st = &s->g.st;
	const struct ksched_qos *q;
	unsigned long ino = s->ns.ino;
	char cls[16], total[64];
	unsigned int i, k;
	uint64_t v;

	for (k = 0; k < ARRAY_SIZE(counters); k++) {
		om_family(counters[k].name, "counter", counters[k].help);
		snprintf(total, sizeof(total), "%s_total", counters[k].name);
		for (i = 0; i < st->nclasses; i++) {
			if (!st->classes[i].has_qos)
				continue;
			snprintf(cls, sizeof(cls), "%u", st->classes[i].id);
			om_sample(total, ino, cls, NULL,
				  ksched_value(&st->classes[i].qos,
					       counters[k].off,
					       sizeof(uint64_t)));
		}
	}
	om_family("class_throttled_seconds", "counter",
		  "time clients of the class waited for its limit");
	for (i = 0; i < st->nclasses; i++) {
		if (!st->classes[i].has_qos)
			continue;
		snprintf(cls, sizeof(cls), "%u", st->classes[i].id);
		om_seconds("class_throttled_seconds_total", ino, cls,
			   st->classes[i].qos.throttled_ns);
	}
	for (k = 0; k < ARRAY_SIZE(gauges); k++) {
		om_family(gauges[k].name, "gauge", gauges[k].help);
		for (i = 0; i < st->nclasses; i++) {
			if (!st->classes[i].has_qos)
				continue;
			v = ksched_value(&st->classes[i].qos, gauges[k].off,
					 sizeof(uint64_t));
			snprintf(cls, sizeof(cls), "%u", st->classes[i].id);
			if (v)
				om_sample(gauges[k].name, ino, cls, NULL, v);
		}
	}
	om_family("class_burst_seconds", "gauge",
		  "depth of the class's token buckets");
	for (i = 0; i < st->nclasses; i++) {
		if (!st->classes[i].has_qos)
			continue;
		snprintf(cls, sizeof(cls), "%u", st->classes[i].id);
		om_seconds("class_burst_seconds", ino, cls,
			   st->classes[i].qos.burst_ms * 1000000);
	}
	om_family("class_aggregated", "gauge",
		  "1: the reservation and limit are the class's as a whole, 0: each client's");
	for (i = 0; i < st->nclasses; i++) {
		q = &st->classes[i].qos;
		if (!st->classes[i].has_qos)
			continue;
		snprintf(cls, sizeof(cls), "%u", st->classes[i].id);
		om_sample("class_aggregated", ino, cls, NULL, q->aggregated);
	}
}

/* Sum of a per-client value over the clients of class @id. */
static uint64_t clients_sum(const struct status *s, uint32_t id, size_t off)
{
	uint64_t sum = 0;
	long i;

	for (i = 0; i < s->nclients; i++)
		if (s->clients[i].class_id == id)
			sum += ksched_value(&s->clients[i], off,
					    sizeof(uint64_t));
	return sum;
}

/*
 * A per-class gauge summed over the class's clients, or one netns-wide
 * sample (class "all") when the kernel has no ksmbd_sched_clients.
 */
static void om_gauges(const struct status *s, const char *name,
		      const char *help, size_t off, uint32_t all)
{
	char cls[16];
	unsigned int i;

	om_family(name, "gauge", help);
	if (s->nclients < 0) {
		if (s->g.st.has_disp)
			om_sample(name, s->ns.ino, "all", NULL, all);
		return;
	}
	for (i = 0; i < s->g.st.nclasses; i++) {
		snprintf(cls, sizeof(cls), "%u", s->g.st.classes[i].id);
		om_sample(name, s->ns.ino, cls, NULL,
			  clients_sum(s, s->g.st.classes[i].id, off));
	}
}

/*
 * OpenMetrics text (also the Prometheus text format's subset node_exporter's
 * textfile collector reads): netns-wide gauges and counters, and per
 * class the counters, the queued/inflight gauges (summed over the class's
 * clients when ksmbd_sched_clients exists) and the wait histogram with
 * cumulative buckets le=2^i us, in seconds.
 */
static void status_openmetrics(const struct status *s)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} classc[] = {
		{ "dispatched_requests", "counter", "data requests dispatched",
		  offsetof(struct ksched_class, dispatched) },
		{ "bypassed_requests", "counter",
		  "control requests, run without waiting",
		  offsetof(struct ksched_class, bypassed) },
		{ "bytes", "counter", "READ and WRITE bytes dispatched",
		  offsetof(struct ksched_class, bytes) },
	};
	const struct ksched_state *st = &s->g.st;
	const struct ksched_class *c;
	unsigned long ino = s->ns.ino;
	char cls[16], le[32], total[48];
	uint64_t cum;
	unsigned int i, j, k;

	om_family("attached", "gauge", "a program is attached in the netns");
	om_sample("attached", ino, NULL, NULL, st->attached);
	om_family("classified_connections", "counter", "connections classified");
	om_sample("classified_connections_total", ino, NULL, NULL,
		  st->conns_classified);
	om_family("classified_requests", "counter", "requests classified");
	om_sample("classified_requests_total", ino, NULL, NULL,
		  st->reqs_classified);
	if (st->has_hooks) {
		om_family("classified_sessions", "counter",
			  "sessions classified by classify_session()");
		om_sample("classified_sessions_total", ino, NULL, NULL,
			  st->sessions_classified);
		om_family("classified_trees", "counter",
			  "tree connects classified by classify_tree()");
		om_sample("classified_trees_total", ino, NULL, NULL,
			  st->trees_classified);
		om_family("initialised_classes", "counter",
			  "times init_class() gave a class its reservation and limit");
		om_sample("initialised_classes_total", ino, NULL, NULL,
			  st->classes_initialised);
		om_family("clamped_class_params", "counter",
			  "times the kernel clamped what init_class() gave");
		om_sample("clamped_class_params_total", ino, NULL, NULL,
			  st->class_params_clamped);
	}
	if (st->has_disp) {
		om_family("max_inflight", "gauge", "dispatch budget in force");
		om_sample("max_inflight", ino, NULL, NULL, st->max_inflight);
		om_family("budget_changes", "counter",
			  "times the adaptive dispatch budget changed");
		om_sample("budget_changes_total", ino, NULL, NULL,
			  st->budget_changes);
	}
	if (st->has_held) {
		om_family("held_payload_pages", "gauge",
			  "pages of spliced READ payloads held (all netns)");
		printf("ksmbd_sched_held_payload_pages %llu\n",
		       (unsigned long long)st->payload_pages);
	}
	for (k = 0; k < ARRAY_SIZE(classc); k++) {
		om_family(classc[k].name, classc[k].type, classc[k].help);
		snprintf(total, sizeof(total), "%s_total", classc[k].name);
		for (i = 0; i < st->nclasses; i++) {
			snprintf(cls, sizeof(cls), "%u", st->classes[i].id);
			om_sample(total, ino, cls, NULL,
				  ksched_value(&st->classes[i], classc[k].off,
					       sizeof(uint64_t)));
		}
	}
	om_gauges(s, "queued_requests", "requests waiting in the dispatcher",
		  offsetof(struct ksched_client, queued), st->queued);
	om_gauges(s, "inflight_requests", "requests running",
		  offsetof(struct ksched_client, inflight), st->inflight);
	om_family("wait_seconds", "histogram",
		  "time data requests waited in the dispatcher");
	for (i = 0; i < st->nclasses; i++) {
		c = &st->classes[i];
		if (!c->nhist)	/* a class_qos line alone: no histogram */
			continue;
		snprintf(cls, sizeof(cls), "%u", c->id);
		for (j = 0, cum = 0; j < c->nhist; j++) {
			cum += c->hist[j];
			snprintf(le, sizeof(le), "%.9g",
				 (double)(1ULL << j) * 1e-6);
			om_sample("wait_seconds_bucket", ino, cls,
				  j + 1 < c->nhist ? le : "+Inf", cum);
		}
		om_sample("wait_seconds_count", ino, cls, NULL, cum);
		printf("ksmbd_sched_wait_seconds_sum{netns=\"%lu\",class=\"%s\"} %.9f\n",
		       ino, cls, c->wait_ns / 1e9);
	}
	om_qos(s);
	printf("# EOF\n");
}

/* A deleted netns: remove what is left of it, and say so. */
static int status_gone(struct ns_ctx *ns)
{
	bool removed = false;
	int err = ns_lock(ns, false);

	if (!err && !access(ns->dir, F_OK)) {
		err = ns_remove_pins(ns);
		removed = !err;
	}
	ns_unlock(ns);
	if (err && err != -ENOENT)
		return err;
	if (json_output) {
		json_netns(ns, false);
		jsonw_bool_field(json_wtr, "attached", false);
		jsonw_bool_field(json_wtr, "removed_stale_pins", removed);
		jsonw_end_object(json_wtr);
		return 0;
	}
	if (ns->ino)
		printf("netns:             %lu (%s) no longer exists\n",
		       ns->ino, ns->label);
	else
		printf("netns:             %s does not exist\n", ns->label);
	printf("attached:          no\n");
	if (removed)
		printf("note: removed its stale pins\n");
	return 0;
}

/* The forms of status (-o), each selected by a prefix of its name. */
enum status_out { OUT_TEXT, OUT_JSON, OUT_OPENMETRICS, OUT_KERNEL, OUT_N };

static const char *const status_outs[OUT_N] = {
	"text", "json", "openmetrics", "kernel",
};

/**
 * do_status() - "status [-o text|json|openmetrics|kernel]" of the netns
 * @argc: number of @argv.
 * @argv: -o FORMAT and the global options; nothing else.
 *
 * Return: 0 or a negative errno, reported.
 */
int do_status(int argc, char **argv)
{
	struct cmd_opt opts[] = { { "output", 'o', true } };
	struct status s = { .nclients = -1 };
	const char *output_arg, *fmt;
	unsigned int i, out;
	int err;

	err = cmd_options("status", &argc, &argv, opts, ARRAY_SIZE(opts));
	if (err)
		return err < 0 ? err : 0;
	output_arg = opts[0].value;
	fmt = output_arg ? output_arg : json_output ? "json" : "text";
	for (out = 0; out < OUT_N && !word_abbrev(fmt, status_outs[out]); out++)
		;
	if (out == OUT_N)
		return p_err("status: unknown output '%.40s' (text, json, openmetrics, kernel)",
			     fmt);
	if (output_arg && json_output && out != OUT_JSON && out != OUT_KERNEL)
		return p_err("status: -j and -o %s: choose one", fmt);
	if (out == OUT_JSON)
		json_output = true;
	err = ns_cmd("status", argc, argv, &s.ns, false);
	if (err)
		return err;
	/*
	 * The kernel's lines only, parsed: nothing else read or touched.
	 * Text: "KEY VALUE" a line, for scripts that want one value.
	 */
	if (out == OUT_KERNEL && s.ns.live) {
		err = ksched_read(&s.g.st);
		for (i = 0; !err && !json_output && i < s.g.st.nkv; i++)
			printf("%s %s\n", s.g.st.kv[i].key, s.g.st.kv[i].val);
		if (!err && json_output)
			json_kernel(&s.g.st);
		ksched_free(&s.g.st);
		return err;
	}
	if (!s.ns.live)
		return status_gone(&s.ns);
	err = ns_gather(&s.ns, &s.g, true);
	if (!err && out == OUT_OPENMETRICS)
		clients_read(&s.clients, &s.nclients);
	if (err)
		;
	else if (json_output)
		status_json(&s);
	else if (out == OUT_OPENMETRICS)
		status_openmetrics(&s);
	else
		status_text(&s);
	free(s.clients);
	ns_state_free(&s.g);
	ns_unlock(&s.ns);
	return err;
}

/*
 * One client as a JSON object or a text row, the fields and columns of
 * ksched_client_fields; @c NULL: the text header.  A string that is "-"
 * or empty (no peer, no ClientGUID) is null in JSON and "-" in text; the
 * text has a GUID column only when @guids.
 */
static void client_row(struct ksched_client *c, bool guids)
{
	const struct ksched_client_field *f;
	char head[16], *str;
	unsigned int i, j;

	if (json_output)
		jsonw_start_object(json_wtr);
	for (i = 0; i < ksched_client_nfields; i++) {
		f = &ksched_client_fields[i];
		str = c && !f->size ? (char *)c + f->off : NULL;
		if (!json_output && !guids &&
		    f->off == offsetof(struct ksched_client, guid))
			continue;
		if (!c) {
			for (j = 0; f->key[j] && j < sizeof(head) - 1; j++)
				head[j] = f->key[j] - 'a' + 'A';
			head[j] = '\0';
			printf("%s%*s", i ? "  " : "", f->width, head);
		} else if (f->size && json_output) {
			jsonw_uint_field(json_wtr, f->key,
					 ksched_value(c, f->off, f->size));
		} else if (f->size) {
			printf("%s%*llu", i ? "  " : "", f->width,
			       (unsigned long long)ksched_value(c, f->off,
								 f->size));
		} else if (json_output && (!*str || !strcmp(str, "-"))) {
			jsonw_null_field(json_wtr, f->key);
		} else if (json_output) {
			json_text_field(json_wtr, f->key, str);
		} else {
			text_sanitize(str);
			printf("%s%*s", i ? "  " : "", f->width,
			       *str ? str : "-");
		}
	}
	if (json_output)
		jsonw_end_object(json_wtr);
	else
		putchar('\n');
}

/**
 * do_clients() - "clients": the dispatcher's clients of the netns
 * @argc: must be 0.
 * @argv: unused.
 *
 * Return: 0 or a negative errno, reported.
 */
int do_clients(int argc, char **argv)
{
	struct ksched_client *c = NULL;
	bool guids = false;
	struct ns_ctx ns;
	long n, i;
	int err;

	err = ns_cmd("clients", argc, argv, &ns, true);
	if (err)
		return err;
	err = clients_read(&c, &n);
	if (err) {
		p_err(err == -ENOENT ?
		      "this kernel has no per-client listing (%s missing: ksmbd without BPF scheduling, or older than the clients interface)%.0s" :
		      "cannot read %s: %s", KSCHED_CLIENTS_PROC, strerror(-err));
		return err;
	}
	for (i = 0; i < n; i++)
		guids |= c[i].guid[0] != '\0';
	if (json_output)
		jsonw_start_array(json_wtr);
	else if (!n)
		printf("no clients in netns %lu (nothing attached, or no connection yet)\n",
		       ns.ino);
	else
		client_row(NULL, guids);
	for (i = 0; i < n; i++)
		client_row(&c[i], guids);
	if (json_output)
		jsonw_end_array(json_wtr);
	free(c);
	return 0;
}
