// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * smb-classify - load and configure the ksmbd BPF classifier
 *
 * Conventions follow bpftool: command words may be abbreviated, errors are
 * one line "Error: ..." on stderr (with -j a JSON object {"error": ...} on
 * stdout instead) and a non-zero exit status.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "classword.h"
#include "main.h"

bool json_output;
struct json_writer *jw;
const char *netns_arg;

static bool debug;
/*
 * Without -d, libbpf's warnings are not printed as they come: the last one
 * is kept and added to the one "Error:" line if the command fails (the
 * verifier log and the rest are shown with -d).
 */
static char libbpf_last_warn[256];
static bool err_reported;
static struct json_writer json_writer;

/**
 * p_err() - report the error of this run
 * @fmt: printf format of one line, without "Error: " and newline.
 *
 * Only the first error of a run is printed, so a command reports exactly
 * one line however its error paths unwind.
 */
void p_err(const char *fmt, ...)
{
	char msg[512], *p;
	va_list ap;

	if (err_reported)
		return;
	err_reported = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (libbpf_last_warn[0]) {
		size_t n = strlen(msg);

		snprintf(msg + n, sizeof(msg) - n, " (%s)",
			 libbpf_last_warn);
	}
	/* Messages quote user input: keep them one line. */
	for (p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	if (json_output) {
		json_init(&json_writer, stdout, json_writer.pretty);
		json_start_object(&json_writer);
		json_key(&json_writer, "error");
		json_string(&json_writer, msg);
		json_end_object(&json_writer);
		json_finish(&json_writer);
	} else {
		fprintf(stderr, "Error: %s\n", msg);
	}
}

/**
 * p_info() - a note for the user: stdout as text, nothing with -j
 * @fmt: printf format of one line, without newline.
 */
void p_info(const char *fmt, ...)
{
	va_list ap;

	if (json_output)
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	size_t n;

	if (debug)
		return vfprintf(stderr, fmt, ap);
	if (level > LIBBPF_WARN)
		return 0;
	vsnprintf(libbpf_last_warn, sizeof(libbpf_last_warn), fmt, ap);
	n = strlen(libbpf_last_warn);
	while (n && (libbpf_last_warn[n - 1] == '\n' ||
		     libbpf_last_warn[n - 1] == ' '))
		libbpf_last_warn[--n] = '\0';
	return 0;
}

static void usage(FILE *out)
{
	fputs(
"Usage: smb-classify [OPTIONS] COMMAND [ARGS]\n"
"\n"
"Load the ksmbd classifier (a BPF struct_ops program of type\n"
"ksmbd_sched_ops) into a network namespace, configure its prefixes and\n"
"per-class policy, and watch what ksmbd does with it.\n"
"\n"
"Commands (words may be abbreviated, e.g. 'p a' for 'prefix add'):\n"
"  load [OBJ] [max-inflight N]\n"
"                      attach the classifier in the netns; OBJ is a BPF\n"
"                      object with one SEC(\".struct_ops.link\") map of type\n"
"                      ksmbd_sched_ops (default: the built-in smb_prefix).\n"
"                      Pinned prefixes and policy maps are reused.  Error\n"
"                      if a program is already attached there (use\n"
"                      replace).  max-inflight N sets the ops' data member\n"
"                      max_inflight (found by name in OBJ's BTF; error if\n"
"                      OBJ's ops have none): at most N data requests of\n"
"                      the netns in flight, N decimal 0-4096, 0 = kernel\n"
"                      default.  Without it, OBJ's own value is used (the\n"
"                      built-in: 0).  A word abbreviating max-inflight is\n"
"                      the keyword: write ./m for a file named m.\n"
"  replace [OBJ] [max-inflight N]\n"
"                      switch the attached program atomically (one link\n"
"                      update: no connection is classified by neither);\n"
"                      prefixes and policy are kept; the new max_inflight\n"
"                      applies at once.\n"
"  unload              detach and remove the pins of the netns (prefixes\n"
"                      and policy too); \"nothing loaded\" is not an error.\n"
"                      Works from the stored record after 'ip netns del'.\n"
"  status              program, link and prog ids, whether ksmbd serves\n"
"                      the netns, kernel counters, number of prefixes and\n"
"                      policies; while attached, the dispatcher (max_inflight,\n"
"                      inflight, queued, clients, alloc_fail) and per class:\n"
"                      dispatched and bypassed (control) requests, bytes,\n"
"                      mean wait, and p99 wait as the upper bound of the\n"
"                      log2 histogram bucket holding it (\"<= 512.0 us\";\n"
"                      \">=\" for the open last bucket, >= 16.8 s).  With -j:\n"
"                      raw ns (mean_wait_ns, p99_wait_ns, p99_wait_bound\n"
"                      \"le\"/\"ge\") and the histogram (hist[i]: waits in\n"
"                      [2^(i-1), 2^i) us, hist[0] under 1 us).\n"
"  prefix add CIDR CLASS [weight W] [per-peer]\n"
"                      connections from CIDR get class CLASS (0-65535;\n"
"                      0 is the anonymous class), W turns per round\n"
"                      (1-255, default 1), and with per-peer each peer\n"
"                      address is its own client within the class.  An\n"
"                      existing prefix is updated.  Works before load too.\n"
"  prefix del CIDR     remove a prefix (error if it is not there).\n"
"  prefix list         prefixes, IPv4 first, by address, then length.\n"
"  policy set CLASS [splice-min N|off] [unbound-min N|off]\n"
"                      per-request verdicts of the requests of class CLASS\n"
"                      (at least one keyword; one not given keeps its\n"
"                      current value, or the default for a new entry):\n"
"                      a READ of Length >= splice-min may be sent spliced\n"
"                      (verdict SPLICE; ksmbd still copies where unsafe),\n"
"                      a READ or WRITE of Length >= unbound-min runs on the\n"
"                      unbound workqueue.  N: bytes 0-16777216 in decimal,\n"
"                      optionally with K (KiB) or M (MiB): 65536, 64K, 1M;\n"
"                      0 = every READ (WRITE); off = never.  Works before\n"
"                      load too.\n"
"  policy del CLASS    remove the entry: the class uses the defaults again.\n"
"  policy show         entries by class, then the defaults for classes\n"
"                      without one: splice-min 64K, unbound-min off.  With\n"
"                      -j, off is null.  Other commands are never spliced\n"
"                      and run per-CPU.\n"
"  trace [-c COUNT]    stream the ksmbd tracepoints (events/ksmbd/*:\n"
"                      connections classified, request verdicts, dispatch\n"
"                      waits, read payload path), one decoded line each:\n"
"                      time, event, peer, class/weight/per-peer, command,\n"
"                      verdict (queue, splice), wait, path/len; with -j one\n"
"                      JSON object per line.  Stops after COUNT events or\n"
"                      on SIGINT/SIGTERM/SIGHUP.  Uses a private tracefs\n"
"                      instance (instances/smb-classify-PID, removed at\n"
"                      exit; tracefs mounted on /sys/kernel/tracing if\n"
"                      needed, unmounted at exit).  Tracefs is global:\n"
"                      events with a netns field (conn, dispatch) are\n"
"                      filtered to the netns of -n (default: the current\n"
"                      one); events without (req) are shown for all, with\n"
"                      a note on stderr.\n"
"\n"
"CIDR: ADDR/LEN, strictly: IPv4 as four decimal octets without leading\n"
"zeros (no 127.1, 010.0.0.1, 0x7f...), IPv6 as inet_pton(3) reads it, LEN\n"
"decimal 0-32 or 0-128.  A bare address is rejected (write /32 or /128),\n"
"and so is a prefix with host bits set (the error names the network).\n"
"IPv4 prefixes are stored IPv4-mapped (a.b.c.d/N as ::ffff:a.b.c.d/96+N),\n"
"the form in which ksmbd passes IPv4 peers, and listed as IPv4 again;\n"
"0.0.0.0/0 matches all IPv4 peers, ::/0 all peers.  The longest matching\n"
"prefix wins; a peer matching none gets class 0.\n"
"\n"
"Options:\n"
"  -j, --json          JSON output; errors as {\"error\": \"...\"} on stdout\n"
"  -p, --pretty        pretty-printed JSON (implies -j; trace stays one\n"
"                      object per line)\n"
"  -n, --netns NETNS   work in network namespace NETNS: a name from\n"
"                      'ip netns' (" NETNS_RUN_DIR "/NAME) or a path such as\n"
"                      /proc/PID/ns/net; default: the current one.  The\n"
"                      program is attached from inside it\n"
"  -c, --count COUNT   trace: stop after COUNT events (1-4294967295)\n"
"  -d, --debug         print libbpf debug messages\n"
"  -V, --version       print the version\n"
"  -h, --help          print this help\n"
"\n"
"Pins: " PIN_ROOT "/<netns inode>/{link,prefixes,policy}; names\n"
"given with -n are recorded as symlinks " PIN_NAMES "/NAME -> ../<inode>.\n"
"bpffs is mounted on " BPFFS_ROOT " when it is not.  Only the initial\n"
"netns is served by ksmbd in Linux 6.12; status says so for others.\n"
"\n"
"Exit status: 0 on success (also 'unload' with nothing loaded), 1 on error.\n",
	      out);
}

static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

struct cmd {
	const char *name;
	int (*func)(int argc, char **argv);
};

static int do_load_cmd(int argc, char **argv)
{
	return do_load(argc, argv, false);
}

static int do_replace_cmd(int argc, char **argv)
{
	return do_load(argc, argv, true);
}

static const struct cmd cmds[] = {
	{ "load",	do_load_cmd },
	{ "replace",	do_replace_cmd },
	{ "unload",	do_unload },
	{ "status",	do_status },
	{ "prefix",	do_prefix },
	{ "policy",	do_policy },
	{ "trace",	do_trace },
	{ "help",	do_help },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json",	no_argument,		NULL, 'j' },
		{ "pretty",	no_argument,		NULL, 'p' },
		{ "netns",	required_argument,	NULL, 'n' },
		{ "count",	required_argument,	NULL, 'c' },
		{ "debug",	no_argument,		NULL, 'd' },
		{ "version",	no_argument,		NULL, 'V' },
		{ "help",	no_argument,		NULL, 'h' },
		{ 0 }
	};
	const char *count_arg = NULL;
	bool pretty = false;
	unsigned long v;
	size_t i;
	int opt;

	/* Options are allowed anywhere, as in bpftool; "--" ends them. */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":jpn:c:dVh", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json_output = true;
			break;
		case 'p':
			json_output = true;
			pretty = true;
			json_writer.pretty = true;
			break;
		case 'n':
			netns_arg = optarg;
			break;
		case 'c':
			count_arg = optarg;
			break;
		case 'd':
			debug = true;
			break;
		case 'V':
			printf("smb-classify v%s (libbpf %s)\n",
			       SMB_CLASSIFY_VERSION, libbpf_version_string());
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			p_err("option '%s' needs an argument", argv[optind - 1]);
			return 1;
		default:
			if (optopt)
				p_err("unknown option '-%c' (see --help)",
				      optopt);
			else
				p_err("unknown option '%s' (see --help)",
				      argv[optind - 1]);
			return 1;
		}
	}
	json_init(&json_writer, stdout, pretty);
	jw = &json_writer;

	libbpf_set_print(libbpf_print);

	argc -= optind;
	argv += optind;
	if (count_arg) {
		if (parse_uint(count_arg, 4294967295UL, &v) || !v) {
			p_err("count '%.40s': must be a decimal 1-4294967295",
			      count_arg);
			return 1;
		}
		trace_count = v;
	}
	if (argc < 1) {
		p_err("missing command (see --help)");
		return 1;
	}
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (!word_abbrev(argv[0], cmds[i].name))
			continue;
		if (count_arg && cmds[i].func != do_trace) {
			p_err("-c/--count is an option of trace only");
			return 1;
		}
		return cmds[i].func(argc - 1, argv + 1) ? 1 : 0;
	}
	p_err("unknown command '%s' (see --help)", argv[0]);
	return 1;
}
