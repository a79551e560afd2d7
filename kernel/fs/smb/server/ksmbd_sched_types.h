/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Per-request and per-connection state of ksmbd's BPF scheduling hook,
 * embedded in struct ksmbd_work and struct ksmbd_conn.  See
 * ksmbd_sched.c (hook) and ksmbd_sched_disp.c (dispatcher).
 */
#ifndef __KSMBD_SCHED_TYPES_H__
#define __KSMBD_SCHED_TYPES_H__

#include <linux/list.h>
#include <linux/types.h>

#include "ksmbd_sched_abi.h"

struct ksmbd_sched_disp;
struct ksmbd_sched_client;
struct ksmbd_read_payload;

/**
 * struct ksmbd_sched_work - a request's scheduling state
 * @entry:    on its client's queue while it waits for dispatch
 * @age:      on the dispatcher's queue of all waiting requests, oldest
 *            first (the watchdog looks at its head)
 * @disp:     the dispatcher that holds a reference for this request, or
 *            NULL (flat path: nothing attached, or not tracked)
 * @client:   its client while it is tracked (waiting or holding a slot)
 * @qtime_ns: when it was queued, ktime_get_ns()
 * @stime_ns: when it took its slot, ktime_get_ns() (the adaptive budget)
 * @held_ns:  how long it held its slot, ns, once it gave it back
 * @verdict:  the clamped verdict word of classify_req()
 * @bytes:    READ/WRITE bytes of all its PDUs, each clamped to what its
 *            connection may ask; 0 for other commands
 * @cost:     what its client is charged up front, bytes
 *            (ksmbd_sched_disp.c)
 * @moved:    bytes it really moved, set while it runs
 *            (ksmbd_sched_moved()); its charge at completion
 * @mem:      bytes of its received message, counted against its
 *            client's queued-bytes cap while it waits
 * @class_word: class word of its connection when it was received
 * @command:  SMB2 command of the first PDU, KSMBD_SCHED_CMD_UNKNOWN if
 *            not visible
 * @clients:  clients with waiting requests when it was picked (0: it
 *            did not wait), for the dispatch tracepoint
 * @slot:     it holds one of the dispatcher's in-flight slots
 * @stuck:    it held its slot so long that the slot was taken out of
 *            the budget; it still counts against its client's bound
 * @charged:  @cost was taken from its client's deficit (contested)
 * @qos:      @cost moved its client's reservation and limit tags on
 *            (ksmbd_disp_qos_take()); settled at completion
 * @unauth:   received before its connection had a session: it never
 *            takes a slot, and its client runs few such at once
 * @invalid:  @unauth, and a command that cannot succeed before a session
 *            (ksmbd refuses it): its client runs few such a second
 * @dropped:  its connection was going away when it was picked: it is
 *            not run, only freed
 * @payload:  page-backed READ data to send spliced, or NULL
 */
struct ksmbd_sched_work {
	struct list_head	entry;
	struct list_head	age;
	struct ksmbd_sched_disp	*disp;
	struct ksmbd_sched_client *client;
	u64			qtime_ns;
	u64			stime_ns;
	u64			held_ns;
	u32			verdict;
	u32			bytes;
	u32			cost;
	u32			moved;
	u32			mem;
	u32			class_word;
	u16			command;
	u16			clients;
	bool			slot;
	bool			stuck;
	bool			charged;
	bool			qos;
	bool			unauth;
	bool			invalid;
	bool			dropped;
	struct ksmbd_read_payload *payload;
};

/**
 * struct ksmbd_sched_conn_state - a connection's scheduling state
 * @ctx:    what classify_conn() sees of it, kept to classify it again
 *          when another program is attached
 * @gen:    generation of the attachment its class word comes from (0:
 *          none); a request seeing another generation reclassifies it
 * @disp:   the dispatcher @client belongs to (referenced), or NULL
 * @client: its client in @disp (referenced), or NULL
 * @word:   the class word it was bound to @client with
 * @by_guid: @client is keyed by @guid (ksmbd_disp_conn_bind())
 * @guid:   the ClientGUID that keys @client when @by_guid
 * @last:   the dispatcher it was last bound in (not referenced: compared
 *          only)
 * @last_client: the client it was last bound to in @last (compared only)
 * @rebound: it was bound to another client of @last since: requests of
 *          it may wait in more than one client (ksmbd_disp_conn_stop())
 *
 * Written only by the connection's receiver thread, and when it is freed.
 */
struct ksmbd_sched_conn_state {
	struct ksmbd_sched_conn		ctx;
	u32				gen;
	struct ksmbd_sched_disp		*disp;
	struct ksmbd_sched_client	*client;
	u32				word;
	bool				by_guid;
	bool				rebound;
	u8				guid[16];
	const struct ksmbd_sched_disp	*last;
	const struct ksmbd_sched_client	*last_client;
};

#endif /* __KSMBD_SCHED_TYPES_H__ */
