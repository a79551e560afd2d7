// SPDX-License-Identifier: GPL-2.0
/*
 * attach_test - the attach semantics of ksmbd_sched_ops, straight through
 * libbpf (no loader in between).  Run as root inside the test VM; nothing
 * may be attached in the initial netns when it starts.
 *
 * Cases (the attach rules of Documentation/internals.rst):
 *   ebusy      one link per netns: a second attach is -EBUSY, the first
 *              stays attached (/proc/net/ksmbd_sched attached, link_id)
 *   update     bpf_link__update_map() swaps the ops: name changes, link id
 *              does not; also to the reference classifier smb_prefix; a
 *              wrong old map -EPERM, no map -EBADF, a map that is not a
 *              link-based struct_ops map -EINVAL, and nothing changes
 *   netns      a new netns attaches independently (own link id, serves 0)
 *              and is -EBUSY there for a second attach
 *   close      closing the link fd detaches (attached: 0)
 *   validate   flags=1 -EINVAL, empty name -EINVAL, max_inflight 4097
 *              -E2BIG, 4096 attaches
 *   netns-exit a netns exiting with a link attached: the link (held by
 *              another process, passed with SCM_RIGHTS) gets -ENOLINK on
 *              update, closes cleanly; a new netns attaches again
 *
 * Output: one "ok - ..." or "not ok - ..." line per check, with the errno
 * seen.  Exit status: 0 if every check passed, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "ksmbd_sched_abi.h"

#include "check.h"
#include "const_class.skel.h"
#include "slow_class.skel.h"
#include "smb_classify.skel.h"

#define PROC_SCHED	"/proc/net/ksmbd_sched"
#define POLL_SECONDS	30

static bool verbose;

/* Layout of the ops data in the skeleton (the local struct of the .bpf.c). */
struct ops_data {
	void *classify_conn;
	void *classify_req;
	void *classify_session;
	void *classify_tree;
	void *init_class;
	__u32 max_inflight;
	__u32 timeout_ms;
	__u32 flags;
	char name[KSMBD_SCHED_NAME_LEN];
};
_Static_assert(sizeof(struct ops_data) ==
	       sizeof(*((struct const_class_bpf *)0)->struct_ops.const_class),
	       "skeleton struct_ops layout");

struct ksched {
	int attached;
	char name[32];
	unsigned int link_id;
	int serves;
	unsigned long netns_ino;
};

static const char *errname(int err)
{
	static char buf[32];

	switch (-err) {
	case 0: return "0";
	case EBUSY: return "-EBUSY";
	case EINVAL: return "-EINVAL";
	case E2BIG: return "-E2BIG";
	case ENOLINK: return "-ENOLINK";
	case ENOENT: return "-ENOENT";
	case EPERM: return "-EPERM";
	case EOPNOTSUPP: return "-EOPNOTSUPP";
	case EBADF: return "-EBADF";
	case EACCES: return "-EACCES";
	}
	snprintf(buf, sizeof(buf), "%d (%s)", err, strerror(-err));
	return buf;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level > LIBBPF_WARN && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* /proc/net/ksmbd_sched of the current netns (or @path). */
static int ksched_read_path(const char *path, struct ksched *st)
{
	char line[256], key[64], val[128];
	FILE *f;

	memset(st, 0, sizeof(*st));
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63[^:]: %127s", key, val) != 2)
			continue;
		if (!strcmp(key, "attached"))
			st->attached = atoi(val);
		else if (!strcmp(key, "name"))
			snprintf(st->name, sizeof(st->name), "%.31s", val);
		else if (!strcmp(key, "link_id"))
			st->link_id = strtoul(val, NULL, 10);
		else if (!strcmp(key, "serves"))
			st->serves = atoi(val);
		else if (!strcmp(key, "netns_ino"))
			st->netns_ino = strtoul(val, NULL, 10);
	}
	fclose(f);
	return 0;
}

static struct ksched ksched(void)
{
	struct ksched st;
	int err = ksched_read_path(PROC_SCHED, &st);

	if (err) {
		fprintf(stderr, "cannot read %s: %s\n", PROC_SCHED,
			strerror(-err));
		exit(2);
	}
	return st;
}

