// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * BPF-controlled scheduling for ksmbd: struct_ops registration, per-netns
 * attach, and the two classification hooks.
 *
 * Attach model (see Documentation/ksmbd-sched.rst):
 *  - A ksmbd_sched_ops map is attached through a BPF struct_ops link.  reg()
 *    runs in the attaching task, so the link binds to current's network
 *    namespace.  One attachment per namespace; a second one is -EBUSY.
 *  - A link update replaces the ops of that attachment with one pointer
 *    store: every caller sees either the old or the new program.
 *  - unreg() (last link reference, or BPF_LINK_DETACH) may run without the
 *    BPF core's update mutex and from a worker; it finds its attachment by
 *    link, never by current.
 *  - A namespace that exits detaches in pre_exit; the link stays valid but
 *    inert until user space closes it.  No reference to the namespace is
 *    held by an attachment (as in kernel/bpf/net_namespace.c).
 *
 * Dispatch (only while a program is attached in the namespace):
 *  - Each attachment has a dispatcher.  A data request waits on its
 *    client's queue; clients are keyed by class id, and by peer address
 *    too when the class word has PER_PEER.  At most max_inflight data
 *    requests execute at once; when one finishes (or goes async), the
 *    next is taken from the next client in weighted round-robin order: a
 *    client of weight w gets w turns per round.
 *  - Control requests (negotiate, session, tree, close, cancel, echo,
 *    oplock/lease break acknowledgments, byte-range locks) never wait: an
 *    executing request may be waiting for one of them, and they are what
 *    keeps an interactive client interactive.  A compound message is one
 *    work item and is dispatched as one unit, by its first command.
 *  - Detaching (unload, netns exit) hands every waiting request to its
 *    workqueue at once; the dispatcher lives until the last of its
 *    requests has finished.
 */

#include <linux/bpf.h>
#include <linux/bpf_verifier.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/ctype.h>
#include <linux/hashtable.h>
#include <linux/init.h>
#include <linux/jhash.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/proc_fs.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/seq_file_net.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/sock.h>

#include "glob.h"
#include "connection.h"
#include "ksmbd_work.h"
#include "smb_common.h"
#include "ksmbd_sched.h"

#define CREATE_TRACE_POINTS
#include "ksmbd_sched_trace.h"

DEFINE_STATIC_KEY_FALSE(ksmbd_sched_enabled);
struct ksmbd_sched_held ksmbd_sched_held;

/**
 * struct ksmbd_sched_stats - per-netns counters, per CPU
 * @conns:          connections classified by a program
 * @reqs:           requests classified by a program
 * @class_clamped:  class words with reserved bits set (cleared)
 * @verdict_clamped: verdicts with an unknown queue (run per-CPU)
 */
struct ksmbd_sched_stats {
	u64 conns;
	u64 reqs;
	u64 class_clamped;
	u64 verdict_clamped;
};

/* Wait histogram: bucket i counts waits in [2^(i-1), 2^i) microseconds. */
#define KSMBD_SCHED_WAIT_BUCKETS	26

/**
 * struct ksmbd_sched_cstats - dispatch counters of one class
 * @dispatched: data requests dispatched
 * @bypassed:   control requests, run without waiting
 * @bytes:      READ/WRITE bytes requested by dispatched requests
 * @wait_ns:    sum of their waits in the dispatcher, ns
 * @hist:       waits, log2 buckets of microseconds
 */
struct ksmbd_sched_cstats {
	u64 dispatched;
	u64 bypassed;
	u64 bytes;
	u64 wait_ns;
	u64 hist[KSMBD_SCHED_WAIT_BUCKETS];
};

/**
 * struct ksmbd_sched_client - a client of the dispatcher
 * @hnode:    in ksmbd_sched_disp::clients
 * @rr:       on ksmbd_sched_disp::active, in round-robin order
 * @data:     its waiting data requests, FIFO
 * @class_word: class word of the connection that created it
 * @addr:     peer address when PER_PEER, else zero
 * @turns:    turns left in the current round
 * @queued:   length of @data
 * @stats:    counters of its class
 *
 * A client exists while it has waiting requests.
 */
struct ksmbd_sched_client {
	struct hlist_node hnode;
	struct list_head rr;
	struct list_head data;
	u32 class_word;
	u8 addr[16];
	u32 turns;
	u32 queued;
	struct ksmbd_sched_cstats *stats;
};

/**
 * struct ksmbd_sched_disp - the dispatcher of one attachment
 * @lock:         protects everything below
 * @active:       clients with waiting requests, next to serve first
 * @clients:      the same clients, by key
 * @classes:      class id -> struct ksmbd_sched_cstats
 * @inflight:     data requests holding a slot
 * @max_inflight: slots
 * @queued:       data requests waiting
 * @nclients:     clients with waiting requests
 * @alloc_fail:   requests run at once because memory was short
 * @dead:         detached: nothing waits any more
 * @ref:          one for the attachment, one per request it tracks
 * @netns_ino:    namespace, for the tracepoint
 * @rcu:          frees it after lockless readers of the attachment
 */
struct ksmbd_sched_disp {
	spinlock_t lock; /* see above */
	struct list_head active;
	DECLARE_HASHTABLE(clients, 8);
	struct xarray classes;
	u32 inflight;
	u32 max_inflight;
	u32 queued;
	u32 nclients;
	u64 alloc_fail;
	bool dead;
	refcount_t ref;
	u32 netns_ino;
	struct rcu_head rcu;
};

