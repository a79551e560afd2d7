// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit tests of the dispatcher of ksmbd's BPF scheduling hook.
 *
 * Included at the end of ksmbd_sched_disp.c (as fs/ext4/mballoc-test.c is
 * from mballoc.c), so that the dispatcher's static rules are reachable.
 * Each case builds a dispatcher, binds fake connections to clients (one
 * class id each), queues fake requests through ksmbd_disp_queue() and
 * finishes them through ksmbd_disp_work_done(), as the glue and the
 * workers do.  Two static stubs take the place of the world:
 *  - ksmbd_disp_now(): the clock is the case's own, moved by hand, so the
 *    stall guard, the watchdog, the completion charge and the adaptive
 *    budget see exact times;
 *  - ksmbd_sched_run(): a dispatched request is recorded, not run; a
 *    case asserts the exact order of picks ("ZAAB": one letter per
 *    request, the letter of its client).
 * The guard's delayed work is replaced by one that does nothing; a case
 * runs ksmbd_disp_guard_fn() itself when its clock says the guard would.
 *
 * How it runs: with CONFIG_SMB_SERVER_BPF_SCHED_KUNIT_TEST, which builds
 * the dispatcher and this suite without the BPF glue (ksmbd_sched.c), so
 * that they build on UML, which has no BPF JIT and so no
 * SMB_SERVER_BPF_SCHED:
 *
 *	./tools/testing/kunit/kunit.py run --kunitconfig=fs/smb/server
 *
 * Without the glue, this file provides ksmbd_sched_run() (only ever a
 * static stub's target) and defines the tracepoints.  With the glue
 * (SMB_SERVER_BPF_SCHED and KUNIT both built in) the same cases run at
 * boot against the real ksmbd_sched_run(), which carries the stub hook.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>

#if !IS_ENABLED(CONFIG_SMB_SERVER_BPF_SCHED)
#define CREATE_TRACE_POINTS
#include "ksmbd_sched_trace.h"

/**
 * ksmbd_sched_run() - queue a request on its workqueue (stand-in)
 * @work: the request
 *
 * Without the BPF glue only this suite feeds the dispatcher, and every
 * case redirects this function to its recorder.
 */
void ksmbd_sched_run(struct ksmbd_work *work)
{
	KUNIT_STATIC_STUB_REDIRECT(ksmbd_sched_run, work);
	WARN_ON_ONCE(1);
}
#endif

#define DT_A		0
#define DT_B		1
#define DT_C		2
#define DT_Z		3
#define DT_CLIENTS	4
#define DT_WORKS	512
#define DT_PICKS	512
#define DT_T0		(1000ULL * NSEC_PER_SEC)
#define DT_MS		NSEC_PER_MSEC

/**
 * struct disp_test - one case's world
 * @d:     the dispatcher under test
 * @now:   the clock, ns (ksmbd_disp_now())
 * @conn:  one connection per client: A, B, C and Z (DT_Z, which
 *         holds the slot while the others queue)
 * @work:  every request queued, in order
 * @nwork: how many
 * @pick:  the requests dispatched (ksmbd_sched_run()), in order
 * @npick: how many
 * @seen:  picks already returned by dt_picks()
 * @batch: dt_gen()'s requests to finish
 */
struct disp_test {
	struct ksmbd_sched_disp *d;
	u64 now;
	struct ksmbd_conn *conn[DT_CLIENTS];
	struct ksmbd_work *work[DT_WORKS];
	unsigned int nwork;
	struct ksmbd_work *pick[DT_PICKS];
	unsigned int npick;
	unsigned int seen;
	struct ksmbd_work *batch[DT_PICKS];
};

static u64 dt_now(void)
{
	struct kunit *test = kunit_get_current_test();
	struct disp_test *t = test->priv;

	return t->now;
}

static void dt_run(struct ksmbd_work *work)
{
	struct kunit *test = kunit_get_current_test();
	struct disp_test *t = test->priv;

	KUNIT_ASSERT_LT(test, t->npick, DT_PICKS);
	t->pick[t->npick++] = work;
}

static void dt_guard_noop(struct work_struct *wk)
{
}

/* The client letter of @work: "ABCZ"[i] for conn[i]. */
static char dt_letter(struct disp_test *t, struct ksmbd_work *work)
{
	int i;

	for (i = 0; i < DT_CLIENTS; i++)
		if (work->conn == t->conn[i])
			return "ABCZ"[i];
	return '?';
}

/**
 * dt_picks() - the picks since the last call, as client letters
 * @test: the case
 *
 * Return: a string that lives as long as the case, "" if none.
 */
static const char *dt_picks(struct kunit *test)
{
	struct disp_test *t = test->priv;
	unsigned int i, n = t->npick - t->seen;
	char *s = kunit_kzalloc(test, n + 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	for (i = 0; i < n; i++)
		s[i] = dt_letter(t, t->pick[t->seen + i]);
	t->seen = t->npick;
	return s;
}

/* @c repeated @n times, for the expected picks of long runs. */
static const char *dt_rep(struct kunit *test, char c, unsigned int n)
{
	char *s = kunit_kzalloc(test, n + 1, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, s);
	memset(s, c, n);
	return s;
}

/**
 * dt_start() - a dispatcher as a program's attach makes it
 * @test:         the case
 * @max_inflight: the program's budget (0: adaptive)
 * @timeout_ms:   its watchdog (0: KSMBD_SCHED_WATCHDOG_MS)
 */
static void dt_start(struct kunit *test, u32 max_inflight, u32 timeout_ms)
{
	struct disp_test *t = test->priv;

	t->d = ksmbd_disp_alloc(1, max_inflight, timeout_ms);
	KUNIT_ASSERT_NOT_NULL(test, t->d);
	/* the case runs the guard and the limit timer itself, when it likes */
	INIT_DELAYED_WORK(&t->d->guard, dt_guard_noop);
	INIT_DELAYED_WORK(&t->d->limit_work, dt_guard_noop);
}

/**
 * dt_client() - connection @i, bound to a client of its own
 * @test: the case
 * @i: DT_A, DT_B, DT_C or DT_Z
 * @weight: its class weight
 *
 * Return: the client.
 */
static struct ksmbd_sched_client *dt_client(struct kunit *test, int i,
					    u32 weight)
{
	u32 class_word = KSMBD_SCHED_CLASS(i + 1, weight, false);
	struct disp_test *t = test->priv;
	struct ksmbd_conn *conn;

	conn = kunit_kzalloc(test, sizeof(*conn), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, conn);
	KUNIT_ASSERT_EQ(test,
			ksmbd_disp_conn_bind(t->d, conn, class_word, NULL), 0);
	t->conn[i] = conn;
	return conn->sched.client;
}

/* A request of client @i, its fields set as ksmbd_sched.c sets them. */
static struct ksmbd_work *dt_work(struct kunit *test, int i, u16 command,
				  u64 claim)
{
	struct disp_test *t = test->priv;
	struct ksmbd_work *work;

	KUNIT_ASSERT_LT(test, t->nwork, DT_WORKS);
	work = kunit_kzalloc(test, sizeof(*work), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, work);
	work->conn = t->conn[i];
	work->sched.command = command;
	work->sched.bytes = min_t(u64, claim, KSMBD_SCHED_COST_MAX);
	work->sched.cost = max_t(u32, work->sched.bytes, KSMBD_SCHED_COST_MIN);
	work->sched.mem = 64;
	t->work[t->nwork++] = work;
	KUNIT_ASSERT_TRUE(test, ksmbd_disp_tryget(t->d));
	return work;
}

/**
 * dt_req() - client @i, logged in, sends a data request
 * @test:    the case
 * @i:       its client
 * @command: its SMB2 command
 * @claim:   its READ/WRITE Length, as much as its connection may ask (the
 *           cost up front is that, between KSMBD_SCHED_COST_MIN and
 *           _MAX); 0 for a command without one (IOCTL, FLUSH)
 * @moved:   what it will have moved when it completes
 *           (ksmbd_sched_moved()), its charge then
 *
 * Return: the request.
 */
static struct ksmbd_work *dt_req(struct kunit *test, int i, u16 command,
				 u64 claim, u32 moved)
{
	struct disp_test *t = test->priv;
	struct ksmbd_work *work = dt_work(test, i, command, claim);

	work->sched.moved = moved;
	ksmbd_disp_queue(t->d, work, false);
	return work;
}

/* Client @i sends a READ of @bytes, which reads them all. */
static struct ksmbd_work *dt_queue(struct kunit *test, int i, u32 bytes)
{
	return dt_req(test, i, SMB2_READ_HE, bytes, bytes);
}

/* Client @i sends @n READs of @bytes. */
static void dt_queue_n(struct kunit *test, int i, int n, u32 bytes)
{
	while (n--)
		dt_queue(test, i, bytes);
}

/* Client @i, logged in, sends a control request (a CLOSE). */
static struct ksmbd_work *dt_queue_control(struct kunit *test, int i)
{
	struct disp_test *t = test->priv;
	struct ksmbd_work *work = dt_work(test, i, SMB2_CLOSE_HE, 0);

	ksmbd_disp_queue(t->d, work, true);
	return work;
}

/* Client @i, not logged in yet, sends a SESSION_SETUP. */
static struct ksmbd_work *dt_queue_unauth(struct kunit *test, int i)
{
	struct disp_test *t = test->priv;
	struct ksmbd_work *work = dt_work(test, i, SMB2_SESSION_SETUP_HE, 0);

	work->sched.unauth = true;
	ksmbd_disp_queue(t->d, work, true);
	return work;
}

/*
 * Client @i, not logged in yet, sends a READ: a command that needs a
 * session (ksmbd_sched.c sets invalid), which ksmbd will refuse.
 */
static struct ksmbd_work *dt_queue_invalid(struct kunit *test, int i)
{
	struct disp_test *t = test->priv;
	struct ksmbd_work *work = dt_work(test, i, SMB2_READ_HE, 0);

	work->sched.unauth = true;
	work->sched.invalid = true;
	ksmbd_disp_queue(t->d, work, true);
	return work;
}

/* @work finishes: its worker calls ksmbd_disp_work_done(). */
static void dt_done(struct kunit *test, struct ksmbd_work *work)
{
	KUNIT_ASSERT_NOT_NULL(test, work->sched.disp);
	KUNIT_ASSERT_TRUE(test, work->sched.slot || work->sched.unauth);
	ksmbd_disp_work_done(work);
}

/* The oldest request of client @i (any: -1) that holds a slot finishes. */
static void dt_done_of(struct kunit *test, int i)
{
	struct disp_test *t = test->priv;
	struct ksmbd_work *work;
	unsigned int k;

	for (k = 0; k < t->npick; k++) {
		work = t->pick[k];
		if (work->sched.slot && (i < 0 || work->conn == t->conn[i]))
			break;
	}
	KUNIT_ASSERT_LT(test, k, t->npick);
	dt_done(test, t->pick[k]);
}

/* The oldest unauthenticated request running finishes; @n times. */
static void dt_done_unauth(struct kunit *test, int n)
{
	struct disp_test *t = test->priv;
	unsigned int k;

	while (n--) {
		for (k = 0; k < t->npick; k++)
			if (t->pick[k]->sched.unauth && t->pick[k]->sched.disp)
				break;
		KUNIT_ASSERT_LT(test, k, t->npick);
		dt_done(test, t->pick[k]);
	}
}

/* The oldest request that holds a slot finishes; @n times. */
static void dt_done_oldest(struct kunit *test, int n)
{
	while (n--)
		dt_done_of(test, -1);
}

static void dt_guard(struct kunit *test)
{
	struct disp_test *t = test->priv;

	ksmbd_disp_guard_fn(&t->d->guard.work);
}

static int dt_init(struct kunit *test)
{
	struct disp_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	if (!t)
		return -ENOMEM;
	t->now = DT_T0;
	test->priv = t;
	kunit_activate_static_stub(test, ksmbd_disp_now, dt_now);
	kunit_activate_static_stub(test, ksmbd_sched_run, dt_run);
	return 0;
}

/*
 * Detach (waiting requests are handed out without slots), finish every
 * request still tracked, unbind the connections: the last reference
 * frees the dispatcher.
 */
static void dt_exit(struct kunit *test)
{
	struct disp_test *t = test->priv;
	unsigned int i;

	if (!t->d)
		return;
	ksmbd_disp_kill(t->d);
	for (i = 0; i < t->nwork; i++)
		if (t->work[i]->sched.disp)
			ksmbd_disp_work_done(t->work[i]);
	for (i = 0; i < DT_CLIENTS; i++)
		if (t->conn[i])
			ksmbd_disp_conn_unbind(t->conn[i]);
}

/* ---- deficit round robin -------------------------------------------- */

/*
 * Weights 1:1, requests of half a quantum: two each per turn.  Z holds the
 * only slot while A and B queue, so that every later pick is contested.
 */
static void drr_equal_weights(struct kunit *test)
{
	struct ksmbd_sched_client *a, *b;

	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	a = dt_client(test, DT_A, 1);
	b = dt_client(test, DT_B, 1);
	dt_queue(test, DT_Z, SZ_4K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "Z");
	dt_queue_n(test, DT_A, 8, SZ_64K);
	dt_queue_n(test, DT_B, 8, SZ_64K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "");
	dt_done_oldest(test, 17);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "AABBAABBAABBAABB");
	KUNIT_EXPECT_EQ(test, a->dispatched, 8);
	KUNIT_EXPECT_EQ(test, b->dispatched, 8);
	KUNIT_EXPECT_EQ(test, a->cost, 8 * SZ_64K);
}

/* Weights 3:1, requests of one quantum: A three per turn, B one. */
static void drr_weights_3_1(struct kunit *test)
{
	struct ksmbd_sched_client *a, *b;

	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	a = dt_client(test, DT_A, 3);
	b = dt_client(test, DT_B, 1);
	KUNIT_EXPECT_EQ(test, a->quantum, 3 * KSMBD_SCHED_QUANTUM);
	dt_queue(test, DT_Z, SZ_4K);
	dt_queue_n(test, DT_A, 12, SZ_128K);
	dt_queue_n(test, DT_B, 4, SZ_128K);
	dt_done_oldest(test, 17);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ZAAABAAABAAABAAAB");
	KUNIT_EXPECT_EQ(test, a->bytes, 12 * SZ_128K);
	KUNIT_EXPECT_EQ(test, b->bytes, 4 * SZ_128K);
}

/*
 * Fair by cost, not by count: A's requests cost half of B's, so A is
 * served two for each of B's.
 */
static void drr_by_cost(struct kunit *test)
{
	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	dt_queue(test, DT_Z, SZ_4K);
	dt_queue_n(test, DT_A, 8, SZ_64K);
	dt_queue_n(test, DT_B, 4, SZ_128K);
	dt_done_oldest(test, 13);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ZAABAABAABAAB");
}

/*
 * A lone client's service is not charged: its deficit is untouched by a
 * 1 MiB request nobody else asked the slot for, before and after it
 * completes; what it cost is still counted.
 */
static void drr_uncontested_is_free(struct kunit *test)
{
	struct ksmbd_sched_client *a;

	dt_start(test, 1, 0);
	a = dt_client(test, DT_A, 1);
	dt_queue(test, DT_A, SZ_1M);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "A");
	KUNIT_EXPECT_EQ(test, a->deficit, KSMBD_SCHED_QUANTUM);
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_EQ(test, a->deficit, KSMBD_SCHED_QUANTUM);
	KUNIT_EXPECT_EQ(test, a->cost, SZ_1M);
}