static unsigned int link_id_of_fd(int fd)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);

	if (bpf_link_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.id;
}

static unsigned int link_id(struct bpf_link *link)
{
	return link ? link_id_of_fd(bpf_link__fd(link)) : 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Poll /proc/net/ksmbd_sched until attached == @want, bounded. */
static bool wait_attached(int want)
{
	double end = now() + POLL_SECONDS;

	for (;;) {
		if (ksched().attached == want)
			return true;
		if (now() > end)
			return false;
		sleep_ms(50);
	}
}

/*
 * A loaded const_class instance.  @name NULL keeps the default; "" makes
 * it empty.
 */
/* Verdict word of the instances inst() makes (rodata, set before load). */
static __u32 inst_verdict = KSMBD_SCHED_QUEUE_PERCPU;

static struct const_class_bpf *inst(const char *name, __u32 class_word,
				    __u32 max_inflight, __u32 flags)
{
	struct const_class_bpf *skel;
	struct ops_data *ops;
	int err;

	skel = const_class_bpf__open();
	if (!skel) {
		fprintf(stderr, "const_class_bpf__open: %s\n",
			strerror(errno));
		exit(2);
	}
	skel->rodata->class_word = class_word;
	skel->rodata->verdict_word = inst_verdict;
	ops = (struct ops_data *)skel->struct_ops.const_class;
	ops->max_inflight = max_inflight;
	ops->flags = flags;
	if (name) {
		memset(ops->name, 0, sizeof(ops->name));
		strncpy(ops->name, name, sizeof(ops->name) - 1);
	}
	err = const_class_bpf__load(skel);
	if (err) {
		fprintf(stderr, "const_class_bpf__load: %s\n", strerror(-err));
		exit(2);
	}
	return skel;
}

/* Attach @skel's ops; the link, or NULL with *@err the negative errno. */
static struct bpf_link *attach(struct const_class_bpf *skel, int *err)
{
	struct bpf_link *link;

	link = bpf_map__attach_struct_ops(skel->maps.const_class);
	*err = link ? 0 : -errno;
	return link;
}

/* ---- one link per netns ---------------------------------------------- */

static struct bpf_link *test_ebusy(struct const_class_bpf *a,
				   struct const_class_bpf *b)
{
	struct bpf_link *la, *lb;
	struct ksched st;
	int err;

	la = attach(a, &err);
	check(la, "ebusy: first attach in the initial netns (%s)",
	      errname(err));
	if (!la)
		return NULL;
	lb = attach(b, &err);
	check(!lb && err == -EBUSY,
	      "ebusy: second attach in the same netns fails with -EBUSY (saw %s)",
	      errname(err));
	bpf_link__destroy(lb);
	st = ksched();
	check(st.attached == 1 && st.link_id == link_id(la) &&
	      !strcmp(st.name, "const_a"),
	      "ebusy: first link still attached (attached: %d, link_id %u, want %u, name %s)",
	      st.attached, st.link_id, link_id(la), st.name);
	return la;
}

/* ---- link update ----------------------------------------------------- */

static struct bpf_object *open_prog(const char *name);

/* A link update to @map_fd fails with @want; smb_prefix stays attached. */
static void update_refused(struct bpf_link *la, int map_fd, int want,
			   const char *what)
{
	int err = bpf_link_update(bpf_link__fd(la), map_fd, NULL);
	struct ksched st = ksched();

	check(err == want && !strcmp(st.name, "smb_prefix") &&
	      st.link_id == link_id(la),
	      "update: to %s fails %s (saw %s), name still %s, link id %u",
	      what, errname(want), errname(err), st.name, st.link_id);
}

static void test_update(struct bpf_link *la, struct const_class_bpf *b)
{
	struct smb_classify_bpf *ref;
	struct bpf_object *nolink;
	unsigned int id = link_id(la);
	struct ksched st;
	int err;

	err = bpf_link__update_map(la, b->maps.const_class);
	st = ksched();
	check(!err, "update: bpf_link__update_map to a second instance (%s)",
	      errname(err));
	check(st.attached == 1 && !strcmp(st.name, "const_b") &&
	      st.link_id == id,
	      "update: name is the new ops' (%s, want const_b), link id unchanged (%u, want %u)",
	      st.name, st.link_id, id);

	/* To another program altogether: the reference classifier. */
	ref = smb_classify_bpf__open_and_load();
	if (!ref) {
		check(false, "update: open and load smb_classify (%s)",
		      strerror(errno));
		return;
	}
	err = bpf_link__update_map(la, ref->maps.smb_prefix);
	st = ksched();
	check(!err && !strcmp(st.name, "smb_prefix") && st.link_id == id,
	      "update: to smb_prefix (%s): name %s, link id %u (want %u)",
	      errname(err), st.name, st.link_id, id);

	/* A wrong expected old map is refused and changes nothing. */
	{
		LIBBPF_OPTS(bpf_link_update_opts, opts,
			    .flags = BPF_F_REPLACE,
			    .old_map_fd = bpf_map__fd(b->maps.const_class));

		err = bpf_link_update(bpf_link__fd(la),
				      bpf_map__fd(b->maps.const_class), &opts);
		st = ksched();
		check(err == -EPERM && !strcmp(st.name, "smb_prefix"),
		      "update: with a wrong expected old map fails -EPERM (saw %s), name still %s",
		      errname(err), st.name);
	}

	/*
	 * Bad new maps are refused with their errno and change nothing:
	 * no map at all -EBADF; a map that is not a link-based struct_ops
	 * map -EINVAL (bpf_struct_ops_valid_to_reg()).
	 */
	update_refused(la, -1, -EBADF, "a closed map fd");
	update_refused(la, bpf_map__fd(ref->maps.prefixes), -EINVAL,
		       "an LPM trie map");
	nolink = open_prog("nolink");
	if (nolink && !bpf_object__load(nolink))
		update_refused(la, bpf_map__fd(bpf_object__find_map_by_name(
				       nolink, "nolink")), -EINVAL,
			       "a struct_ops map without BPF_F_LINK");
	else
		check(false, "update: load nolink for the update checks");
	bpf_object__close(nolink);

	/* And back, so the link carries const_b again. */
	err = bpf_link__update_map(la, b->maps.const_class);
	st = ksched();
	check(!err && !strcmp(st.name, "const_b") && st.link_id == id,
	      "update: back to const_b (%s): name %s, link id %u",
	      errname(err), st.name, st.link_id);
	smb_classify_bpf__destroy(ref);
}

/* ---- a second netns -------------------------------------------------- */

static void test_netns(struct bpf_link *la)
{
	unsigned int init_id = link_id(la);
	unsigned long init_ino = ksched().netns_ino;
	struct ksched st;
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		struct const_class_bpf *c, *d;
		struct bpf_link *lc, *ld;
		char path[64];
		int err;

		failures = 0;
		if (unshare(CLONE_NEWNET)) {
			check(false, "netns: unshare(CLONE_NEWNET): %s",
			      strerror(errno));
			exit(1);
		}
		st = ksched();
		check(st.netns_ino != init_ino && st.attached == 0 &&
		      st.serves == 0,
		      "netns: new netns %lu starts detached, serves 0 (attached: %d, serves: %d)",
		      st.netns_ino, st.attached, st.serves);
		c = inst("const_ns", KSMBD_SCHED_CLASS(43, 1, 0), 0, 0);
		d = inst("const_ns2", KSMBD_SCHED_CLASS(44, 1, 0), 0, 0);
		lc = attach(c, &err);
		check(lc, "netns: attach in the new netns while the initial one has a link (%s)",
		      errname(err));
		st = ksched();
		check(lc && st.attached == 1 && st.link_id == link_id(lc) &&
		      st.link_id != init_id && st.serves == 0 &&
		      !strcmp(st.name, "const_ns"),
		      "netns: its own link id %u (want %u, initial netns %u), name %s, serves %d",
		      st.link_id, link_id(lc), init_id, st.name, st.serves);
		ld = attach(d, &err);
		check(!ld && err == -EBUSY,
		      "netns: second attach in the new netns fails with -EBUSY (saw %s)",
		      errname(err));
		/* The initial netns, seen through the parent's /proc entry. */
		snprintf(path, sizeof(path), "/proc/%d/net/ksmbd_sched",
			 getppid());
		if (ksched_read_path(path, &st))
			memset(&st, 0, sizeof(st));
		check(st.attached == 1 && st.link_id == init_id &&
		      st.serves == 1,
		      "netns: the initial netns keeps its link %u (link_id %u, attached %d)",
		      init_id, st.link_id, st.attached);
		bpf_link__destroy(ld);
		bpf_link__destroy(lc);
		st = ksched();
		check(st.attached == 0,
		      "netns: closing the new netns' link detaches it (attached: %d)",
		      st.attached);
		const_class_bpf__destroy(d);
		const_class_bpf__destroy(c);
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		failures++;
	st = ksched();
	check(st.attached == 1 && st.link_id == init_id,
	      "netns: initial netns unchanged after the other netns' detach (link_id %u)",
	      st.link_id);
}

/* ---- close detaches -------------------------------------------------- */

static void test_close(struct bpf_link *la)
{
	unsigned int id = link_id(la);
	struct ksched st;

	bpf_link__destroy(la);
	check(wait_attached(0), "close: closing link %u detaches", id);
	st = ksched();
	check(st.link_id == 0 && !strcmp(st.name, "-"),
	      "close: /proc/net/ksmbd_sched shows no link (link_id %u, name %s)",
	      st.link_id, st.name);
}

/* ---- BPF_LINK_DETACH ------------------------------------------------- */

/*
 * Detaching a link (BPF_LINK_DETACH, the link fd still open) frees the
 * netns: nothing is attached, a new link attaches, and an update of the
 * detached link is refused with -ENOLINK.
 */
static void test_detach(struct const_class_bpf *a, struct const_class_bpf *b)
{
	struct bpf_link *la, *lb;
	int err;

	la = attach(a, &err);
	check(la, "detach: attach (%s)", errname(err));
	if (!la)
		return;
	err = bpf_link_detach(bpf_link__fd(la));
	err = err ? -errno : 0;
	check(!err, "detach: BPF_LINK_DETACH (%s)", errname(err));
	check(wait_attached(0), "detach: nothing attached after BPF_LINK_DETACH");
	lb = attach(b, &err);
	check(lb, "detach: a new link attaches in the freed netns (%s)",
	      errname(err));
	err = bpf_link_update(bpf_link__fd(la),
			      bpf_map__fd(a->maps.const_class), NULL);
	err = err ? -errno : 0;
	check(err == -ENOLINK,
	      "detach: update of the detached link fails with -ENOLINK (saw %s)",
	      errname(err));
	bpf_link__destroy(lb);
	bpf_link__destroy(la);
	check(wait_attached(0), "detach: nothing attached at the end");
}

/* ---- objects the kernel must refuse ---------------------------------- */

/* progs/NAME.bpf.o next to this binary, opened (not loaded). */
static struct bpf_object *open_prog(const char *name)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	struct bpf_object *obj;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0) {
		check(false, "refuse: readlink /proc/self/exe: %s",
		      strerror(errno));
		return NULL;
	}
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/progs/%s.bpf.o", dirname(exe), name);
	obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		check(false, "refuse: open %s: %s", path, strerror(errno));
		return NULL;
	}
	return obj;
}