/**
 * struct ksmbd_sched_attach - one attached ksmbd_sched_ops link
 * @ops:  the ops in use; replaced by a link update; RCU
 * @link: the link, identity of the attachment
 * @net:  its namespace; NULL once the namespace has exited
 * @disp: its dispatcher
 * @node: on ksmbd_sched_attachments, under ksmbd_sched_mutex
 * @rcu:  frees the attachment after readers are done
 */
struct ksmbd_sched_attach {
	struct ksmbd_sched_ops __rcu *ops;
	struct bpf_link *link;
	struct net *net;
	struct ksmbd_sched_disp *disp;
	struct list_head node;
	struct rcu_head rcu;
};

/**
 * struct ksmbd_sched_net - per-netns state
 * @attach: the attachment of this namespace, or NULL; RCU, written under
 *          ksmbd_sched_mutex
 * @stats:  counters, read by /proc/net/ksmbd_sched
 */
struct ksmbd_sched_net {
	struct ksmbd_sched_attach __rcu *attach;
	struct ksmbd_sched_stats __percpu *stats;
};

static unsigned int ksmbd_sched_net_id __read_mostly;
static DEFINE_MUTEX(ksmbd_sched_mutex);
static LIST_HEAD(ksmbd_sched_attachments);
static struct workqueue_struct *ksmbd_sched_unbound_wq;

static struct ksmbd_sched_net *ksmbd_sched_pernet(const struct net *net)
{
	return net_generic(net, ksmbd_sched_net_id);
}

/* ---- the hooks ---------------------------------------------------------- */

static struct ksmbd_sched_ops *ksmbd_sched_ops_rcu(const struct net *net)
{
	struct ksmbd_sched_attach *a;

	a = rcu_dereference(ksmbd_sched_pernet(net)->attach);
	return a ? rcu_dereference(a->ops) : NULL;
}

/* Store @sa's address as 16 bytes, IPv4 as ::ffff:a.b.c.d. */
static u16 ksmbd_sched_addr(const struct sockaddr_storage *sa, u8 *addr,
			    u16 *port)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;

	if (sa->ss_family == AF_INET6) {
		memcpy(addr, &sin6->sin6_addr, 16);
		*port = ntohs(sin6->sin6_port);
		return ipv6_addr_v4mapped(&sin6->sin6_addr) ? AF_INET : AF_INET6;
	}
	if (sa->ss_family == AF_INET) {
		ipv6_addr_set_v4mapped(sin->sin_addr.s_addr,
				       (struct in6_addr *)addr);
		*port = ntohs(sin->sin_port);
		return AF_INET;
	}
	memset(addr, 0, 16);
	*port = 0;
	return AF_UNSPEC;
}

static u32 ksmbd_sched_clamp_class(struct ksmbd_sched_net *sn, u32 word)
{
	if (unlikely(word & ~KSMBD_SCHED_CLASS_VALID_MASK)) {
		this_cpu_inc(sn->stats->class_clamped);
		word &= KSMBD_SCHED_CLASS_VALID_MASK;
	}
	return word;
}

static u32 ksmbd_sched_clamp_verdict(struct ksmbd_sched_net *sn, u32 word)
{
	word &= KSMBD_SCHED_VERDICT_VALID_MASK;
	if (unlikely((word & KSMBD_SCHED_VERDICT_QUEUE_MASK) >
		     KSMBD_SCHED_QUEUE_MAX)) {
		this_cpu_inc(sn->stats->verdict_clamped);
		word &= ~KSMBD_SCHED_VERDICT_QUEUE_MASK;
	}
	return word;
}

/**
 * ksmbd_sched_conn_init() - record a new connection's namespace and peer
 * @conn: the connection, peer_addr set
 * @sock: its accepted socket
 *
 * Called for every accepted connection, attached or not: a program
 * attached later still needs the connection's namespace for its verdicts.
 * Takes a reference on the namespace, dropped by ksmbd_sched_conn_free().
 */
void ksmbd_sched_conn_init(struct ksmbd_conn *conn, struct socket *sock)
{
	conn->sched_net = get_net(sock_net(sock->sk));
	conn->sched_class = 0;
	ksmbd_sched_conn_accept(conn, sock);
}

/**
 * ksmbd_sched_conn_free() - release what ksmbd_sched_conn_init() took
 * @conn: the connection, whose receiver thread has exited
 */
void ksmbd_sched_conn_free(struct ksmbd_conn *conn)
{
	if (conn->sched_net) {
		put_net(conn->sched_net);
		conn->sched_net = NULL;
	}
}

