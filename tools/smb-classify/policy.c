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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "main.h"
#include "smb_classify.h"

/* The thresholds of a policy; "off" is null. */
static void json_policy(const struct smb_policy *p)
{
	json_uint_or_null(json_wtr, "splice_min",
			  p->splice_min != SMB_POLICY_OFF, p->splice_min);
	json_uint_or_null(json_wtr, "unbound_min",
			  p->unbound_min != SMB_POLICY_OFF, p->unbound_min);
}

/** policy_set() - "policy set ...", see smb-classify(8) */
int policy_set(int argc, char **argv)
{
	char msg[WORDS_ERRLEN], words[48];
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

	err = pinned_create(&ns, SHARED_POLICY, &map_fd);
	if (err)
		goto out;
	err = bpf_map_lookup_elem(map_fd, &key, &p);
	exists = !err;
	if (err && err != -ENOENT) {
		p_errno(err, "cannot read the policy of class %u", pa.id);
		goto out;
	}
	policy_apply(&pa, &p);
	err = bpf_map_update_elem(map_fd, &key, &p, BPF_ANY);
	if (err) {
		p_errno(err, "cannot set the policy of class %u", pa.id);
		goto out;
	}
	if (json_output) {
		json_result(exists ? "updated" : "added");
		jsonw_uint_field(json_wtr, "class", pa.id);
		json_policy(&p);
		jsonw_end_object(json_wtr);
	} else {
		format_policy_words(&p, words, sizeof(words));
		printf("%s class %u: %s\n", exists ? "updated" : "added",
		       pa.id, words);
	}
out:
	return ns_done(&ns, map_fd, err);
}

/** policy_del() - "policy del ...", see smb-classify(8) */
int policy_del(int argc, char **argv)
{
	char msg[WORDS_ERRLEN], what[40], done[80];
	__u32 key;
	int err;

	err = one_arg("policy del", "CLASS", argc, argv);
	if (err)
		return err;
	if (parse_class_id(argv[0], &key, msg, sizeof(msg))) {
		p_err("policy del: %s", msg);
		return -EINVAL;
	}
	snprintf(what, sizeof(what), "the policy of class %u", key);
	snprintf(done, sizeof(done), "%s (it uses the defaults now)", what);
	return pinned_del(SHARED_POLICY, &key, what, done, "class", NULL, key);
}

static void show_row(const char *cls, const struct smb_policy *p,
		     const char *note)
{
	char sp[POLICY_BYTES_STRLEN], ub[POLICY_BYTES_STRLEN];

	format_policy_bytes(p->splice_min, sp, sizeof(sp));
	format_policy_bytes(p->unbound_min, ub, sizeof(ub));
	printf("%-7s  %10s  %11s%s\n", cls, sp, ub, note);
}

/** policy_show() - "policy show ...", see smb-classify(8) */
int policy_show(int argc, char **argv)
{
	unsigned int n, i, pinned;
	struct conf_policy *e;
	char cls[16];
	struct ns_ctx ns;
	struct conf c;
	int err;

	err = pinned_read("policy show", argc, argv, &ns, &c, &pinned);
	if (err)
		return err;
	e = c.policies;
	n = c.npolicies;

	if (json_output) {
		jsonw_start_object(json_wtr);
		jsonw_uint_field(json_wtr, "netns_ino", ns.ino);
		jsonw_bool_field(json_wtr, "pinned", pinned & 2);
		jsonw_name(json_wtr, "default");
		jsonw_start_object(json_wtr);
		json_policy(&policy_defaults);
		jsonw_end_object(json_wtr);
		jsonw_name(json_wtr, "classes");
		jsonw_start_array(json_wtr);
		for (i = 0; i < n; i++) {
			jsonw_start_object(json_wtr);
			jsonw_uint_field(json_wtr, "class", e[i].id);
			json_policy(&e[i].p);
			jsonw_end_object(json_wtr);
		}
		jsonw_end_array(json_wtr);
		jsonw_end_object(json_wtr);
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
	conf_free(&c);
	return ns_done(&ns, -1, 0);
}
