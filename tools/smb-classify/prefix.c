// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * prefix.c - "prefix add|del|list" of smb-classify
 *
 * Every argument is parsed and checked before the first system call that
 * could change anything, so a bad CIDR or class never leaves a half-made
 * change (nor a bpffs mount or directory) behind.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cidr.h"
#include "classword.h"
#include "main.h"

static int parse_cidr_arg(const char *s, struct smb_prefix_key *key)
{
	char err[CIDR_ERRLEN];

	if (cidr_parse(s, key, err, sizeof(err))) {
		p_err("%s", err);
		return -EINVAL;
	}
	return 0;
}

static int prefix_add(int argc, char **argv)
{
	char err_msg[CLASSWORD_ERRLEN], cidr[CIDR_STRLEN];
	struct smb_prefix_key key;
	struct class_spec spec;
	__u32 word;
	int map_fd = -1, err;
	bool exists;
	struct ns_ctx ns;

	if (argc < 1) {
		p_err("prefix add: missing CIDR and CLASS");
		return -EINVAL;
	}
	err = parse_cidr_arg(argv[0], &key);
	if (err)
		return err;
	if (argc < 2) {
		p_err("prefix add: missing CLASS");
		return -EINVAL;
	}
	if (class_spec_parse(argc - 1, argv + 1, &spec, err_msg,
			     sizeof(err_msg))) {
		p_err("%s", err_msg);
		return -EINVAL;
	}
	word = class_word_encode(&spec);
	cidr_format(&key, cidr, sizeof(cidr));

	err = ns_resolve(&ns, true);
	if (err)
		return err;
	err = ns_lock(&ns, true);
	if (err)
		return err;
	err = prefixes_open(&ns, true, &map_fd);
	if (err)
		goto out;
	err = ns_record_name(&ns);
	if (err)
		goto out;
	/*
	 * A lookup in an LPM trie finds the longest match, not this exact
	 * prefix: tell "added" from "updated" by the update flags instead.
	 */
	exists = false;
	err = bpf_map_update_elem(map_fd, &key, &word, BPF_NOEXIST);
	if (err == -EEXIST) {
		exists = true;
		err = bpf_map_update_elem(map_fd, &key, &word, BPF_EXIST);
	}
	if (err) {
		p_err("cannot add %s: %s%s", cidr, strerror(-err),
		      err == -ENOSPC ? " (the map is full)" : "");
		goto out;
	}
	if (json_output) {
		json_start_object(jw);
		json_key(jw, "result");
		json_string(jw, exists ? "updated" : "added");
		json_key(jw, "prefix");
		json_string(jw, cidr);
		json_key(jw, "class");
		json_uint(jw, spec.id);
		json_key(jw, "weight");
		json_uint(jw, spec.weight);
		json_key(jw, "per_peer");
		json_bool(jw, spec.per_peer);
		json_key(jw, "class_word");
		json_uint(jw, word);
		json_end_object(jw);
		json_finish(jw);
	} else {
		printf("%s %s -> class %u weight %u%s\n",
		       exists ? "updated" : "added", cidr, spec.id,
		       spec.weight, spec.per_peer ? " per-peer" : "");
	}
out:
	if (map_fd >= 0)
		close(map_fd);
	ns_unlock(&ns);
	return err;
}

static int prefix_del(int argc, char **argv)
{
	char cidr[CIDR_STRLEN];
	struct smb_prefix_key key;
	int map_fd = -1, err;
	struct ns_ctx ns;

	if (argc < 1) {
		p_err("prefix del: missing CIDR");
		return -EINVAL;
	}
	if (argc > 1) {
		p_err("prefix del: unexpected argument '%s'", argv[1]);
		return -EINVAL;
	}
	err = parse_cidr_arg(argv[0], &key);
	if (err)
		return err;
	cidr_format(&key, cidr, sizeof(cidr));

	err = ns_resolve(&ns, true);
	if (err)
		return err;
	err = ns_lock(&ns, false);
	if (!err)
		err = prefixes_open(&ns, false, &map_fd);
	if (err && err != -ENOENT)
		goto out;
	err = map_fd < 0 ? -ENOENT : bpf_map_delete_elem(map_fd, &key);
	if (err == -ENOENT) {
		p_err("prefix %s not found in netns %lu", cidr, ns.ino);
		goto out;
	}
	if (err) {
		p_err("cannot delete %s: %s", cidr, strerror(-err));
		goto out;
	}
	if (json_output) {
		json_start_object(jw);
		json_key(jw, "result");
		json_string(jw, "deleted");
		json_key(jw, "prefix");
		json_string(jw, cidr);
		json_end_object(jw);
		json_finish(jw);
	} else {
		printf("deleted %s\n", cidr);
	}
out:
	if (map_fd >= 0)
		close(map_fd);
	ns_unlock(&ns);
	return err;
}