void __ksmbd_sched_conn_accept(struct ksmbd_conn *conn, struct socket *sock)
{
	struct net *net = sock_net(sock->sk);
	struct ksmbd_sched_net *sn = ksmbd_sched_pernet(net);
	struct sockaddr_storage local;
	struct ksmbd_sched_conn ctx = {
		.transport = KSMBD_SCHED_TRANSPORT_TCP,
		.netns_ino = net->ns.inum,
	};
	struct ksmbd_sched_ops *ops;
	const char *name = "";
	u32 word = 0;

	ctx.family = ksmbd_sched_addr(&conn->peer_addr, ctx.peer_addr,
				      &ctx.peer_port);
	if (kernel_getsockname(sock, (struct sockaddr *)&local) >= 0)
		ksmbd_sched_addr(&local, ctx.local_addr, &ctx.local_port);

	rcu_read_lock();
	ops = ksmbd_sched_ops_rcu(net);
	if (ops) {
		name = ops->name;
		if (ops->classify_conn) {
			word = ksmbd_sched_clamp_class(sn,
						       ops->classify_conn(&ctx));
			this_cpu_inc(sn->stats->conns);
		}
	}
	trace_ksmbd_sched_conn(&ctx, word, name);
	rcu_read_unlock();

	conn->sched_class = word;
}

/* ---- dispatch ----------------------------------------------------------- */

static u32 ksmbd_sched_default_inflight(void)
{
	return clamp(4 * num_possible_cpus(), 8U, 256U);
}

/*
 * Requests that never wait in the dispatcher.  An executing request may be
 * blocked on one of these (an oplock or lease break on its acknowledgment,
 * a blocking lock on the UNLOCK, any request on its CANCEL), and they are
 * short.  MS-SMB2 3.3.5 lists their processing.
 */
static bool ksmbd_sched_is_control(const struct ksmbd_sched_req *r)
{
	if (r->flags & KSMBD_SCHED_REQ_SMB1)
		return true;
	switch (r->command) {
	case SMB2_NEGOTIATE_HE:
	case SMB2_SESSION_SETUP_HE:
	case SMB2_LOGOFF_HE:
	case SMB2_TREE_CONNECT_HE:
	case SMB2_TREE_DISCONNECT_HE:
	case SMB2_CLOSE_HE:
	case SMB2_LOCK_HE:
	case SMB2_CANCEL_HE:
	case SMB2_ECHO_HE:
	case SMB2_OPLOCK_BREAK_HE:
		return true;
	}
	return false;
}

static void ksmbd_sched_disp_put(struct ksmbd_sched_disp *d)
{
	struct ksmbd_sched_cstats *cs;
	unsigned long id;

	if (!refcount_dec_and_test(&d->ref))
		return;
	xa_for_each(&d->classes, id, cs)
		kfree(cs);
	xa_destroy(&d->classes);
	/* a queueing thread may still hold @d from the attachment, under RCU */
	kfree_rcu(d, rcu);
}

static struct ksmbd_sched_disp *
ksmbd_sched_disp_alloc(struct net *net, u32 max_inflight)
{
	struct ksmbd_sched_disp *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return NULL;
	spin_lock_init(&d->lock);
	INIT_LIST_HEAD(&d->active);
	hash_init(d->clients);
	xa_init(&d->classes);
	d->max_inflight = max_inflight ?: ksmbd_sched_default_inflight();
	refcount_set(&d->ref, 1);
	d->netns_ino = net->ns.inum;
	return d;
}

static u32 ksmbd_sched_client_hash(u32 class_word, const u8 *addr)
{
	return jhash(addr, 16, KSMBD_SCHED_CLASS_ID_OF(class_word));
}

static bool ksmbd_sched_same_client(const struct ksmbd_sched_client *c,
				    u32 class_word, const u8 *addr)
{
	return KSMBD_SCHED_CLASS_ID_OF(c->class_word) ==
	       KSMBD_SCHED_CLASS_ID_OF(class_word) &&
	       !memcmp(c->addr, addr, 16);
}

/* Caller holds d->lock. */
static struct ksmbd_sched_cstats *
ksmbd_sched_class_stats(struct ksmbd_sched_disp *d, u32 class_word)
{
	unsigned long id = KSMBD_SCHED_CLASS_ID_OF(class_word);
	struct ksmbd_sched_cstats *cs = xa_load(&d->classes, id);

	if (cs)
		return cs;
	cs = kzalloc(sizeof(*cs), GFP_ATOMIC);
	if (!cs)
		return NULL;
	if (xa_err(xa_store(&d->classes, id, cs, GFP_ATOMIC))) {
		kfree(cs);
		return NULL;
	}
	return cs;
}

/* Caller holds d->lock.  Finds or creates the client of @class_word. */
static struct ksmbd_sched_client *
ksmbd_sched_client_get(struct ksmbd_sched_disp *d, u32 class_word,
		       const u8 *peer)
{
	static const u8 any[16];
	const u8 *addr = class_word & KSMBD_SCHED_CLASS_PER_PEER ? peer : any;
	u32 key = ksmbd_sched_client_hash(class_word, addr);
	struct ksmbd_sched_client *c;
	u32 weight;

	hash_for_each_possible(d->clients, c, hnode, key)
		if (ksmbd_sched_same_client(c, class_word, addr))
			return c;

	c = kzalloc(sizeof(*c), GFP_ATOMIC);
	if (!c)
		return NULL;
	c->stats = ksmbd_sched_class_stats(d, class_word);
	if (!c->stats) {
		kfree(c);
		return NULL;
	}
	INIT_LIST_HEAD(&c->data);
	c->class_word = class_word;
	memcpy(c->addr, addr, 16);
	weight = KSMBD_SCHED_CLASS_WEIGHT_OF(class_word);
	c->turns = weight ?: 1;
	hash_add(d->clients, &c->hnode, key);
	list_add_tail(&c->rr, &d->active);
	d->nclients++;
	return c;
}

