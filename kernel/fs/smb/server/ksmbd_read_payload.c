// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Page-backed READ replies, sent with MSG_SPLICE_PAGES.
 *
 * When the BPF verdict of a READ has KSMBD_SCHED_VERDICT_SPLICE and every
 * gate below passes, the reply's data is a bio_vec array of pages the
 * payload holds references on, and the transport sends the reply header
 * (copied, MSG_MORE) followed by the pages (spliced: the socket takes its
 * own page references, nothing is copied).  The pages are
 *  - the file's page-cache pages themselves, collected with
 *    splice_direct_to_actor() as nfsd's splice read does: no copy on the
 *    server at all (KSMBD_READ_SRC_PAGECACHE);
 *  - or, where the page cache cannot be shared (ksmbd_read_pagecache_ok()),
 *    private order-0 pages allocated in bulk and read into by copy: one
 *    copy fewer than the copy path (KSMBD_READ_SRC_PAGES).
 * Slab memory never enters the splice iterator: the header is sent by
 * copy, and every page passes sendpage_ok().  Any gate that fails, and a
 * failed page allocation, keep today's copy path.
 *
 * Status, DataLength and bytes on the wire are those of the copy path in
 * every case: the same read checks (ksmbd_vfs_read_iter(),
 * ksmbd_vfs_splice_read()), the same end-of-file rule in smb2_read(), and
 * exactly the bytes read are sent.  A page-cache page may change between
 * the read and the send (a write, a truncate or hole punch zeroing part
 * of it): the client then sees the newer bytes of that page, see
 * Documentation/read-splice.rst.
 *
 * Leak accounting: ksmbd_sched_held.payloads counts payloads,
 * .payload_pages the PAGE_SIZE units they reference (struct
 * ksmbd_read_payload, @held); both return to 0 when no spliced READ is
 * between its read and the end of its send.
 */

#include <linux/bvec.h>
#include <linux/error-injection.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/pagemap.h>
#include <linux/pipe_fs_i.h>
#include <linux/slab.h>
#include <linux/splice.h>
#include <linux/uio.h>
#include <net/net_namespace.h>

#include "glob.h"
#include "connection.h"
#include "ksmbd_work.h"
#include "mgmt/user_session.h"
#include "smb_common.h"
#include "vfs.h"
#include "vfs_cache.h"
#include "ksmbd_sched.h"
#include "ksmbd_read_payload.h"
#include "ksmbd_sched_trace.h"

/*
 * Page-cache pages are the payload when the file allows it (1, the
 * default); 0 reads every spliced payload into private pages by copy, to
 * measure the two against each other (Documentation/read-splice.rst).
 */
static bool read_payload_pagecache = true;
module_param(read_payload_pagecache, bool, 0644);
MODULE_PARM_DESC(read_payload_pagecache,
		 "spliced READs send page-cache pages (Y, default) or private pages (N)");

/*
 * Order of the private pages a payload is read into.  0 (order-0 pages,
 * allocated in bulk: the shape the network stack and the page allocator
 * like best) is the default; higher orders are for measurement and fall
 * back to order 0 when memory is fragmented.
 */
static unsigned int read_payload_order;
module_param(read_payload_order, uint, 0644);
MODULE_PARM_DESC(read_payload_order,
		 "page order of private READ payload pages, 0..4 (default 0)");

/*
 * A READ shorter than this many bytes is copied even when its verdict
 * has SPLICE (reason below_floor); 0 lifts the floor, for measurement.
 */
static unsigned int read_splice_floor = KSMBD_READ_SPLICE_FLOOR;
module_param(read_splice_floor, uint, 0644);
MODULE_PARM_DESC(read_splice_floor,
		 "READs shorter than this many bytes are never spliced (default 16384)");

