/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * procnet.h - the text of /proc/net/ksmbd_sched and ksmbd_sched_clients,
 * and of a trace buffer's per-CPU stats, parsed
 *
 * Pure functions, no libbpf: the unit tests link procnet.o directly.
 */
#ifndef SMB_CLASSIFY_PROCNET_H
#define SMB_CLASSIFY_PROCNET_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Buckets of the kernel's wait histogram: bucket i counts waits in
 * [2^(i-1), 2^i) microseconds, bucket 0 those under 1 us, and the last
 * one (26 from this kernel) everything from its lower bound up.  A
 * longer histogram of a later kernel is read up to KSCHED_HIST_MAX.
 */
#define KSCHED_HIST_BUCKETS	26
#define KSCHED_HIST_MAX		64

/**
 * struct ksched_qos - one "class_qos:" line: a class's reservation and
 *                     limit in force, and what they did
 * @id:           class id.
 * @res_iops:     reservation, I/Os of 8 KiB of cost a second; 0: none.
 * @res_bps:      reservation, bytes of cost a second; 0: none.
 * @lim_iops:     limit, I/Os a second; 0: none.
 * @lim_bps:      limit, bytes a second; 0: none.
 * @burst_ms:     depth of the token buckets, ms (the default resolved).
 * @aggregated:   of the class as a whole, else of each of its clients.
 * @limited:      times a client of the class waited for its limit.
 * @throttled_ns: how long its clients waited for the limit, ns.
 * @res_served:   requests served ahead of the round for the reservation.
 * @res_missed:   times the reservation fell a burst behind while its
 *                requests waited: the server could not meet it.
 */
struct ksched_qos {
	uint32_t id;
	uint64_t res_iops;
	uint64_t res_bps;
	uint64_t lim_iops;
	uint64_t lim_bps;
	uint64_t burst_ms;
	bool aggregated;
	uint64_t limited;
	uint64_t throttled_ns;
	uint64_t res_served;
	uint64_t res_missed;
};

/**
 * struct ksched_class - one "class:" line: dispatch counters of a class
 * @id:         class id.
 * @dispatched: data requests dispatched.
 * @bypassed:   control requests, run without waiting.
 * @bytes:      READ/WRITE bytes of the dispatched requests.
 * @wait_ns:    sum of their waits in the dispatcher, ns.
 * @nhist:      buckets read (KSCHED_HIST_BUCKETS from this kernel).
 * @hist:       the wait histogram.
 * @has_qos:    a "class_qos:" line of the class was read, into @qos.
 * @qos:        its reservation and limit.
 */
struct ksched_class {
	uint32_t id;
	uint64_t dispatched;
	uint64_t bypassed;
	uint64_t bytes;
	uint64_t wait_ns;
	unsigned int nhist;
	uint64_t hist[KSCHED_HIST_MAX];
	bool has_qos;
	struct ksched_qos qos;
};

/**
 * struct ksched_state - /proc/net/ksmbd_sched of one netns
 * @attached:         a program is attached in this netns.
 * @name:             its ops name, "-" when none.
 * @link_id:          its BPF link id, 0 when none.
 * @serves:           ksmbd listens in this netns.
 * @conns_classified: connections classified.
 * @reqs_classified:  requests classified.
 * @class_clamped:    class words with reserved bits, clamped.
 * @verdict_clamped:  verdicts out of range, clamped.
 * @has_hooks:        the kernel reports the four below.
 * @sessions_classified: sessions classify_session() gave a class.
 * @trees_classified: tree connects classify_tree() gave a class.
 * @classes_initialised: times init_class() gave a class its reservation
 *                    and limit.
 * @class_params_clamped: times the kernel clamped what it gave.
 * @has_disp:         the dispatcher lines were there (a program is
 *                    attached, and the kernel has a dispatcher).
 * @max_inflight:     dispatch budget in force.
 * @budget_min:       smallest budget (adaptive), else max_inflight.
 * @budget_max:       largest budget (adaptive), else max_inflight.
 * @budget_base_ns:   the adaptive budget's measure of the storage's
 *                    service time, ns (0: not measured).
 * @budget_changes:   times the adaptive budget changed.
 * @inflight:         requests running now.
 * @queued:           requests waiting in the dispatcher.
 * @clients:          client queues.
 * @alloc_fail:       client allocations that failed (request run flat).
 * @has_held:         the kernel reports what it holds (payloads lines).
 * @payloads:         spliced READ payloads held by work items (global).
 * @payload_pages:    pages they reference, PAGE_SIZE units (global).
 * @classes:          "class:" lines in kernel order, each with its
 *                    "class_qos:" line if any; a class_qos line without
 *                    a class line adds a class of no requests at the
 *                    end (malloc'ed; free with ksched_free()).
 * @nclasses:         number of @classes.
 * @kv:               every "key: value" line as written, for -j status
 *                    (malloc'ed, ksched_free()).
 * @nkv:              number of @kv.
 * @skipped:          lines not understood, skipped.
 */