/* Caller holds d->lock. */
static void ksmbd_sched_client_free(struct ksmbd_sched_disp *d,
				    struct ksmbd_sched_client *c)
{
	hash_del(&c->hnode);
	list_del(&c->rr);
	d->nclients--;
	kfree(c);
}

static void ksmbd_sched_account(struct ksmbd_sched_cstats *cs,
				struct ksmbd_work *work, u64 wait)
{
	u64 us = wait / NSEC_PER_USEC;

	cs->dispatched++;
	cs->bytes += work->sched.bytes;
	cs->wait_ns += wait;
	cs->hist[min_t(u32, us ? ilog2(us) + 1 : 0,
		       KSMBD_SCHED_WAIT_BUCKETS - 1)]++;
}

/*
 * Take the next request in weighted round-robin order while a slot is
 * free, onto @batch.  Caller holds d->lock and queues @batch after
 * dropping it.
 */
static void ksmbd_sched_pick_locked(struct ksmbd_sched_disp *d,
				    struct list_head *batch, u64 now)
{
	while (d->inflight < d->max_inflight && !list_empty(&d->active)) {
		struct ksmbd_sched_client *c;
		struct ksmbd_work *work;
		u32 weight;

		c = list_first_entry(&d->active, struct ksmbd_sched_client, rr);
		work = list_first_entry(&c->data, struct ksmbd_work,
					sched.entry);
		list_move_tail(&work->sched.entry, batch);
		work->sched.clients = min_t(u32, d->nclients, U16_MAX);
		work->sched.slot = true;
		d->inflight++;
		d->queued--;
		ksmbd_sched_account(c->stats, work, now - work->sched.qtime_ns);

		if (!--c->queued) {
			ksmbd_sched_client_free(d, c);
			continue;
		}
		if (!--c->turns) {
			weight = KSMBD_SCHED_CLASS_WEIGHT_OF(c->class_word);
			c->turns = weight ?: 1;
			list_move_tail(&c->rr, &d->active);
		}
	}
}

static void ksmbd_sched_run(struct ksmbd_work *work)
{
	if ((work->sched.verdict & KSMBD_SCHED_VERDICT_QUEUE_MASK) ==
	    KSMBD_SCHED_QUEUE_UNBOUND)
		queue_work(ksmbd_sched_unbound_wq, &work->work);
	else
		ksmbd_queue_work(work);
}

static void ksmbd_sched_run_batch(struct ksmbd_sched_disp *d,
				  struct list_head *batch, u64 now)
{
	struct ksmbd_work *work, *tmp;

	list_for_each_entry_safe(work, tmp, batch, sched.entry) {
		list_del_init(&work->sched.entry);
		if (trace_ksmbd_sched_dispatch_enabled()) {
			u32 cw = work->conn->sched_class;
			u8 peer[16] = {};
			u16 port;

			if (cw & KSMBD_SCHED_CLASS_PER_PEER)
				ksmbd_sched_addr(&work->conn->peer_addr, peer,
						 &port);
			trace_ksmbd_sched_dispatch(d->netns_ino, cw, peer,
						   work->sched.command,
						   work->sched.verdict,
						   work->sched.bytes,
						   work->sched.slot,
						   work->sched.clients,
						   now - work->sched.qtime_ns);
		}
		ksmbd_sched_run(work);
	}
}

/*
 * Fill @r from the received message: the first PDU's header, or what an
 * encrypted or compressed message shows.  Lengths are checked against
 * the received size; a short message is classified by what fits.
 */
static void ksmbd_sched_req_ctx(struct ksmbd_work *work,
				struct ksmbd_sched_req *r)
{
	struct ksmbd_conn *conn = work->conn;
	unsigned int len = get_rfc1002_len(work->request_buf);
	const struct smb2_hdr *hdr = work->request_buf + 4;
	u16 port;

	r->class_word = conn->sched_class;
	r->pdu_len = len;
	r->command = KSMBD_SCHED_CMD_UNKNOWN;
	ksmbd_sched_addr(&conn->peer_addr, r->peer_addr, &port);

	if (len < sizeof(__le32))
		return;
	if (hdr->ProtocolId == SMB2_TRANSFORM_PROTO_NUM) {
		r->flags |= KSMBD_SCHED_REQ_ENCRYPTED;
		return;
	}
	if (hdr->ProtocolId == SMB2_COMPRESSION_TRANSFORM_ID) {
		r->flags |= KSMBD_SCHED_REQ_COMPRESSED;
		return;
	}
	if (hdr->ProtocolId == SMB1_PROTO_NUMBER) {
		r->flags |= KSMBD_SCHED_REQ_SMB1;
		return;
	}
	if (hdr->ProtocolId != SMB2_PROTO_NUMBER ||
	    len < sizeof(struct smb2_hdr))
		return;

	r->command = le16_to_cpu(hdr->Command);
	r->credit_charge = le16_to_cpu(hdr->CreditCharge);
	if (hdr->NextCommand)
		r->flags |= KSMBD_SCHED_REQ_COMPOUND;
	if (hdr->Flags & SMB2_FLAGS_SIGNED)
		r->flags |= KSMBD_SCHED_REQ_SIGNED;
	if (hdr->Flags & SMB2_FLAGS_ASYNC_COMMAND)
		r->flags |= KSMBD_SCHED_REQ_ASYNC;

