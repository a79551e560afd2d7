// SPDX-License-Identifier: GPL-2.0
/*
 * token_test - a user namespace with a BPF token cannot steer the SMB
 * traffic of a network namespace it does not own.  Run as root inside the
 * test VM, with nothing attached in the initial netns.
 *
 * A child enters a new user namespace (root there, nothing outside) and a
 * mount namespace of its own, and opens a BPF filesystem context there; this process, root of the initial
 * user namespace, delegates every command, map, program and attach type
 * to it (delegate_cmds=any ..., the kernel's BPF token mounts), and hands
 * the child the mount.  The child creates a BPF token from it and loads
 * and attaches progs/const_class.bpf.o (a ksmbd_sched_ops) through libbpf
 * with that token (bpf_object_open_opts::bpf_token_path):
 *
 *   initnet  the child stays in the initial network namespace, owned by
 *            the initial user namespace: the attach must fail with -EPERM
 *            (ksmbd asks for CAP_NET_ADMIN over the target netns), and
 *            nothing is attached there;
 *   ownnet   the child first makes a network namespace of its own: there
 *            the attach must succeed (the token was enough for the BPF
 *            side, and the child owns the netns it steers).
 *
 * On 6.12 a token does not open module BTF (BPF_BTF_GET_FD_BY_ID wants
 * CAP_SYS_ADMIN in the initial user namespace), so when ksmbd is a module
 * (/sys/kernel/btf/ksmbd exists) libbpf does not find a struct_ops of its
 * type: both children must then fail at load (libbpf says -ESRCH),
 * before ksmbd is asked, and nothing is attached.  With ksmbd built in (the test VM's own
 * kernel) the cases above run to the attach.
 *
 * Output: one "ok - ..." or "not ok - ..." line per check.  Exit status:
 * 0 if every check passed, 1 otherwise, 2 if the test could not run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "check.h"
#include "const_class.skel.h"

/* What a child saw, sent back to the parent. */
struct outcome {
	int token;	/* token fd >= 0, or -errno */
	int load;	/* 0 or -errno */
	int attach;	/* 0 or -errno; 1: not tried */
};


static int libbpf_quiet(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* Send one byte, with @fd attached unless it is negative. */
static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {}, b = 0;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	if (fd < 0) {
		msg.msg_control = NULL;
		msg.msg_controllen = 0;
		return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
	}
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {}, b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, 0) != 1)
		return -errno ?: -EPROTO;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -errno;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -EIO;
}

/*
 * Become root of a new user namespace, with no capability outside it.
 * On failure, says which step failed on stderr.
 */
static int enter_userns(void)
{
	static const char *const maps[][2] = {
		{ "/proc/self/setgroups", "deny" },
		{ "/proc/self/uid_map", "0 0 1" },
		{ "/proc/self/gid_map", "0 0 1" },
	};
	unsigned int i;
	int err;

	if (unshare(CLONE_NEWUSER)) {
		err = -errno;
		fprintf(stderr, "token_test: unshare(CLONE_NEWUSER): %s\n",
			strerror(-err));
		return err;
	}
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		err = write_file(maps[i][0], maps[i][1]);
		if (err) {
			fprintf(stderr, "token_test: writing %s: %s\n",
				maps[i][0], strerror(-err));
			return err;
		}
	}
	if (setgid(0) || setuid(0))
		return -errno;
	return 0;
}

/*
 * The child: a user namespace (and a netns of its own if @ownnet), a
 * bpffs context sent to the parent, the mount back, a token, load and
 * attach.  Writes a struct outcome to @sock.
 */