struct ksched_state {
	bool attached;
	char name[32];
	uint32_t link_id;
	bool serves;
	uint64_t conns_classified;
	uint64_t reqs_classified;
	uint64_t class_clamped;
	uint64_t verdict_clamped;
	bool has_hooks;
	uint64_t sessions_classified;
	uint64_t trees_classified;
	uint64_t classes_initialised;
	uint64_t class_params_clamped;
	bool has_disp;
	uint32_t max_inflight;
	uint32_t budget_min;
	uint32_t budget_max;
	uint64_t budget_base_ns;
	uint64_t budget_changes;
	uint32_t inflight;
	uint32_t queued;
	uint32_t clients;
	uint64_t alloc_fail;
	bool has_held;
	uint64_t payloads;
	uint64_t payload_pages;
	struct ksched_class *classes;
	unsigned int nclasses;
	struct ksched_kv {
		char key[48];
		char val[80];
	} *kv;
	unsigned int nkv;
	unsigned int skipped;
};

/**
 * struct ksched_client - one line of /proc/net/ksmbd_sched_clients
 * @id:         dispatcher client id.
 * @class_id:   its class.
 * @weight:     its weight, 1..255.
 * @peer:       its peer address (%pI6c), or "-" for a whole class and
 *              for a client keyed by ClientGUID.
 * @guid:       the ClientGUID that keys it (%pUl), or "" when none.
 * @conns:      connections feeding it.
 * @queued:     requests waiting.
 * @inflight:   requests running.
 * @dispatched: requests dispatched.
 * @bytes:      READ/WRITE bytes dispatched.
 */
struct ksched_client {
	uint32_t id;
	uint32_t class_id;
	uint32_t weight;
	char peer[48];
	char guid[40];
	uint64_t conns;
	uint64_t queued;
	uint64_t inflight;
	uint64_t dispatched;
	uint64_t bytes;
};

/**
 * enum ksched_group - which part of "status" a numeric key belongs to
 * @KSCHED_G_STATE:   attached, link_id, serves (shown in their own words).
 * @KSCHED_G_COUNTER: the classification counters.
 * @KSCHED_G_HOOKS:   the counters of classify_session(), classify_tree()
 *                    and init_class(), from a kernel that has them.
 * @KSCHED_G_DISP:    the dispatcher (present while a program is attached).
 * @KSCHED_G_HELD:    payloads held (all netns).
 */
enum ksched_group {
	KSCHED_G_STATE,
	KSCHED_G_COUNTER,
	KSCHED_G_HOOKS,
	KSCHED_G_DISP,
	KSCHED_G_HELD,
};

/**
 * struct ksched_field - a numeric "key: value" of /proc/net/ksmbd_sched,
 *                       the one list the parser and "status" use
 * @key:   the key, also the JSON member and the text label.
 * @off:   offset in struct ksched_state.
 * @size:  size there: 1 (bool), 4 or 8.
 * @group: see enum ksched_group.
 */
struct ksched_field {
	const char *key;
	size_t off, size;
	enum ksched_group group;
};

extern const struct ksched_field ksched_fields[];
extern const unsigned int ksched_nfields;

/**
 * struct ksched_client_field - one field of a client line, the one list
 *                              the parser and both listings use
 * @key:   its key in the kernel's line and in JSON ("peer", "conns").
 * @width: its column in the text listing (negative: left-justified).
 * @off:   offset in struct ksched_client.
 * @size:  size there: 4 or 8, or 0 for a string (@peer, @guid).
 * @max:   largest value accepted; of a string, the size of its buffer.
 */
struct ksched_client_field {
	const char *key;
	int width;
	size_t off, size;
	uint64_t max;
};

extern const struct ksched_client_field ksched_client_fields[];
extern const unsigned int ksched_client_nfields;

uint64_t ksched_value(const void *base, size_t off, size_t size);
int ksched_parse(FILE *f, struct ksched_state *st);
void ksched_free(struct ksched_state *st);
int ksched_parse_class(const char *line, struct ksched_class *c);
int ksched_parse_qos(const char *line, struct ksched_qos *q);
int ksched_parse_clients(FILE *f, struct ksched_client **out,
			 unsigned int *n);
uint64_t ksched_ring_lost(const char *stats);
uint64_t ksched_class_mean_ns(const struct ksched_class *c);
int ksched_hist_percentile(const uint64_t *hist, unsigned int n,
			   unsigned int pct, uint64_t *bound_ns, bool *open);

#endif /* SMB_CLASSIFY_PROCNET_H */
