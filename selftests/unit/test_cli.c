// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * test_cli.c - argument errors of the smb-classify binary
 *
 * Runs the built tool with bad arguments.  No kernel support is needed:
 * every one of these must fail while parsing, before any bpf(2), setns(2)
 * or bpffs access (the runs with "-n /nonexistent" show that the argument
 * error comes before the netns is even looked at), so they change nothing
 * on the host.  Each must exit non-zero with exactly one line
 * "Error: ..." on stderr and nothing on stdout; with -j, one JSON object
 * {"error":"..."} on stdout and nothing on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#ifndef SMB_CLASSIFY_BIN
#define SMB_CLASSIFY_BIN "../../tools/smb-classify/smb-classify"
#endif

#define MAX_ARGS	16
#define OUT_MAX		65536

struct run {
	int status;		/* exit status, or -1 if killed */
	char out[OUT_MAX];
	char err[OUT_MAX];
};

static const char *bin;

/* Read both pipes to EOF without deadlock. */
static void drain(int ofd, int efd, struct run *r)
{
	size_t olen = 0, elen = 0;
	struct pollfd p[2] = {
		{ .fd = ofd, .events = POLLIN },
		{ .fd = efd, .events = POLLIN },
	};

	while (p[0].fd >= 0 || p[1].fd >= 0) {
		int i;

		if (poll(p, 2, 10000) <= 0)
			fail_msg("smb-classify hangs");
		for (i = 0; i < 2; i++) {
			char *buf = i ? r->err : r->out;
			size_t *len = i ? &elen : &olen;
			ssize_t n;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			n = read(p[i].fd, buf + *len, OUT_MAX - 1 - *len);
			if (n <= 0) {
				close(p[i].fd);
				p[i].fd = -1;
				continue;
			}
			*len += n;
		}
	}
	r->out[olen] = '\0';
	r->err[elen] = '\0';
}

static void run(struct run *r, char *const args[])
{
	char *argv[MAX_ARGS + 2];
	int out[2], err[2], st, i;
	pid_t pid;

	argv[0] = (char *)bin;
	for (i = 0; args[i]; i++) {
		assert_true(i < MAX_ARGS);
		argv[i + 1] = args[i];
	}
	argv[i + 1] = NULL;

	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	assert_int_equal(pipe2(err, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		execv(bin, argv);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	drain(out[0], err[0], r);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void describe(char *buf, size_t len, char *const args[])
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; args[i] && off < len; i++)
		off += snprintf(buf + off, len - off, "'%s' ", args[i]);
}

/* Text mode: non-zero, one "Error:" line on stderr, stdout empty. */
static void expect_error(char *const args[])
{
	struct run *r = calloc(1, sizeof(*r));
	char what[512];

	assert_non_null(r);
	describe(what, sizeof(what), args);
	run(r, args);
	if (r->status == 0 || r->status == 127 || r->status < 0)
		fail_msg("%s: exit status %d", what, r->status);
	if (strncmp(r->err, "Error: ", 7) || count_lines(r->err) != 1 ||
	    r->err[strlen(r->err) - 1] != '\n')
		fail_msg("%s: stderr is not one Error line: [%s]", what,
			 r->err);
	if (r->out[0])
		fail_msg("%s: stdout not empty: [%s]", what, r->out);
	free(r);
}

/* -j: non-zero, {"error":"..."} on stdout, stderr empty. */
static void expect_json_error(char *const args[])
{
	struct run *r = calloc(1, sizeof(*r));
	char *jargs[MAX_ARGS + 1], what[512];
	size_t n;
	int i;

	assert_non_null(r);
	jargs[0] = "-j";
	for (i = 0; args[i]; i++) {
		assert_true(i + 1 < MAX_ARGS);
		jargs[i + 1] = args[i];
	}
	jargs[i + 1] = NULL;
	describe(what, sizeof(what), jargs);
	run(r, jargs);
	if (r->status == 0 || r->status == 127 || r->status < 0)
		fail_msg("%s: exit status %d", what, r->status);
	n = strlen(r->out);
	if (strncmp(r->out, "{\"error\":\"", 10) || n < 13 ||
	    strcmp(r->out + n - 3, "\"}\n") || count_lines(r->out) != 1)
		fail_msg("%s: stdout is not a JSON error: [%s]", what, r->out);
	if (r->err[0])
		fail_msg("%s: stderr not empty: [%s]", what, r->err);
	free(r);
}

#define A(...) ((char *[]){ __VA_ARGS__, NULL })

static const char *const bad_cidrs[] = {
	"1.2.3.4/33", "::/129", "1.2.3.4/", "1.2.3.4/-1", "1.2.3.4/ 24",
	" 1.2.3.4/24", "1.2.3.4/24x", "1.2.3.4/4294967328", "",
	"010.0.0.1/32", "127.1/32", "0x7f.0.0.1/32", "10.1.2.3/8",
	"1.2.3.4", "1.2.3.4/32\n", "fe80::1%lo/64",
};

static void test_bad_cidr(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad_cidrs); i++) {
		char *c = (char *)bad_cidrs[i];

		expect_error(A("prefix", "add", c, "1"));
		expect_json_error(A("prefix", "add", c, "1"));
		expect_error(A("-n", "/nonexistent/netns", "prefix", "add",
			       c, "1"));
		expect_error(A("prefix", "del", c));
		expect_json_error(A("prefix", "del", c));
	}
}