/* Loading progs/NAME.bpf.o fails with @want, and attaches nothing. */
static void refuse_load(const char *what, const char *name, int want)
{
	struct bpf_object *obj = open_prog(name);
	int err;

	if (!obj)
		return;
	err = bpf_object__load(obj);
	check(err == want, "refuse: %s: load fails with %s (saw %s)", what,
	      want == -EINVAL ? "-EINVAL" : "-EACCES", errname(err));
	bpf_object__close(obj);
	check(wait_attached(0), "refuse: nothing attached after %s", what);
}

static void test_refuse(void)
{
	struct bpf_object *obj;
	struct bpf_link *l;
	struct bpf_map *m;
	int err;

	/* A struct_ops map without BPF_F_LINK: reg() gets no link. */
	obj = open_prog("nolink");
	if (obj) {
		err = bpf_object__load(obj);
		check(!err, "refuse: load nolink (%s)", errname(err));
		m = bpf_object__find_map_by_name(obj, "nolink");
		l = !err && m ? bpf_map__attach_struct_ops(m) : NULL;
		err = l ? 0 : -errno;
		check(!l && err == -EOPNOTSUPP,
		      "refuse: a struct_ops map registered without a link fails with -EOPNOTSUPP (saw %s)",
		      errname(err));
		bpf_link__destroy(l);
		bpf_object__close(obj);
		check(wait_attached(0), "refuse: nothing attached after nolink");
	}
	refuse_load("a sleepable program", "bad_sleepable", -EINVAL);
	refuse_load("a program writing to its context", "bad_ctxwrite",
		    -EACCES);
}