	if (r->command == SMB2_READ_HE &&
	    len >= offsetof(struct smb2_read_req, Buffer)) {
		const struct smb2_read_req *rd = (const void *)hdr;

		r->length = le32_to_cpu(rd->Length);
		r->offset = le64_to_cpu(rd->Offset);
		if (rd->Channel != SMB2_CHANNEL_NONE)
			r->flags |= KSMBD_SCHED_REQ_RDMA_CHANNEL;
		if (rd->Flags & SMB2_READFLAG_REQUEST_COMPRESSED)
			r->flags |= KSMBD_SCHED_REQ_COMPRESSED;
	} else if (r->command == SMB2_WRITE_HE &&
		   len >= offsetof(struct smb2_write_req, Buffer)) {
		const struct smb2_write_req *wr = (const void *)hdr;

		r->length = le32_to_cpu(wr->Length);
		r->offset = le64_to_cpu(wr->Offset);
		if (wr->Channel != SMB2_CHANNEL_NONE)
			r->flags |= KSMBD_SCHED_REQ_RDMA_CHANNEL;
	}
}

void __ksmbd_sched_queue_work(struct ksmbd_work *work)
{
	struct ksmbd_conn *conn = work->conn;
	struct ksmbd_sched_disp *d = NULL;
	struct ksmbd_sched_req r = {};
	struct ksmbd_sched_client *c;
	struct ksmbd_sched_attach *a;
	struct ksmbd_sched_ops *ops;
	struct ksmbd_sched_net *sn;
	LIST_HEAD(batch);
	u64 now;

	if (!conn->sched_net)
		goto run;
	sn = ksmbd_sched_pernet(conn->sched_net);

	rcu_read_lock();
	a = rcu_dereference(sn->attach);
	if (a) {
		ops = rcu_dereference(a->ops);
		ksmbd_sched_req_ctx(work, &r);
		if (ops->classify_req) {
			work->sched.verdict =
				ksmbd_sched_clamp_verdict(sn,
							  ops->classify_req(&r));
			this_cpu_inc(sn->stats->reqs);
		}
		trace_ksmbd_sched_req(conn->sched_net->ns.inum, &r,
				      work->sched.verdict);
		d = a->disp;
		if (!refcount_inc_not_zero(&d->ref))
			d = NULL;
	}
	rcu_read_unlock();
	if (!d)
		goto run;

	work->sched.command = r.command;
	work->sched.bytes = r.length;
	work->sched.disp = d;
	now = ktime_get_ns();
	work->sched.qtime_ns = now;

	spin_lock(&d->lock);
	if (d->dead || ksmbd_sched_is_control(&r)) {
		struct ksmbd_sched_cstats *cs = NULL;

		if (!d->dead)
			cs = ksmbd_sched_class_stats(d, r.class_word);
		if (cs)
			cs->bypassed++;
		spin_unlock(&d->lock);
		list_add_tail(&work->sched.entry, &batch);
		ksmbd_sched_run_batch(d, &batch, now);
		return;
	}
	c = ksmbd_sched_client_get(d, r.class_word, r.peer_addr);
	if (unlikely(!c)) {
		d->alloc_fail++;
		spin_unlock(&d->lock);
		list_add_tail(&work->sched.entry, &batch);
		ksmbd_sched_run_batch(d, &batch, now);
		return;
	}
	list_add_tail(&work->sched.entry, &c->data);
	c->queued++;
	d->queued++;
	ksmbd_sched_pick_locked(d, &batch, now);
	spin_unlock(&d->lock);
	ksmbd_sched_run_batch(d, &batch, now);
	return;

run:
	ksmbd_sched_run(work);
}

/* Give back @work's slot and dispatch what it frees. */
static void ksmbd_sched_put_slot(struct ksmbd_sched_disp *d,
				 struct ksmbd_work *work)
{
	LIST_HEAD(batch);
	u64 now = ktime_get_ns();

	spin_lock(&d->lock);
	if (work->sched.slot) {
		work->sched.slot = false;
		d->inflight--;
		if (!d->dead)
			ksmbd_sched_pick_locked(d, &batch, now);
	}
	spin_unlock(&d->lock);
	ksmbd_sched_run_batch(d, &batch, now);
}

void __ksmbd_sched_work_done(struct ksmbd_work *work)
{
	struct ksmbd_sched_disp *d = work->sched.disp;

	ksmbd_sched_put_slot(d, work);
	work->sched.disp = NULL;
	ksmbd_sched_disp_put(d);
}

void __ksmbd_sched_release_slot(struct ksmbd_work *work)
{
	ksmbd_sched_put_slot(work->sched.disp, work);
}

/* A replacing program brings its own budget. */
static void ksmbd_sched_disp_resize(struct ksmbd_sched_disp *d,
				    u32 max_inflight)
{
	LIST_HEAD(batch);
	u64 now = ktime_get_ns();

	spin_lock(&d->lock);
	d->max_inflight = max_inflight ?: ksmbd_sched_default_inflight();
	ksmbd_sched_pick_locked(d, &batch, now);
	spin_unlock(&d->lock);
	ksmbd_sched_run_batch(d, &batch, now);
}

/*
 * Detach the dispatcher: nothing waits any more.  Every waiting request is
 * handed to its workqueue, in round-robin order, and keeps its reference
 * until it has run.  Caller holds ksmbd_sched_mutex.
 */