/**
 * ksmbd_read_splice_gate() - may this READ reply be sent spliced?
 * @work:         the READ request
 * @fp:           the file it reads
 * @req:          its SMB2 READ header (MS-SMB2 2.2.19)
 * @length:       its Length, in bytes (at most MaxReadSize)
 * @rdma_channel: the data goes back by RDMA write
 *
 * Every gate exists because the copy path must do something to the
 * payload bytes, or the transport cannot send pages:
 *  - signing (MS-SMB2 3.3.4.1.1) and encryption (3.3.4.1.4) read or
 *    rewrite the payload from work->iov;
 *  - a compound reply (3.3.4.1.3) is assembled and padded in one buffer;
 *  - a compressed reply (3.3.4.1.5) transforms the payload;
 *  - RDMA has no MSG_SPLICE_PAGES, and an RDMA channel READ is not sent
 *    on the socket at all;
 *  - a stream is read from an xattr, not the page cache.
 * Two more are the kernel's own policy, checked last so that they count
 * only READs that would otherwise have been spliced:
 *  - Length 0 has no data to send (reason empty);
 *  - below read_splice_floor (KSMBD_READ_SPLICE_FLOOR) splicing does not
 *    pay, whatever the program asked (reason below_floor).
 *
 * Context: any; reads only the request and the session.
 * Return: KSMBD_READ_SPLICE, or the reason to copy.
 */
enum ksmbd_read_path ksmbd_read_splice_gate(struct ksmbd_work *work,
					    struct ksmbd_file *fp,
					    struct smb2_read_req *req,
					    size_t length, bool rdma_channel)
{
	struct ksmbd_conn *conn = work->conn;

	if (!(work->sched.verdict & KSMBD_SCHED_VERDICT_SPLICE))
		return KSMBD_READ_NO_VERDICT;
	if (!conn->transport->ops->writev_spliced)
		return KSMBD_READ_TRANSPORT;
	if (rdma_channel)
		return KSMBD_READ_RDMA_CHANNEL;
	/* replies are encrypted exactly when the request was */
	if (work->encrypted)
		return KSMBD_READ_ENCRYPTED;
	if ((work->sess && work->sess->sign) ||
	    conn->ops->is_sign_req(work, SMB2_READ_HE))
		return KSMBD_READ_SIGNED;
	if (work->next_smb2_rcv_hdr_off || req->hdr.NextCommand)
		return KSMBD_READ_COMPOUND;
	if (req->Flags & SMB2_READFLAG_REQUEST_COMPRESSED)
		return KSMBD_READ_COMPRESSED;
	if (ksmbd_stream_fd(fp))
		return KSMBD_READ_STREAM;
	if (!length)
		return KSMBD_READ_EMPTY;
	if (length < READ_ONCE(read_splice_floor))
		return KSMBD_READ_BELOW_FLOOR;
	return KSMBD_READ_SPLICE;
}

/*
 * The two allocation sites of a payload are noinline and may be made to
 * fail with fail_function (CONFIG_FAIL_FUNCTION,
 * Documentation/fault-injection/fault-injection.rst): the READ must then
 * fall back to the copy path (reason nomem), as after a real failure.
 */
static noinline struct ksmbd_read_payload *
ksmbd_read_payload_new(unsigned int max, enum ksmbd_read_src src)
{
	struct ksmbd_read_payload *p;

	p = kvzalloc(struct_size(p, bvec, max), KSMBD_DEFAULT_GFP);
	if (!p)
		return NULL;
	p->max_bvec = max;
	p->src = src;
	atomic_long_inc(&ksmbd_sched_held.payloads);
	return p;
}
ALLOW_ERROR_INJECTION(ksmbd_read_payload_new, NULL);

/*
 * Append @len bytes at @off of @page, whose reference the payload now
 * owns; @units is its size in PAGE_SIZE units (leak accounting).
 */
static void ksmbd_read_payload_add(struct ksmbd_read_payload *p,
				   struct page *page, unsigned int len,
				   unsigned int off, unsigned long units)
{
	p->held += units;
	atomic_long_add(units, &ksmbd_sched_held.payload_pages);
	p->nr_bvec++;
	bvec_set_page(&p->bvec[p->nr_bvec - 1], page, len, off);
	p->len += len;
}

/* Drop every page reference of @p, then @p. */
static void ksmbd_read_payload_put(struct ksmbd_read_payload *p)
{
	unsigned int i;

	for (i = 0; i < p->nr_bvec; i++)
		put_page(p->bvec[i].bv_page);
	atomic_long_sub(p->held, &ksmbd_sched_held.payload_pages);
	kvfree(p);
	atomic_long_dec(&ksmbd_sched_held.payloads);
}

/**
 * ksmbd_read_payload_free() - release a READ payload's pages
 * @work: the request
 *
 * Safe to call when there is none.  Pages the socket still references
 * (it took its own references when it queued them) stay alive until it
 * has sent them; page-cache pages stay in the page cache.
 */
