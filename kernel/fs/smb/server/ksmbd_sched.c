// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * BPF-controlled scheduling for ksmbd: struct_ops registration, per-netns
 * attach, and the classification hooks.
 *
 * Attach model (see Documentation/ksmbd-sched.rst):
 *  - A ksmbd_sched_ops map is attached through a BPF struct_ops link.  reg()
 *    runs in the attaching task, so the link binds to current's network
 *    namespace; the task needs CAP_NET_ADMIN over that namespace (its
 *    owning user namespace), as for the namespace's other BPF hooks
 *    (netns BPF links, tc, XDP), beside the BPF core's own checks.  One
 *    attachment per namespace; a second one is -EBUSY.
 *  - A link update replaces the ops of that attachment with one pointer
 *    store: every caller sees either the old or the new program.
 *  - unreg() (last link reference, or BPF_LINK_DETACH) may run without the
 *    BPF core's update mutex and from a worker; it finds its attachment by
 *    link, never by current.
 *  - A namespace that exits detaches in pre_exit; the link stays valid but
 *    inert until user space closes it.  No reference to the namespace is
 *    held by an attachment (as in kernel/bpf/net_namespace.c).
 *
 * Requests (only while a program is attached in the namespace):
 *  - An encrypted message is decrypted before it is classified; each
 *    message gets a verdict from classify_req() and goes to the
 *    attachment's dispatcher (ksmbd_sched_disp.c), which decides when it
 *    runs: deficit round robin across clients, bounded in flight, control
 *    requests first.
 *  - A connection accepted before the attached program (load, replace)
 *    is classified again by it at its next request (a generation count).
 *  - A request is dispatched by the class of its tree connect, else of
 *    its session, else of its connection.  A session and a tree connect
 *    are classified at the first request that names them once they are
 *    set up, and again after a replace; their words are kept in
 *    ksmbd_session and ksmbd_tree_connect with the program's generation.
 *  - A request that waits for another party gives its slot back:
 *    ksmbd_sched_wait().
 */

#include <linux/bpf.h>
#include <linux/bpf_verifier.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/capability.h>
#include <linux/ctype.h>
#include <linux/init.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
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
#include <kunit/static_stub.h>

#include "glob.h"
#include "connection.h"
#include "mgmt/share_config.h"
#include "mgmt/tree_connect.h"
#include "mgmt/user_config.h"
#include "mgmt/user_session.h"
#include "ksmbd_work.h"
#include "smb_common.h"
#include "smb2pdu.h"
#include "server.h"
#include "ksmbd_sched.h"
#include "ksmbd_sched_disp.h"

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
 * @reclassified:   connections classified again by a newer program
 * @sessions:       sessions classified by a program
 * @trees:          tree connects classified by a program
 * @classes:        classes given their parameters by init_class()
 * @params_clamped: class parameters out of range (clamped)
 */
struct ksmbd_sched_stats {
	u64 conns;
	u64 reqs;
	u64 class_clamped;
	u64 verdict_clamped;
	u64 reclassified;
	u64 sessions;
	u64 trees;
	u64 classes;
	u64 params_clamped;
};

/**
 * struct ksmbd_sched_attach - one attached ksmbd_sched_ops link
 * @ops:  the ops in use; replaced by a link update; RCU
 * @link: the link, identity of the attachment
 * @net:  its namespace; NULL once the namespace has exited
 * @disp: its dispatcher
 * @gen:  generation of @ops: a connection classified by an older one is
 *        classified again at its next request
 * @node: on ksmbd_sched_attachments, under ksmbd_sched_mutex
 * @rcu:  frees the attachment after readers are done
 */
struct ksmbd_sched_attach {
	struct ksmbd_sched_ops __rcu *ops;
	struct bpf_link *link;
	struct net *net;
	struct ksmbd_sched_disp *disp;
	u32 gen;
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
/* generations of attached programs; 0 is "none" */
static atomic_t ksmbd_sched_gen = ATOMIC_INIT(0);

static u32 ksmbd_sched_next_gen(void)
{
	u32 gen;

	do {
		gen = atomic_inc_return(&ksmbd_sched_gen);
	} while (!gen);
	return gen;
}

static struct ksmbd_sched_net *ksmbd_sched_pernet(const struct net *net)
{
	return net_generic(net, ksmbd_sched_net_id);
}

/* ---- the hooks ---------------------------------------------------------- */

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
	u32 clamped = word & KSMBD_SCHED_CLASS_VALID_MASK;