static void ksmbd_sched_disp_kill(struct ksmbd_sched_disp *d)
{
	struct ksmbd_sched_client *c, *tmp;
	LIST_HEAD(batch);
	u64 now = ktime_get_ns();

	spin_lock(&d->lock);
	d->dead = true;
	d->max_inflight = U32_MAX;
	ksmbd_sched_pick_locked(d, &batch, now);
	list_for_each_entry_safe(c, tmp, &d->active, rr)
		ksmbd_sched_client_free(d, c);
	spin_unlock(&d->lock);
	ksmbd_sched_run_batch(d, &batch, now);
	ksmbd_sched_disp_put(d);
}

/* ---- struct_ops --------------------------------------------------------- */

static u32 ksmbd_sched_classify_conn_stub(const struct ksmbd_sched_conn *c)
{
	return 0;
}

static u32 ksmbd_sched_classify_req_stub(const struct ksmbd_sched_req *r)
{
	return 0;
}

static struct ksmbd_sched_ops __bpf_ops_ksmbd_sched_ops = {
	.classify_conn = ksmbd_sched_classify_conn_stub,
	.classify_req = ksmbd_sched_classify_req_stub,
};

static int ksmbd_sched_bpf_init(struct btf *btf)
{
	return 0;
}

static const struct bpf_func_proto *
ksmbd_sched_get_func_proto(enum bpf_func_id func_id, const struct bpf_prog *prog)
{
	return bpf_base_func_proto(func_id, prog);
}

/*
 * Contexts are read-only: with no btf_struct_access callback the verifier
 * rejects every write through a PTR_TO_BTF_ID argument.
 */
static bool ksmbd_sched_is_valid_access(int off, int size,
					enum bpf_access_type type,
					const struct bpf_prog *prog,
					struct bpf_insn_access_aux *info)
{
	return bpf_tracing_btf_ctx_access(off, size, type, prog, info);
}

static const struct bpf_verifier_ops ksmbd_sched_verifier_ops = {
	.get_func_proto = ksmbd_sched_get_func_proto,
	.is_valid_access = ksmbd_sched_is_valid_access,
};

/*
 * The check bpf_obj_name_cpy() makes, which 6.12 does not export to
 * modules: a non-empty name of alphanumerics, '_' and '.', NUL-terminated
 * within @size.  Returns 0 and copies it (zero-padded), or -EINVAL.
 */
static int ksmbd_sched_name_cpy(char *dst, const char *src, size_t size)
{
	size_t i, len = strnlen(src, size);

	if (!len || len == size)
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (!isalnum(src[i]) && src[i] != '_' && src[i] != '.')
			return -EINVAL;
	memset(dst, 0, size);
	memcpy(dst, src, len);
	return 0;
}

static int ksmbd_sched_init_member(const struct btf_type *t,
				   const struct btf_member *member,
				   void *kdata, const void *udata)
{
	const struct ksmbd_sched_ops *uops = udata;
	struct ksmbd_sched_ops *ops = kdata;
	u32 moff = __btf_member_bit_offset(t, member) / 8;

	switch (moff) {
	case offsetof(struct ksmbd_sched_ops, max_inflight):
		if (uops->max_inflight > KSMBD_SCHED_MAX_INFLIGHT_LIMIT)
			return -E2BIG;
		ops->max_inflight = uops->max_inflight;
		return 1;
	case offsetof(struct ksmbd_sched_ops, flags):
		if (uops->flags & ~KSMBD_SCHED_OPS_FLAGS_MASK)
			return -EINVAL;
		ops->flags = uops->flags;
		return 1;
	case offsetof(struct ksmbd_sched_ops, name):
		if (ksmbd_sched_name_cpy(ops->name, uops->name,
					 sizeof(ops->name)))
			return -EINVAL;
		return 1;
	}
	return 0;
}

static int ksmbd_sched_check_member(const struct btf_type *t,
				    const struct btf_member *member,
				    const struct bpf_prog *prog)
{
	/* Both hooks run in contexts that must not sleep on BPF's behalf. */
	if (prog->sleepable)
		return -EINVAL;
	return 0;
}

static int ksmbd_sched_validate(void *kdata)
{
	const struct ksmbd_sched_ops *ops = kdata;

	return ops->name[0] ? 0 : -EINVAL;
}

/* Caller holds ksmbd_sched_mutex. */
static struct ksmbd_sched_attach *ksmbd_sched_find(const struct bpf_link *link)
{
	struct ksmbd_sched_attach *a;

	list_for_each_entry(a, &ksmbd_sched_attachments, node)
		if (a->link == link)
			return a;
	return NULL;
}

/* Caller holds ksmbd_sched_mutex; @a is attached to a live namespace. */
static void ksmbd_sched_detach_locked(struct ksmbd_sched_attach *a)
{
	RCU_INIT_POINTER(ksmbd_sched_pernet(a->net)->attach, NULL);
	a->net = NULL;
	/*
	 * a->disp stays: a queueing thread that found @a under RCU may still
	 * try refcount_inc_not_zero() on it; it is freed after a grace period.
	 */
	ksmbd_sched_disp_kill(a->disp);
	static_branch_dec(&ksmbd_sched_enabled);
}