static void test_bad_class(void **state)
{
	(void)state;
	expect_error(A("prefix", "add", "10.0.0.0/8"));
	expect_error(A("prefix", "add", "10.0.0.0/8", "65536"));
	expect_error(A("prefix", "add", "10.0.0.0/8", "-1"));
	expect_error(A("prefix", "add", "10.0.0.0/8", "+1"));
	expect_error(A("prefix", "add", "10.0.0.0/8", "1x"));
	expect_error(A("prefix", "add", "10.0.0.0/8", "1", "weight"));
	expect_error(A("prefix", "add", "10.0.0.0/8", "1", "weight", "0"));
	expect_error(A("prefix", "add", "10.0.0.0/8", "1", "weight", "256"));
	expect_error(A("prefix", "add", "10.0.0.0/8", "1", "bogus"));
	expect_error(A("-n", "/nonexistent/netns", "prefix", "add",
		       "10.0.0.0/8", "1", "weight", "256"));
	expect_json_error(A("prefix", "add", "10.0.0.0/8", "65536"));
	expect_json_error(A("prefix", "add", "10.0.0.0/8", "1", "per-peer",
			    "per-peer"));
	expect_error(A("prefix", "add", "fd00::/8", "1", "prefix6", "64"));
	expect_error(A("prefix", "add", "fd00::/8", "1", "per-peer",
		       "prefix6"));
	expect_error(A("prefix", "add", "fd00::/8", "1", "per-peer",
		       "prefix6", "62"));
	expect_error(A("prefix", "add", "fd00::/8", "1", "per-peer",
		       "prefix6", "0"));
	expect_error(A("prefix", "add", "fd00::/8", "1", "per-peer",
		       "prefix6", "132"));
	expect_error(A("-n", "/nonexistent/netns", "prefix", "add",
		       "fd00::/8", "1", "per-peer", "prefix6", "130"));
	expect_json_error(A("prefix", "add", "fd00::/8", "1", "per-peer",
			    "prefix6", "7"));
}

static void test_bad_usage(void **state)
{
	(void)state;
	expect_error(A("bogus"));
	expect_error(A(""));
	expect_error(A("-x", "status"));
	expect_error(A("--bogus", "status"));
	expect_error(A("status", "-n"));
	expect_error(A("prefix"));
	expect_error(A("prefix", "bogus"));
	expect_error(A("prefix", "add"));
	expect_error(A("prefix", "del"));
	expect_error(A("prefix", "del", "10.0.0.0/8", "extra"));
	expect_error(A("prefix", "list", "extra"));
	expect_error(A("load", "a.o", "b.o"));
	expect_error(A("load", "/nonexistent/obj.bpf.o"));
	expect_error(A("replace", "/nonexistent/obj.bpf.o"));
	expect_error(A("unload", "extra"));
	expect_error(A("status", "extra"));
	expect_error(A("-n", "", "status"));
	expect_error(A("-n", "..", "status"));
	expect_json_error(A("bogus"));
	expect_json_error(A("load", "/nonexistent/obj.bpf.o"));
	expect_json_error(A("-x", "status"));
}

