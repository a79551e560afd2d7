// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * trace.c - "trace": stream the ksmbd tracepoints, decoded
 *
 * Uses a private tracefs instance, instances/smb-classify-<pid>, so the
 * global trace buffer and other users' event settings are not touched;
 * the instance is removed at exit (also after SIGINT, SIGTERM, SIGHUP or
 * a closed output).  An instance left by a killed run (its pid gone) is
 * removed at the next start.  tracefs is mounted on /sys/kernel/tracing
 * if it is nowhere, and unmounted again at exit.
 *
 * Tracefs is global, not per network namespace: events that carry the
 * netns inode ("netns" in their output, field netns_ino: ksmbd_sched_conn
 * and ksmbd_sched_dispatch) get a kernel filter "netns_ino == <inode of
 * the netns of -n, or the current one>".  Events without that field
 * (ksmbd_sched_req) cannot be filtered and are shown for every netns;
 * a note on stderr says which.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include <linux/magic.h>

#include "main.h"
#include "tracefmt.h"

#define TRACEFS_PATH		"/sys/kernel/tracing"
#define TRACEFS_OLD_PATH	"/sys/kernel/debug/tracing"
#define INSTANCE_PREFIX		"smb-classify-"

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC		0x74726163
#endif

/* -c COUNT, or 0: until a signal. */
long trace_count;

struct trace_ctx {
	const char *root;	/* tracefs mount */
	bool mounted;		/* we mounted it */
	char inst[PATH_MAX];	/* our instance, "" when none */
	int pipe_fd;
};

/* Only interrupts ppoll(): the signals are blocked everywhere else. */
static void on_stop(int sig)
{
	(void)sig;
}

static bool is_tracefs(const char *path)
{
	struct statfs sfs;

	return !statfs(path, &sfs) && sfs.f_type == TRACEFS_MAGIC;
}

static int tracefs_find(struct trace_ctx *t)
{
	int err;

	if (is_tracefs(TRACEFS_PATH)) {
		t->root = TRACEFS_PATH;
		return 0;
	}
	if (is_tracefs(TRACEFS_OLD_PATH)) {
		t->root = TRACEFS_OLD_PATH;
		return 0;
	}
	if (mount("tracefs", TRACEFS_PATH, "tracefs", 0, NULL)) {
		err = -errno;
		p_err("tracefs is not mounted and mounting it on %s failed: %s",
		      TRACEFS_PATH, strerror(errno));
		return err;
	}
	t->root = TRACEFS_PATH;
	t->mounted = true;
	return 0;
}

static int write_file(const char *path, const char *val)
{
	int fd, err = 0;
	size_t n = strlen(val);

	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, n) != (ssize_t)n)
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

/* Remove instances of earlier runs whose process is gone. */
static void remove_stale_instances(const struct trace_ctx *t)
{
	char path[PATH_MAX], *end;
	struct dirent *de;
	unsigned long pid;
	DIR *d;

	snprintf(path, sizeof(path), "%s/instances", t->root);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, INSTANCE_PREFIX,
			    strlen(INSTANCE_PREFIX)))
			continue;
		errno = 0;
		pid = strtoul(de->d_name + strlen(INSTANCE_PREFIX), &end, 10);
		if (errno || *end || !pid)
			continue;
		snprintf(path, sizeof(path), "/proc/%lu", pid);
		if (!access(path, F_OK))
			continue;
		snprintf(path, sizeof(path), "%s/instances/%s", t->root,
			 de->d_name);
		rmdir(path);	/* EBUSY if someone still reads it */
	}
	closedir(d);
}

/* Whether the event directory's format has a field named @field. */
static bool event_has_field(const char *evdir, const char *field)
{
	char path[PATH_MAX + 300], line[512], want[64];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/format", evdir);
	snprintf(want, sizeof(want), " %s;", field);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, "\tfield:", 7) && strstr(line, want);
	fclose(f);
	return found;
}

/*
 * Filter every ksmbd event that has netns_ino to @ino; collect the names
 * of those that have not into @unfiltered.
 */
static int set_filters(const struct trace_ctx *t, unsigned long ino,
		       char *unfiltered, size_t len)
{
	char dir[PATH_MAX + 16], evdir[PATH_MAX + 272], path[PATH_MAX + 300],
	     filter[64];
	struct dirent *de;
	size_t off = 0;
	int err = 0;
	DIR *d;

	unfiltered[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/events/ksmbd", t->inst);
	d = opendir(dir);
	if (!d) {
		err = -errno;
		p_err("cannot open %s: %s", dir, strerror(errno));
		return err;
	}
	snprintf(filter, sizeof(filter), "netns_ino == %lu", ino);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(evdir, sizeof(evdir), "%s/%s", dir, de->d_name);
		snprintf(path, sizeof(path), "%s/filter", evdir);
		if (access(path, F_OK))
			continue;	/* "enable", "filter" of the group */
		if (!event_has_field(evdir, "netns_ino")) {
			off += snprintf(unfiltered + off,
					off < len ? len - off : 0, "%s%s",
					off ? ", " : "", de->d_name);
			continue;
		}
		err = write_file(path, filter);
		if (err) {
			p_err("cannot set filter '%s' on %s: %s", filter,
			      de->d_name, strerror(-err));
			break;
		}
	}
	closedir(d);
	return err;
}

