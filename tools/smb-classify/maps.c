// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * maps.c - the kernel state and the pinned maps of a netns: the link and
 * /proc/net/ksmbd_sched checked against each other, the prefixes and
 * policy maps opened, created, counted and read whole
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "main.h"
#include "smb_classify.h"

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
 * link_open() - the pinned link of the netns, and its info
 * @ns:   from ns_resolve(), locked.
 * @info: output, zeroed when there is no link.
 *
 * Return: its fd; -ENOENT (not reported) when none is pinned; another
 * negative errno, reported.
 */
int link_open(struct ns_ctx *ns, struct bpf_link_info *info)
{
	__u32 len = sizeof(*info);
	char path[PATH_MAX];
	int fd, err;

	memset(info, 0, sizeof(*info));
	ns_pin_path(ns, PIN_LINK, path);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return fd == -ENOENT ? fd :
		       p_errno(fd, "cannot open pinned link %s", path);
	err = bpf_link_get_info_by_fd(fd, info, &len);
	if (!err)
		return fd;
	close(fd);
	return p_errno(err, "cannot get info of pinned link %s", path);
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
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	if (info->type != BPF_LINK_TYPE_STRUCT_OPS ||
	    !info->struct_ops.map_id || !st->attached ||
	    st->link_id != info->id) {
		*stale = true;
		close(fd);
		return 0;
	}
	*link_fd = fd;
	return 0;
}

/* The maps of the netns that outlive the program: the one list. */
const struct shared_map shared_maps[NSHARED] = {
	[SHARED_PREFIXES] = { SMB_PREFIXES_MAP_NAME, BPF_MAP_TYPE_LPM_TRIE,
			      sizeof(struct smb_prefix_key), sizeof(__u32),
			      SMB_PREFIXES_MAX,
			      "an LPM trie of struct smb_prefix_key to __u32" },
	[SHARED_POLICY] = { SMB_POLICY_MAP_NAME, BPF_MAP_TYPE_HASH,
			    sizeof(__u32), sizeof(struct smb_policy),
			    SMB_POLICY_MAX,
			    "a hash of __u32 class id to struct smb_policy" },
};

/**
 * shared_open() - open the pinned map shared_maps[@i] of the netns
 * @ns:     from ns_resolve(), locked.
 * @i:      SHARED_PREFIXES or SHARED_POLICY.
 * @create: create and pin an empty one when none is pinned.
 * @map_fd: output, -1 when there is none and !@create.
 *
 * Checks that the pinned map has the type and sizes of shared_maps[@i].
 *
 * Return: 0 or a negative errno, reported.
 */
int shared_open(struct ns_ctx *ns, unsigned int i, bool create, int *map_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts,
		    .map_flags = BPF_F_NO_PREALLOC);
	const struct shared_map *sm = &shared_maps[i];
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd, err;

	*map_fd = -1;
	ns_pin_path(ns, sm->name, path);
	fd = bpf_obj_get(path);
	if (fd == -ENOENT) {
		if (!create)
			return 0;
		fd = bpf_map_create(sm->type, sm->name, sm->key, sm->value,
				    sm->max_entries, &opts);
		if (fd < 0)
			return p_errno(fd, "cannot create the %s map",
				       sm->name);
		err = bpf_obj_pin(fd, path);
		if (err)
			p_errno(err, "cannot pin the %s map at %s", sm->name,
				path);
		goto out;
	}
	if (fd < 0)
		return p_errno(fd, "cannot open pinned map %s", path);
	err = bpf_map_get_info_by_fd(fd, &info, &len);
	if (err) {
		p_errno(err, "cannot get info of pinned map %s", path);
	} else if (info.type != sm->type || info.key_size != sm->key ||
		   info.value_size != sm->value) {
		p_err("pinned map %s is not a %s map (type %u, key %u, value %u bytes)",
		      path, sm->name, info.type, info.key_size,
		      info.value_size);
		err = -EINVAL;
	}
out:
	if (err)
		close(fd);
	else
		*map_fd = fd;
	return err;
}

/*
 * Every entry of the shared map @i as an array of records, its key then
 * its value (struct conf_prefix, struct conf_policy), in @cmp order;
 * NULL when there are none.  Entries deleted while the map is walked are
 * skipped.  Return: 0 or a negative errno, reported.
 */
static int map_read_entries(int map_fd, unsigned int i,
			    int (*cmp)(const void *, const void *),
			    void **out, unsigned int *count)
{
	const struct shared_map *sm = &shared_maps[i];
	size_t esz = sm->key + sm->value;
	unsigned char key[32], next[32];
	unsigned int n = 0, cap = 0;
	char *e = NULL, *tmp;
	void *prev = NULL;
	int err;

	while (!(err = bpf_map_get_next_key(map_fd, prev, next))) {
		memcpy(key, next, sm->key);
		prev = key;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			tmp = realloc(e, cap * esz);
			if (!tmp) {
				free(e);
				p_err("out of memory");
				return -ENOMEM;
			}
			e = tmp;
		}
		memcpy(e + n * esz, key, sm->key);
		err = bpf_map_lookup_elem(map_fd, key, e + n * esz + sm->key);
		if (err == -ENOENT)	/* deleted meanwhile */
			continue;
		if (err)
			break;
		n++;
	}
	if (err != -ENOENT) {
		free(e);
		return p_errno(err, "cannot read the %s map", sm->name);
	}
	if (n)
		qsort(e, n, esz, cmp);
	*out = e;
	*count = n;
	return 0;
}