/* ---- data validation ------------------------------------------------- */

static void try_attach(const char *what, const char *name, __u32 max_inflight,
		       __u32 flags, int want)
{
	struct const_class_bpf *s;
	struct bpf_link *l;
	int err;

	s = inst(name, KSMBD_SCHED_CLASS(42, 1, 0), max_inflight, flags);
	l = attach(s, &err);
	check(err == want, "validate: %s -> %s (saw %s)", what, errname(want),
	      errname(err));
	if (l) {
		struct ksched st = ksched();

		check(st.attached == 1 && st.link_id == link_id(l),
		      "validate: %s is attached (link_id %u)", what,
		      st.link_id);
	}
	bpf_link__destroy(l);
	const_class_bpf__destroy(s);
	check(wait_attached(0), "validate: nothing attached after %s", what);
}

static void test_validate(void)
{
	try_attach("flags = 1", NULL, 0, 1, -EINVAL);
	try_attach("flags = 0x80000000", NULL, 0, 0x80000000u, -EINVAL);
	try_attach("empty name", "", 0, 0, -EINVAL);
	try_attach("name with a space", "bad name", 0, 0, -EINVAL);
	try_attach("max_inflight = 4097", NULL,
		   KSMBD_SCHED_MAX_INFLIGHT_LIMIT + 1, 0, -E2BIG);
	try_attach("max_inflight = 0xffffffff", NULL, 0xffffffffu, 0, -E2BIG);
	try_attach("max_inflight = 4096", NULL,
		   KSMBD_SCHED_MAX_INFLIGHT_LIMIT, 0, 0);
	try_attach("15-character name", "abcdefghijklmno", 1, 0, 0);
}

