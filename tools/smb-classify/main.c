// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * smb-classify - load and configure the ksmbd BPF classifier
 *
 * Conventions follow bpftool: command words may be abbreviated (every
 * level goes through cmd_select()), errors are one line "Error: ..." on
 * stderr (with -j a JSON object {"error": ...} on stdout instead) and a
 * non-zero exit status.  The full reference is smb-classify(8).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "main.h"
#include "version.h"

bool json_output;
json_writer_t *json_wtr;
const char *netns_arg;

static bool debug;
/*
 * Without -d, libbpf's warnings are not printed as they come: the last one
 * is kept and added to the one "Error:" line if the command fails (the
 * verifier log and the rest are shown with -d).
 */
static char libbpf_last_warn[256];
static bool err_reported;

/**
 * p_err() - report the error of this run
 * @fmt: printf format of one line, without "Error: " and newline.
 *
 * Only the first error of a run is printed, so a command reports exactly
 * one line however its error paths unwind.
 *
 * Return: -EINVAL, for "return p_err(...)" of a bad argument.
 */
int p_err(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (err_reported)
		return -EINVAL;
	err_reported = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (libbpf_last_warn[0]) {
		size_t n = strlen(msg);

		snprintf(msg + n, sizeof(msg) - n, " (%s)", libbpf_last_warn);
	}
	/* Messages quote user input: keep them one line, valid UTF-8. */
	text_sanitize(msg);
	if (json_output) {
		/* trace gives its writer up: then a document of its own. */
		json_writer_t *w = json_wtr ? json_wtr : jsonw_new(stdout);

		if (!w)
			return -EINVAL;
		jsonw_start_object(w);
		jsonw_string_field(w, "error", msg);
		jsonw_end_object(w);
		if (w != json_wtr)
			jsonw_destroy(&w);
	} else {
		fprintf(stderr, "Error: %s\n", msg);
	}
	return -EINVAL;
}

/**
 * p_errno() - report an error with its errno text: "FMT: strerror"
 * @err: a negative errno.
 * @fmt: as p_err().
 *
 * Return: @err, for "return p_errno(-errno, ...)".
 */
int p_errno(int err, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p_err("%s: %s", msg, strerror(-err));
	return err;
}

/**
 * json_result() - open the JSON object of a command that changed something
 * @result: what it did ("loaded", "added", "deleted", ...), its first member.
 *
 * The caller adds its own members and ends the object.
 */
void json_result(const char *result)
{
	jsonw_start_object(json_wtr);
	jsonw_string_field(json_wtr, "result", result);
}

/**
 * stop_point() - test hook: stop here when SMB_CLASSIFY_STOP_AT names @name
 * @name: the point ("locked", "loaded", "maps-pinned", "attached",
 *        "pinned", "renamed", "detached"; see smb-classify(8)).
 *
 * Prints "stopped at NAME" on stderr and stops the process with SIGSTOP,
 * so a test can kill it at exactly that point (60-loader-cases).
 */
