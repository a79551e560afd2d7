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
 * it are printed first, so a test's "kill, then read" sees them all), and
 * one left by a killed run (its pid gone) at the next start.  libtracefs
 * mounts tracefs if it is nowhere.  The instance's clock is "mono", the
 * clock of the kernel's wait_ns, so "ts - wait_ns" is when a request was
 * queued.
 *
 * SIGUSR1 is a drain on demand: every event the ring buffer holds when
 * it arrives is printed and flushed, then "sync N lost M" goes to stderr
 * (N counts the drains from 1, M the events the buffer lost so far), so
 * a caller that waits for that line reads a complete output without
 * stopping the tracer.
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

#define INSTANCE_PREFIX		"smb-classify-"

struct trace_ctx {
	const char *filter;
	struct tep_handle *tep;
	struct tracefs_instance *inst;
	bool ts_ns;
	long seen;
	unsigned long count;	/* -c: stop after this many; 0: never */
	unsigned int syncs;
	bool stop;
};

/* Set by the handlers, which run only inside ppoll(): blocked elsewhere. */
static volatile sig_atomic_t stop_requested, sync_requested;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		sync_requested = 1;
	else
		stop_requested = 1;
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

/*
 * The symbol table the event's print format shows @name through
 * (__print_symbolic(REC->name, ...)), searched through the arguments and
 * the operands of expressions; NULL if none.
 */
static struct tep_print_flag_sym *find_symbols(struct tep_print_arg *arg,
					       const char *name)
{
	struct tep_print_flag_sym *sym;

	for (; arg; arg = arg->next) {
		switch (arg->type) {
		case TEP_PRINT_SYMBOL:
			if (arg->symbol.field &&
			    arg->symbol.field->type == TEP_PRINT_FIELD &&
			    !strcmp(arg->symbol.field->field.name, name))
				return arg->symbol.symbols;
			break;
		case TEP_PRINT_OP:
			sym = find_symbols(arg->op.left, name);
			if (!sym)
				sym = find_symbols(arg->op.right, name);
			if (sym)
				return sym;
			break;
		default:
			break;
		}
	}
	return NULL;
}

/* @f->sym: the name of @f->num in the event's symbol table of @f->name. */
static void decode_symbol(struct tep_event *event, struct trace_field *f)
{
	struct tep_print_flag_sym *sym;

	for (sym = find_symbols(event->print_fmt.args, f->name); sym;
	     sym = sym->next)
		if (sym->value && strtoull(sym->value, NULL, 0) == f->num) {
			snprintf(f->sym, sizeof(f->sym), "%s", sym->str);
			return;
		}
}

/* One field of @rec into @f.  Return: false to leave the field out. */
static bool decode_field(struct tep_event *event, struct tep_format_field *fld,
			 struct tep_record *rec, struct trace_field *f)
{
	unsigned long long v;
	int len;
	/* The field's bytes: of a __string, where its offset word points. */
	const char *data = tep_get_field_raw(NULL, event, fld->name, rec,
					     &len, 0);

	snprintf(f->name, sizeof(f->name), "%s", fld->name);
	f->is_str = true;
	if (!data || data + len > (const char *)rec->data + rec->size)
		return false;
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
		snprintf(f->str, sizeof(f->str), "%.*s", len, data);
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
	     fld++) {
		if (!decode_field(event, *fld, rec, &ev->f[ev->nfields]))
			continue;
		if (!ev->f[ev->nfields].is_str)
			decode_symbol(event, &ev->f[ev->nfields]);
		ev->nfields++;
	}
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
	if (ferror(stdout) || (t->count && ++t->seen >= (long)t->count)) {
		t->stop = true;
		return 1;
	}
	return 0;
}

/* Whether @name is one of the @argc events of @argv (all if none). */
static bool selected(const char *name, int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return !argc;
}

/*
 * Enable each selected ksmbd event, filtered to the netns and to "filter
 * EXPR" when given; name those that cannot be filtered to the netns.
 */
