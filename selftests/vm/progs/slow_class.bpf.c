// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * slow_class.bpf.c - a classify_conn that can be held inside its call
 *
 * For "a connection accepted inside a link update" (30-replace): when
 * userspace sets armed, the next classify_conn clears it, sets entered,
 * and spins (bpf_loop, bounded: 10 s at most) until userspace sets
 * release; it records
 * whether it saw release before the bound ran out.  Userspace updates the
 * link while the call is held, so that connection is classified during
 * the update, deterministically.  Every call returns class_word.
 */
#include "ksmbd_sched_ops.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";


const volatile __u32 class_word = KSMBD_SCHED_CLASS(42, 1, 0);
/*
 * Bounds of the spin: bpf_loop's own maximum of 1 << 23 callbacks, and
 * SLOW_SPIN_NS of time (each callback reads the clock, so the count bound
 * is seconds too, even on a fast host).
 */
#define SLOW_SPIN_MAX	(1 << 23)
#define SLOW_SPIN_NS	(10ULL * 1000 * 1000 * 1000)

volatile int armed;
volatile int entered;
volatile int release;
volatile int saw_release;
volatile __u16 held_port;

struct slow_spin_ctx {
	__u64 end;
};

static long slow_spin(__u64 i, void *data)
{
	struct slow_spin_ctx *ctx = data;

	return release || bpf_ktime_get_ns() > ctx->end ? 1 : 0;
}

SEC("struct_ops/classify_conn")
__u32 BPF_PROG(slow_classify_conn, const struct ksmbd_sched_conn *c)
{
	struct slow_spin_ctx spin;

	if (armed) {
		armed = 0;
		held_port = c->peer_port;
		entered = 1;
		spin.end = bpf_ktime_get_ns() + SLOW_SPIN_NS;
		bpf_loop(SLOW_SPIN_MAX, slow_spin, &spin, 0);
		saw_release = release;
	}
	return class_word;
}

SEC(".struct_ops.link")
struct ksmbd_sched_ops slow_class = {
	.classify_conn	= (void *)slow_classify_conn,
	.name		= "slow_class",
};