static void child(int sock, bool ownnet)
{
	struct outcome o = { .token = -EINVAL, .load = -EINVAL, .attach = 1 };
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	struct const_class_bpf *skel;
	char path[64];
	struct bpf_link *link;
	int fs_fd, mnt_fd, bpffs_fd, token, err;

	err = enter_userns();
	/* fsopen() wants CAP_SYS_ADMIN over the mount namespace's owner */
	if (!err && unshare(CLONE_NEWNS))
		err = -errno;
	if (!err && ownnet && unshare(CLONE_NEWNET))
		err = -errno;
	fs_fd = err ? -1 : syscall(SYS_fsopen, "bpf", 0);
	if (!err && fs_fd < 0) {
		err = -errno;
		fprintf(stderr, "token_test: fsopen(bpf): %s\n", strerror(-err));
	}
	/* the parent waits for this byte, with the context or without */
	if (err) {
		send_fd(sock, -1);
		o.token = err;
		goto out;
	}
	if (send_fd(sock, fs_fd) || (mnt_fd = recv_fd(sock)) < 0) {
		o.token = -EPROTO;
		goto out;
	}
	/* the mount is an O_PATH fd: a token wants the bpffs root opened */
	bpffs_fd = openat(mnt_fd, ".", O_RDONLY | O_DIRECTORY);
	if (bpffs_fd < 0) {
		o.token = -errno;
		goto out;
	}
	token = bpf_token_create(bpffs_fd, NULL);
	o.token = token < 0 ? -errno : token;
	if (token < 0) {
		fprintf(stderr, "token_test: bpf_token_create: %s\n",
			strerror(-o.token));
		goto out;
	}
	close(token);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", bpffs_fd);
	opts.bpf_token_path = path;
	skel = const_class_bpf__open_opts(&opts);
	if (!skel) {
		o.load = -errno;
		goto out;
	}
	err = const_class_bpf__load(skel);
	o.load = err;
	if (!err) {
		link = bpf_map__attach_struct_ops(skel->maps.const_class);
		o.attach = link ? 0 : -errno;
		bpf_link__destroy(link);
	}
	const_class_bpf__destroy(skel);
out:
	if (write(sock, &o, sizeof(o)) != sizeof(o))
		_exit(3);
	_exit(0);
}

/* Delegate everything on the child's bpffs context @fs_fd; the mount. */
static int delegate(int fs_fd)
{
	static const char *const keys[] = {
		"delegate_cmds", "delegate_maps", "delegate_progs",
		"delegate_attachs",
	};
	unsigned int i;
	int mnt;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (syscall(SYS_fsconfig, fs_fd, FSCONFIG_SET_STRING, keys[i],
			    "any", 0))
			return -errno;
	if (syscall(SYS_fsconfig, fs_fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		return -errno;
	mnt = syscall(SYS_fsmount, fs_fd, 0, 0);
	return mnt < 0 ? -errno : mnt;
}

/* Run one child; its outcome, or exit(2) if it could not run. */
static struct outcome run(bool ownnet)
{
	struct outcome o;
	int sv[2], fs_fd, mnt_fd, status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("socketpair");
		exit(2);
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (!pid) {
		close(sv[0]);
		child(sv[1], ownnet);
	}
	close(sv[1]);
	fs_fd = recv_fd(sv[0]);
	if (fs_fd >= 0) {
		mnt_fd = delegate(fs_fd);
		if (mnt_fd < 0) {
			fprintf(stderr, "token_test: delegating the bpffs: %s\n",
				strerror(-mnt_fd));
			exit(2);
		}
		send_fd(sv[0], mnt_fd);
		close(mnt_fd);
		close(fs_fd);
	}
	if (read(sv[0], &o, sizeof(o)) != sizeof(o)) {
		fprintf(stderr, "token_test: no outcome from the child\n");
		exit(2);
	}
	waitpid(pid, &status, 0);
	close(sv[0]);
	return o;
}

/* "attached: N" of /proc/net/ksmbd_sched in this (the initial) netns. */
static int attached(void)
{
	FILE *f = fopen("/proc/net/ksmbd_sched", "r");
	char line[128];
	int n = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "attached: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	bool module = access("/sys/kernel/btf/ksmbd", F_OK) == 0;
	struct outcome in, own;

	(void)argc;
	(void)argv;
	libbpf_set_print(libbpf_quiet);
	if (attached() != 0) {
		fprintf(stderr, "token_test: something is attached already\n");
		return 2;
	}
	in = run(false);
	own = run(true);
	check(in.token >= 0, "initnet: a token from the delegated bpffs (%s)",
	      in.token < 0 ? strerror(-in.token) : "created");
	check(own.token >= 0, "ownnet: a token from the delegated bpffs (%s)",
	      own.token < 0 ? strerror(-own.token) : "created");
	if (module) {
		check(in.load < 0 && in.attach == 1,
		      "initnet: ksmbd is a module: the load fails, no module BTF for a token (%s)",
		      strerror(-in.load));
		check(own.load < 0 && own.attach == 1,
		      "ownnet: ksmbd is a module: the load fails (%s)",
		      strerror(-own.load));
	} else {
		check(in.load == 0, "initnet: loaded with the token (%s)",
		      strerror(-in.load));
		check(in.attach == -EPERM,
		      "initnet: the attach to the initial netns fails with EPERM (%s)",
		      in.attach == 1 ? "not tried" : strerror(-in.attach));
		check(own.load == 0, "ownnet: loaded with the token (%s)",
		      strerror(-own.load));
		check(own.attach == 0,
		      "ownnet: the attach to its own netns succeeds (%s)",
		      own.attach == 1 ? "not tried" : strerror(-own.attach));
	}
	check(attached() == 0, "nothing attached in the initial netns");
	return failures ? 1 : 0;
}