void stop_point(const char *name)
{
	const char *want = getenv("SMB_CLASSIFY_STOP_AT");

	if (!want || strcmp(want, name))
		return;
	fprintf(stderr, "stopped at %s\n", name);
	raise(SIGSTOP);
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

/**
 * struct cmd - one command word, as bpftool's
 * @level: the words before it: "" at the top, or "prefix", "policy",
 *         "user", "share", "class".
 * @name:  the word; a non-empty prefix of it selects it, the first row
 *         of its level that it abbreviates wins.
 * @func:  runs the rest of the words; NULL: they are of level @name.
 * @help:  the command's line of the grammar after @level ("add CIDR
 *         CLASS ..."); NULL for an alias or a level, not listed.
 * @opts:  @func takes options of its own and calls cmd_options() itself;
 *         otherwise cmd_select() does, for the global options only.
 */
struct cmd {
	const char *level, *name;
	int (*func)(int argc, char **argv);
	const char *help;
	bool opts;
};

/* The grammar of one level of @cmds ("prefix"), or of all (""). */
static void usage(const struct cmd *cmds, const char *level)
{
	printf("Usage: smb-classify [OPTIONS] COMMAND\n");
	for (; cmds->name; cmds++)
		if (cmds->help && (!*level || !strcmp(cmds->level, level)))
			printf("       smb-classify %s%s%s\n", cmds->level,
			       *cmds->level ? " " : "", cmds->help);
	printf("OPTIONS := { -j|--json | -p|--pretty | -n|--netns NETNS | -d|--debug |\n"
	       "             -V|--version | -h|--help }, before or after the command\n"
	       "CIDR := ADDR/LEN (strict; IPv4 stored as ::ffff:a.b.c.d)   CLASS := 0-65535\n"
	       "NAME := a ksmbd account (user, 1-47 bytes) or share (1-63 bytes), A-Z as a-z\n"
	       "N := bytes 0-16M, K or M suffix (64K, 1M)   FILE := %s by default\n"
	       "class set: N := I/Os of 8 KiB a second, 1-10000000   MS := 1-10000\n"
	       "           SIZE := bytes a second, 1-1024G, K, M or G suffix (512K, 20M, 1G)\n"
	       "Words may be abbreviated.  See smb-classify(8), ksmbd-sched.conf(5).\n",
	       CONF_DEFAULT);
}

/**
 * cmd_select() - run the command of @cmds that argv[0] abbreviates
 * @cmds:  the table, ending with a { NULL } row.
 * @level: the words so far ("" at the top), for messages and help.
 * @argc:  words left.
 * @argv:  the words.
 *
 * "help" at any level prints that level's grammar.
 *
 * Return: the command's return value, or -EINVAL, reported.
 */
static int cmd_select(const struct cmd *cmds, const char *level, int argc,
		      char **argv)
{
	char names[160] = "";
	const struct cmd *c;
	size_t off = 0;

	if (argc > 0 && word_abbrev(argv[0], "help") && *level) {
		usage(cmds, level);
		return 0;
	}
	for (c = cmds; argc > 0 && c->name; c++) {
		if (strcmp(c->level, level) || !word_abbrev(argv[0], c->name))
			continue;
		if (!c->func)
			return cmd_select(cmds, c->name, argc - 1, argv + 1);
		argc--;
		argv++;
		if (!c->opts) {
			int err = cmd_options(c->name, &argc, &argv, NULL, 0);

			if (err)
				return err < 0 ? err : 0;
		}
		return c->func(argc, argv);
	}
	for (c = cmds; c->name && off < sizeof(names); c++)
		if (!strcmp(c->level, level))
			off += snprintf(names + off, sizeof(names) - off,
					"%s%s", off ? ", " : "", c->name);
	if (argc < 1)
		return p_err("%s%smissing command (%s)", level,
			     *level ? ": " : "", names);
	return p_err("%s%sunknown command '%s' (%s)", level,
		     *level ? ": " : "", argv[0], names);
}

/** no_args() - command @cmd takes no words: 0, or -EINVAL, reported */
int no_args(const char *cmd, int argc, char **argv)
{
	if (!argc)
		return 0;
	return p_err("%s: unexpected argument '%s'", cmd, argv[0]);
}

/** one_arg() - @cmd takes one word, @what; 0 or -EINVAL, reported */
int one_arg(const char *cmd, const char *what, int argc, char **argv)
{
	if (argc > 0)
		return no_args(cmd, argc - 1, argv + 1);
	return p_err("%s: missing %s", cmd, what);
}

static int do_help(int argc, char **argv);

/* Every command, in the order of the grammar (smb-classify(8)). */
static const struct cmd cmds[] = {
	{ "", "load", do_load, "load [OBJ] [max-inflight N]" },
	{ "", "replace", do_replace, "replace [OBJ] [max-inflight N]" },
	{ "", "unload", do_unload, "unload" },
	{ "", "status", do_status, "status [-o text|json|openmetrics|kernel]",
	  true },
	{ "", "clients", do_clients, "clients" },
	{ "", "prefix" },
	{ "prefix", "add", prefix_add,
	  "add CIDR CLASS [weight W] [per-peer [prefix6 LEN]]" },
	{ "prefix", "delete", prefix_del, "del CIDR" },
	{ "prefix", "list", prefix_list, "list" },
	{ "prefix", "show", prefix_list },
	{ "", "policy" },
	{ "policy", "set", policy_set,
	  "set CLASS [splice-min N|off] [unbound-min N|off]" },
	{ "policy", "delete", policy_del, "del CLASS" },
	{ "policy", "show", policy_show, "show" },
	{ "policy", "list", policy_show },
	{ "", "user" },
	{ "user", "add", user_add,
	  "add NAME CLASS [weight W] [per-peer [prefix6 LEN]]" },
	{ "user", "delete", user_del, "del NAME" },
	{ "user", "list", user_list, "list" },
	{ "user", "show", user_list },
	{ "", "share" },
	{ "share", "add", share_add,
	  "add NAME CLASS [weight W] [per-peer [prefix6 LEN]]" },
	{ "share", "delete", share_del, "del NAME" },
	{ "share", "list", share_list, "list" },
	{ "share", "show", share_list },
	{ "", "class" },
	{ "class", "set", class_set,
	  "set CLASS [reservation-iops N] [reservation-bytes SIZE]\n"
	  "                                [limit-iops N] [limit-bytes SIZE] [burst MS]\n"
	  "                                [scope dedicated|aggregated]" },
	{ "class", "delete", class_del, "del CLASS" },
	{ "class", "list", class_list, "list" },
	{ "class", "show", class_list },
	{ "", "apply", do_apply, "apply [FILE] [--dry-run]", true },
	{ "", "dump", do_dump, "dump" },
	{ "", "trace", do_trace, "trace [-c COUNT] [EVENT...] [filter EXPR]",
	  true },
	{ "", "help", do_help, "help" },
	{ NULL }
};

/* "help": the grammar. */
static int do_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(cmds, "");
	return 0;
}

