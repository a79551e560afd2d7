// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * apply.c - "apply [FILE] [--dry-run]" and "dump": the whole policy of a
 * netns from and to ksmbd-sched.conf(5)
 *
 * apply reads and checks the whole file first; nothing changes on an
 * error.  It then loads a fresh instance of the built-in program with
 * fresh maps, fills them, sets max_inflight, and switches to it in one
 * step: a BPF_LINK_UPDATE of the pinned link (or the first attach when
 * nothing is loaded).  Every connection and request is classified by
 * the old program with the old maps or by the new one with the new maps,
 * never by a mix.  The new maps are pinned as NAME_new (bpffs refuses
 * dots in names) before the switch and renamed over the old pins after
 * it, under the lock every smb-classify command takes, so no "prefix
 * add" lands in a map that is about to be replaced.  A run killed
 * between the switch and the rename leaves NAME_new pins: the next
 * command that takes the lock keeps those the attached program uses and
 * removes the others (pins_recover()), so the pins always name the maps
 * in force.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "main.h"

/* The policy in force in the netns: pinned maps and the attached ops. */
static int running_conf(struct ns_ctx *ns, struct ns_state *g)
{
	int err = ns_gather(ns, g, false);

	ns_unlock(ns);	/* ops_attach() takes it again */
	return err;
}

/* The @n users or shares @e into the fresh map @map of the object. */
static int fill_names(struct bpf_object *obj, const char *map,
		      const struct conf_name *e, unsigned int n)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, map);
	unsigned int i;
	int err = 0;

	if (n && !m)
		return p_err("the built-in object has no %s map", map);
	for (i = 0; !err && i < n; i++)
		err = bpf_map_update_elem(bpf_map__fd(m), &e[i].key,
					  &e[i].word, BPF_NOEXIST);
	return err;
}

/* attach_req.fill: the parsed entries into the fresh maps. */
static int fill_maps(struct bpf_object *obj, void *ctx)
{
	const struct conf *c = ctx;
	struct bpf_map *pm, *qm, *rm;
	unsigned int i;
	int err = 0;

	pm = bpf_object__find_map_by_name(obj, SMB_PREFIXES_MAP_NAME);
	qm = bpf_object__find_map_by_name(obj, SMB_POLICY_MAP_NAME);
	rm = bpf_object__find_map_by_name(obj, SMB_QOS_MAP_NAME);
	if (c->nqos && !rm)
		return p_err("the built-in object has no %s map",
			     SMB_QOS_MAP_NAME);
	for (i = 0; !err && i < c->nprefixes; i++)
		err = bpf_map_update_elem(bpf_map__fd(pm), &c->prefixes[i].key,
					  &c->prefixes[i].word, BPF_NOEXIST);
	for (i = 0; !err && i < c->npolicies; i++)
		err = bpf_map_update_elem(bpf_map__fd(qm), &c->policies[i].id,
					  &c->policies[i].p, BPF_NOEXIST);
	if (!err)
		err = fill_names(obj, SMB_USERS_MAP_NAME, c->users, c->nusers);
	if (!err)
		err = fill_names(obj, SMB_SHARES_MAP_NAME, c->shares,
				 c->nshares);
	for (i = 0; !err && i < c->nqos; i++)
		err = bpf_map_update_elem(bpf_map__fd(rm), &c->qos[i].id,
					  &c->qos[i].q, BPF_NOEXIST);
	if (err)
		p_err("cannot fill the new maps: %s%s", strerror(-err),
		      err == -ENOSPC ? " (a map is full)" : "");
	return err;
}

