/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Page-backed READ payloads sent with MSG_SPLICE_PAGES.
 */
#ifndef __KSMBD_READ_PAYLOAD_H__
#define __KSMBD_READ_PAYLOAD_H__

#include <linux/bvec.h>
#include <linux/types.h>

struct ksmbd_work;
struct ksmbd_file;
struct smb2_read_req;

/* Why a READ reply was copied (ksmbd_read_payload tracepoint). */
enum ksmbd_read_path {
	KSMBD_READ_SPLICE = 0,	/* page-backed, spliced */
	KSMBD_READ_NO_VERDICT,	/* the program did not ask for SPLICE */
	KSMBD_READ_TRANSPORT,	/* transport cannot splice (RDMA) */
	KSMBD_READ_RDMA_CHANNEL, /* data goes by RDMA write */
	KSMBD_READ_SIGNED,	/* reply is signed over its payload */
	KSMBD_READ_ENCRYPTED,	/* reply is encrypted */
	KSMBD_READ_COMPOUND,	/* reply is part of a compound */
	KSMBD_READ_COMPRESSED,	/* client asked for a compressed reply */
	KSMBD_READ_STREAM,	/* alternate data stream, read from xattr */
	KSMBD_READ_NOMEM,	/* no pages: copied instead */
	KSMBD_READ_EMPTY,	/* Length 0: no data to send */
	KSMBD_READ_BELOW_FLOOR,	/* Length below read_splice_floor */
};

/* Where the data of a READ reply is (ksmbd_read_payload tracepoint). */
enum ksmbd_read_src {
	KSMBD_READ_SRC_NONE = 0,	/* no data */
	KSMBD_READ_SRC_COPY,		/* copied into a kvzalloc() buffer */
	KSMBD_READ_SRC_PAGES,		/* copied into private pages */
	KSMBD_READ_SRC_PAGECACHE,	/* the file's page-cache pages */
};

/*
 * KSMBD_READ_SPLICE_FLOOR: default of read_splice_floor, in bytes.  A READ
 * shorter than this is copied whatever the verdict says: below 16 KiB
 * splicing measured no gain (4 KiB: 0.95x here, +5% ambiguous in the
 * ksmbd splice RFC; 16 KiB: 1.11x here, +13.5% there), see
 * Documentation/read-splice.rst.
 * KSMBD_READ_PAYLOAD_MAX_ORDER: largest read_payload_order.
 * KSMBD_READ_BULK: private pages asked of the page allocator at once.
 */
enum ksmbd_read_consts {
	KSMBD_READ_SPLICE_FLOOR		= 16 * 1024,
	KSMBD_READ_PAYLOAD_MAX_ORDER	= 4,
	KSMBD_READ_BULK			= 32,
};

/**
 * struct ksmbd_read_payload - the data of one spliced READ reply
 * @src:      KSMBD_READ_SRC_PAGECACHE when every entry is a page of the
 *            file's page cache (or the shared zero page of a hole),
 *            KSMBD_READ_SRC_PAGES when any was copied into a private page
 * @max_bvec: entries allocated in @bvec
 * @nr_bvec:  entries used in @bvec; each holds one page reference, and
 *            lies within one page (page cache) or one private page of
 *            order read_payload_order
 * @held:     what this payload adds to ksmbd_sched_held.payload_pages,
 *            in PAGE_SIZE units: 1 per page-cache entry, 2^order per
 *            private page
 * @len:      bytes of data, the sum of the entries' lengths
 * @bvec:     the pages, in file order
 */
struct ksmbd_read_payload {
	enum ksmbd_read_src src;
	unsigned int max_bvec;
	unsigned int nr_bvec;
	unsigned long held;
	size_t len;
	struct bio_vec bvec[] __counted_by(nr_bvec);
};

#if IS_ENABLED(CONFIG_SMB_SERVER_BPF_SCHED)
enum ksmbd_read_path ksmbd_read_splice_gate(struct ksmbd_work *work,
					    struct ksmbd_file *fp,
					    struct smb2_read_req *req,
					    size_t length, bool rdma_channel);
ssize_t ksmbd_read_splice(struct ksmbd_work *work, struct ksmbd_file *fp,
			  size_t count, loff_t *pos);
int ksmbd_read_splice_pin(struct ksmbd_work *work, void *rsp, int len);
void ksmbd_read_payload_free(struct ksmbd_work *work);
int ksmbd_read_payload_send(struct ksmbd_work *work);
void ksmbd_read_payload_trace(struct ksmbd_work *work,
			      enum ksmbd_read_path path, size_t len);
#else
static inline enum ksmbd_read_path
ksmbd_read_splice_gate(struct ksmbd_work *work, struct ksmbd_file *fp,
		       struct smb2_read_req *req, size_t length,
		       bool rdma_channel)
{
	return KSMBD_READ_NO_VERDICT;
}

static inline ssize_t ksmbd_read_splice(struct ksmbd_work *work,
					struct ksmbd_file *fp, size_t count,
					loff_t *pos)
{
	return -EOPNOTSUPP;
}

static inline int ksmbd_read_splice_pin(struct ksmbd_work *work, void *rsp,
					int len)
{
	return -EOPNOTSUPP;
}

static inline void ksmbd_read_payload_free(struct ksmbd_work *work)
{
}

static inline int ksmbd_read_payload_send(struct ksmbd_work *work)
{
	return -EOPNOTSUPP;
}

static inline void ksmbd_read_payload_trace(struct ksmbd_work *work,
					    enum ksmbd_read_path path,
					    size_t len)
{
}
#endif

#endif /* __KSMBD_READ_PAYLOAD_H__ */