/* A fixed budget: at most max_inflight requests hold a slot. */
static void drr_fixed_budget(struct kunit *test)
{
	struct disp_test *t = test->priv;

	dt_start(test, 2, 0);
	dt_client(test, DT_A, 1);
	dt_queue_n(test, DT_A, 5, SZ_4K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "AA");
	KUNIT_EXPECT_EQ(test, t->d->inflight, 2);
	KUNIT_EXPECT_EQ(test, t->d->queued, 3);
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "A");
	KUNIT_EXPECT_EQ(test, t->d->inflight, 2);
	KUNIT_EXPECT_EQ(test, t->d->queued, 2);
}

/*
 * A control request of a logged-in client never waits and takes no slot;
 * it is counted in its class, and charged KSMBD_SCHED_COST_MIN in its
 * client's round: A, in the round with a READ waiting, pays it; C, not in
 * the round, does not.
 */
static void control_charged_cost_min(struct kunit *test)
{
	struct disp_test *t = test->priv;
	struct ksmbd_sched_client *a, *c;
	struct ksmbd_work *work;

	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	a = dt_client(test, DT_A, 1);
	c = dt_client(test, DT_C, 1);
	dt_queue(test, DT_Z, SZ_4K);
	dt_queue(test, DT_A, SZ_4K);
	KUNIT_EXPECT_EQ(test, a->deficit, KSMBD_SCHED_QUANTUM);
	work = dt_queue_control(test, DT_A);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ZA");
	KUNIT_EXPECT_PTR_EQ(test, t->pick[1], work);
	KUNIT_EXPECT_FALSE(test, work->sched.slot);
	KUNIT_EXPECT_NULL(test, work->sched.disp);
	KUNIT_EXPECT_EQ(test, a->deficit,
			KSMBD_SCHED_QUANTUM - KSMBD_SCHED_COST_MIN);
	KUNIT_EXPECT_EQ(test, a->control, 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&a->stats->bypassed), 1);
	KUNIT_EXPECT_EQ(test, t->d->queued, 1);
	KUNIT_EXPECT_EQ(test, t->d->inflight, 1);

	dt_queue_control(test, DT_C);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "C");
	KUNIT_EXPECT_EQ(test, c->deficit, 0);
	KUNIT_EXPECT_EQ(test, c->control, 1);
}