/* The changes as text lines, or as {"changes": N, "diff": [...]}. */
static void print_diff(const struct conf *old, const struct conf *new,
		       const char *verb, const char *file,
		       const struct ns_ctx *ns)
{
	char *buf = NULL, *line, *save = NULL, *text;
	size_t len = 0;
	unsigned int n;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	n = conf_diff(f, old, new);
	fclose(f);
	if (json_output) {
		json_result(verb);
		json_text_field(json_wtr, "file", file);
		jsonw_uint_field(json_wtr, "netns_ino", ns->ino);
		jsonw_uint_field(json_wtr, "changes", n);
		jsonw_name(json_wtr, "diff");
		jsonw_start_array(json_wtr);
		/* A user or share name is any bytes: valid UTF-8 here. */
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			text = strdup(line);
			if (text)
				text_sanitize(text);
			jsonw_string(json_wtr, text ? text : "");
			free(text);
		}
		jsonw_end_array(json_wtr);
		jsonw_end_object(json_wtr);
	} else {
		fputs(buf, stdout);
		printf("%s %s in netns %lu (%s): %u change%s\n", verb, file,
		       ns->ino, ns->label, n, n == 1 ? "" : "s");
	}
	free(buf);
}

/**
 * do_apply() - "apply [FILE] [--dry-run]": set the whole policy
 * @argc: number of @argv.
 * @argv: [FILE] (default CONF_DEFAULT), --dry-run, the global options.
 *
 * Return: 0 or a negative errno, reported.
 */
int do_apply(int argc, char **argv)
{
	struct ns_state old = { 0 };
	struct conf new = { 0 };
	char msg[CONF_ERRLEN], note[160] = "";
	struct attach_req req = {
		.label = "(built-in)", .mode = ATTACH_ANY, .has_max = true,
		.fill = fill_maps, .ctx = &new, .note = note,
		.notelen = sizeof(note),
	};
	struct cmd_opt opts[] = { { "dry-run", 0, false } };
	struct ns_ctx ns;
	const char *file;
	FILE *f;
	int err;

	err = cmd_options("apply", &argc, &argv, opts, ARRAY_SIZE(opts));
	if (err)
		return err < 0 ? err : 0;
	if (argc > 1)
		return no_args("apply FILE", argc - 1, argv + 1);
	file = argc ? argv[0] : CONF_DEFAULT;
	f = fopen(file, "re");
	if (!f)
		return p_errno(-errno, "cannot read %s", file);
	err = conf_parse(f, file, &new, msg, sizeof(msg));
	fclose(f);
	if (err) {
		p_err("%s", msg);
		return err;
	}
	new.has_max_inflight = true;	/* absent: 0, the kernel default */
	req.max_inflight = new.max_inflight;
	err = ns_resolve(&ns, true);
	if (!err)
		err = running_conf(&ns, &old);
	if (err)
		goto out;
	if (opts[0].value) {
		print_diff(&old.c, &new, "would apply", file, &ns);
		goto out;
	}
	req.obj = object_open(NULL);
	err = req.obj ? ops_attach(&ns, &req) : -EINVAL;
	bpf_object__close(req.obj);
	if (!err) {
		if (note[0])
			fprintf(stderr, "note: %s\n", note);
		print_diff(&old.c, &new, "applied", file, &ns);
	}
out:
	ns_state_free(&old);
	conf_free(&new);
	return err;
}

/**
 * do_dump() - "dump": the policy in force as ksmbd-sched.conf text
 * @argc: must be 0.
 * @argv: unused.
 *
 * With -j: {"config": TEXT}, TEXT made valid UTF-8 (a user or share
 * name is any bytes).  "apply" takes the text back unchanged.
 *
 * Return: 0 or a negative errno, reported.
 */
int do_dump(int argc, char **argv)
{
	struct ns_state g = { 0 };
	char *buf = NULL;
	size_t len = 0;
	struct ns_ctx ns;
	FILE *f;
	int err;

	err = ns_cmd("dump", argc, argv, &ns, true);
	if (!err)
		err = running_conf(&ns, &g);
	if (!err && !json_output) {
		conf_write(stdout, &g.c);
	} else if (!err && (f = open_memstream(&buf, &len))) {
		conf_write(f, &g.c);
		fclose(f);
		jsonw_start_object(json_wtr);
		json_text_field(json_wtr, "config", buf);
		jsonw_end_object(json_wtr);
		free(buf);
	}
	ns_state_free(&g);
	return err;
}
