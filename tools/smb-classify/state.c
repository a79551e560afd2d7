// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * state.c - what is in force in a netns, gathered in one place for
 * status, dump and apply: the kernel's /proc/net/ksmbd_sched, the pinned
 * link checked against it, the pinned maps' entries and the attached
 * ops' data
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "main.h"

/**
 * ksched_read() - read /proc/net/ksmbd_sched of the current netns
 * @st: output; unknown keys are ignored.  Its class lines are allocated:
 *      ksched_free() them (a failed read leaves nothing to free).
 *
 * Return: 0, or -ENOENT when the kernel lacks ksmbd BPF scheduling (both
 * reported), or another negative errno, reported.
 */
int ksched_read(struct ksched_state *st)
{
	FILE *f;
	int err;

	memset(st, 0, sizeof(*st));
	snprintf(st->name, sizeof(st->name), "-");
	f = fopen(KSCHED_PROC, "re");
	if (!f && errno == ENOENT) {
		p_err("this kernel has no ksmbd BPF scheduling (no /proc/net/ksmbd_sched: ksmbd missing or built without it)");
		return -ENOENT;
	}
	if (!f)
		return p_errno(-errno, "cannot read %s", KSCHED_PROC);
	err = ksched_parse(f, st);
	fclose(f);
	if (err)
		p_err("cannot parse %s: %s", KSCHED_PROC,
		      err == -EINVAL ? "malformed class line" :
		      strerror(-err));
	return err;
}

/**
 * link_check() - open the pinned link and check it against the kernel
 * @ns:      from ns_resolve(), live, locked.
 * @st:      kernel state of the netns.
 * @link_fd: output: the link's fd, or -1 when none is pinned or it is stale.
 * @info:    output: its info (also of a stale one: its id), zeroed when
 *           none is pinned.
 * @stale:   output: a link was pinned but is not the one the kernel has
 *           attached in this netns (detached, or a pin of an earlier netns
 *           with the same inode number).  The caller removes the pins.
 *
 * Return: 0 or a negative errno, reported.
 */
int link_check(struct ns_ctx *ns, const struct ksched_state *st,
	       int *link_fd, struct bpf_link_info *info, bool *stale)
{
	int fd = link_open(ns, info);

	*link_fd = -1;
	*stale = false;
	if (fd < 0)
		return fd == -ENOENT ? 0 : fd;
	*stale = info->type != BPF_LINK_TYPE_STRUCT_OPS ||
		 !info->struct_ops.map_id || !st->attached ||
		 st->link_id != info->id;
	if (*stale)
		close(fd);
	else
		*link_fd = fd;
	return 0;
}

/**
 * ns_gather() - read what is in force in the netns
 * @ns:           from ns_resolve(), live; locked here unless nothing is
 *                pinned at all (the caller ns_unlock()s it).
 * @g:            output; ns_state_free() it, also after an error.
 * @remove_stale: remove the pins of a stale link first (status).
 *
 * Return: 0 or a negative errno, reported.
 */
int ns_gather(struct ns_ctx *ns, struct ns_state *g, bool remove_stale)
{
	struct bpf_link_info info;
	int link_fd = -1, err;

	memset(g, 0, sizeof(*g));
	err = ksched_read(&g->st);
	if (err)
		return err;
	err = ns_lock(ns, false);
	if (err)
		return err == -ENOENT ? 0 : err;	/* nothing pinned */
	err = link_check(ns, &g->st, &link_fd, &info, &g->stale);
	g->link_id = info.id;
	if (!err && g->stale && remove_stale)
		err = ns_remove_pins(ns);
	if (!err)
		err = pinned_entries(ns, &g->c, &g->maps);
	if (!err && link_fd >= 0) {
		g->map_id = info.struct_ops.map_id;
		g->c.has_max_inflight = !ops_data(g->map_id, &g->oi);
		g->c.max_inflight = g->oi.max_inflight;
	}
	if (link_fd >= 0)
		close(link_fd);
	return err;
}

/** ns_state_free() - free what ns_gather() read */
void ns_state_free(struct ns_state *g)
{
	ksched_free(&g->st);
	conf_free(&g->c);
}