/* Bad values of the new words: rejected before anything is looked at. */
static void test_bad_policy(void **state)
{
	static const char *const bad_bytes[] = {
		"", "-1", "01", "17M", "16777217", "1G", "64KB", "OFF", "x",
		"1.5M", " 1",
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad_bytes); i++) {
		char *b = (char *)bad_bytes[i];

		expect_error(A("policy", "set", "1", "splice-min", b));
		expect_error(A("policy", "set", "1", "unbound-min", b));
		expect_json_error(A("policy", "set", "1", "s", b));
		expect_error(A("-n", "/nonexistent/netns", "policy", "set",
			       "1", "splice-min", "64K", "unbound-min", b));
	}
	expect_error(A("policy"));
	expect_error(A("policy", "bogus"));
	expect_error(A("policy", "set"));
	expect_error(A("policy", "set", "1"));
	expect_error(A("policy", "set", "65536", "splice-min", "1"));
	expect_error(A("policy", "set", "-1", "splice-min", "1"));
	expect_error(A("policy", "set", "1", "splice-min"));
	expect_error(A("policy", "set", "1", "splice-min", "1", "s", "2"));
	expect_error(A("policy", "set", "1", "bogus", "1"));
	expect_error(A("policy", "del"));
	expect_error(A("policy", "del", "65536"));
	expect_error(A("policy", "del", "1", "2"));
	expect_error(A("policy", "show", "extra"));
	expect_json_error(A("policy", "set", "1"));
	expect_json_error(A("policy", "del", "x"));
}

/* Bad user and share names and words: refused before the netns. */
static void test_bad_names(void **state)
{
	static const char *const bad_users[] = {
		"", "EXAMPLE\\alice", "alice@EXAMPLE.COM", "\\alice", "alice@",
		"al ice", " alice", "al\tice", "alice\n", "a\x7f", "a\"b", "a/b",
		"a[b", "a]b", "a:b", "a;b", "a|b", "a=b", "a,b", "a+b", "a*b",
		"a?b", "a<b", "a>b",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	static const char *const bad_shares[] = {
		"", "a\tb", "a\x7f", "a\"b", "a/b", "a\\b", "a[b", "a]b", "a:b",
		"a|b", "a<b", "a>b", "a+b", "a=b", "a;b", "a,b", "a*b", "a?b",
		"ssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssssss",
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad_users); i++) {
		char *u = (char *)bad_users[i];

		expect_error(A("user", "add", u, "1"));
		expect_json_error(A("user", "add", u, "1"));
		expect_error(A("-n", "/nonexistent/netns", "user", "add", u,
			       "1"));
		expect_error(A("user", "del", u));
		expect_json_error(A("user", "del", u));
	}
	for (i = 0; i < ARRAY_SIZE(bad_shares); i++) {
		char *s = (char *)bad_shares[i];

		expect_error(A("share", "add", s, "1"));
		expect_json_error(A("share", "add", s, "1"));
		expect_error(A("-n", "/nonexistent/netns", "share", "add", s,
			       "1"));
		expect_error(A("share", "del", s));
	}
	expect_error(A("user"));
	expect_error(A("user", "bogus"));
	expect_error(A("user", "add"));
	expect_error(A("user", "add", "alice"));
	expect_error(A("user", "add", "alice", "65536"));
	expect_error(A("user", "add", "alice", "1", "weight", "0"));
	expect_error(A("user", "add", "alice", "1", "prefix6", "64"));
	expect_error(A("user", "add", "alice", "1", "bogus"));
	expect_error(A("user", "del"));
	expect_error(A("user", "del", "alice", "bob"));
	expect_error(A("user", "list", "extra"));
	expect_error(A("user", "show", "extra"));
	expect_error(A("share"));
	expect_error(A("share", "add", "backup"));
	expect_error(A("share", "add", "backup", "1", "weight", "256"));
	expect_error(A("-n", "/nonexistent/netns", "share", "add", "backup",
		       "1", "per-peer", "prefix6", "62"));
	expect_error(A("share", "del"));
	expect_error(A("share", "list", "extra"));
	expect_json_error(A("user", "add", "alice"));
	expect_json_error(A("share", "list", "extra"));
}