/* The options of every command, before or after its words. */
static const struct option global_opts[] = {
	{ "json",	no_argument,		NULL, 'j' },
	{ "pretty",	no_argument,		NULL, 'p' },
	{ "netns",	required_argument,	NULL, 'n' },
	{ "debug",	no_argument,		NULL, 'd' },
	{ "version",	no_argument,		NULL, 'V' },
	{ "help",	no_argument,		NULL, 'h' },
};
#define GLOBAL_SHORT	"jpn:dVh"

static bool pretty;

/*
 * A global option: 0, 1 when it ends the run (-V, -h), -1 when @opt is
 * none of them.
 */
static int global_option(int opt, const char *arg)
{
	switch (opt) {
	case 'p':
		pretty = true;
		fallthrough;
	case 'j':
		json_output = true;
		return 0;
	case 'n':
		netns_arg = arg;
		return 0;
	case 'd':
		debug = true;
		return 0;
	case 'V':
		printf("smb-classify v%s (libbpf %s)\n", SMB_CLASSIFY_VERSION,
		       libbpf_version_string());
		return 1;
	case 'h':
		usage(cmds, "");
		return 1;
	}
	return -1;
}

/* getopt_long()'s error of @argv, as one message of @cmd. */
static int option_error(const char *cmd, int opt, char **argv)
{
	const char *sep = *cmd ? ": " : "";

	if (opt == ':')
		return p_err("%s%soption '%s' needs an argument", cmd, sep,
			     argv[optind - 1]);
	if (optopt)
		return p_err("%s%sunknown option '-%c' (see --help)", cmd, sep,
			     optopt);
	return p_err("%s%sunknown option '%s' (see --help)", cmd, sep,
		     argv[optind - 1]);
}

/**
 * cmd_options() - the options among the words of command @cmd
 * @cmd:   its name, for messages.
 * @argc:  in: its words; out: the words left, its operands.
 * @argv:  in: its words, argv[-1] being the command word; out: operands.
 * @own:   the options of @cmd alone (status -o, trace -c, apply
 *         --dry-run), their values set here; NULL if none.
 * @n:     entries of @own.
 *
 * The global options are taken as well, anywhere among the words, as in
 * bpftool; "--" ends the options.  An option of another command is
 * unknown here.
 *
 * Return: 0; 1 when the run ends here (-V, -h); -EINVAL, reported.
 */
int cmd_options(const char *cmd, int *argc, char ***argv,
		struct cmd_opt *own, unsigned int n)
{
	struct option opts[ARRAY_SIZE(global_opts) + 8] = { 0 };
	char shorts[sizeof(GLOBAL_SHORT) + 2 * 8 + 1] = ":" GLOBAL_SHORT;
	char **av = *argv - 1;
	unsigned int i, k = ARRAY_SIZE(global_opts);
	int opt, r;

