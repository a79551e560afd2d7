// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * trace.c - "trace": stream the ksmbd tracepoints, decoded
 *
 * Events are read as binary records through libtracefs (the per-CPU
 * trace_pipe_raw of a private instance, instances/smb-classify-<pid>) and
 * decoded by libtraceevent from the kernel's format files: no trace text
 * is parsed.  The global buffer and other users' settings are not
 * touched; the instance is removed at exit (also after SIGINT, SIGTERM,
 * SIGHUP or a closed output; after a signal, the events recorded before
 * it are printed first, so a test's "kill, then read" sees them all), and one left by a killed run (its pid
 * gone) at the next start.  libtracefs mounts tracefs if it is nowhere.
 *
 * Tracefs is global, not per network namespace: every ksmbd event has
 * netns_ino, and gets the kernel filter "netns_ino == <inode of the netns
 * of -n, or the current one>"; an event without the field would be
 * shown for every netns, with a note on stderr.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracefs/tracefs.h>
#include <traceevent/event-parse.h>

#include "main.h"
#include "tracefmt.h"

#define INSTANCE_PREFIX		"smb-classify-"

struct trace_ctx {
	struct tep_handle *tep;
	struct tracefs_instance *inst;
	bool ts_ns;
	long seen;
	bool stop;
};

/* Only interrupts ppoll(): the signals are blocked everywhere else. */
static void on_stop(int sig)
{
	(void)sig;
}

/* Remove instances of earlier runs whose process is gone. */
static void remove_stale_instances(void)
{
	char **names = tracefs_instances("^" INSTANCE_PREFIX "[0-9]+$");
	struct tracefs_instance *inst;
	char proc[64];
	int i;

	for (i = 0; names && names[i]; i++) {
		snprintf(proc, sizeof(proc), "/proc/%s",
			 names[i] + strlen(INSTANCE_PREFIX));
		if (!access(proc, F_OK))
			continue;
		inst = tracefs_instance_alloc(NULL, names[i]);
		if (inst) {
			tracefs_instance_destroy(inst);	/* EBUSY if in use */
			tracefs_instance_free(inst);
		}
	}
	tracefs_list_free(names);
}

/* One field of @rec into @f.  Return: false to leave the field out. */
static bool decode_field(struct tep_format_field *fld, struct tep_record *rec,
			 struct trace_field *f)
{
	unsigned long long v;
	const char *data = (const char *)rec->data + fld->offset;
	int len = fld->size;

	snprintf(f->name, sizeof(f->name), "%s", fld->name);
	f->is_str = true;
	if (fld->flags & TEP_FIELD_IS_DYNAMIC) {
		/* __string: 16-bit length and offset; relative to the end. */
		if (tep_read_number_field(fld, rec->data, &v))
			return false;
		len = v >> 16;
		data = (const char *)rec->data + (v & 0xffff) +
		       (fld->flags & TEP_FIELD_IS_RELATIVE ?
			fld->offset + fld->size : 0);
		if (data + len > (const char *)rec->data + rec->size)
			return false;
	}
	/*
	 * The only fixed arrays of ours are 16-byte addresses (u8, which
	 * libtraceevent also flags as a string); char arrays are text.
	 */
	if (fld->flags & TEP_FIELD_IS_ARRAY &&
	    !(fld->flags & TEP_FIELD_IS_DYNAMIC) && !strstr(fld->type, "char"))
		return len == 16 &&
		       inet_ntop(AF_INET6, data, f->str, sizeof(f->str));
	if (fld->flags & (TEP_FIELD_IS_STRING | TEP_FIELD_IS_DYNAMIC |
			  TEP_FIELD_IS_ARRAY)) {
		snprintf(f->str, sizeof(f->str), "%.*s",
			 len < (int)sizeof(f->str) ? len : (int)sizeof(f->str) - 1,
			 data);
		return true;
	}
	f->is_str = false;
	if (tep_read_number_field(fld, rec->data, &v))
		return false;
	f->num = v;
	return true;
}

static void decode(struct trace_ctx *t, struct tep_event *event,
		   struct tep_record *rec, int cpu, struct trace_event *ev)
{
	struct tep_format_field **fields, **fld;

	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "%s", event->name);
	ev->pid = tep_data_pid(t->tep, rec);
	snprintf(ev->comm, sizeof(ev->comm), "%s",
		 tep_data_comm_from_pid(t->tep, ev->pid));
	ev->cpu = cpu;
	ev->ts = rec->ts;
	ev->ts_ns = t->ts_ns;
	fields = tep_event_fields(event);
	for (fld = fields; fld && *fld && ev->nfields < TRACE_MAX_FIELDS;
	     fld++)
		if (decode_field(*fld, rec, &ev->f[ev->nfields]))
			ev->nfields++;
	free(fields);
}

static int on_event(struct tep_event *event, struct tep_record *rec,
		    int cpu, void *ctx)
{
	struct trace_ctx *t = ctx;
	struct trace_event ev;

	if (strcmp(event->system, "ksmbd"))
		return 0;
	decode(t, event, rec, cpu, &ev);
	if (json_output) {
		json_writer_t *w = jsonw_new(stdout);

		if (!w)
			return 1;
		trace_format_json(&ev, w);
		jsonw_destroy(&w);	/* newline, flush */
	} else {
		trace_format_text(&ev, stdout);
		fflush(stdout);
	}
	if (ferror(stdout) || (trace_count && ++t->seen >= trace_count)) {
		t->stop = true;
		return 1;
	}
	return 0;
}