/* ---- sparse clients --------------------------------------------------- */

/*
 * A and C are backlogged and contested (their turns alternate).  B, which
 * had nothing waiting, is served at the next free slot, ahead of C whose
 * turn it is; once its request is done it leaves the round.
 */
static void sparse_first(struct kunit *test)
{
	struct ksmbd_sched_client *b;

	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	dt_client(test, DT_A, 1);
	b = dt_client(test, DT_B, 1);
	dt_client(test, DT_C, 1);
	dt_queue(test, DT_Z, SZ_4K);
	dt_queue_n(test, DT_A, 8, SZ_128K);
	dt_queue_n(test, DT_C, 8, SZ_128K);
	dt_done_oldest(test, 3);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ZACA");
	dt_queue(test, DT_B, SZ_4K);
	KUNIT_EXPECT_FALSE(test, list_empty(&b->flow));
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "B");
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "C");
	KUNIT_EXPECT_TRUE(test, list_empty(&b->flow));
}

/*
 * A sparse burst is served first for one quantum only.  B's 80 requests
 * of 4 KiB arrive as in sparse_first: B takes its quantum from the new
 * list (32 requests), then joins the end of the round: C, whose turn it
 * was, goes first, then B's next quantum, then A and C, then B again.
 */
static void sparse_burst_one_quantum(struct kunit *test)
{
	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	dt_client(test, DT_C, 1);
	dt_queue(test, DT_Z, SZ_4K);
	dt_queue_n(test, DT_A, 8, SZ_128K);
	dt_queue_n(test, DT_C, 8, SZ_128K);
	dt_done_oldest(test, 3);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ZACA");
	dt_queue_n(test, DT_B, 80, SZ_4K);
	dt_done_oldest(test, 32);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), dt_rep(test, 'B', 32));
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "C");
	dt_done_oldest(test, 32);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), dt_rep(test, 'B', 32));
	dt_done_oldest(test, 3);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ACB");
}

/* ---- debt and the debt wheel ------------------------------------------ */

/*
 * A's 1 MiB READ costs eight quanta: A is in debt and is not served
 * again until the round has repaid it: it is parked in the debt wheel
 * for the eight rounds that do, and B, at one quantum a request, is
 * served once per round meanwhile.
 */
static void debt_parked_in_wheel(struct kunit *test)
{
	struct disp_test *t = test->priv;
	struct ksmbd_sched_client *a;

	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	a = dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	dt_queue(test, DT_Z, SZ_4K);
	dt_queue_n(test, DT_A, 3, SZ_1M);
	dt_queue_n(test, DT_B, 10, SZ_128K);
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ZA");
	KUNIT_EXPECT_EQ(test, a->deficit, (s64)KSMBD_SCHED_QUANTUM - SZ_1M);
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "B");
	KUNIT_EXPECT_EQ(test, a->where, KSMBD_FLOW_PARKED);
	KUNIT_EXPECT_EQ(test, a->park_credit, 8 * KSMBD_SCHED_QUANTUM);
	KUNIT_EXPECT_EQ(test, t->d->nparked, 1);
	KUNIT_EXPECT_EQ(test, t->d->parked_total, 1);
	dt_done_oldest(test, 10);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "BBBBBBBABB");
	KUNIT_EXPECT_EQ(test, t->d->parked_total, 2);
}

/*
 * Debt repaid in O(1): A's request claims 0xffffffff bytes, and its cost
 * up front is clamped at KSMBD_SCHED_COST_MAX; it really moves that much
 * (a compound of READs), so A owes 127 quanta more than it had.  It is
 * parked once, for the 128 rounds that repay it, instead of being passed
 * over by 127 picks: B is served once per round, 128 times, and A's next
 * request comes right after, in the round its debt is repaid.
 */
static void debt_max_repaid_in_o1(struct kunit *test)
{
	struct disp_test *t = test->priv;
	struct ksmbd_sched_client *a;
	struct ksmbd_work *big;

	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	a = dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	dt_queue(test, DT_Z, SZ_4K);
	big = dt_req(test, DT_A, SMB2_READ_HE, U32_MAX, KSMBD_SCHED_COST_MAX);
	KUNIT_EXPECT_EQ(test, big->sched.cost, KSMBD_SCHED_COST_MAX);
	dt_queue(test, DT_A, SZ_4K);
	dt_queue_n(test, DT_B, 200, SZ_128K);
	dt_done_oldest(test, 2);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ZAB");
	KUNIT_EXPECT_EQ(test, a->deficit,
			(s64)KSMBD_SCHED_QUANTUM - KSMBD_SCHED_COST_MAX);
	KUNIT_EXPECT_EQ(test, a->where, KSMBD_FLOW_PARKED);
	KUNIT_EXPECT_EQ(test, a->park_credit, 128 * KSMBD_SCHED_QUANTUM);
	KUNIT_EXPECT_EQ(test, t->d->nparked, 1);
	KUNIT_EXPECT_EQ(test, t->d->parked_total, 1);
	dt_done_oldest(test, 127);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), dt_rep(test, 'B', 127));
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "A");
	KUNIT_EXPECT_EQ(test, t->d->nparked, 0);
	KUNIT_EXPECT_EQ(test, t->d->parked_total, 1);
	KUNIT_EXPECT_EQ(test, a->deficit,
			KSMBD_SCHED_QUANTUM - KSMBD_SCHED_COST_MIN);
}