static int ksmbd_sched_reg(void *kdata, struct bpf_link *link)
{
	const struct ksmbd_sched_ops *ops = kdata;
	struct net *net = current->nsproxy->net_ns;
	struct ksmbd_sched_net *sn = ksmbd_sched_pernet(net);
	struct ksmbd_sched_attach *a;
	int err = 0;

	/* A struct_ops map updated without a link has no owner to track. */
	if (!link)
		return -EOPNOTSUPP;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	a->disp = ksmbd_sched_disp_alloc(net, ops->max_inflight);
	if (!a->disp) {
		kfree(a);
		return -ENOMEM;
	}
	RCU_INIT_POINTER(a->ops, kdata);
	a->link = link;
	a->net = net;

	mutex_lock(&ksmbd_sched_mutex);
	if (rcu_access_pointer(sn->attach)) {
		err = -EBUSY;
		goto out;
	}
	list_add(&a->node, &ksmbd_sched_attachments);
	static_branch_inc(&ksmbd_sched_enabled);
	rcu_assign_pointer(sn->attach, a);
	a = NULL;
out:
	mutex_unlock(&ksmbd_sched_mutex);
	if (a) {
		ksmbd_sched_disp_put(a->disp);
		kfree(a);
	}
	return err;
}

static void ksmbd_sched_unreg(void *kdata, struct bpf_link *link)
{
	struct ksmbd_sched_attach *a;

	mutex_lock(&ksmbd_sched_mutex);
	a = ksmbd_sched_find(link);
	if (a) {
		if (a->net)
			ksmbd_sched_detach_locked(a);
		list_del(&a->node);
	}
	mutex_unlock(&ksmbd_sched_mutex);
	if (a)
		kfree_rcu(a, rcu);
}

static int ksmbd_sched_update(void *kdata, void *old_kdata,
			      struct bpf_link *link)
{
	const struct ksmbd_sched_ops *ops = kdata;
	struct ksmbd_sched_attach *a;
	int err = 0;

	mutex_lock(&ksmbd_sched_mutex);
	a = ksmbd_sched_find(link);
	if (!a) {
		err = -ENOENT;
	} else if (!a->net) {
		err = -ENOLINK;	/* its namespace has exited */
	} else if (rcu_access_pointer(a->ops) != old_kdata) {
		err = -EINVAL;
	} else {
		rcu_assign_pointer(a->ops, kdata);
		ksmbd_sched_disp_resize(a->disp, ops->max_inflight);
	}
	mutex_unlock(&ksmbd_sched_mutex);
	/*
	 * The BPF core frees old_kdata only after an RCU (and RCU tasks)
	 * grace period, so callers inside rcu_read_lock() may still finish
	 * a call into the old program.
	 */
	return err;
}

static struct bpf_struct_ops ksmbd_sched_bpf_ops = {
	.verifier_ops = &ksmbd_sched_verifier_ops,
	.init = ksmbd_sched_bpf_init,
	.check_member = ksmbd_sched_check_member,
	.init_member = ksmbd_sched_init_member,
	.validate = ksmbd_sched_validate,
	.reg = ksmbd_sched_reg,
	.unreg = ksmbd_sched_unreg,
	.update = ksmbd_sched_update,
	.cfi_stubs = &__bpf_ops_ksmbd_sched_ops,
	.name = "ksmbd_sched_ops",
	.owner = THIS_MODULE,
};

/* ---- per-netns state and /proc/net/ksmbd_sched ------------------------- */

/*
 * Dispatcher state, then one "class:" line per class seen:
 *   class: ID dispatched N bypassed N bytes N wait_ns N hist H0,H1,...
 * where Hi counts waits in [2^(i-1), 2^i) us (H0: under 1 us).
 */
static void ksmbd_sched_disp_show(struct seq_file *m,
				  struct ksmbd_sched_disp *d)
{
	struct ksmbd_sched_cstats *cs, snap;
	unsigned long id;
	int i;

	spin_lock(&d->lock);
	seq_printf(m, "max_inflight: %u\n", d->max_inflight);
	seq_printf(m, "inflight: %u\n", d->inflight);
	seq_printf(m, "queued: %u\n", d->queued);
	seq_printf(m, "clients: %u\n", d->nclients);
	seq_printf(m, "alloc_fail: %llu\n", d->alloc_fail);
	spin_unlock(&d->lock);

	xa_for_each(&d->classes, id, cs) {
		spin_lock(&d->lock);
		snap = *cs;
		spin_unlock(&d->lock);
		seq_printf(m, "class: %lu dispatched %llu bypassed %llu bytes %llu wait_ns %llu hist ",
			   id, snap.dispatched, snap.bypassed, snap.bytes,
			   snap.wait_ns);
		for (i = 0; i < KSMBD_SCHED_WAIT_BUCKETS; i++)
			seq_printf(m, i ? ",%llu" : "%llu", snap.hist[i]);
		seq_putc(m, '\n');
	}
}

