// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * netns.c - network namespaces, pins and kernel state for smb-classify
 *
 * Stored identity.  The pins of a netns live in PIN_ROOT/<ino>, <ino> being
 * the netns's nsfs inode number.  A name given with -n NAME is recorded as
 * a symlink PIN_NAMES/NAME -> ../<ino>, so after "ip netns del NAME" the
 * pins are still found.  A netns is then looked for by inode among
 * NETNS_RUN_DIR and /proc/<pid>/ns/net: if no process holds it any more,
 * it is gone and its pins are stale.  An inode number can be reused by a
 * later netns; a pinned link is therefore checked against the link id the
 * kernel reports for the netns (/proc/net/ksmbd_sched) before it is used.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <linux/magic.h>
#include <bpf/bpf.h>

#include "main.h"

/* @name is usable as one path component (a netns name). */
static bool valid_name(const char *name)
{
	return *name && strlen(name) < NAME_MAX && !strchr(name, '/') &&
	       strcmp(name, ".") && strcmp(name, "..");
}

/* Open a netns file whose inode is @ino: a bind mount or a process's. */
static int find_netns_by_ino(unsigned long ino)
{
	static const char *const where[] = {
		NETNS_RUN_DIR "/*", "/proc/[0-9]*/ns/net",
	};
	struct stat st;
	unsigned int i;
	int fd = -1;
	size_t j;
	glob_t g;

	for (i = 0; i < ARRAY_SIZE(where) && fd < 0; i++) {
		if (!glob(where[i], GLOB_NOSORT, NULL, &g))
			for (j = 0; j < g.gl_pathc && fd < 0; j++)
				if (!stat(g.gl_pathv[j], &st) &&
				    st.st_ino == ino)
					fd = open(g.gl_pathv[j],
						  O_RDONLY | O_CLOEXEC);
		globfree(&g);
	}
	return fd;
}

/* PIN_NAMES/NAME: where the name of a netns is recorded. */
static void record_path(const char *name, char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%s", PIN_NAMES, name);
}

/* PIN_ROOT/<ino>: the pin directory of a netns. */
static void set_dir(struct ns_ctx *ns)
{
	snprintf(ns->dir, sizeof(ns->dir), "%s/%lu", PIN_ROOT, ns->ino);
}

/* The inode a name was recorded with, from PIN_NAMES/NAME -> ../<ino>. */
static int recorded_ino(const char *name, unsigned long *ino)
{
	char path[PATH_MAX], target[64];
	ssize_t n;

	record_path(name, path);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (strncmp(target, "../", 3) || parse_uint(target + 3, ULONG_MAX, ino))
		return -EINVAL;
	return 0;
}

/**
 * ns_resolve() - find and enter the netns of this command
 * @ns:        filled in; ns->lock_fd is -1.
 * @need_live: fail when the netns no longer exists (load, replace, prefix).
 *
 * With -n, enters that netns (setns(CLONE_NEWNET)): the kernel binds a
 * struct_ops link to the attaching task's netns and /proc/self/net shows
 * the current one.  A name whose netns was deleted resolves through its
 * record to the stored inode, with ns->live false (or, if some process
 * still holds that netns, enters it).  Without @need_live, a name that
 * neither exists nor was recorded gives ns->ino 0 and ns->live false.
 *
 * Return: 0 or a negative errno, the error reported.
 */