/*
 * A client that leaves the round in debt comes back in debt: not as a
 * sparse client with a fresh quantum, but at the end of the old list,
 * from where it is parked.  B, alone while A is away, keeps its quantum
 * (b0 went uncontested): its next request is served from it, then eight
 * more while A's debt is repaid, one round each.
 */
static void debt_survives_idle(struct kunit *test)
{
	struct ksmbd_sched_client *a;

	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	a = dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	dt_queue(test, DT_Z, SZ_4K);
	dt_queue(test, DT_A, SZ_1M);
	dt_queue_n(test, DT_B, 12, SZ_128K);
	dt_done_oldest(test, 2);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ZAB");
	KUNIT_EXPECT_TRUE(test, list_empty(&a->flow));
	KUNIT_EXPECT_EQ(test, a->deficit, (s64)KSMBD_SCHED_QUANTUM - SZ_1M);
	dt_queue(test, DT_A, SZ_128K);
	KUNIT_EXPECT_EQ(test, a->where, KSMBD_FLOW_OLD);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "");
	dt_done_oldest(test, 10);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "BBBBBBBBBA");
}

/* ---- the completion charge -------------------------------------------- */

/*
 * A READ is charged its Length when it is picked, and what it moved when
 * it completes: A's READ of 1 MiB at the end of a file read 4 KiB, and A
 * gets back all but 4 KiB of the eight quanta it was charged.
 */
static void charge_refunds_short_read(struct kunit *test)
{
	struct ksmbd_sched_client *a;

	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	a = dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	dt_queue(test, DT_Z, SZ_4K);
	dt_req(test, DT_A, SMB2_READ_HE, SZ_1M, SZ_4K);
	dt_queue_n(test, DT_B, 4, SZ_128K);
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ZA");
	KUNIT_EXPECT_EQ(test, a->deficit, (s64)KSMBD_SCHED_QUANTUM - SZ_1M);
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "B");
	KUNIT_EXPECT_EQ(test, a->where, KSMBD_FLOW_NONE);
	KUNIT_EXPECT_EQ(test, a->deficit,
			KSMBD_SCHED_QUANTUM - KSMBD_SCHED_COST_MIN);
	KUNIT_EXPECT_EQ(test, a->cost, SZ_4K);
	KUNIT_EXPECT_EQ(test, a->stats->cost, SZ_4K);
}

/*
 * The real cost is charged before the next pick: A's READ claimed 1 MiB
 * and read 4 KiB; when it finishes, A is refunded first, so its next
 * request is served from the same turn instead of A being parked in the
 * debt wheel for a debt it does not have.
 */
static void charge_before_next_pick(struct kunit *test)
{
	struct ksmbd_sched_client *a;

	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	a = dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	dt_queue(test, DT_Z, SZ_4K);
	dt_req(test, DT_A, SMB2_READ_HE, SZ_1M, SZ_4K);
	dt_queue(test, DT_A, SZ_4K);
	dt_queue_n(test, DT_B, 4, SZ_128K);
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ZA");
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "A");
	KUNIT_EXPECT_EQ(test, ((struct disp_test *)test->priv)->d->parked_total, 0);
	KUNIT_EXPECT_EQ(test, a->deficit, (s64)KSMBD_SCHED_QUANTUM - 2 * SZ_4K);
}

/*
 * A request other than a READ that moves little (a FLUSH, a small WRITE)
 * is charged the time it held its slot at the storage's rate, if that
 * costs more; a READ is charged its bytes, whatever its slot's time.  A's 1 MiB
 * READ held its slot 2^20 ns: the storage moves 1 byte per ns.  Then B's
 * FLUSHes hold their slots 500 us each: 500000 bytes of the storage's
 * time each.  The first went uncontested (counted, not charged) and made
 * B's estimate; the second was charged that estimate when picked and
 * 500000 bytes when it completed.  A's 4 KiB READ, 500 us in its slot
 * too, costs 4 KiB; its 4 KiB WRITE, 500 us, 500000 bytes.
 */
static void charge_by_time_once_rate_known(struct kunit *test)
{
	struct disp_test *t = test->priv;
	struct ksmbd_sched_client *a, *b;

	dt_start(test, 1, 0);
	a = dt_client(test, DT_A, 1);
	b = dt_client(test, DT_B, 1);
	dt_queue(test, DT_A, SZ_1M);
	t->now += SZ_1M;
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_EQ(test, t->d->rate, 1000 << 4);

	dt_req(test, DT_B, SMB2_FLUSH_HE, 0, 0);
	dt_queue(test, DT_A, SZ_4K);
	dt_req(test, DT_B, SMB2_FLUSH_HE, 0, 0);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "AB");
	t->now += 500 * NSEC_PER_USEC;
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_EQ(test, b->cost, 500000);
	KUNIT_EXPECT_EQ(test, b->est_cost, 500000);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "B");
	KUNIT_EXPECT_EQ(test, b->deficit, KSMBD_SCHED_QUANTUM - 500000);
	t->now += 500 * NSEC_PER_USEC;
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "A");
	KUNIT_EXPECT_EQ(test, b->cost, 2 * 500000);
	KUNIT_EXPECT_EQ(test, b->deficit, KSMBD_SCHED_QUANTUM - 500000);
	t->now += 500 * NSEC_PER_USEC;
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_EQ(test, a->cost, SZ_1M + SZ_4K);
	/* a 4 KiB WRITE is charged its slot's time, as the FLUSH */
	dt_req(test, DT_A, SMB2_WRITE_HE, SZ_4K, SZ_4K);
	t->now += 500 * NSEC_PER_USEC;
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_EQ(test, a->cost, SZ_1M + SZ_4K + 500000);
	/* the rate is learnt from large READs and WRITEs only */
	KUNIT_EXPECT_EQ(test, t->d->rate, 1000 << 4);
}

/*
 * A request with no READ/WRITE bytes has no price in its fields: A's
 * first server-side copy costs the floor when it is picked and 1 MiB,
 * what it moved, when it completes.  That becomes A's estimate, and A's
 * second copy is charged it when it is picked, so A pays for its copies
 * as it takes their slots rather than after: one copy, then B's eight
 * READs of 128 KiB while A repays, then A's second copy.
 */
static void charge_no_length_at_learnt_cost(struct kunit *test)
{
	struct ksmbd_sched_client *a;
	struct ksmbd_work *w1, *w2;

	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	a = dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	dt_queue(test, DT_Z, SZ_4K);
	w1 = dt_req(test, DT_A, SMB2_IOCTL_HE, 0, SZ_1M);
	w2 = dt_req(test, DT_A, SMB2_IOCTL_HE, 0, SZ_1M);
	dt_queue_n(test, DT_B, 12, SZ_128K);
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "ZA");
	KUNIT_EXPECT_EQ(test, w1->sched.cost, KSMBD_SCHED_COST_MIN);
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_EQ(test, a->est_cost, SZ_1M);
	KUNIT_EXPECT_EQ(test, a->deficit, (s64)KSMBD_SCHED_QUANTUM - SZ_1M);
	dt_done_oldest(test, 8);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "BBBBBBBBA");
	KUNIT_EXPECT_TRUE(test, w2->sched.slot);
	KUNIT_EXPECT_EQ(test, w2->sched.cost, SZ_1M);
	dt_done_oldest(test, 1);
	KUNIT_EXPECT_EQ(test, a->cost, 2 * SZ_1M);
	KUNIT_EXPECT_EQ(test, a->est_cost, SZ_1M);
}

/* ---- unauthenticated requests ----------------------------------------- */