static int ksmbd_sched_proc_show(struct seq_file *m, void *v)
{
	struct net *net = seq_file_single_net(m);
	struct ksmbd_sched_net *sn = ksmbd_sched_pernet(net);
	struct ksmbd_sched_stats sum = {};
	struct ksmbd_sched_attach *a;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct ksmbd_sched_stats *s = per_cpu_ptr(sn->stats, cpu);

		sum.conns += READ_ONCE(s->conns);
		sum.reqs += READ_ONCE(s->reqs);
		sum.class_clamped += READ_ONCE(s->class_clamped);
		sum.verdict_clamped += READ_ONCE(s->verdict_clamped);
	}

	mutex_lock(&ksmbd_sched_mutex);
	a = rcu_dereference_protected(sn->attach,
				      lockdep_is_held(&ksmbd_sched_mutex));
	seq_printf(m, "attached: %d\n", a ? 1 : 0);
	seq_printf(m, "name: %s\n",
		   a ? rcu_dereference_protected(a->ops, 1)->name : "-");
	seq_printf(m, "link_id: %u\n", a ? a->link->id : 0);
	if (a)
		ksmbd_sched_disp_show(m, a->disp);
	mutex_unlock(&ksmbd_sched_mutex);
	/* 6.12 ksmbd creates its listeners in the initial namespace only. */
	seq_printf(m, "serves: %d\n", net_eq(net, &init_net) ? 1 : 0);
	seq_printf(m, "netns_ino: %u\n", net->ns.inum);
	seq_printf(m, "conns_classified: %llu\n", sum.conns);
	seq_printf(m, "reqs_classified: %llu\n", sum.reqs);
	seq_printf(m, "class_clamped: %llu\n", sum.class_clamped);
	seq_printf(m, "verdict_clamped: %llu\n", sum.verdict_clamped);
	seq_printf(m, "payloads: %ld\n",
		   atomic_long_read(&ksmbd_sched_held.payloads));
	seq_printf(m, "payload_pages: %ld\n",
		   atomic_long_read(&ksmbd_sched_held.payload_pages));
	return 0;
}

static int __net_init ksmbd_sched_net_init(struct net *net)
{
	struct ksmbd_sched_net *sn = ksmbd_sched_pernet(net);

	sn->stats = alloc_percpu(struct ksmbd_sched_stats);
	if (!sn->stats)
		return -ENOMEM;
	if (!proc_create_net_single("ksmbd_sched", 0444, net->proc_net,
				    ksmbd_sched_proc_show, NULL)) {
		free_percpu(sn->stats);
		return -ENOMEM;
	}
	return 0;
}

/* Detach before the namespace goes: its link stays open but inert. */
static void __net_exit ksmbd_sched_net_pre_exit(struct net *net)
{
	struct ksmbd_sched_net *sn = ksmbd_sched_pernet(net);
	struct ksmbd_sched_attach *a;

	mutex_lock(&ksmbd_sched_mutex);
	a = rcu_dereference_protected(sn->attach,
				      lockdep_is_held(&ksmbd_sched_mutex));
	if (a)
		ksmbd_sched_detach_locked(a);
	mutex_unlock(&ksmbd_sched_mutex);
}

static void __net_exit ksmbd_sched_net_exit(struct net *net)
{
	struct ksmbd_sched_net *sn = ksmbd_sched_pernet(net);

	remove_proc_entry("ksmbd_sched", net->proc_net);
	/* Connections hold a reference on their namespace: none are left. */
	free_percpu(sn->stats);
}

static struct pernet_operations ksmbd_sched_net_ops = {
	.init = ksmbd_sched_net_init,
	.pre_exit = ksmbd_sched_net_pre_exit,
	.exit = ksmbd_sched_net_exit,
	.id = &ksmbd_sched_net_id,
	.size = sizeof(struct ksmbd_sched_net),
};

/**
 * ksmbd_sched_init() - register the per-netns state and the struct_ops type
 *
 * Called from ksmbd's own init: register_bpf_struct_ops() must run where
 * the type's BTF is (vmlinux for built-in ksmbd, the module otherwise).
 *
 * Return: 0, or a negative errno from the pernet or struct_ops registration.
 */
int ksmbd_sched_init(void)
{
	int err;

	/*
	 * Verdict queue 1: unbound, with the system's default affinity
	 * scope (workqueue.default_affinity_scope, "cache" unless set).
	 * apply_workqueue_attrs() is not exported to modules; WQ_SYSFS
	 * lets the administrator choose another scope instead, e.g. "cpu"
	 * in /sys/devices/virtual/workqueue/ksmbd-io-unbound/affinity_scope
	 * (Documentation/core-api/workqueue.rst, "Affinity Scopes").
	 */
	ksmbd_sched_unbound_wq = alloc_workqueue("ksmbd-io-unbound",
						 WQ_UNBOUND | WQ_SYSFS, 0);
	if (!ksmbd_sched_unbound_wq)
		return -ENOMEM;

	err = register_pernet_subsys(&ksmbd_sched_net_ops);
	if (err)
		goto err_wq;
	err = register_bpf_struct_ops(&ksmbd_sched_bpf_ops, ksmbd_sched_ops);
	if (err)
		goto err_pernet;
	return 0;

err_pernet:
	unregister_pernet_subsys(&ksmbd_sched_net_ops);
err_wq:
	destroy_workqueue(ksmbd_sched_unbound_wq);
	return err;
}

/**
 * ksmbd_sched_exit() - undo ksmbd_sched_init()
 *
 * A struct_ops type cannot be unregistered; its module reference keeps
 * ksmbd loaded while a map of the type exists.
 */
void ksmbd_sched_exit(void)
{
	unregister_pernet_subsys(&ksmbd_sched_net_ops);
	destroy_workqueue(ksmbd_sched_unbound_wq);
}