	if (n > 8)
		return p_err("%s: too many options", cmd);
	memcpy(opts, global_opts, sizeof(global_opts));
	for (i = 0; i < n; i++, k++) {
		own[i].value = NULL;
		opts[k] = (struct option){ own[i].name, own[i].arg ?
					   required_argument : no_argument,
					   NULL, own[i].letter ?: 256 + (int)i };
		if (own[i].letter) {
			size_t l = strlen(shorts);

			shorts[l] = own[i].letter;
			shorts[l + 1] = own[i].arg ? ':' : '\0';
			shorts[l + 2] = '\0';
		}
	}
	opterr = 0;
	optind = 0;	/* glibc: start over, on these words */
	while ((opt = getopt_long(*argc + 1, av, shorts, opts, NULL)) != -1) {
		r = global_option(opt, optarg);
		if (r >= 0) {
			if (r)
				return r;
			continue;
		}
		for (i = 0; i < n; i++)
			if (opt == (own[i].letter ?: 256 + (int)i))
				break;
		if (i == n)
			return option_error(cmd, opt, av);
		if (own[i].value)
			return p_err("%s: option --%s given twice", cmd,
				     own[i].name);
		own[i].value = own[i].arg ? optarg : "";
	}
	*argv = av + optind;
	*argc = *argc + 1 - optind;
	return 0;
}

/*
 * The options before the command.  An option of one command given there
 * ("-o kernel status", as before options were the commands') is moved
 * after the command's words for it to parse: *@moved of them in @carry.
 */
static int main_options(int argc, char **argv, char **carry,
			unsigned int *moved)
{
	static const struct option moved_opts[] = {
		{ "count",	required_argument,	NULL, 'c' },
		{ "output",	required_argument,	NULL, 'o' },
		{ "dry-run",	no_argument,		NULL, 'D' },
	};
	struct option opts[ARRAY_SIZE(global_opts) +
			   ARRAY_SIZE(moved_opts) + 1] = { 0 };
	int opt, r;

	memcpy(opts, global_opts, sizeof(global_opts));
	memcpy(opts + ARRAY_SIZE(global_opts), moved_opts,
	       sizeof(moved_opts));
	opterr = 0;
	*moved = 0;
	/* "+": stop at the command word; its options are its own. */
	while ((opt = getopt_long(argc, argv, "+:" GLOBAL_SHORT "c:o:",
				  opts, NULL)) != -1) {
		r = global_option(opt, optarg);
		if (r >= 0) {
			if (r)
				return r;
			continue;
		}
		switch (opt) {
		case 'c':
		case 'o':
			carry[(*moved)++] = opt == 'c' ? "-c" : "-o";
			carry[(*moved)++] = optarg;
			break;
		case 'D':
			carry[(*moved)++] = "--dry-run";
			break;
		default:
			return option_error("", opt, argv);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	char **words = NULL, **carry;
	unsigned int moved = 0;
	int err, i, n;

	/* -j decides the error format: look for it before anything fails. */
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json") ||
		    !strcmp(argv[i], "-p") || !strcmp(argv[i], "--pretty"))
			json_output = true;
	json_wtr = jsonw_new(stdout);
	carry = calloc(argc + 1, sizeof(*carry));
	if (!json_wtr || !carry) {
		fprintf(stderr, "Error: out of memory\n");
		return 1;
	}
	err = main_options(argc, argv, carry, &moved);
	if (!err && moved) {
		/* The command's words, then the moved options (before "--"). */
		words = calloc(argc + moved + 1, sizeof(*words));
		if (!words)
			err = p_err("out of memory");
		for (i = optind, n = 0; words && i < argc &&
		     strcmp(argv[i], "--"); i++)
			words[n++] = argv[i];
		if (words) {
			memcpy(words + n, carry, moved * sizeof(*carry));
			memcpy(words + n + moved, argv + i,
			       (argc - i) * sizeof(*argv));
			argc = argc - optind + moved;
			argv = words;
		}
	} else if (!err) {
		argc -= optind;
		argv += optind;
	}
	jsonw_pretty(json_wtr, pretty);
	if (!err) {
		libbpf_set_print(libbpf_print);
		err = cmd_select(cmds, "", argc, argv);
	}
	/* A command that ends its own JSON lines (trace) took the writer. */
	if (json_wtr && json_output && err <= 0)
		jsonw_destroy(&json_wtr);
	free(json_wtr);
	free(words);
	free(carry);
	return err < 0 ? 1 : 0;
}