/*
 * Requests that need a session, from a peer without one (READs that
 * ksmbd will refuse), run at KSMBD_SCHED_CLIENT_INVALID_PER_S a second
 * after a burst of KSMBD_SCHED_CLIENT_INVALID_BURST: of A's 20, the
 * first 16 run two at a time as they finish, the 17th waits for A's rate
 * (A held, the guard armed) while B's SESSION_SETUP runs at once; one
 * rate interval later the guard runs the 17th, a second later the 18th
 * (A runs two at a time), and the last two as those finish.  Z's READ
 * holds the only slot all along, but no data request waits for a slot:
 * the guard, running for A, does not take it as stuck.
 */
static void unauth_invalid_rate(struct kunit *test)
{
	struct disp_test *t = test->priv;
	u64 gap = NSEC_PER_SEC / KSMBD_SCHED_CLIENT_INVALID_PER_S;
	struct ksmbd_sched_client *a;
	struct ksmbd_work *b1;
	int i;

	dt_start(test, 1, 0);
	a = dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	dt_client(test, DT_Z, 1);
	dt_queue(test, DT_Z, SZ_4K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "Z");
	for (i = 0; i < 20; i++)
		dt_queue_invalid(test, DT_A);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "AA");
	dt_done_unauth(test, KSMBD_SCHED_CLIENT_INVALID_BURST);
	KUNIT_EXPECT_STREQ(test, dt_picks(test),
			   dt_rep(test, 'A', KSMBD_SCHED_CLIENT_INVALID_BURST - 2));
	KUNIT_EXPECT_EQ(test, a->unauth, 0);
	KUNIT_EXPECT_EQ(test, a->ctl_queued, 4);
	KUNIT_EXPECT_EQ(test, t->d->invalid_waits, 1);
	KUNIT_EXPECT_FALSE(test, list_empty(&a->held));
	KUNIT_EXPECT_TRUE(test, t->d->guard_armed);
	b1 = dt_queue_unauth(test, DT_B);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "B");
	dt_done(test, b1);

	t->now += gap;
	dt_guard(test);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "A");
	t->now += NSEC_PER_SEC;
	dt_guard(test);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "A");
	KUNIT_EXPECT_EQ(test, a->unauth, KSMBD_SCHED_CLIENT_UNAUTH_MAX);
	dt_done_unauth(test, 2);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "AA");
	KUNIT_EXPECT_EQ(test, a->ctl_queued, 0);
	dt_guard(test);
	KUNIT_EXPECT_TRUE(test, list_empty(&t->d->held));
	KUNIT_EXPECT_EQ(test, t->d->invalid_waits, 1);
	KUNIT_EXPECT_EQ(test, t->d->stall_admits, 0);
	KUNIT_EXPECT_EQ(test, t->d->stuck, 0);
	KUNIT_EXPECT_EQ(test, t->d->inflight, 1);
}

/*
 * Requests received before their connection had a session take no slot:
 * Z holds the only one, and A's first two SESSION_SETUPs run at once.
 * A's third waits for one of them (KSMBD_SCHED_CLIENT_UNAUTH_MAX), while
 * B's runs at once; when one of A's finishes, the waiting one runs.
 */
static void unauth_bound_per_client(struct kunit *test)
{
	struct disp_test *t = test->priv;
	struct ksmbd_sched_client *a, *b;
	struct ksmbd_work *a1, *third;

	dt_start(test, 1, 0);
	dt_client(test, DT_Z, 1);
	a = dt_client(test, DT_A, 1);
	b = dt_client(test, DT_B, 1);
	dt_queue(test, DT_Z, SZ_4K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "Z");
	a1 = dt_queue_unauth(test, DT_A);
	dt_queue_unauth(test, DT_A);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "AA");
	KUNIT_EXPECT_FALSE(test, a1->sched.slot);
	third = dt_queue_unauth(test, DT_A);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "");
	KUNIT_EXPECT_EQ(test, a->unauth, KSMBD_SCHED_CLIENT_UNAUTH_MAX);
	KUNIT_EXPECT_EQ(test, a->ctl_queued, 1);
	KUNIT_EXPECT_EQ(test, t->d->unauth_waits, 1);
	dt_queue_unauth(test, DT_B);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "B");
	KUNIT_EXPECT_EQ(test, b->unauth, 1);
	KUNIT_EXPECT_EQ(test, t->d->inflight, 1);
	KUNIT_EXPECT_EQ(test, t->d->queued, 0);

	dt_done(test, a1);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "A");
	KUNIT_EXPECT_PTR_EQ(test, t->pick[t->npick - 1], third);
	KUNIT_EXPECT_EQ(test, a->unauth, KSMBD_SCHED_CLIENT_UNAUTH_MAX);
	KUNIT_EXPECT_EQ(test, a->ctl_queued, 0);
	KUNIT_EXPECT_EQ(test, t->d->unauth_waits, 1);
	KUNIT_EXPECT_EQ(test, a->control, 3);
}

/* ---- stuck slots: the stall guard and the watchdog -------------------- */

/*
 * All slots held and none given back for KSMBD_SCHED_STALL_MS while
 * requests wait: the guard takes the oldest slot out of the budget (its
 * request is stuck) and B is served on it; again only after as long
 * without progress.  Nothing is bypassed.
 */
static void guard_stall_sticks_oldest(struct kunit *test)
{
	struct disp_test *t = test->priv;
	struct ksmbd_sched_client *a;

	dt_start(test, 2, 0);
	a = dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	dt_queue_n(test, DT_A, 2, SZ_4K);
	dt_queue_n(test, DT_B, 2, SZ_4K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "AA");
	t->now += (KSMBD_SCHED_STALL_MS - 1) * DT_MS;
	dt_guard(test);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "");
	t->now += DT_MS;
	dt_guard(test);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "B");
	KUNIT_EXPECT_TRUE(test, t->pick[0]->sched.stuck);
	KUNIT_EXPECT_EQ(test, t->d->stall_admits, 1);
	KUNIT_EXPECT_EQ(test, t->d->stuck, 1);
	KUNIT_EXPECT_EQ(test, a->stuck, 1);
	KUNIT_EXPECT_EQ(test, t->d->inflight, 2);
	t->now += KSMBD_SCHED_STALL_MS / 2 * DT_MS;
	dt_guard(test);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "");
	t->now += KSMBD_SCHED_STALL_MS / 2 * DT_MS;
	dt_guard(test);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "B");
	KUNIT_EXPECT_EQ(test, t->d->stall_admits, 2);
	KUNIT_EXPECT_EQ(test, a->stuck, 2);
	KUNIT_EXPECT_FALSE(test, t->d->bypass);

	/* a stuck request that finishes gives back no slot of the budget */
	dt_done(test, t->pick[0]);
	KUNIT_EXPECT_EQ(test, t->d->stuck, 1);
	KUNIT_EXPECT_EQ(test, a->stuck, 1);
	KUNIT_EXPECT_EQ(test, t->d->inflight, 2);
}

/*
 * The watchdog (timeout_ms, here 5 s from a replacing program): A's
 * request holds its slot while B's READs come and go every 100 ms.  At
 * 5 s A's slot is stuck and A quarantined: the slot leaves the budget and
 * B is served on it at once.  A's next request waits: A is held at its
 * slot bound (one of two slots, its stuck one).  Nothing is bypassed.
 */