/* Filter each ksmbd event to the netns; name those that cannot be. */
static int set_filters(struct trace_ctx *t, unsigned long ino)
{
	char filter[64], unfiltered[256] = "";
	struct tep_event **events;
	size_t off = 0;
	int i, n, err = 0;

	snprintf(filter, sizeof(filter), "netns_ino == %lu", ino);
	n = tep_get_events_count(t->tep);
	events = tep_list_events(t->tep, TEP_EVENT_SORT_ID);
	for (i = 0; events && i < n && !err; i++) {
		if (strcmp(events[i]->system, "ksmbd"))
			continue;
		if (!tep_find_field(events[i], "netns_ino")) {
			off += snprintf(unfiltered + off,
					off < sizeof(unfiltered) ?
					sizeof(unfiltered) - off : 0,
					"%s%s", off ? ", " : "",
					events[i]->name);
			continue;
		}
		err = tracefs_event_file_write(t->inst, "ksmbd",
					       events[i]->name, "filter",
					       filter) < 0;
		if (err)
			p_err("cannot set filter '%s' on %s: %s", filter,
			      events[i]->name, strerror(errno));
	}
	if (!err && unfiltered[0])
		fprintf(stderr, "note: %s carry no netns: shown for every netns\n",
			unfiltered);
	return err ? -EINVAL : 0;
}

/* Whether the instance's trace clock counts nanoseconds. */
static bool clock_is_ns(struct tracefs_instance *inst)
{
	static const char *const ns_clocks[] = {
		"local", "global", "mono", "mono_raw", "boot", "tai", "perf",
	};
	char *clock = tracefs_get_clock(inst);
	bool ns = false;
	size_t i;

	for (i = 0; clock && i < ARRAY_SIZE(ns_clocks); i++)
		ns |= !strcmp(clock, ns_clocks[i]);
	free(clock);
	return ns;
}

static int trace_setup(struct trace_ctx *t, const struct ns_ctx *ns)
{
	const char *systems[] = { "ksmbd", NULL };
	char name[64];

	if (!tracefs_tracing_dir()) {
		p_err("tracefs is not mounted and cannot be mounted on /sys/kernel/tracing");
		return -ENOENT;
	}
	t->tep = tracefs_local_events_system(NULL, systems);
	if (!t->tep || !tep_find_event_by_name(t->tep, "ksmbd", "ksmbd_sched_req")) {
		p_err("this kernel has no ksmbd tracepoints (events/ksmbd missing)");
		return -ENOENT;
	}
	remove_stale_instances();
	snprintf(name, sizeof(name), INSTANCE_PREFIX "%d", (int)getpid());
	t->inst = tracefs_instance_create(name);
	if (!t->inst) {
		p_err("cannot create trace instance %s: %s", name,
		      strerror(errno));
		return -errno;
	}
	t->ts_ns = clock_is_ns(t->inst);
	/* Wake the poll on any data, not at half a buffer. */
	tracefs_instance_file_write(t->inst, "buffer_percent", "0");
	if (set_filters(t, ns->ino))
		return -EINVAL;
	if (tracefs_event_enable(t->inst, "ksmbd", NULL)) {
		p_err("cannot enable the ksmbd events: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static void trace_cleanup(struct trace_ctx *t)
{
	if (t->inst) {
		tracefs_event_disable(t->inst, NULL, NULL);
		if (tracefs_instance_destroy(t->inst))
			fprintf(stderr, "note: cannot remove trace instance %s\n",
				tracefs_instance_get_name(t->inst));
		tracefs_instance_free(t->inst);
	}
	tep_free(t->tep);
}

/* Wait for data on trace_pipe, read every CPU's records, until stopped. */
static int stream(struct trace_ctx *t, const sigset_t *waitmask)
{
	struct pollfd pfd = { .events = POLLIN };
	int err = 0;

	pfd.fd = tracefs_instance_file_open(t->inst, "trace_pipe",
					    O_RDONLY | O_NONBLOCK);
	if (pfd.fd < 0) {
		p_err("cannot open trace_pipe: %s", strerror(errno));
		return -errno;
	}
	while (!t->stop) {
		if (ppoll(&pfd, 1, NULL, waitmask) < 0) {
			if (errno != EINTR) {
				err = -errno;
				p_err("poll on trace_pipe: %s", strerror(errno));
			}
			break;	/* EINTR: a stop signal */
		}
		tracefs_load_cmdlines(NULL, t->tep);
		tracefs_iterate_raw_events(t->tep, t->inst, NULL, 0, on_event,
					   t);
	}
	/* Stopped by a signal: what was recorded before it, still out. */
	if (!t->stop && !err)
		tracefs_iterate_raw_events(t->tep, t->inst, NULL, 0, on_event,
					   t);
	close(pfd.fd);
	return err;
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
	struct trace_ctx t = { 0 };
	sigset_t stop, old, waitmask;
	struct sigaction sa = { 0 };
	struct ns_ctx ns;
	int err;

	err = ns_cmd("trace", argc, argv, &ns, true);
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

	err = trace_setup(&t, &ns);
	if (!err) {
		/* On stderr also with -j: tests wait for this line. */
		fprintf(stderr, "tracing ksmbd events of netns %lu (%s)",
			ns.ino, ns.label);
		if (trace_count)
			fprintf(stderr, ", %ld events", trace_count);
		fprintf(stderr, "; Ctrl-C to stop\n");
		/* One JSON object a line, each its own document. */
		free(json_wtr);
		json_wtr = NULL;
		waitmask = old;
		sigdelset(&waitmask, SIGINT);
		sigdelset(&waitmask, SIGTERM);
		sigdelset(&waitmask, SIGHUP);
		err = stream(&t, &waitmask);
	}
	trace_cleanup(&t);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}