/* ---- a netns that exits with its link attached ----------------------- */

static int send_fd(int sock, int fd, unsigned long ino)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = &ino, .iov_len = sizeof(ino) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) < 0 ? -errno : 0;
}

static int recv_fd(int sock, unsigned long *ino)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = {};
	struct iovec iov = { .iov_base = ino, .iov_len = sizeof(*ino) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) <= 0)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* Whether some process still has a netns of inode @ino. */
static bool netns_alive(unsigned long ino)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd),
		 "for f in /proc/[0-9]*/ns/net; do stat -L -c %%i $f; done 2>/dev/null | grep -qx %lu",
		 ino);
	return system(cmd) == 0;
}

/* A child attaches in a fresh netns; returns its exit status. */
static int attach_in_new_netns(const char *name, int sock)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		struct const_class_bpf *c;
		struct bpf_link *l;
		struct ksched st;
		char ack;
		int err;

		failures = 0;
		if (unshare(CLONE_NEWNET)) {
			check(false, "netns-exit: unshare: %s",
			      strerror(errno));
			_exit(1);
		}
		c = inst(name, KSMBD_SCHED_CLASS(45, 1, 0), 0, 0);
		l = attach(c, &err);
		st = ksched();
		check(l && st.attached == 1 && st.link_id == link_id(l),
		      "netns-exit: attach %s in netns %lu (%s, link_id %u)",
		      name, st.netns_ino, errname(err), st.link_id);
		if (l && sock >= 0) {
			err = send_fd(sock, bpf_link__fd(l), st.netns_ino);
			check(!err, "netns-exit: link fd sent to the parent (%s)",
			      errname(err));
			/* Exit only once the parent holds the fd. */
			if (read(sock, &ack, 1) != 1)
				failures++;
		}
		fflush(stdout);
		/* Exit without closing anything: the netns goes with us. */
		_exit(failures ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void test_netns_exit(void)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	int sv[2], fd, map_fd, err = 0, rc;
	unsigned long ino = 0;
	unsigned int id;
	pid_t pid;
	double end;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		perror("socketpair");
		exit(2);
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		close(sv[0]);
		_exit(attach_in_new_netns("const_exit", sv[1]));
	}
	close(sv[1]);
	fd = recv_fd(sv[0], &ino);
	check(fd >= 0, "netns-exit: received the link fd of netns %lu", ino);
	if (write(sv[0], "x", 1) != 1)
		failures++;
	close(sv[0]);
	{
		int status;

		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			failures++;
	}
	if (fd < 0)
		return;

	id = link_id_of_fd(fd);
	if (bpf_link_get_info_by_fd(fd, &info, &len) ||
	    !info.struct_ops.map_id) {
		check(false, "netns-exit: link info of fd %d", fd);
		close(fd);
		return;
	}
	map_fd = bpf_map_get_fd_by_id(info.struct_ops.map_id);
	check(map_fd >= 0, "netns-exit: struct_ops map %u of link %u",
	      info.struct_ops.map_id, id);

	/*
	 * The netns is released asynchronously (cleanup_net).  While it
	 * lives, an update to the link's own map is a no-op that succeeds;
	 * once pre_exit ran, ksmbd refuses it with -ENOLINK.
	 */
	end = now() + POLL_SECONDS;
	while (map_fd >= 0) {
		err = bpf_link_update(fd, map_fd, NULL);
		if (err || now() > end)
			break;
		sleep_ms(50);
	}
	check(err == -ENOLINK,
	      "netns-exit: after netns %lu exited, bpf_link_update on link %u fails -ENOLINK (saw %s)",
	      ino, id, errname(err));
	check(!netns_alive(ino), "netns-exit: netns %lu is gone", ino);
	/* The initial netns never saw it. */
	check(ksched().attached == 0,
	      "netns-exit: the initial netns has nothing attached");
	if (map_fd >= 0)
		close(map_fd);
	close(fd);
	/* The link is freed with its last reference. */
	end = now() + POLL_SECONDS;
	for (;;) {
		int lfd = bpf_link_get_fd_by_id(id);

		if (lfd < 0) {
			err = lfd;
			break;
		}
		close(lfd);
		if (now() > end) {
			err = 0;
			break;
		}
		sleep_ms(50);
	}
	check(err == -ENOENT, "netns-exit: link %u is freed after close (%s)",
	      id, errname(err));

	rc = attach_in_new_netns("const_again", -1);
	check(rc == 0, "netns-exit: a new netns attaches afterwards");
}

