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
};

/**
 * struct ksmbd_read_payload - the data of one spliced READ reply
 * @nr_bvec: entries used in @bvec, each one page (order 0 by default,
 *           see read_payload_order), all owned
 * @len:     bytes of data, the sum of the entries' lengths
 * @bvec:    the pages, in file order
 */
struct ksmbd_read_payload {
	unsigned int nr_bvec;
	size_t len;
	struct bio_vec bvec[] __counted_by(nr_bvec);
};

#if IS_ENABLED(CONFIG_SMB_SERVER_BPF_SCHED)
enum ksmbd_read_path ksmbd_read_splice_gate(struct ksmbd_work *work,
					    struct ksmbd_file *fp,
					    struct smb2_read_req *req,
					    bool rdma_channel);
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
		       struct smb2_read_req *req, bool rdma_channel)
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
