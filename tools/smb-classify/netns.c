// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * netns.c - the network namespace of a command: found, entered, named
 *
 * Stored identity.  The pins of a netns live in PIN_ROOT/<ino>, <ino> being
 * the netns's nsfs inode number.  A name given with -n NAME is recorded as
 * a symlink PIN_NAMES/NAME -> ../<ino> (pins.c writes it), so after "ip
 * netns del NAME" the pins are still found.  A netns is then looked for by
 * inode among NETNS_RUN_DIR and /proc/<pid>/ns/net: if no process holds it
 * any more, it is gone and its pins are stale.  An inode number can be
 * reused by a later netns; a pinned link is therefore checked against the
 * link id the kernel reports for the netns (/proc/net/ksmbd_sched) before
 * it is used (state.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

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
void ns_name_path(const char *name, char *buf)
{
	snprintf(buf, PATH_MAX, "%s/%s", PIN_NAMES, name);
}

/* PIN_ROOT/<ino>: the pin directory of a netns. */
void ns_set_dir(struct ns_ctx *ns)
{
	snprintf(ns->dir, sizeof(ns->dir), "%s/%lu", PIN_ROOT, ns->ino);
}

/* The inode a name was recorded with, from PIN_NAMES/NAME -> ../<ino>. */
int ns_name_ino(const char *name, unsigned long *ino)
{
	char path[PATH_MAX], target[64];
	ssize_t n;

	ns_name_path(name, path);
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
			err = ns_name_ino(ns->name, &ns->ino);
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
		if (ns->name && !ns_name_ino(ns->name, &old) &&
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
	ns_set_dir(ns);
	return 0;
}

/** ns_cmd() - no_args() of command @cmd, then ns_resolve(); 0 or -errno */
int ns_cmd(const char *cmd, int argc, char **argv, struct ns_ctx *ns,
	   bool need_live)
{
	int err = no_args(cmd, argc, argv);

	return err ? err : ns_resolve(ns, need_live);
}