static void watchdog_quarantines_stuck_client(struct kunit *test)
{
	struct disp_test *t = test->priv;
	struct ksmbd_sched_client *a;
	struct ksmbd_work *stuck;
	int i;

	dt_start(test, 2, 0);
	ksmbd_disp_update(t->d, 2, 5000);
	KUNIT_EXPECT_EQ(test, t->d->timeout_ms, 5000);
	a = dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	stuck = dt_queue(test, DT_A, SZ_4K);
	dt_queue_n(test, DT_B, 3, SZ_4K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "AB");
	for (i = 1; i < 50; i++) {
		t->now += 100 * DT_MS;
		dt_done_of(test, DT_B);
		dt_queue(test, DT_B, SZ_4K);
		dt_guard(test);
	}
	KUNIT_EXPECT_STREQ(test, dt_picks(test), dt_rep(test, 'B', 49));
	KUNIT_EXPECT_FALSE(test, stuck->sched.stuck);
	KUNIT_EXPECT_EQ(test, t->d->stall_admits, 0);

	t->now += 100 * DT_MS;
	dt_done_of(test, DT_B);
	dt_queue(test, DT_B, SZ_4K);
	dt_guard(test);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "BB");
	KUNIT_EXPECT_TRUE(test, stuck->sched.stuck);
	KUNIT_EXPECT_EQ(test, t->d->quarantined, 1);
	KUNIT_EXPECT_EQ(test, t->d->stuck, 1);
	KUNIT_EXPECT_EQ(test, t->d->inflight, 2);
	KUNIT_EXPECT_FALSE(test, t->d->bypass);

	dt_queue(test, DT_A, SZ_4K);
	KUNIT_EXPECT_EQ(test, ksmbd_disp_cap(t->d, a), 1);
	dt_done_of(test, DT_B);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "B");
	KUNIT_EXPECT_EQ(test, a->where, KSMBD_FLOW_CAPPED);
	KUNIT_EXPECT_EQ(test, t->d->capped_total, 1);

	dt_done(test, stuck);
	KUNIT_EXPECT_EQ(test, t->d->stuck, 0);
	dt_done_of(test, DT_B);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "A");
	KUNIT_EXPECT_FALSE(test, t->d->bypass);
}

/*
 * A client alone, all its slots stuck past timeout_ms and more of its
 * requests waiting: it is at its slot bound, and that is no failure of
 * the dispatcher: no bypass, however long it lasts.  When one of its
 * stuck requests finishes, its next one runs.
 */
static void watchdog_alone_at_bound_no_bypass(struct kunit *test)
{
	struct disp_test *t = test->priv;
	struct ksmbd_sched_client *a;

	dt_start(test, 2, KSMBD_SCHED_TIMEOUT_MS_MIN);
	a = dt_client(test, DT_A, 1);
	dt_queue_n(test, DT_A, 4, SZ_4K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "AA");
	t->now += KSMBD_SCHED_TIMEOUT_MS_MIN * DT_MS;
	dt_guard(test);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "");
	KUNIT_EXPECT_EQ(test, t->d->quarantined, 2);
	KUNIT_EXPECT_EQ(test, a->stuck, 2);
	KUNIT_EXPECT_EQ(test, t->d->inflight, 0);
	KUNIT_EXPECT_EQ(test, t->d->queued, 2);
	KUNIT_EXPECT_FALSE(test, t->d->bypass);
	t->now += 60ULL * NSEC_PER_SEC;
	dt_guard(test);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "");
	KUNIT_EXPECT_FALSE(test, t->d->bypass);
	KUNIT_EXPECT_EQ(test, t->d->bypass_wait_ns, 0);

	dt_done(test, t->pick[0]);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "A");
	KUNIT_EXPECT_EQ(test, a->stuck, 1);
	KUNIT_EXPECT_EQ(test, t->d->inflight, 1);
}

/* ---- the adaptive budget ---------------------------------------------- */

/*
 * The clock moves by @dt; every request that took its slot before then
 * finishes, oldest first, and (@refill) A sends one more for each, so
 * that as many wait as before.
 */
static void dt_gen(struct kunit *test, u64 dt, bool refill)
{
	struct disp_test *t = test->priv;
	struct ksmbd_work **batch = t->batch;
	unsigned int i, n = 0;

	t->now += dt;
	for (i = 0; i < t->npick; i++)
		if (t->pick[i]->sched.slot &&
		    t->pick[i]->sched.stime_ns < t->now)
			batch[n++] = t->pick[i];
	for (i = 0; i < n; i++) {
		dt_done(test, batch[i]);
		if (refill)
			dt_queue(test, DT_A, SZ_64K);
	}
}

/*
 * An adaptive budget between 4 and 32 slots whatever the CPUs, at 32, and
 * client A.  Return: the budget.
 */
static struct ksmbd_disp_budget *dt_budget_start(struct kunit *test)
{
	struct disp_test *t = test->priv;

	dt_start(test, 0, 0);
	t->d->budget.min = 4;
	t->d->budget.max = 32;
	t->d->max_inflight = 32;
	dt_client(test, DT_A, 1);
	return &t->d->budget;
}

/*
 * The default budget with a backlog (A keeps 40 waiting), between 4 and
 * 32 slots whatever the CPUs.  Its first busy window starts a probe (4
 * slots) that measures the storage's own time (0.5 ms) and goes back to
 * 32.  At 0.5 ms the budget would grow, but it is at its top.  At 2 ms,
 * q = 32 * (2 - 0.5) / 2 = 24 requests queue in the storage: the budget
 * shrinks by (24 - 3) / 2 to 22.  At 0.5 ms again it grows by one.  A
 * shorter time (0.25 ms) is faster storage: the new base at once.  Then
 * the requests block for ten seconds: each held its slot over
 * KSMBD_SCHED_STALL_MS, so none is a sample and nothing changes.  The
 * next busy window (100 ms) shrinks the budget (q = 22, to 14) and, its
 * base being ten seconds old, probes again: the storage has become
 * slower, which the probe takes as its new base (100 ms), back at 14; at
 * 100 ms the budget grows.
 */
static void budget_adapts(struct kunit *test)
{
	struct disp_test *t = test->priv;
	struct ksmbd_disp_budget *b;

	b = dt_budget_start(test);
	dt_queue_n(test, DT_A, 72, SZ_64K);
	KUNIT_EXPECT_EQ(test, t->d->inflight, 32);

	dt_gen(test, DT_MS, true);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 4);
	KUNIT_EXPECT_EQ(test, b->probe_ret, 32);
	KUNIT_EXPECT_EQ(test, b->changes, 1);

	dt_gen(test, DT_MS / 2, true);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 32);
	KUNIT_EXPECT_EQ(test, b->base_ns, DT_MS / 2);
	KUNIT_EXPECT_EQ(test, b->probe_ret, 0);
	KUNIT_EXPECT_EQ(test, b->changes, 2);
	KUNIT_EXPECT_EQ(test, t->d->inflight, 32);

	dt_gen(test, DT_MS / 2, true);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 32);
	KUNIT_EXPECT_EQ(test, b->changes, 2);

	dt_gen(test, 2 * DT_MS, true);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 22);
	KUNIT_EXPECT_EQ(test, b->changes, 3);

	dt_gen(test, DT_MS / 2, true);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 23);
	KUNIT_EXPECT_EQ(test, b->changes, 4);

	dt_gen(test, DT_MS / 4, true);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 23);
	KUNIT_EXPECT_EQ(test, b->base_ns, DT_MS / 4);
	KUNIT_EXPECT_EQ(test, b->changes, 4);

	dt_gen(test, KSMBD_SCHED_ADAPT_PROBE_MS * DT_MS, true);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 23);
	KUNIT_EXPECT_EQ(test, b->changes, 4);
	KUNIT_EXPECT_EQ(test, t->d->queued, 49);

	dt_gen(test, 100 * DT_MS, true);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 4);
	KUNIT_EXPECT_EQ(test, b->probe_ret, 14);
	KUNIT_EXPECT_EQ(test, b->changes, 5);

	dt_gen(test, 100 * DT_MS, true);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 14);
	KUNIT_EXPECT_EQ(test, b->base_ns, 100 * DT_MS);
	KUNIT_EXPECT_EQ(test, b->changes, 6);

	dt_gen(test, 100 * DT_MS, true);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 15);
	KUNIT_EXPECT_EQ(test, b->changes, 7);
}