	if (KSMBD_SCHED_CLASS_PEER6_OF(clamped) > KSMBD_SCHED_CLASS_PEER6_MAX)
		clamped = (clamped & ~KSMBD_SCHED_CLASS_PEER6_MASK) |
			  KSMBD_SCHED_CLASS_PEER6(KSMBD_SCHED_CLASS_PEER6_MAX);
	if (unlikely(clamped != word))
		this_cpu_inc(sn->stats->class_clamped);
	return clamped;
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

/* Classify a new connection with the program attached in its namespace. */
static void ksmbd_sched_conn_accept(struct ksmbd_conn *conn)
{
	struct ksmbd_sched_net *sn = ksmbd_sched_pernet(conn->sched_net);
	struct ksmbd_sched_attach *a;
	struct ksmbd_sched_ops *ops;
	const char *name = "";
	u32 word = 0, gen = 0;

	rcu_read_lock();
	a = rcu_dereference(sn->attach);
	if (a) {
		ops = rcu_dereference(a->ops);
		gen = READ_ONCE(a->gen);
		name = ops->name;
		if (ops->classify_conn) {
			word = ops->classify_conn(&conn->sched.ctx);
			word = ksmbd_sched_clamp_class(sn, word);
			this_cpu_inc(sn->stats->conns);
		}
	}
	trace_ksmbd_sched_conn(&conn->sched.ctx, word, name);
	rcu_read_unlock();

	conn->sched_class = word;
	conn->sched.gen = gen;
}

/**
 * ksmbd_sched_conn_init() - record a new connection's namespace and peer
 * @conn: the connection, peer_addr set
 * @sock: its accepted socket
 *
 * Called for every accepted connection, attached or not: a program
 * attached later still needs the connection's namespace and addresses to
 * classify it and give verdicts.  Classifies it when a program is
 * attached.  Takes a reference on the namespace, dropped by
 * ksmbd_sched_conn_free().  Context: process (the listener), may sleep.
 */
void ksmbd_sched_conn_init(struct ksmbd_conn *conn, struct socket *sock)
{
	struct ksmbd_sched_conn *ctx = &conn->sched.ctx;
	struct net *net = sock_net(sock->sk);
	struct sockaddr_storage local;

	conn->sched_net = get_net(net);
	conn->sched_class = 0;
	memset(&conn->sched, 0, sizeof(conn->sched));
	ctx->transport = KSMBD_SCHED_TRANSPORT_TCP;
	ctx->netns_ino = net->ns.inum;
	ctx->family = ksmbd_sched_addr(&conn->peer_addr, ctx->peer_addr,
				       &ctx->peer_port);
	if (kernel_getsockname(sock, (struct sockaddr *)&local) >= 0)
		ksmbd_sched_addr(&local, ctx->local_addr, &ctx->local_port);
	if (static_branch_unlikely(&ksmbd_sched_enabled))
		ksmbd_sched_conn_accept(conn);
}

/**
 * ksmbd_sched_conn_free() - release what ksmbd_sched_conn_init() took
 * @conn: the connection, whose receiver thread has exited
 *
 * Context: process.
 */
void ksmbd_sched_conn_free(struct ksmbd_conn *conn)
{
	ksmbd_disp_conn_unbind(conn);
	if (conn->sched_net) {
		put_net(conn->sched_net);
		conn->sched_net = NULL;
	}
}

/* ---- the request hook --------------------------------------------------- */

/**
 * ksmbd_sched_run() - queue a request on the workqueue its verdict chose
 * @work: the request
 *
 * Context: any; never under the dispatcher's lock.
 */
void ksmbd_sched_run(struct ksmbd_work *work)
{
	KUNIT_STATIC_STUB_REDIRECT(ksmbd_sched_run, work);
	if ((work->sched.verdict & KSMBD_SCHED_VERDICT_QUEUE_MASK) ==
	    KSMBD_SCHED_QUEUE_UNBOUND)
		queue_work(ksmbd_sched_unbound_wq, &work->work);
	else
		ksmbd_queue_work(work);
}

/*
 * Commands that never wait in the dispatcher.  An executing request may be
 * blocked on one of these (an oplock or lease break on its acknowledgment,
 * a blocking lock on the UNLOCK, any request on its CANCEL), and they are
 * short.  MS-SMB2 3.3.5 lists their processing.
 */
static bool ksmbd_sched_is_control(u16 command)
{
	switch (command) {
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

/*
 * Does @command need a session (MS-SMB2 3.3.5.2.9)?  Before one exists
 * ksmbd refuses it: a peer that sends it is broken or hostile.  A message
 * whose command could not be read (SMB1's NEGOTIATE among them) is given
 * the benefit of the doubt.
 */
static bool ksmbd_sched_needs_session(u16 command)
{
	switch (command) {
	case SMB2_NEGOTIATE_HE:
	case SMB2_SESSION_SETUP_HE:
	case SMB2_CANCEL_HE:
	case KSMBD_SCHED_CMD_UNKNOWN:
		return false;
	}
	return true;
}

/*
 * READ/WRITE Length of the PDU at @hdr, @len bytes of it received, as
 * much of it as the connection may ask: at most the negotiated
 * MaxReadSize or MaxWriteSize (MS-SMB2 3.3.5.12, 3.3.5.13), and at most
 * 64 KiB per credit of its CreditCharge, 0 counting as 1 (MS-SMB2
 * 3.3.5.2.5).  ksmbd refuses a request above either, so its claim is no
 * cost; what it really moves is charged when it completes.  @conn is
 * good (negotiated, a session set up), so conn->vals is stable.
 */
static u32 ksmbd_sched_pdu_bytes(struct ksmbd_conn *conn,
				 const struct smb2_hdr *hdr, unsigned int len)
{
	const struct smb2_write_req *wr = (const void *)hdr;
	const struct smb2_read_req *rd = (const void *)hdr;
	u32 credits = max_t(u32, le16_to_cpu(hdr->CreditCharge), 1);
	u32 bytes = 0, max = 0;

	switch (le16_to_cpu(hdr->Command)) {
	case SMB2_READ_HE:
		if (len >= offsetof(struct smb2_read_req, Buffer)) {
			bytes = le32_to_cpu(rd->Length);
			max = conn->vals->max_read_size;
		}
		break;
	case SMB2_WRITE_HE:
		if (len >= offsetof(struct smb2_write_req, Buffer)) {
			bytes = le32_to_cpu(wr->Length);
			max = conn->vals->max_write_size;
		}
		break;
	}
	return min3(bytes, max, credits * (u32)SZ_64K);
}

/* The READ/WRITE fields of the first PDU, @len bytes of it received. */
static void ksmbd_sched_req_rw(const struct smb2_hdr *hdr, unsigned int len,
			       struct ksmbd_sched_req *r)
{
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

/*
 * The rest of a compound after its first PDU (MS-SMB2 3.3.5.2.7): the
 * message is control only if every PDU is a control command, and it moves
 * the READ/WRITE bytes of all of them (added to *@bytes unless @bytes is
 * NULL).  A chain that does not fit in the received message is data
 * (ksmbd rejects it when it runs).
 */
static bool ksmbd_sched_compound(struct ksmbd_conn *conn,
				 const struct smb2_hdr *hdr, unsigned int len,
				 bool control, u64 *bytes)
{
	unsigned int off = 0, next = le32_to_cpu(hdr->NextCommand);
	const struct smb2_hdr *h;

	while (next) {
		if (next < sizeof(*h) || next > len - off ||
		    len - off - next < sizeof(*h))
			return false;
		off += next;
		h = (const void *)hdr + off;
		if (h->ProtocolId != SMB2_PROTO_NUMBER)
			return false;
		control &= ksmbd_sched_is_control(le16_to_cpu(h->Command));
		if (bytes)
			*bytes += ksmbd_sched_pdu_bytes(conn, h, len - off);
		next = le32_to_cpu(h->NextCommand);
	}
	return control;
}

/*
 * Fill @r and the request's scheduling fields from the received message:
 * the first PDU's header, or what a compressed message (or an encrypted
 * one that could not be decrypted) shows, then the compound chain.
 * Lengths are checked against the received size; a short message is
 * classified by what fits.  Return: true for a control request.
 */
static bool ksmbd_sched_req_ctx(struct ksmbd_work *work,
				struct ksmbd_sched_req *r)
{
	struct ksmbd_conn *conn = work->conn;
	unsigned int len = get_rfc1002_len(work->request_buf);
	const struct smb2_hdr *hdr = work->request_buf + 4;
	bool control = false;
	u64 bytes = 0;

	/*
	 * Before its connection has a session, a peer's requests are
	 * refused or are the login itself: nothing it claims is a cost.
	 */
	work->sched.unauth = !ksmbd_conn_good(conn);
	work->sched.invalid = false;
	r->class_word = conn->sched_class;
	r->pdu_len = len;
	r->command = KSMBD_SCHED_CMD_UNKNOWN;
	memcpy(r->peer_addr, conn->sched.ctx.peer_addr, 16);
	if (work->encrypted)
		r->flags |= KSMBD_SCHED_REQ_ENCRYPTED;

	if (len < sizeof(__le32))
		goto out;
	if (hdr->ProtocolId == SMB2_TRANSFORM_PROTO_NUM) {
		r->flags |= KSMBD_SCHED_REQ_ENCRYPTED;
		goto out;
	}
	if (hdr->ProtocolId == SMB2_COMPRESSION_TRANSFORM_ID) {
		r->flags |= KSMBD_SCHED_REQ_COMPRESSED;
		goto out;
	}
	if (hdr->ProtocolId == SMB1_PROTO_NUMBER) {
		r->flags |= KSMBD_SCHED_REQ_SMB1;
		control = true;
		goto out;
	}
	if (hdr->ProtocolId != SMB2_PROTO_NUMBER ||
	    len < sizeof(struct smb2_hdr))
		goto out;

	r->command = le16_to_cpu(hdr->Command);
	r->credit_charge = le16_to_cpu(hdr->CreditCharge);
	if (hdr->NextCommand)
		r->flags |= KSMBD_SCHED_REQ_COMPOUND;
	if (hdr->Flags & SMB2_FLAGS_SIGNED)
		r->flags |= KSMBD_SCHED_REQ_SIGNED;
	if (hdr->Flags & SMB2_FLAGS_ASYNC_COMMAND)
		r->flags |= KSMBD_SCHED_REQ_ASYNC;
	ksmbd_sched_req_rw(hdr, len, r);
	work->sched.invalid = work->sched.unauth &&
			      ksmbd_sched_needs_session(r->command);
	if (!work->sched.unauth)
		bytes = ksmbd_sched_pdu_bytes(conn, hdr, len);
	control = ksmbd_sched_compound(conn, hdr, len,
				       ksmbd_sched_is_control(r->command),
				       work->sched.unauth ? NULL : &bytes);
out:
	work->sched.command = r->command;
	work->sched.class_word = r->class_word;
	work->sched.bytes = min_t(u64, bytes, KSMBD_SCHED_COST_MAX);
	work->sched.cost = max_t(u32, work->sched.bytes, KSMBD_SCHED_COST_MIN);
	work->sched.mem = len + 4;
	return control;
}

/*
 * Decrypt an encrypted message before it is classified and dispatched,
 * as the worker would first thing (__handle_ksmbd_work()): its command,
 * its compound and its cost are then known, and a sealed client's CLOSE,
 * LOCK or break acknowledgment is control like anybody else's.  The
 * receiver decrypts instead of a worker; a failure aborts the connection
 * and drops the request, as on the worker.
 */
static void ksmbd_sched_decrypt(struct ksmbd_work *work)
{
	struct ksmbd_conn *conn = work->conn;
	u64 sess_id;

	if (!conn->ops || !conn->ops->is_transform_hdr ||
	    !conn->ops->is_transform_hdr(work->request_buf) ||
	    get_rfc1002_len(work->request_buf) <
	    sizeof(struct smb2_transform_hdr))
		return;
	sess_id = le64_to_cpu(((struct smb2_transform_hdr *)
			       smb_get_msg(work->request_buf))->SessionId);
	if (conn->ops->decrypt_req(work) < 0)
		goto abort;
	work->encrypted = true;
	if (ksmbd_check_transform_session(work, sess_id) < 0)
		goto abort;
	return;
abort:
	ksmbd_conn_abort(conn);
	work->sched.dropped = true;
}

/* ---- classes of sessions and tree connects ---------------------------- */

/*
 * A word of classify_session() or classify_tree(): INHERIT alone, or a
 * class word clamped as classify_conn()'s.
 */
static u32 ksmbd_sched_clamp_sub(struct ksmbd_sched_net *sn, u32 word)
{
	if (word & KSMBD_SCHED_CLASS_INHERIT)
		return KSMBD_SCHED_CLASS_INHERIT;
	return ksmbd_sched_clamp_class(sn, word);
}

/*
 * Copy a user or share name for a context: NUL-padded, ASCII letters in
 * lower case, other bytes as they are (the kernel's tolower() would also
 * fold Latin-1 bytes, which are parts of UTF-8 characters here).  A name
 * that does not fit is given empty: no map entry can match it.
 */
static void ksmbd_sched_name(char *dst, const char *src, size_t size)
{
	size_t i, len = src ? strnlen(src, size) : 0;

	memset(dst, 0, size);
	if (len == size)
		return;
	for (i = 0; i < len; i++)
		dst[i] = src[i] >= 'A' && src[i] <= 'Z' ? src[i] - 'A' + 'a' :
			 src[i];
}

/* A session's or tree's class word and generation, as they are kept. */
#define KSMBD_SCHED_SUB(gen, word)	((u64)(gen) << 32 | (word))

/*
 * The class word of @sess under the program of generation @gen: kept, or
 * asked of classify_session(), and then also in *@newly unless it
 * inherits.  The receivers of a session's channels may ask at once; each
 * stores the same word.  Context: RCU read lock held.
 */
static u32 ksmbd_sched_session_word(struct ksmbd_sched_net *sn,
				    const struct ksmbd_sched_ops *ops,
				    u32 gen, struct ksmbd_conn *conn,
				    struct ksmbd_session *sess, u32 *newly)
{
	u64 kept = READ_ONCE(sess->sched_class);
	struct ksmbd_sched_session s = {};
	u32 word = KSMBD_SCHED_CLASS_INHERIT;

	if (kept >> 32 == gen)
		return (u32)kept;
	if (ops->classify_session) {
		s.class_word = conn->sched_class;
		s.dialect = sess->dialect;
		s.session_id = sess->id;
		memcpy(s.client_guid, sess->ClientGUID, sizeof(s.client_guid));
		if (sess->is_anonymous)
			s.flags |= KSMBD_SCHED_SESSION_ANONYMOUS;
		else if (sess->user && user_guest(sess->user))
			s.flags |= KSMBD_SCHED_SESSION_GUEST;
		if (sess->sign)
			s.flags |= KSMBD_SCHED_SESSION_SIGNED;
		if (sess->enc)
			s.flags |= KSMBD_SCHED_SESSION_ENCRYPTED;
		if (sess->user && !sess->is_anonymous)
			ksmbd_sched_name(s.user, user_name(sess->user),
					 sizeof(s.user));
		word = ksmbd_sched_clamp_sub(sn, ops->classify_session(&s));
		this_cpu_inc(sn->stats->sessions);
		*newly = word;
		trace_ksmbd_sched_session(conn->sched_net->ns.inum, &s, word);
	}
	WRITE_ONCE(sess->sched_class, KSMBD_SCHED_SUB(gen, word));
	return word;
}

/*
 * The class word of tree connect @tid of @sess, as the session's; INHERIT
 * when it is not (or no longer) connected.  Context: RCU read lock held.
 */
static u32 ksmbd_sched_tree_word(struct ksmbd_sched_net *sn,
				 const struct ksmbd_sched_ops *ops, u32 gen,
				 struct ksmbd_conn *conn,
				 struct ksmbd_session *sess, u32 tid,
				 u32 sess_word, u32 *newly)
{
	struct ksmbd_sched_tree t = {};
	struct ksmbd_tree_connect *tcon;
	u32 word = KSMBD_SCHED_CLASS_INHERIT;
	u64 kept;

	read_lock(&sess->tree_conns_lock);
	tcon = xa_load(&sess->tree_conns, tid);
	if (!tcon || tcon->t_state != TREE_CONNECTED || !tcon->share_conf)
		goto out;
	kept = READ_ONCE(tcon->sched_class);
	if (kept >> 32 == gen) {
		word = (u32)kept;
		goto out;
	}
	if (ops->classify_tree) {
		t.class_word = sess_word;
		t.tree_id = tid;
		t.session_id = sess->id;
		if (test_share_config_flag(tcon->share_conf,
					   KSMBD_SHARE_FLAG_PIPE))
			t.flags |= KSMBD_SCHED_TREE_IPC;
		if (!test_tree_conn_flag(tcon, KSMBD_TREE_CONN_FLAG_WRITABLE))
			t.flags |= KSMBD_SCHED_TREE_READONLY;
		ksmbd_sched_name(t.share, tcon->share_conf->name,
				 sizeof(t.share));
		word = ksmbd_sched_clamp_sub(sn, ops->classify_tree(&t));
		this_cpu_inc(sn->stats->trees);
		*newly = word;
		trace_ksmbd_sched_tree(conn->sched_net->ns.inum, &t, word);
	}
	WRITE_ONCE(tcon->sched_class, KSMBD_SCHED_SUB(gen, word));
out:
	read_unlock(&sess->tree_conns_lock);
	return word;
}

/*
 * The session a request names, referenced, for its class: only when its
 * connection has a session and the program classifies sessions or
 * trees.  *@tid is its TreeId, 0 for an async request (MS-SMB2 2.2.1.1).
 */
static struct ksmbd_session *ksmbd_sched_req_session(struct ksmbd_work *work,
						     u32 *tid)
{
	unsigned int len = get_rfc1002_len(work->request_buf);
	const struct smb2_hdr *hdr = work->request_buf + 4;
	u64 id;

	*tid = 0;
	if (len < sizeof(struct smb2_hdr) ||
	    hdr->ProtocolId != SMB2_PROTO_NUMBER ||
	    !ksmbd_conn_good(work->conn))
		return NULL;
	id = le64_to_cpu(hdr->SessionId);
	if (!id)
		return NULL;
	if (!(hdr->Flags & SMB2_FLAGS_ASYNC_COMMAND))
		*tid = le32_to_cpu(hdr->Id.SyncId.TreeId);
	return ksmbd_session_lookup_all(work->conn, id);
}

/*
 * A connection accepted before the attached program (load, replace) is
 * classified again by it at its next request.
 */
static void ksmbd_sched_reclassify(struct ksmbd_sched_net *sn,
				   struct ksmbd_conn *conn,
				   const struct ksmbd_sched_ops *ops, u32 gen)
{
	u32 word = 0;

	if (ops->classify_conn) {
		word = ops->classify_conn(&conn->sched.ctx);
		word = ksmbd_sched_clamp_class(sn, word);
	}
	conn->sched_class = word;
	conn->sched.gen = gen;
	this_cpu_inc(sn->stats->reclassified);
}

/*
 * Does the program attached in @sn classify sessions or trees?  Only then
 * is a request's session looked up.
 */
static bool ksmbd_sched_wants_session(struct ksmbd_sched_net *sn)
{
	struct ksmbd_sched_attach *a;
	struct ksmbd_sched_ops *ops;
	bool wants = false;

	rcu_read_lock();
	a = rcu_dereference(sn->attach);
	if (a) {
		ops = rcu_dereference(a->ops);
		wants = ops->classify_session || ops->classify_tree;
	}
	rcu_read_unlock();
	return wants;
}

/*
 * The class word a request is dispatched by: its tree's, else its
 * session's, else its connection's.  @guid gets the ClientGUID that keys
 * a PER_PEER client of a session's or tree's class, of a user's session
 * only: a guest or anonymous login can claim any ClientGUID, and stays
 * keyed by its address.  @newly gets the class words a session and a
 * tree connect were given now (INHERIT: none), for their counts.
 * Context: RCU read lock held.
 */
static u32 ksmbd_sched_req_class(struct ksmbd_sched_net *sn,
				 const struct ksmbd_sched_ops *ops, u32 gen,
				 struct ksmbd_conn *conn,
				 struct ksmbd_session *sess, u32 tid,
				 const u8 **guid, u32 newly[2])
{
	u32 word = conn->sched_class, sub;
	bool own = false;

	*guid = NULL;
	if (!sess)
		return word;
	sub = ksmbd_sched_session_word(sn, ops, gen, conn, sess, &newly[0]);
	if (sub != KSMBD_SCHED_CLASS_INHERIT) {
		word = sub;
		own = true;
	}
	if (tid) {
		sub = ksmbd_sched_tree_word(sn, ops, gen, conn, sess, tid,
					    word, &newly[1]);
		if (sub != KSMBD_SCHED_CLASS_INHERIT) {
			word = sub;
			own = true;
		}
	}
	if (own && (word & KSMBD_SCHED_CLASS_PER_PEER) &&
	    !sess->is_anonymous && !(sess->user && user_guest(sess->user)))
		*guid = sess->ClientGUID;
	return word;
}

/* Clamp what init_class() wrote; count it if anything changed. */
static void ksmbd_sched_clamp_params(struct ksmbd_sched_net *sn,
				     struct ksmbd_sched_class_params *p)
{
	const u64 bps_max = (u64)KSMBD_SCHED_BPS_LIMIT_MB << 20;
	struct ksmbd_sched_class_params in = *p;

	p->flags &= KSMBD_SCHED_CLASS_FLAGS_MASK;
	p->reservation_iops = min_t(u32, p->reservation_iops,
				    KSMBD_SCHED_IOPS_LIMIT);
	p->limit_iops = min_t(u32, p->limit_iops, KSMBD_SCHED_IOPS_LIMIT);
	p->reservation_bps = min(p->reservation_bps, bps_max);
	p->limit_bps = min(p->limit_bps, bps_max);
	p->burst_ms = min_t(u32, p->burst_ms, KSMBD_SCHED_BURST_MS_LIMIT);
	if (p->limit_iops)
		p->reservation_iops = min(p->reservation_iops, p->limit_iops);
	if (p->limit_bps)
		p->reservation_bps = min(p->reservation_bps, p->limit_bps);
	if (memcmp(&in, p, sizeof(in)))
		this_cpu_inc(sn->stats->params_clamped);
}

/*
 * The class of a request bound to its client in @d is new to @d, or its
 * parameters are another program's: ask init_class() of the program
 * attached, if it is still the one of generation @gen.
 */
static void ksmbd_sched_init_class(struct ksmbd_sched_net *sn,
				   struct ksmbd_sched_disp *d, u32 word,
				   u32 gen)
{
	struct ksmbd_sched_class_params p = {
		.class_id = KSMBD_SCHED_CLASS_ID_OF(word),
	};
	struct ksmbd_sched_attach *a;
	struct ksmbd_sched_ops *ops;

	rcu_read_lock();
	a = rcu_dereference(sn->attach);
	if (!a || a->disp != d || READ_ONCE(a->gen) != gen) {
		rcu_read_unlock();
		return;
	}
	ops = rcu_dereference(a->ops);
	if (ops->init_class) {
		ops->init_class(&p);
		p.class_id = KSMBD_SCHED_CLASS_ID_OF(word);
		p.reserved = 0;
		ksmbd_sched_clamp_params(sn, &p);
		this_cpu_inc(sn->stats->classes);
	}
	rcu_read_unlock();
	ksmbd_disp_class_set(d, word, &p, gen);
}

void __ksmbd_sched_queue_work(struct ksmbd_work *work)
{
	struct ksmbd_conn *conn = work->conn;
	struct ksmbd_sched_disp *d = NULL;
	struct ksmbd_session *sess = NULL;
	struct ksmbd_sched_req r = {};
	struct ksmbd_sched_attach *a;
	struct ksmbd_sched_ops *ops;
	struct ksmbd_sched_net *sn;
	bool control = false, rebind = false;
	u32 newly[2] = { KSMBD_SCHED_CLASS_INHERIT, KSMBD_SCHED_CLASS_INHERIT };
	const u8 *guid = NULL;
	u32 gen, tid = 0, word = 0;

	if (!conn->sched_net)
		goto run;
	sn = ksmbd_sched_pernet(conn->sched_net);
	if (!rcu_access_pointer(sn->attach))
		goto run;
	ksmbd_sched_decrypt(work);
	if (work->sched.dropped)
		goto run;
	if (ksmbd_sched_wants_session(sn))
		sess = ksmbd_sched_req_session(work, &tid);

	rcu_read_lock();
	a = rcu_dereference(sn->attach);
	if (a) {
		ops = rcu_dereference(a->ops);
		gen = READ_ONCE(a->gen);
		if (conn->sched.gen != gen) {
			ksmbd_sched_reclassify(sn, conn, ops, gen);
			rebind = true;
		}
		control = ksmbd_sched_req_ctx(work, &r);
		word = ksmbd_sched_req_class(sn, ops, gen, conn, sess, tid,
					     &guid, newly);
		r.class_word = word;
		work->sched.class_word = word;
		if (ops->classify_req) {
			work->sched.verdict =
				ksmbd_sched_clamp_verdict(sn,
							  ops->classify_req(&r));
			this_cpu_inc(sn->stats->reqs);
		}
		trace_ksmbd_sched_req(conn->sched_net->ns.inum, &r,
				      work->sched.verdict);
		d = a->disp;
		if (!ksmbd_disp_tryget(d))
			d = NULL;
	}
	rcu_read_unlock();
	if (!d)
		goto run;

	if (rebind || conn->sched.disp != d || conn->sched.word != word ||
	    conn->sched.by_guid != !!guid ||
	    (guid && memcmp(conn->sched.guid, guid, sizeof(conn->sched.guid)))) {
		ksmbd_disp_conn_unbind(conn);
		ksmbd_disp_conn_bind(d, conn, word, guid);
	}
	if (ksmbd_disp_class_stale(d, word, gen))
		ksmbd_sched_init_class(sn, d, word, gen);
	if (unlikely(newly[0] != KSMBD_SCHED_CLASS_INHERIT))
		ksmbd_disp_class_count(d, newly[0], false);
	if (unlikely(newly[1] != KSMBD_SCHED_CLASS_INHERIT))
		ksmbd_disp_class_count(d, newly[1], true);
	if (sess)
		ksmbd_user_session_put(sess);
	ksmbd_disp_queue(d, work, control);
	return;

run:
	if (sess)
		ksmbd_user_session_put(sess);
	ksmbd_sched_run(work);
}

void __ksmbd_sched_work_done(struct ksmbd_work *work)
{
	ksmbd_disp_work_done(work);
}

void __ksmbd_sched_release_slot(struct ksmbd_work *work)
{
	ksmbd_disp_release_slot(work, true);
}

void __ksmbd_sched_wait(void)
{
	struct ksmbd_work *work = ksmbd_current_work();

	if (work && work->sched.slot)
		ksmbd_disp_release_slot(work, true);
}

bool __ksmbd_sched_holds_slot(void)
{
	struct ksmbd_work *work = ksmbd_current_work();

	return work && work->sched.slot;
}

void __ksmbd_sched_conn_stop(struct ksmbd_conn *conn)
{
	ksmbd_disp_conn_stop(conn);
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

static u32
ksmbd_sched_classify_session_stub(const struct ksmbd_sched_session *s)
{
	return KSMBD_SCHED_CLASS_INHERIT;
}

static u32 ksmbd_sched_classify_tree_stub(const struct ksmbd_sched_tree *t)
{
	return KSMBD_SCHED_CLASS_INHERIT;
}

static void
ksmbd_sched_init_class_stub(struct ksmbd_sched_class_params *p)
{
}

static struct ksmbd_sched_ops __bpf_ops_ksmbd_sched_ops = {
	.classify_conn = ksmbd_sched_classify_conn_stub,
	.classify_req = ksmbd_sched_classify_req_stub,
	.classify_session = ksmbd_sched_classify_session_stub,
	.classify_tree = ksmbd_sched_classify_tree_stub,
	.init_class = ksmbd_sched_init_class_stub,
};

BTF_ID_LIST_SINGLE(ksmbd_sched_params_ids, struct, ksmbd_sched_class_params)
static const struct btf_type *ksmbd_sched_params_type;

/*
 * The enums of ksmbd_sched_abi.h are how programs and loaders learn the
 * values of the words and limits (by BTF, as sched_ext's are): keep them
 * in BTF even where the compiler's debug info would drop an enum that
 * only lends its values.
 */
static int ksmbd_sched_bpf_init(struct btf *btf)
{
	BTF_TYPE_EMIT(enum ksmbd_sched_limits);
	BTF_TYPE_EMIT(enum ksmbd_sched_ops_flags);
	BTF_TYPE_EMIT(enum ksmbd_sched_transport);
	BTF_TYPE_EMIT(enum ksmbd_sched_req_flags);
	BTF_TYPE_EMIT(enum ksmbd_sched_session_flags);
	BTF_TYPE_EMIT(enum ksmbd_sched_tree_flags);
	BTF_TYPE_EMIT(enum ksmbd_sched_class_flags);
	BTF_TYPE_EMIT(enum ksmbd_sched_qos);
	ksmbd_sched_params_type = btf_type_by_id(btf,
						 ksmbd_sched_params_ids[0]);
	if (!ksmbd_sched_params_type)
		return -EINVAL;
	BTF_TYPE_EMIT(enum ksmbd_sched_command);
	BTF_TYPE_EMIT(enum ksmbd_sched_class_word);
	BTF_TYPE_EMIT(enum ksmbd_sched_verdict);
	return 0;
}

static const struct bpf_func_proto *
ksmbd_sched_get_func_proto(enum bpf_func_id func_id, const struct bpf_prog *prog)
{
	return bpf_base_func_proto(func_id, prog);
}

/*
 * Contexts are read-only, but for what init_class() sets: the verifier
 * asks ksmbd_sched_btf_struct_access() about every write through a
 * PTR_TO_BTF_ID argument.
 */
static bool ksmbd_sched_is_valid_access(int off, int size,
					enum bpf_access_type type,
					const struct bpf_prog *prog,
					struct bpf_insn_access_aux *info)
{
	return bpf_tracing_btf_ctx_access(off, size, type, prog, info);
}

/*
 * Writes: only to the members of struct ksmbd_sched_class_params that
 * init_class() sets (as bpf_tcp_ca lets a program set some of
 * tcp_sock's); every other context, and class_id and reserved, is
 * read-only.
 */
static int ksmbd_sched_btf_struct_access(struct bpf_verifier_log *log,
					 const struct bpf_reg_state *reg,
					 int off, int size)
{
	if (btf_type_by_id(reg->btf, reg->btf_id) != ksmbd_sched_params_type) {
		bpf_log(log, "ksmbd_sched: this context is read-only\n");
		return -EACCES;
	}
	if (off < offsetof(struct ksmbd_sched_class_params, flags) ||
	    off + size > offsetof(struct ksmbd_sched_class_params, reserved)) {
		bpf_log(log, "ksmbd_sched: class_id and reserved are read-only\n");
		return -EACCES;
	}
	return 0;
}

static const struct bpf_verifier_ops ksmbd_sched_verifier_ops = {
	.get_func_proto = ksmbd_sched_get_func_proto,
	.is_valid_access = ksmbd_sched_is_valid_access,
	.btf_struct_access = ksmbd_sched_btf_struct_access,
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
	case offsetof(struct ksmbd_sched_ops, timeout_ms):
		if (uops->timeout_ms > KSMBD_SCHED_TIMEOUT_MS_LIMIT)
			return -E2BIG;
		if (uops->timeout_ms &&
		    uops->timeout_ms < KSMBD_SCHED_TIMEOUT_MS_MIN)
			return -EINVAL;
		ops->timeout_ms = uops->timeout_ms;
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
	/* The hooks run in contexts that must not sleep on BPF's behalf. */
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
	ksmbd_disp_kill(a->disp);
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
	/* It steers the namespace's SMB traffic: administering its network. */
	if (!ns_capable(net->user_ns, CAP_NET_ADMIN))
		return -EPERM;

	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	a->disp = ksmbd_disp_alloc(net->ns.inum, ops->max_inflight,
				   ops->timeout_ms);
	if (!a->disp) {
		kfree(a);
		return -ENOMEM;
	}
	RCU_INIT_POINTER(a->ops, kdata);
	a->gen = ksmbd_sched_next_gen();
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
		ksmbd_disp_put(a->disp);
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
	} else if (!ns_capable(a->net->user_ns, CAP_NET_ADMIN)) {
		err = -EPERM;
	} else if (rcu_access_pointer(a->ops) != old_kdata) {
		err = -EINVAL;
	} else {
		rcu_assign_pointer(a->ops, kdata);
		WRITE_ONCE(a->gen, ksmbd_sched_next_gen());
		ksmbd_disp_update(a->disp, ops->max_inflight, ops->timeout_ms);
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
		sum.reclassified += READ_ONCE(s->reclassified);
		sum.sessions += READ_ONCE(s->sessions);
		sum.trees += READ_ONCE(s->trees);
		sum.classes += READ_ONCE(s->classes);
		sum.params_clamped += READ_ONCE(s->params_clamped);
	}

	mutex_lock(&ksmbd_sched_mutex);
	a = rcu_dereference_protected(sn->attach,
				      lockdep_is_held(&ksmbd_sched_mutex));
	seq_printf(m, "attached: %d\n", a ? 1 : 0);
	seq_printf(m, "name: %s\n",
		   a ? rcu_dereference_protected(a->ops, 1)->name : "-");
	seq_printf(m, "link_id: %u\n", a ? a->link->id : 0);
	if (a)
		ksmbd_disp_show(m, a->disp);
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
	seq_printf(m, "conns_reclassified: %llu\n", sum.reclassified);
	seq_printf(m, "sessions_classified: %llu\n", sum.sessions);
	seq_printf(m, "trees_classified: %llu\n", sum.trees);
	seq_printf(m, "classes_initialised: %llu\n", sum.classes);
	seq_printf(m, "class_params_clamped: %llu\n", sum.params_clamped);
	return 0;
}

/*
 * /proc/net/ksmbd_sched_clients: one line per client of the namespace's
 * dispatcher (ksmbd_disp_show_clients()); empty when nothing is attached.
 */
static int ksmbd_sched_clients_show(struct seq_file *m, void *v)
{
	struct ksmbd_sched_net *sn = ksmbd_sched_pernet(seq_file_single_net(m));
	struct ksmbd_sched_attach *a;

	mutex_lock(&ksmbd_sched_mutex);
	a = rcu_dereference_protected(sn->attach,
				      lockdep_is_held(&ksmbd_sched_mutex));
	if (a)
		ksmbd_disp_show_clients(m, a->disp);
	mutex_unlock(&ksmbd_sched_mutex);
	return 0;
}

static int __net_init ksmbd_sched_net_init(struct net *net)
{
	struct ksmbd_sched_net *sn = ksmbd_sched_pernet(net);

	sn->stats = alloc_percpu(struct ksmbd_sched_stats);
	if (!sn->stats)
		return -ENOMEM;
	if (!proc_create_net_single("ksmbd_sched", 0444, net->proc_net,
				    ksmbd_sched_proc_show, NULL))
		goto err_stats;
	if (!proc_create_net_single("ksmbd_sched_clients", 0444, net->proc_net,
				    ksmbd_sched_clients_show, NULL))
		goto err_proc;
	return 0;

err_proc:
	remove_proc_entry("ksmbd_sched", net->proc_net);
err_stats:
	free_percpu(sn->stats);
	return -ENOMEM;
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

	remove_proc_entry("ksmbd_sched_clients", net->proc_net);
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