int ns_resolve(struct ns_ctx *ns, bool need_live)
{
	char path[PATH_MAX];
	int fd, err;

	memset(ns, 0, sizeof(*ns));
	ns->lock_fd = -1;
	ns->label = "current";

	if (!netns_arg) {
		fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return p_errno(-errno, "cannot open /proc/self/ns/net");
	} else {
		ns->label = netns_arg;
		if (strchr(netns_arg, '/')) {
			snprintf(path, sizeof(path), "%s", netns_arg);
		} else if (valid_name(netns_arg)) {
			ns->name = netns_arg;
			snprintf(path, sizeof(path), "%s/%s", NETNS_RUN_DIR,
				 netns_arg);
		} else {
			return p_err("invalid netns name '%s'", netns_arg);
		}
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && (errno != ENOENT || !ns->name))
			return p_errno(-errno, "cannot open netns %s", path);
		if (fd < 0) {
			err = recorded_ino(ns->name, &ns->ino);
			if (err == -ENOENT && !need_live) {
				/* Nothing to find: ns->ino 0, not live. */
				ns->ino = 0;
				return 0;
			}
			if (err) {
				p_err("netns '%s' does not exist%s", ns->name,
				      err == -ENOENT ?
				      " (and smb-classify has no record of it)" :
				      " (and its record is unreadable)");
				return -ENOENT;
			}
			fd = find_netns_by_ino(ns->ino);
		}
	}

	if (fd >= 0) {
		unsigned long old;
		struct stat sb;

		err = 0;
		if (fstat(fd, &sb))
			err = p_errno(-errno, "cannot stat netns %s", ns->label);
		else if (netns_arg && setns(fd, CLONE_NEWNET))
			err = p_errno(-errno, "cannot enter netns %s",
				      ns->label);
		close(fd);
		if (err)
			return err;
		ns->ino = sb.st_ino;
		if (ns->name && !recorded_ino(ns->name, &old) &&
		    old != ns->ino) {
			int ofd = find_netns_by_ino(old);

			if (ofd >= 0)
				close(ofd);
			else
				ns->old_ino = old;
		}
		ns->live = true;
	} else if (need_live) {
		p_err("netns '%s' (inode %lu) no longer exists", ns->name,
		      ns->ino);
		return -ENOENT;
	}
	set_dir(ns);
	return 0;
}

static bool bpffs_mounted(void)
{
	struct statfs sfs;

	return !statfs(BPFFS_ROOT, &sfs) && sfs.f_type == BPF_FS_MAGIC;
}

static int mkdir_ok(const char *path)
{
	if (mkdir(path, 0700) && errno != EEXIST)
		return p_errno(-errno, "cannot create %s", path);
	return 0;
}

/**
 * ns_lock() - serialise smb-classify runs and prepare the pin directory
 * @ns:     from ns_resolve().
 * @create: mount bpffs if needed and create PIN_ROOT and ns->dir.
 *
 * Takes an exclusive flock() on PIN_ROOT, held until ns_unlock() or exit,
 * so two loaders never interleave their attach, pin and cleanup steps.
 *
 * Return: 0; -ENOENT (not reported) when !@create and there is nothing
 * pinned at all; another negative errno, reported.
 */
int ns_lock(struct ns_ctx *ns, bool create)
{
	int err;

	if (!bpffs_mounted()) {
		if (!create)
			return -ENOENT;
		if (mount("bpf", BPFFS_ROOT, "bpf", 0, "mode=0700"))
			return p_errno(-errno, "bpffs is not mounted on %s and mounting it failed",
				       BPFFS_ROOT);
	}
	if (create) {
		err = mkdir_ok(PIN_ROOT);
		if (err)
			return err;
	}
	ns->lock_fd = open(PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ns->lock_fd < 0) {
		if (errno == ENOENT && !create)
			return -ENOENT;
		return p_errno(-errno, "cannot open %s", PIN_ROOT);
	}
	err = flock(ns->lock_fd, LOCK_EX) ?
	      p_errno(-errno, "cannot lock %s", PIN_ROOT) : 0;
	if (!err && ns->old_ino) {
		/* Pins of the netns this name named before, deleted since. */
		struct ns_ctx old = { .ino = ns->old_ino, .lock_fd = -1 };

		set_dir(&old);
		err = ns_remove_pins(&old);
	}
	if (!err && create)
		err = ns_make_dir(ns);
	if (!err && ns->live)
		err = pins_recover(ns);
	if (err)
		ns_unlock(ns);
	return err;
}

/** ns_make_dir() - create ns->dir if missing; 0 or -errno, reported */
int ns_make_dir(const struct ns_ctx *ns)
{
	return mkdir_ok(ns->dir);
}

