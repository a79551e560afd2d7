// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * policy.c - "policy set|del|show" of smb-classify
 *
 * The policy map (pinned as "policy" beside "prefixes") gives each class
 * id two thresholds in bytes, read by classify_req() of the reference
 * program: READs of at least splice-min may be sent spliced, READs and
 * WRITEs of at least unbound-min run on the unbound workqueue.  A class
 * without an entry uses the defaults of smb_classify.h.  As for prefixes,
 * every argument is checked before anything is written.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "classword.h"
#include "main.h"
#include "policyspec.h"
#include "smb_classify.h"

static const struct smb_policy policy_defaults = {
	.splice_min = SMB_POLICY_SPLICE_MIN_DEFAULT,
	.unbound_min = SMB_POLICY_UNBOUND_MIN_DEFAULT,
};

static void json_threshold(uint32_t v)
{
	if (v == SMB_POLICY_OFF)
		json_null(jw);
	else
		json_uint(jw, v);
}

static void json_policy(const struct smb_policy *p)
{
	json_key(jw, "splice_min");
	json_threshold(p->splice_min);
	json_key(jw, "unbound_min");
	json_threshold(p->unbound_min);
}

static int policy_set(int argc, char **argv)
{
	char msg[POLICYSPEC_ERRLEN], sp[POLICY_BYTES_STRLEN],
	     ub[POLICY_BYTES_STRLEN];
	struct smb_policy p = policy_defaults;
	struct policy_args pa;
	int map_fd = -1, err;
	bool exists;
	__u32 key;
	struct ns_ctx ns;

	if (policy_args_parse(argc, argv, &pa, msg, sizeof(msg))) {
		p_err("policy set: %s", msg);
		return -EINVAL;
	}
	key = pa.id;

	err = ns_resolve(&ns, true);
	if (err)
		return err;
	err = ns_lock(&ns, true);
	if (err)
		return err;
	err = policy_open(&ns, true, &map_fd);
	if (err)
		goto out;
	err = ns_record_name(&ns);
	if (err)
		goto out;
	err = bpf_map_lookup_elem(map_fd, &key, &p);
	exists = !err;
	if (err && err != -ENOENT) {
		p_err("cannot read the policy of class %u: %s", pa.id,
		      strerror(-err));
		goto out;
	}
	policy_apply(&pa, &p);
	err = bpf_map_update_elem(map_fd, &key, &p, BPF_ANY);
	if (err) {
		p_err("cannot set the policy of class %u: %s", pa.id,
		      strerror(-err));
		goto out;
	}
	if (json_output) {
		json_start_object(jw);
		json_key(jw, "result");
		json_string(jw, exists ? "updated" : "added");
		json_key(jw, "class");
		json_uint(jw, pa.id);
		json_policy(&p);
		json_end_object(jw);
		json_finish(jw);
	} else {
		format_policy_bytes(p.splice_min, sp, sizeof(sp));
		format_policy_bytes(p.unbound_min, ub, sizeof(ub));
		printf("%s class %u: splice-min %s unbound-min %s\n",
		       exists ? "updated" : "added", pa.id, sp, ub);
	}
out:
	if (map_fd >= 0)
		close(map_fd);
	ns_unlock(&ns);
	return err;
}

static int policy_del(int argc, char **argv)
{
	unsigned long id;
	int map_fd = -1, err;
	struct ns_ctx ns;
	__u32 key;

	if (argc < 1) {
		p_err("policy del: missing CLASS");
		return -EINVAL;
	}
	if (argc > 1) {
		p_err("policy del: unexpected argument '%s'", argv[1]);
		return -EINVAL;
	}
	err = parse_uint(argv[0], CLASS_ID_MAX, &id);
	if (err) {
		p_err("policy del: class '%.40s': %s", argv[0],
		      err == -ERANGE ? "above 65535" :
		      "must be a decimal 0-65535");
		return -EINVAL;
	}
	key = id;

	err = ns_resolve(&ns, true);
	if (err)
		return err;
	err = ns_lock(&ns, false);
	if (!err)
		err = policy_open(&ns, false, &map_fd);
	if (err && err != -ENOENT)
		goto out;
	err = map_fd < 0 ? -ENOENT : bpf_map_delete_elem(map_fd, &key);
	if (err == -ENOENT) {
		p_err("class %u has no policy in netns %lu", key, ns.ino);
		goto out;
	}
	if (err) {
		p_err("cannot delete the policy of class %u: %s", key,
		      strerror(-err));
		goto out;
	}
	if (json_output) {
		json_start_object(jw);
		json_key(jw, "result");
		json_string(jw, "deleted");
		json_key(jw, "class");
		json_uint(jw, key);
		json_end_object(jw);
		json_finish(jw);
	} else {
		printf("deleted the policy of class %u (it uses the defaults now)\n",
		       key);
	}
out:
	if (map_fd >= 0)
		close(map_fd);
	ns_unlock(&ns);
	return err;
}