/*
 * A request that held its slot as long as the stall guard waits (here
 * KSMBD_SCHED_STALL_MS: nothing finished before) was blocked, not queued
 * in the storage: no sample, and not in the average hold time either.
 * Two windows of requests held 10 s change nothing, and start no probe.
 */
static void budget_ignores_blocked(struct kunit *test)
{
	struct disp_test *t = test->priv;
	struct ksmbd_disp_budget *b;

	b = dt_budget_start(test);
	dt_queue_n(test, DT_A, 72, SZ_64K);
	dt_gen(test, 10 * MSEC_PER_SEC * DT_MS, true);
	dt_gen(test, 10 * MSEC_PER_SEC * DT_MS, true);
	KUNIT_EXPECT_EQ(test, t->d->held_avg, 0);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 32);
	KUNIT_EXPECT_EQ(test, b->changes, 0);
	KUNIT_EXPECT_EQ(test, b->win_n, 0);
	KUNIT_EXPECT_EQ(test, b->probe_ret, 0);
}

/*
 * Requests that never wait for a slot say nothing about the budget: 16 at
 * a time, 5 ms each, three windows; no probe, no change.
 */
static void budget_idle_learns_nothing(struct kunit *test)
{
	struct disp_test *t = test->priv;
	struct ksmbd_disp_budget *b;

	b = dt_budget_start(test);
	dt_queue_n(test, DT_A, 16, SZ_64K);
	dt_gen(test, 5 * DT_MS, true);
	dt_gen(test, 5 * DT_MS, true);
	dt_gen(test, 5 * DT_MS, true);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 32);
	KUNIT_EXPECT_EQ(test, b->changes, 0);
	KUNIT_EXPECT_EQ(test, b->base_ns, 0);
	KUNIT_EXPECT_EQ(test, b->win_n, 16);
}

/* A program's own budget does not adapt. */
static void budget_fixed_does_not_adapt(struct kunit *test)
{
	struct disp_test *t = test->priv;

	dt_start(test, 8, 0);
	dt_client(test, DT_A, 1);
	dt_queue_n(test, DT_A, 24, SZ_64K);
	dt_gen(test, 10 * DT_MS, true);
	dt_gen(test, 10 * DT_MS, true);
	KUNIT_EXPECT_FALSE(test, t->d->budget.on);
	KUNIT_EXPECT_EQ(test, t->d->max_inflight, 8);
	KUNIT_EXPECT_EQ(test, t->d->budget.changes, 0);
}

/* ---- clients by ClientGUID ------------------------------------------ */

/*
 * In a PER_PEER class of a session or tree, the connections of one
 * ClientGUID are one client whatever their addresses (multichannel), two
 * ClientGUIDs two clients; a GUID never meets an address key of the same
 * bytes; and a connection rebinds when its requests' class changes.
 */
static void clients_by_guid(struct kunit *test)
{
	static const u8 g1[16] = { 0xfe, 0x80, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
				   11, 12, 13, 14 };
	static const u8 g2[16] = { 0xfe, 0x80, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
				   11, 12, 13, 15 };
	u32 word = KSMBD_SCHED_CLASS(5, 2, true);
	struct disp_test *t = test->priv;
	struct ksmbd_conn *conn[4];
	struct ksmbd_sched_client *c1;
	int i;

	dt_start(test, 1, 0);
	for (i = 0; i < ARRAY_SIZE(conn); i++) {
		conn[i] = kunit_kzalloc(test, sizeof(*conn[i]), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, conn[i]);
		conn[i]->sched.ctx.family = AF_INET6;
		conn[i]->sched.ctx.peer_addr[0] = 0x20;
		conn[i]->sched.ctx.peer_addr[15] = i;
	}
	/* conn[3] is keyed by its address, which has g1's bytes */
	memcpy(conn[3]->sched.ctx.peer_addr, g1, 16);
	KUNIT_ASSERT_EQ(test, ksmbd_disp_conn_bind(t->d, conn[0], word, g1), 0);
	KUNIT_ASSERT_EQ(test, ksmbd_disp_conn_bind(t->d, conn[1], word, g1), 0);
	KUNIT_ASSERT_EQ(test, ksmbd_disp_conn_bind(t->d, conn[2], word, g2), 0);
	KUNIT_ASSERT_EQ(test, ksmbd_disp_conn_bind(t->d, conn[3], word,
						   NULL), 0);
	c1 = conn[0]->sched.client;
	KUNIT_EXPECT_PTR_EQ(test, conn[1]->sched.client, c1);
	KUNIT_EXPECT_EQ(test, c1->conns, 2);
	KUNIT_EXPECT_EQ(test, c1->quantum, 2 * KSMBD_SCHED_QUANTUM);
	KUNIT_EXPECT_PTR_NE(test, conn[2]->sched.client, c1);
	KUNIT_EXPECT_PTR_NE(test, conn[3]->sched.client, c1);
	KUNIT_EXPECT_EQ(test, t->d->nclients, 3);
	KUNIT_EXPECT_TRUE(test, conn[0]->sched.by_guid);
	KUNIT_EXPECT_FALSE(test, conn[3]->sched.by_guid);
	KUNIT_EXPECT_EQ(test, conn[0]->sched.word, word);

	/* a class without PER_PEER ignores the GUID: one client */
	ksmbd_disp_conn_unbind(conn[2]);
	KUNIT_ASSERT_EQ(test, ksmbd_disp_conn_bind(t->d, conn[2],
						   KSMBD_SCHED_CLASS(6, 1, false),
						   g2), 0);
	KUNIT_EXPECT_FALSE(test, conn[2]->sched.by_guid);
	KUNIT_EXPECT_EQ(test, conn[2]->sched.client->key.by_guid, 0);

	/* another class for conn[1]: it leaves c1 */
	ksmbd_disp_conn_unbind(conn[1]);
	KUNIT_ASSERT_EQ(test, ksmbd_disp_conn_bind(t->d, conn[1],
						   KSMBD_SCHED_CLASS(6, 1, false),
						   NULL), 0);
	KUNIT_EXPECT_PTR_EQ(test, conn[1]->sched.client,
			    conn[2]->sched.client);
	KUNIT_EXPECT_EQ(test, c1->conns, 1);
	for (i = 0; i < ARRAY_SIZE(conn); i++)
		ksmbd_disp_conn_unbind(conn[i]);
}

/* ---- reservation and limit ------------------------------------------ */

/* The case's clock moves on by @ns. */
static void dt_advance(struct kunit *test, u64 ns)
{
	struct disp_test *t = test->priv;

	t->now += ns;
}

/* Class @c's reservation and limit, as init_class() of program 1 gives. */
static void dt_qos(struct kunit *test, struct ksmbd_sched_client *c,
		   const struct ksmbd_sched_class_params *p)
{
	struct disp_test *t = test->priv;

	ksmbd_disp_class_set(t->d, c->class_word, p, 1);
	KUNIT_EXPECT_FALSE(test, ksmbd_disp_class_stale(t->d, c->class_word,
							1));
}

/* The limit timer fires at the case's clock. */
static void dt_limit_timer(struct kunit *test)
{
	struct disp_test *t = test->priv;

	ksmbd_disp_limit_fn(&t->d->limit_work.work);
}

/*
 * A limit of 100 IOPS with the default burst (100 ms): 11 4 KiB READs at
 * once (tags now to now + 100 ms conform, GCRA), then none with every
 * slot free, until the timer; 100 ms later 10 more.  Its wait is counted.
 */