/* map_read_entries()'s key buffers hold every shared map's key. */
static_assert(sizeof(struct smb_prefix_key) <= 32 && sizeof(__u32) <= 32,
	      "shared map keys");
/* Records as map_read_entries() writes them: key, then value. */
static_assert(sizeof(struct conf_prefix) ==
	       sizeof(struct smb_prefix_key) + sizeof(__u32), "conf_prefix");
static_assert(sizeof(struct conf_policy) ==
	       sizeof(__u32) + sizeof(struct smb_policy), "conf_policy");

/**
 * pinned_entries() - every entry of the pinned prefixes and policy maps
 * @ns:     from ns_open() or ns_lock().
 * @c:      output: its prefixes and policies (conf_free() them).
 * @pinned: output: bit 0 the prefixes map is pinned, bit 1 the policy map.
 *
 * Return: 0 or a negative errno, reported.
 */
static int pinned_entries(struct ns_ctx *ns, struct conf *c,
			  unsigned int *pinned)
{
	int (*const cmp[NSHARED])(const void *, const void *) = {
		conf_prefix_cmp, conf_policy_cmp,
	};
	void **out[NSHARED] = { (void **)&c->prefixes, (void **)&c->policies };
	unsigned int *n[NSHARED] = { &c->nprefixes, &c->npolicies }, i;
	int fd, err = 0;

	memset(c, 0, sizeof(*c));
	*pinned = 0;
	for (i = 0; !err && i < NSHARED; i++) {
		err = shared_open(ns, i, false, &fd);
		if (err || fd < 0)
			continue;
		*pinned |= 1 << i;
		err = map_read_entries(fd, i, cmp[i], out[i], n[i]);
		close(fd);
	}
	if (err)
		conf_free(c);
	return err;
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

/**
 * pinned_read() - the start of "prefix list" and "policy show"
 * @cmd:    the command, for messages.
 * @argc:   its words (must be 0).
 * @argv:   the words.
 * @ns:     output: resolved, locked if anything is pinned.
 * @c:      output, as pinned_entries().
 * @pinned: output, as pinned_entries().
 *
 * Return: 0 or a negative errno, reported; on error @ns is unlocked.
 */
int pinned_read(const char *cmd, int argc, char **argv, struct ns_ctx *ns,
		struct conf *c, unsigned int *pinned)
{
	int err = no_args(cmd, argc, argv);

	if (!err)
		err = ns_open(ns, false);
	if (!err)
		err = pinned_entries(ns, c, pinned);
	if (err)
		ns_unlock(ns);
	return err;
}

/**
 * pinned_create() - the start of "prefix add" and "policy set"
 * @ns:   output: the netns of -n, locked (ns_done() it).
 * @map:  SHARED_PREFIXES or SHARED_POLICY; created if missing.
 * @fd:   output: the map, or -1.
 *
 * Return: 0 or a negative errno, reported.
 */
int pinned_create(struct ns_ctx *ns, unsigned int map, int *fd)
{
	int err = ns_open(ns, true);

	*fd = -1;
	if (!err)
		err = shared_open(ns, map, true, fd);
	if (!err)
		err = ns_record_name(ns);
	return err;
}

/**
 * pinned_del() - "prefix del" and "policy del": delete one entry, report it
 * @map:   SHARED_PREFIXES or SHARED_POLICY.
 * @key:   the entry's key.
 * @what:  the entry in error messages ("prefix 10.0.0.0/8").
 * @done:  the text line after "deleted " on success.
 * @field: the JSON member naming the entry: @str if not NULL, else @num.
 * @str:   its string value, or NULL.
 * @num:   its number value.
 *
 * Return: 0 or a negative errno, reported (-ENOENT: no such entry).
 */
int pinned_del(unsigned int map, const void *key, const char *what,
	       const char *done, const char *field, const char *str,
	       unsigned long num)
{
	struct ns_ctx ns;
	int fd = -1, err = ns_open(&ns, false);

	if (!err)
		err = shared_open(&ns, map, false, &fd);
	if (!err)
		err = fd < 0 ? -ENOENT : bpf_map_delete_elem(fd, key);
	err = ns_done(&ns, fd, err);
	if (err == -ENOENT) {
		p_err("%s not found in netns %lu", what, ns.ino);
	} else if (err) {
		p_errno(err, "cannot delete %s", what);
	} else if (json_output) {
		json_result("deleted");
		if (str)
			jsonw_string_field(json_wtr, field, str);
		else
			jsonw_uint_field(json_wtr, field, num);
		jsonw_end_object(json_wtr);
	} else {
		printf("deleted %s\n", done);
	}
	return err;
}
