/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-request state of ksmbd's BPF scheduling hook, embedded in
 * struct ksmbd_work.  See ksmbd_sched.c.
 */
#ifndef __KSMBD_SCHED_TYPES_H__
#define __KSMBD_SCHED_TYPES_H__

#include <linux/list.h>
#include <linux/types.h>

struct ksmbd_sched_disp;
struct ksmbd_read_payload;

/**
 * struct ksmbd_sched_work - a request's scheduling state
 * @entry:    on its client's queue while it waits for dispatch
 * @disp:     the dispatcher that holds a reference for this request, or
 *            NULL (flat path: nothing attached when it was received)
 * @qtime_ns: when it was queued, ktime_get_ns()
 * @verdict:  the clamped verdict word of classify_req()
 * @bytes:    READ/WRITE length in bytes, 0 for other commands
 * @command:  SMB2 command of the first PDU, KSMBD_SCHED_CMD_UNKNOWN if
 *            not visible
 * @clients:  clients with waiting requests when it was picked (0: it
 *            did not wait), for the dispatch tracepoint
 * @slot:     it holds one of the dispatcher's in-flight slots
 * @payload:  page-backed READ data to send spliced, or NULL
 */
struct ksmbd_sched_work {
	struct list_head	entry;
	struct ksmbd_sched_disp	*disp;
	u64			qtime_ns;
	u32			verdict;
	u32			bytes;
	u16			command;
	u16			clients;
	bool			slot;
	struct ksmbd_read_payload *payload;
};

#endif /* __KSMBD_SCHED_TYPES_H__ */