/** ns_unlock() - release the lock of ns_lock(), if held */
void ns_unlock(struct ns_ctx *ns)
{
	if (ns->lock_fd >= 0)
		close(ns->lock_fd);
	ns->lock_fd = -1;
}

/** ns_pin_path() - ns->dir/@name (PIN_LINK, a map's) into PATH_MAX @buf */
void ns_pin_path(const struct ns_ctx *ns, const char *name, char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%s", ns->dir, name);
}

/**
 * ns_record_name() - record -n NAME as PIN_NAMES/NAME -> ../<ino>
 * @ns: from ns_resolve(), locked with create.
 *
 * Return: 0 (also without a name), or a negative errno, reported.
 */
int ns_record_name(const struct ns_ctx *ns)
{
	char path[PATH_MAX], target[64];
	unsigned long ino;
	int err;

	if (!ns->name)
		return 0;
	if (!recorded_ino(ns->name, &ino) && ino == ns->ino)
		return 0;
	err = mkdir_ok(PIN_NAMES);
	if (err)
		return err;
	record_path(ns->name, path);
	snprintf(target, sizeof(target), "../%lu", ns->ino);
	if ((unlink(path) && errno != ENOENT) || symlink(target, path))
		return p_errno(-errno, "cannot record netns name in %s", path);
	return 0;
}

/* Remove the name records that point at this netns's directory. */
static int remove_name_records(const struct ns_ctx *ns)
{
	char path[PATH_MAX];
	unsigned long ino;
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = opendir(PIN_NAMES);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || recorded_ino(de->d_name, &ino) ||
		    ino != ns->ino)
			continue;
		record_path(de->d_name, path);
		if (unlink(path) && !err)
			err = -errno;
	}
	closedir(d);
	rmdir(PIN_NAMES);	/* only if empty */
	return err;
}

/**
 * ns_remove_pins() - remove every pin of this netns, its dir and names
 * @ns: from ns_resolve(), locked.
 *
 * Unpinning drops the pins' references: a link no process holds open is
 * released, which detaches it if it still was attached.
 *
 * Return: 0 or a negative errno, reported.
 */
int ns_remove_pins(struct ns_ctx *ns)
{
	char path[PATH_MAX];
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = opendir(ns->dir);
	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") ||
			    !strcmp(de->d_name, ".."))
				continue;
			ns_pin_path(ns, de->d_name, path);
			if (unlink(path) && !err)
				err = p_errno(-errno, "cannot remove %s", path);
		}
		closedir(d);
		if (!err && rmdir(ns->dir) && errno != ENOENT)
			err = p_errno(-errno, "cannot remove %s", ns->dir);
	} else if (errno != ENOENT) {
		err = p_errno(-errno, "cannot open %s", ns->dir);
	}
	if (!err)
		err = remove_name_records(ns);
	if (err)	/* reported already, unless it is this one */
		p_errno(err, "cannot remove name records in %s", PIN_NAMES);
	return err;
}

/**
 * ns_open() - resolve the (live) netns of -n and take the lock
 * @ns:     output.
 * @create: as ns_lock(): mount bpffs, create the directories.
 *
 * Return: 0 (without the lock when !@create and nothing is pinned at
 * all: every pinned map then opens as none), or a negative errno,
 * reported.
 */
int ns_open(struct ns_ctx *ns, bool create)
{
	int err = ns_resolve(ns, true);

	if (err)
		return err;	/* also -ENOENT: no such netns */
	err = ns_lock(ns, create);
	return err == -ENOENT && !create ? 0 : err;
}

/** ns_cmd() - no_args() of command @cmd, then ns_resolve(); 0 or -errno */
int ns_cmd(const char *cmd, int argc, char **argv, struct ns_ctx *ns,
	   bool need_live)
{
	int err = no_args(cmd, argc, argv);

	return err ? err : ns_resolve(ns, need_live);
}

/** ns_done() - close @map_fd (if >= 0), ns_unlock(); return @err */
int ns_done(struct ns_ctx *ns, int map_fd, int err)
{
	if (map_fd >= 0)
		close(map_fd);
	ns_unlock(ns);
	return err;
}

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