void ksmbd_read_payload_free(struct ksmbd_work *work)
{
	if (!work->sched.payload)
		return;
	ksmbd_read_payload_put(work->sched.payload);
	work->sched.payload = NULL;
}

/*
 * Page cache: splice_direct_to_actor() has the file's ->splice_read()
 * put page-cache pages into current's internal pipe (filemap and shmem
 * do: one buffer per page, a reference each), and the actor below takes
 * its own reference on each page instead of copying, as nfsd's splice
 * read does.  The pipe's references are dropped when it is drained.
 */
struct ksmbd_read_collect {
	struct ksmbd_read_payload *p;
	int err;
};

/*
 * Not a private copy: a page of a file's page cache, one that was until a
 * racing truncate or hole punch removed it, or the zero page shmem gives
 * for holes.  A removed folio has no mapping; it is still uptodate, and
 * on the LRU unless it was removed while waiting in a per-CPU LRU batch
 * (a page written just before the punch) or is isolated.  A page a
 * ->splice_read() allocated to copy into is none of these.
 */
static bool ksmbd_read_page_cached(struct page *page)
{
	struct folio *folio = page_folio(page);

	return is_zero_page(page) || folio_mapping(folio) ||
	       folio_test_lru(folio) || folio_test_uptodate(folio);
}

/*
 * splice_actor: take one pipe buffer's bytes into the payload.  A piece
 * that continues the last entry in the same page extends it (a page read
 * in two pipe rounds); anything the socket could not take, or more
 * entries than planned, fails the collection (the caller falls back to
 * private pages).
 */
static int ksmbd_read_collect_buf(struct pipe_inode_info *pipe,
				  struct pipe_buffer *buf,
				  struct splice_desc *sd)
{
	struct ksmbd_read_collect *c = sd->u.data;
	struct ksmbd_read_payload *p = c->p;
	struct page *page = nth_page(buf->page, buf->offset / PAGE_SIZE);
	unsigned int off = offset_in_page(buf->offset);
	struct bio_vec *last = p->nr_bvec ? &p->bvec[p->nr_bvec - 1] : NULL;

	if (off + sd->len > PAGE_SIZE)
		goto fail;
	if (last && last->bv_page == page &&
	    last->bv_offset + last->bv_len == off) {
		last->bv_len += sd->len;
		p->len += sd->len;
		return sd->len;
	}
	if (p->nr_bvec == p->max_bvec || !sendpage_ok(page))
		goto fail;
	if (!ksmbd_read_page_cached(page))
		p->src = KSMBD_READ_SRC_PAGES;
	get_page(page);
	ksmbd_read_payload_add(p, page, sd->len, off, 1);
	return sd->len;

fail:
	c->err = -EINVAL;
	return c->err;
}

static int ksmbd_read_collect_pipe(struct pipe_inode_info *pipe,
				   struct splice_desc *sd)
{
	return __splice_from_pipe(pipe, sd, ksmbd_read_collect_buf);
}

/*
 * May the payload be the file's own page-cache pages?  Not when any of
 * these holds, and the data is read into private pages instead:
 *  - read_payload_pagecache is off (measurement);
 *  - not a regular file, or no ->splice_read() (nothing to collect);
 *  - ->splice_read() is copy_splice_read() (it copies into private pages
 *    itself, one page at a time);
 *  - O_DIRECT or DAX: do_splice_read() bypasses ->splice_read() and
 *    copies, there is no page cache to share;
 *  - not seekable or not open for reading: splice_direct_to_actor()
 *    refuses it.
 */
static bool ksmbd_read_pagecache_ok(struct file *filp)
{
	const fmode_t need = FMODE_READ | FMODE_LSEEK;

	if (!READ_ONCE(read_payload_pagecache))
		return false;
	if (!S_ISREG(file_inode(filp)->i_mode) || !filp->f_op->splice_read ||
	    filp->f_op->splice_read == copy_splice_read)
		return false;
	if ((filp->f_flags & O_DIRECT) || IS_DAX(filp->f_mapping->host))
		return false;
	return (filp->f_mode & need) == need;
}