static void limit_iops_paces(struct kunit *test)
{
	struct ksmbd_sched_class_params p = { .limit_iops = 100 };
	struct ksmbd_sched_client *a;

	dt_start(test, 64, 0);
	a = dt_client(test, DT_A, 1);
	dt_qos(test, a, &p);
	dt_queue_n(test, DT_A, 40, SZ_4K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), dt_rep(test, 'A', 11));
	KUNIT_EXPECT_EQ(test, a->where, KSMBD_FLOW_LIMITED);
	dt_done_oldest(test, 11);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "");
	dt_advance(test, 100 * DT_MS);
	dt_limit_timer(test);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), dt_rep(test, 'A', 10));
	KUNIT_EXPECT_EQ(test, a->stats->limited, 2);
	KUNIT_EXPECT_EQ(test, a->stats->throttled_ns, 100 * DT_MS);
}

/*
 * A limit of 1 MiB/s counts bytes of cost: 64 KiB READs take 62.5 ms of
 * it each, so 2 go at once, and 16 a second with the timer firing every
 * 10 ms.  A client of another class beside it is served while it waits
 * (work-conserving).
 */
static void limit_bytes_paces(struct kunit *test)
{
	struct ksmbd_sched_class_params p = { .limit_bps = SZ_1M };
	struct disp_test *t = test->priv;
	struct ksmbd_sched_client *a;
	int i;

	dt_start(test, 64, 0);
	a = dt_client(test, DT_A, 1);
	dt_client(test, DT_B, 1);
	dt_qos(test, a, &p);
	dt_queue_n(test, DT_A, 30, SZ_64K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "AA");
	dt_queue_n(test, DT_B, 3, SZ_64K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "BBB");
	for (i = 0; i < 100; i++) {
		dt_advance(test, 10 * DT_MS);
		dt_limit_timer(test);
		while (t->d->inflight)
			dt_done_oldest(test, 1);
	}
	KUNIT_EXPECT_STREQ(test, dt_picks(test), dt_rep(test, 'A', 16));
	KUNIT_EXPECT_EQ(test, a->bytes, 18 * SZ_64K);
}

/*
 * A reservation of 100 IOPS for B, weight 1, beside A of weight 8, one
 * slot, a request a millisecond: B is served ahead of the round about
 * every 10 ms (and a burst's worth when it arrives), never missed; the
 * rest goes by weight, so A has most of it (work-conserving).
 */
static void reservation_ahead_of_round(struct kunit *test)
{
	struct ksmbd_sched_class_params p = { .reservation_iops = 100 };
	struct ksmbd_sched_client *a, *b;
	unsigned int i, nb = 0;
	const char *picks;

	dt_start(test, 1, 0);
	a = dt_client(test, DT_A, 8);
	b = dt_client(test, DT_B, 1);
	dt_qos(test, b, &p);
	dt_queue_n(test, DT_A, 250, SZ_4K);
	dt_queue_n(test, DT_B, 100, SZ_4K);
	KUNIT_EXPECT_STREQ(test, dt_picks(test), "A");
	for (i = 0; i < 300; i++) {
		dt_advance(test, DT_MS);
		dt_done_oldest(test, 1);
	}
	picks = dt_picks(test);
	for (i = 0; picks[i]; i++)
		nb += picks[i] == 'B';
	KUNIT_EXPECT_EQ(test, strlen(picks), 300);
	KUNIT_EXPECT_GE(test, b->stats->res_served, 38);
	KUNIT_EXPECT_LE(test, b->stats->res_served, 42);
	KUNIT_EXPECT_EQ(test, b->stats->res_missed, 0);
	/* its weighted share of the rest comes on top */
	KUNIT_EXPECT_GT(test, nb, b->stats->res_served);
	KUNIT_EXPECT_GE(test, a->dispatched, 220);
}

/*
 * Two limited classes (200 IOPS of 4 KiB READs, 20 MiB/s of 1 MiB READs)
 * beside an unlimited one of 64 KiB READs, four slots, a second of
 * requests finishing every millisecond and the limit timer firing when
 * it is due: each limited class runs at its rate, the unlimited one
 * takes the rest, and every pick ends.
 */
static void limits_beside_unlimited(struct kunit *test)
{
	struct ksmbd_sched_class_params pa = { .limit_iops = 200 };
	struct ksmbd_sched_class_params pb = { .limit_bps = 20 * SZ_1M };
	struct disp_test *t = test->priv;
	struct ksmbd_sched_client *a, *b, *c;
	int i;

	dt_start(test, 4, 0);
	a = dt_client(test, DT_A, 1);
	b = dt_client(test, DT_B, 1);
	c = dt_client(test, DT_C, 1);
	dt_qos(test, a, &pa);
	dt_qos(test, b, &pb);
	dt_queue_n(test, DT_A, 120, SZ_4K);
	dt_queue_n(test, DT_B, 30, SZ_1M);
	dt_queue_n(test, DT_C, 200, SZ_64K);
	for (i = 0; i < 500; i++) {
		dt_advance(test, DT_MS);
		if (t->d->limit_armed && t->now >= t->d->limit_at)
			dt_limit_timer(test);
		if (t->d->inflight)
			dt_done_oldest(test, 1);
	}
	/* half a second: 100 + 20 (the burst) and 10 + 2 */
	KUNIT_EXPECT_GE(test, a->dispatched, 115);
	KUNIT_EXPECT_LE(test, a->dispatched, 122);
	KUNIT_EXPECT_GE(test, b->dispatched, 10);
	KUNIT_EXPECT_LE(test, b->dispatched, 13);
	KUNIT_EXPECT_GE(test, c->dispatched, 200);
}

static struct kunit_case ksmbd_disp_test_cases[] = {
	KUNIT_CASE(drr_equal_weights),
	KUNIT_CASE(drr_weights_3_1),
	KUNIT_CASE(drr_by_cost),
	KUNIT_CASE(drr_uncontested_is_free),
	KUNIT_CASE(drr_fixed_budget),
	KUNIT_CASE(control_charged_cost_min),
	KUNIT_CASE(sparse_first),
	KUNIT_CASE(sparse_burst_one_quantum),
	KUNIT_CASE(debt_parked_in_wheel),
	KUNIT_CASE(debt_max_repaid_in_o1),
	KUNIT_CASE(debt_survives_idle),
	KUNIT_CASE(charge_refunds_short_read),
	KUNIT_CASE(charge_by_time_once_rate_known),
	KUNIT_CASE(charge_before_next_pick),
	KUNIT_CASE(charge_no_length_at_learnt_cost),
	KUNIT_CASE(unauth_bound_per_client),
	KUNIT_CASE(unauth_invalid_rate),
	KUNIT_CASE(guard_stall_sticks_oldest),
	KUNIT_CASE(watchdog_quarantines_stuck_client),
	KUNIT_CASE(watchdog_alone_at_bound_no_bypass),
	KUNIT_CASE(budget_adapts),
	KUNIT_CASE(budget_ignores_blocked),
	KUNIT_CASE(budget_idle_learns_nothing),
	KUNIT_CASE(budget_fixed_does_not_adapt),
	KUNIT_CASE(clients_by_guid),
	KUNIT_CASE(limit_iops_paces),
	KUNIT_CASE(limit_bytes_paces),
	KUNIT_CASE(reservation_ahead_of_round),
	KUNIT_CASE(limits_beside_unlimited),
	{}
};

static struct kunit_suite ksmbd_disp_test_suite = {
	.name = "ksmbd_sched_disp",
	.init = dt_init,
	.exit = dt_exit,
	.test_cases = ksmbd_disp_test_cases,
};

kunit_test_suite(ksmbd_disp_test_suite);