/*
 * "attach_test hold CLASSWORD VERDICT": attach a const_class instance that
 * returns these words (any 32-bit values, to test the kernel's clamping),
 * print "attached LINK_ID", and stay attached until stdin reaches EOF.
 */
static int hold(const char *cw, const char *vw)
{
	struct const_class_bpf *skel;
	struct bpf_link *link;
	char buf[64];
	int err = 0;

	inst_verdict = strtoul(vw, NULL, 0);
	skel = inst("hold", strtoul(cw, NULL, 0), 0, 0);
	link = attach(skel, &err);
	if (!link) {
		printf("not ok - hold: attach: %s\n", strerror(-err));
		return 1;
	}
	printf("attached %u\n", ksched().link_id);
	fflush(stdout);
	while (fread(buf, 1, sizeof(buf), stdin) > 0)
		;
	bpf_link__destroy(link);
	const_class_bpf__destroy(skel);
	return 0;
}

/*
 * "attach_test race": a connection classified inside a link update.
 * Attaches slow_class (class 42, "slow_class") and arms it; prints
 * "armed"; the caller then connects once.  When that connection's
 * classify_conn is held inside its call, the link is updated to a
 * const_class instance (class 43, "const_b"), then the call is released.
 * Prints "raced port=P update=ERR saw_release=0|1" and stays attached
 * (with const_b) until stdin reaches EOF.  Exit 0 if the call was held
 * during a successful update and saw the release.
 */