/*
 * Collect @count bytes at *@pos from the page cache.  Return: bytes (a
 * payload is set), 0 at end of file, an error of the read, or
 * -EOPNOTSUPP when page-cache pages cannot be used after all (nothing
 * is set, *@pos is unchanged: the caller reads into private pages).
 */
static ssize_t ksmbd_read_pagecache(struct ksmbd_work *work,
				    struct ksmbd_file *fp, size_t count,
				    loff_t *pos)
{
	unsigned int max = DIV_ROUND_UP(offset_in_page(*pos) + count,
					PAGE_SIZE);
	struct ksmbd_read_collect c = {};
	struct splice_desc sd = { .u.data = &c };
	loff_t start = *pos;
	ssize_t n;

	c.p = ksmbd_read_payload_new(max, KSMBD_READ_SRC_PAGECACHE);
	if (!c.p)
		return -ENOMEM;
	n = ksmbd_vfs_splice_read(work, fp, count, pos, &sd,
				  ksmbd_read_collect_pipe);
	if (c.err || n == -ENOMEM || (n > 0 && c.p->len != n)) {
		ksmbd_read_payload_put(c.p);
		*pos = start;
		return -EOPNOTSUPP;
	}
	if (n <= 0) {
		ksmbd_read_payload_put(c.p);
		return n;
	}
	work->sched.payload = c.p;
	return n;
}

/*
 * Private pages for @count bytes: order-0 pages in bulk by default.
 * Return: 0 or -ENOMEM (fail_function may inject it, see above).
 */
static noinline int ksmbd_read_payload_fill(struct ksmbd_read_payload *p,
					    size_t count)
{
	unsigned int order = min_t(unsigned int, READ_ONCE(read_payload_order),
				 KSMBD_READ_PAYLOAD_MAX_ORDER);
	struct page *batch[KSMBD_READ_BULK];
	size_t left = count;

	while (left) {
		unsigned long want, got, i;

		if (order) {
			struct page *page;

			page = alloc_pages(KSMBD_DEFAULT_GFP | __GFP_COMP |
					   __GFP_NOWARN | __GFP_NORETRY, order);
			if (page) {
				size_t len = min_t(size_t, left,
						   PAGE_SIZE << order);

				ksmbd_read_payload_add(p, page, len, 0,
						       1UL << order);
				left -= len;
				continue;
			}
			order = 0;	/* fragmented: the rest in order 0 */
		}

		want = min_t(unsigned long, DIV_ROUND_UP(left, PAGE_SIZE),
			     KSMBD_READ_BULK);
		memset(batch, 0, sizeof(batch));
		got = alloc_pages_bulk_array(KSMBD_DEFAULT_GFP, want, batch);
		if (!got)
			return -ENOMEM;
		for (i = 0; i < got; i++) {
			size_t len = min_t(size_t, left, PAGE_SIZE);

			ksmbd_read_payload_add(p, batch[i], len, 0, 1);
			left -= len;
		}
	}
	return 0;
}
ALLOW_ERROR_INJECTION(ksmbd_read_payload_fill, ERRNO);

/* Keep the first @n bytes of private pages @p, free the pages unused. */
static void ksmbd_read_payload_trim(struct ksmbd_read_payload *p, size_t n)
{
	unsigned int i = 0;
	size_t sum = 0;

	while (sum + p->bvec[i].bv_len < n)
		sum += p->bvec[i++].bv_len;
	p->bvec[i].bv_len = n - sum;
	while (p->nr_bvec > i + 1) {
		struct page *page = p->bvec[--p->nr_bvec].bv_page;

		p->held -= compound_nr(page);
		atomic_long_sub(compound_nr(page),
				&ksmbd_sched_held.payload_pages);
		put_page(page);
	}
	p->len = n;
}

/* Read @count bytes at *@pos into private pages, by copy. */
static ssize_t ksmbd_read_pages(struct ksmbd_work *work, struct ksmbd_file *fp,
				size_t count, loff_t *pos)
{
	struct ksmbd_read_payload *p;
	struct iov_iter iter;
	ssize_t n;

	p = ksmbd_read_payload_new(DIV_ROUND_UP(count, PAGE_SIZE),
				   KSMBD_READ_SRC_PAGES);
	if (!p)
		return -ENOMEM;
	if (ksmbd_read_payload_fill(p, count)) {
		ksmbd_read_payload_put(p);
		return -ENOMEM;
	}
	iov_iter_bvec(&iter, ITER_DEST, p->bvec, p->nr_bvec, count);
	n = ksmbd_vfs_read_iter(work, fp, &iter, pos);
	if (n <= 0) {
		ksmbd_read_payload_put(p);
		return n;
	}

	/* Send only what was read. */
	ksmbd_read_payload_trim(p, n);
	work->sched.payload = p;
	return n;
}