struct prefix_entry {
	struct smb_prefix_key key;
	__u32 word;
};

static int entry_cmp(const void *a, const void *b)
{
	return cidr_cmp(&((const struct prefix_entry *)a)->key,
			&((const struct prefix_entry *)b)->key);
}

/* Read all entries of the map, sorted. */
static int read_entries(int map_fd, struct prefix_entry **out,
			unsigned int *count)
{
	return map_read_entries(map_fd, "prefixes", sizeof(**out),
				sizeof((*out)->key),
				offsetof(struct prefix_entry, word), entry_cmp,
				(void **)out, count);
}

static int prefix_list(int argc, char **argv)
{
	struct prefix_entry *e = NULL;
	unsigned int n = 0, i;
	int map_fd = -1, err, width = 6;
	char cidr[CIDR_STRLEN];
	struct class_spec spec;
	struct ns_ctx ns;

	if (argc) {
		p_err("prefix list: unexpected argument '%s'", argv[0]);
		return -EINVAL;
	}
	err = ns_resolve(&ns, true);
	if (err)
		return err;
	err = ns_lock(&ns, false);
	if (!err)
		err = prefixes_open(&ns, false, &map_fd);
	if (err == -ENOENT)
		err = 0;
	if (!err && map_fd >= 0)
		err = read_entries(map_fd, &e, &n);
	if (err)
		goto out;

	for (i = 0; i < n; i++) {
		cidr_format(&e[i].key, cidr, sizeof(cidr));
		if ((int)strlen(cidr) > width)
			width = strlen(cidr);
	}
	if (json_output)
		json_start_array(jw);
	else if (n)
		printf("%-*s  %5s  %6s  %s\n", width, "PREFIX", "CLASS",
		       "WEIGHT", "PER-PEER");
	else
		printf("no prefixes in netns %lu\n", ns.ino);
	for (i = 0; i < n; i++) {
		cidr_format(&e[i].key, cidr, sizeof(cidr));
		class_word_decode(e[i].word, &spec);
		if (!json_output) {
			printf("%-*s  %5u  %6u  %s\n", width, cidr, spec.id,
			       spec.weight, spec.per_peer ? "yes" : "no");
			continue;
		}
		json_start_object(jw);
		json_key(jw, "prefix");
		json_string(jw, cidr);
		json_key(jw, "class");
		json_uint(jw, spec.id);
		json_key(jw, "weight");
		json_uint(jw, spec.weight);
		json_key(jw, "per_peer");
		json_bool(jw, spec.per_peer);
		json_key(jw, "class_word");
		json_uint(jw, e[i].word);
		json_end_object(jw);
	}
	if (json_output) {
		json_end_array(jw);
		json_finish(jw);
	}
out:
	free(e);
	if (map_fd >= 0)
		close(map_fd);
	ns_unlock(&ns);
	return err;
}

static void prefix_usage(void)
{
	printf("Usage: smb-classify [-n NETNS] prefix add CIDR CLASS [weight W] [per-peer]\n"
	       "       smb-classify [-n NETNS] prefix del CIDR\n"
	       "       smb-classify [-n NETNS] prefix list\n"
	       "See smb-classify --help for CIDR and CLASS.\n");
}

/**
 * do_prefix() - "prefix add|del|list"
 * @argc: words after "prefix".
 * @argv: the words.
 *
 * Return: 0 or a negative errno, reported.
 */
int do_prefix(int argc, char **argv)
{
	if (argc < 1) {
		p_err("prefix: missing command (add, del, list)");
		return -EINVAL;
	}
	if (word_abbrev(argv[0], "add"))
		return prefix_add(argc - 1, argv + 1);
	if (word_abbrev(argv[0], "delete"))
		return prefix_del(argc - 1, argv + 1);
	if (word_abbrev(argv[0], "list") || word_abbrev(argv[0], "show"))
		return prefix_list(argc - 1, argv + 1);
	if (word_abbrev(argv[0], "help")) {
		prefix_usage();
		return 0;
	}
	p_err("prefix: unknown command '%s' (add, del, list)", argv[0]);
	return -EINVAL;
}