/* Bad reservations and limits: refused before the netns is looked at. */
static void test_bad_qos(void **state)
{
	static const char *const bad_iops[] = {
		"", "0", "-1", "+1", "01", "1K", "10000001", "4294967296",
		"0x10", " 1", "1 ",
	};
	static const char *const bad_bytes[] = {
		"", "0", "0K", "-1", "01", "1025G", "1048577M",
		"1099511627777", "1T", "20MB", "20MiB", "1.5G", "x",
	};
	static const char *const bad_burst[] = {
		"", "0", "10001", "-1", "1s", "100ms",
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad_iops); i++) {
		char *v = (char *)bad_iops[i];

		expect_error(A("class", "set", "1", "reservation-iops", v));
		expect_error(A("class", "set", "1", "limit-iops", v));
		expect_json_error(A("class", "set", "1", "limit-i", v));
		expect_error(A("-n", "/nonexistent/netns", "class", "set", "1",
			       "limit-bytes", "1M", "reservation-iops", v));
	}
	for (i = 0; i < ARRAY_SIZE(bad_bytes); i++) {
		char *v = (char *)bad_bytes[i];

		expect_error(A("class", "set", "1", "reservation-bytes", v));
		expect_error(A("class", "set", "1", "limit-bytes", v));
		expect_json_error(A("class", "set", "1", "limit-b", v));
		expect_error(A("-n", "/nonexistent/netns", "class", "set", "1",
			       "limit-iops", "1", "limit-bytes", v));
	}
	for (i = 0; i < ARRAY_SIZE(bad_burst); i++) {
		char *v = (char *)bad_burst[i];

		expect_error(A("class", "set", "1", "limit-iops", "1", "burst",
			       v));
		expect_json_error(A("class", "set", "1", "limit-iops", "1",
				    "burst", v));
	}
	expect_error(A("class"));
	expect_error(A("class", "bogus"));
	expect_error(A("class", "set"));
	expect_error(A("class", "set", "1"));
	expect_error(A("class", "set", "65536", "limit-iops", "1"));
	expect_error(A("class", "set", "x", "limit-iops", "1"));
	expect_error(A("class", "set", "1", "burst", "100"));
	expect_error(A("class", "set", "1", "scope", "aggregated"));
	expect_error(A("class", "set", "1", "limit-iops", "1", "scope",
		       "all"));
	expect_error(A("class", "set", "1", "res", "1"));
	expect_error(A("class", "set", "1", "l", "1"));
	expect_error(A("class", "set", "1", "bogus", "1"));
	expect_error(A("class", "set", "1", "limit-iops"));
	expect_error(A("class", "set", "1", "limit-iops", "1", "limit-iops",
		       "2"));
	expect_error(A("class", "set", "1", "reservation-iops", "200",
		       "limit-iops", "100"));
	expect_error(A("class", "set", "1", "reservation-bytes", "2M",
		       "limit-bytes", "1M"));
	expect_error(A("-n", "/nonexistent/netns", "class", "set", "1",
		       "reservation-iops", "200", "limit-iops", "100"));
	expect_error(A("class", "del"));
	expect_error(A("class", "del", "65536"));
	expect_error(A("class", "del", "1", "2"));
	expect_error(A("class", "list", "extra"));
	expect_error(A("class", "show", "extra"));
	expect_json_error(A("class", "set", "1"));
	expect_json_error(A("class", "set", "1", "reservation-iops", "2",
			    "limit-iops", "1"));
	expect_json_error(A("class", "del", "x"));
	expect_json_error(A("class", "list", "extra"));
}