static void trace_cleanup(struct trace_ctx *t)
{
	char path[PATH_MAX + 32];

	if (t->pipe_fd >= 0)
		close(t->pipe_fd);
	t->pipe_fd = -1;
	if (t->inst[0]) {
		snprintf(path, sizeof(path), "%s/events/enable", t->inst);
		write_file(path, "0");
		if (rmdir(t->inst))
			fprintf(stderr, "note: cannot remove trace instance %s: %s\n",
				t->inst, strerror(errno));
		t->inst[0] = '\0';
	}
	if (t->mounted && umount(t->root) && errno != EBUSY)
		fprintf(stderr, "note: cannot unmount %s: %s\n", t->root,
			strerror(errno));
	t->mounted = false;
}

/* Print one line of trace_pipe.  Return: 1 if it was an event, else 0. */
static int emit_line(const char *line)
{
	char text[TRACE_TEXT_LEN];
	struct json_writer w;
	struct trace_event ev;
	unsigned long lost;
	int cpu;

	if (trace_line_parse(line, &ev)) {
		if (sscanf(line, "CPU:%d [LOST %lu EVENTS]", &cpu, &lost) == 2)
			fprintf(stderr, "note: lost %lu events on CPU %d\n",
				lost, cpu);
		return 0;
	}
	if (strncmp(ev.name, "ksmbd_", 6))
		return 0;
	if (json_output) {
		json_init(&w, stdout, false);
		trace_format_json(&ev, &w);
		json_finish(&w);
	} else {
		trace_format_text(&ev, text, sizeof(text));
		puts(text);
		fflush(stdout);
	}
	return 1;
}

static int stream(struct trace_ctx *t, const sigset_t *waitmask)
{
	static char buf[65536];
	size_t have = 0;
	long seen = 0;
	struct pollfd pfd = { .fd = t->pipe_fd, .events = POLLIN };

	for (;;) {
		char *nl, *start;
		ssize_t n;
		int r;

		r = ppoll(&pfd, 1, NULL, waitmask);
		if (r < 0) {
			if (errno == EINTR)
				return 0;	/* a stop signal */
			p_err("poll on trace_pipe: %s", strerror(errno));
			return -errno;
		}
		n = read(t->pipe_fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			p_err("cannot read trace_pipe: %s", strerror(errno));
			return -errno;
		}
		if (!n)
			continue;
		have += n;
		buf[have] = '\0';
		start = buf;
		while ((nl = strchr(start, '\n'))) {
			*nl = '\0';
			seen += emit_line(start);
			start = nl + 1;
			if (ferror(stdout))
				return 0;	/* output closed */
			if (trace_count && seen >= trace_count)
				return 0;
		}
		have -= start - buf;
		memmove(buf, start, have);
		if (have == sizeof(buf) - 1)
			have = 0;	/* a line this long is not ours */
	}
}

/**
 * do_trace() - "trace": print the ksmbd tracepoints as they fire
 * @argc: must be 0 (-c COUNT is a global option, in trace_count).
 * @argv: unused.
 *
 * Return: 0 or a negative errno, reported.
 */
int do_trace(int argc, char **argv)
{
	struct trace_ctx t = { .pipe_fd = -1 };
	char path[PATH_MAX + 32], unfiltered[512];
	sigset_t stop, old, waitmask;
	struct sigaction sa = { 0 };
	struct ns_ctx ns;
	int err;

	if (argc) {
		p_err("trace: unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	err = ns_resolve(&ns, true);
	if (err)
		return err;

	/*
	 * Block the stop signals until the instance is gone: they are taken
	 * only inside ppoll(), so cleanup always runs.
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, &old);
	sa.sa_handler = on_stop;		/* no SA_RESTART */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	err = tracefs_find(&t);
	if (err)
		goto out;
	snprintf(path, sizeof(path), "%s/events/ksmbd", t.root);
	if (access(path, F_OK)) {
		err = -ENOENT;
		p_err("this kernel has no ksmbd tracepoints (%s missing)",
		      path);
		goto out;
	}
	remove_stale_instances(&t);
	snprintf(t.inst, sizeof(t.inst), "%s/instances/%s%d", t.root,
		 INSTANCE_PREFIX, (int)getpid());
	if (mkdir(t.inst, 0700)) {
		err = -errno;
		p_err("cannot create trace instance %s: %s", t.inst,
		      strerror(errno));
		t.inst[0] = '\0';
		goto out;
	}
	err = set_filters(&t, ns.ino, unfiltered, sizeof(unfiltered));
	if (err)
		goto out;
	snprintf(path, sizeof(path), "%s/events/ksmbd/enable", t.inst);
	err = write_file(path, "1");
	if (err) {
		p_err("cannot enable the ksmbd events: %s", strerror(-err));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/trace_pipe", t.inst);
	t.pipe_fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (t.pipe_fd < 0) {
		err = -errno;
		p_err("cannot open %s: %s", path, strerror(errno));
		goto out;
	}
	if (!json_output) {
		fprintf(stderr, "tracing ksmbd events of netns %lu (%s)",
			ns.ino, ns.label);
		if (trace_count)
			fprintf(stderr, ", %ld events", trace_count);
		fprintf(stderr, "; Ctrl-C to stop\n");
	}
	if (unfiltered[0])
		fprintf(stderr, "note: %s carry no netns: shown for every netns\n",
			unfiltered);

	waitmask = old;
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGHUP);
	err = stream(&t, &waitmask);
out:
	trace_cleanup(&t);
	sigprocmask(SIG_SETMASK, &old, NULL);
	ns_unlock(&ns);
	return err;
}