static int race(void)
{
	struct const_class_bpf *b;
	struct slow_class_bpf *a;
	struct bpf_link *l;
	char buf[16];
	double end;
	int err, saw;

	libbpf_set_print(libbpf_print);
	a = slow_class_bpf__open_and_load();
	if (!a) {
		fprintf(stderr, "slow_class: %s\n", strerror(errno));
		return 2;
	}
	b = inst("const_b", KSMBD_SCHED_CLASS(43, 1, 0), 0, 0);
	l = bpf_map__attach_struct_ops(a->maps.slow_class);
	if (!l) {
		fprintf(stderr, "attach slow_class: %s\n", strerror(errno));
		return 2;
	}
	a->bss->armed = 1;
	printf("armed %u\n", link_id(l));
	fflush(stdout);
	end = now() + POLL_SECONDS;
	while (!a->bss->entered && now() < end)
		sleep_ms(1);
	if (!a->bss->entered) {
		printf("raced port=0 update=none saw_release=0 (no connection)\n");
		return 1;
	}
	err = bpf_link__update_map(l, b->maps.const_class);
	a->bss->release = 1;
	end = now() + POLL_SECONDS;
	while (!a->bss->saw_release && now() < end)
		sleep_ms(1);
	saw = a->bss->saw_release;
	printf("raced port=%u update=%s saw_release=%d\n", a->bss->held_port,
	       errname(err), saw);
	fflush(stdout);
	while (read(0, buf, sizeof(buf)) > 0)
		;
	bpf_link__destroy(l);
	const_class_bpf__destroy(b);
	slow_class_bpf__destroy(a);
	return !err && saw ? 0 : 1;
}

/*
 * "attach_test flip N MS": attach const_a (class 42), then update the
 * link N times, alternating const_b (class 43) and const_a, MS ms apart;
 * prints "flipped N errors E" and detaches.  Exit 0 if every update
 * succeeded.
 */
static int flip(const char *nstr, const char *msstr)
{
	struct const_class_bpf *a, *b;
	int n = atoi(nstr), ms = atoi(msstr), i, errs = 0;
	struct bpf_link *l;

	libbpf_set_print(libbpf_print);
	a = inst("const_a", KSMBD_SCHED_CLASS(42, 1, 0), 0, 0);
	b = inst("const_b", KSMBD_SCHED_CLASS(43, 1, 0), 0, 0);
	l = bpf_map__attach_struct_ops(a->maps.const_class);
	if (!l) {
		fprintf(stderr, "attach const_a: %s\n", strerror(errno));
		return 2;
	}
	printf("attached %u\n", link_id(l));
	fflush(stdout);
	for (i = 0; i < n; i++) {
		if (bpf_link__update_map(l, (i % 2 ? a : b)->maps.const_class))
			errs++;
		if (ms)
			sleep_ms(ms);
	}
	printf("flipped %d errors %d\n", n, errs);
	bpf_link__destroy(l);
	const_class_bpf__destroy(b);
	const_class_bpf__destroy(a);
	return errs ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct const_class_bpf *a, *b;
	struct bpf_link *la;
	struct ksched st;

	if (argc == 4 && !strcmp(argv[1], "hold"))
		return hold(argv[2], argv[3]);
	if (argc == 2 && !strcmp(argv[1], "race"))
		return race();
	if (argc == 4 && !strcmp(argv[1], "flip"))
		return flip(argv[2], argv[3]);

	verbose = argc > 1 && !strcmp(argv[1], "-v");
	libbpf_set_print(libbpf_print);
	setvbuf(stdout, NULL, _IOLBF, 0);

	st = ksched();
	if (st.attached) {
		printf("not ok - precondition: nothing attached in the initial netns (link %u, %s is)\n",
		       st.link_id, st.name);
		return 1;
	}

	a = inst("const_a", KSMBD_SCHED_CLASS(42, 1, 0), 0, 0);
	b = inst("const_b", KSMBD_SCHED_CLASS(43, 2, 0), 0, 0);

	la = test_ebusy(a, b);
	if (la) {
		test_update(la, b);
		test_netns(la);
		test_close(la);
	}
	test_detach(a, b);
	const_class_bpf__destroy(b);
	const_class_bpf__destroy(a);
	test_refuse();
	test_validate();
	test_netns_exit();

	printf("%s: %d check(s) failed\n", failures ? "FAIL" : "PASS",
	       failures);
	return failures ? 1 : 0;
}