/**
 * ksmbd_read_splice() - collect a READ's data as pages for the socket
 * @work:  the READ request; its payload is set on success
 * @fp:    the file, passed ksmbd_read_splice_gate()
 * @count: bytes to read, 1 .. the negotiated MaxReadSize
 * @pos:   file position, advanced by the bytes read
 *
 * The file's page-cache pages themselves when ksmbd_read_pagecache_ok()
 * allows (zero-copy: the payload and then the socket reference them),
 * else private pages read by copy.  The length is fixed here: the reply
 * sends exactly the bytes counted, whatever happens to the file later.
 *
 * Context: process context (a ksmbd worker), may sleep.
 * Return: bytes read (may be less than @count at end of file), -ENOMEM
 * when no pages could be had (the caller copies instead), or an error of
 * the read, as ksmbd_vfs_read() returns it.
 */
ssize_t ksmbd_read_splice(struct ksmbd_work *work, struct ksmbd_file *fp,
			  size_t count, loff_t *pos)
{
	ssize_t n;

	if (WARN_ON_ONCE(!count || work->sched.payload))
		return -EINVAL;
	if (ksmbd_read_pagecache_ok(fp->filp)) {
		n = ksmbd_read_pagecache(work, fp, count, pos);
		if (n != -EOPNOTSUPP)
			return n;
	}
	return ksmbd_read_pages(work, fp, count, pos);
}

/**
 * ksmbd_read_splice_pin() - add the READ reply header to the response
 * @work: the request, with a payload from ksmbd_read_splice()
 * @rsp:  the SMB2 READ response header
 * @len:  its length, up to Buffer
 *
 * The payload is not pinned in work->iov: the RFC 1002 length counts it,
 * and ksmbd_conn_write() sends it from the bio_vec after the header.
 *
 * Return: 0, or -ENOMEM.
 */
int ksmbd_read_splice_pin(struct ksmbd_work *work, void *rsp, int len)
{
	int err = ksmbd_iov_pin_rsp(work, rsp, len);

	if (err)
		return err;
	inc_rfc1001_len(work->iov[0].iov_base, work->sched.payload->len);
	return 0;
}

/**
 * ksmbd_read_payload_trace() - report how a READ reply's data goes out
 * @work: the request, with its payload if it is spliced
 * @path: KSMBD_READ_SPLICE, or why it is copied
 * @len:  bytes of data in the reply
 *
 * The tracepoint's src says where the data is: pagecache or pages for a
 * payload, copy for a copied reply with data, none without data.
 */
void ksmbd_read_payload_trace(struct ksmbd_work *work,
			      enum ksmbd_read_path path, size_t len)
{
	const struct net *net = work->conn->sched_net;
	enum ksmbd_read_src src = len ? KSMBD_READ_SRC_COPY : KSMBD_READ_SRC_NONE;

	if (work->sched.payload)
		src = work->sched.payload->src;
	trace_ksmbd_read_payload(net ? net->ns.inum : 0, work->sched.verdict,
				 path, len, src);
}

/**
 * ksmbd_read_payload_send() - send a reply whose data is page-backed
 * @work: the request, with its header in work->iov and its data in
 *        work->sched.payload
 *
 * Context: ksmbd_conn_write(), under the connection's send lock, so the
 * header and the pages go out back to back.  The transport sends the
 * whole frame or shuts the connection down.
 *
 * Return: bytes sent, or a negative errno.
 */
int ksmbd_read_payload_send(struct ksmbd_work *work)
{
	struct ksmbd_read_payload *p = work->sched.payload;
	struct ksmbd_transport *t = work->conn->transport;
	size_t frame = get_rfc1002_len(work->iov[0].iov_base) + 4;

	return t->ops->writev_spliced(t, work->iov, work->iov_cnt,
				      frame - p->len, p->bvec, p->nr_bvec,
				      p->len);
}