static int enable_events(struct trace_ctx *t, unsigned long ino, int argc,
			 char **argv)
{
	char filter[512], unfiltered[256] = "";
	struct tep_event **events, *ev;
	size_t off = 0;
	int i, n;

	if (t->filter)
		snprintf(filter, sizeof(filter), "netns_ino == %lu && (%s)",
			 ino, t->filter);
	else
		snprintf(filter, sizeof(filter), "netns_ino == %lu", ino);
	n = tep_get_events_count(t->tep);
	events = tep_list_events(t->tep, TEP_EVENT_SORT_ID);
	for (i = 0; events && i < n; i++) {
		ev = events[i];
		if (strcmp(ev->system, "ksmbd") ||
		    !selected(ev->name, argc, argv))
			continue;
		if (!tep_find_field(ev, "netns_ino"))
			off += snprintf(unfiltered + off,
					off < sizeof(unfiltered) ?
					sizeof(unfiltered) - off : 0, "%s%s",
					off ? ", " : "", ev->name);
		else if (tracefs_event_file_write(t->inst, "ksmbd", ev->name,
						  "filter", filter) < 0)
			return p_errno(-errno, "cannot set filter '%s' on %s",
				       filter, ev->name);
		if (tracefs_event_enable(t->inst, "ksmbd", ev->name))
			return p_errno(-errno, "cannot enable %s", ev->name);
	}
	if (unfiltered[0])
		fprintf(stderr, "note: %s carry no netns: shown for every netns\n",
			unfiltered);
	return 0;
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

static int trace_setup(struct trace_ctx *t, const struct ns_ctx *ns,
		       int argc, char **argv)
{
	const char *systems[] = { "ksmbd", NULL };
	char name[64];
	int i;

	if (!tracefs_tracing_dir()) {
		p_err("tracefs is not mounted and cannot be mounted on /sys/kernel/tracing");
		return -ENOENT;
	}
	t->tep = tracefs_local_events_system(NULL, systems);
	if (!t->tep || !tep_find_event_by_name(t->tep, "ksmbd", "ksmbd_sched_req")) {
		p_err("this kernel has no ksmbd tracepoints (events/ksmbd missing)");
		return -ENOENT;
	}
	for (i = 0; i < argc; i++) {
		if (!tep_find_event_by_name(t->tep, "ksmbd", argv[i])) {
			p_err("trace: no event ksmbd/%.64s", argv[i]);
			return -ENOENT;
		}
	}
	remove_stale_instances();
	snprintf(name, sizeof(name), INSTANCE_PREFIX "%d", (int)getpid());
	t->inst = tracefs_instance_create(name);
	if (!t->inst)
		return p_errno(-errno, "cannot create trace instance %s", name);
	/* The clock of wait_ns; the instance's default if it cannot be set. */
	tracefs_instance_file_write(t->inst, "trace_clock", "mono");
	t->ts_ns = clock_is_ns(t->inst);
	/* Wake the poll on any data, not at half a buffer. */
	tracefs_instance_file_write(t->inst, "buffer_percent", "0");
	return enable_events(t, ns->ino, argc, argv);
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

/* Events the instance's ring buffer lost, over every CPU's stats. */
static unsigned long long trace_lost(struct trace_ctx *t)
{
	unsigned long long lost = 0;
	char path[64], *stats;
	int cpu, ncpus = sysconf(_SC_NPROCESSORS_CONF);

	for (cpu = 0; cpu < ncpus; cpu++) {
		snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", cpu);
		stats = tracefs_instance_file_read(t->inst, path, NULL);
		if (stats)
			lost += ksched_ring_lost(stats);
		free(stats);
	}
	return lost;
}

/* Print every event the ring buffer holds now. */
static void drain(struct trace_ctx *t)
{
	tracefs_load_cmdlines(NULL, t->tep);
	tracefs_iterate_raw_events(t->tep, t->inst, NULL, 0, on_event, t);
}

/*
 * Wait for data on trace_pipe and print every CPU's records, until
 * stopped by a signal (what was recorded before it is printed first),
 * a closed output or -c; answer SIGUSR1 with "sync N lost M".
 */
static int stream(struct trace_ctx *t, const sigset_t *waitmask)
{
	struct pollfd pfd = { .events = POLLIN };
	int err = 0;

	pfd.fd = tracefs_instance_file_open(t->inst, "trace_pipe",
					    O_RDONLY | O_NONBLOCK);
	if (pfd.fd < 0)
		return p_errno(-errno, "cannot open trace_pipe");
	while (!t->stop) {
		if (ppoll(&pfd, 1, NULL, waitmask) < 0 && errno != EINTR) {
			err = p_errno(-errno, "poll on trace_pipe");
			break;
		}
		drain(t);
		if (stop_requested)
			break;
		if (sync_requested && !t->stop) {
			sync_requested = 0;
			fflush(stdout);
			fprintf(stderr, "sync %u lost %llu\n", ++t->syncs,
				trace_lost(t));
		}
	}
	close(pfd.fd);
	return err;
}

/**
 * do_trace() - "trace [EVENT...] [filter EXPR]": print the ksmbd
 *              tracepoints as they fire
 * @argc: number of @argv.
 * @argv: event names (ksmbd_sched_dispatch, ...), none for every ksmbd
 *        event; "filter EXPR": a tracefs filter of their fields
 *        ("waited == 1 && clients >= 2"), ANDed with the netns's;
 *        -c COUNT: stop after COUNT events.
 *
 * Return: 0 or a negative errno, reported.
 */
int do_trace(int argc, char **argv)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1 };
	struct trace_ctx t = { 0 };
	sigset_t stop, old, waitmask;
	unsigned long long lost;
	size_t i;
	struct sigaction sa = { 0 };
	struct cmd_opt opts[] = { { "count", 'c', true } };
	struct ns_ctx ns;
	int err;

	err = cmd_options("trace", &argc, &argv, opts, ARRAY_SIZE(opts));
	if (err)
		return err < 0 ? err : 0;
	if (opts[0].value &&
	    (parse_uint(opts[0].value, 4294967295UL, &t.count) || !t.count))
		return p_err("count '%.40s': must be a decimal 1-4294967295",
			     opts[0].value);
	for (i = 0; i < (size_t)argc; i++) {
		if (strcmp(argv[i], "filter"))
			continue;
		if (t.filter || i + 1 == (size_t)argc || !argv[i + 1][0])
			return p_err("trace: filter %s",
				     t.filter ? "given twice" :
				     "needs an expression");
		t.filter = argv[i + 1];
		memmove(argv + i, argv + i + 2, (argc - i - 2) * sizeof(*argv));
		argc -= 2;
		i--;
	}
	err = ns_resolve(&ns, true);
	if (err)
		return err;
	/*
	 * Block the stop and sync signals until the instance is gone: they
	 * are taken only inside ppoll(), so cleanup always runs.
	 */
	sigemptyset(&stop);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaddset(&stop, sigs[i]);
	sigprocmask(SIG_BLOCK, &stop, &old);
	sa.sa_handler = on_signal;		/* no SA_RESTART */
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	err = trace_setup(&t, &ns, argc, argv);
	if (!err) {
		/* On stderr also with -j: tests wait for this line. */
		fprintf(stderr, "tracing ksmbd events of netns %lu (%s)",
			ns.ino, ns.label);
		if (t.count)
			fprintf(stderr, ", %lu events", t.count);
		fprintf(stderr, "; Ctrl-C to stop\n");
		/* One JSON object a line, each its own document. */
		free(json_wtr);
		json_wtr = NULL;
		waitmask = old;
		for (i = 0; i < ARRAY_SIZE(sigs); i++)
			sigdelset(&waitmask, sigs[i]);
		err = stream(&t, &waitmask);
		lost = trace_lost(&t);
		if (lost)
			fprintf(stderr, "note: the ring buffer lost %llu events\n",
				lost);
	}
	trace_cleanup(&t);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}
