// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Page-backed READ replies, sent with MSG_SPLICE_PAGES.
 *
 * When the BPF verdict of a READ has KSMBD_SCHED_VERDICT_SPLICE and every
 * gate below passes, the data is read into private pages (order 0 unless
 * read_payload_order says otherwise) described by a bio_vec array, and
 * the transport sends the reply header (copied, MSG_MORE) followed by the
 * pages (spliced: the socket takes page references, no copy).  Slab
 * memory never enters the splice iterator: the header is sent by copy and
 * the pages come from alloc_pages.  Any gate that fails, and a failed
 * page allocation, keep today's copy path.
 *
 * Status, DataLength and bytes on the wire are those of the copy path in
 * every case: the same read checks (ksmbd_vfs_read_iter()), the same
 * end-of-file rule in smb2_read(), and only the bytes read are sent.
 */

#include <linux/bvec.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/slab.h>
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
 * Order of the pages a payload is read into.  0 (order-0 pages, the shape
 * the network stack and the page allocator like best) is the default;
 * higher orders are for measurement (Documentation/read-splice.rst) and
 * fall back to order 0 page by page when memory is fragmented.
 */
static unsigned int read_payload_order;
module_param(read_payload_order, uint, 0644);
MODULE_PARM_DESC(read_payload_order,
		 "page order of spliced READ payloads, 0..4 (default 0)");

#define KSMBD_READ_PAYLOAD_MAX_ORDER	4

/* Drop a payload's reference to @page, and count it out. */
static void ksmbd_read_payload_put_page(struct page *page)
{
	atomic_long_sub(compound_nr(page), &ksmbd_sched_held.payload_pages);
	put_page(page);
}

/**
 * ksmbd_read_splice_gate() - may this READ reply be sent spliced?
 * @work:         the READ request
 * @fp:           the file it reads
 * @req:          its SMB2 READ header (MS-SMB2 2.2.19)
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
 *
 * Return: KSMBD_READ_SPLICE, or the reason to copy.
 */
enum ksmbd_read_path ksmbd_read_splice_gate(struct ksmbd_work *work,
					    struct ksmbd_file *fp,
					    struct smb2_read_req *req,
					    bool rdma_channel)
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
	return KSMBD_READ_SPLICE;
}

/**
 * ksmbd_read_payload_free() - release a READ payload's pages
 * @work: the request
 *
 * Safe to call when there is none.  Pages the socket still references
 * stay alive until it has sent them.
 */
void ksmbd_read_payload_free(struct ksmbd_work *work)
{
	struct ksmbd_read_payload *p = work->sched.payload;
	unsigned int i;

	if (!p)
		return;
	for (i = 0; i < p->nr_bvec; i++)
		ksmbd_read_payload_put_page(p->bvec[i].bv_page);
	kvfree(p);
	atomic_long_dec(&ksmbd_sched_held.payloads);
	work->sched.payload = NULL;
}

/* A page of @order if it can be had at once, else an order-0 page. */
static struct page *ksmbd_read_payload_page(unsigned int *order)
{
	struct page *page;

	if (*order) {
		page = alloc_pages(KSMBD_DEFAULT_GFP | __GFP_COMP |
				   __GFP_NOWARN | __GFP_NORETRY, *order);
		if (page)
			goto got;
		*order = 0;
	}
	page = alloc_page(KSMBD_DEFAULT_GFP);
	if (!page)
		return NULL;
got:
	atomic_long_add(1L << *order, &ksmbd_sched_held.payload_pages);
	return page;
}

static struct ksmbd_read_payload *ksmbd_read_payload_alloc(size_t count)
{
	unsigned int max = DIV_ROUND_UP(count, PAGE_SIZE);
	struct ksmbd_read_payload *p;
	size_t left = count;

	p = kvzalloc(struct_size(p, bvec, max), KSMBD_DEFAULT_GFP);
	if (!p)
		return NULL;
	atomic_long_inc(&ksmbd_sched_held.payloads);
	while (left) {
		unsigned int order = min(READ_ONCE(read_payload_order),
					 KSMBD_READ_PAYLOAD_MAX_ORDER);
		struct page *page = ksmbd_read_payload_page(&order);
		size_t len = min_t(size_t, left, PAGE_SIZE << order);

		if (!page)
			goto fail;
		p->nr_bvec++;
		bvec_set_page(&p->bvec[p->nr_bvec - 1], page, len, 0);
		left -= len;
	}
	p->len = count;
	return p;

fail:
	while (p->nr_bvec)
		ksmbd_read_payload_put_page(p->bvec[--p->nr_bvec].bv_page);
	kvfree(p);
	atomic_long_dec(&ksmbd_sched_held.payloads);
	return NULL;
}

/* Keep the first @n bytes of @p: shorten the vector, free unused pages. */
static void ksmbd_read_payload_trim(struct ksmbd_read_payload *p, size_t n)
{
	unsigned int i = 0;
	size_t sum = 0;

	while (sum + p->bvec[i].bv_len < n)
		sum += p->bvec[i++].bv_len;
	p->bvec[i].bv_len = n - sum;
	while (p->nr_bvec > i + 1)
		ksmbd_read_payload_put_page(p->bvec[--p->nr_bvec].bv_page);
	p->len = n;
}

/**
 * ksmbd_read_splice() - read a READ's data into private pages
 * @work:  the READ request; its payload is set on success
 * @fp:    the file
 * @count: bytes to read, at most the negotiated MaxReadSize
 * @pos:   file position, advanced by the bytes read
 *
 * Return: bytes read (may be less than @count at end of file), -ENOMEM
 * when no pages could be had (the caller copies instead), or an error of
 * ksmbd_vfs_read_iter().
 */
ssize_t ksmbd_read_splice(struct ksmbd_work *work, struct ksmbd_file *fp,
			  size_t count, loff_t *pos)
{
	struct ksmbd_read_payload *p;
	struct iov_iter iter;
	ssize_t n;

	if (!count) {
		iov_iter_bvec(&iter, ITER_DEST, NULL, 0, 0);
		return ksmbd_vfs_read_iter(work, fp, &iter, pos);
	}

	p = ksmbd_read_payload_alloc(count);
	if (!p)
		return -ENOMEM;
	iov_iter_bvec(&iter, ITER_DEST, p->bvec, p->nr_bvec, count);
	n = ksmbd_vfs_read_iter(work, fp, &iter, pos);
	if (n <= 0) {
		work->sched.payload = p;
		ksmbd_read_payload_free(work);
		return n;
	}

	/* Send only what was read. */
	ksmbd_read_payload_trim(p, n);
	work->sched.payload = p;
	return n;
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
 * @work: the request
 * @path: KSMBD_READ_SPLICE, or why it is copied
 * @len:  bytes of data in the reply
 */
void ksmbd_read_payload_trace(struct ksmbd_work *work,
			      enum ksmbd_read_path path, size_t len)
{
	const struct net *net = work->conn->sched_net;

	trace_ksmbd_read_payload(net ? net->ns.inum : 0, work->sched.verdict,
				 path, len);
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