struct policy_entry {
	__u32 id;
	struct smb_policy p;
};

static int entry_cmp(const void *a, const void *b)
{
	__u32 x = ((const struct policy_entry *)a)->id;
	__u32 y = ((const struct policy_entry *)b)->id;

	return x < y ? -1 : x > y;
}

/* Read all entries of the map, sorted. */
static int read_entries(int map_fd, struct policy_entry **out,
			unsigned int *count)
{
	return map_read_entries(map_fd, "policy", sizeof(**out),
				sizeof((*out)->id),
				offsetof(struct policy_entry, p), entry_cmp,
				(void **)out, count);
}

static void show_row(const char *cls, const struct smb_policy *p,
		     const char *note)
{
	char sp[POLICY_BYTES_STRLEN], ub[POLICY_BYTES_STRLEN];

	format_policy_bytes(p->splice_min, sp, sizeof(sp));
	format_policy_bytes(p->unbound_min, ub, sizeof(ub));
	printf("%-7s  %10s  %11s%s\n", cls, sp, ub, note);
}

static int policy_show(int argc, char **argv)
{
	struct policy_entry *e = NULL;
	unsigned int n = 0, i;
	int map_fd = -1, err;
	char cls[16];
	struct ns_ctx ns;

	if (argc) {
		p_err("policy show: unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	err = ns_resolve(&ns, true);
	if (err)
		return err;
	err = ns_lock(&ns, false);
	if (!err)
		err = policy_open(&ns, false, &map_fd);
	if (err == -ENOENT)
		err = 0;
	if (!err && map_fd >= 0)
		err = read_entries(map_fd, &e, &n);
	if (err)
		goto out;

	if (json_output) {
		json_start_object(jw);
		json_key(jw, "netns_ino");
		json_uint(jw, ns.ino);
		json_key(jw, "pinned");
		json_bool(jw, map_fd >= 0);
		json_key(jw, "default");
		json_start_object(jw);
		json_policy(&policy_defaults);
		json_end_object(jw);
		json_key(jw, "classes");
		json_start_array(jw);
		for (i = 0; i < n; i++) {
			json_start_object(jw);
			json_key(jw, "class");
			json_uint(jw, e[i].id);
			json_policy(&e[i].p);
			json_end_object(jw);
		}
		json_end_array(jw);
		json_end_object(jw);
		json_finish(jw);
		goto out;
	}
	printf("%-7s  %10s  %11s\n", "CLASS", "SPLICE-MIN", "UNBOUND-MIN");
	for (i = 0; i < n; i++) {
		snprintf(cls, sizeof(cls), "%u", e[i].id);
		show_row(cls, &e[i].p, "");
	}
	show_row("default", &policy_defaults,
		 n ? "  (every other class)" : "  (every class)");
out:
	free(e);
	if (map_fd >= 0)
		close(map_fd);
	ns_unlock(&ns);
	return err;
}

static void policy_usage(void)
{
	printf("Usage: smb-classify [-n NETNS] policy set CLASS [splice-min N|off] [unbound-min N|off]\n"
	       "       smb-classify [-n NETNS] policy del CLASS\n"
	       "       smb-classify [-n NETNS] policy show\n"
	       "N: bytes 0-16777216, decimal, optionally with K (KiB) or M (MiB): 65536, 64K, 1M.\n"
	       "See smb-classify --help for the meaning.\n");
}

/**
 * do_policy() - "policy set|del|show"
 * @argc: words after "policy".
 * @argv: the words.
 *
 * Return: 0 or a negative errno, reported.
 */
int do_policy(int argc, char **argv)
{
	if (argc < 1) {
		p_err("policy: missing command (set, del, show)");
		return -EINVAL;
	}
	if (word_abbrev(argv[0], "set"))
		return policy_set(argc - 1, argv + 1);
	if (word_abbrev(argv[0], "delete"))
		return policy_del(argc - 1, argv + 1);
	if (word_abbrev(argv[0], "show") || word_abbrev(argv[0], "list"))
		return policy_show(argc - 1, argv + 1);
	if (word_abbrev(argv[0], "help")) {
		policy_usage();
		return 0;
	}
	p_err("policy: unknown command '%s' (set, del, show)", argv[0]);
	return -EINVAL;
}
