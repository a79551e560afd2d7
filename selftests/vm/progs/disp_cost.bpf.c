// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * disp_cost.bpf.c - how long kernel functions take, per call, in the guest
 *
 * For the per-dispatch cost bench (selftests/bench/cost-clients.sh, through
 * the loader selftests/vm/dispcost): up to DC_SLOTS functions, each timed by
 * an fentry/fexit pair (fe<i>/fx<i>) whose target the loader sets at run
 * time (bpf_program__set_attach_target()).  fentry records the time in a
 * hash keyed by (thread, slot); fexit adds the duration to the slot's
 * per-CPU calls, sum and log-linear histogram (8 buckets per power of
 * two: DC_BUCKETS, see dc_bucket()).  The time of the trampolines and
 * of these programs is part of every duration, the same for every call.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "disp_cost.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DC_SLOTS);
	__type(key, __u32);
	__type(value, struct dc_stat);
} dc_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} dc_start SEC(".maps");

/* dc_bucket() - histogram bucket of @v ns: v below 8 as is, else 8 per octave. */
static __always_inline __u32 dc_bucket(__u64 v)
{
	__u64 x = v;
	__u32 m = 0, idx;

	if (v < 8)
		return v;
	/* m = floor(log2(v)), by halving the range */
	if (x >> 32) {
		x >>= 32;
		m += 32;
	}
	if (x >> 16) {
		x >>= 16;
		m += 16;
	}
	if (x >> 8) {
		x >>= 8;
		m += 8;
	}
	if (x >> 4) {
		x >>= 4;
		m += 4;
	}
	if (x >> 2) {
		x >>= 2;
		m += 2;
	}
	if (x >> 1)
		m += 1;
	idx = 8 + (m - 3) * 8 + ((v >> (m - 3)) & 7);
	return idx < DC_BUCKETS ? idx : DC_BUCKETS - 1;
}

static __always_inline __u64 dc_key(__u32 slot)
{
	return (bpf_get_current_pid_tgid() << 3) | slot;
}

static __always_inline int dc_enter(__u32 slot)
{
	__u64 key = dc_key(slot), t = bpf_ktime_get_ns();

	bpf_map_update_elem(&dc_start, &key, &t, BPF_ANY);
	return 0;
}

static __always_inline int dc_leave(__u32 slot)
{
	__u64 key = dc_key(slot), *t, d;
	struct dc_stat *st;
	__u32 b;

	t = bpf_map_lookup_elem(&dc_start, &key);
	if (!t)
		return 0;
	d = bpf_ktime_get_ns() - *t;
	bpf_map_delete_elem(&dc_start, &key);
	st = bpf_map_lookup_elem(&dc_stats, &slot);
	if (!st)
		return 0;
	st->calls++;
	st->ns += d;
	b = dc_bucket(d);
	if (b < DC_BUCKETS)
		st->hist[b]++;
	return 0;
}

#define DC_PAIR(i)						\
SEC("fentry")							\
int BPF_PROG(fe##i)						\
{								\
	return dc_enter(i);					\
}								\
SEC("fexit")							\
int BPF_PROG(fx##i)						\
{								\
	return dc_leave(i);					\
}

DC_PAIR(0)
DC_PAIR(1)
DC_PAIR(2)
DC_PAIR(3)
