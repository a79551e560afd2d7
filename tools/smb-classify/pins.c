// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * pins.c - what smb-classify keeps in bpffs: the lock, the pin directory
 * of a netns, its link and maps, the records of netns names
 *
 * Every command that reads or changes pins holds an exclusive flock() on
 * PIN_ROOT (ns_lock()), which also mounts bpffs when needed, removes the
 * pins of a deleted netns whose name now names another, and finishes or
 * undoes the pins of an apply that was killed (pins_recover()).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "smb_classify.h"

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
	[SHARED_USERS] = { SMB_USERS_MAP_NAME, BPF_MAP_TYPE_HASH,
			   sizeof(struct smb_name_key), sizeof(__u32),
			   SMB_NAMES_MAX,
			   "a hash of struct smb_name_key to __u32" },
	[SHARED_SHARES] = { SMB_SHARES_MAP_NAME, BPF_MAP_TYPE_HASH,
			    sizeof(struct smb_name_key), sizeof(__u32),
			    SMB_NAMES_MAX,
			    "a hash of struct smb_name_key to __u32" },
	[SHARED_QOS] = { SMB_QOS_MAP_NAME, BPF_MAP_TYPE_HASH,
			 sizeof(__u32), sizeof(struct smb_qos), SMB_QOS_MAX,
			 "a hash of __u32 class id to struct smb_qos" },
};

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

		ns_set_dir(&old);
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
	if (!ns_name_ino(ns->name, &ino) && ino == ns->ino)
		return 0;
	err = mkdir_ok(PIN_NAMES);
	if (err)
		return err;
	ns_name_path(ns->name, path);
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
		if (de->d_name[0] == '.' || ns_name_ino(de->d_name, &ino) ||
		    ino != ns->ino)
			continue;
		ns_name_path(de->d_name, path);
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

/** ns_done() - close @map_fd (if >= 0), ns_unlock(); return @err */
int ns_done(struct ns_ctx *ns, int map_fd, int err)
{
	if (map_fd >= 0)
		close(map_fd);
	ns_unlock(ns);
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

/* The pin of shared_maps[@i] as NAME@suffix ("" or "_new", see apply.c). */
void shared_pin_path(const struct ns_ctx *ns, unsigned int i,
			    const char *suffix, char *buf)
{
	char name[32];

	snprintf(name, sizeof(name), "%s%s", shared_maps[i].name, suffix);
	ns_pin_path(ns, name, buf);
}

/**
 * pins_recover() - finish or undo the pins of an apply that was killed
 * @ns: live netns, locked (ns_lock() calls this).
 *
 * apply pins its fresh maps as NAME_new, switches the link, then renames
 * them over NAME.  Killed between, the kernel runs one program with one
 * set of maps, and the pins must name those: a NAME_new map that the
 * attached program uses is renamed over NAME (the switch happened), any
 * other is removed (it did not).
 *
 * Return: 0 or a negative errno, reported.
 */
int pins_recover(struct ns_ctx *ns)
{
	char from[PATH_MAX], to[PATH_MAX];
	struct bpf_map_info info;
	struct bpf_link_info linfo;
	int link_fd = -1, fd, err = 0;
	bool looked = false;
	__u32 len;
	unsigned int i;

	for (i = 0; i < NSHARED && !err; i++) {
		shared_pin_path(ns, i, "_new", from);
		shared_pin_path(ns, i, "", to);
		fd = bpf_obj_get(from);
		if (fd < 0)
			continue;
		if (!looked) {
			looked = true;
			link_fd = link_open(ns, &linfo);
		}
		if (link_fd < 0 && link_fd != -ENOENT) {
			err = link_fd;	/* reported */
			close(fd);
			break;
		}
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (link_fd >= 0 && !bpf_map_get_info_by_fd(fd, &info, &len) &&
		    ops_uses_map(linfo.struct_ops.map_id, info.id)) {
			if (rename(from, to))
				err = p_errno(-errno, "cannot rename %s to %s",
					      from, to);
		} else if (unlink(from)) {
			err = p_errno(-errno, "cannot remove %s", from);
		}
		close(fd);
	}
	if (link_fd >= 0)
		close(link_fd);
	return err;
}