static void test_bad_load_trace(void **state)
{
	static const char *const bad_n[] = {
		"", "-1", "+1", "01", "4097", "1x", "0x10", "99999999999",
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(bad_n); i++) {
		char *n = (char *)bad_n[i];

		expect_error(A("load", "max-inflight", n));
		expect_error(A("replace", "max-inflight", n));
		expect_error(A("load", "/nonexistent/obj.bpf.o",
			       "max-inflight", n));
		expect_json_error(A("load", "max", n));
		expect_error(A("-n", "/nonexistent/netns", "load",
			       "max-inflight", n));
	}
	expect_error(A("load", "max-inflight"));
	expect_error(A("load", "max-inflight", "1", "max-inflight", "2"));
	expect_error(A("load", "max-inflight", "1", "a.o", "b.o"));
	expect_error(A("trace", "extra"));
	expect_error(A("-c", "0", "trace"));
	expect_error(A("-c", "x", "trace"));
	expect_error(A("-c", "4294967296", "trace"));
	expect_error(A("trace", "-c"));
	expect_error(A("trace", "filter"));
	expect_error(A("trace", "filter", "waited == 1", "filter", "x"));
	expect_error(A("-c", "5", "status"));
	expect_json_error(A("-c", "0", "trace"));
	/* Each command parses its own options: another's is unknown. */
	expect_error(A("trace", "-c", "0"));
	expect_error(A("trace", "--count=x"));
	expect_error(A("status", "-c", "5"));
	expect_error(A("trace", "-o", "kernel"));
	expect_error(A("-o", "kernel", "trace"));
	expect_error(A("--dry-run", "status"));
	expect_error(A("status", "--dry-run"));
	expect_error(A("prefix", "list", "-o", "json"));
	expect_error(A("apply", "--dry-run", "--dry-run", "/nonexistent"));
	expect_error(A("status", "-o", "json", "--output", "text"));
	expect_json_error(A("status", "-c", "5"));
	expect_json_error(A("-o", "bogus", "status"));
	expect_json_error(A("status", "-o", "bogus"));
}

static void test_help_version(void **state)
{
	struct run *r = calloc(1, sizeof(*r));

	(void)state;
	assert_non_null(r);
	run(r, A("--help"));
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "Usage: smb-classify"));
	assert_non_null(strstr(r->out, "prefix add CIDR CLASS"));
	assert_non_null(strstr(r->out, "policy set CLASS [splice-min N|off] [unbound-min N|off]"));
	assert_non_null(strstr(r->out, "load [OBJ] [max-inflight N]"));
	assert_non_null(strstr(r->out, "user add NAME CLASS [weight W] [per-peer [prefix6 LEN]]"));
	assert_non_null(strstr(r->out, "share del NAME"));
	assert_non_null(strstr(r->out, "trace [-c COUNT] [EVENT...] [filter EXPR]"));
	/* The global options of smb-classify(8)'s synopsis, all of them. */
	assert_non_null(strstr(r->out, "-n|--netns NETNS"));
	assert_non_null(strstr(r->out, "-V|--version | -h|--help }"));
	/* The options of one command are in that command's line only. */
	assert_null(strstr(r->out, "--count"));
	assert_non_null(strstr(r->out, "status [-o text|json|openmetrics|kernel]"));
	assert_non_null(strstr(r->out, "apply [FILE] [--dry-run]"));
	assert_string_equal(r->err, "");
	run(r, A("-V"));
	assert_int_equal(r->status, 0);
	assert_true(!strncmp(r->out, "smb-classify v", 14));
	run(r, A("help"));
	assert_int_equal(r->status, 0);
	run(r, A("status", "-h"));
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "Usage: smb-classify"));
	run(r, A("trace", "--version"));
	assert_int_equal(r->status, 0);
	assert_true(!strncmp(r->out, "smb-classify v", 14));
	run(r, A("prefix", "help"));
	assert_int_equal(r->status, 0);
	run(r, A("policy", "help"));
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "policy set CLASS"));
	run(r, A("user", "help"));
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "user list"));
	run(r, A("share", "help"));
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "share add NAME CLASS"));
	run(r, A("class", "help"));
	assert_int_equal(r->status, 0);
	assert_non_null(strstr(r->out, "class set CLASS [reservation-iops N] [reservation-bytes SIZE]"));
	assert_non_null(strstr(r->out, "[scope dedicated|aggregated]"));
	assert_non_null(strstr(r->out, "class del CLASS"));
	assert_non_null(strstr(r->out, "class list"));
	assert_null(strstr(r->out, "prefix add"));
	free(r);
}

static int setup(void **state)
{
	(void)state;
	bin = getenv("SMB_CLASSIFY") ? getenv("SMB_CLASSIFY") :
	      SMB_CLASSIFY_BIN;
	if (access(bin, X_OK)) {
		fprintf(stderr, "%s: %s (build tools/smb-classify first)\n",
			bin, strerror(errno));
		return -1;
	}
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_cidr),
		cmocka_unit_test(test_bad_class),
		cmocka_unit_test(test_bad_usage),
		cmocka_unit_test(test_bad_policy),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_bad_qos),
		cmocka_unit_test(test_bad_load_trace),
		cmocka_unit_test(test_help_version),
	};

	return cmocka_run_group_tests_name("cli", tests, setup, NULL);
}
